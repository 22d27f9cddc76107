# ruff: noqa: E501
"""`icefloe.spark.sql` against Iceberg Java's Spark SQL: the same statement text run by both.

- Queries: one table set written by Java in the Spark catalog `sqlq`, whose warehouse is also
  icefloe's catalog `sqlq`; each query text runs through `spark.sql` (Java's runtime) and
  through `icefloe.spark.sql` (icefloe reads), and the rows must agree. One table, so the
  snapshot ids and times of time travel are the same for both texts.
- DDL and DML: twin tables set up by Java with the same statements in two warehouses: Spark
  catalog `sqlj` (Java's twin) and icefloe catalog `sqlj` (icefloe's twin, also Spark
  catalog `sqlk` for Java's reads of it). The statement text runs through Java on the one
  and through icefloe on the other; the tables are then read by both engines, and their
  schemas, specs and properties compared through Java's API.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.exceptions import NotSupportedError, ValidationError
from support.oracle import assert_same_rows, canonical_rows
from support.session import PYSPARK_MAJOR
from support.sql_twins import SqlTwins, timestamp_text

pytestmark = [pytest.mark.spark, pytest.mark.interop]

Q = "sqlq"  # queries: Java's and icefloe's catalog on one warehouse
J = "sqlj"  # DDL / DML: Java's twin (Spark) and icefloe's twin (icefloe) under one name
K = "sqlk"  # Spark catalog on icefloe's twin warehouse: Java reads what icefloe wrote


Twins = SqlTwins


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    t = SqlTwins(spark, tmp_path_factory.mktemp("sql"), Q, J, K)
    yield t
    t.ice("USE spark_catalog.default")


@pytest.fixture(scope="module")
def orders(tw: Twins) -> dict[str, Any]:
    """`sqlq.db.orders` (merge-on-read, identity-partitioned by day: three snapshots, the last
    a delete with position deletes; tag `t1` at the first, branch `b1` with one more row)
    and `sqlq.db.customers`, written by Java; a Spark temp view `regions_tv`."""
    q = f"{Q}.db"
    tw.java(f"CREATE NAMESPACE IF NOT EXISTS {q}")
    tw.java(
        f"CREATE TABLE {q}.orders (id bigint NOT NULL, cust string, amount double, day date, flag boolean, "
        "qty int, st struct<a: int, b: string>) USING iceberg PARTITIONED BY (day) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    tw.java(
        f"INSERT INTO {q}.orders VALUES (1, 'c1', 10.0, DATE'2024-01-01', true, 1, named_struct('a', 1, 'b', 'x')), "
        "(2, 'c2', 20.0, DATE'2024-01-01', false, 2, null), (3, 'c1', null, DATE'2024-01-02', null, null, "
        "named_struct('a', null, 'b', 'y')), (4, null, 4.5, null, true, 4, named_struct('a', 4, 'b', null))"
    )
    tw.java(
        f"INSERT INTO {q}.orders VALUES (5, 'c3', 50.0, DATE'2024-01-02', false, 5, null), "
        "(6, 'c2', 6.0, DATE'2024-01-03', true, -6, null), (7, 'c3', 70.0, DATE'2024-01-03', false, 7, null)"
    )
    tw.java(f"DELETE FROM {q}.orders WHERE id IN (2, 6)")
    snaps = tw.java(
        f"SELECT snapshot_id, committed_at FROM {q}.orders.snapshots ORDER BY committed_at"
    ).collect()
    assert len(snaps) == 3
    tw.java(f"ALTER TABLE {q}.orders CREATE TAG t1 AS OF VERSION {snaps[0][0]}")
    tw.java(f"ALTER TABLE {q}.orders CREATE BRANCH b1")
    tw.java(f"INSERT INTO {q}.orders.branch_b1 VALUES (8, 'c8', 8.0, DATE'2024-01-08', true, 8, null)")
    tw.java(f"CREATE TABLE {q}.customers (cust string, region string) USING iceberg")
    tw.java(f"INSERT INTO {q}.customers VALUES ('c1', 'eu'), ('c2', 'us'), ('c3', 'eu'), ('c9', 'apac')")
    tw.spark.createDataFrame(
        [("eu", "Europe"), ("us", "Americas")], "region string, name string"
    ).createOrReplaceTempView("regions_tv")
    return {"snapshots": [s[0] for s in snaps], "times": [s[1] for s in snaps]}


def _same(tw: Twins, text: str) -> None:
    assert_same_rows(tw.ice(text), tw.java(text), context=text)


QUERIES = [
    "SELECT * FROM sqlq.db.orders",
    "SELECT id, amount FROM sqlq.db.orders WHERE cust = 'c1' AND amount > 3",
    "SELECT id FROM sqlq.db.orders WHERE NOT (cust = 'c1') OR qty IS NULL",
    "SELECT id, cust, sum(amount) OVER (PARTITION BY cust) FROM sqlq.db.orders WHERE flag = true AND qty BETWEEN -10 AND 4 AND day >= DATE '2024-01-01' AND qty NOT IN (1, 5)",
    "SELECT count(*) FROM sqlq.db.orders",
    "SELECT o.id, c.region FROM sqlq.db.orders o JOIN sqlq.db.customers c ON o.cust = c.cust WHERE c.region = 'eu'",
    "SELECT c.cust, o.id FROM sqlq.db.customers c LEFT JOIN sqlq.db.orders o ON o.cust = c.cust WHERE o.id IS NULL",
    "SELECT o.id, r.name FROM sqlq.db.orders o JOIN sqlq.db.customers c ON o.cust = c.cust "
    "JOIN regions_tv r ON r.region = c.region",
    "WITH big AS (SELECT * FROM sqlq.db.orders WHERE amount > 5) SELECT cust, max(amount) FROM big GROUP BY cust",
    "SELECT id FROM sqlq.db.orders WHERE cust IN (SELECT cust FROM sqlq.db.customers WHERE region = 'eu')",
    "SELECT id FROM sqlq.db.orders o WHERE EXISTS (SELECT 1 FROM sqlq.db.customers c WHERE c.cust = o.cust)",
    "SELECT id, (SELECT max(amount) FROM sqlq.db.orders) AS top FROM sqlq.db.orders WHERE id < 4",
    "SELECT cust FROM sqlq.db.orders UNION SELECT cust FROM sqlq.db.customers",
    "(SELECT cust FROM sqlq.db.customers INTERSECT ALL SELECT cust FROM sqlq.db.orders) EXCEPT SELECT 'c3'",
    "SELECT id, rank() OVER (PARTITION BY cust ORDER BY amount DESC) AS r FROM sqlq.db.orders",
    "SELECT sqlq.db.orders.id, st.a FROM sqlq.db.orders WHERE st.b = 'x' OR st.a = 4",
    "SELECT * FROM sqlq.db.orders NATURAL JOIN sqlq.db.customers",
]


@pytest.mark.parametrize("text", QUERIES)
def test_query(tw: Twins, orders: dict[str, Any], text: str) -> None:
    _same(tw, text)


@pytest.mark.parametrize(
    "clause",
    [
        "VERSION AS OF {s0}",
        "FOR SYSTEM_VERSION AS OF {s1}",
        "SYSTEM_VERSION AS OF {s1}",
        "TIMESTAMP AS OF '{t1}'",
        "FOR SYSTEM_TIME AS OF '{t0}'",
        "VERSION AS OF 't1'",
        "VERSION AS OF 'b1'",
        "VERSION AS OF '{s1}'",
    ],
)
def test_time_travel_clause(tw: Twins, orders: dict[str, Any], clause: str) -> None:
    s, t = orders["snapshots"], orders["times"]
    filled = clause.format(s0=s[0], s1=s[1], t0=timestamp_text(t[0]), t1=timestamp_text(t[1]))
    _same(
        tw,
        f"SELECT o.id, o.amount, c.region FROM sqlq.db.orders {filled} AS o "
        "LEFT JOIN sqlq.db.customers c ON o.cust = c.cust WHERE o.id > 1",
    )


@pytest.mark.parametrize("suffix", ["branch_b1", "tag_t1", "snapshot_id_{s0}", "`branch_b1`"])
def test_time_travel_name(tw: Twins, orders: dict[str, Any], suffix: str) -> None:
    name = suffix.format(s0=orders["snapshots"][0])
    _same(tw, f"SELECT id, amount FROM sqlq.db.orders.{name} WHERE amount > 5")


def test_time_travel_both_ways_refused(tw: Twins, orders: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="both table identifier and AS OF"):
        tw.ice(f"SELECT * FROM sqlq.db.orders.branch_b1 VERSION AS OF {orders['snapshots'][0]}")


@pytest.mark.parametrize(
    "text",
    [
        "SELECT snapshot_id, parent_id, operation, committed_at FROM sqlq.db.orders.snapshots",
        "SELECT * FROM sqlq.db.orders.history",
        "SELECT * FROM sqlq.db.orders.refs",
        "SELECT content, file_format, record_count, partition FROM sqlq.db.orders.files",
        "SELECT status, snapshot_id, sequence_number, data_file.record_count FROM sqlq.db.orders.entries",
        "SELECT partition, record_count, file_count FROM sqlq.db.orders.partitions",
        "SELECT content, added_data_files_count, added_delete_files_count FROM sqlq.db.orders.manifests",
        "SELECT content, record_count FROM sqlq.db.orders.all_files",
        "SELECT record_count FROM sqlq.db.orders.files VERSION AS OF {s0}",
        "SELECT s.operation, count(f.data_file.record_count) FROM sqlq.db.orders.snapshots s "
        "JOIN sqlq.db.orders.all_entries f ON s.snapshot_id = f.snapshot_id GROUP BY s.operation",
    ],
)
def test_metadata_table(tw: Twins, orders: dict[str, Any], text: str) -> None:
    _same(tw, text.format(s0=orders["snapshots"][0]))


@pytest.mark.one_spark_line
def test_use_sets_catalog_and_namespace(tw: Twins, orders: dict[str, Any]) -> None:
    try:
        tw.ice("USE sqlq.db")
        assert_same_rows(
            tw.ice("SELECT o.id, c.region FROM orders o JOIN customers c ON o.cust = c.cust WHERE id <> 1"),
            tw.java(
                "SELECT o.id, c.region FROM sqlq.db.orders o JOIN sqlq.db.customers c ON o.cust = c.cust WHERE id <> 1"
            ),
        )
        # a temp view's name stays Spark's
        assert_same_rows(tw.ice("SELECT * FROM regions_tv"), tw.java("SELECT * FROM regions_tv"))
        tw.ice("USE NAMESPACE db")
        assert_same_rows(
            tw.ice("SELECT count(*) FROM orders"), tw.java("SELECT count(*) FROM sqlq.db.orders")
        )
        # a multi-part name is relative to the current catalog, not its namespace (Spark's rule)
        assert_same_rows(
            tw.ice("SELECT * FROM db.orders.tag_t1"), tw.java("SELECT * FROM sqlq.db.orders.tag_t1")
        )
        # a Spark catalog's name is Spark's
        assert_same_rows(
            tw.ice("SELECT * FROM sqlq.db.customers"), tw.java("SELECT * FROM sqlq.db.customers")
        )
    finally:
        tw.ice("USE spark_catalog.default")
    # Spark's names again
    assert tw.ice("SELECT count(*) AS n FROM regions_tv").first()[0] == 2


def test_unknown_table_is_named(tw: Twins, orders: dict[str, Any]) -> None:
    with pytest.raises(icefloe.exceptions.NoSuchTableError, match=r"sqlq\.db\.nope"):
        tw.ice("SELECT * FROM sqlq.db.nope")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "CALL sqlq.system.no_such_procedure(table => 'db.x')",
            "CALL sqlq.system.no_such_procedure",
        ),
        ("CREATE VIEW sqlq.db.v AS SELECT * FROM sqlq.db.orders", "CREATE VIEW"),
        ("SHOW CREATE TABLE sqlq.db.orders AS SERDE", "AS SERDE"),
        (
            "UPDATE sqlq.db.orders o SET cust = c.region FROM sqlq.db.customers c WHERE c.cust = o.cust",
            r"UPDATE \.\.\. FROM",
        ),
    ],
)
def test_unsupported_statement_is_named(tw: Twins, orders: dict[str, Any], text: str, kind: str) -> None:
    before = tw.java("SELECT count(*) FROM sqlq.db.orders.snapshots").first()[0]
    with pytest.raises(NotSupportedError, match=kind):
        tw.ice(text)
    assert tw.java("SELECT count(*) FROM sqlq.db.orders.snapshots").first()[0] == before


def test_spark_statement_passes_through(tw: Twins, orders: dict[str, Any]) -> None:
    name = f"tv_{uuid.uuid4().hex[:6]}"
    tw.ice(f"CREATE TEMPORARY VIEW {name} AS SELECT 1 AS x")
    assert tw.ice(f"SELECT x FROM {name}").first()[0] == 1


# ---- DML and DDL on twin tables ----
def _twin(tw: Twins, mode: str = "copy-on-write", partitioning: str = "") -> str:
    """A fresh `db.<name>` in both twins: (id, region, amount, st), 6 rows in two inserts."""
    name = f"db.t_{uuid.uuid4().hex[:8]}"
    tw.setup(f"CREATE NAMESPACE IF NOT EXISTS {J}.db")
    tw.setup(
        f"CREATE TABLE {J}.{name} (id bigint, region string, amount double, st struct<a: int, b: string>) "
        f"USING iceberg {partitioning} TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='{mode}', "
        f"'write.update.mode'='{mode}', 'write.merge.mode'='{mode}')"
    )
    tw.setup(
        f"INSERT INTO {J}.{name} VALUES (1, 'eu', 1.0, named_struct('a', 1, 'b', 'x')), (2, 'us', 2.0, null), "
        "(3, null, 3.0, named_struct('a', null, 'b', 'y'))"
    )
    tw.setup(
        f"INSERT INTO {J}.{name} VALUES (4, 'eu', null, null), (5, 'us', 5.0, null), (6, 'apac', 6.0, null)"
    )
    return name


DML = [
    (
        "INSERT INTO {t} VALUES (7, 'eu', 7, named_struct('a', 7, 'b', 'z')), (8, null, null, null)",
        "copy-on-write",
    ),
    ("INSERT INTO {t} (amount, id, st, region) VALUES (9.5, 9, null, 'r')", "copy-on-write"),
    (
        "INSERT INTO {t} SELECT o.id, c.region, o.amount, null FROM sqlq.db.orders o "
        "JOIN sqlq.db.customers c ON o.cust = c.cust WHERE o.id > 3",
        "copy-on-write",
    ),
    ("DELETE FROM {t} WHERE region = 'eu' OR amount IS NULL", "merge-on-read"),
    ("DELETE FROM {t} WHERE NOT (region <> 'us')", "copy-on-write"),
    ("DELETE FROM {t} WHERE upper(region) = 'EU' AND st.a IS NULL", "merge-on-read"),
    ("DELETE FROM {t}", "copy-on-write"),
    ("UPDATE {t} SET amount = amount * 10, region = 'x' WHERE id >= 3", "merge-on-read"),
    ("UPDATE {t} AS u SET u.st.b = concat(u.region, '!') WHERE u.region IS NOT NULL", "copy-on-write"),
    # Evaluated by Spark (not an icefloe filter): the SET values read the row as it was
    (
        "UPDATE {t} SET id = id + 100, amount = amount + id, st.b = concat(region, '!') WHERE length(region) = 2",
        "merge-on-read",
    ),
    # With subqueries (Iceberg's docs have both forms): evaluated by Spark over the target rows;
    # the two EXISTS forms on both PySpark lines, the others (icefloe's logic alike) on 3.5
    pytest.param(
        "DELETE FROM {t} WHERE region IN (SELECT region FROM sqlq.db.customers WHERE cust <> 'c2')",
        "merge-on-read",
        marks=pytest.mark.one_spark_line,
    ),
    (
        "DELETE FROM {t} AS d WHERE EXISTS (SELECT 1 FROM sqlq.db.customers c WHERE c.region = d.region "
        "AND c.cust = 'c1') OR id = 6",
        "copy-on-write",
    ),
    pytest.param(
        "DELETE FROM {t} WHERE amount < (SELECT avg(amount) FROM sqlq.db.orders) AND region IS NOT NULL",
        "merge-on-read",
        marks=pytest.mark.one_spark_line,
    ),
    pytest.param(
        "DELETE FROM {t} WHERE id NOT IN (SELECT id FROM {t} WHERE amount > 2)",
        "copy-on-write",
        marks=pytest.mark.one_spark_line,
    ),
    (
        "UPDATE {t} AS u SET amount = u.amount * 2, region = upper(region) "
        "WHERE EXISTS (SELECT 1 FROM sqlq.db.customers c WHERE c.region = u.region)",
        "merge-on-read",
    ),
    pytest.param(
        "UPDATE {t} SET region = 'x' WHERE id IN (SELECT id FROM sqlq.db.orders WHERE cust = 'c1') AND amount > 0",
        "copy-on-write",
        marks=pytest.mark.one_spark_line,
    ),
    # SET values with uncorrelated subqueries (over another table, over the target as it was)
    (
        "UPDATE {t} SET amount = (SELECT max(amount) FROM sqlq.db.orders) + id WHERE id <= 2",
        "merge-on-read",
    ),
    # SET values with correlated subqueries (reading the target's row by its alias), aggregated
    # as both Spark lines take them: with a plain WHERE (icefloe's update over the aliased row),
    # with a WHERE holding a subquery (the one-row MERGE, the target's row a struct), and over
    # the target itself as it was before the statement
    (
        "UPDATE {t} AS u SET amount = (SELECT max(o.amount) FROM sqlq.db.orders o WHERE o.id = u.id) + u.id, "
        "st.a = (SELECT count(*) FROM sqlq.db.customers c WHERE c.region = u.region) WHERE id <= 4",
        "copy-on-write",
    ),
    (
        "UPDATE {t} u SET region = (SELECT max(c.cust) FROM sqlq.db.customers c WHERE c.region = u.region) "
        "WHERE EXISTS (SELECT 1 FROM sqlq.db.orders o WHERE o.id = u.id)",
        "copy-on-write",
    ),
    pytest.param(
        "UPDATE {t} AS u SET amount = (SELECT sum(x.amount) FROM {t} x WHERE x.region = u.region) WHERE amount > 1",
        "copy-on-write",
        marks=pytest.mark.one_spark_line,
    ),
    pytest.param(
        "UPDATE {t} AS u SET amount = (SELECT sum(amount) FROM {t}), "
        "region = CASE WHEN id IN (SELECT max(id) FROM sqlq.db.orders WHERE upper(cust) IN ('C1', upper('c3'))) THEN 'y' ELSE 'z' END "
        "WHERE u.region IN (SELECT region FROM sqlq.db.customers) AND id > 4",
        "copy-on-write",
        marks=pytest.mark.one_spark_line,
    ),
]


@pytest.mark.parametrize(("statement", "mode"), DML)
def test_dml(tw: Twins, orders: dict[str, Any], statement: str, mode: str) -> None:
    name = _twin(tw, mode)
    tw.both(statement.format(t=f"{J}.{name}"))
    tw.assert_same_table(name)


@pytest.mark.parametrize(
    "value",
    [
        # one row a row or none: Spark 4 runs it, 3.5 refuses it (not aggregated)
        "(SELECT c.region FROM sqlq.db.customers c WHERE c.cust = concat('c', CAST(u.id AS string)))",
        # two customers in 'eu': Spark 4 fails the job (more than one row), 3.5 refuses it
        "(SELECT c.cust FROM sqlq.db.customers c WHERE c.region = u.region)",
    ],
)
def test_correlated_set_value_as_the_spark_line_takes_it(
    tw: Twins, orders: dict[str, Any], value: str
) -> None:
    """A correlated scalar subquery that does not aggregate: icefloe runs or refuses it
    exactly when Java does on the session's Spark line, and a refused or failed statement
    leaves nothing in the table's folder."""
    name = _twin(tw, "copy-on-write")
    text = f"UPDATE {J}.{name} AS u SET region = {value} WHERE id > 1"
    folder = tw.wh[K] / name.replace(".", "/")
    before = sorted(folder.rglob("*"))
    try:
        tw.java(text).collect()
    except Exception as java_error:
        with pytest.raises(
            Exception, match=r"MUST_AGGREGATE|SCALAR_SUBQUERY_TOO_MANY_ROWS|more than one row"
        ):
            tw.ice(text)
        assert "MUST_AGGREGATE" in str(java_error) or "TOO_MANY_ROWS" in str(java_error), java_error
        assert sorted(folder.rglob("*")) == before
    else:
        tw.ice(text)
    tw.assert_same_table(name)


