"""Write distribution of `icefloe.spark.append` / `overwrite` (`write.distribution-mode`, as
Iceberg Java's Spark writes): `hash` shuffles rows by their partition tuple so each partition
is written by one task (one file), `range` range-partitions by partition and sort order. The
partition tuple is computed with Spark functions that must group rows exactly as Iceberg's
transforms do (the bucket hash included): with four input tasks and two writing tasks, a
partition written as more than one file means a wrong grouping. Java reads every table."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import icefloe.spark
import pyarrow as pa
import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]

DDL = (
    "id bigint NOT NULL, cat string, name string, ts timestamp, ts_ntz timestamp_ntz, d date, n int, "
    "bin binary"
)


@pytest.fixture(autouse=True)
def two_writing_tasks(spark: Any) -> Any:
    """Keep the shuffle's two partitions (the session's shuffle partitions): adaptive
    execution would coalesce these small writes into one task, which no grouping can fail."""
    key = "spark.sql.adaptive.coalescePartitions.enabled"
    spark.conf.set(key, "false")
    yield
    spark.conf.unset(key)


def _rows(seed: int, count: int) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    names = ["", "a", "añb", "日本語", "😀x", "x y=1/2%", "abcdef"]
    out = []
    for i in range(count):
        if i % 13 == 0:  # before 1970: floor semantics
            ts = dt.datetime(1969, 12, 31, 23) + dt.timedelta(minutes=rng.randint(-3000, 59))
        else:
            ts = dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rng.randint(0, 40 * 86400))
        ids = {5: -(2**63), 6: 2**63 - 1}  # the extremes (truncate near the type's minimum)
        out.append(
            (
                ids.get(i, rng.randint(-(10**12), 10**12)),
                None if i % 17 == 0 else rng.choice(["x", "y", "z"]),
                None if i % 19 == 0 else rng.choice(names),
                None if i % 23 == 0 else ts.replace(tzinfo=dt.timezone.utc),
                ts,
                ts.date(),
                rng.randint(-500, 500),
                None if i % 29 == 0 else bytes(rng.randint(0, 255) for _ in range(rng.randint(0, 4))),
            )
        )
    return out


SPECS = [
    "cat",
    "bucket(8, id)",
    "bucket(5, n)",
    "bucket(3, d)",
    "bucket(6, ts)",
    "truncate(10, n)",
    "truncate(10, id)",
    "truncate(2, name)",
    "truncate(1, bin)",
    "years(ts)",
    "months(ts)",
    "days(ts)",
    "hours(ts)",
    "months(ts_ntz)",
    "days(ts_ntz)",
    "hours(ts_ntz)",
    "years(d)",
    "months(d)",
    "days(d)",
    "days(ts), bucket(16, id), cat, truncate(1, name)",
]


def _table(oracle: Oracle, catalog: Any, name: str, partitioned_by: str, props: str = "") -> Any:
    tblprops = f" TBLPROPERTIES ({props})" if props else ""
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} ({DDL}) USING iceberg PARTITIONED BY ({partitioned_by}){tblprops}")
    return catalog.load_table(name)


def _files_per_partition(oracle: Oracle, name: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for f in oracle.data_files(name):
        key = repr(f["partition"])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _input(spark: Any) -> Any:
    return spark.createDataFrame(_rows(3, 2000), DDL).repartition(4)


@pytest.mark.parametrize("partitioned_by", SPECS)
def test_hash_writes_each_partition_from_one_task(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, partitioned_by: str
) -> None:
    table = _table(oracle, catalog, table_name, partitioned_by)
    df = _input(spark)
    icefloe.spark.append(df, table, distribution_mode="hash")
    assert_same_rows(oracle.df(table_name), df, context=partitioned_by)
    per_partition = _files_per_partition(oracle, table_name)
    assert set(per_partition.values()) == {1}, (partitioned_by, per_partition)


def test_hash_is_the_default_of_a_partitioned_table_and_none_splits_partitions(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """Java's default for a partitioned table, and the control: the same write without a
    distribution splits partitions over the tasks."""
    spec = "days(ts), bucket(16, id), cat, truncate(1, name)"
    table = _table(oracle, catalog, table_name, spec)
    icefloe.spark.append(_input(spark), table)
    assert set(_files_per_partition(oracle, table_name).values()) == {1}
    other = f"{table_name}_none"
    icefloe.spark.append(_input(spark), _table(oracle, catalog, other, spec), distribution_mode="none")
    assert max(_files_per_partition(oracle, other).values()) > 1


def test_mode_from_option_session_and_table_property(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    spec = "bucket(8, id), cat"
    table = _table(oracle, catalog, table_name, spec, "'write.distribution-mode'='hash'")
    icefloe.spark.append(_input(spark), table)  # the table property
    assert set(_files_per_partition(oracle, table_name).values()) == {1}

    # The write's own mode wins over the table's, the session's over the table's.
    icefloe.spark.append(_input(spark), catalog.load_table(table_name), distribution_mode="none")
    assert max(_files_per_partition(oracle, table_name).values()) > 2
    other = f"{table_name}_2"
    _table(oracle, catalog, other, spec)
    spark.conf.set("spark.sql.iceberg.distribution-mode", "hash")
    try:
        icefloe.spark.overwrite(_input(spark), catalog.load_table(other))
    finally:
        spark.conf.unset("spark.sql.iceberg.distribution-mode")
    assert set(_files_per_partition(oracle, other).values()) == {1}

    snapshots = len(oracle.snapshots(table_name))
    with pytest.raises(ValidationError, match=r"distribution_mode must be one of .* found 'sorted'"):
        icefloe.spark.append(_input(spark), catalog.load_table(table_name), distribution_mode="sorted")
    assert len(oracle.snapshots(table_name)) == snapshots


@pytest.mark.parametrize("order", ["n", "truncate(10, n) DESC"])
def test_range_splits_partitions_by_the_sort_order(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, order: str
) -> None:
    """Java's `WRITE ORDERED BY` sets the sort order and `write.distribution-mode=range`:
    the files of a partition then hold disjoint ranges of the sort key (for a transform,
    of its values: `truncate(10, n)` classes are never split between files)."""
    table = _table(oracle, catalog, table_name, "cat")
    oracle.sql(f"ALTER TABLE {oracle.qualified(table_name)} WRITE ORDERED BY {order}")
    table = catalog.load_table(table_name)
    assert table.properties.get("write.distribution-mode") == "range"
    df = _input(spark)
    icefloe.spark.append(df, table)
    assert_same_rows(oracle.df(table_name), df)
    ranges: dict[str, list[tuple[int, int]]] = {}
    for f in oracle.data_files(table_name):
        m = f["readable_metrics"]["n"]
        ranges.setdefault(repr(f["partition"]), []).append((m["lower_bound"], m["upper_bound"]))
    key = (lambda v: v // 10) if order.startswith("truncate") else (lambda v: v)
    for spans in ranges.values():
        spans.sort()
        assert all(key(a[1]) < key(b[0]) for a, b in zip(spans, spans[1:])), spans
    assert max(len(s) for s in ranges.values()) > 1  # two writing tasks share a partition


@pytest.mark.parametrize(
    ("operation", "mode"),
    [("merge", "merge-on-read"), ("merge", "copy-on-write"), ("upsert", "merge-on-read")],
)
def test_row_level_writes_distribute_their_new_rows(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, operation: str, mode: str
) -> None:
    """A MERGE's or an upsert's new rows are hash-distributed by partition as Java's
    (`write.merge.distribution-mode`, default hash): one file per partition; the control
    with the property `none` splits partitions over the input's tasks."""
    spec = "bucket(8, id), cat"
    counts = {}
    for dist in ("", "none"):
        name = f"{table_name}_{dist or 'default'}"
        props = f"'format-version'='2', 'write.merge.mode'='{mode}'"
        if dist:
            props += f", 'write.merge.distribution-mode'='{dist}'"
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id bigint NOT NULL, cat string, n int) USING iceberg "
            f"PARTITIONED BY ({spec}) TBLPROPERTIES ({props})"
        )
        table = catalog.load_table(name)
        src = _input(spark).select("id", "cat", "n")
        if operation == "merge":
            icefloe.spark.merge(src, table, "target.id = source.id").when_not_matched_insert_all().execute()
        else:
            icefloe.spark.upsert(src, table, join_cols=["id", "cat"])
        assert_same_rows(oracle.df(name), src, context=f"{operation} {mode} {dist}")
        counts[dist] = _files_per_partition(oracle, name)
    assert set(counts[""].values()) == {1}, counts[""]
    assert max(counts["none"].values()) > 1, counts["none"]


