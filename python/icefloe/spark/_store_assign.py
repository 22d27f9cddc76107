"""Spark's ANSI store assignment for the numeric widenings Java's writes accept and an
Iceberg promotion does not cover, on Arrow batches: the `icefloe` data source's writers
receive the DataFrame's own types (a Python data source gets no casts from Spark), so a
Spark decimal, integer or float column written to a `double` column is converted here, with
Spark's rounding (a decimal becomes the double nearest to its exact value, as Java's
`BigDecimal.doubleValue`). Byte and short columns into `int` / `long` ones need nothing: the
writer's schema check takes them as Iceberg promotions. `icefloe.spark.append` does the same
with Spark's own casts (`write._store_assigned`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe.exceptions import ValidationError
from icefloe.spark._names import (
    nested_spelling,
    renamed,
    renamed_schema,
    respelled,
    table_arrow_schema,
    table_spelling,
)

if TYPE_CHECKING:
    from icefloe.table import Table

Widen = Callable[[pa.RecordBatch], pa.RecordBatch]


class InputShape:
    """How the data source's writers take Spark's batches, which Spark hands a Python data
    source as the DataFrame has them: names (top level and in structs) in the table's
    spelling, matched ignoring case as Spark resolves them, then Spark's numeric widenings.
    `input_schema` is the batches' schema once renamed (PySpark 4.0's stream rows are made
    into it), `schema` the one the writer gets."""

    def __init__(self, spark_schema: Any, table: Table) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        try:
            arrow_schema = to_arrow_schema(spark_schema)
        except TypeError as e:  # a Spark type Arrow cannot carry
            raise ValidationError(f"DataFrame schema cannot be written to Iceberg: {e}") from e
        self.names = table_spelling(arrow_schema.names, [f.name for f in table.schema().fields])
        if self.names is not None:
            arrow_schema = renamed_schema(arrow_schema, self.names)
        self.nested = nested_spelling(arrow_schema, table_arrow_schema(table))
        if self.nested is not None:
            arrow_schema = self.nested
        self.input_schema = arrow_schema
        self.schema, self.widen = store_assigned(arrow_schema, table)

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        out = respelled(renamed(batch, self.names), self.nested)
        return out if self.widen is None else self.widen(out)


def _to_double_type(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_float32(t) or pa.types.is_decimal(t)


def store_assigned(schema: pa.Schema, table: Table) -> tuple[pa.Schema, Widen | None]:
    """The schema the batches of `schema` have once widened for `table`, and the function
    widening each batch (None when no column needs it). Top-level columns of the table's
    spelling; a column the table lacks is left to the schema check."""
    types = {f.name: f.field_type.to_json() for f in table.schema().fields}
    indices = [i for i, f in enumerate(schema) if types.get(f.name) == "double" and _to_double_type(f.type)]
    if not indices:
        return schema, None
    target = schema
    for i in indices:
        target = target.set(i, target.field(i).with_type(pa.float64()))

    def widen(batch: pa.RecordBatch) -> pa.RecordBatch:
        arrays = list(batch.columns)
        for i in indices:
            arrays[i] = to_double(arrays[i])
        return pa.RecordBatch.from_arrays(arrays, schema=target)

    return target, widen


def to_double(arr: pa.Array) -> pa.Array:
    """`arr` (integer, float or decimal) as doubles rounded to nearest, as Spark's cast."""
    if pa.types.is_decimal(arr.type):
        return _decimal_to_double(arr)
    # int64 beyond 2**53 rounds to nearest as Java's (double) conversion; Arrow's safe cast
    # would refuse it instead.
    return pc.cast(arr, pa.float64(), safe=False)


def _decimal_to_double(arr: pa.Array) -> pa.Array:
    # Arrow writes a decimal's exact digits and parses text to the nearest double (its cast
    # of decimal to double divides instead, off by an ulp on about one value in ten).
    return pc.cast(pc.cast(arr, pa.string()), pa.float64())