@pytest.mark.parametrize(
    "text",
    [
        # a plain WHERE: icefloe's update over the aliased row
        "UPDATE {t} AS u SET amount = (SELECT max(o.amount) FROM sqlq.db.orders o WHERE o.id = u.id) + u.id, "
        "st.a = (SELECT count(*) FROM sqlq.db.customers c WHERE c.region = u.region) WHERE id <= 4",
        # a WHERE with a subquery: the one-row MERGE, where the target's row is a struct
        pytest.param(
            "UPDATE {t} u SET region = (SELECT max(c.cust) FROM sqlq.db.customers c WHERE c.region = u.region) "
            "WHERE EXISTS (SELECT 1 FROM sqlq.db.orders o WHERE o.id = u.id)",
            marks=pytest.mark.one_spark_line,
        ),
    ],
)
def test_correlated_set_values_on_merge_on_read(tw: Twins, orders: dict[str, Any], text: str) -> None:
    """Java's merge-on-read UPDATE refuses a correlated SET value on both Spark lines (its
    plan puts the subquery in an Expand, where Spark does not take one); icefloe runs it,
    writing position deletes, and its rows are those Java's copy-on-write UPDATE writes."""
    name, reference = _twin(tw, "merge-on-read"), _twin(tw, "copy-on-write")
    with pytest.raises(Exception, match="UNSUPPORTED_CORRELATED_SCALAR_SUBQUERY"):
        tw.java(text.format(t=f"{J}.{name}")).collect()
    tw.java(text.format(t=f"{J}.{reference}")).collect()
    tw.ice(text.format(t=f"{J}.{name}"))
    assert_same_rows(
        tw.ice(f"SELECT * FROM {J}.{name}"), tw.java(f"SELECT * FROM {J}.{reference}"), context="icefloe"
    )
    assert_same_rows(
        tw.java(f"SELECT * FROM {K}.{name}"), tw.java(f"SELECT * FROM {J}.{reference}"), context="Java reads"
    )
    newest = f"SELECT summary FROM {K}.{name}.snapshots ORDER BY committed_at DESC LIMIT 1"
    summary = tw.java(newest).first()[0]
    assert int(summary["added-position-deletes"]) == 4, summary