def test_row_level_mode_resolution(spark: Any, oracle: Oracle, catalog: Any, table_name: str) -> None:
    from icefloe.spark._distribution import row_level_mode

    part = _table(oracle, catalog, table_name, "cat", "'write.update.distribution-mode'='none'")
    assert row_level_mode(spark, part, "update") == "none"
    assert row_level_mode(spark, part, "merge") == "hash"  # Java's default
    spark.conf.set("spark.sql.iceberg.distribution-mode", "range")
    try:
        assert row_level_mode(spark, part, "update") == "range"  # the session's wins
    finally:
        spark.conf.unset("spark.sql.iceberg.distribution-mode")
    q = oracle.qualified(f"{table_name}_u")
    oracle.sql(f"CREATE TABLE {q} (id bigint, n int) USING iceberg")
    unpart = catalog.load_table(f"{table_name}_u")
    assert row_level_mode(spark, unpart, "update") == "none"  # hash of an unpartitioned table
    # A copy-on-write merge (the default) of an unpartitioned table without the property:
    # the table's write mode, none, then range once the table is sorted.
    assert row_level_mode(spark, unpart, "merge") == "none"
    oracle.sql(f"ALTER TABLE {q} WRITE ORDERED BY n")
    assert row_level_mode(spark, catalog.load_table(f"{table_name}_u"), "merge") == "range"
    bad = _table(oracle, catalog, f"{table_name}_b", "cat", "'write.merge.distribution-mode'='sorted'")
    with pytest.raises(ValidationError, match=r"write.merge.distribution-mode must be one of .* 'sorted'"):
        row_level_mode(spark, bad, "merge")


