"""Iceberg's SQL functions in queries: `system.bucket(16, id)`, `cat.system.days(ts)`,
`cat.truncate(4, name)`, `system.iceberg_version()`, as Iceberg's Spark runtime offers them
(`SparkFunctions`: years, months, days, hours, bucket, truncate, iceberg_version).

Each call becomes Spark SQL of the same value and type as Java's function, written for the
argument's Spark type (found by analysing the call's arguments in their SELECT's scope, and
those naming an outer query's columns in the enclosing scopes, innermost first):

- `years`, `months`, `hours`: ints counted from 1970 (of the UTC instant for a `timestamp`,
  of the wall-clock value for a `timestamp_ntz`); `days`: a DATE;
- `truncate(W, x)`: `x - pmod(x, W)` for the integer types and decimals (W units of the
  scale), the first W characters of a string, the first W bytes of a binary;
- `bucket(N, x)`: Iceberg's 32-bit Murmur3 hash (the bytes the spec hashes for each type),
  positive, modulo N: a vectorised UDF over icefloe's own partition transform
  (`_native.apply_transform`), registered once per session as `icefloe_bucket`;
- `iceberg_version()`: icefloe's version (its Iceberg support is its own, not a Java release).

A call on a type Java's function refuses, or with a width that is not an integer literal, is
a `ValidationError` naming the function and the type.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.dialect import IcebergSpark
from icefloe.spark.sql.query import to_spark_sql

if TYPE_CHECKING:
    from icefloe.spark.sql.query import Context

__all__ = ["function_scope", "has_functions", "rewrite_functions"]

FUNCTIONS = frozenset({"iceberg_version", "years", "months", "days", "hours", "bucket", "truncate"})
_BUCKET_UDF = "icefloe_bucket"
_REGISTERED: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
_DAY_MICROS = 86_400_000_000
_HOUR_MICROS = 3_600_000_000
_NTZ_EPOCH = "TIMESTAMP_NTZ'1970-01-01 00:00:00'"
_BITS = {"byte": 8, "short": 16, "integer": 32, "long": 64}


def has_functions(ctx: Context, tree: exp.Expr) -> bool:
    """Whether `tree` calls one of Iceberg's functions."""
    return any(_function_name(ctx, node) is not None for node in tree.find_all(exp.Dot))


def rewrite_functions(ctx: Context, tree: exp.Expr, scope: exp.Select | None = None) -> bool:
    """Replaces each call of an Iceberg function in `tree` (whose icefloe tables are already
    views) by its Spark SQL, innermost first; whether any was replaced. A call's argument is
    typed in the SELECT holding the call, else over `scope`'s FROM (a DML statement's target
    and source: `function_scope`)."""
    calls = [node for node in tree.find_all(exp.Dot) if _function_name(ctx, node) is not None]
    calls.sort(key=lambda node: -node.depth)
    for call in calls:
        name = _function_name(ctx, call)
        assert name is not None
        fn = call.expression
        args = list(fn.expressions)
        call.replace(_translate(ctx, tree, call, name, args, scope))
    return bool(calls)


@contextmanager
def function_scope(ctx: Context, frames: list[tuple[Any, str]]) -> Iterator[exp.Select]:
    """A `SELECT 1 FROM a CROSS JOIN b` over `frames` (DataFrames, each under its alias, as
    temporary views dropped on leaving): the columns a DML statement's WHERE, SET values and
    MERGE conditions see, for typing Iceberg functions' arguments. Analysed only, never run."""
    views: list[str] = []
    try:
        for frame, _alias in frames:
            views.append(f"__icefloe_function_scope_{uuid.uuid4().hex}")
            frame.createOrReplaceTempView(views[-1])
        sources = " CROSS JOIN ".join(
            f"{view} AS `{alias.replace('`', '``')}`" for view, (_f, alias) in zip(views, frames)
        )
        select = sqlglot.parse_one(f"SELECT 1 FROM {sources}", dialect=IcebergSpark)
        assert isinstance(select, exp.Select)
        yield select
    finally:
        for view in views:
            ctx.spark.catalog.dropTempView(view)


