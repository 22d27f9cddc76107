"""Spark SQL predicates as icefloe row filters, exactly: a filter made here keeps a row if and
only if Spark's predicate is TRUE for it (not FALSE, not NULL).

Spark's WHERE keeps the rows where the predicate is TRUE; Iceberg's expressions have no
NULL, and `not_equal(x, 1)` keeps a row whose x is null. So each predicate P is translated
twice, recursively: `true_of(P)` holds where P is TRUE and `false_of(P)` where P is FALSE
(for NOT). A comparison is TRUE only on a non-null column (`x <> 1` is `x IS NOT NULL AND
x != 1`), AND and OR combine the halves as three-valued logic does.

Only what both engines read alike is translated: comparisons (`=`, `<>`, `!=`, `<`, `<=`,
`>`, `>=`, `BETWEEN`), `IN` / `NOT IN` of literals, `IS [NOT] NULL`, `AND`, `OR`, `NOT`,
between a top-level column and a literal of the column's own kind: integer literals on int
and long columns, string literals on string columns, `TRUE`/`FALSE` on booleans, `DATE
'yyyy-mm-dd'` on dates, and timestamp literals of the column's own kind given the session's
settings (`Timestamps`): `TIMESTAMP` / `TIMESTAMP_LTZ '...'` (or `CAST('...' AS ...)`) on
`timestamp` (with time zone) columns, read in the session's time zone unless the text gives
its offset, `TIMESTAMP_NTZ '...'` on `timestamp_ntz` columns (`TIMESTAMP` means either, as
`spark.sql.timestampType` says); and, in a comparison, a `DATE '...'` (its midnight) or a
plain string, both of which Spark casts to the column's type (not in an `IN` list, where
Spark 3.5 compares as strings, nor under
`spark.sql.legacy.typeCoercion.datetimeToString.enabled`). Anything else (floats with their
NaN ordering, decimals, a timestamp literal of the other kind, a local time the session's zone
skips or repeats, casts, functions, nested fields) is not translated (`None`): a query then
leaves it to Spark alone, a DELETE or UPDATE evaluates it in Spark.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from icefloe import expressions as ice

__all__ = ["ColumnLookup", "Timestamps", "conjuncts", "session_timestamps", "true_of"]

# (qualifier or None, column name) -> the table's field (name, Iceberg type JSON), or None
# when the column is not one of this table's top-level columns.
ColumnLookup = Callable[[str | None, str], tuple[str, str] | None]

_INTEGER_TYPES = ("int", "long")


@dataclass(frozen=True)
class Timestamps:
    """How a Spark session reads a timestamp literal: `zone` is `spark.sql.session.timeZone`
    (a literal without an offset is a local time there), `ntz` whether a plain `TIMESTAMP`
    is `TIMESTAMP_NTZ` (`spark.sql.timestampType`)."""

    zone: str
    ntz: bool = False
    # Spark casts a string compared with a timestamp to the timestamp's type (unless its
    # legacy `datetimeToString` coercion is on, which casts the timestamp to a string)
    strings: bool = True


def session_timestamps(spark: Any) -> Timestamps:
    """The session's `Timestamps` (Spark's defaults where unset: the JVM's zone, LTZ)."""
    zone = str(spark.conf.get("spark.sql.session.timeZone"))
    kind = str(spark.conf.get("spark.sql.timestampType", "TIMESTAMP_LTZ")).upper()
    legacy = str(spark.conf.get("spark.sql.legacy.typeCoercion.datetimeToString.enabled", "false"))
    return Timestamps(zone, kind == "TIMESTAMP_NTZ", legacy.strip().lower() != "true")


# What both Spark's parser and this one read alike: a date, then a time with seconds (up to
# microseconds) and then perhaps `Z` or an `+hh:mm` offset. Other forms Spark takes (`2024-1-1`,
# `10:00` without seconds, region names after the time) are left to Spark.
_TIMESTAMP_TEXT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})?)?"
)


def conjuncts(predicate: exp.Expression | None) -> list[exp.Expression]:
    """The AND-ed parts of a predicate (parentheses looked through)."""
    if predicate is None:
        return []
    while isinstance(predicate, exp.Paren):
        predicate = predicate.this
    if isinstance(predicate, exp.And):
        return conjuncts(predicate.this) + conjuncts(predicate.expression)
    return [predicate]


