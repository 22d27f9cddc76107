"""`icefloe.spark.read` reads the planned files without deletes through Spark's own Parquet
source, and the rest in Rust: the read parity matrix against Iceberg Java.

Each case is a table Iceberg Java writes (types, nesting, evolution, deletes, format
versions, partition transforms). icefloe's read must return Java's rows twice: with Spark's
Parquet source allowed (the files it may read take it) and with it turned off (every file in
Rust). Each case also says which path its files must take (`plan_read`), so a rule that
stops sending files to Spark's reader, or starts sending a file it would misread, fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from icefloe.spark import plan_read, read
from icefloe.spark._parquet_source import ENABLED_CONF
from support.oracle import assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

ALL_TYPES = (
    "b boolean, i int, l bigint, f float, d double, dec decimal(9,2), big decimal(38,10), "
    "dt date, ts timestamp, tsntz timestamp_ntz, s string, bin binary, "
    "st struct<x: int, y: string>, arr array<struct<k: int, v: string>>, m map<string, int>"
)
ALL_VALUES = (
    "SELECT id % 2 = 0, cast(id AS int), id * 1000000000000, cast(id AS float) / 3, "
    "CASE WHEN id = 3 THEN double('NaN') WHEN id = 4 THEN -0.0 ELSE id / 7 END, "
    "cast(id / 3 AS decimal(9,2)), cast(id / 7 AS decimal(38,10)), "
    "date_add(DATE'1500-01-01', cast(id * 5000 AS int)), "
    "timestamp_micros(id * 86400000000123 - 20000000000000000), "
    "timestamp_ntz'1969-12-31 23:59:59.999999' + make_interval(0,0,0,cast(id AS int)), "
    "IF(id % 5 = 0, NULL, concat('s', cast(id AS string), '\U0001f600')), "
    "IF(id % 6 = 0, NULL, cast(concat('b', cast(id AS string)) AS binary)), "
    "IF(id % 4 = 0, NULL, named_struct('x', cast(id AS int), 'y', cast(id AS string))), "
    "array(named_struct('k', cast(id AS int), 'v', 'a'), NULL), "
    "map('k', cast(id AS int), 'n', NULL) FROM range({lo}, {hi})"
)


@pytest.fixture
def spark_parquet_on(spark: Any) -> Iterator[None]:
    spark.conf.set(ENABLED_CONF, "true")
    yield
    spark.conf.unset(ENABLED_CONF)


def _paths(spark: Any, table: Any, **kw: Any) -> tuple[int, dict[str, str], str | None]:
    """(files Spark's reader reads, {path: reason} of the Rust reader's, scan reason)."""
    p = plan_read(spark, table, **kw)
    return len(p.spark_files), p.rust_files, p.scan_reason


def _both_paths_equal_java(spark: Any, oracle: Any, table: Any, name: str, **kw: Any) -> None:
    """icefloe's rows with Spark's Parquet source on, then off, equal Java's."""
    columns = kw.get("selected_fields")

    def check(context: str) -> None:
        got = read(spark, table, **kw)
        if columns == ():  # no column: one row per table row
            java = oracle.df(name, snapshot_id=kw.get("snapshot_id")).count()
            assert (got.columns, got.count()) == ([], java), context
        else:
            expected = oracle.canonical(name, snapshot_id=kw.get("snapshot_id"), columns=columns)
            assert_same_rows(got, expected, context=context)

    check("spark parquet path on")
    spark.conf.set(ENABLED_CONF, "false")
    try:
        assert _paths(spark, table, **kw)[0] == 0
        check("spark parquet path off")
    finally:
        spark.conf.unset(ENABLED_CONF)


def _create(oracle: Any, name: str, columns: str, props: str = "", partitioned: str = "") -> str:
    q = oracle.qualified(name)
    part = f" PARTITIONED BY ({partitioned})" if partitioned else ""
    extra = f", {props}" if props else ""
    oracle.sql(
        f"CREATE TABLE {q} ({columns}) USING iceberg{part} TBLPROPERTIES ('format-version'='2'{extra})"
    )
    return q


