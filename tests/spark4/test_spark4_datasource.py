# ruff: noqa: E501
"""`format("icefloe")` on PySpark 4 (collected only there, see conftest): batch reads and
writes against Iceberg Java on the same Spark session and warehouse.

Reads of Java's tables through the data source must equal Java's own reads (snapshots,
branches, tags, time travel, incremental ranges, pushed filters, merge-on-read deletes);
writes through the data source must read back in Java as the rows written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe.spark
import pytest
from icefloe.spark._parquet_source import ENABLED_CONF
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


@pytest.fixture(scope="module")
def icefloe_source(spark: Any, warehouse: Path) -> Any:
    """The data source registered with the session catalog `local` (icefloe's filesystem
    catalog on the oracle's warehouse)."""
    spark.conf.set("icefloe.catalog.local.type", "filesystem")
    spark.conf.set("icefloe.catalog.local.warehouse", str(warehouse))
    icefloe.spark.register(spark)
    icefloe.spark.register(spark)  # idempotent
    return spark


@pytest.fixture(scope="module")
def pushing_source(icefloe_source: Any) -> Any:
    """The data source as a Spark that keeps a pushdown's read with its scan will get it
    (`datasource.pushdown_is_scan_scoped`): Spark's filters pushed into planning, under the
    name `icefloe_pushdown`. Every query here loads a DataFrame of its own: on Spark up to
    4.3, reusing one across filters reads wrong rows (test_spark4_source_reuse.py)."""
    from icefloe.spark._session import scan_parallelism
    from icefloe.spark._source import source_class
    from icefloe.spark.datasource import session_catalogs

    spark = icefloe_source
    base = source_class(session_catalogs(spark), True, scan_parallelism(spark))
    attrs = {"name": classmethod(lambda cls: "icefloe_pushdown"), "__module__": base.__module__}
    pushing = type("IcefloeDataSource", (base,), attrs)
    spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    spark.dataSource.register(pushing)
    return spark


def _read(spark: Any, name: str, _format: str = "icefloe", **options: Any) -> Any:
    reader = spark.read.format(_format)
    for k, v in options.items():
        reader = reader.option(k.replace("_", "-"), str(v))
    return reader.load(f"local.{name}")


# ------------------------------------------------------------------------------------------------
# reads
# ------------------------------------------------------------------------------------------------


def test_read_every_snapshot_matches_java(icefloe_source: Any, oracle: Oracle, all_types_table: str) -> None:
    spark = icefloe_source
    for snap in oracle.snapshot_ids(all_types_table):
        assert_same_rows(
            _read(spark, all_types_table, snapshot_id=snap),
            oracle.df(all_types_table, snap),
            context=str(snap),
        )
    assert_same_rows(_read(spark, all_types_table), oracle.df(all_types_table))
    # The schema is the table's (the read snapshot's for time travel), as Java's.
    first = oracle.snapshot_ids(all_types_table)[0]
    assert (
        _read(spark, all_types_table, snapshot_id=first).columns == oracle.df(all_types_table, first).columns
    )


def test_read_options_branch_tag_time_and_incremental(icefloe_source: Any, oracle: Oracle) -> None:
    spark = icefloe_source
    name = new_table_name("ds_opts")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    for i in range(3):
        oracle.sql(f"INSERT INTO {q} VALUES ({i}, 'v{i}'), ({i + 10}, 'w{i}')")
    snaps = oracle.snapshots(name)
    s0, s1, s2 = (s["snapshot_id"] for s in snaps)
    oracle.sql(f"ALTER TABLE {q} CREATE TAG first AS OF VERSION {s0}")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH dev AS OF VERSION {s1}")
    oracle.sql(f"INSERT INTO {q}.branch_dev VALUES (99, 'dev')")

    assert_same_rows(_read(spark, name, tag="first"), oracle.df(name, s0))
    assert_same_rows(_read(spark, name, branch="dev"), spark.sql(f"SELECT * FROM {q}.branch_dev"))
    ts1 = oracle.java_table(name).snapshot(s1).timestampMillis()
    assert_same_rows(_read(spark, name, as_of_timestamp=ts1), oracle.df(name, s1))
    java_incremental = (
        spark.read.format("iceberg")
        .option("start-snapshot-id", str(s0))
        .option("end-snapshot-id", str(s2))
        .load(q)
    )
    assert_same_rows(_read(spark, name, start_snapshot_id=s0, end_snapshot_id=s2), java_incremental)
    java_from = spark.read.format("iceberg").option("start-snapshot-id", str(s1)).load(q)
    assert_same_rows(_read(spark, name, start_snapshot_id=s1), java_from)
    # A delete, then an append: as Java, the range reads the appends and passes the delete over.
    oracle.sql(f"DELETE FROM {q} WHERE id = 2")
    oracle.sql(f"INSERT INTO {q} VALUES (7, 'v7')")
    java_over_delete = spark.read.format("iceberg").option("start-snapshot-id", str(s1)).load(q)
    assert sorted(r.id for r in java_over_delete.collect()) == [2, 7, 12]
    assert_same_rows(_read(spark, name, start_snapshot_id=s1), java_over_delete)

    with pytest.raises(Exception, match="give only one"):
        _read(spark, name, snapshot_id=s0, tag="first").collect()
    with pytest.raises(Exception, match="12345"):
        _read(spark, name, snapshot_id=12345).collect()
    with pytest.raises(Exception, match="'split-size' must be a positive number of bytes, found 0"):
        _read(spark, name, split_size=0).collect()


def test_selected_fields_option(icefloe_source: Any, oracle: Oracle, all_types_table: str) -> None:
    df = _read(icefloe_source, all_types_table, selected_fields="id, name")
    assert df.columns == ["id", "name"]
    assert_same_rows(df, oracle.df(all_types_table, columns=["id", "name"]))


def test_merge_on_read_deletes_match_java(icefloe_source: Any, oracle: Oracle, mor_table: str) -> None:
    for snap in oracle.snapshot_ids(mor_table):
        assert_same_rows(_read(icefloe_source, mor_table, snapshot_id=snap), oracle.df(mor_table, snap))


FILTERS = [
    "category = 'a'",
    "id > 3",
    "id >= 2 AND id < 5",
    "category IN ('a', 'b')",
    "category IS NULL",
    "category IS NOT NULL",
    "value IS NULL",
    "value > 1.5",
    "dt >= DATE'2024-01-01'",
    "category LIKE 'é%'",
    "category LIKE '%x=1%'",
    "NOT (id = 3)",
    "id = 1 OR category = 'b'",
]


@pytest.mark.parametrize("fmt", ["icefloe", "icefloe_pushdown"])
@pytest.mark.parametrize("where", FILTERS)
def test_pushed_filters_match_java(
    pushing_source: Any, oracle: Oracle, partitioned_table: str, where: str, fmt: str
) -> None:
    """Without pushdown the rows are Spark's filter over the table's rows (a NaN is above
    every number there); pushed, they are Java's, whose pruning drops NaN rows as Iceberg
    orders NaN (`value > 1.5`)."""
    df = _read(pushing_source, partitioned_table, fmt).where(where)
    if fmt == "icefloe":
        assert_same_rows(df, oracle.spark_filtered(partitioned_table, where), context=where)
    else:
        assert_same_rows(df, oracle.df(partitioned_table, where=where), context=where)


@pytest.fixture(scope="module")
def odd_filter_table(oracle: Oracle) -> str:
    """NaN floats, a struct, a list, a map, a fixed and a decimal(38,10) column, by Java."""
    name = new_table_name("oddfilters")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id INT, f FLOAT, d DOUBLE, st STRUCT<x: INT>, ls ARRAY<INT>, "
        "m MAP<STRING, INT>, dc DECIMAL(38, 10)) USING iceberg"
    )
    oracle.sql(
        f"INSERT INTO {q} VALUES (1, float('NaN'), double('NaN'), named_struct('x', 1), array(5), "
        "map('k', 1), 0), (2, 1.5, 2.5, NULL, array(), map(), 0.00000001), "
        "(3, -1.0, NULL, named_struct('x', NULL), NULL, NULL, 5)"
    )
    return name


