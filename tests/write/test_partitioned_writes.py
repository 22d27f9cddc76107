"""Partitioned tables written by icefloe (transforms on Arrow arrays, fanout writer) and
read by Apache Iceberg Java.

Java creates each table (`PARTITIONED BY ...`), icefloe appends through
`icefloe.spark.append`, then Java must return the same rows; its `partitions` metadata
table (read from icefloe's manifests) must hold exactly the partition tuples and counts
Java computes itself from the data with its transform functions (`system.bucket`, ...);
its planner with a partition filter must plan exactly the files icefloe wrote into the
matching partition; Java appends on top and icefloe reads everything back; and after a
partition evolution done by Java, icefloe writes with the new spec.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random
from typing import Any

import icefloe
import icefloe.spark
import pyarrow as pa
import pytest
from pyspark.sql import functions as F
from support.oracle import Oracle, assert_same_rows, java_plan

pytestmark = [pytest.mark.spark, pytest.mark.interop]

DDL = (
    "id bigint NOT NULL, cat string, name string, ts timestamp, ts_ntz timestamp_ntz, d date, n int, "
    "dec decimal(9,2), bin binary"
)
BASE = dt.datetime(2024, 1, 1)


def _rows(seed: int, count: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    names = ["", "a", "añb", "日本語", "😀x", "x y=1/2%", "abcdef"]
    out = []
    for i in range(count):
        # Mostly the first days of 2024, some before 1970 (floor semantics).
        if i % 13 == 0:
            ts = dt.datetime(1969, 12, 31, 23) + dt.timedelta(minutes=rng.randint(-3000, 59))
        else:
            ts = BASE + dt.timedelta(seconds=rng.randint(0, 4 * 86400))
        out.append(
            (
                rng.randint(-1000, 1000),
                None if i % 17 == 0 else rng.choice(["x", "y", "z"]),
                None if i % 19 == 0 else rng.choice(names),
                None if i % 23 == 0 else ts,
                ts,
                ts.date(),
                rng.randint(-50, 50),
                decimal.Decimal(rng.randint(-99999, 99999)).scaleb(-2),
                None if i % 29 == 0 else bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 4))),
            )
        )
    return out


# (PARTITIONED BY clause, Java's transform expressions over the data for each field)
SPECS = [
    ("cat", ["cat"]),
    ("bucket(8, id)", ["oracle.system.bucket(8, id)"]),
    ("bucket(4, name)", ["oracle.system.bucket(4, name)"]),
    ("bucket(5, dec)", ["oracle.system.bucket(5, dec)"]),
    ("bucket(3, bin)", ["oracle.system.bucket(3, bin)"]),
    ("truncate(2, name)", ["oracle.system.truncate(2, name)"]),
    ("truncate(10, n)", ["oracle.system.truncate(10, n)"]),
    ("truncate(50, dec)", ["oracle.system.truncate(50, dec)"]),
    ("years(ts)", ["oracle.system.years(ts)"]),
    ("months(ts_ntz)", ["oracle.system.months(ts_ntz)"]),
    ("days(d)", ["oracle.system.days(d)"]),
    ("hours(ts)", ["oracle.system.hours(ts)"]),
    (
        "days(ts), bucket(16, id), cat, truncate(1, name)",
        ["oracle.system.days(ts)", "oracle.system.bucket(16, id)", "cat", "oracle.system.truncate(1, name)"],
    ),
]


def _java_partitions(oracle: Oracle, view: str, exprs: list[str]) -> list[tuple[Any, ...]]:
    """(partition tuple..., record count) computed by Java from the data itself."""
    cols = ", ".join(f"{e} AS p{i}" for i, e in enumerate(exprs))
    groups = ", ".join(f"p{i}" for i in range(len(exprs)))
    rows = oracle.sql(f"SELECT {groups}, count(*) FROM (SELECT {cols} FROM {view}) GROUP BY {groups}")
    return sorted((tuple(r) for r in rows), key=repr)


def _partitions_table(oracle: Oracle, table: str, spec_id: int | None = None) -> list[tuple[Any, ...]]:
    where = "" if spec_id is None else f" WHERE spec_id = {spec_id}"
    rows = oracle.sql(f"SELECT partition, record_count FROM {oracle.qualified(table)}.partitions{where}")
    return sorted(((*tuple(r["partition"]), r["record_count"]) for r in rows), key=repr)


def _new_table(oracle: Oracle, catalog: Any, table_name: str, partitioned_by: str) -> Any:
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(table_name)} ({DDL}) USING iceberg PARTITIONED BY ({partitioned_by})"
    )
    return catalog.load_table(table_name)


@pytest.mark.parametrize(("partitioned_by", "exprs"), SPECS, ids=[s[0] for s in SPECS])
def test_java_reads_icefloe_partitioned_writes(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, partitioned_by: str, exprs: list[str]
) -> None:
    table = _new_table(oracle, catalog, table_name, partitioned_by)
    df = spark.createDataFrame(_rows(1, 1500), DDL).repartition(2)
    view = f"input_{table_name.replace('.', '_')}"
    df.createOrReplaceTempView(view)
    icefloe.spark.append(df, table)

    assert_same_rows(oracle.df(table_name), df, context=partitioned_by)
    expected = _java_partitions(oracle, view, exprs)
    assert _partitions_table(oracle, table_name) == expected, partitioned_by
    # Rows of one partition went to one file per writing task (fanout, no roll).
    files = oracle.data_files(table_name)
    assert len(files) <= 2 * len(expected)
    assert sum(f["record_count"] for f in files) == 1500

    # Java appends on top; icefloe reads both writers' files.
    oracle.sql(f"INSERT INTO {oracle.qualified(table_name)} SELECT * FROM {view} WHERE id > 900")
    table = catalog.load_table(table_name)
    assert_same_rows(table.scan().to_arrow(), oracle.df(table_name), context=partitioned_by)

    # Java overwrites on top: a copy-on-write DELETE rewrites our files, and a dynamic
    # partition overwrite replaces partitions we wrote; icefloe reads the result. Only on
    # low-cardinality specs: Java's rewrite of hundreds of partitions exhausts the 1 GB
    # driver heap of the local test session (see oracle.md).
    if partitioned_by not in ("cat", "bucket(8, id)", "bucket(4, name)"):
        return
    oracle.sql(f"DELETE FROM {oracle.qualified(table_name)} WHERE id % 7 = 0")
    spark.table(view).where("id < 100").writeTo(oracle.qualified(table_name)).overwritePartitions()
    table = catalog.load_table(table_name)
    ops = [s.summary.operation.value for s in table.snapshots()]
    assert len(ops) == 4 and set(ops[-2:]) <= {"overwrite", "delete"}, ops
    assert_same_rows(table.scan().to_arrow(), oracle.df(table_name), context=partitioned_by)


def test_java_prunes_icefloe_files_by_partition(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    table = _new_table(oracle, catalog, table_name, "days(ts), bucket(4, id)")
    df = spark.createDataFrame(_rows(2, 2000), DDL).repartition(2)
    icefloe.spark.append(df, table)
    table = catalog.load_table(table_name)
    ours = sorted(t.file_path for t in table.scan().plan_files())
    assert ours == oracle.plan_file_paths(table_name)

    jvm = oracle.jvm
    exprs = jvm.org.apache.iceberg.expressions.Expressions
    day = dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc)
    lo = int(day.timestamp() * 1_000_000)
    flt = getattr(exprs, "and")(exprs.greaterThanOrEqual("ts", lo), exprs.lessThan("ts", lo + 86_400_000_000))
    scan = oracle.java_table(table_name).newScan().filter(flt)
    java = sorted(path for path, _deletes in java_plan(scan))
    expected = [p for p in ours if "/ts_day=2024-01-02/" in p]
    assert expected and java == expected
    # icefloe's planner prunes our files on the same partitions exactly as Java does.
    day_filter = "ts >= '2024-01-02T00:00:00+00:00' AND ts < '2024-01-03T00:00:00+00:00'"
    assert sorted(t.file_path for t in table.scan(row_filter=day_filter).plan_files()) == java

    # A bucket filter: Java plans only files of bucket(4, 7) (bounds may prune further).
    bucket = icefloe._native.apply_transform("bucket[4]", "long", pa.array([7]))[0].as_py()
    java = sorted(
        path
        for path, _deletes in java_plan(oracle.java_table(table_name).newScan().filter(exprs.equal("id", 7)))
    )
    assert java and all(f"/id_bucket={bucket}/" in p for p in java)
    assert set(java) <= set(ours)
    assert sorted(t.file_path for t in table.scan(row_filter="id = 7").plan_files()) == java


def test_icefloe_writes_after_java_partition_evolution(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    table = _new_table(oracle, catalog, table_name, "bucket(4, id)")
    first = spark.createDataFrame(_rows(3, 800), DDL)
    icefloe.spark.append(first, table)
    oracle.sql(f"ALTER TABLE {oracle.qualified(table_name)} ADD PARTITION FIELD truncate(2, name)")
    oracle.sql(f"ALTER TABLE {oracle.qualified(table_name)} ADD PARTITION FIELD months(ts)")
    table = catalog.load_table(table_name)
    second = spark.createDataFrame(_rows(4, 900), DDL)
    view = f"evolved_{table_name.replace('.', '_')}"
    second.createOrReplaceTempView(view)
    icefloe.spark.append(second, table)

    assert_same_rows(oracle.df(table_name), first.union(second))
    files = oracle.data_files(table_name)
    spec_id = oracle.java_table(table_name).spec().specId()
    assert spec_id > 0 and {f["spec_id"] for f in files} == {0, spec_id}
    new_parts = sorted(
        (
            tuple(f["partition"].values())  # spec order: id_bucket, name_trunc_2, ts_month
            for f in files
            if f["spec_id"] == spec_id
        ),
        key=repr,
    )
    java = _java_partitions(
        oracle,
        view,
        ["oracle.system.bucket(4, id)", "oracle.system.truncate(2, name)", "oracle.system.months(ts)"],
    )
    # One file per partition per task (the DataFrame has 1-2 tasks): same distinct tuples.
    assert sorted(set(new_parts), key=repr) == [j[:3] for j in java]
    # Java appends with the evolved spec too; icefloe reads all three writes.
    oracle.sql(f"INSERT INTO {oracle.qualified(table_name)} SELECT * FROM {view} WHERE n > 40")
    table = catalog.load_table(table_name)
    assert_same_rows(table.scan().to_arrow(), oracle.df(table_name))


def _twin_files(
    spark: Any,
    oracle: Oracle,
    catalog: Any,
    table_name: str,
    ddl: str,
    props: str,
    rows: list[Any],
    order: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`rows` appended in one file by icefloe to `table_name` and by Java to a twin, both
    created by Java with `props` (and `WRITE ORDERED BY order`): the two data files' rows of
    Java's `files` table."""
    df = spark.createDataFrame(rows, ddl).coalesce(1)
    java_name = table_name + "_java"
    for name in (table_name, java_name):
        oracle.sql(f"CREATE TABLE {oracle.qualified(name)} ({ddl}) USING iceberg TBLPROPERTIES ({props})")
        if order is not None:
            oracle.sql(f"ALTER TABLE {oracle.qualified(name)} WRITE ORDERED BY {order}")
    icefloe.spark.append(df, catalog.load_table(table_name))
    df.writeTo(oracle.qualified(java_name)).append()
    ours, java = oracle.data_files(table_name), oracle.data_files(java_name)
    assert len(ours) == len(java) == 1
    return ours[0], java[0]