@pytest.mark.parametrize("version", [1, 2, 3])
def test_every_type_nested_and_partitioned_reads_java_rows(
    spark: Any, oracle: Any, catalog: Any, version: int, spark_parquet_on: None
) -> None:
    name = new_table_name(f"sparkpq_types_v{version}")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, {ALL_TYPES}) USING iceberg "
        "PARTITIONED BY (bucket(3, id), days(ts), truncate(2, s), b) "
        f"TBLPROPERTIES ('format-version'='{version}')"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, * FROM ({ALL_VALUES.format(lo=0, hi=24)})")
    # the other transforms, by partition evolution: files of two specs
    for field in ("hours(tsntz)", "months(dt)", "years(ts)", "truncate(4, l)", "bucket(2, s)"):
        oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD {field}")
    oracle.sql(f"INSERT INTO {q} SELECT id, * FROM ({ALL_VALUES.format(lo=24, hi=48)})")
    table = catalog.load_table(name)
    n_spark, rust, reason = _paths(spark, table)
    assert reason is None and not rust and n_spark == len(table.scan().plan_files()) > 4
    _both_paths_equal_java(spark, oracle, table, name)
    _both_paths_equal_java(spark, oracle, table, name, selected_fields=("st", "m", "ts", "id"))


def test_evolution_rename_drop_add_reorder_reads_by_field_id(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    name = new_table_name("sparkpq_evolve")
    q = _create(oracle, name, "id bigint, a string, b int, st struct<x: int, y: string>")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a1', 10, named_struct('x', 1, 'y', 'y1')), (2, 'a2', 20, NULL)")
    oracle.sql(f"ALTER TABLE {q} RENAME COLUMN a TO a_renamed")
    oracle.sql(f"ALTER TABLE {q} RENAME COLUMN st.y TO y_renamed")
    oracle.sql(f"ALTER TABLE {q} DROP COLUMN b")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN c double")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN st.z string")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN c FIRST")
    oracle.sql(f"INSERT INTO {q} VALUES (0.5, 3, 'a3', named_struct('x', 3, 'y_renamed', 'y3', 'z', 'z3'))")
    table = catalog.load_table(name)
    n_spark, rust, reason = _paths(spark, table)
    assert reason is None and not rust and n_spark == len(table.scan().plan_files()) >= 2
    _both_paths_equal_java(spark, oracle, table, name)
    # an old snapshot reads with its own schema (b still there, a not renamed)
    first = oracle.snapshot_ids(name)[0]
    _both_paths_equal_java(spark, oracle, table, name, snapshot_id=first)


def test_name_reused_by_another_field_takes_the_rust_reader(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    name = new_table_name("sparkpq_reuse")
    q = _create(oracle, name, "id bigint, x int")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 10), (2, 20)")
    oracle.sql(f"ALTER TABLE {q} DROP COLUMN x")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN x int")
    oracle.sql(f"INSERT INTO {q} VALUES (3, 30)")
    table = catalog.load_table(name)
    assert "used by another field id" in (_paths(spark, table)[2] or "")
    # the id column alone has no such history: Spark's reader takes it
    assert _paths(spark, table, selected_fields=("id",))[0] == len(table.scan().plan_files())
    _both_paths_equal_java(spark, oracle, table, name)
    got = read(spark, table).where("x = 10 OR x IS NULL").collect()
    assert sorted(r.id for r in got) == [1, 2]


def test_promoted_column_takes_the_rust_reader(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    name = new_table_name("sparkpq_promote")
    q = _create(oracle, name, "id bigint, n int, f float, dec decimal(9,2)")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 2147483647, 1.5, 1234567.89)")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN n TYPE bigint")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN f TYPE double")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN dec TYPE decimal(18,2)")
    oracle.sql(f"INSERT INTO {q} VALUES (2, 9223372036854775807, 2.25, 1234567890123.45)")
    table = catalog.load_table(name)
    assert "changed type" in (_paths(spark, table)[2] or "")
    assert _paths(spark, table, selected_fields=("id",))[0] == len(table.scan().plan_files())
    _both_paths_equal_java(spark, oracle, table, name)


