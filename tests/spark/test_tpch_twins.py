"""The read-path guard: the 22 TPC-H queries (scale factor 0.01, DuckDB's `tpch`
extension) over twin tables, one written by Iceberg Java and one by icefloe, each query's
rows through each icefloe read path equal to Java's rows on Java's table.

Every table is a temp view that every query naming it shares, as SQL users have them: Q22
reads `customer` twice with different filters, Q2, Q11, Q15, Q17, Q20 and Q21 scan one view
in a subquery and in the outer query. Read paths: temp views of `icefloe.spark.read` (PySpark
3.5 and 4; its delete-free files through Spark's Parquet source, and again with every file in
Rust) and of `spark.read.format("icefloe")` (PySpark 4); a new read path joins `PATHS`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import icefloe.spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.spark._parquet_source import ENABLED_CONF
from support.oracle import CanonicalRows, Oracle, assert_same_rows, canonical_rows
from support.session import NAMESPACE, PYSPARK_MAJOR, new_table_name
from support.tpch import tpch_data

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCALE_FACTOR = 0.01
# Several data files per table (more for the large ones), written the same way on both sides.
_FILES = {"lineitem": 4, "orders": 3, "customer": 3, "partsupp": 2}


def _chunks(table: pa.Table, n: int) -> list[pa.Table]:
    step = -(-table.num_rows // n)
    return [table.slice(i, step) for i in range(0, table.num_rows, step)]


@pytest.fixture(scope="module")
def twins(
    spark: Any, oracle: Oracle, catalog: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """name -> (Java's table, icefloe's table name): the same rows written by each engine."""
    tables, _ = tpch_data(SCALE_FACTOR)
    staging = tmp_path_factory.mktemp("tpch")
    suffix = new_table_name("tpch").split("_", 1)[1]
    out: dict[str, Any] = {}
    for name, data in tables.items():
        n = _FILES.get(name, 1)
        folder = staging / name
        folder.mkdir()
        for i, chunk in enumerate(_chunks(data, n)):
            pq.write_table(chunk, folder / f"part-{i}.parquet")
        java = f"{NAMESPACE}.tpch_j_{name}_{suffix}"
        spark.read.parquet(str(folder)).repartition(n).writeTo(oracle.qualified(java)).using(
            "iceberg"
        ).create()
        ours = f"{NAMESPACE}.tpch_i_{name}_{suffix}"
        table = catalog.create_table(ours, data.schema)
        for chunk in _chunks(data, n):
            table.append(chunk)
        out[name] = (java, ours)
    return out


def _run_all(spark: Any, views: dict[str, Any]) -> list[CanonicalRows]:
    for name, df in views.items():
        df.createOrReplaceTempView(name)
    try:
        _, queries = tpch_data(SCALE_FACTOR)
        return [canonical_rows(spark.sql(q)) for q in queries]
    finally:
        for name in views:
            spark.catalog.dropTempView(name)


@pytest.fixture(scope="module")
def java_rows(spark: Any, oracle: Oracle, twins: dict[str, Any]) -> list[CanonicalRows]:
    rows = _run_all(spark, {name: spark.table(oracle.qualified(java)) for name, (java, _) in twins.items()})
    # A guard that compares empty results guards nothing: most queries return rows at SF 0.01.
    assert sum(1 for r in rows if r) >= 20, [len(r) for r in rows]
    return rows


def _read_views(spark: Any, catalog: Any, twins: dict[str, Any]) -> dict[str, Any]:
    return {name: icefloe.spark.read(spark, catalog.load_table(ours)) for name, (_, ours) in twins.items()}


def _rust_read_views(spark: Any, catalog: Any, twins: dict[str, Any]) -> dict[str, Any]:
    """`icefloe.spark.read` with every file in Rust (Spark's Parquet source turned off)."""
    spark.conf.set(ENABLED_CONF, "false")
    try:
        return _read_views(spark, catalog, twins)
    finally:
        spark.conf.unset(ENABLED_CONF)


def _source_views(spark: Any, catalog: Any, twins: dict[str, Any]) -> dict[str, Any]:
    icefloe.spark.register(spark)
    return {name: spark.read.format("icefloe").load(f"local.{ours}") for name, (_, ours) in twins.items()}


PATHS: dict[str, tuple[int, Callable[[Any, Any, dict[str, Any]], dict[str, Any]]]] = {
    # read path -> (the oldest PySpark major it runs on, the temp views it makes)
    "icefloe.spark.read": (3, _read_views),
    "icefloe.spark.read, Rust reader only": (3, _rust_read_views),
    'format("icefloe")': (4, _source_views),
}


# The paths this PySpark has (make test runs this file on PySpark 3.5 and 4). The Rust reader
# alone (every file through `mapInArrow`) reads the same on both lines: it runs on 3.5 only, and
# the PySpark 4 pass keeps the paths whose Spark half differs (Spark's Parquet source, the
# Python data source).
@pytest.mark.parametrize(
    "path",
    [
        pytest.param(
            p,
            marks=[pytest.mark.one_spark_line]
            if "Rust reader only" in p
            else ([pytest.mark.spark4_case] if oldest >= 4 else []),
        )
        for p, (oldest, _) in PATHS.items()
        if PYSPARK_MAJOR >= oldest
    ],
)
def test_tpch_queries_read_javas_rows(
    spark: Any, warehouse: Path, catalog: Any, twins: dict[str, Any], java_rows: list[Any], path: str
) -> None:
    _, views = PATHS[path]
    spark.conf.set("icefloe.catalog.local.type", "filesystem")
    spark.conf.set("icefloe.catalog.local.warehouse", str(warehouse))
    ours = _run_all(spark, views(spark, catalog, twins))
    wrong = []
    for i, (got, java) in enumerate(zip(ours, java_rows)):
        try:
            assert_same_rows(got, java, context=f"Q{i + 1}")
        except AssertionError as e:
            wrong.append(str(e))
    assert not wrong, f"{path}:\n" + "\n".join(wrong)