def true_of(
    predicate: exp.Expression, lookup: ColumnLookup, timestamps: Timestamps | None = None
) -> ice.BooleanExpression | None:
    """An icefloe filter that holds exactly where `predicate` is TRUE, or None. Timestamp
    literals are translated only with the session's `timestamps`."""
    return _Translator(lookup, timestamps).true_of(predicate)


class _Translator:
    def __init__(self, lookup: ColumnLookup, timestamps: Timestamps | None) -> None:
        self.lookup = lookup
        self.timestamps = timestamps

    def true_of(self, p: exp.Expression) -> ice.BooleanExpression | None:
        return self._translate(p, positive=True)

    def _translate(self, p: exp.Expression, positive: bool) -> ice.BooleanExpression | None:
        while isinstance(p, exp.Paren):
            p = p.this
        if isinstance(p, exp.Not):
            return self._translate(p.this, not positive)
        if isinstance(p, (exp.And, exp.Or)):
            left = self._translate(p.this, positive)
            right = self._translate(p.expression, positive)
            if left is None or right is None:
                return None
            # TRUE of AND / FALSE of OR need both; TRUE of OR / FALSE of AND either.
            both = isinstance(p, exp.And) == positive
            return ice.And(left, right) if both else ice.Or(left, right)
        if isinstance(p, exp.Is) and isinstance(p.expression, exp.Null):
            column = self._column(p.this)
            if column is None:
                return None
            return ice.IsNull(column[0]) if positive else ice.NotNull(column[0])
        if isinstance(p, exp.In):
            return self._in(p, positive)
        if isinstance(p, exp.Between):
            low = exp.GTE(this=p.this, expression=p.args["low"])
            high = exp.LTE(this=p.this, expression=p.args["high"])
            if p.args.get("symmetric"):
                return None
            return self._translate(exp.And(this=low, expression=high), positive)
        return self._comparison(p, positive)

    # ---- leaves ----
    def _column(self, e: exp.Expression) -> tuple[str, str] | None:
        if not isinstance(e, exp.Column) or not isinstance(e.this, exp.Identifier):
            return None
        if e.args.get("db") is not None or e.args.get("catalog") is not None:
            return None
        qualifier = e.table or None
        return self.lookup(qualifier, e.name)

    def _comparison(self, p: exp.Expression, positive: bool) -> ice.BooleanExpression | None:
        ops: dict[type, tuple[Any, Any]] = {
            exp.EQ: (ice.EqualTo, ice.NotEqualTo),
            exp.NEQ: (ice.NotEqualTo, ice.EqualTo),
            exp.LT: (ice.LessThan, ice.GreaterThanOrEqual),
            exp.LTE: (ice.LessThanOrEqual, ice.GreaterThan),
            exp.GT: (ice.GreaterThan, ice.LessThanOrEqual),
            exp.GTE: (ice.GreaterThanOrEqual, ice.LessThan),
        }
        mirrored: dict[type, type] = {exp.LT: exp.GT, exp.LTE: exp.GTE, exp.GT: exp.LT, exp.GTE: exp.LTE}
        kind: type = type(p)
        if kind not in ops:
            return None
        column, value = self._column(p.this), p.expression
        if column is None:
            # `5 < x` is `x > 5`
            column, value = self._column(p.expression), p.this
            kind = mirrored.get(kind, kind)
        if column is None:
            return None
        literal = _literal(value, column[1], self.timestamps)
        if literal is None:
            return None
        pred = ops[kind][0 if positive else 1](column[0], literal)
        # TRUE and FALSE both need a value: NULL compares to neither.
        return ice.And(ice.NotNull(column[0]), pred)

    def _in(self, p: exp.In, positive: bool) -> ice.BooleanExpression | None:
        if p.args.get("query") is not None or p.args.get("unnest") is not None or p.args.get("field"):
            return None
        column = self._column(p.this)
        if column is None or not p.expressions:
            return None
        # (no plain strings for a timestamp here: Spark 3.5 compares an IN list as strings)
        values = [_literal(v, column[1], self.timestamps, in_list=True) for v in p.expressions]
        if any(v is None for v in values):  # a NULL in the list makes NOT IN never TRUE
            return None
        pred = ice.In(column[0], values) if positive else ice.NotIn(column[0], values)
        return ice.And(ice.NotNull(column[0]), pred)


