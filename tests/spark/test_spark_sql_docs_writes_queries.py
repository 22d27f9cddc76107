# ruff: noqa: E501
"""The SQL examples of Iceberg's "Spark Writes" (docs/docs/spark-writes.md) and "Queries"
(docs/docs/spark-queries.md) documentation pages, run by Iceberg Java's Spark SQL and by
`icefloe.spark.sql` (`support.sql_twins`): the Writes page's statements on twin tables, the
Queries page's on one table both engines read. The PySpark 3.5 pass runs these pages; their
statement forms run on both lines in test_spark_sql.py.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from support.oracle import assert_same_rows
from support.sql_twins import SqlTwins as Twins
from support.sql_twins import timestamp_text

pytestmark = [pytest.mark.spark, pytest.mark.interop]

Q = "sqldq"  # queries: Java's and icefloe's catalog on one warehouse
J = "sqldj"  # Java's twin (Spark) and icefloe's twin (icefloe) under one name
K = "sqldk"  # Spark catalog on icefloe's twin warehouse


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    t = Twins(spark, tmp_path_factory.mktemp("sqldocs"), Q, J, K)
    for catalog in (Q, J, K):
        t.java(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.db")
    yield t
    t.ice("USE spark_catalog.default")


# ---- Iceberg's Spark docs, "Spark Writes" (docs/docs/spark-writes.md): each SQL example on
# twin tables, run by Java and by icefloe, with the docs' names under `sqlj`. On PySpark 3.5
# only (`one_spark_line`): their statement forms run on both lines in test_dml / test_merge /
# test_insert_into_branch ----
@pytest.mark.one_spark_line
def test_iceberg_docs_writes_overwrite_examples(tw: Twins) -> None:
    """The logs table of "INSERT OVERWRITE": dynamic overwrite of the partitions the query
    writes, then a static overwrite of `PARTITION (level = 'INFO')`; and "DELETE FROM" with a
    timestamp range written as strings."""
    t = f"{J}.my_app.logs"
    tw.setup(f"CREATE NAMESPACE IF NOT EXISTS {J}.my_app")
    tw.setup(f"DROP TABLE IF EXISTS {t}")
    tw.both(
        f"CREATE TABLE {t} (uuid string NOT NULL, level string NOT NULL, ts timestamp NOT NULL, "
        "message string) USING iceberg PARTITIONED BY (level, hours(ts))"
    )
    tw.both(
        # (u1 twice, the same row: `first` of a group is then the same whatever the read order)
        f"INSERT INTO {t} VALUES ('u1', 'INFO', TIMESTAMP'2020-07-01 10:15:00', 'a'), "
        "('u1', 'INFO', TIMESTAMP'2020-07-01 10:15:00', 'a'), ('u2', 'WARN', TIMESTAMP'2020-07-01 11:00:00', 'c'), "
        "('u3', 'INFO', TIMESTAMP'2020-07-02 09:00:00', 'd'), ('u4', 'ERROR', TIMESTAMP'2020-05-03 00:00:00', 'e')"
    )
    tw.assert_same_table("my_app.logs")
    tw.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    try:
        tw.both(
            f"INSERT OVERWRITE {t} SELECT uuid, first(level), first(ts), first(message) FROM {t} "
            "WHERE cast(ts as date) = '2020-07-01' GROUP BY uuid"
        )
    finally:
        tw.spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    tw.assert_same_table("my_app.logs")
    tw.both(
        f"INSERT OVERWRITE {t} PARTITION (level = 'INFO') SELECT uuid, first(ts), first(message) FROM {t} "
        "WHERE level = 'INFO' GROUP BY uuid"
    )
    tw.assert_same_table("my_app.logs")
    tw.both(f"DELETE FROM {t} WHERE ts >= '2020-05-01 00:00:00' and ts < '2020-06-01 00:00:00'")
    tw.assert_same_table("my_app.logs")


@pytest.mark.one_spark_line
def test_iceberg_docs_writes_delete_and_update_examples(tw: Twins) -> None:
    """ "DELETE FROM" and "UPDATE" with the docs' subqueries: `session_time` below the
    good events' minimum (a scalar subquery), orders with a returned order (a correlated
    EXISTS); merge-on-read for the one, copy-on-write for the other."""
    tw.setup(f"CREATE NAMESPACE IF NOT EXISTS {J}.db")
    for name in ("all_events", "good_events", "orders", "returned_orders"):
        tw.setup(f"DROP TABLE IF EXISTS {J}.db.{name}")
    mor = "TBLPROPERTIES ('write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    tw.setup(
        f"CREATE TABLE {J}.db.all_events (id int, session_time bigint, ignored boolean) USING iceberg {mor}"
    )
    tw.setup(
        f"INSERT INTO {J}.db.all_events VALUES (1, 5, false), (2, 50, false), (3, 500, false), (4, null, false)"
    )
    tw.setup(f"CREATE TABLE {J}.db.good_events (session_time bigint) USING iceberg")
    tw.setup(f"INSERT INTO {J}.db.good_events VALUES (40), (70)")
    tw.setup(f"CREATE TABLE {J}.db.orders (oid int, order_status string) USING iceberg")
    tw.setup(f"INSERT INTO {J}.db.orders VALUES (1, 'new'), (2, 'new'), (3, 'shipped'), (4, null)")
    tw.setup(f"CREATE TABLE {J}.db.returned_orders (oid int) USING iceberg")
    tw.setup(f"INSERT INTO {J}.db.returned_orders VALUES (2), (4), (9)")
    tw.both(
        f"UPDATE {J}.db.all_events SET session_time = 0, ignored = true "
        f"WHERE session_time < (SELECT min(session_time) FROM {J}.db.good_events)"
    )
    tw.assert_same_table("db.all_events")
    tw.both(
        f"UPDATE {J}.db.orders AS t1 SET order_status = 'returned' "
        f"WHERE EXISTS (SELECT oid FROM {J}.db.returned_orders WHERE t1.oid = oid)"
    )
    tw.assert_same_table("db.orders")
    tw.setup(f"INSERT INTO {J}.db.good_events VALUES (1)")
    tw.both(
        f"DELETE FROM {J}.db.all_events WHERE session_time < (SELECT min(session_time) FROM {J}.db.good_events)"
    )
    tw.assert_same_table("db.all_events")
    tw.setup(f"INSERT INTO {J}.db.returned_orders VALUES (3)")
    tw.both(
        f"DELETE FROM {J}.db.orders AS t1 WHERE EXISTS (SELECT oid FROM {J}.db.returned_orders WHERE t1.oid = oid)"
    )
    tw.assert_same_table("db.orders")


@pytest.mark.one_spark_line
def test_iceberg_docs_writes_merge_and_branch_examples(tw: Twins) -> None:
    """ "MERGE INTO" with the docs' clauses together (deletes and increments by `s.op`, an
    insert of new ids after a threshold, the rows the source misses marked invalid), then
    "Writing to Branches": INSERT, MERGE, UPDATE and DELETE on `branch_audit`, and a WAP
    write through `spark.wap.branch`."""
    t = f"{J}.db.target"
    tw.setup(f"CREATE NAMESPACE IF NOT EXISTS {J}.db")
    tw.setup(f"DROP TABLE IF EXISTS {t}")
    tw.setup(
        f"CREATE TABLE {t} (id int, count int, status string, val string) USING iceberg "
        "TBLPROPERTIES ('write.merge.mode'='merge-on-read', 'write.wap.enabled'='true')"
    )
    tw.setup(
        f"INSERT INTO {t} VALUES (1, 5, 'ok', 'a'), (2, null, 'ok', 'b'), (3, 7, 'ok', 'c'), (4, 1, 'ok', 'd')"
    )
    tw.spark.createDataFrame(
        [(1, "delete", 10), (2, "increment", 10), (3, "increment", 10), (5, "increment", 10), (6, "new", 1)],
        "id int, op string, event_time int",
    ).createOrReplaceTempView("docs_updates")
    tw.both(
        f"MERGE INTO {t} t USING (SELECT * FROM docs_updates) s ON t.id = s.id "
        "WHEN MATCHED AND s.op = 'delete' THEN DELETE "
        "WHEN MATCHED AND t.count IS NULL AND s.op = 'increment' THEN UPDATE SET t.count = 0 "
        "WHEN MATCHED AND s.op = 'increment' THEN UPDATE SET t.count = t.count + 1 "
        "WHEN NOT MATCHED AND s.event_time > 5 THEN INSERT (id, count) VALUES (s.id, 1) "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET status = 'invalid'"
    )
    tw.assert_same_table("db.target")
    tw.setup(f"ALTER TABLE {t} CREATE BRANCH audit")
    for statement in (
        f"INSERT INTO {t}.branch_audit VALUES (1, 1, 'a', 'a'), (2, 2, 'b', 'b')",
        f"MERGE INTO {t}.branch_audit t USING (SELECT * FROM docs_updates) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.val = s.op",
        f"UPDATE {t}.branch_audit AS t1 SET val = 'c'",
        f"DELETE FROM {t}.branch_audit WHERE id = 2",
    ):
        tw.both(statement)
        tw.assert_same_table("db.target")
        assert_same_rows(
            tw.ice(f"SELECT * FROM {t}.branch_audit"),
            tw.java(f"SELECT * FROM {t}.branch_audit"),
            context=statement,
        )
    tw.setup(f"ALTER TABLE {t} CREATE BRANCH `audit-branch`")
    tw.spark.conf.set("spark.wap.branch", "audit-branch")
    try:
        tw.both(f"INSERT INTO {t} VALUES (3, 3, 'c', 'c')")
    finally:
        tw.spark.conf.unset("spark.wap.branch")
    tw.assert_same_table("db.target")
    branch = f"{t}.`branch_audit-branch`"
    assert_same_rows(tw.ice(f"SELECT * FROM {branch}"), tw.java(f"SELECT * FROM {branch}"), context="WAP")


# ---- Iceberg's Spark docs, "Queries" (docs/docs/spark-queries.md), on one table both engines
# read: the page's time travel (and which schema each form uses) and its metadata tables. On
# PySpark 3.5 only: test_time_travel_* and test_metadata_table run their forms on both ----
@pytest.fixture(scope="module")
def docs_orders(tw: Twins) -> dict[str, Any]:
    """The page's `orders`: S1 (id, status), then `total` added and S2; branch `audit_branch`
    and tag `first_load` at S1; a merge-on-read delete after them (position deletes)."""
    t = f"{Q}.db.docs_orders"
    tw.java(f"CREATE NAMESPACE IF NOT EXISTS {Q}.db")
    tw.java(
        f"CREATE TABLE {t} (id BIGINT, status STRING) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    tw.java(f"INSERT INTO {t} VALUES (1, 'NEW'), (2, 'PAID')")
    s1, t1 = tw.java(f"SELECT snapshot_id, committed_at FROM {t}.snapshots").first()
    tw.java(f"ALTER TABLE {t} ADD COLUMN total DOUBLE")
    tw.java(f"INSERT INTO {t} VALUES (3, 'PAID', 100.0)")
    tw.java(f"ALTER TABLE {t} CREATE BRANCH audit_branch AS OF VERSION {s1}")
    tw.java(f"ALTER TABLE {t} CREATE TAG first_load AS OF VERSION {s1}")
    tw.java(f"DELETE FROM {t} WHERE id = 2")
    # (seconds since the epoch rounded up: S1 or a later snapshot, never one before the first)
    return {"s1": s1, "t1": timestamp_text(t1), "t1_seconds": math.ceil(t1.timestamp())}


# Every time-travel form the page shows, each with the schema Java uses (comments), then every
# metadata table it lists.
_DOCS_TIME_TRAVEL = [
    "SELECT * FROM {t} VERSION AS OF {s1}",  # S1's schema: (id, status)
    "SELECT * FROM {t} TIMESTAMP AS OF '{t1}'",
    "SELECT * FROM {t} FOR SYSTEM_VERSION AS OF {s1}",
    "SELECT * FROM {t} FOR SYSTEM_TIME AS OF '{t1}'",
    "SELECT * FROM {t} TIMESTAMP AS OF {t1_seconds}",  # seconds since the epoch
    "SELECT * FROM {t} FOR SYSTEM_TIME AS OF {t1_seconds}",
    "SELECT * FROM {t} VERSION AS OF 'audit_branch'",  # the table's schema: (id, status, total)
    "SELECT * FROM {t}.`branch_audit_branch`",
    "SELECT * FROM {t} VERSION AS OF 'first_load'",  # S1's schema
    "SELECT * FROM {t}.`tag_first_load`",
    "SELECT * FROM {t}",
]
_DOCS_METADATA_TABLES = [
    "SELECT * FROM {t}.history",
    # (the current metadata file as each catalog spells it: Java's HadoopCatalog `file:/...`,
    # icefloe's filesystem catalog on a plain path `/...`; the older entries are the file's)
    "SELECT timestamp, regexp_replace(file, '^file:', '') AS file, latest_snapshot_id, latest_schema_id, "
    "latest_sequence_number FROM {t}.metadata_log_entries",
    "SELECT * FROM {t}.snapshots",
    "SELECT h.made_current_at, s.operation, h.snapshot_id, h.is_current_ancestor, s.summary['spark.app.id'] "
    "FROM {t}.history h JOIN {t}.snapshots s ON h.snapshot_id = s.snapshot_id ORDER BY made_current_at",
    "SELECT * FROM {t}.entries",
    "SELECT * FROM {t}.files",
    "SELECT * FROM {t}.manifests",
    "SELECT * FROM {t}.partitions",
    "SELECT * FROM {t}.position_deletes",
    "SELECT * FROM {t}.all_data_files",
    "SELECT * FROM {t}.all_delete_files",
    "SELECT * FROM {t}.all_entries",
    "SELECT * FROM {t}.all_manifests",
    "SELECT * FROM {t}.refs",
    "SELECT * FROM {t}.manifests TIMESTAMP AS OF '{t1}'",
    "SELECT * FROM {t}.partitions VERSION AS OF {s1}",
]


@pytest.mark.one_spark_line
@pytest.mark.parametrize("text", _DOCS_TIME_TRAVEL + _DOCS_METADATA_TABLES)
def test_iceberg_docs_queries(tw: Twins, docs_orders: dict[str, Any], text: str) -> None:
    statement = text.format(t=f"{Q}.db.docs_orders", **docs_orders)
    ours, java = tw.ice(statement), tw.java(statement)
    assert ours.columns == java.columns, statement
    assert_same_rows(ours, java, context=statement)