ODD_FILTERS = [
    "f = float('NaN')",
    "f <=> float('NaN')",
    "d IN (2.5, double('NaN'))",
    "f > float('NaN')",
    "st IS NULL",
    "st IS NOT NULL",
    "m['k'] = 1",
    "array_contains(ls, 5)",
    "dc = 0",
    "dc < 0.0000001",
]


@pytest.mark.parametrize("where", ODD_FILTERS)
def test_filters_the_schema_cannot_bind_go_back_to_spark(
    pushing_source: Any, oracle: Oracle, odd_filter_table: str, where: str
) -> None:
    """Spark pushes IS NULL on a struct, IS NOT NULL on a map or list (before `m['k']` and
    `array_contains`), NaN literals and scaled decimal zeros (`0E-10`): planning failed on
    each ("needs a primitive column", "NaN is not a comparable literal", "not a decimal
    number"). NaN equality is pushed as IS NAN; what the schema cannot bind is handed back
    to Spark; decimals travel as plain digits."""
    df = _read(pushing_source, odd_filter_table, "icefloe_pushdown").where(where)
    assert_same_rows(df, oracle.df(odd_filter_table, where=where), context=where)


def test_filters_prune_files(pushing_source: Any, oracle: Oracle, partitioned_table: str) -> None:
    """A pushed partition filter reaches planning: fewer files, so fewer input partitions
    (split-size 1 byte: one partition per file). Without pushdown (every Spark release up
    to 4.3) each query reads every file, and Spark filters the rows."""
    files = oracle.data_files(partitioned_table)
    b_files = [f for f in files if f["partition"]["category"] == "b"]
    for fmt, expected in (("icefloe", len(files)), ("icefloe_pushdown", len(b_files))):
        everything = _read(pushing_source, partitioned_table, fmt, split_size=1)
        assert everything.rdd.getNumPartitions() == len(files)
        only_b = _read(pushing_source, partitioned_table, fmt, split_size=1).where("category = 'b'")
        assert only_b.rdd.getNumPartitions() == expected, fmt
        assert [r.id for r in only_b.collect()] == [5]
    assert len(b_files) == 1


