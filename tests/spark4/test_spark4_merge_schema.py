"""MERGE with schema evolution against Iceberg Java 1.12 on Spark 4.1 (collected only on
PySpark 4: Spark 4.1's `MERGE WITH SCHEMA EVOLUTION INTO`). On twin tables (same schema and
rows, made by Java), Java runs the statement and icefloe the same MERGE with the same source
rows, in process (`table.merge(source, on, merge_schema=True)`), on Spark
(`icefloe.spark.merge(df, table, on, merge_schema=True)`) or as the statement itself
(`icefloe.spark.sql`): both tables end with the same schema (columns, types, nested fields) and the same
rows. icefloe commits the schema change and the rows as one metadata version; Java takes two
when the schema changes (Spark's analyzer alters the table, then the MERGE commits), which the
test pins. The cases are those of Java's own `TestMergeSchemaEvolution`: the source with more
columns, with fewer, a nested struct with more fields, a widened type, and the table property
that turns the evolution off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe.spark
import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

CASES = {
    "more_columns": (
        "id INT, dep STRING",
        "(1, 'hr'), (2, 'software')",
        "id, dep, salary",
        "(1, 'hr', 100), (3, 'finance', 300)",
        "t(id, dep, salary)",
        "",
    ),
    "fewer_columns": (
        "id INT, dep STRING, salary INT",
        "(1, 'hr', 100), (2, 'software', 200)",
        "id, dep",
        "(1, 'hr-updated'), (3, 'finance')",
        "t(id, dep)",
        "",
    ),
    "nested_more_fields": (
        "id INT, s STRUCT<c1: INT, c2: STRING>",
        "(1, named_struct('c1', 10, 'c2', 'a')), (2, named_struct('c1', 20, 'c2', 'b'))",
        "id, s",
        "(1, named_struct('c1', 100, 'c2', 'aa', 'c3', 1000)), "
        "(3, named_struct('c1', 300, 'c2', 'cc', 'c3', 3000))",
        "t(id, s)",
        "",
    ),
    "type_widening": (
        "id INT, value INT",
        "(1, 100), (2, 200)",
        "id, CAST(value AS BIGINT) AS value",
        "(1, 1000000000000), (3, 3000000000000)",
        "t(id, value)",
        "",
    ),
    "turned_off": (
        "id INT, dep STRING",
        "(1, 'hr'), (2, 'software')",
        "id, dep, salary",
        "(1, 'hr', 100), (3, 'finance', 300)",
        "t(id, dep, salary)",
        "TBLPROPERTIES ('write.spark.auto-schema-evolution.enabled'='false')",
    ),
}


# Each case in process (`Table.merge`); two each through `icefloe.spark.merge` (the source a
# Spark DataFrame) and through `icefloe.spark.sql` (the statement itself).
WAYS = [(case, "process") for case in sorted(CASES)] + [
    ("more_columns", "spark"),
    ("type_widening", "spark"),
    ("nested_more_fields", "sql"),
    ("fewer_columns", "sql"),
]


def _twins(oracle: Oracle, prefix: str, columns: str, rows: str, props: str = "") -> tuple[str, str]:
    """Java's twin tables (`<prefix>_j`, `<prefix>_k`) of `columns` holding `rows`."""
    j, k = new_table_name(f"{prefix}_j"), new_table_name(f"{prefix}_k")
    for name in (j, k):
        oracle.sql(f"CREATE TABLE {oracle.qualified(name)} ({columns}) USING iceberg {props}")
        oracle.sql(f"INSERT INTO {oracle.qualified(name)} VALUES {rows}")
    return j, k


