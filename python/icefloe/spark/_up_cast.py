"""Spark's `Cast.canUpCast`: whether a value of one Spark type becomes another without
truncation, loss of precision or a runtime failure (int -> bigint, date -> timestamp, any
atomic type -> string), as Spark's `UpCast` requires. Java's `ResolveViews` up-casts each
column of an Iceberg view's query to the type the view's schema records, and refuses a view
whose query no longer up-casts (a column promoted from int to bigint under a view of int);
`icefloe.spark.sql` does the same. Written here because PySpark exposes no such check without
a JVM (Spark Connect has none); `tests/spark/test_spark_sql_views.py` compares it with
Spark's own `Cast.canUpCast` over a matrix of types."""

from __future__ import annotations

from typing import Any

__all__ = ["can_up_cast"]


def _numeric_rank(t: Any) -> int | None:
    from pyspark.sql import types as T

    order = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DoubleType)
    return next((i for i, kind in enumerate(order) if isinstance(t, kind)), None)


def _as_decimal(t: Any) -> tuple[int, int] | None:
    """(precision, scale) of a decimal, or of the decimal an integral type fits in (Spark's
    `DecimalType.forType`); None for other types."""
    from pyspark.sql import types as T

    if isinstance(t, T.DecimalType):
        return t.precision, t.scale
    integral = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 20}
    return next(((p, 0) for kind, p in integral.items() if isinstance(t, kind)), None)


def _nullability_ok(from_nullable: bool, to_nullable: bool) -> bool:
    return to_nullable or not from_nullable


def can_up_cast(from_type: Any, to_type: Any) -> bool:
    from pyspark.sql import types as T

    f, t = from_type, to_type
    if isinstance(f, T.ArrayType) and isinstance(t, T.ArrayType):
        return _nullability_ok(f.containsNull, t.containsNull) and can_up_cast(f.elementType, t.elementType)
    if isinstance(f, T.MapType) and isinstance(t, T.MapType):
        return (
            _nullability_ok(f.valueContainsNull, t.valueContainsNull)
            and can_up_cast(f.keyType, t.keyType)
            and can_up_cast(f.valueType, t.valueType)
        )
    if isinstance(f, T.StructType) and isinstance(t, T.StructType):
        return len(f.fields) == len(t.fields) and all(
            _nullability_ok(a.nullable, b.nullable) and can_up_cast(a.dataType, b.dataType)
            for a, b in zip(f.fields, t.fields)
        )
    if f == t or isinstance(f, T.NullType):
        return True
    fd, td = _as_decimal(f), _as_decimal(t)
    if isinstance(t, T.DecimalType) and fd is not None and td is not None:
        # the target is wider: as many integer digits and as many fraction digits
        return td[0] - td[1] >= fd[0] - fd[1] and td[1] >= fd[1]
    if isinstance(f, T.DecimalType) and fd is not None and td is not None:
        # a whole decimal into an integral type: fewer digits than the type's largest value has
        return fd[1] == 0 and fd[0] < td[0]
    rf, rt = _numeric_rank(f), _numeric_rank(t)
    if rf is not None and rt is not None:
        return rf <= rt
    timestamps = (T.TimestampType, T.TimestampNTZType)
    if isinstance(f, T.DateType) and isinstance(t, timestamps):
        return True
    if isinstance(f, timestamps) and isinstance(t, timestamps):
        return True
    if isinstance(f, T.TimestampType) and isinstance(t, T.LongType):
        return True
    if isinstance(f, T.LongType) and isinstance(t, T.TimestampType):
        return True
    if isinstance(t, T.StringType):
        return isinstance(f, T.AtomicType)
    if isinstance(f, T.DayTimeIntervalType) and isinstance(t, T.DayTimeIntervalType):
        return True
    return isinstance(f, T.YearMonthIntervalType) and isinstance(t, T.YearMonthIntervalType)