def test_insert_needs_every_column(tw: Twins) -> None:
    """Spark 3.5 refuses an INSERT whose column list leaves a column out; Spark 4 fills an
    optional one with NULL. icefloe.spark.sql follows the session's Spark line, as Java does."""
    name = _twin(tw)
    text = f"INSERT INTO {J}.{name} (amount, id) VALUES (9.5, 9)"
    if PYSPARK_MAJOR < 4:
        with pytest.raises(Exception, match="region"):
            tw.java(text)
        with pytest.raises(ValidationError, match="region"):
            tw.ice(text)
    else:
        tw.java(text)
        tw.ice(text)
    tw.assert_same_table(name)


def _same_outcome(tw: Twins, text: str) -> None:
    """Java runs `text` on its twin, icefloe on its own: icefloe refuses it (ValidationError,
    nothing written) exactly when Java does."""
    try:
        tw.java(text).collect()
    except Exception:
        with pytest.raises(ValidationError):
            tw.ice(text)
        return
    tw.ice(text)


def test_insert_by_name(tw: Twins, orders: dict[str, Any]) -> None:
    name = _twin(tw)
    t = f"{J}.{name}"
    tw.both(
        f"INSERT INTO {t} BY NAME SELECT named_struct('b', 'q', 'a', 5) AS st, 2.5 AS AMOUNT, 'eu' AS region, 10 AS id"
    )
    tw.both(
        f"INSERT INTO TABLE {t} BY NAME SELECT cust AS region, id, amount, null AS st FROM sqlq.db.orders WHERE id > 4"
    )
    # columns left out (Spark's lines differ on it: icefloe follows the session's, as Java)
    _same_outcome(tw, f"INSERT INTO {t} BY NAME SELECT amount, id FROM sqlq.db.orders WHERE id < 3")
    _same_outcome(
        tw, f"INSERT INTO {t} BY NAME SELECT 1 AS id, 'x' AS nope, 1.0 AS amount, null AS st, 'r' AS region"
    )
    tw.assert_same_table(name)
    tw.both(
        f"INSERT OVERWRITE {t} BY NAME SELECT region, 1.5 AS amount, null AS st, id * 2 AS id FROM {t} WHERE id < 3"
    )
    tw.assert_same_table(name)


