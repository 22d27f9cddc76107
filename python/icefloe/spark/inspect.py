"""Metadata tables on Spark: `icefloe.spark.inspect(spark, table, "files")` is a DataFrame of
the rows `table.inspect.files()` computes in Rust, with the Spark types Iceberg Java's
`SELECT * FROM db.t.files` has (maps as MapType, timestamps as TimestampType, ...).

Metadata tables are small (a row per snapshot, manifest or file) and are built on the
driver, so the DataFrame is made from the collected rows with an explicit schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe.exceptions import NotSupportedError

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["inspect", "spark_schema_of"]


def _spark_type(t: pa.DataType, name: str) -> Any:
    from pyspark.sql import types as T

    if pa.types.is_boolean(t):
        return T.BooleanType()
    if pa.types.is_int32(t):
        return T.IntegerType()
    if pa.types.is_int64(t):
        return T.LongType()
    if pa.types.is_float32(t):
        return T.FloatType()
    if pa.types.is_float64(t):
        return T.DoubleType()
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale)
    if pa.types.is_date32(t):
        return T.DateType()
    if pa.types.is_timestamp(t):
        return T.TimestampType() if t.tz is not None else T.TimestampNTZType()
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return T.StringType()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return T.BinaryType()
    if pa.types.is_struct(t):
        return T.StructType(
            [T.StructField(f.name, _spark_type(f.type, f"{name}.{f.name}"), f.nullable) for f in t]
        )
    if pa.types.is_map(t):
        return T.MapType(
            _spark_type(t.key_type, f"{name}.key"),
            _spark_type(t.item_type, f"{name}.value"),
            t.item_field.nullable,
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(_spark_type(t.value_type, f"{name}.element"), t.value_field.nullable)
    raise NotSupportedError(
        f"metadata table column '{name}' has Arrow type {t}, which Spark cannot represent"
    )


def spark_schema_of(schema: pa.Schema) -> Any:
    """The Spark schema of a metadata table's Arrow schema (nullability kept)."""
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, _spark_type(f.type, f.name), f.nullable) for f in schema])


def _spark_value(v: Any, t: pa.DataType) -> Any:
    """A `to_pylist()` value as Spark's Python row value: maps become dicts, structs tuples."""
    if v is None:
        return None
    if pa.types.is_struct(t):
        return tuple(_spark_value(v.get(f.name), f.type) for f in t)
    if pa.types.is_map(t):
        return {_spark_value(k, t.key_type): _spark_value(x, t.item_type) for k, x in v}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [_spark_value(x, t.value_type) for x in v]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytearray(v)
    return v


def inspect(spark: Any, table: Table, name: str, snapshot_id: int | None = None) -> Any:
    """The metadata table `name` of `table` as a Spark DataFrame (see `icefloe.inspect`)."""
    data = table.inspect.table(name, snapshot_id)
    schema = spark_schema_of(data.schema)
    columns = [data.column(i).to_pylist() for i in range(data.num_columns)]
    types = [f.type for f in data.schema]
    rows = [
        tuple(_spark_value(columns[c][r], types[c]) for c in range(data.num_columns))
        for r in range(data.num_rows)
    ]
    return spark.createDataFrame(rows, schema=schema, verifySchema=False)
