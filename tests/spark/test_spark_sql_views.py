# ruff: noqa: E501
"""Iceberg views through `icefloe.spark.sql`, against Iceberg Java's Spark SQL on one shared SQL
catalog: Java's JdbcCatalog (Spark catalog `vw_sqlite`, schema V1) and icefloe's SqlCatalog
(`vw_sqlite`) on the same sqlite database and warehouse, then Java's RESTCatalog and
icefloe's on the run's REST server (`vw_rest`), so each engine reads every view the other
writes. Both PySpark passes run it (Java's runtime for Spark 3.5 and for 4.1). Namespace
statements are twin-tested here too (they need a catalog that stores namespace properties).

Each statement runs twice, by Java on a view `*_java` and by icefloe on a view `*_ice`; the
two views' metadata (schema with ids, query text, default catalog and namespace, properties,
versions) must be equal, and the rows of both views equal when read by Java and by icefloe.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.exceptions import NoSuchViewError, NotSupportedError, ValidationError, ViewAlreadyExistsError
from support.catalogs import catalog_props_for, java_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows, canonical_rows
from support.session import PYSPARK_MAJOR

pytestmark = [pytest.mark.spark, pytest.mark.interop]


@dataclass
class Shared:
    name: str  # Java's Spark catalog and icefloe's, under one name
    catalog: Any
    ns: str  # the test's namespace in the shared catalog


@pytest.fixture(scope="module", params=["sqlite", "rest"])
def shared(
    request: pytest.FixtureRequest, spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Shared]:
    """Java's catalog `vw` and icefloe's, on one SQL database (JdbcCatalog V1) or one REST server
    (Iceberg's RESTCatalogServer, its warehouse on the S3 test server)."""
    root = tmp_path_factory.mktemp("views")
    s3 = request.getfixturevalue("s3") if request.param == "rest" else None
    name = f"vw_{request.param}"  # Spark keeps a catalog it made: one name per kind
    props = {**catalog_props_for(request, request.param, root, s3=s3, warehouse=str(root)), "name": name}
    set_java_catalog(spark, name, java_catalog_conf(request.param, props, root, s3))
    catalog = icefloe.load_catalog(**props)
    ns = f"v{uuid.uuid4().hex[:8]}"
    spark.sql(f"CREATE NAMESPACE {name}.{ns}")
    spark.sql(
        f"CREATE TABLE {name}.{ns}.t (id bigint NOT NULL, name string, amt double, st struct<a: int, b: string>) USING iceberg"
    )
    spark.sql(
        f"INSERT INTO {name}.{ns}.t VALUES (1, 'a', 0.5, named_struct('a', 1, 'b', 'x')), (2, 'b', 2.0, null), "
        "(3, null, 3.5, named_struct('a', null, 'b', 'y')), (4, 'd', 4.0, named_struct('a', 1, 'b', 'z'))"
    )
    yield Shared(name, catalog, ns)
    spark.sql("USE spark_catalog.default")


def ice(spark: Any, shared: Shared, text: str) -> Any:
    return icefloe.spark.sql(spark, text, catalogs={shared.name: shared.catalog})


def _metadata(shared: Shared, name: str) -> dict[str, Any]:
    """What must be equal between twin views: all but the uuid, location, times and summary."""
    view = shared.catalog.load_view((shared.ns, name))
    m = view.metadata.to_dict()
    versions = []
    for v in m["versions"]:
        v = {k: x for k, x in v.items() if k not in ("timestamp-ms", "summary")}
        versions.append(v)
    return {
        "format-version": m["format-version"],
        "schemas": m["schemas"],
        "current-version-id": m["current-version-id"],
        "versions": versions,
        "version-log": [e["version-id"] for e in m["version-log"]],
        "properties": m.get("properties", {}),
    }


def _twin(spark: Any, shared: Shared, statement: str, stem: str) -> tuple[str, str]:
    """`statement` (with `{v}` for the view's name) run by Java on `<stem>_java` and by icefloe
    on `<stem>_ice`; their metadata equal."""
    spark.sql(statement.format(v=f"{stem}_java")).collect()
    ice(spark, shared, statement.format(v=f"{stem}_ice")).collect()
    java, ours = _metadata(shared, f"{stem}_java"), _metadata(shared, f"{stem}_ice")
    for m, name in ((java, f"{stem}_java"), (ours, f"{stem}_ice")):
        for v in m["versions"]:
            for r in v["representations"]:
                r["sql"] = r["sql"].replace(name, "{v}")
    assert ours == java, f"{statement}\nicefloe: {ours}\nJava:    {java}"
    return f"{stem}_java", f"{stem}_ice"


def _read_alike(
    spark: Any, shared: Shared, java: str, ours: str, query: str = "SELECT * FROM {n}.{v}"
) -> None:
    """Both views' rows, read by Java and by icefloe, are Java's rows of Java's view."""
    n = f"{shared.name}.{shared.ns}"
    want = canonical_rows(spark.sql(query.format(n=n, v=java)))
    assert want, "a twin read that returns nothing proves nothing"
    assert_same_rows(spark.sql(query.format(n=n, v=ours)), want, context=f"Java reads icefloe's {ours}")
    assert_same_rows(
        ice(spark, shared, query.format(n=n, v=java)), want, context=f"icefloe reads Java's {java}"
    )
    assert_same_rows(ice(spark, shared, query.format(n=n, v=ours)), want, context=f"icefloe reads {ours}")


@pytest.mark.parametrize(
    ("stem", "statement"),
    [
        ("filtered", "CREATE VIEW {n}.{{v}} AS SELECT id, name FROM {n}.t WHERE amt > 1"),
        (
            "named",
            "CREATE VIEW {n}.{{v}} (ident COMMENT 'the id', label) COMMENT 'two columns' "
            "TBLPROPERTIES ('k1' = 'v1', 'k2' = 'v2') AS SELECT id, upper(name) FROM {n}.t",
        ),
        (
            "grouped",
            "CREATE VIEW {n}.{{v}} AS SELECT t.st.a AS a, count(*) AS n, max(amt) FROM {n}.t t GROUP BY t.st.a",
        ),
        (
            "nested",
            "CREATE VIEW {n}.{{v}} AS SELECT id, st, array(id, id + 1) AS ids, map(name, amt) AS m FROM {n}.t WHERE name IS NOT NULL",
        ),
        (
            "with_cte",
            "CREATE VIEW {n}.{{v}} AS WITH w AS (SELECT id FROM {n}.t) SELECT w.id, t.name FROM w JOIN {n}.t t ON w.id = t.id",
        ),
    ],
)
def test_views_each_engine_creates_read_alike(spark: Any, shared: Shared, stem: str, statement: str) -> None:
    n = f"{shared.name}.{shared.ns}"
    java, ours = _twin(spark, shared, statement.format(n=n), stem)
    _read_alike(spark, shared, java, ours)
    _read_alike(spark, shared, java, ours, "SELECT count(*) FROM {n}.{v} WHERE 1 = 1")
    # (the SQL catalogs' warehouses are spelled `file:///...` for Java and `/...` for icefloe)
    for describe in (
        "DESCRIBE {}",
        "DESCRIBE EXTENDED {}",
        "SHOW CREATE TABLE {}",
        "SHOW TBLPROPERTIES {}",
        "SHOW TBLPROPERTIES {} ('k1')",
        "SHOW TBLPROPERTIES {} ('nope')",
    ):
        want = [
            tuple(str(x).replace(java, ours).replace("file://", "") for x in r)
            for r in spark.sql(describe.format(f"{n}.{java}")).collect()
        ]
        got = [
            tuple(str(x).replace("file://", "") for x in r)
            for r in ice(spark, shared, describe.format(f"{n}.{ours}")).collect()
        ]
        if describe.startswith("SHOW TBLPROPERTIES"):  # (Java's rows come in a hash map's order)
            want, got = sorted(want), sorted(got)
        assert got == want, describe
    # A view's column is not described yet: refused, never the whole view's rows.
    with pytest.raises(NotSupportedError, match="view column"):
        ice(spark, shared, f"DESCRIBE {n}.{ours} id")


def test_nested_nullability_of_a_view_is_javas(spark: Any, shared: Shared) -> None:
    """A view's nested columns keep the nullability Java's runtime gives them: a struct's
    required field, a list's required elements, a map's required values (from the table, and
    through expressions that keep or lose them), equal in both engines' view metadata."""
    from icefloe.schema import Schema
    from icefloe.types import IntegerType, ListType, LongType, MapType, NestedField, StringType, StructType

    n = f"{shared.name}.{shared.ns}"
    shared.catalog.create_table(
        (shared.ns, "nested_required"),
        schema=Schema(
            NestedField(1, "id", LongType(), required=True),
            NestedField(
                2,
                "st",
                StructType(
                    NestedField(5, "a", IntegerType(), required=True), NestedField(6, "b", StringType())
                ),
            ),
            NestedField(3, "l", ListType(7, IntegerType(), element_required=True)),
            NestedField(4, "m", MapType(8, StringType(), 9, IntegerType(), value_required=True)),
        ),
    )
    spark.sql(
        f"INSERT INTO {n}.nested_required VALUES (1, named_struct('a', 1, 'b', null), array(1, 2), map('k', 3)), "
        "(2, null, null, map('j', 4, 'k', 5))"
    )
    statement = (
        f"CREATE VIEW {n}.{{v}} AS SELECT id, st, l, m, st.a AS a, transform(l, x -> x + 1) AS l1, "
        "transform(l, x -> IF(x > 1, x, NULL)) AS l2, map_values(m) AS mv, "
        f"named_struct('s', st, 'n', array(named_struct('x', id))) AS deep FROM {n}.nested_required"
    )
    java, ours = _twin(spark, shared, statement, "nested_required")
    fields = {f["name"]: f for f in _metadata(shared, ours)["schemas"][0]["fields"]}
    assert fields["st"]["type"]["fields"][0]["required"] and fields["l"]["type"]["element-required"]
    assert fields["m"]["type"]["value-required"] and not fields["l2"]["type"]["element-required"]
    _read_alike(spark, shared, java, ours)


def test_unqualified_names_resolve_in_the_namespace_current_at_creation(spark: Any, shared: Shared) -> None:
    """After `USE vw.<ns>` (Java's `USE` and icefloe's), `t` and `<ns>.t` in a view are
    `vw.<ns>.t` wherever the view is read later: the default namespace is recorded, the default
    catalog is not (it is the view's own), as Java records them."""
    spark.sql(f"USE {shared.name}.{shared.ns}")
    ice(spark, shared, f"USE {shared.name}.{shared.ns}")
    try:
        java, ours = _twin(
            spark,
            shared,
            f"CREATE VIEW {{v}} AS SELECT t.id, u.amt FROM t JOIN {shared.ns}.t u ON t.id = u.id WHERE t.id > 1",
            "unqualified",
        )
    finally:
        spark.sql("USE spark_catalog.default")
        ice(spark, shared, "USE spark_catalog.default")
    version = shared.catalog.load_view((shared.ns, ours)).current_version()
    assert (version.default_catalog, version.default_namespace) == (None, (shared.ns,))
    _read_alike(spark, shared, java, ours)


def test_a_view_over_a_view_and_the_lifecycle_of_a_view(spark: Any, shared: Shared) -> None:
    n = f"{shared.name}.{shared.ns}"
    base_java, base_ice = _twin(spark, shared, f"CREATE VIEW {n}.{{v}} AS SELECT id, name FROM {n}.t", "base")
    # each engine's view over the other's
    spark.sql(f"CREATE VIEW {n}.over_java AS SELECT id FROM {n}.{base_ice} WHERE id < 4").collect()
    ice(spark, shared, f"CREATE VIEW {n}.over_ice AS SELECT id FROM {n}.{base_java} WHERE id < 4")
    _read_alike(spark, shared, "over_java", "over_ice")

    # properties
    for stmt in (
        "ALTER VIEW {n}.{v} SET TBLPROPERTIES ('a' = '1', 'b' = '2')",
        "ALTER VIEW {n}.{v} UNSET TBLPROPERTIES ('a')",
        "ALTER VIEW {n}.{v} UNSET TBLPROPERTIES IF EXISTS ('nope')",
    ):
        spark.sql(stmt.format(n=n, v=base_java)).collect()
        ice(spark, shared, stmt.format(n=n, v=base_ice))
    assert _metadata(shared, base_ice)["properties"] == _metadata(shared, base_java)["properties"]
    with pytest.raises(Exception, match="Cannot remove property that is not set: 'nope'"):
        spark.sql(f"ALTER VIEW {n}.{base_java} UNSET TBLPROPERTIES ('nope')").collect()
    with pytest.raises(ValidationError, match="Cannot remove property that is not set: 'nope'"):
        ice(spark, shared, f"ALTER VIEW {n}.{base_ice} UNSET TBLPROPERTIES ('nope')")

    # a new version, then the first one again (Java reuses its id), then IF NOT EXISTS
    replace = "CREATE OR REPLACE VIEW {n}.{v} AS SELECT id, name, amt FROM {n}.t"
    first = f"CREATE OR REPLACE VIEW {{n}}.{{v}} AS SELECT id, name FROM {n}.t"
    for stmt in (replace, first, "CREATE VIEW IF NOT EXISTS {n}.{v} AS SELECT 1 AS one"):
        spark.sql(stmt.format(n=n, v=base_java)).collect()
        ice(spark, shared, stmt.format(n=n, v=base_ice))
        assert _metadata(shared, base_ice) == _metadata(shared, base_java), stmt
    _read_alike(spark, shared, base_java, base_ice)
    with pytest.raises(Exception, match="already exists"):
        spark.sql(f"CREATE VIEW {n}.{base_java} AS SELECT 1 AS one").collect()
    with pytest.raises(ViewAlreadyExistsError, match="already exists"):
        ice(spark, shared, f"CREATE VIEW {n}.{base_ice} AS SELECT 1 AS one")

    # SHOW VIEWS: the catalog's views, then the session's temporary ones
    spark.range(1).createOrReplaceTempView("a_temp_view")
    try:
        for text in (f"SHOW VIEWS IN {n}", f"SHOW VIEWS FROM {n} LIKE 'base*|over_j*'"):
            assert_same_rows(ice(spark, shared, text), canonical_rows(spark.sql(text)), context=text)
        temp = rf"Cannot create view {n}.tmp_{{}} that references temporary view: \[a_temp_view\]"
        with pytest.raises(Exception, match=temp.format("java")):
            spark.sql(f"CREATE VIEW {n}.tmp_java AS SELECT * FROM a_temp_view").collect()
        with pytest.raises(ValidationError, match=temp.format("ice")):
            ice(spark, shared, f"CREATE VIEW {n}.tmp_ice AS SELECT * FROM a_temp_view")
    finally:
        spark.catalog.dropTempView("a_temp_view")
    assert not shared.catalog.view_exists((shared.ns, "tmp_ice"))

    # ALTER VIEW ... AS: Java's runtime refuses it (CheckViews), and so does icefloe
    alter_as = "ALTER VIEW {n}.{v} AS SELECT 1 AS one"
    with pytest.raises(Exception, match="ALTER VIEW <viewName> AS is not supported"):
        spark.sql(alter_as.format(n=n, v=base_java)).collect()
    with pytest.raises(NotSupportedError, match="ALTER VIEW <viewName> AS is not supported"):
        ice(spark, shared, alter_as.format(n=n, v=base_ice))
    assert _metadata(shared, base_ice) == _metadata(shared, base_java)

    # rename, drop
    spark.sql(f"ALTER VIEW {n}.over_java RENAME TO {n}.over_java2").collect()
    ice(spark, shared, f"ALTER VIEW {n}.over_ice RENAME TO {n}.over_ice2")
    _read_alike(spark, shared, "over_java2", "over_ice2")
    for v in ("over_java2", "over_ice2"):
        spark.sql(f"DROP VIEW {n}.{v}").collect() if v.startswith("over_java") else ice(
            spark, shared, f"DROP VIEW {n}.{v}"
        )
    spark.sql(f"DROP VIEW IF EXISTS {n}.over_java2").collect()
    ice(spark, shared, f"DROP VIEW IF EXISTS {n}.over_ice2")
    assert {v[-1] for v in shared.catalog.list_views((shared.ns,))}.isdisjoint({"over_java2", "over_ice2"})
    with pytest.raises(NoSuchViewError, match="VIEW_NOT_FOUND"):
        ice(spark, shared, f"DROP VIEW {n}.over_ice2")
    with pytest.raises(Exception, match=r"cannot be found|not found"):
        spark.sql(f"SELECT * FROM {n}.over_ice2").collect()


def test_a_catalog_without_views_refuses_them(spark: Any, warehouse: Path, catalog: Any) -> None:
    """The filesystem catalog holds no views, as Java's HadoopCatalog: both refuse CREATE VIEW."""
    with pytest.raises(Exception, match="not supported"):
        spark.sql("CREATE VIEW oracle.db.fs_view AS SELECT 1 AS one").collect()
    with pytest.raises(NotSupportedError, match="does not support views"):
        icefloe.spark.sql(
            spark, "CREATE VIEW local.db.fs_view AS SELECT 1 AS one", catalogs={"local": catalog}
        )
    assert not list((warehouse / "db").glob("fs_view*"))


def test_namespace_properties_and_describe(spark: Any, shared: Shared) -> None:
    """CREATE NAMESPACE with COMMENT, LOCATION and DBPROPERTIES, ALTER NAMESPACE SET, DESCRIBE
    NAMESPACE [EXTENDED]: icefloe's namespace has Java's twin's properties (Spark's `owner`
    included) and describes as Java's does."""
    n = shared.name
    stem = f"{shared.ns}_p"
    for statement in (
        "CREATE NAMESPACE {ns} COMMENT 'a namespace' LOCATION '/tmp/{ns}_location' "
        "WITH DBPROPERTIES ('k1' = 'v1', 'a.password' = 'hidden')",
        "CREATE NAMESPACE IF NOT EXISTS {ns} COMMENT 'ignored'",
        "ALTER NAMESPACE {ns} SET DBPROPERTIES ('k1' = 'v2', 'k2' = 'x')",
        "ALTER DATABASE {ns} SET PROPERTIES ('k3' = 'y')",
        "ALTER NAMESPACE {ns} SET LOCATION '/tmp/{ns}_moved'",
    ):
        spark.sql(statement.format(ns=f"{n}.{stem}_java")).collect()
        ice(spark, shared, statement.format(ns=f"{n}.{stem}_ice"))
        java = shared.catalog.load_namespace_properties((f"{stem}_java",))
        ours = shared.catalog.load_namespace_properties((f"{stem}_ice",))
        assert {k: v.replace("_ice", "_java") for k, v in ours.items()} == java, statement
    # Spark 4's UNSET (PySpark 3.5's parser has none: both refuse it there); a key the namespace
    # lacks is no error, a reserved one is refused.
    unsets = (
        "ALTER NAMESPACE {ns} UNSET PROPERTIES ('k2')",
        "ALTER DATABASE {ns} UNSET DBPROPERTIES ('k3', 'nope')",
        "ALTER NAMESPACE {ns} UNSET PROPERTIES ('location')",
    )
    for statement in unsets:
        refused = PYSPARK_MAJOR < 4 or "location" in statement
        if refused:
            with pytest.raises(Exception, match=r"PARSE_SYNTAX_ERROR|UNSET|location"):
                spark.sql(statement.format(ns=f"{n}.{stem}_java")).collect()
            with pytest.raises(icefloe.exceptions.ValidationError, match=r"UNSET|location"):
                ice(spark, shared, statement.format(ns=f"{n}.{stem}_ice"))
        else:
            spark.sql(statement.format(ns=f"{n}.{stem}_java")).collect()
            ice(spark, shared, statement.format(ns=f"{n}.{stem}_ice"))
        java = shared.catalog.load_namespace_properties((f"{stem}_java",))
        ours = shared.catalog.load_namespace_properties((f"{stem}_ice",))
        assert {k: v.replace("_ice", "_java") for k, v in ours.items()} == java, statement
        assert ("k2" in java) == (PYSPARK_MAJOR < 4), statement
    for text in (
        "DESCRIBE NAMESPACE {ns}",
        "DESCRIBE NAMESPACE EXTENDED {ns}",
        "DESC DATABASE EXTENDED {ns}",
    ):
        want = [
            tuple(str(x).replace("_java", "_ice") for x in r)
            for r in spark.sql(text.format(ns=f"{n}.{stem}_java")).collect()
        ]
        got = [tuple(r) for r in ice(spark, shared, text.format(ns=f"{n}.{stem}_ice")).collect()]
        assert got == want, text
    with pytest.raises(Exception, match="already exists"):
        spark.sql(f"CREATE NAMESPACE {n}.{stem}_java").collect()
    with pytest.raises(icefloe.exceptions.NamespaceAlreadyExistsError):
        ice(spark, shared, f"CREATE NAMESPACE {n}.{stem}_ice")
    for suffix in ("java", "ice"):
        shared.catalog.drop_namespace((f"{stem}_{suffix}",))


@pytest.mark.one_spark_line
def test_view_columns_are_up_cast_to_the_views_types(spark: Any, shared: Shared) -> None:
    """Java's `ResolveViews` up-casts each column of a view's query to the type the view's
    schema records, and refuses one that does not up-cast: a view stored with wider types than
    its query (made through the API) reads as those types, and a view over an `int` column
    promoted to `bigint` afterwards is refused, by both engines."""
    import pyarrow as pa

    n = f"{shared.name}.{shared.ns}"
    spark.sql(f"CREATE TABLE {n}.ints (i int, f float, d date) USING iceberg").collect()
    spark.sql(f"INSERT INTO {n}.ints VALUES (1, 1.5, DATE'2024-01-02'), (null, -2.25, null)").collect()
    wide = pa.schema([("i", pa.int64()), ("f", pa.float64()), ("d", pa.timestamp("us", tz="UTC"))])
    shared.catalog.create_view(
        (shared.ns, "wide"), wide, sql=f"SELECT i, f, d FROM {n}.ints", default_namespace=(shared.ns,)
    )
    java = spark.sql(f"SELECT * FROM {n}.wide")
    ours = ice(spark, shared, f"SELECT * FROM {n}.wide")
    assert [f.dataType.simpleString() for f in ours.schema.fields] == ["bigint", "double", "timestamp"]
    assert ours.schema.simpleString() == java.schema.simpleString()
    assert_same_rows(ours, java)

    spark.sql(f"CREATE VIEW {n}.narrowed AS SELECT i FROM {n}.ints").collect()
    spark.sql(f"ALTER TABLE {n}.ints ALTER COLUMN i TYPE bigint").collect()
    with pytest.raises(Exception, match="Cannot up cast"):
        spark.sql(f"SELECT * FROM {n}.narrowed").collect()
    with pytest.raises(ValidationError, match=r'Cannot up cast i from "BIGINT" to "INT"'):
        ice(spark, shared, f"SELECT * FROM {n}.narrowed")


def test_up_cast_rules_are_sparks(spark: Any) -> None:
    """`icefloe.spark._up_cast.can_up_cast` answers as Spark's own `Cast.canUpCast` over every
    pair of a matrix of types (nested ones with their nullability included)."""
    from icefloe.spark._up_cast import can_up_cast
    from pyspark.sql import types as T

    atomic = [
        T.NullType(), T.BooleanType(), T.ByteType(), T.ShortType(), T.IntegerType(), T.LongType(),
        T.FloatType(), T.DoubleType(), T.DecimalType(5, 2), T.DecimalType(10, 0), T.DecimalType(20, 0),
        T.DecimalType(9, 0), T.DecimalType(19, 0), T.DecimalType(38, 10), T.DecimalType(12, 2), T.StringType(), T.BinaryType(), T.DateType(),
        T.TimestampType(), T.TimestampNTZType(),
    ]  # fmt: skip
    nested = [
        T.ArrayType(T.IntegerType(), True), T.ArrayType(T.IntegerType(), False), T.ArrayType(T.LongType(), True),
        T.MapType(T.StringType(), T.IntegerType(), True), T.MapType(T.StringType(), T.LongType(), False),
        T.StructType([T.StructField("a", T.IntegerType(), True)]),
        T.StructType([T.StructField("b", T.LongType(), False)]),
        T.StructType([T.StructField("a", T.LongType(), True), T.StructField("c", T.StringType())]),
    ]  # fmt: skip
    types = atomic + nested
    cast = spark._jvm.org.apache.spark.sql.catalyst.expressions.Cast
    parse = spark._jsparkSession.parseDataType
    java = {t.json(): parse(t.json()) for t in types}
    differ = [
        (f.simpleString(), t.simpleString(), can_up_cast(f, t))
        for f in types
        for t in types
        if can_up_cast(f, t) != bool(cast.canUpCast(java[f.json()], java[t.json()]))
    ]
    print("DIFFER", differ)
    assert not differ, differ
