"""`table.maintenance.compute_table_stats()` against Iceberg Java 1.12's `compute_table_stats`
procedure, on the same tables:

- Exact mode (fewer than 4096 distinct values per column): on one snapshot, icefloe's sketch
  of each column is Java's (Apache DataSketches' compact ordered form of the same hashes:
  same single-value bytes, same MurmurHash3 seed; byte for byte but for the unused float
  after the preamble's count), and its `ndv` is Java's and the true count. Nulls and empty
  strings are not counted (as Java).
- Estimation mode (12,000 distinct values): both estimates within 5% of the true count
  (Java's Alpha-family sketch and the library's QuickSelect sketch retain different hashes).
- Each reads the other's file: icefloe the estimates of Java's zstd blobs, Java (its Puffin
  reader and DataSketches, in the JVM) icefloe's, and Java's table metadata lists icefloe's
  file for the snapshot.
- A snapshot's statistics file is replaced by a newer one; expiring the snapshot drops both
  from the metadata and deletes the registered one; bad columns are refused with nothing written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from icefloe import _native
from icefloe.exceptions import ValidationError
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

COLUMNS = (
    "id bigint, name string, d date, price decimal(10, 2), f double, flag boolean, ts timestamp, "
    "s struct<a: int>"
)


def _make(oracle: Oracle, rows: str) -> str:
    name = new_table_name("stats")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} ({COLUMNS}) USING iceberg")
    oracle.sql(f"INSERT INTO {q} {rows}")
    return name


EXACT_ROWS = (
    "SELECT id % 97, IF(id % 11 = 0, '', CONCAT('n', CAST(id % 13 AS STRING))), "
    "DATE_ADD(DATE'2020-01-01', CAST(id % 50 AS INT)), CAST(id % 31 AS DECIMAL(10, 2)) / 4, "
    "IF(id % 7 = 0, NULL, (id % 17) / 3.0), id % 2 = 0, "
    "TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id % 23), "
    "named_struct('a', CAST(id AS INT)) "
    "FROM range(0, 600) AS r(id)"
)


def _java_sketches(oracle: Oracle, name: str) -> dict[int, tuple[bytes, int]]:
    """Java's statistics file of the current snapshot: field id -> (sketch bytes, ndv)."""
    table = oracle.java_table(name)
    table.refresh()
    sid = table.currentSnapshot().snapshotId()
    files = [f for f in _java_list(table.statisticsFiles()) if f.snapshotId() == sid]
    assert files, "Java registered no statistics file"
    return {
        int(fields[0]): (bytes(data), int(ndv))
        for fields, data, ndv in _sketches_in_java(oracle, table, files[0].path())
    }


def _java_list(items: Any) -> list[Any]:
    it, out = items.iterator(), []
    while it.hasNext():
        out.append(it.next())
    return out


def _sketches_in_java(oracle: Oracle, table: Any, path: str) -> list[tuple[list[int], bytes, int]]:
    """Reads a statistics file with Java's Puffin reader and DataSketches: (fields, sketch
    bytes, Java's estimate of them) per blob."""
    jvm = oracle.jvm
    reader = jvm.org.apache.iceberg.puffin.Puffin.read(table.io().newInputFile(path)).build()
    out = []
    try:
        blobs = reader.fileMetadata().blobs()
        pairs = reader.readAll(blobs).iterator()
        while pairs.hasNext():
            pair = pairs.next()
            meta, buf = pair.first(), pair.second()
            data = bytes(jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buf))
            memory = jvm.org.apache.iceberg.shaded.org.apache.datasketches.memory.Memory.wrap(data)
            sketch = jvm.org.apache.iceberg.shaded.org.apache.datasketches.theta.CompactSketch.wrap(memory)
            out.append(([int(f) for f in meta.inputFields()], data, int(sketch.getEstimate())))
    finally:
        reader.close()
    return out


