"""`table.maintenance.compute_partition_stats()` against Iceberg Java 1.12's
`compute_partition_stats` procedure (`PartitionStatsHandler`), on the same tables:

- On a table with three partition specs (bucket, identity, day; a field dropped), position
  deletes (v2) or deletion vectors (v3) and Java's equality deletes, Java's file of a snapshot
  and icefloe's have the same rows (each read by the other engine: icefloe's reader of Java's
  Parquet file, Java's `newPartitionStatisticsScan` of icefloe's) and the same Parquet schema
  (field ids, types, repetition). Incremental runs chain across engines: Java continues from
  icefloe's file and icefloe from Java's, after appends, row deletes and whole-file deletes,
  and give the same rows again; icefloe's incremental run reads only the snapshots after the
  file it starts from.
- `inspect.partitions()` read from the statistics file equals the manifest-computed table and
  Java's `partitions` table; where a snapshot removed files the manifests answer.
- Bad input (an unknown snapshot, an unpartitioned table) is refused with Java's message and
  nothing written; a table without a snapshot gives no file (no row), as Java.
- Expiring the snapshot removes its file as Java's expiry does; orphan removal keeps a
  registered file and removes a replaced one, as Java's.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.maintenance import partition_statistics as pstats
from support.java_commits import commit_eq_delete
from support.maintenance_helpers import ts_literal, visible_files
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

EPOCH = dt.date(1970, 1, 1)
COUNTS = (
    "spec_id",
    "data_record_count",
    "data_file_count",
    "total_data_file_size_in_bytes",
    "position_delete_record_count",
    "position_delete_file_count",
    "equality_delete_record_count",
    "equality_delete_file_count",
    "total_record_count",
    "last_updated_at",
    "last_updated_snapshot_id",
)


def _rows(name: str, start: int, end: int) -> str:
    return (
        f"SELECT id, CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END, "
        f"DATE_ADD(DATE'2024-01-01', CAST(id % 4 AS INT)), id * 10 FROM range({start}, {end}) AS r(id)"
    )


def _evolved_table(oracle: Oracle, version: int, drop: bool) -> str:
    """Specs (cat, bucket(4, id)), then + days(d), then (with `drop`) - cat; a Java equality
    delete and a position delete (v2) or deletion vector (v3)."""
    name = new_table_name(f"pstats{version}")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, cat string, d date, v bigint) USING iceberg "
        f"PARTITIONED BY (cat, bucket(4, id)) TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read')"
    )
    oracle.sql(f"INSERT INTO {q} {_rows(name, 0, 12)}")
    oracle.sql(f"INSERT INTO {q} {_rows(name, 12, 20)}")
    # Java's equality delete helper takes no date: spec 0 (cat, bucket(4, id)) it is.
    commit_eq_delete(oracle.warehouse, name, ["id"], [(13,)], partition={"id": 13, "cat": "b"})
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD days(d)")
    oracle.sql(f"INSERT INTO {q} {_rows(name, 20, 30)}")
    if drop:
        oracle.sql(f"ALTER TABLE {q} DROP PARTITION FIELD cat")
    oracle.sql(f"INSERT INTO {q} {_rows(name, 30, 40)}")
    oracle.sql(f"DELETE FROM {q} WHERE id = 3")
    return name


def _more_writes(oracle: Oracle, name: str) -> None:
    """Appends in the newest spec, a row delete, whole files deleted."""
    q = oracle.qualified(name)
    oracle.sql(f"INSERT INTO {q} {_rows(name, 40, 48)}")
    oracle.sql(f"DELETE FROM {q} WHERE id = 4")  # the only row of its file: the file goes
    oracle.sql(f"DELETE FROM {q} WHERE cat = 'a' AND id < 12")


def _plain(v: Any) -> Any:
    """A partition value as Java's internal form (days for a date, micros for a timestamp)."""
    if isinstance(v, dt.datetime):
        return (v.replace(tzinfo=None) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
    if isinstance(v, dt.date):
        return (v - EPOCH).days
    return v


def _mine(table: Any, snapshot_id: int) -> list[tuple[Any, ...]]:
    """The rows of the snapshot's registered file, read by icefloe."""
    out = []
    for r in table.maintenance.partition_stats(snapshot_id):
        part = tuple(_plain(v) for v in r["partition"].values())
        out.append((part, *(r[c] for c in COUNTS), r.get("dv_count")))
    return sorted(out, key=repr)


def _java_value(v: Any) -> Any:
    if v is None or isinstance(v, (int, str, float, bool, decimal.Decimal)):
        return v
    return str(v.toString())


def _java(oracle: Oracle, name: str, snapshot_id: int, version: int) -> list[tuple[Any, ...]]:
    """The rows of the snapshot's registered file, read by Java (`newPartitionStatisticsScan`)."""
    table = oracle.java_table(name)
    obj = oracle.jvm.java.lang.Class.forName("java.lang.Object")
    scan = table.newPartitionStatisticsScan().useSnapshot(snapshot_id).scan()
    out = []
    it = scan.iterator()
    while it.hasNext():
        s = it.next()
        p = s.partition()
        part = tuple(_java_value(p.get(i, obj)) for i in range(p.size()))
        out.append(
            (
                part,
                s.specId(),
                s.dataRecordCount(),
                s.dataFileCount(),
                s.totalDataFileSizeInBytes(),
                s.positionDeleteRecordCount(),
                s.positionDeleteFileCount(),
                s.equalityDeleteRecordCount(),
                s.equalityDeleteFileCount(),
                s.totalRecords(),
                s.lastUpdatedAt(),
                s.lastUpdatedSnapshotId(),
                s.dvCount() if version >= 3 else None,
            )
        )
    scan.close()
    return sorted(out, key=repr)


def _java_compute(oracle: Oracle, name: str, snapshot_id: int | None = None) -> list[Any]:
    arg = "" if snapshot_id is None else f", snapshot_id => {snapshot_id}"
    return oracle.sql(f"CALL {oracle.catalog}.system.compute_partition_stats(table => '{name}'{arg})")


def _unregister(catalog: Any, name: str, snapshot_id: int) -> None:
    """Drops the snapshot's partition statistics from the metadata (the file stays)."""
    update = json.dumps([{"action": "remove-partition-statistics", "snapshot-id": snapshot_id}])
    catalog.load_table(name)._commit(lambda md: (md.apply_updates(update), []))


def _registered(catalog: Any, name: str) -> dict[int, str]:
    return {f.snapshot_id: f.statistics_path for f in catalog.load_table(name).partition_statistics()}


def _local(path: str) -> str:
    return path.removeprefix("file://").removeprefix("file:")


def _parquet_schema(path: str) -> list[str]:
    """The Parquet schema's lines but the root's name (Java's `table`, pyarrow's `schema`)."""
    return str(pq.ParquetFile(_local(path)).schema).strip().splitlines()[2:]


class _Spy:
    """Records the snapshots whose manifest entries a computation reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[int] = []
        self.own: list[bool] = []  # whether each read only the manifests its snapshot wrote
        real = pstats._entries

        def spy(md: Any, snapshot_id: int, own: bool = False) -> Any:
            self.calls.append(snapshot_id)
            self.own.append(own)
            return real(md, snapshot_id, own=own)

        monkeypatch.setattr(pstats, "_entries", spy)


def _after(table: Any, start: int, end: int) -> list[int]:
    """The snapshots after `start` up to `end` (newest first)."""
    out, sid = [], end
    while sid != start:
        out.append(sid)
        sid = table.snapshot_by_id(sid).parent_snapshot_id
    return out


@pytest.mark.parametrize("version", [2, 3])
def test_same_rows_as_java_three_specs(oracle: Oracle, catalog: Any, version: int) -> None:
    """Full computes, each engine reading the other's file; icefloe's incremental run against
    Java's full compute (Java 1.12's own incremental run is wrong after a dropped field: see
    the docs)."""
    name = _evolved_table(oracle, version, drop=True)
    table = catalog.load_table(name)
    s1 = table.current_snapshot().snapshot_id
    assert len(table.specs()) == 3

    (row,) = _java_compute(oracle, name)
    java_path = row["partition_statistics_file"]
    assert _registered(catalog, name) == {s1: java_path}
    java_rows = _java(oracle, name, s1, version)
    assert _mine(catalog.load_table(name), s1) == java_rows
    deletes = [r for r in java_rows if r[5] or r[7] or (r[12] or 0)]
    assert len({r[1] for r in java_rows}) == 3 and len(deletes) >= 2  # three specs, both deletes
    if version >= 3:
        assert any(r[12] == 1 and r[6] == 0 for r in java_rows)  # a DV, not a position file
    else:
        assert any(r[6] == 1 for r in java_rows)

    # icefloe's full compute of the same snapshot, read by Java.
    _unregister(catalog, name, s1)
    mine = catalog.load_table(name).maintenance.compute_partition_stats()
    assert mine is not None and mine.snapshot_id == s1
    assert Path(_local(mine.statistics_path)).name.startswith(f"partition-stats-{s1}-")
    assert Path(_local(mine.statistics_path)).parent == Path(_local(java_path)).parent
    assert mine.file_size_in_bytes == Path(_local(mine.statistics_path)).stat().st_size
    assert _registered(catalog, name) == {s1: mine.statistics_path}
    assert _java(oracle, name, s1, version) == java_rows
    assert _parquet_schema(mine.statistics_path) == _parquet_schema(java_path)
    # The snapshot's own file is the answer again: nothing new is written.
    assert catalog.load_table(name).maintenance.compute_partition_stats() == mine

    _more_writes(oracle, name)
    incremental = catalog.load_table(name).maintenance.compute_partition_stats()
    assert incremental is not None
    s2 = incremental.snapshot_id
    mine_s2 = _mine(catalog.load_table(name), s2)
    _unregister(catalog, name, s2)
    _unregister(catalog, name, s1)
    _java_compute(oracle, name)  # no file behind: Java computes in full
    java_s2 = _java(oracle, name, s2, version)
    assert _counts(mine_s2) == _counts(java_s2)
    assert len(_counts(java_s2)) >= 20

    # An earlier snapshot by id: a full compute in both, with the deleted entries of its
    # manifests dating their partitions (s2's file is a descendant's, not used).
    _unregister(catalog, name, s2)
    _java_compute(oracle, name, s1)
    java_s1 = _java(oracle, name, s1, version)
    assert java_s1 == java_rows
    _unregister(catalog, name, s1)
    by_id = catalog.load_table(name).maintenance.compute_partition_stats(snapshot_id=s1)
    assert by_id is not None and by_id.snapshot_id == s1
    assert _java(oracle, name, s1, version) == java_rows


def test_incremental_chain_across_engines(
    oracle: Oracle, catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """v3 (deletion vectors, replaced when a second row of a file is deleted), specs that only
    add fields: Java continues from icefloe's file and icefloe from Java's, with equal rows."""
    name = _evolved_table(oracle, 3, drop=False)
    q = oracle.qualified(name)
    first = catalog.load_table(name).maintenance.compute_partition_stats()
    assert first is not None
    s1 = first.snapshot_id

    _more_writes(oracle, name)
    table = catalog.load_table(name)
    s2 = table.current_snapshot().snapshot_id
    spy = _Spy(monkeypatch)
    incremental = table.maintenance.compute_partition_stats()
    assert incremental is not None
    assert spy.calls == _after(table, s1, s2) and len(spy.calls) == 3  # from icefloe's file at s1
    assert all(spy.own)  # each snapshot's own manifests only
    mine_s2 = _mine(catalog.load_table(name), s2)
    assert _removed_files(table, spy.calls)  # the chain subtracts deleted entries
    _unregister(catalog, name, s2)
    _java_compute(oracle, name)  # Java, incremental from icefloe's file at s1
    assert _java(oracle, name, s2, version=3) == mine_s2
    assert _mine(catalog.load_table(name), s2) == mine_s2

    # icefloe continues from Java's file at s2.
    oracle.sql(f"INSERT INTO {q} {_rows(name, 48, 52)}")
    oracle.sql(f"DELETE FROM {q} WHERE id = 41")
    table = catalog.load_table(name)
    s3 = table.current_snapshot().snapshot_id
    spy.calls.clear()
    third = table.maintenance.compute_partition_stats()
    assert third is not None and spy.calls == _after(table, s2, s3)
    java_read_of_mine = _java(oracle, name, s3, version=3)
    _unregister(catalog, name, s3)
    _java_compute(oracle, name)
    assert _java(oracle, name, s3, version=3) == java_read_of_mine
    # The counts of the chain are a full compute's (its last updates may not be: a full
    # compute sees only the deletions the current manifests still carry).
    for sid in (s3, s2, s1):
        _unregister(catalog, name, sid)
    assert catalog.load_table(name).maintenance.compute_partition_stats() is not None
    assert _counts(_mine(catalog.load_table(name), s3)) == _counts(java_read_of_mine)


def _removed_files(table: Any, snapshot_ids: list[int]) -> list[int]:
    keys = ("deleted-data-files", "removed-dvs", "removed-position-delete-files")
    return [sid for sid in snapshot_ids if any(k in table.snapshot_by_id(sid).summary for k in keys)]


def _counts(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Partition, spec and counts of the rows with live files."""
    return [r[:10] for r in rows if r[3] + r[6] + r[8] + (r[12] or 0) > 0]


