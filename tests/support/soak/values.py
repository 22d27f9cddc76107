"""The soak's schema and values (see `support.soak`): the column kinds with their Spark SQL,
Arrow and Iceberg types, the partition transforms of each kind, the edge values rows are
drawn from, and a value as a Spark SQL literal or rows as an Arrow table."""

from __future__ import annotations

import datetime as dt
import decimal
import random
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from icefloe.types import IntegerType, ListType, MapType, NestedField, StringType, StructType

UTC = dt.timezone.utc

# kind -> (Spark SQL type, Arrow type)
KINDS: dict[str, tuple[str, pa.DataType]] = {
    "int": ("INT", pa.int32()),
    "long": ("BIGINT", pa.int64()),
    "string": ("STRING", pa.string()),
    "double": ("DOUBLE", pa.float64()),
    "float": ("FLOAT", pa.float32()),
    "decimal": ("DECIMAL(9,2)", pa.decimal128(9, 2)),
    "date": ("DATE", pa.date32()),
    "ts": ("TIMESTAMP", pa.timestamp("us", tz="UTC")),
    "ts_ntz": ("TIMESTAMP_NTZ", pa.timestamp("us")),
    "bool": ("BOOLEAN", pa.bool_()),
    "binary": ("BINARY", pa.binary()),
}
# The primitive kinds, which a history's first schema and its `add_column` steps draw from.
PRIMITIVES = sorted(KINDS)
# Nested kinds, added mid-history by their own stream (history.NESTED_SHARE): a struct of two
# optional fields, a list of optional ints, a map of strings to optional ints, as Spark SQL's
# ALTER TABLE ADD COLUMN makes them.
NESTED: dict[str, tuple[str, pa.DataType]] = {
    "struct": ("STRUCT<a: INT, b: STRING>", pa.struct([("a", pa.int32()), ("b", pa.string())])),
    "list": ("ARRAY<INT>", pa.list_(pa.int32())),
    "map": ("MAP<STRING, INT>", pa.map_(pa.string(), pa.int32())),
}
KINDS.update(NESTED)
MAP_KEYS = ["k", "x", "", "日本"]
# Promotions Iceberg allows (and Spark SQL's ALTER COLUMN ... TYPE can write).
PROMOTIONS = {"int": "long", "float": "double"}
# Partition transforms per column kind: (Spark SQL of the transform over `c`, icefloe's).
TRANSFORMS: dict[str, list[tuple[str, str]]] = {
    "int": [("{c}", "identity"), ("bucket(4, {c})", "bucket[4]"), ("truncate(10, {c})", "truncate[10]")],
    "long": [("bucket(3, {c})", "bucket[3]"), ("truncate(100, {c})", "truncate[100]")],
    "string": [("{c}", "identity"), ("truncate(1, {c})", "truncate[1]"), ("bucket(5, {c})", "bucket[5]")],
    "decimal": [("bucket(2, {c})", "bucket[2]"), ("truncate(50, {c})", "truncate[50]")],
    "date": [("{c}", "identity"), ("years({c})", "year"), ("months({c})", "month"), ("days({c})", "day")],
    "ts": [("days({c})", "day"), ("hours({c})", "hour"), ("months({c})", "month")],
    "ts_ntz": [("days({c})", "day"), ("years({c})", "year")],
    "bool": [("{c}", "identity")],
}