def test_exact_sketches_are_javas_byte_for_byte(oracle: Oracle, catalog: Any) -> None:
    name = _make(oracle, EXACT_ROWS)
    oracle.sql(f"CALL {oracle.catalog}.system.compute_table_stats(table => '{name}')")
    java = _java_sketches(oracle, name)
    table = catalog.load_table(name)
    schema = table.schema()
    ids = {f.name: f.field_id for f in schema.fields}
    # Java sketched the top-level primitive columns (not the struct).
    assert set(java) == {ids[c] for c in ("id", "name", "d", "price", "f", "flag", "ts")}
    # icefloe reads Java's (zstd) blobs: the same estimates as Java's `ndv`.
    java_file = [f for f in table.statistics() if f.snapshot_id == table.current_snapshot().snapshot_id]
    assert java_file[0].ndv == {fid: ndv for fid, (_b, ndv) in java.items()}
    mine_of_java = {
        fields[0]: est for fields, _s, est in _native.statistics_file_sketches(java_file[0].statistics_path)
    }
    assert {fid: int(e) for fid, e in mine_of_java.items()} == {fid: ndv for fid, (_b, ndv) in java.items()}

    stats = table.maintenance.compute_table_stats()
    assert stats is not None
    mine = {
        fields[0]: (bytes(data), int(est))
        for fields, data, est in _native.statistics_file_sketches(stats.statistics_path)
    }
    assert set(mine) == set(java)
    for fid, (data, ndv) in java.items():
        got, got_ndv = mine[fid]
        assert got_ndv == ndv, f"field {fid}: ndv {got_ndv}, Java's {ndv}"
        # The same sketch: preamble (serial version, family, flags, seed hash, retained count)
        # and the retained hashes in order. Only the float after the count differs, which the
        # compact form does not use: Java writes 1.0, the Rust library 0.
        assert len(got) == len(data) and got[:12] == data[:12] and got[16:] == data[16:], (
            f"field {fid}: icefloe's sketch {got[:24].hex()}... is not Java's {data[:24].hex()}..."
        )
    truth = oracle.sql(
        f"SELECT count(DISTINCT id), count(DISTINCT NULLIF(name, '')), count(DISTINCT d), "
        "count(DISTINCT price), "
        f"count(DISTINCT f), count(DISTINCT flag), count(DISTINCT ts) FROM {oracle.qualified(name)}"
    )[0]
    assert [stats.ndv[ids[c]] for c in ("id", "name", "d", "price", "f", "flag", "ts")] == list(truth)
    # Java reads icefloe's file: its table lists it for the snapshot, its reader parses it.
    jtable = oracle.java_table(name)
    jtable.refresh()
    listed = [f.path() for f in _java_list(jtable.statisticsFiles()) if f.snapshotId() == stats.snapshot_id]
    assert listed == [stats.statistics_path]
    in_java = {fields[0]: est for fields, _d, est in _sketches_in_java(oracle, jtable, stats.statistics_path)}
    assert in_java == {fid: ndv for fid, (_d, ndv) in mine.items()}
    assert table.maintenance.statistics_estimates() == {
        c: float(stats.ndv[ids[c]]) for c in ("id", "name", "d", "price", "f", "flag", "ts")
    }


def test_estimates_of_many_values_are_within_the_sketch_error(oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("stats_many")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, name string) USING iceberg")
    oracle.sql(
        f"INSERT INTO {q} SELECT id, CONCAT('v', CAST(id % 9000 AS STRING)) FROM range(0, 12000) AS r(id)"
    )
    oracle.sql(
        f"CALL {oracle.catalog}.system.compute_table_stats(table => '{name}', columns => array('id', 'name'))"
    )
    java = _java_sketches(oracle, name)
    table = catalog.load_table(name)
    stats = table.maintenance.compute_table_stats(columns=["id", "name"])
    assert stats is not None
    ids = {f.name: f.field_id for f in table.schema().fields}
    for column, truth in (("id", 12000), ("name", 9000)):
        mine, theirs = stats.ndv[ids[column]], java[ids[column]][1]
        assert abs(mine - truth) / truth < 0.05, (column, mine, truth)
        assert abs(theirs - truth) / truth < 0.05, (column, theirs, truth)