@pytest.mark.parametrize("version", [2, 3])
def test_inspect_partitions_from_the_stats_file(
    oracle: Oracle, catalog: Any, monkeypatch: pytest.MonkeyPatch, version: int
) -> None:
    name = new_table_name("pstats_inspect")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, cat string, d date, v bigint) USING iceberg "
        f"PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read')"
    )
    oracle.sql(f"INSERT INTO {q} {_rows(name, 0, 12)}")
    commit_eq_delete(oracle.warehouse, name, ["id"], [(5,)], partition={"cat": "c"})
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD days(d)")
    oracle.sql(f"INSERT INTO {q} {_rows(name, 12, 30)}")
    oracle.sql(f"DELETE FROM {q} WHERE id = 13")  # a position delete file or DV, none removed
    table = catalog.load_table(name)
    from_manifests = table.inspect.partitions()
    assert table.maintenance.compute_partition_stats() is not None
    table = catalog.load_table(name)
    java = oracle.df(f"{name}.partitions")

    def no_manifests(md: Any, kind: str, snapshot_id: int | None = None) -> Any:
        raise AssertionError(f"read the manifests for {kind}")

    with monkeypatch.context() as m:
        m.setattr(_native, "inspect_table", no_manifests)
        from_stats = table.inspect.partitions()
        assert table.inspect.table("partitions") == from_stats  # what Spark's reads go through
    assert from_stats.schema == from_manifests.schema
    assert sorted(from_stats.to_pylist(), key=repr) == sorted(from_manifests.to_pylist(), key=repr)
    assert_same_rows(from_stats, java)
    assert from_stats.num_rows == from_manifests.num_rows >= 6
    if version >= 3:  # the DV counted as a position delete file, as Java's partitions table
        rows = table.maintenance.partition_stats()
        assert (
            sum(r["dv_count"] for r in rows) == 1 and sum(r["position_delete_file_count"] for r in rows) == 0
        )
        assert sum(from_stats.column("position_delete_file_count").to_pylist()) == 1

    # A whole file removed: the statistics would date the partition by its removal, the
    # partitions table by its live files, so the manifests answer (equal to Java's).
    oracle.sql(f"DELETE FROM {q} WHERE cat = 'a'")
    table = catalog.load_table(name)
    assert table.maintenance.compute_partition_stats() is not None
    table = catalog.load_table(name)
    assert_same_rows(table.inspect.partitions(), oracle.df(f"{name}.partitions"))
    assert table.inspect.partitions() == table.inspect.partitions(use_partition_stats=False)