def test_small_scan_is_split_for_the_session_parallelism(
    icefloe_source: Any, oracle: Oracle, catalog: Any
) -> None:
    """Without `split-size`, a scan smaller than one 128 MB split is sized for the session's
    parallelism (down to 16 MB splits) as icefloe.spark.read and Java's scans size theirs:
    three files of 5 MB of data make two partitions, not one that leaves the other slots idle."""
    import os

    import pyarrow as pa

    name = new_table_name("ds_split")
    oracle.sql(f"CREATE TABLE {oracle.qualified(name)} (id bigint, blob binary) USING iceberg")
    table = catalog.load_table(name)
    for f in range(3):  # incompressible: two files fit in one 16 MB split, three do not
        ids = pa.array(range(f * 5, f * 5 + 5), pa.int64())
        table.append(pa.table({"id": ids, "blob": [os.urandom(1 << 20) for _ in range(5)]}))
    plain = _read(icefloe_source, name)
    assert plain.rdd.getNumPartitions() == 2
    table = catalog.load_table(name)
    # (icefloe.spark.read's Rust reader; its files without deletes take Spark's Parquet source)
    icefloe_source.conf.set(ENABLED_CONF, "false")
    try:
        assert icefloe.spark.read(icefloe_source, table).rdd.getNumPartitions() == 2
    finally:
        icefloe_source.conf.unset(ENABLED_CONF)
    assert _read(icefloe_source, name, split_size=128 << 20).rdd.getNumPartitions() == 1
    assert_same_rows(plain.select("id"), oracle.df(name).select("id"))


def test_missing_catalog_is_a_clear_error(icefloe_source: Any) -> None:
    with pytest.raises(Exception, match="no properties for catalog 'nosuch'"):
        icefloe_source.read.format("icefloe").option("catalog", "nosuch").load("db.t").collect()
    # A three-part name whose first part is no registered catalog names that part.
    with pytest.raises(Exception, match=r"'nocat' in 'nocat.db.t' is not a catalog registered .*local"):
        icefloe_source.read.format("icefloe").load("nocat.db.t").collect()
    with pytest.raises(Exception, match="needs a table name"):
        icefloe_source.read.format("icefloe").load().collect()


# ------------------------------------------------------------------------------------------------
# writes
# ------------------------------------------------------------------------------------------------