def test_statistics_follow_their_snapshot(oracle: Oracle, catalog: Any, warehouse: Path) -> None:
    name = _make(oracle, EXACT_ROWS)
    table = catalog.load_table(name)
    first = table.maintenance.compute_table_stats(columns=["id"])
    second = table.maintenance.compute_table_stats(columns=["id", "s.a"])
    assert first is not None and second is not None
    listed = catalog.load_table(name).statistics()
    assert [f.statistics_path for f in listed] == [second.statistics_path]  # replaced, as Java
    assert set(second.ndv) == {
        table.schema().find_field("id").field_id,
        table.schema().find_field("s.a").field_id,
    }
    assert second.ndv[table.schema().find_field("s.a").field_id] == 600
    old = table.current_snapshot().snapshot_id
    oracle.sql(f"INSERT INTO {oracle.qualified(name)} {EXACT_ROWS}")
    table = catalog.load_table(name)
    table.maintenance.expire_snapshots(snapshot_ids=[old])
    assert catalog.load_table(name).statistics() == []
    assert not Path(second.statistics_path.removeprefix("file:")).exists()


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["nope"], "Can't find column nope"),
        (["s"], "non-primitive type column: s"),
        ([], "cannot be null/empty"),
    ],
)
def test_bad_columns_are_refused(oracle: Oracle, catalog: Any, columns: list[str], message: str) -> None:
    name = _make(
        oracle,
        "SELECT 1, 'a', DATE'2020-01-01', 1.5, 1.0, true, TIMESTAMP'2024-01-01 00:00:00', "
        "named_struct('a', 1)",
    )
    table = catalog.load_table(name)
    before = table.metadata_location
    with pytest.raises(ValidationError, match=message):
        table.maintenance.compute_table_stats(columns=columns)
    assert catalog.load_table(name).metadata_location == before
    with pytest.raises(ValidationError, match="Snapshot not found: 42"):
        table.maintenance.compute_table_stats(snapshot_id=42)


def test_the_procedure_through_icefloe_spark_sql(oracle: Oracle, catalog: Any, spark: Any) -> None:
    """`CALL system.compute_table_stats(...)` through `icefloe.spark.sql`: Java's result
    column (`statistics_file`) and row, the file registered for the snapshot."""
    import icefloe.spark

    name = _make(oracle, EXACT_ROWS)
    java = spark.sql(
        f"CALL {oracle.catalog}.system.compute_table_stats(table => '{name}', columns => array('id'))"
    )
    mine = icefloe.spark.sql(
        spark,
        f"CALL ice.system.compute_table_stats(table => '{name}', columns => array('id', 'name'))",
        catalogs={"ice": catalog},
    )
    assert mine.schema == java.schema
    (row,) = mine.collect()
    listed = catalog.load_table(name).statistics()
    assert [f.statistics_path for f in listed] == [row["statistics_file"]]
    assert len(listed[0].blob_metadata) == 2
    # DESCRIBE EXTENDED of a column with statistics: the sketch's estimate where Java's scan
    # reports it (the cost-based optimizer on; twin-tested in test_spark_sql_ddl.py)
    plain = icefloe.spark.sql(spark, f"DESCRIBE ice.{name} id", catalogs={"ice": catalog}).collect()
    assert [tuple(r) for r in plain][:2] == [("col_name", "id"), ("data_type", "bigint")]
    spark.conf.set("spark.sql.cbo.enabled", "true")
    try:
        described = icefloe.spark.sql(spark, f"DESCRIBE EXTENDED ice.{name} id", catalogs={"ice": catalog})
        ndv = next(b.properties["ndv"] for b in listed[0].blob_metadata if b.fields == (1,))
        assert ("distinct_count", ndv) in [tuple(r) for r in described.collect()]
    finally:
        spark.conf.unset("spark.sql.cbo.enabled")


def _sketch_bytes(path: str) -> dict[int, tuple[bytes, float]]:
    return {fields[0]: (bytes(data), est) for fields, data, est in _native.statistics_file_sketches(path)}


def _many_files(oracle: Oracle, rows: str, parts: int) -> str:
    """A merge-on-read table of `parts` inserts of `rows` (one file or more each), then a
    delete of a tenth of them (position deletes): the Spark tasks get several file tasks."""
    name = new_table_name("stats_spark")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} ({COLUMNS}) USING iceberg TBLPROPERTIES "
        "('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    for _ in range(parts):
        oracle.sql(f"INSERT INTO {q} {rows}")
    oracle.sql(f"DELETE FROM {q} WHERE id % 10 = 3")
    return name