def _partition_stats_files(table_dir: Path) -> set[str]:
    return {f for f in visible_files(table_dir) if Path(f).name.startswith("partition-stats-")}


def test_partition_types(oracle: Oracle, catalog: Any) -> None:
    """Hours of a timestamptz, months of a date, years of a timestamp (with nulls), truncated
    strings and decimals, an identity boolean: Java's file and icefloe's, each read by the
    other, the same rows."""
    name = new_table_name("pstats_types")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (ts timestamp, d date, t timestamp_ntz, s string, dec decimal(10, 2), "
        "flag boolean, l bigint) USING iceberg "
        "PARTITIONED BY (hours(ts), months(d), years(t), truncate(2, s), truncate(10, dec), flag)"
    )
    oracle.sql(
        f"INSERT INTO {q} SELECT TIMESTAMP'2024-03-01 10:00:00' + make_interval(0, 0, 0, 0, "
        "CAST(id % 3 AS INT), 0, 0), DATE_ADD(DATE'2023-12-30', CAST(id % 5 AS INT)), "
        "IF(id % 4 = 0, NULL, TIMESTAMP_NTZ'2020-06-01 00:00:00' + make_interval(CAST(id % 2 AS INT), "
        "0, 0, 0, 0, 0, 0)), CONCAT(IF(id % 2 = 0, 'ab', 'cd'), CAST(id AS STRING)), "
        "CAST(id * 3.5 AS DECIMAL(10, 2)), id % 3 = 0, id FROM range(0, 30) AS r(id)"
    )
    table = catalog.load_table(name)
    sid = table.current_snapshot().snapshot_id
    _java_compute(oracle, name)
    java_rows = _java(oracle, name, sid, 1)
    assert _mine(catalog.load_table(name), sid) == java_rows
    assert len(java_rows) >= 20
    _unregister(catalog, name, sid)
    assert catalog.load_table(name).maintenance.compute_partition_stats() is not None
    assert _java(oracle, name, sid, 1) == java_rows


