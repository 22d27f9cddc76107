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

import datetime as dt
import math
import re
import uuid
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.exceptions import NotSupportedError, ValidationError
from support.catalogs import java_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows, canonical_rows
from support.session import PYSPARK_MAJOR

pytestmark = [pytest.mark.spark, pytest.mark.interop]

Q = "sqlq"  # queries: Java's and icefloe's catalog on one warehouse
J = "sqlj"  # DDL / DML: Java's twin (Spark) and icefloe's twin (icefloe) under one name
K = "sqlk"  # Spark catalog on icefloe's twin warehouse: Java reads what icefloe wrote


class Twins:
    """The module's catalogs: `icefloe.spark.sql` with them, Java's SQL, Java's tables."""

    def __init__(self, spark: Any, root: Path) -> None:
        self.spark = spark
        self.wh = {Q: root / "q", J: root / "j", K: root / "k"}
        for path in self.wh.values():
            path.mkdir()
        for name in (Q, J, K):
            set_java_catalog(
                spark,
                name,
                java_catalog_conf("filesystem", {"warehouse": str(self.wh[name])}, self.wh[name], None),
            )
        self.catalogs = {
            Q: icefloe.load_catalog(Q, type="filesystem", warehouse=str(self.wh[Q])),
            J: icefloe.load_catalog(J, type="filesystem", warehouse=str(self.wh[K])),
        }
        self._java: dict[str, Any] = {}

    def ice(self, text: str) -> Any:
        return icefloe.spark.sql(self.spark, text, catalogs=self.catalogs)

    def java(self, text: str) -> Any:
        return self.spark.sql(text)

    def both(self, text: str) -> None:
        """A twin-table statement: Java's on `sqlj`, icefloe's on its `sqlj`."""
        self.java(text).collect()
        self.ice(text).collect()

    def setup(self, text: str) -> None:
        """Java runs `text` (naming `sqlj`) on both twins."""
        self.java(text).collect()
        self.java(text.replace(f"{J}.", f"{K}.")).collect()

    def java_table(self, catalog: str, ident: str) -> Any:
        if catalog not in self._java:
            conf = self.spark._jsc.hadoopConfiguration()
            jvm = self.spark._jvm
            self._java[catalog] = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
                conf, f"file://{self.wh[catalog]}"
            )
        tid = self.spark._jvm.org.apache.iceberg.catalog.TableIdentifier.parse(ident)
        return self._java[catalog].loadTable(tid)

    def assert_same_table(self, ident: str, columns: str = "*") -> None:
        """`sqlj.<ident>` (Java's twin) and icefloe's twin hold the same rows, read by Java
        and by icefloe, and have the same schema, spec and properties."""
        java_rows = self.java(f"SELECT {columns} FROM {J}.{ident}")
        assert_same_rows(self.java(f"SELECT {columns} FROM {K}.{ident}"), java_rows, context="Java reads")
        assert_same_rows(self.ice(f"SELECT {columns} FROM {J}.{ident}"), java_rows, context="icefloe reads")
        self.assert_same_metadata(ident)

    def assert_same_metadata(self, ident: str) -> None:
        java, ours = self.java_table(J, ident), self.java_table(K, ident)
        assert str(ours.schema().toString()) == str(java.schema().toString())
        assert str(ours.spec().toString()) == str(java.spec().toString())
        skip = {"write.parquet.compression-codec"}
        java_props = {k: v for k, v in dict(java.properties()).items() if k not in skip}
        our_props = {k: v for k, v in dict(ours.properties()).items() if k not in skip}
        assert our_props == java_props
        jv, ov = java.operations().current().formatVersion(), ours.operations().current().formatVersion()
        assert ov == jv


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    t = Twins(spark, tmp_path_factory.mktemp("sql"))
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


def _ts(value: Any) -> str:
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f") if value.tzinfo else str(value)


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
    filled = clause.format(s0=s[0], s1=s[1], t0=_ts(t[0]), t1=_ts(t[1]))
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
            "UPDATE sqlq.db.orders o SET qty = (SELECT max(c.cust) FROM sqlq.db.customers c WHERE c.cust = o.cust)",
            "SET with a correlated subquery",
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
    pytest.param(
        "UPDATE {t} AS u SET amount = (SELECT sum(amount) FROM {t}), region = 'y' "
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


def _metric_table(tw: Twins, name: str, properties: str = "") -> str:
    """`sqlq.db.<name>` written by Java in two inserts (five files over identity partitions
    `p`): nulls, an all-null partition, a NaN float, a string longer than 16 characters."""
    tw.java(
        f"CREATE TABLE {Q}.db.{name} ({_METRIC_COLUMNS}) USING iceberg PARTITIONED BY (p) "
        f"TBLPROPERTIES ('format-version'='2'{properties})"
    )
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
]
_READ = [
    "SELECT max(f), min(s), max(s) FROM sqlq.db.m",  # a NaN; truncatable strings
    "SELECT count(*), max(id) FROM sqlq.db.m WHERE id > 2",  # a filter on rows, not partitions
    "SELECT max(i), min(dt) FROM sqlq.db.mc",  # counts only
    "SELECT count(*), count(d) FROM sqlq.db.mc",  # no metrics for d
    "SELECT count(*), max(qty), count(cust) FROM sqlq.db.orders",  # position deletes
    "SELECT p, count(*) FROM sqlq.db.m GROUP BY p",
    "SELECT count(DISTINCT p), sum(i) FROM sqlq.db.m",
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
    return {"s1": s1, "t1": _ts(t1), "t1_seconds": math.ceil(t1.timestamp())}


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