def test_on_spark_the_sketches_are_the_in_process_ones(oracle: Oracle, catalog: Any, spark: Any) -> None:
    """`spark=`: each Spark task sketches its share of the file tasks (deletes applied), the
    driver merges them with a theta union. Below 4,096 distinct values the union is exactly the
    in-process sketch; the estimates are the true counts after the delete, and Java reads the
    file."""
    name = _many_files(oracle, EXACT_ROWS, 4)
    table = catalog.load_table(name)
    assert len(table.scan().plan_files()) >= 4
    in_process = table.maintenance.compute_table_stats()
    on_spark = catalog.load_table(name).maintenance.compute_table_stats(spark=spark)
    assert in_process is not None and on_spark is not None
    mine, theirs = _sketch_bytes(in_process.statistics_path), _sketch_bytes(on_spark.statistics_path)
    assert set(mine) == set(theirs) and len(mine) == 7
    for fid, (data, est) in mine.items():
        assert theirs[fid] == (data, est), f"field {fid}: Spark's union differs from the in-process sketch"
    ids = {f.name: f.field_id for f in table.schema().fields}
    truth = oracle.sql(
        "SELECT count(DISTINCT id), count(DISTINCT NULLIF(name, '')), count(DISTINCT d), "
        "count(DISTINCT price), count(DISTINCT f), count(DISTINCT flag), count(DISTINCT ts) "
        f"FROM {oracle.qualified(name)}"
    )[0]
    assert [on_spark.ndv[ids[c]] for c in ("id", "name", "d", "price", "f", "flag", "ts")] == list(truth)
    assert truth[0] == 87  # 97 ids less the 10 with id % 10 = 3: the deletes were applied
    jtable = oracle.java_table(name)
    jtable.refresh()
    listed = [
        f.path() for f in _java_list(jtable.statisticsFiles()) if f.snapshotId() == on_spark.snapshot_id
    ]
    assert listed == [on_spark.statistics_path]
    in_java = {
        fields[0]: est for fields, _d, est in _sketches_in_java(oracle, jtable, on_spark.statistics_path)
    }
    assert in_java == {fid: int(e) for fid, (_d, e) in theirs.items()}


def test_on_spark_many_values_are_within_the_sketch_error(oracle: Oracle, catalog: Any, spark: Any) -> None:
    name = new_table_name("stats_spark_many")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, name string) USING iceberg")
    for lo in (0, 5000, 10000):  # three files: each Spark task's sketch in estimation mode
        oracle.sql(
            f"INSERT INTO {q} SELECT id, CONCAT('v', CAST(id % 9000 AS STRING)) "
            f"FROM range({lo}, {lo + 6000}) AS r(id)"
        )
    stats = catalog.load_table(name).maintenance.compute_table_stats(spark=spark)
    assert stats is not None
    table = catalog.load_table(name)
    ids = {f.name: f.field_id for f in table.schema().fields}
    for column, truth in (("id", 16000), ("name", 9000)):
        got = stats.ndv[ids[column]]
        assert abs(got - truth) / truth < 0.05, (column, got, truth)
    jtable = oracle.java_table(name)
    in_java = {fields[0]: est for fields, _d, est in _sketches_in_java(oracle, jtable, stats.statistics_path)}
    assert in_java == {ids[c]: stats.ndv[ids[c]] for c in ("id", "name")}


def test_on_spark_a_failed_task_registers_nothing(
    oracle: Oracle, catalog: Any, spark: Any, warehouse: Path
) -> None:
    """A data file gone from storage: the executor's error reaches the caller (naming the
    file), no statistics are registered and no statistics file is left behind."""
    name = _many_files(oracle, EXACT_ROWS, 2)
    table = catalog.load_table(name)
    before = table.metadata_location
    victim = table.scan().plan_files()[0].file_path
    Path(victim.removeprefix("file:")).unlink()
    with pytest.raises(Exception, match=Path(victim).name):
        table.maintenance.compute_table_stats(spark=spark)
    assert catalog.load_table(name).metadata_location == before
    metadata_dir = Path(table.metadata.metadata_root.removeprefix("file:"))
    assert not list(metadata_dir.glob("*.stats"))