def test_bad_input_writes_nothing(oracle: Oracle, catalog: Any, warehouse: Path) -> None:
    name = new_table_name("pstats_bad")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, cat string) USING iceberg PARTITIONED BY (cat)")
    # No snapshot: no file and no row, in both.
    assert _java_compute(oracle, name) == []
    assert catalog.load_table(name).maintenance.compute_partition_stats() is None
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a')")
    table = catalog.load_table(name)
    before = table.metadata_location
    with pytest.raises(Exception, match="Snapshot not found: 42"):
        _java_compute(oracle, name, 42)
    with pytest.raises(ValidationError, match="Snapshot not found: 42"):
        table.maintenance.compute_partition_stats(snapshot_id=42)
    assert catalog.load_table(name).metadata_location == before

    flat = new_table_name("pstats_flat")
    oracle.sql(f"CREATE TABLE {oracle.qualified(flat)} (id bigint) USING iceberg")
    assert _java_compute(oracle, flat) == []
    assert catalog.load_table(flat).maintenance.compute_partition_stats() is None
    oracle.sql(f"INSERT INTO {oracle.qualified(flat)} VALUES (1)")
    with pytest.raises(Exception, match="Table must be partitioned"):
        _java_compute(oracle, flat)
    flat_table = catalog.load_table(flat)
    flat_before = flat_table.metadata_location
    with pytest.raises(ValidationError, match="Table must be partitioned"):
        flat_table.maintenance.compute_partition_stats()
    assert catalog.load_table(flat).metadata_location == flat_before
    for n in (name, flat):
        assert _partition_stats_files(warehouse / n.replace(".", "/")) == set()