def test_metrics_modes_match_java(spark: Any, oracle: Oracle, catalog: Any, table_name: str) -> None:
    """Same data, same `write.metadata.metrics.*` properties: icefloe's file metrics equal
    the ones Iceberg Java writes (counts only / truncated bounds / full bounds / none, NaN counts)."""
    props = (
        "'write.metadata.metrics.default'='counts', 'write.metadata.metrics.column.name'='truncate(2)', "
        "'write.metadata.metrics.column.id'='full', 'write.metadata.metrics.column.cat'='none', "
        "'write.metadata.metrics.column.v'='full'"
    )
    ddl = f"{DDL}, v double"
    rows = [
        (*r, float("nan") if i % 7 == 0 else (None if i % 11 == 0 else i / 3))
        for i, r in enumerate(_rows(5, 500))
    ]
    ours, java = _twin_files(spark, oracle, catalog, table_name, ddl, props, rows)
    for key in (
        "record_count",
        "value_counts",
        "null_value_counts",
        "nan_value_counts",
        "lower_bounds",
        "upper_bounds",
    ):
        assert ours[key] == java[key], key
    # The modes did something: no bounds for counts/none columns, name truncated to 2 chars.
    assert set(ours["lower_bounds"]) == {1, 3, 10}


def test_inferred_metrics_limit_matches_java(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """More leaf columns than `write.metadata.metrics.max-inferred-column-defaults` and no
    default mode: the same columns keep metrics as Java's (its `MetricsConfig.limitFieldIds`:
    the top level's leaves before a struct's fields), the others none."""
    ddl = (
        "top1 int, s struct<a: int, b: string>, top2 string, l array<struct<x: int, y: int>>, "
        "m map<string, int>, top3 bigint"
    )
    props = "'write.metadata.metrics.max-inferred-column-defaults'='4'"
    rows = [(i, (i * 2, f"b{i}"), f"t{i}", [(i, -i)], {f"k{i}": i}, i * 10) for i in range(50)]
    ours, java = _twin_files(spark, oracle, catalog, table_name, ddl, props, rows)
    for key in ("value_counts", "null_value_counts", "lower_bounds", "upper_bounds"):
        assert ours[key] == java[key], key
    # top1, top2, top3 and s.a (ids 1, 3, 6, 7): not s.b, the fifth leaf in schema order
    assert set(ours["lower_bounds"]) == {1, 3, 6, 7}


def test_column_metrics_properties_name_leaves_as_java(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """`write.metadata.metrics.column.<name>` applies to the leaf column of that full name
    (`s.a`), as Java's `MetricsConfig.columnMode` looks up each leaf's name: a struct's or a
    list's own name (`s`, `l`) changes none of its leaves."""
    ddl = "id int, s struct<a: int, b: string>, l array<int>, t struct<c: int>"
    props = (
        "'write.metadata.metrics.column.s'='none', 'write.metadata.metrics.column.l'='full', "
        "'write.metadata.metrics.column.t.c'='counts', 'write.metadata.metrics.column.id'='counts'"
    )
    rows = [(i, (i, f"b{i}"), [i, -i], (i * 3,)) for i in range(40)]
    ours, java = _twin_files(spark, oracle, catalog, table_name, ddl, props, rows)
    for key in ("value_counts", "null_value_counts", "lower_bounds", "upper_bounds"):
        assert ours[key] == java[key], key


def test_sorted_columns_keep_bounds_as_java(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """A `counts` default and a sort order: Java's `MetricsConfig.forTable` gives the columns
    the table sorts by through an order-preserving transform (identity, days, truncate; not
    bucket) `truncate(16)`, and a column's own property still wins. icefloe's file keeps the
    same metrics (it kept counts only for all of them before)."""
    ddl = "id bigint, ts timestamp, name string, code string, n int"
    props = (
        "'write.metadata.metrics.default'='counts', 'write.distribution-mode'='none', "
        "'write.metadata.metrics.column.id'='counts'"
    )
    base = dt.datetime(2024, 1, 1)
    rows = [(i, base + dt.timedelta(hours=i), f"n{i}", f"code-{i % 7}", i) for i in range(200)]
    order = "id, days(ts), bucket(4, name), truncate(2, code)"
    ours, java = _twin_files(spark, oracle, catalog, table_name, ddl, props, rows, order)
    for key in ("value_counts", "null_value_counts", "lower_bounds", "upper_bounds"):
        assert ours[key] == java[key], key
    # ts and code (ids 2, 4): id's own `counts` wins over its sort, name's bucket sort adds nothing
    assert set(ours["lower_bounds"]) == {2, 4}
    modes = catalog.load_table(table_name).metadata.metrics_modes()
    assert modes == {1: "counts", 2: "truncate(16)", 3: "counts", 4: "truncate(16)", 5: "counts"}


def test_write_options_clustered_and_sorted(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    from icefloe.exceptions import ValidationError

    table = _new_table(oracle, catalog, table_name, "bucket(4, id)")
    oracle.sql(f"ALTER TABLE {oracle.qualified(table_name)} WRITE ORDERED BY n")
    table = catalog.load_table(table_name)
    df = spark.createDataFrame(_rows(5, 600), DDL)
    with pytest.raises(ValidationError, match="unknown write option 'fast'"):
        icefloe.spark.append(df, table, write_options={"fast": True})
    assert table.current_snapshot() is None

    # Clustered input (sorted by the partition value within each Spark partition), files
    # sorted by the table's sort order: one file per partition per task, and Java reads it.
    clustered = (
        df.withColumn("_b", F.expr("oracle.system.bucket(4, id)")).sortWithinPartitions("_b").drop("_b")
    )
    icefloe.spark.append(clustered, table, write_options={"mode": "clustered", "sort": True})
    table = catalog.load_table(table_name)
    assert_same_rows(table.scan().to_arrow(), oracle.df(table_name))
    for f in oracle.files(table_name):
        assert f["sort_order_id"] == table.sort_order().order_id != 0
    with pytest.raises(ValidationError, match="clustered"):  # unclustered input, no distribution
        icefloe.spark.append(
            df.repartition(1), table, write_options={"mode": "clustered"}, distribution_mode="none"
        )
    # With the table's distribution (range, from WRITE ORDERED BY) the rows reach the
    # clustered writer clustered, whatever the input's order.
    icefloe.spark.append(df.repartition(3), table, write_options={"mode": "clustered"})
    assert_same_rows(catalog.load_table(table_name).scan().to_arrow(), oracle.df(table_name))


def test_numeric_columns_widen_into_the_table_as_javas_store_assignment(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Spark decimal / integer / float columns into `double` columns, and byte / short
    columns into `int` / `long` ones: Java's `writeTo().append()` casts them (ANSI store
    assignment), and so does icefloe.spark.append; the two tables hold the same rows. A
    string into a number stays an error that writes nothing, in both."""
    from icefloe.exceptions import ValidationError
    from support.session import new_table_name

    ddl = "d double, e double, f double, i int, l bigint"
    source = spark.sql(
        "SELECT CAST(id AS DECIMAL(12, 3)) / 7 AS d, CAST(id AS INT) AS e, CAST(id AS FLOAT) / 4 AS f, "
        "CAST(id AS TINYINT) AS i, CAST(id AS SMALLINT) AS l FROM range(-20, 100)"
    )
    java, ours = new_table_name("widen_java"), new_table_name("widen_ours")
    for name in (java, ours):
        oracle.sql(f"CREATE TABLE {oracle.qualified(name)} ({ddl}) USING iceberg")
    source.writeTo(oracle.qualified(java)).append()
    icefloe.spark.append(source, catalog.load_table(ours))
    assert_same_rows(oracle.df(ours), oracle.df(java), context="widened")
    assert oracle.df(ours).count() == 120

    with pytest.raises(ValidationError, match="incompatible type for column 'd'"):
        icefloe.spark.append(spark.sql("SELECT 'x' AS d"), catalog.load_table(ours))
    assert oracle.df(ours).count() == 120
