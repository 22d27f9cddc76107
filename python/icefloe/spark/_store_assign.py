"""Spark's ANSI store assignment for the numeric widenings Java's writes accept and an
Iceberg promotion does not cover, on Arrow batches: the `icefloe` data source's writers
receive the DataFrame's own types (a Python data source gets no casts from Spark), so a
Spark decimal, integer or float column written to a `double` column is converted here, with
Spark's rounding (a decimal becomes the double nearest to its exact value, as Java's
`BigDecimal.doubleValue`). Byte and short columns into `int` / `long` ones need nothing: the
writer's schema check takes them as Iceberg promotions. `icefloe.spark.append` does the same
with Spark's own casts (`write._store_assigned`).

The second half is the same assignment on Spark columns, for the values `icefloe.spark.update`,
`merge` and `upsert` store (`check_assignable`, then `stored`): what Java's UPDATE / MERGE INTO
accept and refuse, leaf by leaf inside structs, arrays and maps, and overflow failing the write."""

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
    session_case_sensitive,
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


# Spark columns: the store assignment of UPDATE / MERGE / upsert values. Spark makes none for
# them: icefloe computes the new rows itself and hands them to its own writers.

_INTEGRAL_RANGES = {"tinyint": 2**7, "smallint": 2**15, "int": 2**31, "bigint": 2**63}


def check_assignable(column: str, found: Any, expected: Any) -> None:
    """Refuses, before anything is written, a value of Spark type `found` that Spark's ANSI
    store assignment refuses for a column of type `expected`, as Java's UPDATE / MERGE INTO
    fail on it at analysis: a string into a number, a number into a date, a struct whose
    fields do not match the column's by name. Nested types are compared leaf by leaf
    (structs by field name, ignoring case unless `spark.sql.caseSensitive`); nullability is
    not part of it (a null into a required field fails when written)."""
    problem = _problem(column, found, expected, session_case_sensitive())
    if problem is None:
        return
    path, detail = problem
    where = f"column {column!r} of type {expected.simpleString()}"
    if path == column and detail is None:
        raise ValidationError(f"cannot store a value of type {found.simpleString()} in {where}")
    raise ValidationError(
        f"cannot store a value of type {found.simpleString()} in {where}: " + (detail or "")
    )


def _problem(path: str, found: Any, expected: Any, cs: bool) -> tuple[str, str | None] | None:
    """None when `found` can be stored as `expected`, else (where, why) — `why` None for a
    leaf of the wrong type at `where` itself."""
    from pyspark.sql import types as T

    if found == expected or isinstance(found, T.NullType):
        return None
    if isinstance(found, T.StructType) and isinstance(expected, T.StructType):
        pairs, why = _matched_fields(path, found, expected, cs)
        if why is not None:
            return path, why
        for e, f in pairs:
            inner = _problem(f"{path}.{e.name}", f.dataType, e.dataType, cs)
            if inner is not None:
                return _nested(inner, f"{path}.{e.name}", f.dataType, e.dataType)
        return None
    if isinstance(found, T.ArrayType) and isinstance(expected, T.ArrayType):
        el_found, el_expected = found.elementType, expected.elementType
        inner = _problem(f"{path}.element", el_found, el_expected, cs)
        return None if inner is None else _nested(inner, f"{path}.element", el_found, el_expected)
    if isinstance(found, T.MapType) and isinstance(expected, T.MapType):
        for part, f_t, e_t in (
            ("key", found.keyType, expected.keyType),
            ("value", found.valueType, expected.valueType),
        ):
            inner = _problem(f"{path}.{part}", f_t, e_t, cs)
            if inner is not None:
                return _nested(inner, f"{path}.{part}", f_t, e_t)
        return None
    if _leaf_assignable(found, expected):
        return None
    return path, None


def _nested(inner: tuple[str, str | None], path: str, found: Any, expected: Any) -> tuple[str, str]:
    where, why = inner
    if why is None:  # the leaf at `path` itself
        why = f"{found.simpleString()} cannot be stored in {path!r} of type {expected.simpleString()}"
    return where, why


def _leaf_assignable(found: Any, expected: Any) -> bool:
    """Spark's `Cast.canANSIStoreAssign` for types that are not nested: numbers into numbers,
    dates and timestamps into one another, any atomic value into a string."""
    from pyspark.sql import types as T

    if isinstance(found, T.NumericType) and isinstance(expected, T.NumericType):
        return True
    datetime = (T.DateType, T.TimestampType, T.TimestampNTZType)
    if isinstance(found, datetime) and isinstance(expected, datetime):
        return True
    return isinstance(expected, T.StringType) and isinstance(found, T.AtomicType)