def test_expiry_and_orphans_as_java(oracle: Oracle, catalog: Any, warehouse: Path) -> None:
    """Twin tables: the same history and statistics, expired by icefloe and by Java."""
    twins = [new_table_name("pstats_exp_ice"), new_table_name("pstats_exp_java")]
    kept: dict[str, str] = {}
    gone: dict[str, str] = {}
    replaced: dict[str, str] = {}
    for name in twins:
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} (id bigint, cat string) USING iceberg PARTITIONED BY (cat)")
        oracle.sql(f"INSERT INTO {q} VALUES (1, 'a'), (2, 'b')")
        first = catalog.load_table(name).maintenance.compute_partition_stats()
        oracle.sql(f"INSERT INTO {q} VALUES (3, 'a')")
        second = catalog.load_table(name).maintenance.compute_partition_stats()
        assert first is not None and second is not None
        # A newer file for the second snapshot replaces the registered one.
        _unregister(catalog, name, second.snapshot_id)
        third = catalog.load_table(name).maintenance.compute_partition_stats()
        assert third is not None
        gone[name], replaced[name], kept[name] = (
            first.statistics_path,
            second.statistics_path,
            third.statistics_path,
        )

    ice, java = twins
    s1 = {n: catalog.load_table(n).snapshots()[0].snapshot_id for n in twins}
    result = catalog.load_table(ice).maintenance.expire_snapshots(snapshot_ids=[s1[ice]])
    (java_result,) = oracle.sql(
        f"CALL {oracle.catalog}.system.expire_snapshots(table => '{java}', snapshot_ids => array({s1[java]}))"
    )
    assert result.deleted_statistics_files_count == java_result["deleted_statistics_files_count"] == 1
    for name in twins:
        assert not Path(_local(gone[name])).exists()
        assert Path(_local(kept[name])).exists() and Path(_local(replaced[name])).exists()
        assert set(_registered(catalog, name).values()) == {kept[name]}

    # Every file 4 days old, orphans counted from 2 days ago (Java refuses younger cut-offs).
    old = time.time() - 4 * 86400
    for name in twins:
        for root, _dirs, files in os.walk(warehouse / name.replace(".", "/")):
            for f in files:
                os.utime(os.path.join(root, f), (old, old))
    cutoff = int((time.time() - 2 * 86400) * 1000)
    orphans = catalog.load_table(ice).maintenance.remove_orphan_files(older_than=cutoff)
    java_orphans = oracle.sql(
        f"CALL {oracle.catalog}.system.remove_orphan_files(table => '{java}', "
        f"older_than => {ts_literal(cutoff)})"
    )

    def stats_names(locations: Any) -> list[str]:
        return sorted(Path(_local(p)).name for p in locations if "partition-stats-" in p)

    assert stats_names(orphans.orphan_file_locations) == [Path(_local(replaced[ice])).name]
    assert stats_names(r["orphan_file_location"] for r in java_orphans) == [Path(_local(replaced[java])).name]
    for name in twins:
        assert not Path(_local(replaced[name])).exists() and Path(_local(kept[name])).exists()


