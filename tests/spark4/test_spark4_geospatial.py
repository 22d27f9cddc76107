"""v3 `geometry` / `geography` on PySpark 4.1 against Iceberg Java's Spark runtime, which maps
them to Spark's own geospatial types (`spark.sql.geospatial.enabled`): Java's Spark writes a
table with `st_geomfromwkb` / `st_geogfromwkb` and icefloe reads the same WKB (as binary, on
Spark and in process); icefloe's write of the same rows reads in Java's Spark, through
`st_asbinary`, as Java's own."""

from __future__ import annotations

import struct
from collections import Counter
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.types import GeographyType, GeometryType
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


def point(x: float, y: float) -> bytes:
    return b"\x01" + struct.pack("<Idd", 1, x, y)


def line(*pts: tuple[float, float]) -> bytes:
    return b"\x01" + struct.pack("<II", 2, len(pts)) + b"".join(struct.pack("<dd", *p) for p in pts)


ROWS = [
    (1, point(1.5, -2.25), point(10, 20)),
    (2, None, line((0, 0), (1, 1))),
    (3, line((0, 0), (5, 5)), None),
]


def _values(oracle: Oracle, q: str) -> list[tuple[Any, ...]]:
    rows = oracle.sql(f"SELECT id, st_asbinary(g) AS g, st_asbinary(geog) AS geog FROM {q}")
    return sorted((r["id"], *(None if v is None else bytes(v) for v in (r["g"], r["geog"]))) for r in rows)


def test_geospatial_columns_read_and_write_as_javas_spark(
    spark: Any, oracle: Oracle, warehouse: Path
) -> None:
    oracle.sql("SET spark.sql.geospatial.enabled=true")
    name = new_table_name("geo_java")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, g GEOMETRY(4326), geog GEOGRAPHY(4326)) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')"
    )

    def sql_value(fn: str, v: bytes | None) -> str:
        return "NULL" if v is None else f"st_setsrid({fn}(X'{v.hex()}'), 4326)"

    values = ", ".join(
        f"({i}, {sql_value('st_geomfromwkb', g)}, {sql_value('st_geogfromwkb', geog)})" for i, g, geog in ROWS
    )
    oracle.sql(f"INSERT INTO {q} VALUES {values}")
    assert _values(oracle, q) == ROWS

    # icefloe reads Java's table: its types, and the same WKB on Spark (binary) and in process.
    cat = icefloe.load_catalog("geo", type="filesystem", warehouse=str(warehouse))
    table = cat.load_table(name)
    g_type, geog_type = (table.schema().find_field(c).field_type for c in ("g", "geog"))
    assert isinstance(g_type, GeometryType) and isinstance(geog_type, GeographyType)
    df = icefloe.spark.read(spark, table)
    assert df.schema["g"].dataType.simpleString() == "binary"
    assert (
        sorted((r["id"], r["g"] and bytes(r["g"]), r["geog"] and bytes(r["geog"])) for r in df.collect())
        == ROWS
    )
    arrow = table.scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["g"], r["geog"]) for r in arrow) == ROWS

    # icefloe's write of the same rows (from Spark binary columns) in a table of the same
    # types: Java's Spark reads it as its own.
    ours = new_table_name("geo_ours")
    cat.create_table(ours, table.schema(), properties={"format-version": "3"})
    icefloe.spark.append(df, cat.load_table(ours))
    assert _values(oracle, oracle.qualified(ours)) == ROWS
    # The same value and null counts per column (Java's INSERT may write several files).
    assert _counts(oracle, oracle.qualified(ours)) == _counts(oracle, q)


def _counts(oracle: Oracle, q: str) -> dict[str, Counter[int]]:
    out: dict[str, Counter[int]] = {"value_counts": Counter(), "null_value_counts": Counter()}
    for r in oracle.sql(f"SELECT value_counts, null_value_counts FROM {q}.files"):
        for k, counter in out.items():
            counter.update(r[k])
    return out
