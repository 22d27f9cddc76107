"""The partition statistics file: Iceberg Java's `PartitionStatistics` schema (1.10+, 1.12's
field ids and v2/v3 shapes), read and written by field id, and the `partitions` metadata
table computed from it.

Columns (ids 1-13): `partition` (the table's unified partition type, Java's
`Partitioning.partitionType`), `spec_id`, `data_record_count`, `data_file_count`,
`total_data_file_size_in_bytes`, `position_delete_record_count`, `position_delete_file_count`,
`equality_delete_record_count`, `equality_delete_file_count`, `total_record_count`,
`last_updated_at` (ms), `last_updated_snapshot_id`, and for format v3 `dv_count` (deletion
vectors, which v3 does not count as position delete files); v3 makes the four delete counts
required. A file without `dv_count` (written for v2) reads 0, its initial default.

The file is Parquet, written with pyarrow: icefloe's Rust Parquet writer (`_native`) writes a
table's data files for the table's schema only; no exposed writer takes another Iceberg schema.
pyarrow writes the Iceberg field ids (`PARQUET:field_id`), which is what Java's reader resolves
columns by. This module sits in the io layer so that `inspect.partitions()` can read the file.
"""

from __future__ import annotations

import io
import json
import logging
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from icefloe import _native
from icefloe.exceptions import IcefloeError, NotSupportedError

__all__ = [
    "PartitionStats",
    "partition_type",
    "partitions_from_stats",
    "partitions_table",
    "read_stats_file",
    "stats_arrow_schema",
    "write_stats_file",
]

logger = logging.getLogger("icefloe")

FIELD_ID = b"PARQUET:field_id"

# (id, name, type, required in v2, required in v3): Java's `PartitionStatistics` fields after
# `partition` (id 1); `dv_count` (13) is v3 only.
_FIELDS: tuple[tuple[int, str, str, bool, bool], ...] = (
    (2, "spec_id", "int", True, True),
    (3, "data_record_count", "long", True, True),
    (4, "data_file_count", "int", True, True),
    (5, "total_data_file_size_in_bytes", "long", True, True),
    (6, "position_delete_record_count", "long", False, True),
    (7, "position_delete_file_count", "int", False, True),
    (8, "equality_delete_record_count", "long", False, True),
    (9, "equality_delete_file_count", "int", False, True),
    (10, "total_record_count", "long", False, False),
    (11, "last_updated_at", "long", False, False),
    (12, "last_updated_snapshot_id", "long", False, False),
    (13, "dv_count", "int", True, True),
)
_NAME_BY_ID = {fid: name for fid, name, *_ in _FIELDS}
_NULLABLE = ("total_record_count", "last_updated_at", "last_updated_snapshot_id")
_DEFAULTS: dict[str, int | None] = {
    name: None if name in _NULLABLE else 0 for _fid, name, *_ in _FIELDS if name != "spec_id"
}


@dataclass
class PartitionStats:
    """One row of a partition statistics file: a partition of one spec (`partition` holds the
    values of the table's unified partition type, in its field order)."""

    partition: tuple[Any, ...]
    spec_id: int
    data_record_count: int = 0
    data_file_count: int = 0
    total_data_file_size_in_bytes: int = 0
    position_delete_record_count: int = 0
    position_delete_file_count: int = 0
    equality_delete_record_count: int = 0
    equality_delete_file_count: int = 0
    total_record_count: int | None = None
    last_updated_at: int | None = None
    last_updated_snapshot_id: int | None = None
    dv_count: int = 0

    def touched(self, snapshot_id: int, timestamp_ms: int) -> None:
        """Java's `updateSnapshotInfo`: the newest commit that changed the partition wins."""
        if self.last_updated_at is None or self.last_updated_at < timestamp_ms:
            self.last_updated_at = timestamp_ms
            self.last_updated_snapshot_id = snapshot_id

    def append(self, other: PartitionStats) -> None:
        """Java's `appendStats`: adds `other`'s counts (the same partition of the same spec)."""
        self.data_record_count += other.data_record_count
        self.data_file_count += other.data_file_count
        self.total_data_file_size_in_bytes += other.total_data_file_size_in_bytes
        self.position_delete_record_count += other.position_delete_record_count
        self.position_delete_file_count += other.position_delete_file_count
        self.equality_delete_record_count += other.equality_delete_record_count
        self.equality_delete_file_count += other.equality_delete_file_count
        self.dv_count += other.dv_count
        if other.total_record_count is not None:
            self.total_record_count = (self.total_record_count or 0) + other.total_record_count
        if other.last_updated_at is not None and other.last_updated_snapshot_id is not None:
            self.touched(other.last_updated_snapshot_id, other.last_updated_at)


