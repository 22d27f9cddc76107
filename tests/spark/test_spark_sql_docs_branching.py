# ruff: noqa: E501
"""The SQL examples of Iceberg's "Branching and Tagging" documentation page
(`docs/docs/branching.md`), as the page writes them, in its order, run by Iceberg Java's Spark
SQL on one table and by `icefloe.spark.sql` on its twin (`support.ddl_twins`): after every
statement both ran it and the twins' schema, spec, properties, refs (by snapshot position and
retention) and snapshot operations are equal; every query's rows are Java's, and where the page
prints them, the page's.

The page's `prod.db.table` / `db.table` is a fresh table per section; its snapshot ids (`AS OF
VERSION 7`, `30`, `365`, `3`) are each twin's own snapshots by position. The PySpark 3.5 pass
runs this page; the same statement forms run on PySpark 4 in `test_spark_sql_ddl.py`
(branches and tags), `test_spark_sql.py` (WAP writes, branch reads and writes) and
`test_spark_sql_ddl.py::test_snapshot_procedures` (`fast_forward`).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import pytest
from support.ddl_twins import Twins
from support.oracle import assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop, pytest.mark.one_spark_line]

J, K = "docbrj", "docbrk"  # this file's twin catalogs (Spark keeps a catalog once loaded)

PAGE_NAMES = ("prod.db.table", "db.table")


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return Twins(spark, tmp_path_factory.mktemp("sqldocsbranching"), J, K)


def _fresh() -> str:
    return f"db.table_{uuid.uuid4().hex[:8]}"


def _query(tw: Twins, ident: str, text: str, page_rows: list[tuple[Any, ...]] | None = None) -> None:
    """A query of the page on both twins: icefloe's rows are Java's, and the page's where given."""
    text = tw.on_twin(text, ident, PAGE_NAMES)
    java = tw.java(text)
    assert_same_rows(tw.ice(text), java, context=text)
    if page_rows is not None:
        assert sorted(tuple(r) for r in java.collect()) == sorted(page_rows), text


LIFECYCLE = [
    "ALTER TABLE prod.db.table CREATE TAG `EOW-01` AS OF VERSION {v7} RETAIN 7 DAYS",
    "ALTER TABLE prod.db.table CREATE TAG `EOM-01` AS OF VERSION {v30} RETAIN 180 DAYS",
    "ALTER TABLE prod.db.table CREATE TAG `EOY-2023` AS OF VERSION {v365}",
    "ALTER TABLE prod.db.table CREATE BRANCH `test-branch` RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS",
    "ALTER TABLE db.table SET TBLPROPERTIES (\n    'write.wap.enabled'='true'\n)",
    "ALTER TABLE db.table CREATE BRANCH `audit-branch` AS OF VERSION {v3} RETAIN 7 DAYS",
]


def test_historical_tags_retention_and_the_audit_branch(tw: Twins) -> None:
    """The page's tags of end-of-week / month / year snapshots, a retained test branch, and the
    write-audit-publish flow: `SET spark.wap.branch`, an `INSERT` that lands on the audit
    branch only, and `fast_forward` of `main` to it."""
    ident = _fresh()
    tw.setup(f"CREATE TABLE {J}.{ident} (id bigint, data string) USING iceberg")
    for i in range(4):
        tw.setup(f"INSERT INTO {J}.{ident} VALUES ({i}, 'r{i}')")
    java, ours = tw.snapshot_ids(ident)
    subs = {k: (java[i], ours[i]) for k, i in (("v7", 0), ("v30", 1), ("v365", 2), ("v3", 3))}
    assert tw.page(ident, LIFECYCLE, names=PAGE_NAMES, **subs) == [True] * len(LIFECYCLE)

    tw.java("SET spark.wap.branch = audit-branch").collect()
    try:
        assert tw.page(ident, ["INSERT INTO prod.db.table VALUES (3, 'c')"], names=PAGE_NAMES) == [True]
    finally:
        tw.java("RESET spark.wap.branch").collect()
    _query(tw, ident, "SELECT * FROM prod.db.table", [(i, f"r{i}") for i in range(4)])
    _query(
        tw,
        ident,
        "SELECT * FROM prod.db.table.`branch_audit-branch`",
        [*((i, f"r{i}") for i in range(4)), (3, "c")],
    )
    for tag, rows in (("EOW-01", 1), ("EOM-01", 2), ("EOY-2023", 3)):
        _query(tw, ident, f"SELECT * FROM prod.db.table.`tag_{tag}`", [(i, f"r{i}") for i in range(rows)])

    call = "CALL catalog_name.system.fast_forward('prod.db.table', 'main', 'audit-branch')"
    assert tw.page(ident, [call.replace("catalog_name", J)], names=PAGE_NAMES) == [True]
    _query(tw, ident, "SELECT * FROM prod.db.table", [*((i, f"r{i}") for i in range(4)), (3, "c")])


