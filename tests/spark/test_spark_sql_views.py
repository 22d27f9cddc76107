# ruff: noqa: E501
"""Iceberg views through `icefloe.spark.sql`, against Iceberg Java's Spark SQL on one shared SQL
catalog: Java's JdbcCatalog (Spark catalog `vw`, schema V1) and icefloe's SqlCatalog (`vw`)
on the same sqlite database and warehouse, so each engine reads every view the other writes.

Each statement runs twice, by Java on a view `*_java` and by icefloe on a view `*_ice`; the
two views' metadata (schema with ids, query text, default catalog and namespace, properties,
versions) must be equal, and the rows of both views equal when read by Java and by icefloe.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.exceptions import NoSuchViewError, NotSupportedError, ValidationError, ViewAlreadyExistsError
from support.catalogs import java_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows, canonical_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]

C = "vw"


@pytest.fixture(scope="module")
def shared(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    root = tmp_path_factory.mktemp("views")
    set_java_catalog(spark, C, java_catalog_conf("sqlite", {"warehouse": str(root)}, root, None))
    catalog = icefloe.load_catalog(C, uri=f"sqlite:///{root}/catalog.db", warehouse=str(root))
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {C}.db")
    spark.sql(
        f"CREATE TABLE {C}.db.t (id bigint NOT NULL, name string, amt double, st struct<a: int, b: string>) USING iceberg"
    )
    spark.sql(
        f"INSERT INTO {C}.db.t VALUES (1, 'a', 0.5, named_struct('a', 1, 'b', 'x')), (2, 'b', 2.0, null), "
        "(3, null, 3.5, named_struct('a', null, 'b', 'y')), (4, 'd', 4.0, named_struct('a', 1, 'b', 'z'))"
    )
    yield catalog
    spark.sql("USE spark_catalog.default")


def ice(spark: Any, catalog: Any, text: str) -> Any:
    return icefloe.spark.sql(spark, text, catalogs={C: catalog})


def _metadata(catalog: Any, name: str) -> dict[str, Any]:
    """What must be equal between twin views: all but the uuid, location, times and summary."""
    view = catalog.load_view(("db", name))
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


def _twin(spark: Any, catalog: Any, statement: str, stem: str) -> tuple[str, str]:
    """`statement` (with `{v}` for the view's name) run by Java on `<stem>_java` and by icefloe
    on `<stem>_ice`; their metadata equal."""
    spark.sql(statement.format(v=f"{stem}_java")).collect()
    ice(spark, catalog, statement.format(v=f"{stem}_ice")).collect()
    java, ours = _metadata(catalog, f"{stem}_java"), _metadata(catalog, f"{stem}_ice")
    for m, name in ((java, f"{stem}_java"), (ours, f"{stem}_ice")):
        for v in m["versions"]:
            for r in v["representations"]:
                r["sql"] = r["sql"].replace(name, "{v}")
    assert ours == java, f"{statement}\nicefloe: {ours}\nJava:    {java}"
    return f"{stem}_java", f"{stem}_ice"


def _read_alike(
    spark: Any, catalog: Any, java: str, ours: str, query: str = "SELECT * FROM {c}.db.{v}"
) -> None:
    """Both views' rows, read by Java and by icefloe, are Java's rows of Java's view."""
    want = canonical_rows(spark.sql(query.format(c=C, v=java)))
    assert want, "a twin read that returns nothing proves nothing"
    assert_same_rows(spark.sql(query.format(c=C, v=ours)), want, context=f"Java reads icefloe's {ours}")
    assert_same_rows(
        ice(spark, catalog, query.format(c=C, v=java)), want, context=f"icefloe reads Java's {java}"
    )
    assert_same_rows(ice(spark, catalog, query.format(c=C, v=ours)), want, context=f"icefloe reads {ours}")


@pytest.mark.parametrize(
    ("stem", "statement"),
    [
        ("filtered", "CREATE VIEW {c}.db.{{v}} AS SELECT id, name FROM {c}.db.t WHERE amt > 1"),
        (
            "named",
            "CREATE VIEW {c}.db.{{v}} (ident COMMENT 'the id', label) COMMENT 'two columns' "
            "TBLPROPERTIES ('k1' = 'v1', 'k2' = 'v2') AS SELECT id, upper(name) FROM {c}.db.t",
        ),
        (
            "grouped",
            "CREATE VIEW {c}.db.{{v}} AS SELECT t.st.a AS a, count(*) AS n, max(amt) FROM {c}.db.t t GROUP BY t.st.a",
        ),
        (
            "nested",
            "CREATE VIEW {c}.db.{{v}} AS SELECT id, st, array(id, id + 1) AS ids, map(name, amt) AS m FROM {c}.db.t WHERE name IS NOT NULL",
        ),
        (
            "with_cte",
            "CREATE VIEW {c}.db.{{v}} AS WITH w AS (SELECT id FROM {c}.db.t) SELECT w.id, t.name FROM w JOIN {c}.db.t t ON w.id = t.id",
        ),
    ],
)
def test_views_each_engine_creates_read_alike(spark: Any, shared: Any, stem: str, statement: str) -> None:
    java, ours = _twin(spark, shared, statement.format(c=C), stem)
    _read_alike(spark, shared, java, ours)
    _read_alike(spark, shared, java, ours, "SELECT count(*) FROM {c}.db.{v} WHERE 1 = 1")
    described = [canonical_rows(spark.sql(f"DESCRIBE {C}.db.{java}"))]
    assert_same_rows(ice(spark, shared, f"DESCRIBE {C}.db.{ours}"), described[0], context="DESCRIBE")


def test_unqualified_names_resolve_in_the_namespace_current_at_creation(spark: Any, shared: Any) -> None:
    """After `USE vw.db` (Java's `USE` and icefloe's), `t` and `db.t` in a view are `vw.db.t`
    wherever the view is read later: the default namespace is recorded, the default catalog is
    not (it is the view's own), as Java records them."""
    spark.sql(f"USE {C}.db")
    ice(spark, shared, f"USE {C}.db")
    try:
        java, ours = _twin(
            spark,
            shared,
            "CREATE VIEW {v} AS SELECT t.id, u.amt FROM t JOIN db.t u ON t.id = u.id WHERE t.id > 1",
            "unqualified",
        )
    finally:
        spark.sql("USE spark_catalog.default")
        ice(spark, shared, "USE spark_catalog.default")
    version = shared.load_view(("db", ours)).current_version()
    assert (version.default_catalog, version.default_namespace) == (None, ("db",))
    _read_alike(spark, shared, java, ours)


def test_a_view_over_a_view_and_the_lifecycle_of_a_view(spark: Any, shared: Any) -> None:
    base_java, base_ice = _twin(
        spark, shared, f"CREATE VIEW {C}.db.{{v}} AS SELECT id, name FROM {C}.db.t", "base"
    )
    # each engine's view over the other's
    spark.sql(f"CREATE VIEW {C}.db.over_java AS SELECT id FROM {C}.db.{base_ice} WHERE id < 4").collect()
    ice(spark, shared, f"CREATE VIEW {C}.db.over_ice AS SELECT id FROM {C}.db.{base_java} WHERE id < 4")
    _read_alike(spark, shared, "over_java", "over_ice")

    # properties
    for stmt in (
        "ALTER VIEW {c}.db.{v} SET TBLPROPERTIES ('a' = '1', 'b' = '2')",
        "ALTER VIEW {c}.db.{v} UNSET TBLPROPERTIES ('a')",
        "ALTER VIEW {c}.db.{v} UNSET TBLPROPERTIES IF EXISTS ('nope')",
    ):
        spark.sql(stmt.format(c=C, v=base_java)).collect()
        ice(spark, shared, stmt.format(c=C, v=base_ice))
    assert _metadata(shared, base_ice)["properties"] == _metadata(shared, base_java)["properties"]
    with pytest.raises(Exception, match="Cannot remove property that is not set: 'nope'"):
        spark.sql(f"ALTER VIEW {C}.db.{base_java} UNSET TBLPROPERTIES ('nope')").collect()
    with pytest.raises(ValidationError, match="Cannot remove property that is not set: 'nope'"):
        ice(spark, shared, f"ALTER VIEW {C}.db.{base_ice} UNSET TBLPROPERTIES ('nope')")

    # a new version, then the first one again (Java reuses its id), then IF NOT EXISTS
    replace = "CREATE OR REPLACE VIEW {c}.db.{v} AS SELECT id, name, amt FROM {c}.db.t"
    first = f"CREATE OR REPLACE VIEW {{c}}.db.{{v}} AS SELECT id, name FROM {C}.db.t"
    for stmt in (replace, first, "CREATE VIEW IF NOT EXISTS {c}.db.{v} AS SELECT 1 AS one"):
        spark.sql(stmt.format(c=C, v=base_java)).collect()
        ice(spark, shared, stmt.format(c=C, v=base_ice))
        assert _metadata(shared, base_ice) == _metadata(shared, base_java), stmt
    _read_alike(spark, shared, base_java, base_ice)
    with pytest.raises(Exception, match="already exists"):
        spark.sql(f"CREATE VIEW {C}.db.{base_java} AS SELECT 1 AS one").collect()
    with pytest.raises(ViewAlreadyExistsError, match="already exists"):
        ice(spark, shared, f"CREATE VIEW {C}.db.{base_ice} AS SELECT 1 AS one")

    # SHOW VIEWS: the catalog's views, then the session's temporary ones
    spark.range(1).createOrReplaceTempView("a_temp_view")
    try:
        for text in (f"SHOW VIEWS IN {C}.db", f"SHOW VIEWS FROM {C}.db LIKE 'base*|over_j*'"):
            assert_same_rows(ice(spark, shared, text), canonical_rows(spark.sql(text)), context=text)
        temp = r"Cannot create view vw.db.tmp_{} that references temporary view: \[a_temp_view\]"
        with pytest.raises(Exception, match=temp.format("java")):
            spark.sql(f"CREATE VIEW {C}.db.tmp_java AS SELECT * FROM a_temp_view").collect()
        with pytest.raises(ValidationError, match=temp.format("ice")):
            ice(spark, shared, f"CREATE VIEW {C}.db.tmp_ice AS SELECT * FROM a_temp_view")
    finally:
        spark.catalog.dropTempView("a_temp_view")
    assert not shared.view_exists(("db", "tmp_ice"))

    # rename, drop
    spark.sql(f"ALTER VIEW {C}.db.over_java RENAME TO {C}.db.over_java2").collect()
    ice(spark, shared, f"ALTER VIEW {C}.db.over_ice RENAME TO {C}.db.over_ice2")
    _read_alike(spark, shared, "over_java2", "over_ice2")
    for v in ("over_java2", "over_ice2"):
        spark.sql(f"DROP VIEW {C}.db.{v}").collect() if v.startswith("over_java") else ice(
            spark, shared, f"DROP VIEW {C}.db.{v}"
        )
    spark.sql(f"DROP VIEW IF EXISTS {C}.db.over_java2").collect()
    ice(spark, shared, f"DROP VIEW IF EXISTS {C}.db.over_ice2")
    assert {v[-1] for v in shared.list_views(("db",))}.isdisjoint({"over_java2", "over_ice2"})
    with pytest.raises(NoSuchViewError, match="VIEW_NOT_FOUND"):
        ice(spark, shared, f"DROP VIEW {C}.db.over_ice2")
    with pytest.raises(Exception, match=r"cannot be found|not found"):
        spark.sql(f"SELECT * FROM {C}.db.over_ice2").collect()


def test_a_catalog_without_views_refuses_them(spark: Any, warehouse: Path, catalog: Any) -> None:
    """The filesystem catalog holds no views, as Java's HadoopCatalog: both refuse CREATE VIEW."""
    with pytest.raises(Exception, match="not supported"):
        spark.sql("CREATE VIEW oracle.db.fs_view AS SELECT 1 AS one").collect()
    with pytest.raises(NotSupportedError, match="does not support views"):
        icefloe.spark.sql(
            spark, "CREATE VIEW local.db.fs_view AS SELECT 1 AS one", catalogs={"local": catalog}
        )
    assert not list((warehouse / "db").glob("fs_view*"))
