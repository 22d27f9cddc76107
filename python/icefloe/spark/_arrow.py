"""Iceberg -> Spark Arrow types for mapInArrow, and the casts a read task applies.

Spark has no uuid, fixed or time type. Iceberg-on-Spark shows uuid as string and
fixed as binary; a time column cannot be read into Spark (Iceberg Java refuses too).
Types are derived from the Iceberg type JSON, not guessed from Arrow, because uuid
and fixed[16] share one Arrow type.
"""

from __future__ import annotations

import uuid
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.exceptions import NotSupportedError

_PRIMITIVES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "string": pa.string(),
    "uuid": pa.string(),
    "binary": pa.binary(),
}


def spark_arrow_type(t: Any, name: str) -> pa.DataType:
    """The Arrow type Spark receives for an Iceberg type (JSON form)."""
    if isinstance(t, str):
        if t in _PRIMITIVES:
            return _PRIMITIVES[t]
        if t.startswith("decimal("):
            p, s = t[len("decimal(") : -1].split(",")
            return pa.decimal128(int(p), int(s))
        if t.startswith("fixed["):
            return pa.binary()
        raise NotSupportedError(f"column '{name}' has Iceberg type {t}, which Spark cannot represent")
    kind = t["type"]
    if kind == "struct":
        return pa.struct(
            [pa.field(f["name"], spark_arrow_type(f["type"], f"{name}.{f['name']}")) for f in t["fields"]]
        )
    if kind == "list":
        return pa.list_(pa.field("element", spark_arrow_type(t["element"], f"{name}.element")))
    if kind == "map":
        return pa.map_(
            pa.field("key", spark_arrow_type(t["key"], f"{name}.key"), nullable=False),
            pa.field("value", spark_arrow_type(t["value"], f"{name}.value")),
        )
    raise NotSupportedError(f"column '{name}' has unknown Iceberg type {kind}")


def spark_arrow_schema(iceberg_schema: dict[str, Any]) -> pa.Schema:
    # Spark treats every column as nullable on read; required-ness is enforced on write.
    return pa.schema(
        [pa.field(f["name"], spark_arrow_type(f["type"], f["name"])) for f in iceberg_schema["fields"]]
    )


def _has_uuid(t: Any) -> bool:
    if isinstance(t, str):
        return t == "uuid"
    if t["type"] == "struct":
        return any(_has_uuid(f["type"]) for f in t["fields"])
    if t["type"] == "list":
        return _has_uuid(t["element"])
    return _has_uuid(t["key"]) or _has_uuid(t["value"])


def _convert(col: pa.Array, t: Any, target: pa.DataType) -> pa.Array:
    if isinstance(t, str) and t == "uuid":
        return pa.array(
            [None if v is None else str(uuid.UUID(bytes=v)) for v in col.to_pylist()], pa.string()
        )
    if not isinstance(t, str) and t["type"] == "struct" and _has_uuid(t):
        children = [
            _convert(col.field(i), f["type"], target.field(i).type) for i, f in enumerate(t["fields"])
        ]
        return pa.StructArray.from_arrays(
            children, fields=list(target), mask=col.is_null() if col.null_count else None
        )
    if not isinstance(t, str) and _has_uuid(t):
        raise NotSupportedError("uuid inside a list or map cannot be read into Spark yet")
    return col if col.type == target else pc.cast(col, target)


def to_spark_batch(
    batch: pa.RecordBatch, iceberg_schema: dict[str, Any], target: pa.Schema
) -> pa.RecordBatch:
    """Casts a batch read by icefloe (icefloe's Arrow types) to what Spark expects."""
    cols = [
        _convert(batch.column(i), f["type"], target.field(i).type)
        for i, f in enumerate(iceberg_schema["fields"])
    ]
    return pa.RecordBatch.from_arrays(cols, schema=target)
