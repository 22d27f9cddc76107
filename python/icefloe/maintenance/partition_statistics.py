"""`table.maintenance.compute_partition_stats()`: per-partition counts of a snapshot in a
partition statistics file, registered in the table metadata (`set-partition-statistics`), as
Iceberg Java 1.12's `PartitionStatsHandler.computeAndWriteStatsFile` and its Spark procedure
`compute_partition_stats` (`ComputePartitionStatsSparkAction`) do:

- the snapshot: the current one, or `snapshot_id` (unknown: `Snapshot not found: <id>`); a
  table without a snapshot has nothing to compute (None, Java's empty result); an
  unpartitioned table is refused (`Table must be partitioned`);
- the rows: one per partition of each spec (the table's unified partition type, Java's
  `Partitioning.partitionType`) with data records, files and bytes, position / equality
  delete records and files, deletion vectors (v3 `dv_count`, not counted as position delete
  files) and the newest commit that touched the partition (`last_updated_at` in ms, its
  snapshot id); `total_record_count` stays null, as Java leaves it;
- incremental as Java: when an ancestor of the snapshot (or the snapshot) has a registered
  file, its rows (Java's files too) are the start and only the entries the snapshots after
  it added (+) or deleted (-) are applied; the snapshot's own file is returned as it is (no
  write). With none, or an unreadable one, every manifest entry of the snapshot counts: live
  ones add, deleted ones only move the last update;
- the file: `<metadata>/partition-stats-<snapshot id>-<uuid>.parquet` (Java's name and place;
  rows sorted by partition), see `icefloe._partition_stats_file` for the schema and why it is
  written with pyarrow. Java writes Avro when `write.format.default` is avro: icefloe refuses
  that (NotSupportedError) rather than write a Parquet file Java would not expect;
- it replaces the snapshot's earlier partition statistics in the metadata; expiring the
  snapshot drops the entry and deletes the file, and orphan removal keeps registered files
  (both in `rust/maintenance/`, which treat `partition-statistics` as `statistics`).

Manifest entries are read as the `entries` metadata table's rows: a full run reads the
snapshot's manifests, an incremental run over k snapshots only the manifests each of them
wrote (`_native.inspect_snapshot_own_entries`), as Java reads its range's. On any failure
nothing is registered and the file is deleted.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _io, _native
from icefloe._partition_stats_file import (
    PartitionStats,
    partition_type,
    read_stats_file,
    sort_key,
    write_stats_file,
)
from icefloe.exceptions import IcefloeError, NotSupportedError, ValidationError
from icefloe.statistics import PartitionStatisticsFile

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["compute_partition_stats", "read_partition_stats"]

ADDED, DELETED = 1, 2
DATA, POSITION_DELETES, EQUALITY_DELETES = 0, 1, 2

Key = tuple[int, tuple[Any, ...]]


def compute_partition_stats(table: Table, snapshot_id: int | None = None) -> PartitionStatisticsFile | None:
    """See the module doc."""
    md = table.metadata
    if snapshot_id is None:
        sid = md.current_snapshot_id
        if sid is None:
            return None
    else:
        if md.snapshot_by_id(snapshot_id) is None:
            raise ValidationError(f"Snapshot not found: {snapshot_id}")
        sid = snapshot_id
    ptype = partition_type(md)
    if not ptype:
        raise ValidationError("Table must be partitioned")
    file_format = md.properties.get("write.format.default", "parquet").lower()
    if file_format != "parquet":
        raise NotSupportedError(
            f"partition statistics in {file_format} (write.format.default): "
            "icefloe writes them in Parquet only"
        )
    latest = latest_stats_file(md, sid)
    if latest is not None and latest.snapshot_id == sid:
        return latest
    stats = None
    if latest is not None:
        try:
            old = read_stats_file(latest.statistics_path, ptype)
        except (IcefloeError, OSError, ValueError, pa.ArrowException):
            old = None  # Java: a corrupt previous file means a full compute
        if old is not None:
            stats = _incremental(md, sid, latest.snapshot_id, old)
    if stats is None:
        stats = _compute(md, _entries(md, sid), incremental=False)
    if not stats:
        return None  # Java: an empty snapshot (a branch without files) has no file
    rows = sorted(stats.values(), key=lambda r: sort_key(r.partition))
    path = _io.join(md.metadata_root, f"partition-stats-{sid}-{uuid.uuid4()}.parquet")
    size = write_stats_file(md, path, rows, ptype)
    entry = {"snapshot-id": sid, "statistics-path": path, "file-size-in-bytes": size}
    update = json.dumps([{"action": "set-partition-statistics", "partition-statistics": entry}])
    try:
        table._commit(lambda base: (base.apply_updates(update), []))
    except BaseException:
        _native.delete_files([path])
        raise
    return PartitionStatisticsFile.from_json(entry)


def read_partition_stats(table: Table, snapshot_id: int | None = None) -> list[dict[str, Any]]:
    """The rows of the snapshot's (default current) partition statistics file as dicts with
    Java's column names (`partition` a dict by partition field name); [] when it has none,
    as Java's `newPartitionStatisticsScan().useSnapshot(id).scan()`."""
    md = table.metadata
    sid = md.current_snapshot_id if snapshot_id is None else snapshot_id
    if sid is None:
        return []
    if md.snapshot_by_id(sid) is None:
        raise ValidationError(f"Cannot find snapshot with ID {sid}")
    entry = next((e for e in md.partition_statistics() if int(e["snapshot-id"]) == sid), None)
    if entry is None:
        return []
    ptype = partition_type(md)
    out = []
    for r in read_stats_file(str(entry["statistics-path"]), ptype):
        row = dict(vars(r))
        row["partition"] = {f["name"]: _python_value(f, v) for f, v in zip(ptype, r.partition)}
        if md.format_version < 3:
            del row["dv_count"]
        out.append(row)
    return out