def _function_name(ctx: Context, node: exp.Dot) -> str | None:
    """The Iceberg function a `qualifier.fn(...)` calls: `system.fn`, `cat.system.fn` or
    `cat.fn` with `cat` an icefloe catalog; else None."""
    fn = node.expression
    if not isinstance(fn, exp.Anonymous) or str(fn.this).lower() not in FUNCTIONS:
        return None
    qualifier = _parts(node.this)
    if qualifier is None:
        return None
    lowered = [q.lower() for q in qualifier]
    if lowered == ["system"] or (
        len(qualifier) == 2 and lowered[1] == "system" and ctx.resolver.is_catalog(qualifier[0])
    ):
        return str(fn.this).lower()
    if len(qualifier) == 1 and ctx.resolver.is_catalog(qualifier[0]):
        return str(fn.this).lower()
    return None


def _parts(node: exp.Expr) -> list[str] | None:
    if isinstance(node, exp.Identifier):
        return [node.name]
    if isinstance(node, exp.Column) and not node.args.get("table"):
        return [node.name]
    if isinstance(node, exp.Dot):
        left, right = _parts(node.this), _parts(node.expression)
        return None if left is None or right is None else left + right
    return None


def _translate(
    ctx: Context, tree: exp.Expr, call: exp.Dot, name: str, args: list[exp.Expr], scope: exp.Select | None
) -> exp.Expr:
    if name == "iceberg_version":
        if args:
            raise ValidationError(f"iceberg_version: expected no arguments, found {len(args)}")
        from icefloe import __version__

        return exp.Literal.string(f"icefloe {__version__}")
    if name in ("bucket", "truncate"):
        if len(args) != 2:
            raise ValidationError(f"{name}: expected 2 arguments (width, value), found {len(args)}")
        width = _width(name, args[0])
        value = args[1]
    else:
        if len(args) != 1:
            raise ValidationError(f"{name}: expected 1 argument, found {len(args)}")
        width, value = 0, args[0]
    spark_type = _type_of(ctx, tree, call, value, scope)
    text = _SQL[name](ctx, width, f"({to_spark_sql(value)})", spark_type)
    return sqlglot.parse_one(text, dialect=IcebergSpark)


def _width(name: str, node: exp.Expr) -> int:
    literal = node.this if isinstance(node, exp.Paren) else node
    negative = isinstance(literal, exp.Neg)
    if negative:
        literal = literal.this
    if not isinstance(literal, exp.Literal) or literal.is_string or not literal.this.isdigit():
        raise ValidationError(f"{name}: the width must be an integer literal, found {node.sql()}")
    width = -int(literal.this) if negative else int(literal.this)
    if width <= 0:
        raise ValidationError(f"{name}: the width must be positive, found {width}")
    return width


def _type_of(ctx: Context, tree: exp.Expr, call: exp.Expr, value: exp.Expr, scope: exp.Select | None) -> Any:
    """The Spark type of `value` in the scope of the SELECT holding `call` (else `scope`'s):
    that SELECT's FROM and joins (and the statement's WITH), analysed by Spark, never run. An
    argument naming a column of an outer query (a correlated subquery's) is typed in the
    enclosing SELECTs' scopes in turn, each inner probe a LATERAL subquery of the next, so
    that names resolve innermost first, as in the query."""
    selects: list[exp.Select] = []
    node: exp.Expr | None = call
    while node is not None and (node := node.find_ancestor(exp.Select)) is not None:
        selects.append(node)
    if scope is not None:
        selects.append(scope)
    with_ = tree.args.get("with_")
    prefix = f"{to_spark_sql(with_)} " if with_ is not None else ""
    probe = f"SELECT {to_spark_sql(value)} AS v{_from_text(selects[0] if selects else None, True)}"
    first: Exception | None = None
    for depth in range(len(selects)):
        if depth > 0:
            outer = _from_text(selects[depth], False)
            if not outer:
                continue  # a SELECT without FROM names no column
            probe = (
                f"SELECT __icefloe_l{depth}.v AS v{outer} CROSS JOIN LATERAL ({probe}) AS __icefloe_l{depth}"
            )
        try:
            return ctx.spark.sql(prefix + probe).schema.fields[0].dataType
        except Exception as e:  # a name of an outer scope, or an argument Spark cannot analyse
            first = first or e
    raise NotSupportedError(
        f"an Iceberg function's argument {value.sql()}: cannot find its type ({first})"
    ) from None