@pytest.mark.parametrize(("case", "way"), WAYS)
def test_merge_with_schema_evolution_as_java(
    spark: Any, oracle: Oracle, catalog: Any, case: str, way: str
) -> None:
    columns, rows, select, source_rows, alias, props = CASES[case]
    j, k = _twins(oracle, "mse", columns, rows, props)
    view = f"mse_source_{case}"
    spark.sql(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {select} FROM VALUES {source_rows} AS {alias}")
    versions = {name: len(catalog.load_table(name).metadata.metadata_log()) for name in (j, k)}

    oracle.sql(
        f"MERGE WITH SCHEMA EVOLUTION INTO {oracle.qualified(j)} AS t USING {view} AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    table = catalog.load_table(k)
    if way == "process":
        merger = table.merge(spark.table(view).toArrow(), "target.id = source.id", merge_schema=True)
        merger.when_matched_update_all().when_not_matched_insert_all().execute()
    elif way == "spark":
        builder = icefloe.spark.merge(spark.table(view), table, "target.id = source.id", merge_schema=True)
        builder.when_matched_update_all().when_not_matched_insert_all().execute()
    else:
        icefloe.spark.sql(
            spark,
            f"MERGE WITH SCHEMA EVOLUTION INTO ice.{k} AS t USING {view} AS s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            catalogs={"ice": catalog},
        )

    java_j, java_k = oracle.df(j), oracle.df(k)
    assert java_k.schema == java_j.schema, f"{case}: schemas differ"
    ordered = ", ".join(f.name for f in java_j.schema.fields)
    got = sorted(map(tuple, java_k.select(*ordered.split(", ")).collect()), key=repr)
    want = sorted(map(tuple, java_j.collect()), key=repr)
    assert got == want, case
    # icefloe reads its own table the same.
    mine = [tuple(r.values()) for r in catalog.load_table(k).scan().to_arrow().to_pylist()]
    java = [tuple(r.asDict(recursive=True).values()) for r in java_j.collect()]
    assert sorted(mine, key=repr) == sorted(java, key=repr), case
    # icefloe: one new metadata version, the schema change and the rows in one commit. Java
    # (Spark 4.1's analyzer alters the table first): two when the schema changed, pinned here.
    after = {name: len(catalog.load_table(name).metadata.metadata_log()) for name in (j, k)}
    evolves = case not in ("fewer_columns", "turned_off")
    assert after[k] - versions[k] == 1, (case, versions, after)
    assert after[j] - versions[j] == (2 if evolves else 1), (case, versions, after)


# A source struct without a field of the table's struct: Spark's MERGE refuses UPDATE SET * and
# INSERT * with it, with schema evolution or without (Java 1.12 on Spark 4.1: "Cannot find data
# for the output column `s`.`c3`"), where filling the field with nulls would lose its values.
# icefloe on Spark refuses it as a store assignment; in process (`Table.merge`) it filled nulls.
@pytest.mark.parametrize("way", ["process", "spark", "sql"])
@pytest.mark.parametrize("evolution", [True, False])
def test_merge_of_a_struct_with_fewer_fields_is_refused_as_java(
    spark: Any, oracle: Oracle, catalog: Any, way: str, evolution: bool
) -> None:
    j, k = _twins(
        oracle,
        "msf",
        "id INT, s STRUCT<c1: INT, c2: STRING, c3: INT>",
        "(1, named_struct('c1', 10, 'c2', 'a', 'c3', 7)), (2, named_struct('c1', 20, 'c2', 'b', 'c3', 8))",
    )
    view = "msf_source"
    spark.sql(
        f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT id, s FROM VALUES "
        "(1, named_struct('c1', 100, 'c2', 'aa')), (3, named_struct('c1', 300, 'c2', 'cc')) AS t(id, s)"
    )
    evolve = "WITH SCHEMA EVOLUTION " if evolution else ""
    statement = (
        "MERGE {evolve}INTO {t} AS t USING {view} AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    with pytest.raises(Exception, match=r"Cannot find data for the output column `s`\.`c3`"):
        oracle.sql(statement.format(evolve=evolve, t=oracle.qualified(j), view=view))
    table = catalog.load_table(k)
    before = table.metadata_location
    folder = Path(table.location().removeprefix("file:"))
    files_before = sorted(p for p in folder.rglob("*") if p.is_file())
    assert files_before, folder
    with pytest.raises(ValidationError, match=r"has no field (for )?'s\.c3'"):
        if way == "process":
            merger = table.merge(spark.table(view).toArrow(), "target.id = source.id", merge_schema=evolution)
            merger.when_matched_update_all().when_not_matched_insert_all().execute()
        elif way == "spark":
            builder = icefloe.spark.merge(
                spark.table(view), table, "target.id = source.id", merge_schema=evolution
            )
            builder.when_matched_update_all().when_not_matched_insert_all().execute()
        else:
            icefloe.spark.sql(
                spark, statement.format(evolve=evolve, t=f"ice.{k}", view=view), catalogs={"ice": catalog}
            )
    # Nothing written by either: both twins as they were.
    assert catalog.load_table(k).metadata_location == before
    assert sorted(p for p in folder.rglob("*") if p.is_file()) == files_before  # no file left behind
    assert sorted(map(tuple, oracle.df(k).collect()), key=repr) == sorted(
        map(tuple, oracle.df(j).collect()), key=repr
    )


# Spark 4.1's `spark.sql.mergeNestedTypeCoercion.enabled`: UPDATE SET * keeps the fields the
# source's struct lacks, recursively (NULL only where both structs are NULL); with schema
# evolution INSERT * fills them with NULL; without it INSERT * is still refused. NULL structs
# on either side and a nested struct with a field missing too.
_COERCED_TABLE = "id INT, s STRUCT<c1: INT, n: STRUCT<x: INT, y: INT>, c3: INT>"
_COERCED_ROWS = (
    "(1, named_struct('c1', 10, 'n', named_struct('x', 1, 'y', 2), 'c3', 7)), "
    "(2, named_struct('c1', 20, 'n', named_struct('x', 3, 'y', 4), 'c3', 8)), (4, NULL), "
    "(5, named_struct('c1', 50, 'n', CAST(NULL AS STRUCT<x: INT, y: INT>), 'c3', 9)), (6, NULL)"
)
_COERCED_SOURCE = (
    "(1, named_struct('c1', 100, 'n', named_struct('x', 9))), "
    "(2, CAST(NULL AS STRUCT<c1: INT, n: STRUCT<x: INT>>)), "
    "(3, named_struct('c1', 300, 'n', named_struct('x', 5))), "
    "(4, named_struct('c1', 400, 'n', CAST(NULL AS STRUCT<x: INT>))), "
    "(5, named_struct('c1', 500, 'n', named_struct('x', 6))), "
    "(6, CAST(NULL AS STRUCT<c1: INT, n: STRUCT<x: INT>>)), "
    "(7, CAST(NULL AS STRUCT<c1: INT, n: STRUCT<x: INT>>))"
)


@pytest.mark.parametrize("way", ["spark", "sql"])
@pytest.mark.parametrize("evolution", [True, False])
def test_merge_of_a_struct_with_fewer_fields_under_nested_coercion_as_java(
    spark: Any, oracle: Oracle, catalog: Any, way: str, evolution: bool
) -> None:
    from icefloe.spark._merge_coercion import COERCION_CONF

    j, k = _twins(oracle, "mnc", _COERCED_TABLE, _COERCED_ROWS)
    view = "mnc_source"
    spark.sql(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT id, s FROM VALUES {_COERCED_SOURCE} AS t(id, s)")
    evolve = "WITH SCHEMA EVOLUTION " if evolution else ""
    insert = "WHEN NOT MATCHED THEN INSERT *"
    statement = (
        "MERGE {evolve}INTO {t} AS t USING {view} AS s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * {insert}"
    )

    def run(t: str, insert: str) -> None:
        text = statement.format(evolve=evolve, t=t, view=view, insert=insert)
        if t.startswith("ice."):
            icefloe.spark.sql(spark, text, catalogs={"ice": catalog})
        else:
            oracle.sql(text)

    def ice_builder(insert: bool) -> None:
        b = icefloe.spark.merge(
            spark.table(view), catalog.load_table(k), "target.id = source.id", merge_schema=evolution
        )
        b = b.when_matched_update_all()
        (b.when_not_matched_insert_all() if insert else b).execute()

    spark.conf.set(COERCION_CONF, "true")
    try:
        if not evolution:  # INSERT * stays refused without schema evolution, by both
            with pytest.raises(Exception, match=r"Cannot find data for the output column `s`\.`n`\.`y`"):
                run(oracle.qualified(j), insert)
            with pytest.raises(ValidationError, match=r"has no field for 's\."):
                run(f"ice.{k}", insert) if way == "sql" else ice_builder(True)
            insert = ""
        run(oracle.qualified(j), insert)
        run(f"ice.{k}", insert) if way == "sql" else ice_builder(bool(insert))
    finally:
        spark.conf.unset(COERCION_CONF)
    want = sorted((r.asDict(recursive=True) for r in oracle.df(j).collect()), key=repr)
    got = sorted((r.asDict(recursive=True) for r in oracle.df(k).collect()), key=repr)
    assert got == want
    assert {r["id"]: r["s"] for r in want}[2] == {
        "c1": None,
        "n": {"x": None, "y": 4},
        "c3": 8,
    }  # kept fields