def _java_table(oracle: Oracle, partitioned: bool = True) -> str:
    name = new_table_name("ds_write")
    part = "PARTITIONED BY (category)" if partitioned else ""
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id bigint NOT NULL, category string, value double) USING iceberg {part} "
        "TBLPROPERTIES ('format-version'='2')"
    )
    return name


def _rows(spark: Any, rows: list[tuple[Any, ...]]) -> Any:
    return spark.createDataFrame(rows, "id bigint, category string, value double")


def _java_rows(oracle: Oracle, name: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in oracle.df(name).collect()), key=str)


def test_append_and_overwrites_read_by_java(icefloe_source: Any, oracle: Oracle) -> None:
    spark = icefloe_source
    name = _java_table(oracle)
    first = [(1, "a", 1.0), (2, "a", 2.0), (3, "b", 3.0), (4, None, None)]
    _rows(spark, first).repartition(2).write.format("icefloe").mode("append").option(
        "snapshot-property.app", "ds-test"
    ).save(f"local.{name}")
    assert _java_rows(oracle, name) == sorted(first, key=str)
    snap = oracle.snapshots(name)[-1]
    assert snap["operation"] == "append"
    assert snap["summary"]["app"] == "ds-test"

    # Dynamic overwrite: only partition 'a' is replaced.
    _rows(spark, [(10, "a", 10.0)]).write.format("icefloe").mode("overwrite").option(
        "overwrite-mode", "dynamic"
    ).save(f"local.{name}")
    expected = [(10, "a", 10.0), (3, "b", 3.0), (4, None, None)]
    assert _java_rows(oracle, name) == sorted(expected, key=str)

    # Filter overwrite: rows with id >= 4 go, the new rows come.
    _rows(spark, [(20, "c", 20.0)]).write.format("icefloe").mode("overwrite").option(
        "overwrite-filter", "id >= 4"
    ).save(f"local.{name}")
    expected = [(3, "b", 3.0), (20, "c", 20.0)]
    assert _java_rows(oracle, name) == sorted(expected, key=str)

    # Plain overwrite replaces every row.
    _rows(spark, [(30, "d", 30.0)]).write.format("icefloe").mode("overwrite").save(f"local.{name}")
    assert _java_rows(oracle, name) == [(30, "d", 30.0)]
    ops = [s["operation"] for s in oracle.snapshots(name)]
    assert ops == ["append", "overwrite", "overwrite", "overwrite"]


def test_a_failed_write_commits_nothing_and_leaves_no_file(
    icefloe_source: Any, oracle: Oracle, catalog: Any
) -> None:
    from pyspark.sql import functions as F

    spark = icefloe_source
    name = _java_table(oracle, partitioned=False)
    _rows(spark, [(1, "a", 1.0)]).write.format("icefloe").mode("append").save(f"local.{name}")
    table = catalog.load_table(name)
    data_dir = Path(table.location().removeprefix("file:")) / "data"
    before = sorted(p.name for p in data_dir.rglob("*.parquet"))
    snaps = oracle.snapshot_ids(name)

    # Four tasks; the one holding id 3999 fails after the others wrote their files.
    bad = spark.range(0, 4000, 1, 4).select(
        F.when(F.col("id") == 3999, F.raise_error(F.lit("boom")))
        .otherwise(F.col("id"))
        .cast("bigint")
        .alias("id"),
        F.lit("x").alias("category"),
        F.lit(1.0).alias("value"),
    )
    with pytest.raises(Exception, match="boom"):
        bad.write.format("icefloe").mode("append").save(f"local.{name}")
    assert oracle.snapshot_ids(name) == snaps
    assert sorted(p.name for p in data_dir.rglob("*.parquet")) == before


