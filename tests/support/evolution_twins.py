"""Twin tables for evolution parity: created identically by icefloe, then one evolved by icefloe
and the other by Apache Iceberg Java (Spark SQL or the Java API); their metadata must agree on
schemas (ids, names, types, docs, required, identifier fields), last-column-id, partition specs
(field ids and names), last-partition-id and sort orders. Rows written by both engines before
and after every change must read the same in both engines."""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import pyarrow as pa
from icefloe.schema import Schema
from icefloe.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    StringType,
    StructType,
    TimestamptzType,
)

from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

UTC = dt.timezone.utc


def make_twins(catalog: Any, schema: Schema, prefix: str, **kwargs: Any) -> tuple[str, str]:
    """Two identical tables made by icefloe: (evolved by icefloe, evolved by Java)."""
    ours, theirs = new_table_name(f"{prefix}_ice"), new_table_name(f"{prefix}_java")
    for name in (ours, theirs):
        catalog.create_table(name, schema, **kwargs)
    return ours, theirs


def raw_metadata(oracle: Oracle, name: str) -> dict[str, Any]:
    """The current metadata JSON file of a table as written (not re-serialised by icefloe)."""
    location = oracle.metadata_location(name)
    with open(location.removeprefix("file:"), encoding="utf-8") as f:
        result: dict[str, Any] = json.load(f)
    return result


def evolution_parts(md: dict[str, Any]) -> dict[str, Any]:
    """What schema, spec and sort-order evolution decide (timestamps and uuids aside)."""

    def schema(s: dict[str, Any]) -> dict[str, Any]:
        return {
            "schema-id": s["schema-id"],
            "identifier-field-ids": sorted(s.get("identifier-field-ids", [])),
            "fields": s["fields"],
        }

    return {
        "format-version": md["format-version"],
        "current-schema-id": md["current-schema-id"],
        "schemas": sorted((schema(s) for s in md["schemas"]), key=lambda s: s["schema-id"]),
        "last-column-id": md["last-column-id"],
        "default-spec-id": md["default-spec-id"],
        "partition-specs": sorted(md["partition-specs"], key=lambda s: s["spec-id"]),
        "last-partition-id": md["last-partition-id"],
        "default-sort-order-id": md["default-sort-order-id"],
        "sort-orders": sorted(md["sort-orders"], key=lambda o: o["order-id"]),
    }


def assert_same_evolution(oracle: Oracle, ours: str, theirs: str, context: str) -> dict[str, Any]:
    a, b = evolution_parts(raw_metadata(oracle, ours)), evolution_parts(raw_metadata(oracle, theirs))
    assert a == b, (
        f"{context}: metadata differs\nicefloe: {json.dumps(a, indent=1)}\njava:    {json.dumps(b, indent=1)}"
    )
    return a


# ---- rows: one value per Iceberg type, as Python (for Arrow) and as a Spark SQL literal ----


def python_value(t: IcebergType, k: int) -> Any:
    if isinstance(t, BooleanType):
        return k % 2 == 0
    if isinstance(t, IntegerType):
        return k
    if isinstance(t, LongType):
        return k * 1_000_003
    if isinstance(t, (FloatType, DoubleType)):
        return k + 0.5
    if isinstance(t, StringType):
        return f"s{k}"
    if isinstance(t, DecimalType):
        return decimal.Decimal(k).scaleb(-t.scale).quantize(decimal.Decimal(1).scaleb(-t.scale))
    if isinstance(t, DateType):
        return dt.date(2024, 1, 1) + dt.timedelta(days=k)
    if isinstance(t, TimestamptzType):
        return dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(hours=7 * k)
    if isinstance(t, StructType):
        return {f.name: python_value(f.field_type, k) for f in t.fields}
    if isinstance(t, ListType):
        return [python_value(t.element_type, k), python_value(t.element_type, k + 1)]
    if isinstance(t, MapType):
        return [(python_value(t.key_type, k), python_value(t.value_type, k))]
    raise TypeError(f"no test value for {t}")


def sql_value(t: IcebergType, k: int) -> str:
    if isinstance(t, StructType):
        inner = ", ".join(f"'{f.name}', {sql_value(f.field_type, k)}" for f in t.fields)
        return f"named_struct({inner})"
    if isinstance(t, ListType):
        return f"array({sql_value(t.element_type, k)}, {sql_value(t.element_type, k + 1)})"
    if isinstance(t, MapType):
        return f"map({sql_value(t.key_type, k)}, {sql_value(t.value_type, k)})"
    # Typed literals, not CASTs from strings: those are nullable, and Java refuses to write a
    # nullable expression into a required column.
    v = python_value(t, k)
    if isinstance(t, BooleanType):
        return "true" if v else "false"
    if isinstance(t, IntegerType):
        return str(v)
    if isinstance(t, LongType):
        return f"{v}L"
    if isinstance(t, DoubleType):
        return f"{v}D"
    if isinstance(t, FloatType):
        return f"CAST({v}D AS FLOAT)"
    if isinstance(t, DecimalType):
        return f"{v}BD"
    if isinstance(t, StringType):
        return f"'{v}'"
    if isinstance(t, DateType):
        return f"DATE '{v.isoformat()}'"
    if isinstance(t, TimestamptzType):
        return f"TIMESTAMP '{v:%Y-%m-%d %H:%M:%S}'"
    raise TypeError(f"no SQL literal for {t}")


def write_row_both_engines(oracle: Oracle, catalog: Any, name: str, k: int) -> None:
    """Row `k` appended by icefloe and row `k + 1` inserted by Java, each fitting the table's
    current schema."""
    table = catalog.load_table(name)
    schema = table.schema()
    arrow_schema = schema.as_arrow()
    row = {f.name: python_value(f.field_type, k) for f in schema.fields}
    table.append(pa.Table.from_pylist([row], schema=arrow_schema))
    values = ", ".join(sql_value(f.field_type, k + 1) for f in schema.fields)
    oracle.sql(f"INSERT INTO {oracle.qualified(name)} SELECT {values}")


def assert_rows_agree(oracle: Oracle, catalog: Any, ours: str, theirs: str, context: str) -> None:
    """Each twin reads the same in icefloe and in Java, and the twins hold the same rows."""
    ours_ice = catalog.load_table(ours).scan().to_arrow()
    assert_same_rows(ours_ice, oracle.df(ours), context=f"{context}: {ours} icefloe vs java")
    theirs_ice = catalog.load_table(theirs).scan().to_arrow()
    assert_same_rows(theirs_ice, oracle.df(theirs), context=f"{context}: {theirs} icefloe vs java")
    assert_same_rows(ours_ice, theirs_ice, context=f"{context}: twins")