def _literal(
    e: exp.Expression, type_json: str, timestamps: Timestamps | None = None, in_list: bool = False
) -> Any:
    """The Python value of literal `e` for a column of Iceberg type `type_json`, or None when
    `e` is not a literal Spark compares with that column as the column's own kind."""
    while isinstance(e, exp.Paren):
        e = e.this
    negative = False
    if isinstance(e, exp.Neg):
        negative, e = True, e.this
    if type_json in _INTEGER_TYPES:
        if isinstance(e, exp.Literal) and not e.is_string and e.this.isdigit():
            value = -int(e.this) if negative else int(e.this)
            bits = 31 if type_json == "int" else 63
            return value if -(1 << bits) <= value < (1 << bits) else None
        return None
    if negative:
        return None
    if type_json == "string":
        return e.this if isinstance(e, exp.Literal) and e.is_string else None
    if type_json == "boolean":
        return bool(e.this) if isinstance(e, exp.Boolean) else None
    if type_json == "date":
        if (
            isinstance(e, exp.Cast)
            and e.to.is_type(exp.DataType.Type.DATE)
            and isinstance(e.this, exp.Literal)
            and e.this.is_string
        ):
            try:
                return dt.date.fromisoformat(e.this.this)
            except ValueError:
                return None
    if type_json in ("timestamp", "timestamptz") and timestamps is not None:
        if isinstance(e, exp.Literal) and (in_list or not timestamps.strings):
            return None
        return _timestamp(e, type_json == "timestamptz", timestamps)
    return None


def _timestamp(e: exp.Expression, with_zone: bool, timestamps: Timestamps) -> dt.datetime | None:
    """The value of timestamp literal `e` for a column with (or without) a time zone: an
    aware UTC datetime or a naive one, or None when `e` is not such a literal of the
    column's own kind or its local time is not one instant in the session's zone."""
    T = exp.DataType.Type
    if isinstance(e, exp.Literal) and e.is_string:
        text, date_only = e.this, False  # Spark casts a string to the column's own type
    elif isinstance(e, exp.Cast) and isinstance(e.this, exp.Literal) and e.this.is_string:
        text, kind = e.this.this, e.to.this
        # a DATE is cast to the column's type: its midnight (in the session's zone for LTZ)
        date_only = kind == T.DATE
        literal_ntz = kind == T.TIMESTAMPNTZ or (kind == T.TIMESTAMPTZ and timestamps.ntz)
        if not date_only and (
            kind not in (T.TIMESTAMPTZ, T.TIMESTAMPLTZ, T.TIMESTAMPNTZ) or literal_ntz == with_zone
        ):
            return None  # Spark compares the other kind through a cast in the session's zone
    else:
        return None
    m = _TIMESTAMP_TEXT.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = m.groups()
    if date_only and hour is not None:
        return None
    try:
        local = dt.datetime(
            int(year),
            int(month),
            int(day),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0").ljust(6, "0")),
        )
    except ValueError:
        return None
    if not with_zone:
        return None if offset is not None else local  # Spark refuses an offset on TIMESTAMP_NTZ
    if offset is not None:
        if offset == "Z":
            return local.replace(tzinfo=dt.timezone.utc)
        sign = 1 if offset[0] == "+" else -1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if minutes > 59 or hours * 60 + minutes > 18 * 60:  # Java's ZoneOffset: within 18 hours
            return None
        delta = dt.timedelta(hours=hours, minutes=minutes)
        return local.replace(tzinfo=dt.timezone(sign * delta)).astimezone(dt.timezone.utc)
    try:
        zone = zoneinfo.ZoneInfo(timestamps.zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None  # a zone id Java knows and Python does not (`PST`, `GMT+1`): left to Spark
    early, late = local.replace(tzinfo=zone, fold=0), local.replace(tzinfo=zone, fold=1)
    if early.utcoffset() != late.utcoffset():
        return None  # skipped or repeated by the zone's clock change
    try:
        return early.astimezone(dt.timezone.utc)
    except OverflowError:
        return None