def test_writes_match_names_ignoring_case_and_fill_fixed_from_binary(
    icefloe_source: Any, oracle: Oracle, catalog: Any
) -> None:
    """As Java's writes on Spark: `ID`/`S` fill `id`/`s` (Spark resolves names ignoring case),
    and binary values fill a fixed[3] column (Spark reads fixed as binary, so a table read
    through the source could not be written back)."""
    import pyarrow as pa
    from icefloe.schema import Schema
    from icefloe.types import FixedType, LongType, NestedField, StringType

    spark = icefloe_source
    name = new_table_name("ds_case")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "s", StringType(), required=False),
        NestedField(3, "fx", FixedType(3), required=False),
    )
    table = catalog.create_table(name, schema)
    table.append(
        pa.table({"id": pa.array([1], pa.int64()), "s": ["a"], "fx": pa.array([b"abc"], pa.binary(3))})
    )
    spark.sql("SELECT 2L AS ID, 'b' AS S, X'78797A' AS FX").write.format("icefloe").mode("append").save(
        f"local.{name}"
    )
    _read(spark, name).write.format("icefloe").mode("append").save(f"local.{name}")  # read back, written
    rows = sorted(tuple(r) for r in oracle.df(name).collect())
    assert rows == [(1, "a", b"abc"), (1, "a", b"abc"), (2, "b", b"xyz"), (2, "b", b"xyz")], rows
    with pytest.raises(Exception, match="fx"):  # a value of another length
        spark.sql("SELECT 3L AS id, 'c' AS s, X'78' AS fx").write.format("icefloe").mode("append").save(
            f"local.{name}"
        )
    assert len(oracle.snapshots(name)) == 3


def test_bad_writes_are_clear_errors(icefloe_source: Any, oracle: Oracle) -> None:
    spark = icefloe_source
    name = _java_table(oracle)
    wrong = spark.createDataFrame([("x",)], "id string")
    with pytest.raises(Exception, match="id"):
        wrong.write.format("icefloe").mode("append").save(f"local.{name}")
    with pytest.raises(Exception, match="overwrite-mode"):
        _rows(spark, [(1, "a", 1.0)]).write.format("icefloe").mode("append").option(
            "overwrite-mode", "dynamic"
        ).save(f"local.{name}")
    with pytest.raises(Exception, match="'static' or 'dynamic'"):
        _rows(spark, [(1, "a", 1.0)]).write.format("icefloe").mode("overwrite").option(
            "overwrite-mode", "bogus"
        ).save(f"local.{name}")
    assert oracle.snapshot_ids(name) == []


def test_numeric_columns_widen_into_the_table_as_javas_store_assignment(
    icefloe_source: Any, oracle: Oracle
) -> None:
    """Spark casts nothing for a Python data source, but Java's `writeTo().append()` gets
    Spark's ANSI store assignment: decimal / integer / float columns into `double` columns (a
    decimal to the double nearest its exact value, also beyond 2**53 and for scales past
    what one division keeps exact), byte / short into `int` / `long`. `format("icefloe")`
    appends and upserts (with a key spelled `ID`) hold the same rows as Java's write."""
    spark = icefloe_source
    ddl = "id bigint, d double, w double, e double, b double, f double, i int, l bigint"
    source = spark.sql(
        "SELECT id, CAST(id AS DECIMAL(12, 3)) / 7 AS d, "
        "CAST(id AS DECIMAL(38, 0)) * 12345678901234567890123 + 1 AS w, CAST(id AS INT) AS e, "
        "id * 9007199254740993 AS b, CAST(id AS FLOAT) / 4 AS f, CAST(id AS TINYINT) AS i, "
        "CAST(id AS SMALLINT) AS l FROM range(-20, 100)"
    ).repartition(3)
    java, ours, upserted = (new_table_name(p) for p in ("widen_java", "widen_ds", "widen_upsert"))
    for name in (java, ours, upserted):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} ({ddl}) USING iceberg TBLPROPERTIES ('format-version'='2')"
        )
    source.writeTo(oracle.qualified(java)).append()
    source.write.format("icefloe").mode("append").save(f"local.{ours}")
    source.withColumnRenamed("id", "ID").write.format("icefloe").mode("append").option(
        "upsert-enabled", "true"
    ).option("key-columns", "id").save(f"local.{upserted}")
    assert oracle.df(java).count() == 120
    assert_same_rows(oracle.df(ours), oracle.df(java), context="append")
    assert_same_rows(oracle.df(upserted), oracle.df(java), context="upsert")

    with pytest.raises(Exception, match="incompatible type for column 'd'"):
        spark.sql("SELECT 1L AS id, 'x' AS d").write.format("icefloe").mode("append").save(f"local.{ours}")
    assert oracle.df(ours).count() == 120