def test_the_procedure_through_icefloe_spark_sql(oracle: Oracle, catalog: Any, spark: Any) -> None:
    """`CALL system.compute_partition_stats(...)` through `icefloe.spark.sql`: Java's result
    column and row, the file registered for the snapshot."""
    import icefloe.spark

    name = new_table_name("pstats_sql")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, cat string) USING iceberg PARTITIONED BY (cat)")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a'), (2, 'b')")
    sid = catalog.load_table(name).current_snapshot().snapshot_id
    java = spark.sql(f"CALL {oracle.catalog}.system.compute_partition_stats(table => '{name}')")
    _unregister(catalog, name, sid)
    mine = icefloe.spark.sql(
        spark,
        f"CALL ice.system.compute_partition_stats(table => '{name}', snapshot_id => {sid})",
        catalogs={"ice": catalog},
    )
    assert mine.schema == java.schema
    (row,) = mine.collect()
    assert _registered(catalog, name) == {sid: row["partition_statistics_file"]}
    assert _java(oracle, name, sid, 2) == _mine(catalog.load_table(name), sid)


def test_uuid_partition_values(oracle: Oracle, catalog: Any) -> None:
    """A uuid column partitioned by identity and by bucket (a table icefloe makes: Spark SQL has
    no uuid type), edge values and a null among them: the file Java computes and the one icefloe
    computes hold the same rows, each read by the other."""
    import uuid

    import pyarrow as pa
    from icefloe.partitioning import PartitionField, PartitionSpec

    name = new_table_name("pstats_uuid")
    schema = pa.schema([pa.field("u", pa.uuid()), pa.field("id", pa.int64())])
    table = catalog.create_table(
        name,
        schema,
        partition_spec=PartitionSpec(
            PartitionField(1, 1000, "identity", "u"), PartitionField(1, 1001, "bucket[4]", "u_bucket")
        ),
        properties={"format-version": "2"},
    )
    edges = [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID("123e4567-e89b-12d3-a456-426614174000")]
    values = [u.bytes for u in edges] + [uuid.UUID(int=i * 7919).bytes for i in range(1, 6)] + [None]
    for start in (0, 4):
        rows = values[start : start + 5]
        table.append(pa.table({"u": pa.array(rows, pa.uuid()), "id": list(range(len(rows)))}, schema=schema))
    sid = catalog.load_table(name).current_snapshot().snapshot_id
    _java_compute(oracle, name)
    java_rows = _java(oracle, name, sid, 2)
    mine = [
        ((*(str(v) if isinstance(v, uuid.UUID) else v for v in r[0]),), *r[1:])
        for r in _mine(catalog.load_table(name), sid)
    ]
    assert sorted(mine, key=repr) == java_rows
    assert len(java_rows) == len(set(values))  # one partition per distinct value, null included
    _unregister(catalog, name, sid)
    assert catalog.load_table(name).maintenance.compute_partition_stats() is not None
    assert _java(oracle, name, sid, 2) == java_rows


