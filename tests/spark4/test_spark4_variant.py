"""v3 `variant` columns on PySpark 4 (collected only there, see conftest): Java's Spark writes
them (`parse_json`, top level and inside a struct, with a merge-on-read delete on top) and
icefloe reads the same rows as Spark `variant` values, byte for byte, through
`format("icefloe")`, `icefloe.spark.read` and in process; icefloe's writes of Spark variants
(both Spark paths) read in Java as Java's own writes of the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

VALUES = [
    (1, """'{"a": 1, "b": [1, 2, "x"], "c": {"d": null}}'""", "named_struct('n', 1, 'w', parse_json('[1]'))"),
    (2, "'12.5'", "NULL"),
    (3, None, "named_struct('n', 3, 'w', NULL)"),
    (4, """'"str"'""", """named_struct('n', 4, 'w', parse_json('{"k": "v"}'))"""),
    (5, "'[true, false, null]'", "NULL"),
    (6, """'{"a": 6}'""", "named_struct('n', 6, 'w', parse_json('null'))"),
]


def _variant(v: Any) -> tuple[bytes, bytes] | None:
    return None if v is None else (bytes(v.value), bytes(v.metadata))


def _key(row: Any) -> tuple[Any, ...]:
    s = row["s"]
    return (row["id"], _variant(row["v"]), None if s is None else (s["n"], _variant(s["w"])))


@pytest.fixture(scope="module")
def variant_table(spark: Any, oracle: Oracle, warehouse: Path) -> str:
    name = new_table_name("variant")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id int, v variant, s struct<n: int, w: variant>) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    rows = ", ".join(f"({i}, {'NULL' if v is None else f'parse_json({v})'}, {s})" for i, v, s in VALUES)
    oracle.sql(f"INSERT INTO {q} VALUES {rows}")
    oracle.sql(f"DELETE FROM {q} WHERE id = 2")  # a deletion vector on the variant file
    return name


def test_variant_reads_as_java(source: Any, oracle: Oracle, warehouse: Path, variant_table: str) -> None:
    from pyspark.sql.types import VariantType

    spark = source
    java = oracle.df(variant_table)
    expected = sorted(map(_key, java.collect()))
    assert [r[0] for r in expected] == [1, 3, 4, 5, 6]

    ours = spark.read.format("icefloe").load(f"local.{variant_table}")
    assert ours.schema == java.schema and isinstance(ours.schema["v"].dataType, VariantType)
    assert sorted(map(_key, ours.collect())) == expected

    table = icefloe.load_catalog("ds", type="filesystem", warehouse=str(warehouse)).load_table(variant_table)
    assert sorted(map(_key, icefloe.spark.read(spark, table).collect())) == expected

    # Spark's variant functions see the same values.
    query = "SELECT id, variant_get(v, '$.a', 'int') AS a, to_json(s.w) AS w FROM t ORDER BY id"
    ours.createOrReplaceTempView("t")
    mine = spark.sql(query).collect()
    java.createOrReplaceTempView("t")
    assert mine == spark.sql(query).collect()

    # In process: the Arrow struct of Parquet's two buffers, the same bytes.
    def arrow_variant(v: dict[str, bytes] | None) -> tuple[bytes, bytes] | None:
        return None if v is None else (v["value"], v["metadata"])

    arrow = table.scan().to_arrow().to_pylist()
    in_process = sorted(
        (
            r["id"],
            arrow_variant(r["v"]),
            None if r["s"] is None else (r["s"]["n"], arrow_variant(r["s"]["w"])),
        )
        for r in arrow
    )
    assert in_process == expected


def _counts(oracle: Oracle, name: str) -> list[tuple[Any, Any]]:
    rows = oracle.sql(f"SELECT value_counts, null_value_counts FROM {oracle.qualified(name)}.files")
    return sorted((sorted(r["value_counts"].items()), sorted(r["null_value_counts"].items())) for r in rows)


def test_variant_writes_read_as_javas(
    source: Any, oracle: Oracle, warehouse: Path, variant_table: str
) -> None:
    """Spark `variant` values written by icefloe (icefloe.spark.append and format("icefloe"))
    read in Java as the values Java's own write of the same DataFrame holds, byte for byte
    and through Spark's variant functions; the files' value and null counts (variant: counts
    only, as Java's metrics) are Java's."""
    spark = source
    cat = icefloe.load_catalog("ds", type="filesystem", warehouse=str(warehouse))
    df = oracle.df(variant_table).coalesce(1).sortWithinPartitions("id")
    names = {k: new_table_name(f"variant_{k}") for k in ("java", "mapinarrow", "ds")}
    for name in names.values():
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id int, v variant, s struct<n: int, w: variant>) "
            "USING iceberg TBLPROPERTIES ('format-version'='3')"
        )
    df.writeTo(oracle.qualified(names["java"])).append()
    icefloe.spark.append(df, cat.load_table(names["mapinarrow"]))
    df.write.format("icefloe").mode("append").save(f"local.{names['ds']}")

    expected = sorted(map(_key, oracle.df(names["java"]).collect()))
    assert [r[0] for r in expected] == [1, 3, 4, 5, 6]
    query = (
        "SELECT id, to_json(v) AS v, variant_get(v, '$.a', 'int') AS a, to_json(s.w) AS w FROM {} ORDER BY id"
    )
    java_json = spark.sql(query.format(oracle.qualified(names["java"]))).collect()
    for way in ("mapinarrow", "ds"):
        assert sorted(map(_key, oracle.df(names[way]).collect())) == expected, way
        assert spark.sql(query.format(oracle.qualified(names[way]))).collect() == java_json, way
        assert _counts(oracle, names[way]) == _counts(oracle, names["java"]), way
        back = spark.read.format("icefloe").load(f"local.{names[way]}")
        assert sorted(map(_key, back.collect())) == expected, way


def test_read_changelog_on_variant_columns_equal_to_java(spark: Any, oracle: Any, catalog: Any) -> None:
    """Variant columns (top-level, in a struct) are keyed by their JSON text too; a SQL null
    and a JSON null stay apart."""
    from icefloe.spark import read_changelog
    from pyspark.sql import functions as F
    from support.session import new_table_name

    name = new_table_name("changelog_variant")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, v VARIANT, s STRUCT<a: INT, w: VARIANT>) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')"
    )
    oracle.sql(
        f"INSERT INTO {q} VALUES (1, parse_json('{{\"a\": 1}}'), "
        "named_struct('a', 1, 'w', parse_json('[1, 2]'))), (2, NULL, NULL), "
        "(3, parse_json('null'), named_struct('a', 3, 'w', NULL))"
    )
    oracle.sql(f"UPDATE {q} SET v = parse_json('2') WHERE id = 1")  # copy-on-write: 2, 3 carried over
    view = f"cl_variant_{abs(hash(name)) % 10**8}"
    oracle.sql(
        f"CALL {oracle.catalog}.system.create_changelog_view(table => '{q}', "
        f"changelog_view => '{view}', identifier_columns => array('id'))"
    )

    def as_json(df: Any) -> list[tuple[Any, ...]]:
        changes = ["_change_type", "_change_ordinal", "_commit_snapshot_id"]
        cols = ["id", F.to_json("v"), F.to_json("s"), *changes]
        return sorted(map(tuple, df.select(cols).collect()), key=str)

    table = catalog.load_table(name)
    ours = as_json(read_changelog(spark, table, identifier_columns=["id"]))
    assert [r[3] for r in sorted(ours, key=lambda r: (r[4], r[0], r[3]))] == [
        "INSERT",
        "INSERT",
        "INSERT",
        "UPDATE_AFTER",
        "UPDATE_BEFORE",
    ], ours
    assert ours == as_json(spark.table(view))
    kinds = sorted(r[3] for r in as_json(read_changelog(spark, table)))
    assert kinds == ["DELETE", "INSERT", "INSERT", "INSERT", "INSERT"], kinds