MERGES = [
    "MERGE INTO {t} t USING (SELECT * FROM VALUES (1, 'eu', 100.0), (2, 'us', 200.0), (10, 'new', 10.0) AS v(id, region, amount)) s "
    "ON t.id = s.id WHEN MATCHED AND s.amount > 150 THEN DELETE WHEN MATCHED THEN UPDATE SET t.amount = s.amount, st.a = 42 "
    "WHEN NOT MATCHED THEN INSERT (id, region, amount) VALUES (s.id, s.region, s.amount)",
    # unqualified names as Spark's MERGE resolves them: over both sides in a matched clause,
    # the source in NOT MATCHED, the target in NOT MATCHED BY SOURCE
    "MERGE INTO {t} AS t USING sqlq.db.customers AS c ON t.region = c.region AND c.cust IN ('c1', 'c2') "
    "WHEN MATCHED AND amount > 1 THEN UPDATE SET region = concat(cust, t.region) "
    "WHEN NOT MATCHED THEN INSERT (id, region) VALUES (length(cust) * 100, concat(region, cust)) "
    "WHEN NOT MATCHED BY SOURCE AND amount > 4 THEN DELETE",
    "MERGE INTO {t} t USING (SELECT id + 3 AS id, region, amount, st FROM {t}) s ON t.id = s.id "
    "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * "
    "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET amount = amount * 10 + id",
    "MERGE INTO {t} t USING (SELECT id, cust AS region, amount FROM sqlq.db.orders WHERE id > 4) s ON t.id = s.id "
    "WHEN MATCHED THEN DELETE",
]


