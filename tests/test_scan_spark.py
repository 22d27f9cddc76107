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
from conftest import new_table_name
from oracle import assert_same_rows

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


def test_spark_read_of_split_tasks_equals_java(
    spark: Any, oracle: Any, catalog: Any, split_table: str
) -> None:
    import icefloe.spark

    table = catalog.load_table(split_table)
    n_combined, _, _ = _split_facts(table)
    expected = oracle.df(split_table)
    assert expected.count() == ROWS - sum(1 for i in range(ROWS) if i % 7 == 3)
    df = icefloe.spark.read(spark, table)
    assert df.rdd.getNumPartitions() == n_combined
    assert_same_rows(df, expected, context="icefloe.spark.read, split tasks")
    # with a filter and a projection too
    got = icefloe.spark.read(
        spark, table, row_filter="amount >= 100.0 AND grp = 'odd'", selected_fields=["id"]
    )
    assert_same_rows(got, oracle.df(split_table, columns=["id"], where="amount >= 100.0 AND grp = 'odd'"))


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