INT_EDGES = [0, 1, -1, 2**31 - 1, -(2**31), 7, 9, 10, -10, 99]
LONG_EDGES = [0, -1, 2**63 - 1, -(2**63), 2**40, 99, 100, -101]
DOUBLE_EDGES = [0.0, -0.0, float("nan"), float("inf"), float("-inf"), 1.5, -2.25, 1e300, 5e-324]
DEC_EDGES = ["0.00", "-0.01", "9999999.99", "-9999999.99", "49.99", "50.00", "123.45"]
STRINGS = ["", "a", "b", "añb", "日本", "😀x", "x y", "zz", "A"]
DATES = [
    dt.date(1969, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(1900, 1, 1),
    dt.date(2100, 2, 28),
    dt.date(2024, 2, 29),
]
INSTANTS = [
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
    dt.datetime(1970, 1, 1),
    dt.datetime(1901, 6, 1, 12, 30),
    dt.datetime(2262, 4, 11, 23, 47, 16, 854775),
    dt.datetime(2024, 3, 10, 2, 30, 0, 1),
]


def draw_value(rng: random.Random, kind: str, truncated: bool = False) -> Any:
    """A value of `kind`, from the edges half the time. `truncated`: the column is the source
    of a truncate partition field, which gets no integer minimum: there Iceberg Java's
    truncation wraps (truncate[100](Long.MIN_VALUE) is a large positive number, as icefloe's
    is too, for the same partition tuple), and Java's DELETE then drops that whole file by
    its partition for `c > -1`, rows it does not match included (seed 994300727; icefloe
    keeps them). The soak leaves that Java bug out rather than fail on it every time."""
    if rng.random() < 0.12:
        return None
    if kind in ("int", "long"):
        edges = INT_EDGES if kind == "int" else LONG_EDGES
        if truncated:
            edges = [e for e in edges if e not in (-(2**31), -(2**63))]
        spread = 50 if kind == "int" else 10**6
        return rng.choice(edges) if rng.random() < 0.5 else rng.randrange(-spread, spread)
    if kind == "double":
        return rng.choice(DOUBLE_EDGES) if rng.random() < 0.5 else round(rng.uniform(-100, 100), 2)
    if kind == "float":  # values a float holds exactly, so both engines' literals agree
        v = rng.choice(DOUBLE_EDGES) if rng.random() < 0.5 else rng.randrange(-400, 400) / 4
        return 3.5 if v in (1e300, 5e-324) else v
    if kind == "decimal":
        return decimal.Decimal(
            rng.choice(DEC_EDGES) if rng.random() < 0.5 else f"{rng.randrange(-9999, 9999) / 100:.2f}"
        )
    if kind == "string":
        return rng.choice(STRINGS)
    if kind == "date":
        return (
            rng.choice(DATES)
            if rng.random() < 0.5
            else dt.date(2020, 1, 1) + dt.timedelta(days=rng.randrange(-800, 800))
        )
    if kind in ("ts", "ts_ntz"):
        instant: dt.datetime = (
            rng.choice(INSTANTS)
            if rng.random() < 0.5
            else dt.datetime(2024, 1, 1) + dt.timedelta(seconds=rng.randrange(-(10**8), 10**8))
        )
        return instant.replace(tzinfo=UTC) if kind == "ts" else instant
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randrange(0, 4)))
    if kind == "struct":
        return {"a": draw_value(rng, "int"), "b": draw_value(rng, "string")}
    if kind == "list":
        return [draw_value(rng, "int") for _ in range(rng.randrange(0, 4))]
    if kind == "map":
        return {k: draw_value(rng, "int") for k in rng.sample(MAP_KEYS, rng.randrange(0, 3))}
    raise AssertionError(kind)


@dataclass
class Column:
    name: str
    kind: str
    partition_source: bool = False
    truncate_source: bool = False


def sql_literal(v: Any, kind: str) -> str:
    """`v` as a Spark SQL literal of the column kind's type."""
    sql_type = KINDS[kind][0]
    if v is None:
        return f"CAST(NULL AS {sql_type})"
    if kind in ("int", "long"):
        return f"CAST({v} AS {sql_type})"
    if kind in ("double", "float"):
        text = (
            "NaN"
            if v != v
            else "Infinity"
            if v == float("inf")
            else "-Infinity"
            if v == float("-inf")
            else repr(v)
        )
        return f"CAST('{text}' AS {sql_type})"
    if kind == "decimal":
        return f"CAST('{v}' AS {sql_type})"
    if kind == "string":
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if kind == "date":
        return f"DATE '{v.isoformat()}'"
    if kind == "ts":
        return f"TIMESTAMP '{v.astimezone(UTC).replace(tzinfo=None).isoformat(sep=' ')}'"
    if kind == "ts_ntz":
        return f"TIMESTAMP_NTZ '{v.isoformat(sep=' ')}'"
    if kind == "bool":
        return "true" if v else "false"
    if kind == "binary":
        return f"X'{v.hex()}'"
    raise AssertionError(kind)


def arrow_rows(rows: list[dict[str, Any]], columns: list[Column]) -> pa.Table:
    def value(v: Any, kind: str) -> Any:
        return list(v.items()) if kind == "map" and v is not None else v  # a map as its entries

    return pa.table(
        {c.name: pa.array([value(r.get(c.name), c.kind) for r in rows], KINDS[c.kind][1]) for c in columns}
    )


ICEBERG_TYPES = {
    "int": "int",
    "long": "long",
    "string": "string",
    "double": "double",
    "float": "float",
    "decimal": "decimal(9, 2)",
    "date": "date",
    "ts": "timestamptz",
    "ts_ntz": "timestamp",
    "bool": "boolean",
    "binary": "binary",
}
# icefloe's types of the nested kinds (field ids are assigned by the schema update)
NESTED_TYPES = {
    "struct": StructType(NestedField(1, "a", IntegerType()), NestedField(2, "b", StringType())),
    "list": ListType(1, IntegerType(), element_required=False),
    "map": MapType(1, StringType(), 2, IntegerType(), value_required=False),
}