def test_schema_selection_with_branches_and_tags(tw: Twins) -> None:
    """The page's schema-selection walk-through: a branch keeps reading with the table's schema
    after the table drops and adds columns, a snapshot id reads with its snapshot's schema, and
    a write to the branch takes the table's schema; every query's rows as the page prints them."""
    ident = _fresh()
    page = lambda statements: tw.page(ident, statements, names=PAGE_NAMES)  # noqa: E731
    # The page's CREATE TABLE has no USING: in an Iceberg catalog it is an Iceberg table.
    assert page(["CREATE TABLE db.table (id bigint, data string, col float)"]) == [True]
    assert page(["INSERT INTO db.table VALUES (1, 'a', 1.0), (2, 'b', 2.0), (3, 'c', 3.0)"]) == [True]
    first = [(1, "a", 1.0), (2, "b", 2.0), (3, "c", 3.0)]
    _query(tw, ident, "SELECT * FROM db.table", first)

    assert page(["ALTER TABLE db.table CREATE BRANCH test_branch"]) == [True]
    _query(tw, ident, "SELECT * FROM db.table.branch_test_branch", first)

    assert (
        page(
            [
                "ALTER TABLE db.table DROP COLUMN col",
                "ALTER TABLE db.table ADD COLUMN new_col date",
                "INSERT INTO db.table VALUES (4, 'd', date('2024-04-04')), (5, 'e', date('2024-05-05'))",
            ]
        )
        == [True] * 3
    )
    old = [(1, "a", None), (2, "b", None), (3, "c", None)]
    new = [(4, "d", dt.date(2024, 4, 4)), (5, "e", dt.date(2024, 5, 5))]
    _query(tw, ident, "SELECT * FROM db.table", old + new)
    _query(tw, ident, "SELECT * FROM db.table.branch_test_branch", old)
    _query(tw, ident, "SELECT * FROM db.table VERSION AS OF 'test_branch'", old)

    # `refs`: a branch each, at each twin's own snapshot; the branch's snapshot id reads with
    # that snapshot's schema, as the page shows.
    text = f"SELECT name, type, min_snapshots_to_keep, max_snapshot_age_in_ms, max_reference_age_in_ms FROM {J}.{ident}.refs"
    assert_same_rows(tw.ice(text), tw.java(text), context=text)
    java_ids, our_ids = tw.snapshot_ids(ident)
    java_first = tw.java(f"SELECT * FROM {J}.{ident} VERSION AS OF {java_ids[0]}")
    assert_same_rows(tw.ice(f"SELECT * FROM {J}.{ident} VERSION AS OF {our_ids[0]}"), java_first)
    assert sorted(tuple(r) for r in java_first.collect()) == first

    assert page(
        [
            "INSERT INTO db.table.branch_test_branch VALUES (6, 'e', date('2024-06-06')), (7, 'g', date('2024-07-07'))"
        ]
    ) == [True]
    _query(
        tw,
        ident,
        "SELECT * FROM db.table.branch_test_branch",
        [(6, "e", dt.date(2024, 6, 6)), (7, "g", dt.date(2024, 7, 7)), *old],
    )
    tw.assert_same_table(ident)