@pytest.mark.parametrize(
    ("statement", "mode"),
    list(zip(MERGES, ["merge-on-read", "copy-on-write", "merge-on-read", "copy-on-write"])),
)
def test_merge(tw: Twins, orders: dict[str, Any], statement: str, mode: str) -> None:
    name = _twin(tw, mode)
    tw.both(statement.format(t=f"{J}.{name}"))
    tw.assert_same_table(name)


def test_insert_into_branch(tw: Twins) -> None:
    name = _twin(tw)
    tw.setup(f"ALTER TABLE {J}.{name} CREATE BRANCH audit")
    tw.both(f"INSERT INTO {J}.{name}.branch_audit VALUES (70, 'b', 7.0, null)")
    tw.assert_same_table(name)
    assert_same_rows(
        tw.ice(f"SELECT * FROM {J}.{name}.branch_audit"), tw.java(f"SELECT * FROM {J}.{name}.branch_audit")
    )


@pytest.mark.one_spark_line
@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE TABLE {t} (id bigint NOT NULL COMMENT 'key', ts timestamp, ntz timestamp_ntz, d date, s string, "
        "n decimal(9,2), b boolean, bin binary, st struct<x: int NOT NULL, y: array<string>>, m map<string, bigint>) "
        "USING iceberg PARTITIONED BY (bucket(4, id), days(ts), truncate(3, s), b) COMMENT 'the table' "
        "TBLPROPERTIES ('format-version'='2', 'write.target-file-size-bytes'='1000000')",
        "CREATE TABLE IF NOT EXISTS {t} (id int, ts timestamp) USING iceberg PARTITIONED BY (hours(ts))",
        "CREATE TABLE {t} (id int, ts timestamp_ntz, v string) USING iceberg PARTITIONED BY (years(ts), v) "
        "TBLPROPERTIES ('format-version'='3')",
    ],
)
def test_create_table(tw: Twins, ddl: str) -> None:
    tw.setup(f"CREATE NAMESPACE IF NOT EXISTS {J}.db")
    name = f"db.c_{uuid.uuid4().hex[:8]}"
    tw.both(ddl.format(t=f"{J}.{name}"))
    tw.assert_same_metadata(name)
    tw.both(f"INSERT INTO {J}.{name} SELECT * FROM {J}.{name}")  # no rows, one snapshot
    tw.assert_same_table(name)
    again = (
        ddl.format(t=f"{J}.{name}")
        .replace(" IF NOT EXISTS", "")
        .replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS")
    )
    tw.both(again)  # nothing happens
    tw.assert_same_table(name)
    tw.both(f"DROP TABLE {J}.{name}")
    assert not tw.catalogs[J].table_exists(name)
    tw.both(f"DROP TABLE IF EXISTS {J}.{name}")