def _from_text(select: exp.Select | None, lateral_views: bool) -> str:
    """` FROM ...` with the joins (and, where asked, the LATERAL VIEWs) of `select`; "" when
    it has none."""
    if select is None or select.args.get("from_") is None:
        return ""
    probe = exp.Select(expressions=[exp.Literal.number(1)])
    for key in ("from_", "joins", "laterals") if lateral_views else ("from_", "joins"):
        part = select.args.get(key)
        if part:
            probe.set(key, [p.copy() for p in part] if isinstance(part, list) else part.copy())
    text = to_spark_sql(probe)
    return text[text.index(" FROM ") :]


def _floor_div(sql: str, by: int) -> str:
    return f"(({sql} - pmod({sql}, {by})) div {by})"


def _utc_day(sql: str) -> str:
    """The UTC day of a `timestamp` value, as a DATE."""
    return f"date_from_unix_date(CAST({_floor_div(f'unix_micros({sql})', _DAY_MICROS)} AS INT))"


def _kind(spark_type: Any) -> str:
    return str(spark_type.typeName())


def _refuse(name: str, spark_type: Any) -> ValidationError:
    return ValidationError(f"{name}: cannot apply to a value of type {spark_type.simpleString()}")


def _years(ctx: Context, width: int, sql: str, spark_type: Any) -> str:
    kind = _kind(spark_type)
    if kind in ("date", "timestamp_ntz"):
        return f"CAST(year({sql}) - 1970 AS INT)"
    if kind == "timestamp":
        return f"CAST(year({_utc_day(sql)}) - 1970 AS INT)"
    raise _refuse("years", spark_type)


def _months(ctx: Context, width: int, sql: str, spark_type: Any) -> str:
    kind = _kind(spark_type)
    if kind == "timestamp":
        sql = _utc_day(sql)
    elif kind not in ("date", "timestamp_ntz"):
        raise _refuse("months", spark_type)
    return f"CAST((year({sql}) - 1970) * 12 + month({sql}) - 1 AS INT)"


def _days(ctx: Context, width: int, sql: str, spark_type: Any) -> str:
    kind = _kind(spark_type)
    if kind == "date":
        return sql
    if kind == "timestamp_ntz":
        return f"CAST({sql} AS DATE)"
    if kind == "timestamp":
        return _utc_day(sql)
    raise _refuse("days", spark_type)


def _hours(ctx: Context, width: int, sql: str, spark_type: Any) -> str:
    kind = _kind(spark_type)
    if kind == "timestamp":
        micros = f"unix_micros({sql})"
    elif kind == "timestamp_ntz":
        micros = f"timestampdiff(MICROSECOND, {_NTZ_EPOCH}, {sql})"
    else:
        raise _refuse("hours", spark_type)
    return f"CAST({_floor_div(micros, _HOUR_MICROS)} AS INT)"