def _python_value(field: dict[str, Any], value: Any) -> Any:
    """A partition value as icefloe's reads show it: a uuid as `uuid.UUID` (the file and the
    manifests hold its 16 bytes)."""
    if field.get("type") == "uuid" and isinstance(value, bytes):
        import uuid

        return uuid.UUID(bytes=value)
    return value


def latest_stats_file(md: _native.TableMetadata, snapshot_id: int) -> PartitionStatisticsFile | None:
    """Java's `latestStatsFile`: the registered file of the snapshot or of its nearest
    ancestor that has one (a file of another branch does not count)."""
    files = {int(e["snapshot-id"]): e for e in md.partition_statistics()}
    if not files:
        return None
    for snap in _ancestors(md, snapshot_id):
        sid = int(snap["snapshot-id"])
        if sid in files:
            return PartitionStatisticsFile.from_json(files[sid])
    return None


def _ancestors(md: _native.TableMetadata, snapshot_id: int | None) -> Iterator[dict[str, Any]]:
    while snapshot_id is not None:
        snap = md.snapshot_by_id(snapshot_id)
        if snap is None:
            return
        yield snap
        parent = snap.get("parent-snapshot-id")
        snapshot_id = None if parent is None else int(str(parent))


def _incremental(
    md: _native.TableMetadata, snapshot_id: int, from_id: int, old: list[PartitionStats]
) -> dict[Key, PartitionStats]:
    """Java's `computeAndMergeStatsIncremental`: the rows of the older file plus what each
    snapshot after it (to `snapshot_id`) added and deleted."""
    stats: dict[Key, PartitionStats] = {}
    for r in old:
        stats[(r.spec_id, r.partition)] = r
    between = []
    for snap in _ancestors(md, snapshot_id):
        if int(snap["snapshot-id"]) == from_id:
            break
        between.append(int(snap["snapshot-id"]))

    def own_entries() -> Iterator[tuple[Any, ...]]:
        # The entries a snapshot's own manifests (those it wrote) carry as added or deleted are
        # exactly those whose status is ADDED or DELETED with its id: older manifests hold no
        # entry of it, and a rewritten manifest makes older additions EXISTING and drops older
        # deletions. Only those manifests are read, as Java reads its range's manifests.
        for sid in between:
            for e in _entries(md, sid, own=True):
                if e[1] == sid and e[0] in (ADDED, DELETED):
                    yield e

    for key, diff in _compute(md, own_entries(), incremental=True).items():
        if key in stats:
            stats[key].append(diff)
        else:
            stats[key] = diff
    return stats


def _compute(md: _native.TableMetadata, entries: Any, incremental: bool) -> dict[Key, PartitionStats]:
    """Java's `collectStatsForManifest` over `entries`: live entries add (only ADDED ones when
    incremental), deleted ones subtract when incremental, and each moves the partition's last
    update to its snapshot's commit (when the snapshot is still in the table)."""
    stats: dict[Key, PartitionStats] = {}
    times: dict[int, int] = {}
    for status, entry_sid, content, file_format, spec_id, partition, records, size in entries:
        key = (spec_id, partition)
        row = stats.get(key)
        if row is None:
            row = stats[key] = PartitionStats(partition=partition, spec_id=spec_id)
        if status != DELETED:
            if incremental and status != ADDED:
                continue
            sign = 1
        elif incremental:
            sign = -1
        else:
            sign = 0
        if sign:
            if content == DATA:
                row.data_record_count += sign * records
                row.data_file_count += sign
                row.total_data_file_size_in_bytes += sign * size
            elif content == POSITION_DELETES:
                row.position_delete_record_count += sign * records
                if file_format.upper() == "PUFFIN":
                    row.dv_count += sign
                else:
                    row.position_delete_file_count += sign
            elif content == EQUALITY_DELETES:
                row.equality_delete_record_count += sign * records
                row.equality_delete_file_count += sign
            else:
                raise ValidationError(f"Unsupported file content type: {content}")
        if entry_sid is not None:
            if entry_sid not in times:
                snap = md.snapshot_by_id(entry_sid)
                times[entry_sid] = -1 if snap is None else int(str(snap["timestamp-ms"]))
            if times[entry_sid] >= 0:
                row.touched(entry_sid, times[entry_sid])
    return stats


def _entries(md: _native.TableMetadata, snapshot_id: int, own: bool = False) -> Iterator[tuple[Any, ...]]:
    """Every manifest entry of the snapshot (deleted ones included), or with `own` those of the
    manifests it wrote itself: (status, snapshot id, content, file format, spec id, partition
    tuple of the table's partition type, record count, file size)."""
    if own:
        batches = _native.inspect_snapshot_own_entries(md, snapshot_id)
    else:
        batches = _native.inspect_table(md, "entries", snapshot_id)
    batch = pa.Table.from_batches(batches)
    files = batch.column("data_file")

    def child(name: str) -> list[Any]:
        return pc.struct_field(files, name).to_pylist()

    partition = pc.struct_field(files, "partition")
    parts = [pc.struct_field(partition, [i]).to_pylist() for i in range(partition.type.num_fields)]
    tuples = list(zip(*parts)) if parts else [()] * batch.num_rows
    yield from zip(
        batch.column("status").to_pylist(),
        batch.column("snapshot_id").to_pylist(),
        child("content"),
        child("file_format"),
        child("spec_id"),
        tuples,
        child("record_count"),
        child("file_size_in_bytes"),
    )