ALTERS = [
    "ALTER TABLE {t} ADD COLUMN extra string COMMENT 'added'",
    "ALTER TABLE {t} ADD COLUMNS (c1 int, c2 array<string>)",
    "ALTER TABLE {t} ADD COLUMN ST.c int AFTER A",
    "ALTER TABLE {t} ADD COLUMN first_col bigint FIRST",
    "ALTER TABLE {t} DROP COLUMN amount",
    "ALTER TABLE {t} DROP COLUMN st.b",
    "ALTER TABLE {t} RENAME COLUMN Region TO area",
    "ALTER TABLE {t} RENAME COLUMN st.a TO aa",
    "ALTER TABLE {t} SET TBLPROPERTIES ('read.split.target-size'='1000', 'custom'='x')",
    "ALTER TABLE {t} ADD PARTITION FIELD bucket(8, id)",
    "ALTER TABLE {t} ADD PARTITION FIELD truncate(2, area) AS reg",
    "ALTER TABLE {t} SET TBLPROPERTIES ('format-version'='3')",
]


@pytest.mark.one_spark_line
def test_alter_table(tw: Twins) -> None:
    """Each ALTER TABLE in turn on one pair of twins, the metadata compared after each."""
    name = _twin(tw)
    for alter in ALTERS:
        tw.both(alter.format(t=f"{J}.{name}"))
        tw.assert_same_metadata(name)
    tw.both(
        f"INSERT INTO {J}.{name} VALUES (0, 100, 'eu', named_struct('aa', 1, 'c', 2), 'e', 1, array('q'))"
    )
    tw.assert_same_table(name)


@pytest.mark.one_spark_line
def test_partition_field_evolution(tw: Twins) -> None:
    name = _twin(tw, partitioning="PARTITIONED BY (region, bucket(4, id))")
    t = f"{J}.{name}"
    tw.both(f"ALTER TABLE {t} DROP PARTITION FIELD region")
    tw.both(f"ALTER TABLE {t} DROP PARTITION FIELD bucket(4, id)")
    tw.both(f"ALTER TABLE {t} ADD PARTITION FIELD truncate(1, region) AS r1")
    tw.both(f"ALTER TABLE {t} REPLACE PARTITION FIELD r1 WITH bucket(2, id) AS b2")
    tw.both(f"INSERT INTO {t} VALUES (11, 'eu', 1.0, null)")
    tw.assert_same_table(name)