# ---- the table's partition type ----------------------------------------------------------------


def _types_by_id(node: Any, out: dict[int, Any]) -> None:
    """Every field of a schema JSON (nested ones included), by id: its type JSON."""
    if not isinstance(node, dict):
        return
    kind = node.get("type")
    if kind == "struct":
        for f in node.get("fields", []):
            out[int(f["id"])] = f["type"]
            _types_by_id(f["type"], out)
    elif kind == "list":
        out[int(node["element-id"])] = node["element"]
        _types_by_id(node["element"], out)
    elif kind == "map":
        out[int(node["key-id"])] = node["key"]
        out[int(node["value-id"])] = node["value"]
        _types_by_id(node["key"], out)
        _types_by_id(node["value"], out)


def _result_type(transform: str, source: Any) -> Any:
    """A partition transform's result type (Java's `Transform.getResultType`)."""
    if transform in ("identity", "void") or transform.startswith("truncate["):
        return source
    if transform in ("year", "month", "hour") or transform.startswith("bucket["):
        return "int"
    if transform == "day":
        return "date"
    raise NotSupportedError(f"Cannot build table partition type, unknown transforms: {transform}")


def partition_type(md: _native.TableMetadata) -> list[dict[str, Any]]:
    """The table's partition type (Java's `Partitioning.partitionType`) as Iceberg field JSON:
    the fields of every spec whose source column the current schema has, by field id, named
    as the newest spec names them, all optional; a v1 table's dropped (void) field takes its
    type from a spec where it was not void."""
    types: dict[int, Any] = {}
    _types_by_id(json.loads(md.schema_json()), types)
    specs = sorted((json.loads(s) for s in md.specs_json()), key=lambda s: -int(s["spec-id"]))
    chosen: dict[int, dict[str, Any]] = {}
    for spec in specs:
        for f in spec.get("fields", []):
            source_ids = f.get("source-ids") or [f.get("source-id")]
            if len(source_ids) != 1 or int(source_ids[0]) not in types:
                continue
            fid, transform = int(f["field-id"]), str(f["transform"])
            ty = _result_type(transform, types[int(source_ids[0])])
            existing = chosen.get(fid)
            if existing is None:
                chosen[fid] = {
                    "id": fid,
                    "name": f["name"],
                    "required": False,
                    "type": ty,
                    "void": transform == "void",
                }
            elif existing["void"] and transform != "void":
                existing.update(type=ty, void=False)
    return [{k: v for k, v in chosen[fid].items() if k != "void"} for fid in sorted(chosen)]


def spec_widths(md: _native.TableMetadata, ptype: list[dict[str, Any]]) -> dict[int, int]:
    """How many fields of the table's partition type each spec has (Java's partitions table
    keeps equal tuples of specs of different widths apart)."""
    ids = {f["id"] for f in ptype}
    out = {}
    for text in md.specs_json():
        spec = json.loads(text)
        out[int(spec["spec-id"])] = sum(1 for f in spec.get("fields", []) if int(f["field-id"]) in ids)
    return out


# ---- the file ----------------------------------------------------------------------------------


def _schema_json(ptype: list[dict[str, Any]], format_version: int) -> dict[str, Any]:
    fields: list[dict[str, Any]] = [
        {"id": 1, "name": "partition", "required": True, "type": {"type": "struct", "fields": ptype}}
    ]
    for fid, name, ty, v2_required, v3_required in _FIELDS:
        if fid == 13 and format_version < 3:
            continue
        fields.append(
            {
                "id": fid,
                "name": name,
                "required": v3_required if format_version >= 3 else v2_required,
                "type": ty,
            }
        )
    return {"type": "struct", "schema-id": 0, "fields": fields}


def stats_arrow_schema(md: _native.TableMetadata, ptype: list[dict[str, Any]] | None = None) -> pa.Schema:
    """The Arrow schema (with Parquet field ids) of the table's partition statistics file,
    Java's `PartitionStatistics.schema(partitionType, formatVersion)`."""
    ptype = partition_type(md) if ptype is None else ptype
    return _native.schema_to_arrow(json.dumps(_schema_json(ptype, md.format_version)))


