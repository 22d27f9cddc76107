"""Iceberg -> Spark Arrow types for mapInArrow, and the casts a read task applies.

Spark has no uuid, fixed or time type. Iceberg-on-Spark shows uuid as string and
fixed as binary; a time column cannot be read into Spark (Iceberg Java refuses too).
A v3 geometry or geography is its WKB as binary, on both lines.
A v3 variant is Spark's `variant` from PySpark 4 (Spark's Arrow form: a struct of `value` and
`metadata`, the latter tagged); PySpark 3.5 has no variant type.
Types are derived from the Iceberg type JSON, not guessed from Arrow, because uuid
and fixed[16] share one Arrow type.
"""

from __future__ import annotations

from typing import Any

import numpy as np
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
    # v3 `unknown`: all nulls, Spark's NullType (as Java's Spark reads it).
    "unknown": pa.null(),
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
        if t == "variant":
            return _spark_variant_type(name)
        if t.lower().startswith(("geometry", "geography")):
            # WKB, as binary (Spark 3.5 has no geospatial type; 4.1's is off by default and
            # holds only the CRS Spark knows).
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


def _spark_variant_type(name: str) -> pa.DataType:
    """Spark's Arrow form of its `variant` type (PySpark's `to_arrow_type`), which only
    PySpark 4 has."""
    from pyspark.sql import types as T

    if not hasattr(T, "VariantType"):
        import pyspark

        raise NotSupportedError(
            f"column '{name}' has Iceberg type variant, which Spark {pyspark.__version__} cannot "
            "represent (Spark 4 can); select the other columns"
        )
    return pa.struct(
        [
            pa.field("value", pa.binary(), nullable=False),
            pa.field("metadata", pa.binary(), nullable=False, metadata={b"variant": b"true"}),
        ]
    )


def spark_schema(arrow_schema: pa.Schema) -> Any:
    """The Spark schema of batches of `arrow_schema` as icefloe hands them to Spark: an Arrow
    timestamp without a zone (Iceberg's `timestamp`) is Spark's `timestamp_ntz`, as Java's
    Spark reads it (PySpark's default would make it a `timestamp`: an instant, rendered
    shifted in a session outside UTC, and refused when written back to the column)."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema, prefer_timestamp_ntz=True)


def spark_type(t: Any, name: str) -> Any:
    """The Spark type of an Iceberg type (JSON form), as `spark_schema` maps it."""
    from pyspark.sql.pandas.types import from_arrow_type

    return from_arrow_type(spark_arrow_type(t, name), prefer_timestamp_ntz=True)


def spark_arrow_schema(iceberg_schema: dict[str, Any]) -> pa.Schema:
    # Spark treats every column as nullable on read; required-ness is enforced on write.
    return pa.schema(
        [pa.field(f["name"], spark_arrow_type(f["type"], f["name"])) for f in iceberg_schema["fields"]]
    )


def _rebuilt(t: Any) -> bool:
    """Whether a column of Iceberg type `t` is rebuilt for Spark rather than cast: uuids
    become strings and variants take Spark's field order, at any depth."""
    if isinstance(t, str):
        return t in ("uuid", "variant")
    if t["type"] == "struct":
        return any(_rebuilt(f["type"]) for f in t["fields"])
    if t["type"] == "list":
        return _rebuilt(t["element"])
    return _rebuilt(t["key"]) or _rebuilt(t["value"])


# byte value -> its two lowercase hex digits
_HEX_PAIRS = np.frombuffer(b"".join(b"%02x" % i for i in range(256)), dtype=np.uint8).reshape(256, 2)
# the 8-4-4-4-12 groups: (first hex digit, end) in the 32 digits -> offset in the 36 characters
_GROUPS = ((0, 8, 0), (8, 12, 9), (12, 16, 14), (16, 20, 19), (20, 32, 24))


def uuid_strings(col: pa.Array) -> pa.Array:
    """A fixed_size_binary(16) column as canonical lowercase uuid strings (what Iceberg on
    Spark shows), nulls kept; vectorised, no Python object per value."""
    n = len(col)
    if n == 0:
        return pa.array([], pa.string())
    if col.type != pa.binary(16):
        raise TypeError(f"expected uuid values as fixed_size_binary(16), found {col.type}")
    raw = np.frombuffer(col.buffers()[1], dtype=np.uint8)[col.offset * 16 : (col.offset + n) * 16]
    digits = _HEX_PAIRS[raw].reshape(n, 32)
    text = np.full((n, 36), ord("-"), dtype=np.uint8)
    for start, end, at in _GROUPS:
        text[:, at : at + end - start] = digits[:, start:end]
    offsets = np.arange(0, 36 * (n + 1), 36, dtype=np.int32)
    out = pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(text)])
    if col.null_count:
        out = pc.if_else(col.is_valid(), out, pa.scalar(None, pa.string()))
    return out


def _convert(col: pa.Array, t: Any, target: pa.DataType) -> pa.Array:
    if isinstance(t, str) and t == "uuid":
        return uuid_strings(col)
    if isinstance(t, str) and t == "variant":
        mask = col.is_null() if col.null_count else None
        return pa.StructArray.from_arrays(
            [col.field("value"), col.field("metadata")], fields=list(target), mask=mask
        )
    if isinstance(t, str) or not _rebuilt(t):
        return col if col.type == target else pc.cast(col, target)
    mask = col.is_null() if col.null_count else None
    kind = t["type"]
    if kind == "struct":
        children = [
            _convert(col.field(i), f["type"], target.field(i).type) for i, f in enumerate(t["fields"])
        ]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    # lists and maps: rebuilt over their own slice of the children, offsets from 0
    offsets = col.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    offsets = pc.subtract(offsets, pa.scalar(first, offsets.type))
    if kind == "list":
        values = _convert(col.values.slice(first, last - first), t["element"], target.value_type)
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=mask)
    keys = _convert(col.keys.slice(first, last - first), t["key"], target.key_type)
    items = _convert(col.items.slice(first, last - first), t["value"], target.item_type)
    return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=mask)


def to_spark_batch(
    batch: pa.RecordBatch, iceberg_schema: dict[str, Any], target: pa.Schema
) -> pa.RecordBatch:
    """Casts a batch read by icefloe (icefloe's Arrow types) to what Spark expects."""
    cols = [
        _convert(batch.column(i), f["type"], target.field(i).type)
        for i, f in enumerate(iceberg_schema["fields"])
    ]
    return pa.RecordBatch.from_arrays(cols, schema=target)


def ipc_bytes(table: pa.Table) -> bytes:
    """`table` as one Arrow IPC stream (what travels to executors or back in a message)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table.combine_chunks())
    return bytes(sink.getvalue().to_pybytes())