@pytest.mark.one_spark_line
def test_namespaces_and_show_tables(tw: Twins) -> None:
    ns = f"{J}.ns_{uuid.uuid4().hex[:6]}"
    tw.both(f"CREATE NAMESPACE {ns}")
    tw.both(f"CREATE NAMESPACE IF NOT EXISTS {ns}")
    tw.both(f"CREATE TABLE {ns}.alpha (id int) USING iceberg")
    tw.both(f"CREATE TABLE {ns}.beta (id int) USING iceberg")
    for show in (f"SHOW TABLES IN {ns}", f"SHOW TABLES FROM {ns} LIKE 'al*'", f"SHOW TABLES IN {ns} 'x*|b*'"):
        assert_same_rows(tw.ice(show), tw.java(show), context=show)
    tw.both(f"CREATE NAMESPACE {ns}.sub")
    tw.both(f"CREATE NAMESPACE {ns}.`odd-name`")
    leaf = ns.split(".")[1]
    for show in (
        f"SHOW NAMESPACES IN {J}",
        f"SHOW NAMESPACES IN {J} LIKE '{leaf}|nope*'",
        f"SHOW NAMESPACES IN {ns}",
        f"SHOW DATABASES FROM {ns} LIKE '*SUB'",
        f"SHOW SCHEMAS IN {ns} '*odd*'",
    ):
        assert_same_rows(tw.ice(show), tw.java(show), context=show)
    try:
        tw.ice(f"USE {J}")
        assert_same_rows(tw.ice("SHOW NAMESPACES"), tw.java(f"SHOW NAMESPACES IN {J}"))
    finally:
        tw.ice("USE spark_catalog.default")
    tw.both(f"DROP NAMESPACE {ns}.sub CASCADE")  # empty: dropped, as Java's
    tw.both(f"DROP NAMESPACE {ns}.`odd-name`")
    # Java's SparkCatalog ignores CASCADE: a namespace that holds tables stays, for both
    with pytest.raises(Exception, match="not empty"):
        tw.java(f"DROP NAMESPACE {ns} CASCADE").collect()
    with pytest.raises(icefloe.exceptions.NamespaceNotEmptyError, match="not empty"):
        tw.ice(f"DROP NAMESPACE {ns} CASCADE")
    tw.both(f"DROP TABLE {ns}.alpha")
    tw.both(f"DROP TABLE {ns}.beta")
    tw.both(f"DROP NAMESPACE {ns}")
    tw.both(f"DROP NAMESPACE IF EXISTS {ns}")
    assert not tw.catalogs[J].namespace_exists(ns.split(".", 1)[1])


# ---- aggregate pushdown: count / min / max from manifest metrics ----
_METRIC_COLUMNS = (
    "id bigint, i int, d double, f float, n decimal(9,2), dt date, ts timestamp, ntz timestamp_ntz, "
    "b boolean, s string, p string"
)
_METRIC_ROWS = [
    "(1, 10, 1.5, 1.0, 1.25, DATE'2024-01-01', TIMESTAMP'2024-01-01 10:00:00', TIMESTAMP_NTZ'2024-01-01 10:00:00', true, 'a string longer than sixteen', 'a'), "
    "(2, null, -2.5, null, -3.50, null, null, null, null, null, 'a'), "
    "(3, 30, null, 3.0, null, DATE'2023-12-31', TIMESTAMP'2023-12-31 23:59:59.999999', TIMESTAMP_NTZ'1969-12-31 23:59:59.5', false, 'zz', 'b')",
    "(4, -40, 4.0, cast('NaN' as float), 40.00, DATE'2024-02-29', TIMESTAMP'2024-02-29 00:00:00', TIMESTAMP_NTZ'2024-02-29 00:00:00', false, 'b', 'b'), "
    "(5, null, null, null, null, null, null, null, null, null, 'c'), (6, null, null, null, null, null, null, null, null, null, null)",
]


def _metric_table(
    tw: Twins, name: str, properties: str = "", partitioning: str = "p", order: str | None = None
) -> str:
    """`sqlq.db.<name>` written by Java in two inserts (five files over identity partitions
    `p`, or `partitioning`; `WRITE ORDERED BY order`): nulls, an all-null partition, a NaN
    float, a string longer than 16 characters."""
    tw.java(
        f"CREATE TABLE {Q}.db.{name} ({_METRIC_COLUMNS}) USING iceberg PARTITIONED BY ({partitioning}) "
        f"TBLPROPERTIES ('format-version'='2'{properties})"
    )
    if order is not None:
        tw.java(f"ALTER TABLE {Q}.db.{name} WRITE ORDERED BY {order}")
    for rows in _METRIC_ROWS:
        tw.java(f"INSERT INTO {Q}.db.{name} VALUES {rows}")
    return f"{Q}.db.{name}"


@pytest.fixture(scope="module")
def metric_tables(tw: Twins, orders: dict[str, Any]) -> None:
    _metric_table(tw, "m")
    tw.java(f"CREATE TABLE {Q}.db.m0 ({_METRIC_COLUMNS}) USING iceberg PARTITIONED BY (p)")  # no snapshot
    _metric_table(
        tw, "mc", ", 'write.metadata.metrics.default'='counts', 'write.metadata.metrics.column.d'='none'"
    )
    _metric_table(tw, "mt", partitioning="months(dt), bucket(2, id)")
    _metric_table(tw, "mw", ", 'write.metadata.metrics.max-inferred-column-defaults'='3'")  # id, i, d
    # counts, but the sort columns keep bounds (Java's MetricsConfig.forTable)
    _metric_table(tw, "ms", ", 'write.metadata.metrics.default'='counts'", order="id, days(ts)")


