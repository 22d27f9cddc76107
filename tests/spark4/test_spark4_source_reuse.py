"""One `format("icefloe")` DataFrame (or a temp view of it) used by many queries, and by one
plan that scans it twice, reads each query's rows (issue 39).

Spark 4.1 to 4.3 keep what a Python reader planned while filters were pushed on the
DataFrame's data source, shared by all its scans: with filters pushed, a later query that
pushed nothing read the rows of the earlier query's filter, and two scans in one plan both
read the rows of one filter. Every expectation is Java's reading of the same table through
the same DataFrame operations.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from icefloe.spark.datasource import pushdown_is_scan_scoped
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

PUSHABLE = "bal > 0"  # Spark hands it to the reader
PUSHABLE_2 = "bal < -200"
UNPUSHABLE = "substring(phone, 1, 2) IN ('13', '31')"  # a function: Spark keeps it


@pytest.fixture(scope="module")
def accounts(oracle: Oracle) -> str:
    """2,000 accounts written by Java in four files, balances -1000..999."""
    name = new_table_name("reuse")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, bal DOUBLE, phone STRING) USING iceberg PARTITIONED BY (bucket(4, id))"
    )
    oracle.sql(
        f"INSERT INTO {q} SELECT id, CAST((id * 7919) % 2000 - 1000 AS DOUBLE), "
        "concat(CAST(10 + id % 25 AS STRING), '-', CAST(id AS STRING)) FROM range(2000)"
    )
    return name


def _source(source: Any, name: str) -> Any:
    return source.read.format("icefloe").load(f"local.{name}")


def test_released_spark_gets_no_pushed_filters(source: Any) -> None:
    """No Spark release up to 4.3 keeps a pushdown's read with its scan: nothing is pushed."""
    assert not pushdown_is_scan_scoped(source)


def test_the_issue_shapes(source: Any, oracle: Oracle, accounts: str) -> None:
    java = oracle.df(accounts)
    f = _source(source, accounts)
    assert _source(source, accounts).where(UNPUSHABLE).count() == java.where(UNPUSHABLE).count()
    assert f.where(PUSHABLE).count() == java.where(PUSHABLE).count()
    assert f.where(UNPUSHABLE).count() == java.where(UNPUSHABLE).count()
    assert f.count() == java.count() == 2000
    # One plan, two scans of one DataFrame with different filters.
    assert (
        f.where("bal > 500").union(f.where(PUSHABLE_2)).count()
        == java.where("bal > 500").union(java.where(PUSHABLE_2)).count()
    )
    ours = f.where("bal > 600").alias("a").join(f.where("bal < -250").alias("b"), "id", "left")
    theirs = java.where("bal > 600").alias("a").join(java.where("bal < -250").alias("b"), "id", "left")
    assert_same_rows(ours, theirs)
    # A self-join on the key: each side keeps its own filter.
    pairs = f.where(PUSHABLE).select("id").join(f.where(PUSHABLE_2).select("id"), "id")
    assert pairs.count() == 0


def test_any_order_of_queries_on_a_dataframe_and_a_temp_view(
    source: Any, oracle: Oracle, accounts: str
) -> None:
    java = oracle.df(accounts)
    wheres = [PUSHABLE, PUSHABLE_2, UNPUSHABLE, f"{PUSHABLE} AND {UNPUSHABLE}", None]
    expected = {w: (java if w is None else java.where(w)).count() for w in wheres}
    assert len(set(expected.values())) == len(wheres)  # every query has its own answer
    for kind in ("dataframe", "view"):
        for order in itertools.permutations([PUSHABLE, UNPUSHABLE, None]):
            f = _source(source, accounts)
            view = f"reuse_{kind}"
            f.createOrReplaceTempView(view)
            for where in [*order, PUSHABLE_2, f"{PUSHABLE} AND {UNPUSHABLE}"]:
                if kind == "dataframe":
                    got = (f if where is None else f.where(where)).count()
                else:
                    clause = "" if where is None else f" WHERE {where}"
                    got = source.sql(f"SELECT count(*) FROM {view}{clause}").first()[0]
                assert got == expected[where], (kind, order, where)
            source.catalog.dropTempView(view)


def test_one_plan_scans_a_temp_view_twice(source: Any, oracle: Oracle, accounts: str) -> None:
    _source(source, accounts).createOrReplaceTempView("reuse_ours")
    oracle.df(accounts).createOrReplaceTempView("reuse_java")
    queries = [
        # a subquery with its own filter (TPC-H Q22's shape)
        "SELECT count(*), sum(bal) FROM {v} WHERE {u} "
        "AND bal > (SELECT avg(bal) FROM {v} WHERE bal > 0 AND {u})",
        "SELECT id FROM {v} WHERE bal > 900 UNION ALL SELECT id FROM {v} WHERE bal < -900",
        "SELECT a.id, b.id FROM {v} a LEFT JOIN {v} b ON a.id = b.id AND b.bal < -250 WHERE a.bal > 600",
        "SELECT count(*) FROM {v} a "
        "WHERE EXISTS (SELECT 1 FROM {v} b WHERE b.id = a.id + 1 AND b.bal > 0) AND a.bal < 0",
    ]
    try:
        for q in queries:
            ours = source.sql(q.format(v="reuse_ours", u=UNPUSHABLE))
            theirs = source.sql(q.format(v="reuse_java", u=UNPUSHABLE))
            assert_same_rows(ours, theirs, context=q)
            assert theirs.count() > 0, q
    finally:
        source.catalog.dropTempView("reuse_ours")
        source.catalog.dropTempView("reuse_java")
