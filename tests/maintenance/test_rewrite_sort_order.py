"""`rewrite_data_files(strategy="sort", sort_order=...)` with an order other than the table's,
checked against Iceberg Java's procedure (`CALL ... rewrite_data_files(strategy => 'sort',
sort_order => '...')`).

Twin tables get the same rows; Java's procedure compacts one, icefloe the other (in process or
on Spark). Java reads both and gets the same rows; every new file of both is sorted by the
custom order (read back and compared row by row, transforms computed by icefloe's Rust
transforms); both write as many files and record the same `sort_order_id`: the id of the
table's order with the same fields (default or not), else 0 (unsorted), as Java does.

Bad orders (an unknown column, an unknown transform, a malformed string, `zorder` mixed with
other fields) are refused by both, icefloe naming what was expected and found, and nothing is committed.
"""

from __future__ import annotations

import logging
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.sorting import SortDirection, SortField, SortOrder
from icefloe.transforms import DayTransform
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

COLUMNS = "id BIGINT, name STRING, ts TIMESTAMP, region STRING"
ROWS = (
    "SELECT id, IF(id % 11 = 0, NULL, concat('n', CAST(pmod(id * 37, 50) AS STRING))) AS name, "
    "IF(id % 13 = 0, NULL, CAST(1700000000 + pmod(id * 7919, 500) * 3600 AS TIMESTAMP)) AS ts, "
    "IF(id % 2 = 0, 'eu', 'us') AS region FROM range({lo}, {hi})"
)
SOURCE_TYPES = {"id": "long", "name": "string", "ts": "timestamptz"}


def _twins(spark: Any, oracle: Oracle, orders: list[str]) -> tuple[str, str]:
    """Two tables with the same rows in four small files per partition, each given the
    table sort orders `orders` (in turn: the last is the default)."""
    names = (new_table_name("sortjava"), new_table_name("sortours"))
    for name in names:
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} ({COLUMNS}) USING iceberg PARTITIONED BY (region) "
            "TBLPROPERTIES ('format-version'='2')"
        )
        for order in orders:
            oracle.sql(f"ALTER TABLE {q} WRITE ORDERED BY {order}")
        for k in range(4):
            # Unordered writes: Java would sort the rows of a sorted table by its order.
            spark.sql(ROWS.format(lo=k * 300, hi=(k + 1) * 300)).repartition(2, "region").writeTo(q).option(
                "distribution-mode", "none"
            ).append()
    return names


def _new_files(oracle: Oracle, name: str, before: set[str]) -> list[dict[str, Any]]:
    return [f for f in oracle.data_files(name) if f["file_path"] not in before]


def _keys(path: str, fields: list[tuple[str, str, bool, bool]]) -> list[tuple[Any, ...]]:
    """Per row of the file: per sort field (column, transform, descending, nulls first) a
    comparable key (nulls placed, descending values negated by ordering below)."""
    table = pq.read_table(path.removeprefix("file:"))
    columns = []
    for column, transform, _, _ in fields:
        values = table.column(column).combine_chunks()
        if transform != "identity":
            values = _native.apply_transform(transform, SOURCE_TYPES[column], values)
        columns.append(pa.array(values).to_pylist())
    return list(zip(*columns))