def test_deletes_split_the_scan_between_the_readers(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    """Position deletes, equality deletes (Flink's upserts, written by icefloe here) and v3
    deletion vectors: their files take the Rust reader, the others Spark's."""
    for version, mode in ((2, "position"), (3, "dv"), (2, "equality")):
        name = new_table_name(f"sparkpq_del_{mode}")
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id bigint NOT NULL, cat string, v string) USING iceberg PARTITIONED BY (cat) "
            f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read', "
            "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
        )
        oracle.sql(f"INSERT INTO {q} SELECT id, IF(id < 50, 'a', 'b'), concat('v', id) FROM range(0, 100)")
        oracle.sql(f"INSERT INTO {q} SELECT id, 'c', concat('v', id) FROM range(100, 120)")
        if mode == "equality":
            import pyarrow as pa

            table = catalog.load_table(name)
            table.upsert(
                pa.table({"id": pa.array([3, 4], pa.int64()), "cat": ["a", "a"], "v": ["new3", "new4"]}),
                join_cols=["id", "cat"],
            )
            assert any(f.content == 2 for t in table.scan().plan_files() for f in t.delete_files)
        else:
            oracle.sql(f"DELETE FROM {q} WHERE id % 10 = 3 AND cat = 'a'")
        table = catalog.load_table(name)
        n_spark, rust, reason = _paths(spark, table)
        assert reason is None
        assert rust and all(why == "deletes" for why in rust.values()), (mode, rust)
        assert n_spark >= 2, (mode, n_spark)
        _both_paths_equal_java(spark, oracle, table, name)
        _both_paths_equal_java(spark, oracle, table, name, selected_fields=())


def test_time_travel_and_branches(spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None) -> None:
    name = new_table_name("sparkpq_refs")
    q = _create(oracle, name, "id bigint, v string")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a'), (2, 'b')")
    first = oracle.current_snapshot_id(name)
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH audit")
    oracle.sql(f"INSERT INTO {q}.branch_audit VALUES (3, 'on branch')")
    oracle.sql(f"INSERT INTO {q} VALUES (4, 'main')")
    table = catalog.load_table(name)
    _both_paths_equal_java(spark, oracle, table, name, snapshot_id=first)
    assert _paths(spark, table, ref="audit")[0] == len(table.scan(ref="audit").plan_files()) >= 2
    expected = oracle.canonical(f"{name}.branch_audit")
    assert_same_rows(read(spark, table, ref="audit"), expected)


