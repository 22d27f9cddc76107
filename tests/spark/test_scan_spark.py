"""Reads with split and combined tasks equal Iceberg Java's rows.

Iceberg Java writes a table whose Parquet files hold several row groups each
(`write.parquet.row-group-size-bytes` tiny) and gets position deletes (merge-on-read DELETE);
with a small `read.split.target-size` icefloe splits every file at its split offsets across
several tasks and bin-packs the splits into many combined tasks. `icefloe.spark.read` (one
Spark partition per combined task), `table.scan().to_arrow()` and reading every split task
one by one must each return exactly Java's rows: no row lost, none duplicated.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pytest
from icefloe.spark._parquet_source import ENABLED_CONF
from support.oracle import assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

ROWS = 4000


@pytest.fixture(scope="module")
def split_table(spark: Any, oracle: Any) -> str:
    name = new_table_name("scansplit")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, grp string, payload string, amount double) USING iceberg "
        "PARTITIONED BY (grp) TBLPROPERTIES ('format-version'='2', "
        "'write.parquet.row-group-size-bytes'='2000', 'write.parquet.page-size-bytes'='512', "
        "'write.delete.mode'='merge-on-read', 'read.split.target-size'='4096', "
        "'read.split.open-file-cost'='1024')"
    )
    for part in range(2):
        lo = part * ROWS // 2
        oracle.sql(
            f"INSERT INTO {q} SELECT /*+ COALESCE(1) */ id, IF(id % 2 = 0, 'even', 'odd') AS grp, "
            "concat('row-', cast(id AS string), repeat('x', cast(id % 23 AS int))) AS payload, "
            f"id * 0.5 AS amount FROM range({lo}, {lo + ROWS // 2})"
        )
    # position deletes: positions are file positions, so they must survive the splitting
    oracle.sql(f"DELETE FROM {q} WHERE id % 7 = 3")
    return name


def _split_facts(table: Any) -> tuple[int, Counter[str], list[Any]]:
    """(combined task count, file scan tasks per data file, all split tasks)."""
    combined = table.scan().plan_tasks()
    tasks = [t for c in combined for t in c.tasks]
    return len(combined), Counter(t.file_path for t in tasks), tasks


def test_files_have_row_groups_and_are_split(oracle: Any, catalog: Any, split_table: str) -> None:
    table = catalog.load_table(split_table)
    planned = table.scan().plan_files()
    assert len(planned) >= 2
    for t in planned:
        offsets = t.file.split_offsets
        assert offsets is not None and len(offsets) > 2, f"{t.file_path}: split offsets {offsets}"
    n_combined, per_file, tasks = _split_facts(table)
    assert n_combined > len(planned), "expected more combined tasks than data files"
    assert all(per_file[t.file_path] > 1 for t in planned), f"every file should be split: {per_file}"
    assert any(t.delete_paths for t in tasks), "split tasks should carry the position deletes"
    # the ranges of one file never overlap
    by_file: dict[str, list[tuple[int, int]]] = {}
    for t in tasks:
        by_file.setdefault(t.file_path, []).append((t.start, t.start + t.length))
    for path, ranges in by_file.items():
        ranges.sort()
        assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:])), f"{path}: overlapping {ranges}"


def _source_plan(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def test_spark_read_of_split_tasks_equals_java(
    spark: Any, oracle: Any, catalog: Any, split_table: str
) -> None:
    import icefloe.spark

    table = catalog.load_table(split_table)
    n_combined, _, _ = _split_facts(table)
    expected = oracle.df(split_table)
    assert expected.count() == ROWS - sum(1 for i in range(ROWS) if i % 7 == 3)
    df = icefloe.spark.read(spark, table)
    assert "Range" in _source_plan(df), "a small plan should ride in the closure over spark.range"
    assert df.rdd.getNumPartitions() == n_combined
    assert_same_rows(df, expected, context="icefloe.spark.read, split tasks")
    # with a filter and a projection too
    got = icefloe.spark.read(
        spark, table, row_filter="amount >= 100.0 AND grp = 'odd'", selected_fields=["id"]
    )
    assert_same_rows(got, oracle.df(split_table, columns=["id"], where="amount >= 100.0 AND grp = 'odd'"))


def test_spark_read_of_a_large_plan_ships_tasks_as_rows(
    spark: Any, oracle: Any, catalog: Any, split_table: str, monkeypatch: Any
) -> None:
    """Plans above INLINE_TASK_BYTES travel as RDD rows instead of in the closure: the same
    partitions and the same rows."""
    import importlib

    import icefloe.spark

    spark_read = importlib.import_module("icefloe.spark.read")  # the module, not the function
    monkeypatch.setattr(spark_read, "INLINE_TASK_BYTES", 0)
    table = catalog.load_table(split_table)
    n_combined = len(table.scan(row_filter="grp = 'odd'").plan_tasks())
    df = icefloe.spark.read(spark, table, row_filter="grp = 'odd'", selected_fields=["id", "amount"])
    assert "ExistingRDD" in _source_plan(df)
    assert df.rdd.getNumPartitions() == n_combined > 1
    assert_same_rows(df, oracle.df(split_table, columns=["id", "amount"], where="grp = 'odd'"))


def test_to_arrow_and_split_task_reads_equal_java(oracle: Any, catalog: Any, split_table: str) -> None:
    from icefloe import _native

    table = catalog.load_table(split_table)
    expected = oracle.df(split_table)
    assert_same_rows(table.scan().to_arrow(), expected, context="to_arrow")
    # every split task read on its own (the executor path), concatenated
    scan = table.scan()
    read_json = scan.read_schema().to_json()
    _, _, tasks = _split_facts(table)
    parts = [_native.read_task(t.to_json(), read_json).read_all() for t in tasks]
    assert_same_rows(pa.concat_tables(parts), expected, context="split tasks read one by one")


def test_small_scans_get_adaptive_splits_like_java(spark: Any, oracle: Any, catalog: Any) -> None:
    """A scan with fewer splits than Spark's parallelism gets smaller splits (16 MB floor), as
    Iceberg Java's Spark scan does (`read.split.adaptive-size.enabled`, default true): a dozen
    small files weigh 4 MB (open cost) each, one 128 MB task without adaptive sizing, several
    16 MB ones with."""
    import icefloe.spark

    name = new_table_name("adaptive")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    for i in range(6):
        oracle.sql(f"INSERT INTO {q} SELECT id, cast(id AS string) FROM range({i * 100}, {(i + 1) * 100})")
    shuffle_partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
    parallelism = max(spark.sparkContext.defaultParallelism, shuffle_partitions)
    java_partitions = oracle.df(name).rdd.getNumPartitions()
    table = catalog.load_table(name)
    assert len(table.scan().plan_tasks()) == 1
    assert java_partitions > 1
    assert len(table.scan().plan_tasks(parallelism=parallelism)) == java_partitions
    # The Rust reader's partitions are these tasks (the files without deletes otherwise take
    # Spark's Parquet source, split by Spark's own spark.sql.files.* settings).
    spark.conf.set(ENABLED_CONF, "false")
    try:
        df = icefloe.spark.read(spark, table)
        assert df.rdd.getNumPartitions() == java_partitions
        assert_same_rows(df, oracle.df(name))
        # the table property turns it off, for Java and icefloe alike
        oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('read.split.adaptive-size.enabled'='false')")
        table = catalog.load_table(name)
        java_partitions = oracle.df(name).rdd.getNumPartitions()
        assert java_partitions == 1
        assert icefloe.spark.read(spark, table).rdd.getNumPartitions() == java_partitions
    finally:
        spark.conf.unset(ENABLED_CONF)