def _matched_fields(
    path: str, found: Any, expected: Any, cs: bool
) -> tuple[list[tuple[Any, Any]], str | None]:
    """(column field, value field) pairs of two structs matched by name, as Spark resolves a
    struct assigned to a struct column (fields reordered by name); else why they do not match."""

    def key(name: str) -> str:
        return name if cs else name.lower()

    by_name: dict[str, list[Any]] = {}
    for f in found.fields:
        by_name.setdefault(key(f.name), []).append(f)
    pairs = []
    for e in expected.fields:
        hits = by_name.get(key(e.name), [])
        if not hits:
            return [], f"the value has no field for {path + '.' + e.name!r}"
        if len(hits) > 1:
            return [], f"the value has {len(hits)} fields named {e.name!r} for {path + '.' + e.name!r}"
        pairs.append((e, hits[0]))
    names = {key(e.name) for e in expected.fields}
    extra = [f.name for f in found.fields if key(f.name) not in names]
    if extra:
        return [], f"the value has extra field(s) {extra} for the struct {path!r}"
    return pairs, None


def stored(column: str, value: Any, found: Any, expected: Any) -> Any:
    """`value` (a Spark column of type `found`, accepted by `check_assignable`) as the
    column's type `expected`: structs rebuilt field by field in the column's order and
    names, arrays and maps element by element (Spark's `transform`, `transform_keys`,
    `transform_values`: no Python per row), each leaf cast to its type. A leaf that does not
    fit fails the write, as Spark's ANSI store assignment fails Java's UPDATE / MERGE
    (CAST_OVERFLOW_IN_TABLE_INSERT), where a plain cast wraps an integer and makes an
    overflowing decimal null (PySpark 3.5's default)."""
    return _stored(column, value, found, expected, session_case_sensitive())


def _stored(path: str, value: Any, found: Any, expected: Any, cs: bool) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if found == expected:
        return value
    if isinstance(found, T.NullType) or _same_but_nullability(found, expected):
        return value.cast(expected)
    if isinstance(found, T.StructType) and isinstance(expected, T.StructType):
        pairs, _ = _matched_fields(path, found, expected, cs)
        fields = [
            _stored(f"{path}.{e.name}", value.getField(f.name), f.dataType, e.dataType, cs).alias(e.name)
            for e, f in pairs
        ]
        return F.when(value.isNull(), F.lit(None).cast(expected)).otherwise(F.struct(*fields))
    if isinstance(found, T.ArrayType) and isinstance(expected, T.ArrayType):
        el_found, el_expected = found.elementType, expected.elementType
        return F.transform(value, lambda x: _stored(f"{path}.element", x, el_found, el_expected, cs))
    if isinstance(found, T.MapType) and isinstance(expected, T.MapType):
        out = value
        if found.keyType != expected.keyType:
            k_found, k_expected = found.keyType, expected.keyType
            out = F.transform_keys(out, lambda k, _v: _stored(f"{path}.key", k, k_found, k_expected, cs))
        if found.valueType != expected.valueType:
            v_found, v_expected = found.valueType, expected.valueType
            out = F.transform_values(out, lambda _k, v: _stored(f"{path}.value", v, v_found, v_expected, cs))
        return out
    return _stored_leaf(path, value, found, expected)


def _same_but_nullability(found: Any, expected: Any) -> bool:
    """Whether `found` is `expected` but for nullability (a `named_struct` of literals, an
    `array` of non-null elements), with field names spelled alike and in the same order, and
    no field of `found` that may hold a null where `expected` has none: then Spark's cast is
    the store assignment, nothing to rebuild."""
    from pyspark.sql import types as T

    if isinstance(found, T.StructType) and isinstance(expected, T.StructType):
        return len(found.fields) == len(expected.fields) and all(
            f.name == e.name
            and (e.nullable or not f.nullable)
            and _same_but_nullability(f.dataType, e.dataType)
            for f, e in zip(found.fields, expected.fields)
        )
    if isinstance(found, T.ArrayType) and isinstance(expected, T.ArrayType):
        return (expected.containsNull or not found.containsNull) and _same_but_nullability(
            found.elementType, expected.elementType
        )
    if isinstance(found, T.MapType) and isinstance(expected, T.MapType):
        return (
            (expected.valueContainsNull or not found.valueContainsNull)
            and _same_but_nullability(found.keyType, expected.keyType)
            and _same_but_nullability(found.valueType, expected.valueType)
        )
    return bool(found == expected)


def _stored_leaf(path: str, value: Any, found: Any, expected: Any) -> Any:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    cast = value.cast(expected)
    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    fractional = (T.FloatType, T.DoubleType, T.DecimalType)
    fail = None
    if isinstance(expected, integral) and isinstance(found, integral):
        fail = cast.cast(found) != value
    elif isinstance(expected, integral) and isinstance(found, fractional):
        half = _INTEGRAL_RANGES[expected.simpleString()]
        fail = (value <= -half - 1) | (value >= half)
        if isinstance(found, (T.FloatType, T.DoubleType)):
            fail = fail | F.isnan(value)
    elif isinstance(expected, T.DecimalType) and isinstance(found, (*integral, *fractional)):
        fail = value.isNotNull() & cast.isNull()
    if fail is None:
        return cast
    message = (
        f"CAST_OVERFLOW_IN_TABLE_INSERT: a value does not fit column {path!r} "
        f"of type {expected.simpleString()}"
    )
    return F.when(fail, F.raise_error(F.lit(message))).otherwise(cast)