def test_an_incremental_run_reads_only_the_manifests_each_snapshot_wrote(
    oracle: Oracle, catalog: Any
) -> None:
    """`inspect_snapshot_own_entries`: the entries of the manifests a snapshot wrote itself,
    every entry it added or deleted among them; another snapshot's manifests are not read."""
    import pyarrow as pa

    name = new_table_name("pstats_own")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, cat string) USING iceberg PARTITIONED BY (cat)")
    schema = pa.schema([("id", pa.int64()), ("cat", pa.string())])
    table = catalog.load_table(name)
    table.append(pa.table({"id": [0, 1, 2, 3], "cat": ["a", "b", "a", "b"]}, schema=schema))
    table.append(pa.table({"id": [4, 5], "cat": ["a", "c"]}, schema=schema))
    table.delete("cat = 'b'")  # whole files: DELETED entries
    table = catalog.load_table(name)
    md = table.metadata
    snaps = [s.snapshot_id for s in table.snapshots()]
    assert len(snaps) == 3

    def own(sid: int) -> list[tuple[int, int]]:
        t = pa.Table.from_batches(_native.inspect_snapshot_own_entries(md, sid))
        return sorted(zip(t.column("status").to_pylist(), t.column("snapshot_id").to_pylist()))

    every = pa.Table.from_batches(_native.inspect_table(md, "entries", snaps[1]))
    assert snaps[0] in every.column("snapshot_id").to_pylist()  # the snapshot's manifests: both appends
    assert own(snaps[1]) == [(pstats.ADDED, snaps[1])] * 2
    deleted = [e for e in own(snaps[2]) if e[0] == pstats.DELETED]
    assert deleted == [(pstats.DELETED, snaps[2])]
    assert all(sid != snaps[1] for _status, sid in own(snaps[2]))  # the second append's manifest: not read
    with pytest.raises(ValidationError, match="123"):
        _native.inspect_snapshot_own_entries(md, 123)