def test_row_filter_residuals_and_partition_filters(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    """A filter on the identity partition column leaves no residual: Spark's reader; a filter
    on a data column leaves one in the files it may match: the Rust reader applies it."""
    name = new_table_name("sparkpq_filter")
    q = _create(oracle, name, "id bigint, cat string, d double", partitioned="cat")
    oracle.sql(
        f"INSERT INTO {q} SELECT id, IF(id % 2 = 0, 'even', 'odd'), "
        "IF(id = 7, double('NaN'), id / 2) FROM range(0, 30)"
    )
    table = catalog.load_table(name)
    n_spark, rust, _ = _paths(spark, table, row_filter="cat = 'even'")
    assert n_spark == 1 and not rust
    assert_same_rows(
        read(spark, table, row_filter="cat = 'even'"), oracle.canonical(name, where="cat = 'even'")
    )
    n_spark, rust, _ = _paths(spark, table, row_filter="d > 5")
    assert n_spark == 0 and set(rust.values()) == {"residual filter"}
    spark.conf.set(ENABLED_CONF, "false")
    try:
        off = read(spark, table, row_filter="d > 5").collect()
    finally:
        spark.conf.unset(ENABLED_CONF)
    assert_same_rows(
        read(spark, table, row_filter="d > 5"), spark.createDataFrame(off, "id bigint, cat string, d double")
    )
    # A caller that filters the rows itself (icefloe.spark.sql keeps the query's WHERE) takes
    # Spark's reader for those files too; its filter gives Java's rows.
    n_spark, rust, _ = _paths(spark, table, row_filter="d > 5", rows_filtered_after=True)
    assert n_spark == 2 and not rust
    plan = plan_read(spark, table, row_filter="d > 5", rows_filtered_after=True)
    assert_same_rows(plan.frame().where("d > 5"), oracle.canonical(name, where="d > 5"))


def test_metadata_columns_and_name_mapping_take_the_rust_reader(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    name = new_table_name("sparkpq_meta")
    q = _create(oracle, name, "id bigint, u string")
    oracle.sql(f"INSERT INTO {q} SELECT id, NULL FROM range(0, 5)")
    table = catalog.load_table(name)
    assert "metadata column _file" in (_paths(spark, table, selected_fields=("id", "_file"))[2] or "")
    got = read(spark, table, selected_fields=("id", "_file")).collect()
    assert len(got) == 5 and all(r._file.endswith(".parquet") for r in got)
    oracle.sql(
        f"ALTER TABLE {q} SET TBLPROPERTIES ('schema.name-mapping.default'="
        '\'[{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["u"]}]\')'
    )
    table = catalog.load_table(name)
    assert "name mapping" in (_paths(spark, table)[2] or "")
    _both_paths_equal_java(spark, oracle, table, name)


def test_uuid_and_fixed_columns_take_the_rust_reader(
    spark: Any, catalog: Any, spark_parquet_on: None
) -> None:
    import uuid

    import pyarrow as pa
    from icefloe.schema import NestedField, Schema
    from icefloe.types import FixedType, LongType, UUIDType

    name = new_table_name("sparkpq_uuid")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "u", UUIDType(), required=False),
        NestedField(3, "fx", FixedType(3), required=False),
    )
    table = catalog.create_table(name, schema)
    u = uuid.UUID("12345678-1234-5678-1234-567812345678")
    table.append(
        pa.table(
            {
                "id": pa.array([1], pa.int64()),
                "u": pa.array([u.bytes], pa.binary(16)),
                "fx": pa.array([b"abc"], pa.binary(3)),
            }
        )
    )
    table = catalog.load_table(name)
    assert "type uuid" in (_paths(spark, table)[2] or "")
    assert "type fixed[3]" in (_paths(spark, table, selected_fields=("id", "fx"))[2] or "")
    assert _paths(spark, table, selected_fields=("id",))[0] == 1
    row = read(spark, table).collect()[0]
    assert (row.id, row.u, bytes(row.fx)) == (1, str(u), b"abc")


def _wide_table(oracle: Any, catalog: Any, rows: int, tag: str) -> tuple[str, Any]:
    """A table of 16 string columns of 24 characters each (Java writes it, two files)."""
    name = new_table_name(f"sparkpq_{tag}")
    cols = ", ".join(f"c{i} string" for i in range(16))
    q = _create(oracle, name, f"id bigint, {cols}")
    values = ", ".join(f"concat('c{i}-', sha2(cast(id * {i + 1} AS string), 256))" for i in range(16))
    oracle.sql(f"INSERT INTO {q} SELECT /*+ REPARTITION(2) */ id, {values} FROM range(0, {rows})")
    return name, catalog.load_table(name)


def _input_bytes(spark: Any, action: Any) -> int:
    """Bytes the Spark JVM (driver and local executors) read through read() calls while
    `action` ran (`rchar` of /proc/<pid>/io): Spark's Parquet reads, whichever I/O path its
    Parquet library takes (PySpark 4.1's reads bypass Hadoop's file-system counters and its
    task input metrics), and nothing of the Rust reader, which reads in the Python workers."""
    pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())

    def rchar() -> int:
        with open(f"/proc/{pid}/io") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("rchar:"))

    before = rchar()
    action()
    return rchar() - before