def _files_sorted_by_n(oracle: Oracle, name: str) -> list[bool]:
    """Per data file: are its rows in the sort order `n ASC NULLS FIRST`?"""
    import pyarrow.parquet as pq

    out = []
    for f in oracle.data_files(name):
        n = pq.read_table(f["file_path"].removeprefix("file:"), columns=["n"]).column("n").to_pylist()
        keys = [(v is not None, v) for v in n]
        out.append(keys == sorted(keys))
    return out


def test_writes_to_a_sorted_table_sort_each_file_as_java(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """Java's Spark writes order a sorted table's rows within each task
    (`SparkWriteUtil.writeOrdering`), so every file it writes is sorted: icefloe's writes
    (Spark append with each distribution, a MERGE's new rows, in process) sort by default
    too; the `sort=False` write option keeps the input order (the control)."""
    from pyspark.sql import functions as F

    df = spark.createDataFrame(_rows(5, 3000), DDL).repartition(3)
    java, ours, control = (f"{table_name}_{s}" for s in ("java", "ours", "control"))
    for name in (java, ours, control):
        _table(oracle, catalog, name, "cat")
        oracle.sql(f"ALTER TABLE {oracle.qualified(name)} WRITE ORDERED BY n")
    df.writeTo(oracle.qualified(java)).append()
    for mode in ("range", "hash", "none"):
        icefloe.spark.append(df, catalog.load_table(ours), distribution_mode=mode)
    src = spark.createDataFrame(_rows(6, 500), DDL).withColumn("id", F.col("id") % 10**9 + 10**13)
    icefloe.spark.merge(
        src, catalog.load_table(ours), "target.id = source.id"
    ).when_not_matched_insert_all().execute()
    table = catalog.load_table(ours)
    names = [f.name for f in table.schema().as_arrow()]
    table.append(
        pa.Table.from_pylist([dict(zip(names, r)) for r in _rows(7, 400)], table.schema().as_arrow())
    )
    icefloe.spark.append(
        df, catalog.load_table(control), distribution_mode="none", write_options={"sort": False}
    )

    assert all(_files_sorted_by_n(oracle, java))
    mine = _files_sorted_by_n(oracle, ours)
    assert len(mine) > 6 and all(mine), mine
    assert not all(_files_sorted_by_n(oracle, control))
    assert oracle.df(ours).count() == 3 * 3000 + 500 + 400