_PUSHED = [
    "SELECT count(*) FROM sqlq.db.m",
    "SELECT count(*), count(d), count(s), min(id), max(id), min(i), max(i), min(d), max(d), min(n), max(n), "
    "min(dt), max(dt), min(ts), max(ts), min(ntz), max(ntz), min(b), max(b) FROM sqlq.db.m",
    "SELECT max(id) + 1 AS top, count(1) AS n, min(m.i) FROM sqlq.db.m AS m WHERE p = 'a'",
    "SELECT count(*), max(i) FROM sqlq.db.m WHERE p IN ('a', 'b') AND p IS NOT NULL",
    "SELECT count(*), max(i), min(dt) FROM sqlq.db.m WHERE p = 'zzz'",
    "SELECT count(*), max(i) FROM sqlq.db.m WHERE p IS NULL OR p = 'c'",
    "WITH c AS (SELECT max(id), min(ts) FROM sqlq.db.m) SELECT * FROM c",
    "SELECT count(*), count(i) FROM sqlq.db.mc",
    "SELECT count(*), count(i), max(ts) FROM sqlq.db.m0 WHERE p = 'a'",
    "SELECT count(*), max(id), min(amount) FROM sqlq.db.orders VERSION AS OF 't1'",
    # fields of a struct column (Java pushes them too), qualified by the alias or not
    "SELECT max(st.a), min(o.st.a), count(st.b) FROM sqlq.db.orders VERSION AS OF 't1' AS o",
    # months(dt): whole months leave no residual on any file
    "SELECT count(*), max(id), min(i) FROM sqlq.db.mt WHERE dt >= DATE'2024-01-01'",
    "SELECT count(*), min(id) FROM sqlq.db.mt WHERE dt < DATE'2024-01-01' OR dt IS NULL",
    "SELECT count(*) FROM sqlq.db.mt WHERE dt > DATE'2025-01-01'",
    # part of January: its one file's dt bounds (2024-01-01) prune it, February's has no
    # residual (Java reads here: the filter does not select whole months)
    "SELECT count(*), max(id) FROM sqlq.db.mt WHERE dt >= DATE'2024-01-15'",
    "SELECT count(*), max(id), min(i), count(d) FROM sqlq.db.mw",  # the 3 columns with metrics
    "SELECT count(*), min(id), max(id), min(ts), max(ts), count(i) FROM sqlq.db.ms",  # sorted: bounds
]
_READ = [
    "SELECT max(f), min(s), max(s) FROM sqlq.db.m",  # a NaN; truncatable strings
    "SELECT count(*), max(id) FROM sqlq.db.m WHERE id > 2",  # a filter on rows, not partitions
    "SELECT max(i), min(dt) FROM sqlq.db.mc",  # counts only
    "SELECT count(*), count(d) FROM sqlq.db.mc",  # no metrics for d
    "SELECT count(*), max(qty), count(cust) FROM sqlq.db.orders",  # position deletes
    "SELECT p, count(*) FROM sqlq.db.m GROUP BY p",
    "SELECT count(DISTINCT p), sum(i) FROM sqlq.db.m",
    "SELECT count(*), max(id) FROM sqlq.db.mt WHERE dt >= DATE'2023-12-15'",  # December's file: a residual
    "SELECT count(*), max(i) FROM sqlq.db.mt WHERE id = 3",  # bucket: no strict projection
    "SELECT max(dt) FROM sqlq.db.mw",  # past the inferred 3: none
    "SELECT max(i) FROM sqlq.db.ms",  # counts
    "SELECT max(st.b) FROM sqlq.db.orders VERSION AS OF 't1'",  # a string field
]


def _reads_a_table(df: Any) -> bool:
    """Whether a DataFrame's optimized plan has a leaf that reads rows (a file relation, an
    RDD, icefloe's mapInArrow read), not only Spark's one-row relation."""
    plan = str(df._jdf.queryExecution().optimizedPlan().toString())
    return re.search(r"(?<!OneRow)Relation|LogicalRDD|MapInArrow|RDD\b", plan) is not None


@pytest.mark.parametrize("text", _PUSHED + _READ)
def test_aggregate(tw: Twins, metric_tables: None, text: str) -> None:
    ours = tw.ice(text)
    assert _reads_a_table(ours) == (text in _READ), str(ours._jdf.queryExecution().optimizedPlan())
    java = tw.java(text)
    assert_same_rows(ours, java, context=text)
    assert [(f.name, f.dataType, f.nullable) for f in ours.schema] == [
        (f.name, f.dataType, f.nullable) for f in java.schema
    ]


def test_aggregate_pushdown_reads_no_data_file(tw: Twins, orders: dict[str, Any]) -> None:
    """The pushed aggregates of a table whose data files are gone still equal Java's answers
    from before; a query Java would read fails there."""
    name = _metric_table(tw, f"gone_{uuid.uuid4().hex[:6]}")
    pushed = [re.sub(rf"{Q}\.db\.m\b", name, q) for q in _PUSHED[:7]]
    expected = {q: canonical_rows(tw.java(q)) for q in pushed}
    folder = tw.wh[Q] / name.split(".", 1)[1].replace(".", "/") / "data"
    gone = list(folder.rglob("*.parquet"))
    assert len(gone) == 5
    for f in gone:
        f.unlink()
    for q in pushed:
        assert_same_rows(tw.ice(q), expected[q], context=q)
    with pytest.raises(Exception, match=r"(?i)not.*(exist|found)|FileNotFound"):
        tw.ice(f"SELECT max(id) FROM {name} WHERE id > 2").collect()
    try:
        tw.spark.conf.set("spark.sql.iceberg.aggregate-push-down.enabled", "false")
        with pytest.raises(Exception, match=r"(?i)not.*(exist|found)|FileNotFound"):
            tw.ice(f"SELECT count(*) FROM {name}").collect()
    finally:
        tw.spark.conf.unset("spark.sql.iceberg.aggregate-push-down.enabled")