def write_stats_file(
    md: _native.TableMetadata, location: str, rows: list[PartitionStats], ptype: list[dict[str, Any]]
) -> int:
    """Writes `rows` (already in order) to a new Parquet file at `location`; its size."""
    schema = stats_arrow_schema(md, ptype)
    part_type = schema.field("partition").type
    # A uuid as Parquet's UUID logical type (Arrow's uuid extension type), as Java writes it:
    # a plain fixed_len_byte_array(16) reads back in Java as bytes, not as a UUID.
    part_fields = [
        part_type.field(i).with_type(pa.uuid()) if f.get("type") == "uuid" else part_type.field(i)
        for i, f in enumerate(ptype)
    ]
    children = [pa.array([r.partition[i] for r in rows], type=f.type) for i, f in enumerate(part_fields)]
    columns: list[pa.Array] = [pa.StructArray.from_arrays(children, fields=part_fields)]
    at = schema.get_field_index("partition")
    schema = schema.set(at, schema.field(at).with_type(pa.struct(part_fields)))
    for f in list(schema)[1:]:
        columns.append(pa.array([getattr(r, f.name) for r in rows], type=f.type))
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(columns, schema=schema), buf, compression="gzip", store_schema=False)
    data = buf.getvalue()
    if not _native.io_write_new(location, data):
        raise FileExistsError(f"partition statistics file {location} already exists")
    return len(data)


def _field_id(f: pa.Field) -> int | None:
    raw = (f.metadata or {}).get(FIELD_ID)
    return None if raw is None else int(raw)


def _as_type(values: pa.Array, target: pa.DataType) -> pa.Array:
    if isinstance(values.type, pa.ExtensionType):
        values = values.storage
    return values if values.type == target else values.cast(target)


def read_stats_file(location: str, ptype: list[dict[str, Any]]) -> list[PartitionStats]:
    """The rows of a partition statistics file (Java's or icefloe's), columns resolved by
    field id: the partition values in the order of `ptype` (null for a field the file lacks),
    a missing `dv_count` 0 (its initial default)."""
    if not location.endswith(".parquet"):
        raise NotSupportedError(
            f"partition statistics file {location}: only Parquet is read (Java writes Avro "
            "when the table's write.format.default is avro)"
        )
    table = pq.read_table(io.BytesIO(_native.io_read(location)))
    by_id = {fid: i for i, f in enumerate(table.schema) if (fid := _field_id(f)) is not None}
    if 1 not in by_id or 2 not in by_id:
        raise ValueError(f"{location} is not a partition statistics file: no partition / spec_id field")
    partition = table.column(by_id[1]).combine_chunks()
    part_type = partition.type
    child_by_id = {_field_id(part_type.field(i)): i for i in range(part_type.num_fields)}
    # Values as the manifests give them (the table's partition types: an older file's int of
    # a promoted long, a uuid extension type's bytes), so that they key the same partitions.
    wanted = _native.schema_to_arrow(json.dumps({"type": "struct", "schema-id": 0, "fields": ptype}))
    children = [
        _as_type(partition.field(child_by_id[f["id"]]), wanted.field(i).type).to_pylist()
        if f["id"] in child_by_id
        else None
        for i, f in enumerate(ptype)
    ]
    values = {_NAME_BY_ID[fid]: table.column(i).to_pylist() for fid, i in by_id.items() if fid in _NAME_BY_ID}
    rows = []
    for n in range(table.num_rows):
        tuple_ = tuple(None if c is None else c[n] for c in children)
        row = PartitionStats(partition=tuple_, spec_id=int(values["spec_id"][n]))
        for name, default in _DEFAULTS.items():
            column = values.get(name)
            value = None if column is None else column[n]
            setattr(row, name, default if value is None else value)
        rows.append(row)
    return rows


# ---- the partitions metadata table from the file ------------------------------------------------