def test_writes_with_a_branch_option_commit_to_the_branch_as_java(
    icefloe_source: Any, oracle: Oracle
) -> None:
    """`option("branch", "dev")` on an append and a dynamic overwrite commits to `dev` and
    leaves `main` where it was, as Java's writes with the same option on a twin table (the
    option was ignored: the rows landed on main)."""
    spark = icefloe_source
    java, ours = _java_table(oracle), _java_table(oracle)
    for name in (java, ours):
        _rows(spark, [(1, "a", 1.0), (2, "b", 2.0)]).writeTo(oracle.qualified(name)).append()
        oracle.sql(f"ALTER TABLE {oracle.qualified(name)} CREATE BRANCH dev")
    steps = [
        ({"branch": "dev"}, "append", [(3, "a", 3.0)]),
        ({"branch": "dev", "overwrite-mode": "dynamic"}, "overwrite", [(4, "a", 4.0)]),
    ]
    for options, mode, rows in steps:
        _rows(spark, rows).write.format("iceberg").options(**options).mode(mode).save(oracle.qualified(java))
        _rows(spark, rows).write.format("icefloe").options(**options).mode(mode).save(f"local.{ours}")
    for name in (java, ours):
        assert _java_rows(oracle, name) == [(1, "a", 1.0), (2, "b", 2.0)], name  # main untouched
    branch = {
        n: sorted(tuple(r) for r in oracle.spark.table(f"{oracle.qualified(n)}.branch_dev").collect())
        for n in (java, ours)
    }
    assert branch[ours] == branch[java] == [(2, "b", 2.0), (4, "a", 4.0)], branch


def test_a_uuid_filter_is_decided_by_spark_as_a_string(pushing_source: Any, catalog: Any) -> None:
    """Spark shows a uuid as its (lower-case) string and compares it as one, so `u = 'F79C...'`
    matches nothing; pushed as an Iceberg uuid predicate it matched the row stored as
    'f79c...'. The filter still prunes, but Spark decides the rows."""
    import uuid as uuidlib

    import pyarrow as pa
    from icefloe.schema import Schema
    from icefloe.types import LongType, NestedField, UUIDType

    spark = pushing_source
    name = new_table_name("ds_uuid")
    table = catalog.create_table(
        name,
        Schema(
            NestedField(1, "id", LongType(), required=False), NestedField(2, "u", UUIDType(), required=False)
        ),
    )
    u = uuidlib.UUID("f79c3e09-677c-4b3c-8a8e-4a1b2c3d4e5f")
    table.append(pa.table({"id": pa.array([1], pa.int64()), "u": pa.array([u.bytes], pa.binary(16))}))
    for fmt in ("icefloe", "icefloe_pushdown"):
        for cond in (f"u = '{str(u).upper()}'", f"u IN ('{str(u).upper()}')", f"u <=> '{str(u).upper()}'"):
            assert spark.read.format(fmt).load(f"local.{name}").where(cond).count() == 0, cond
        assert spark.read.format(fmt).load(f"local.{name}").where(f"u = '{u}'").count() == 1


def test_nested_field_names_match_ignoring_case_as_javas_writes(
    icefloe_source: Any, oracle: Oracle, catalog: Any
) -> None:
    """`st.X`, `l.element.A` and `m.value.B` fill `x`, `a` and `b`: Java's `writeTo().append()`
    takes them (Spark resolves nested names ignoring case too); both icefloe paths refused
    them as unknown columns."""
    spark = icefloe_source
    ddl = "id bigint, st struct<x: int, y: string>, l array<struct<a: int>>, m map<string, struct<b: int>>"
    names = [new_table_name(p) for p in ("nested_case_java", "nested_case_ds", "nested_case_fn")]
    for name in names:
        oracle.sql(f"CREATE TABLE {oracle.qualified(name)} ({ddl}) USING iceberg")
    src = spark.sql(
        "SELECT 1L AS id, named_struct('X', 1, 'Y', 'y') AS st, array(named_struct('A', 2)) AS l, "
        "map('k', named_struct('B', 3)) AS m"
    )
    src.writeTo(oracle.qualified(names[0])).append()
    src.write.format("icefloe").mode("append").save(f"local.{names[1]}")
    icefloe.spark.append(src, catalog.load_table(names[2]))
    expected = [tuple(r) for r in oracle.df(names[0]).collect()]
    assert expected and expected[0][1] == (1, "y")
    for name in names[1:]:
        assert [tuple(r) for r in oracle.df(name).collect()] == expected, name