def _assert_sorted(path: str, fields: list[tuple[str, str, bool, bool]]) -> None:
    rows = _keys(path, fields)
    assert len(rows) > 1, path

    def cmp(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
        for x, y, (_, _, desc, nulls_first) in zip(a, b, fields):
            if x == y:
                continue
            if x is None or y is None:
                return (-1 if x is None else 1) * (1 if nulls_first else -1)
            return (-1 if x < y else 1) * (-1 if desc else 1)
        return 0

    bad = [(i, a, b) for i, (a, b) in enumerate(zip(rows, rows[1:])) if cmp(a, b) > 0]
    assert not bad, f"{path} is not sorted by {fields}: first rows out of order {bad[:3]}"


CASES = [
    pytest.param(
        [],
        "id DESC NULLS LAST, name ASC NULLS FIRST",
        [("id", "identity", True, False), ("name", "identity", False, True)],
        False,
        id="unsorted-table-string-in-process",
    ),
    pytest.param(
        ["name"],
        "days(ts) DESC NULLS LAST, bucket(4, id), truncate(name, 2)",
        [("ts", "day", True, False), ("id", "bucket[4]", False, True), ("name", "truncate[2]", False, True)],
        True,
        id="transforms-not-the-tables-order-spark",
    ),
    pytest.param(
        ["name", "id DESC"],
        "name",
        [("name", "identity", False, True)],
        True,
        id="an-older-order-of-the-table-spark",
    ),
    pytest.param(
        ["ts", "id DESC NULLS LAST, name"],
        "id DESC, name",
        [("id", "identity", True, False), ("name", "identity", False, True)],
        False,
        id="the-default-order-in-other-words-in-process",
    ),
]


@pytest.mark.parametrize(("orders", "sort_order", "fields", "via_spark"), CASES)
def test_custom_sort_order_sorts_and_records_the_order_id_like_java(
    spark: Any,
    oracle: Oracle,
    catalog: Any,
    orders: list[str],
    sort_order: str,
    fields: list[tuple[str, str, bool, bool]],
    via_spark: bool,
) -> None:
    java_name, our_name = _twins(spark, oracle, orders)
    expected = oracle.canonical(java_name)
    befores = {n: {f["file_path"] for f in oracle.data_files(n)} for n in (java_name, our_name)}
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{java_name}', strategy => 'sort', "
        f"sort_order => '{sort_order}', options => map('rewrite-all', 'true'))"
    )
    result = catalog.load_table(our_name).maintenance.rewrite_data_files(
        strategy="sort", sort_order=sort_order, rewrite_all=True, spark=spark if via_spark else None
    )
    java = _new_files(oracle, java_name, befores[java_name])
    ours = _new_files(oracle, our_name, befores[our_name])
    assert_same_rows(oracle.canonical(java_name), expected, context="Java reading Java's sort rewrite")
    assert_same_rows(oracle.canonical(our_name), expected, context="Java reading icefloe's sort rewrite")
    assert result.added_data_files_count == len(ours)
    assert len(ours) == len(java), ([f["file_path"] for f in java], [f["file_path"] for f in ours])
    for f in java + ours:
        _assert_sorted(f["file_path"], fields)
    java_ids = sorted(f["sort_order_id"] for f in java)
    assert sorted(f["sort_order_id"] for f in ours) == java_ids, "sort_order_id as Java records it"


def test_a_sort_order_object_sorts_like_javas_string(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """An icefloe `SortOrder` (field ids of the table's schema) sorts as Java's string of the
    same order; not one of the table's orders, it is recorded as 0 like Java's."""
    java_name, our_name = _twins(spark, oracle, ["id"])
    expected = oracle.canonical(java_name)
    befores = {n: {f["file_path"] for f in oracle.data_files(n)} for n in (java_name, our_name)}
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{java_name}', strategy => 'sort', "
        "sort_order => 'days(ts) DESC, id', options => map('rewrite-all', 'true'))"
    )
    table = catalog.load_table(our_name)
    schema = table.schema()
    order = SortOrder(
        SortField(schema.find_field("ts").field_id, DayTransform(), SortDirection.DESC),
        SortField(schema.find_field("id").field_id),
    )
    table.maintenance.rewrite_data_files(strategy="sort", sort_order=order, rewrite_all=True)
    java = _new_files(oracle, java_name, befores[java_name])
    ours = _new_files(oracle, our_name, befores[our_name])
    assert_same_rows(oracle.canonical(our_name), expected, context="Java reading icefloe's sort rewrite")
    assert len(ours) == len(java)
    fields = [("ts", "day", True, False), ("id", "identity", False, True)]
    for f in java + ours:
        _assert_sorted(f["file_path"], fields)
    assert sorted(f["sort_order_id"] for f in ours) == sorted(f["sort_order_id"] for f in java) == [0, 0]