def test_a_query_reads_only_the_columns_it_uses(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    """3 of 17 columns, no `selected_fields`: Spark prunes the rest, in the plan and in the
    bytes it reads; the answer is Java's."""
    name, table = _wide_table(oracle, catalog, 20_000, "prune")
    df = read(spark, table)
    query = df.selectExpr("sum(length(c1) + length(c2)) AS n", "max(id) AS m")
    plan = query._jdf.queryExecution().executedPlan().toString()
    assert "ReadSchema: struct<id:bigint,c1:string,c2:string>" in plan, plan
    every_column = "sum(" + " + ".join(f"length(c{i})" for i in range(16)) + ")"
    # first, the classes and generated code such a query needs (their jar reads count too)
    read(spark, table).selectExpr("sum(length(c3) + length(c4))", "max(id)").collect()
    some = _input_bytes(
        spark, lambda: read(spark, table).selectExpr("sum(length(c1) + length(c2))").collect()
    )
    every = _input_bytes(spark, lambda: read(spark, table).selectExpr(every_column).collect())
    data = sum(t.file.file_size_in_bytes for t in table.scan().plan_files())
    assert every > data * 0.8 and 0 < some < every * 0.25, (some, every, data)
    java = oracle.df(name).selectExpr("sum(length(c1) + length(c2)) AS n", "max(id) AS m").collect()
    assert query.collect() == java
    # selected_fields still narrows what is read
    narrow = read(spark, table, selected_fields=("id", "c1"))
    assert narrow.columns == ["id", "c1"]
    assert 0 < _input_bytes(spark, narrow.selectExpr("max(c1)").collect) < every * 0.2


def _broadcasts(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_spark_sizes_the_read_from_the_planned_files(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    """Spark's estimate of a read follows its files: under the broadcast threshold a table is
    broadcast into a join, over it never, for the Spark half and the Rust half alike."""
    big_name, big = _wide_table(oracle, catalog, 20_000, "big")
    small_name, small = _wide_table(oracle, catalog, 25, "small")
    planned = plan_read(spark, big)
    size = int(str(read(spark, big)._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    assert size == planned.plain.size_in_bytes > 500_000
    old = spark.conf.get("spark.sql.autoBroadcastJoinThreshold")
    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(200_000))
    try:
        for on in ("true", "false"):
            spark.conf.set(ENABLED_CONF, on)
            b, s = read(spark, big), read(spark, small)
            plan = _broadcasts(b.join(s, "id"))
            assert "BroadcastHashJoin" in plan and plan.count("BroadcastExchange") == 1, (on, plan)
            b2 = read(spark, big).withColumnRenamed("c1", "x1").select("id", "x1")
            plan = _broadcasts(b.join(b2, "id"))
            assert "SortMergeJoin" in plan and "BroadcastExchange" not in plan, (on, plan)
    finally:
        spark.conf.set("spark.sql.autoBroadcastJoinThreshold", old)
    java = oracle.df(big_name).join(oracle.df(small_name), "id").count()
    assert read(spark, big).join(read(spark, small), "id").count() == java == 25


def test_a_byte_size_setting_that_is_no_whole_number_is_named(spark: Any) -> None:
    """`icefloe.read.spark-parquet.s3-min-mean-file-bytes` and the sort rewrite's
    `...min-mean-file-bytes` take a whole number of bytes; anything else names the setting."""
    from icefloe.exceptions import ValidationError
    from icefloe.maintenance._sort_on_spark import MIN_MEAN_CONF
    from icefloe.spark._parquet_source import S3_MIN_MEAN_CONF
    from icefloe.spark._session import conf_bytes

    for key in (S3_MIN_MEAN_CONF, MIN_MEAN_CONF):
        assert conf_bytes(spark, key, 7) == 7
        try:
            spark.conf.set(key, " 16_777_216 ")
            assert conf_bytes(spark, key, 7) == 16 << 20
            for bad in ("8MB", "1.5", "-1"):
                spark.conf.set(key, bad)
                with pytest.raises(
                    ValidationError,
                    match=rf"{re.escape(key)}: expected a whole number of bytes, found '{re.escape(bad)}'",
                ):
                    conf_bytes(spark, key, 7)
        finally:
            spark.conf.unset(key)


def _two_files(oracle: Any, catalog: Any, prefix: str) -> tuple[str, Any]:
    """A table Java wrote in two inserts (two data files, three rows): its name and icefloe's table."""
    name = new_table_name(prefix)
    q = _create(oracle, name, "id bigint, v string")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a'), (2, 'b')")
    oracle.sql(f"INSERT INTO {q} VALUES (3, 'c')")
    return name, catalog.load_table(name)


def _relation(df: Any) -> Any:
    """The JVM relation under a read's analysed plan (PySpark 4's logical plan is unresolved)."""
    return df._jdf.queryExecution().analyzed().relation()


def test_a_read_of_the_same_files_reuses_their_relation_with_columns_of_its_own(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None, monkeypatch: Any
) -> None:
    """Spark's relation over a plan's file list is kept per session: a second read of the same
    files (same columns) is a new DataFrame of it, whose columns are its own (a self-join
    pairs rows, not columns), and a read of other files or columns gets a relation of its own."""
    from icefloe.spark import _parquet_source as source

    monkeypatch.setattr(source, "_RELATIONS_PER_SESSION", 2)
    name, table = _two_files(oracle, catalog, "sparkpq_kept")
    relation = _relation
    a, b = read(spark, table), read(spark, table)
    assert relation(a).equals(relation(b))
    assert sorted(r[0] for r in a.join(b, a["id"] == b["id"]).select(a["id"]).collect()) == [1, 2, 3]
    assert_same_rows(b, oracle.canonical(name))
    narrow = read(spark, table, selected_fields=("id",))
    assert not relation(narrow).equals(relation(a))
    assert narrow.columns == ["id"] and sorted(r[0] for r in narrow.collect()) == [1, 2, 3]

    before = table.current_snapshot().snapshot_id
    oracle.sql(f"INSERT INTO {oracle.qualified(name)} VALUES (4, 'd')")
    table = catalog.load_table(name)
    after = read(spark, table)
    assert not relation(after).equals(relation(a))
    assert_same_rows(after, oracle.canonical(name))
    # Two relations kept per session here: the newest two (the narrow read and the last one);
    # the first read's relation was dropped, the next such read builds it again.
    kept = list(source._RELATIONS[spark].values())
    assert len(kept) == 2 and kept[-1].equals(relation(after)) and kept[0].equals(relation(narrow))
    again = read(spark, table, snapshot_id=before)
    assert not relation(again).equals(relation(a))
    assert_same_rows(again, oracle.canonical(name, snapshot_id=before))


def test_a_session_that_ignores_sink_logs_is_given_the_paths(
    spark: Any, oracle: Any, catalog: Any, spark_parquet_on: None
) -> None:
    """With `spark.sql.streaming.fileStreamSink.ignoreMetadata=true` Spark would not read a file
    list from a sink log: the files are handed over as paths, and read as Java reads them."""
    name, table = _two_files(oracle, catalog, "sparkpq_paths")

    def index(df: Any) -> str:
        return str(_relation(df).location().getClass().getSimpleName())

    spark.conf.set("spark.sql.streaming.fileStreamSink.ignoreMetadata", "true")
    try:
        got = read(spark, table)
        assert index(got) == "InMemoryFileIndex"
        assert_same_rows(got, oracle.canonical(name))
    finally:
        spark.conf.unset("spark.sql.streaming.fileStreamSink.ignoreMetadata")
    # (a relation over paths is not kept: the next read of these files is given the file list)
    assert index(read(spark, table)) == "MetadataLogFileIndex"