def partitions_table(
    md: _native.TableMetadata, rows: list[PartitionStats], ptype: list[dict[str, Any]]
) -> pa.Table:
    """Java's `partitions` metadata table (`PartitionsTable`) from a snapshot's partition
    statistics: the rows of one coerced partition tuple merged over specs of the same width
    (counts added; `spec_id` and the last update of the newest one), deletion vectors counted
    as position delete files, partitions without live files left out, `last_updated_at` in
    microseconds. Equal to the manifest-computed table when no snapshot behind the statistics
    removed a file (see `partitions_from_stats`)."""
    widths = spec_widths(md, ptype)
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        files = r.data_file_count + r.position_delete_file_count + r.equality_delete_file_count + r.dv_count
        if files == 0:
            continue
        key = (widths.get(r.spec_id, 0), r.partition)
        m = merged.setdefault(
            key,
            {"partition": r.partition, "spec_id": 0, "counts": [0] * 7, "at": None, "sid": None},
        )
        counts = (
            r.data_record_count,
            r.data_file_count,
            r.total_data_file_size_in_bytes,
            r.position_delete_record_count,
            r.position_delete_file_count + r.dv_count,
            r.equality_delete_record_count,
            r.equality_delete_file_count,
        )
        m["counts"] = [a + b for a, b in zip(m["counts"], counts)]
        if r.last_updated_at is not None and (m["at"] is None or r.last_updated_at > m["at"]):
            m["spec_id"], m["at"], m["sid"] = r.spec_id, r.last_updated_at, r.last_updated_snapshot_id
    out = sorted(merged.values(), key=lambda m: sort_key(m["partition"]))
    arrow = stats_arrow_schema(md, ptype)
    part_type = _plain_struct(arrow.field("partition").type)
    children = [
        pa.array([m["partition"][i] for m in out], type=part_type.field(i).type)
        for i in range(part_type.num_fields)
    ]
    names = (
        "record_count",
        "file_count",
        "total_data_file_size_in_bytes",
        "position_delete_record_count",
        "position_delete_file_count",
        "equality_delete_record_count",
        "equality_delete_file_count",
    )
    kinds = (pa.int64(), pa.int32(), pa.int64(), pa.int64(), pa.int32(), pa.int64(), pa.int32())
    schema = pa.schema(
        [
            pa.field("partition", part_type, nullable=False),
            pa.field("spec_id", pa.int32(), nullable=False),
            *(pa.field(n, k, nullable=False) for n, k in zip(names, kinds)),
            pa.field("last_updated_at", pa.timestamp("us", tz="UTC")),
            pa.field("last_updated_snapshot_id", pa.int64()),
        ]
    )
    columns = [
        pa.StructArray.from_arrays(children, fields=list(part_type)),
        pa.array([m["spec_id"] for m in out], type=pa.int32()),
        *(pa.array([m["counts"][i] for m in out], type=k) for i, k in enumerate(kinds)),
        pa.array(
            [None if m["at"] is None else m["at"] * 1000 for m in out], type=pa.timestamp("us", tz="UTC")
        ),
        pa.array([m["sid"] for m in out], type=pa.int64()),
    ]
    return pa.Table.from_arrays(columns, schema=schema)


def _plain_struct(t: pa.StructType) -> pa.StructType:
    return pa.struct([pa.field(f.name, f.type, nullable=True) for f in t])


def sort_key(partition: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    """Java's `Comparators.forType(partitionType)`: field by field, nulls first."""
    return tuple((0, 0) if v is None else (1, v) for v in partition)


# Snapshot summary counts of files a snapshot removed (Java's `SnapshotSummary`).
_REMOVALS = (
    "deleted-data-files",
    "removed-delete-files",
    "removed-position-delete-files",
    "removed-equality-delete-files",
    "removed-dvs",
)


def _removes_nothing_behind(md: _native.TableMetadata, snapshot_id: int) -> bool:
    """Whether `snapshot_id` and all its ancestors are in the table (the history reaches its
    first snapshot) and none of them removed a file. Then every manifest entry is live and
    was counted when added, and the statistics' last update of each partition is the newest
    commit that added one of its files: what the manifest-computed `partitions` table says.
    A removal makes them differ, as in Java: the statistics count the commit that removed a
    partition's file as its last update, the `partitions` table only commits of live files."""
    sid: int | None = snapshot_id
    while sid is not None:
        snap = md.snapshot_by_id(sid)
        if snap is None:
            return False
        summary = snap.get("summary") or {}
        assert isinstance(summary, dict)
        if any(int(summary.get(k, 0) or 0) > 0 for k in _REMOVALS):
            return False
        # A writer that keeps no Java totals may not report removals either: only its
        # appends are known to remove nothing.
        if "total-data-files" not in summary and summary.get("operation") != "append":
            return False
        parent = snap.get("parent-snapshot-id")
        sid = None if parent is None else int(str(parent))
    return True


def partitions_from_stats(md: _native.TableMetadata, snapshot_id: int) -> pa.Table | None:
    """The `partitions` metadata table of `snapshot_id` from its registered partition
    statistics file, or None when it has none, the file cannot be read (logged), or the
    snapshot's history removed files (then only the manifests give Java's answer)."""
    entry = next((e for e in md.partition_statistics() if int(e["snapshot-id"]) == snapshot_id), None)
    if entry is None or not _removes_nothing_behind(md, snapshot_id):
        return None
    ptype = partition_type(md)
    if not ptype:
        return None
    path = str(entry["statistics-path"])
    try:
        rows = read_stats_file(path, ptype)
    except (IcefloeError, OSError, ValueError, pa.ArrowException) as e:
        logger.warning("partition statistics file %s not used (%s); reading the manifests", path, e)
        return None
    return partitions_table(md, rows, ptype)