def test_on_spark_delete_free_files_take_sparks_reader_and_the_others_rust(
    spark: Any, oracle: Oracle, catalog: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The sort rewrite on Spark reads a group's delete-free files with Spark's own Parquet
    source and its files with position deletes with the Rust reader, in one ranged group:
    the same rows, file count and order as Java's procedure. Files this small take the Rust
    reader by default (mean under `icefloe.rewrite.spark-parquet.min-mean-file-bytes`), as
    with `icefloe.read.spark-parquet.enabled=false`, to the same result (range boundaries
    follow Spark's sample, so only the files' order is compared)."""
    names = _twins(spark, oracle, ["id"])
    for name in names:  # position deletes in the eu files only
        q = oracle.qualified(name)
        oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
        oracle.sql(f"DELETE FROM {q} WHERE region = 'eu' AND id % 7 = 0")
    java_name, our_name = names
    expected = oracle.canonical(java_name)
    befores = {n: {f["file_path"] for f in oracle.data_files(n)} for n in names}
    eu_files = sum(1 for f in oracle.data_files(our_name) if f["partition"]["region"] == "eu")
    us_files = len(befores[our_name]) - eu_files
    assert eu_files and us_files
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{java_name}', strategy => 'sort', "
        "options => map('rewrite-all', 'true'))"
    )

    def rewrite(conf: dict[str, str]) -> str:
        """A sort rewrite on Spark under session settings `conf`; what it says of its readers."""
        caplog.clear()
        for key, value in conf.items():
            spark.conf.set(key, value)
        try:
            with caplog.at_level(logging.INFO, logger="icefloe"):
                catalog.load_table(our_name).maintenance.rewrite_data_files(
                    strategy="sort", rewrite_all=True, spark=spark
                )
        finally:
            for key in conf:
                spark.conf.unset(key)
        said = [r.getMessage() for r in caplog.records if "Parquet source" in r.getMessage()]
        assert len(said) == 1, said
        return said[0]

    # The files here are small: by default they would take the Rust reader (the size rule).
    said = rewrite({"icefloe.rewrite.spark-parquet.min-mean-file-bytes": "0"})
    assert f": {us_files} files read by Spark's Parquet source" in said, said
    java = _new_files(oracle, java_name, befores[java_name])
    ours = _new_files(oracle, our_name, befores[our_name])
    assert_same_rows(oracle.canonical(our_name), expected, context="Java reading icefloe's sort rewrite")
    assert len(ours) == len(java) == 2
    for f in java + ours:
        _assert_sorted(f["file_path"], [("id", "identity", False, True)])

    # The same rewrite again by default (small files: the Rust reader), then with Spark's reader
    # turned off: every file in Rust, same files.
    said = rewrite({})
    assert ": 0 files read by Spark's Parquet source" in said, said
    assert "small files (mean under 16777216 bytes" in said, said
    before = {f["file_path"] for f in oracle.data_files(our_name)}
    said = rewrite({"icefloe.read.spark-parquet.enabled": "false"})
    assert ": 0 files read by Spark's Parquet source" in said, said
    assert "(turned off (icefloe.read.spark-parquet.enabled=false))" in said, said
    again = _new_files(oracle, our_name, before)
    assert_same_rows(oracle.canonical(our_name), expected, context="after the Rust-only rewrite")
    assert len(again) == 2
    for f in again:
        _assert_sorted(f["file_path"], [("id", "identity", False, True)])


BAD = [
    pytest.param(
        "nope DESC", ValidationError, "expected a column of the table", "found 'nope'", id="no-column"
    ),
    pytest.param("ID", ValidationError, "expected a column of the table", "found 'ID'", id="column-case"),
    pytest.param(
        "foo(id)", ValidationError, "expected a transform (identity, bucket", "found 'foo'", id="transform"
    ),
    pytest.param("id DESC NULLS", ValidationError, "expected FIRST or LAST", "found the end", id="malformed"),
    pytest.param("bucket(id)", ValidationError, "expected one integer width", "found 0", id="no-width"),
    pytest.param("days(id)", ValidationError, "applies to column 'id' of type long", "found day", id="type"),
    pytest.param(
        "zorder(id), name", ValidationError, "expected zorder(...) alone", "found it mixed", id="zorder-mixed"
    ),
]


@pytest.mark.parametrize(("sort_order", "error", "expected", "found"), BAD)
def test_a_bad_sort_order_is_refused_naming_it_and_nothing_is_committed(
    spark: Any,
    oracle: Oracle,
    catalog: Any,
    sort_order: str,
    error: type[Exception],
    expected: str,
    found: str,
) -> None:
    name = new_table_name("badsort")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} ({COLUMNS}) USING iceberg TBLPROPERTIES ('format-version'='2')")
    for k in range(2):
        spark.sql(ROWS.format(lo=k * 50, hi=(k + 1) * 50)).coalesce(1).writeTo(q).append()
    start = oracle.current_snapshot_id(name)
    files = {f["file_path"] for f in oracle.data_files(name)}
    if error is ValidationError:  # Java refuses these too
        with pytest.raises(Exception):  # noqa: B017 - Java's errors come as Py4J / Spark errors
            oracle.sql(
                f"CALL oracle.system.rewrite_data_files(table => '{name}', strategy => 'sort', "
                f"sort_order => '{sort_order}', options => map('rewrite-all', 'true'))"
            )
    table = catalog.load_table(name)
    with pytest.raises(error) as raised:
        table.maintenance.rewrite_data_files(strategy="sort", sort_order=sort_order, rewrite_all=True)
    message = str(raised.value)
    assert expected in message and found in message, message
    assert oracle.current_snapshot_id(name) == start
    assert {f["file_path"] for f in oracle.data_files(name)} == files