def _truncate(ctx: Context, width: int, sql: str, spark_type: Any) -> str:
    kind = _kind(spark_type)
    if kind in _BITS:
        # Java's `value - (((value % W) + W) % W)` in the type's own arithmetic: wrapped at
        # its width where it passes the type's minimum (Spark's ANSI mode would fail instead).
        half = 2 ** (_BITS[kind] - 1)
        exact = f"CAST({sql} AS DECIMAL(38, 0))"
        wrapped = f"pmod({exact} - pmod({exact}, {width}) + {half}BD, {2 * half}BD) - {half}BD"
        return f"CAST({wrapped} AS {spark_type.simpleString().upper()})"
    if kind == "decimal":
        scale = spark_type.scale
        unit = f"{width}BD" if scale == 0 else f"CAST({width}E-{scale} AS DECIMAL(38, {scale}))"
        return f"CAST({sql} - pmod({sql}, {unit}) AS {spark_type.simpleString().upper()})"
    if kind in ("string", "binary"):
        return f"substring({sql}, 1, {width})"
    raise _refuse("truncate", spark_type)


def _bucket(ctx: Context, width: int, sql: str, spark_type: Any) -> str:
    kind = _kind(spark_type)
    if kind in _BITS:
        value, scale = f"CAST({sql} AS BIGINT)", 0
    elif kind == "date":
        value, scale = f"CAST(unix_date({sql}) AS BIGINT)", 0
    elif kind == "timestamp":
        value, scale = f"unix_micros({sql})", 0
    elif kind == "timestamp_ntz":
        value, scale = f"timestampdiff(MICROSECOND, {_NTZ_EPOCH}, {sql})", 0
    elif kind in ("string", "binary"):
        value, scale = f"CAST({sql} AS BINARY)", 0
    elif kind == "decimal":
        value, scale = sql, spark_type.scale
    else:
        raise _refuse("bucket", spark_type)
    _register_bucket(ctx.spark)
    if kind not in ("string", "binary", "decimal"):
        # A long column reaches pandas as float64 when it has nulls: the UDF gets non-null
        # values, and the null stays a null here.
        return f"IF({sql} IS NULL, NULL, {_BUCKET_UDF}({width}, coalesce({value}, 0), {scale}))"
    return f"{_BUCKET_UDF}({width}, {value}, {scale})"


_SQL = {
    "years": _years,
    "months": _months,
    "days": _days,
    "hours": _hours,
    "truncate": _truncate,
    "bucket": _bucket,
}


def _register_bucket(spark: Any) -> None:
    try:
        if _REGISTERED.get(spark):
            return
    except TypeError:  # a session that cannot be weakly referenced: registered every time
        pass
    import pandas as pd
    from pyspark.sql.functions import pandas_udf

    def bucket(widths: Any, values: Any, scales: Any) -> Any:
        return bucket_values(widths, values, scales)

    # A scalar pandas UDF is known by its type hints (as objects: this module's annotations
    # are strings).
    bucket.__annotations__ = {
        "widths": pd.Series,
        "values": pd.Series,
        "scales": pd.Series,
        "return": pd.Series,
    }
    spark.udf.register(_BUCKET_UDF, pandas_udf(bucket, "int"))  # type: ignore[call-overload]
    try:
        _REGISTERED[spark] = True
    except TypeError:
        pass


def bucket_values(widths: Any, values: Any, scales: Any) -> Any:
    """`icefloe_bucket(width, value, scale)` over pandas Series: longs (int64), bytes (the
    UTF-8 of strings, binaries) or Decimals of `scale`, each as Iceberg's bucket transform."""
    import decimal

    import pandas as pd
    import pyarrow as pa

    from icefloe import _native

    out = pd.Series([None] * len(values), dtype="Int32")
    if len(values) == 0:
        return out
    width = int(widths.iloc[0])
    present = values.notna()
    items = values[present]
    if len(items) == 0:
        return out
    first = items.iloc[0]
    if isinstance(first, (bytes, bytearray)):
        arr, source = pa.array(items, pa.binary()), "binary"
    elif isinstance(first, decimal.Decimal):
        scale = int(scales.iloc[0])
        arr, source = pa.array(items, pa.decimal128(38, scale)), f"decimal(38, {scale})"
    else:
        arr, source = pa.array(items.astype("int64"), pa.int64()), "long"
    hashed = _native.apply_transform(f"bucket[{width}]", source, arr).to_pandas()
    out[present.to_numpy()] = hashed.to_numpy()
    return out
