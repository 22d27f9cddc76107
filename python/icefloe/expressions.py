"""Row filters, PyIceberg-style: `EqualTo("id", 5) & Not(IsNull("name"))`.

An expression names columns by their (dotted) name; `bind(schema)` resolves them, checks
the literals against the column types, and `to_pyarrow()` turns the result into a
`pyarrow.compute.Expression` with SQL null semantics: a comparison with a null value is
never true, so `NotEqualTo("x", 1)`, `NotIn` and `NotStartsWith` do not select nulls
(`NotNaN` does: a null is not NaN, as in Iceberg Java and Spark's `NOT isnan(x)`).
Float and double columns compare in Iceberg Java's and Spark's total order, where NaN is
greater than every number: `GreaterThan("x", 0.0)` selects NaN values. NaN literals are
refused (use IsNaN / NotNaN), as Iceberg Java does; infinite ones are accepted, as there
(`LessThan("x", math.inf)`; a filter string cannot spell them).

Row filters may also be strings, parsed in Rust (`icefloe._native.parse_filter`):
`"id > 5 AND ts >= '2024-01-01' AND name LIKE 'a%' AND kind IN ('x','y')"` becomes the
same builder tree (`parse_filter`). Every expression serializes with `to_json()` to the
JSON the Rust core reads (documented in rust/expr/predicate.rs); `from_json` reads it back.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IcebergType,
    IntegerType,
    LongType,
    StringType,
    TimestampNanoType,
    TimestampType,
    TimestamptzNanoType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

if TYPE_CHECKING:
    from icefloe.schema import Schema


class _Compute:
    """`pyarrow.compute`, imported when a filter is first turned into a pyarrow expression:
    the module costs ~40-60 ms, which `import icefloe` (a Spark executor's Python worker
    included) paid for every process, most never calling `to_pyarrow`."""

    def __getattr__(self, name: str) -> Any:
        import pyarrow.compute

        return getattr(pyarrow.compute, name)


if TYPE_CHECKING:
    import pyarrow.compute as pc
else:
    pc = _Compute()

__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "BooleanExpression",
    "EqualTo",
    "GreaterThan",
    "GreaterThanOrEqual",
    "In",
    "IsNaN",
    "IsNull",
    "LessThan",
    "LessThanOrEqual",
    "Not",
    "NotEqualTo",
    "NotIn",
    "NotNaN",
    "NotNull",
    "NotStartsWith",
    "Or",
    "StartsWith",
    "as_row_filter",
    "from_json",
    "parse_filter",
]


class BooleanExpression:
    """Base of every row filter."""

    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        """A copy whose column references are resolved against `schema` (ValidationError
        naming an unknown column or a literal that does not fit its column)."""
        raise NotImplementedError

    def to_pyarrow(self) -> pc.Expression:
        raise NotImplementedError

    def referenced_columns(self) -> set[str]:
        """The column names this expression reads (as written, or exact once bound)."""
        return set()

    def to_json(self) -> str:
        """The unbound JSON form the Rust core reads (see rust/expr/predicate.rs)."""
        return json.dumps(self._json())

    def _json(self) -> dict[str, Any]:
        raise NotImplementedError

    def __and__(self, other: BooleanExpression) -> BooleanExpression:
        return And(self, other)

    def __or__(self, other: BooleanExpression) -> BooleanExpression:
        return Or(self, other)

    def __invert__(self) -> BooleanExpression:
        return Not(self)

    def _key(self) -> tuple[Any, ...]:
        return ()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, BooleanExpression) and type(self) is type(other) and self._key() == other._key()
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(self._key())))


class AlwaysTrue(BooleanExpression):
    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        return self

    def to_pyarrow(self) -> pc.Expression:
        return pc.scalar(True)

    def _json(self) -> dict[str, Any]:
        return {"type": "true"}

    def __repr__(self) -> str:
        return "AlwaysTrue()"


class AlwaysFalse(BooleanExpression):
    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        return self

    def to_pyarrow(self) -> pc.Expression:
        return pc.scalar(False)

    def _json(self) -> dict[str, Any]:
        return {"type": "false"}

    def __repr__(self) -> str:
        return "AlwaysFalse()"


class And(BooleanExpression):
    def __init__(self, left: BooleanExpression, right: BooleanExpression, *rest: BooleanExpression) -> None:
        if rest:
            right = And(right, *rest)
        self.left = _check_expr(left)
        self.right = _check_expr(right)

    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        left = self.left.bind(schema, case_sensitive)
        right = self.right.bind(schema, case_sensitive)
        if isinstance(left, AlwaysFalse) or isinstance(right, AlwaysFalse):
            return AlwaysFalse()
        if isinstance(left, AlwaysTrue):
            return right
        if isinstance(right, AlwaysTrue):
            return left
        return And(left, right)

    def to_pyarrow(self) -> pc.Expression:
        return self.left.to_pyarrow() & self.right.to_pyarrow()  # Kleene and

    def _json(self) -> dict[str, Any]:
        return {"type": "and", "left": self.left._json(), "right": self.right._json()}

    def referenced_columns(self) -> set[str]:
        return self.left.referenced_columns() | self.right.referenced_columns()

    def _key(self) -> tuple[Any, ...]:
        return (self.left, self.right)

    def __repr__(self) -> str:
        return f"And(left={self.left!r}, right={self.right!r})"


class Or(BooleanExpression):
    def __init__(self, left: BooleanExpression, right: BooleanExpression, *rest: BooleanExpression) -> None:
        if rest:
            right = Or(right, *rest)
        self.left = _check_expr(left)
        self.right = _check_expr(right)

    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        left = self.left.bind(schema, case_sensitive)
        right = self.right.bind(schema, case_sensitive)
        if isinstance(left, AlwaysTrue) or isinstance(right, AlwaysTrue):
            return AlwaysTrue()
        if isinstance(left, AlwaysFalse):
            return right
        if isinstance(right, AlwaysFalse):
            return left
        return Or(left, right)

    def to_pyarrow(self) -> pc.Expression:
        return self.left.to_pyarrow() | self.right.to_pyarrow()  # Kleene or

    def _json(self) -> dict[str, Any]:
        return {"type": "or", "left": self.left._json(), "right": self.right._json()}

    def referenced_columns(self) -> set[str]:
        return self.left.referenced_columns() | self.right.referenced_columns()

    def _key(self) -> tuple[Any, ...]:
        return (self.left, self.right)

    def __repr__(self) -> str:
        return f"Or(left={self.left!r}, right={self.right!r})"


class Not(BooleanExpression):
    def __init__(self, child: BooleanExpression) -> None:
        self.child = _check_expr(child)

    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        child = self.child.bind(schema, case_sensitive)
        if isinstance(child, AlwaysTrue):
            return AlwaysFalse()
        if isinstance(child, AlwaysFalse):
            return AlwaysTrue()
        return Not(child)

    def to_pyarrow(self) -> pc.Expression:
        return ~self.child.to_pyarrow()  # NOT null is null: not selected

    def _json(self) -> dict[str, Any]:
        return {"type": "not", "child": self.child._json()}

    def referenced_columns(self) -> set[str]:
        return self.child.referenced_columns()

    def _key(self) -> tuple[Any, ...]:
        return (self.child,)

    def __repr__(self) -> str:
        return f"Not(child={self.child!r})"


class _Bound:
    """What binding learned about a column: its exact path and its Iceberg type."""

    def __init__(self, path: tuple[str, ...], field_type: IcebergType) -> None:
        self.path = path
        self.field_type = field_type


class UnboundPredicate(BooleanExpression):
    """A predicate on one column, named by `term`."""

    def __init__(self, term: str) -> None:
        if not isinstance(term, str) or not term:
            raise ValidationError(f"expected a column name, found {term!r}")
        self.term = term
        self._bound: _Bound | None = None

    def _field(self) -> pc.Expression:
        if self._bound is not None:
            return pc.field(*self._bound.path)
        return pc.field(self.term)

    def _bind_term(self, schema: Schema, case_sensitive: bool) -> _Bound:
        try:
            field = schema.find_field(self.term, case_sensitive)
        except ValidationError:
            raise ValidationError(
                f"row filter {self!r} names column {self.term!r}, which is not in the table schema "
                f"(columns: {', '.join(schema.column_names)})"
            ) from None
        return _Bound(schema.find_column_path(field.field_id), field.field_type)

    def referenced_columns(self) -> set[str]:
        return {".".join(self._bound.path) if self._bound is not None else self.term}

    def _copy_bound(self, bound: _Bound) -> UnboundPredicate:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new._bound = bound
        new.term = ".".join(bound.path)
        return new


class _UnaryPredicate(UnboundPredicate):
    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        return self._copy_bound(self._bind_term(schema, case_sensitive))

    def _json(self) -> dict[str, Any]:
        return {"type": _JSON_NAMES[type(self)], "term": self.term}

    def _key(self) -> tuple[Any, ...]:
        return (self.term,)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(term={self.term!r})"


class IsNull(_UnaryPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field().is_null()


class NotNull(_UnaryPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field().is_valid()


class IsNaN(_UnaryPredicate):
    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        b = self._bind_term(schema, case_sensitive)
        if not isinstance(b.field_type, (FloatType, DoubleType)):
            return AlwaysFalse()  # only floating point values can be NaN
        return self._copy_bound(b)

    def to_pyarrow(self) -> pc.Expression:
        return _is_nan(self._field())


class NotNaN(_UnaryPredicate):
    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        b = self._bind_term(schema, case_sensitive)
        if not isinstance(b.field_type, (FloatType, DoubleType)):
            return AlwaysTrue()
        return self._copy_bound(b)

    def to_pyarrow(self) -> pc.Expression:
        f = self._field()
        return f.is_null() | ~pc.is_nan(f)


def _is_nan(f: pc.Expression) -> pc.Expression:
    # NaN test that is false (not null) for a null value, as isnan() is in Spark.
    return f.is_valid() & pc.is_nan(f)


class _LiteralPredicate(UnboundPredicate):
    def __init__(self, term: str, literal: Any) -> None:
        super().__init__(term)
        if literal is None:
            raise ValidationError(
                f"{type(self).__name__}({term!r}, None): compare with null using IsNull / NotNull"
            )
        self.literal = literal
        self._scalar: pa.Scalar | None = None

    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        b = self._bind_term(schema, case_sensitive)
        new = self._copy_bound(b)
        assert isinstance(new, _LiteralPredicate)
        new._scalar = _to_scalar(self, b, self.literal)
        return new

    def _value(self) -> Any:
        return self._scalar if self._scalar is not None else self.literal

    def _json(self) -> dict[str, Any]:
        return {"type": _JSON_NAMES[type(self)], "term": self.term, "value": _literal_json(self.literal)}

    def _is_floating(self) -> bool:
        return self._bound is not None and isinstance(self._bound.field_type, (FloatType, DoubleType))

    def _key(self) -> tuple[Any, ...]:
        return (self.term, self.literal)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(term={self.term!r}, literal={self.literal!r})"


class EqualTo(_LiteralPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field() == self._value()


class NotEqualTo(_LiteralPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field() != self._value()


class LessThan(_LiteralPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field() < self._value()


class LessThanOrEqual(_LiteralPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field() <= self._value()


class GreaterThan(_LiteralPredicate):
    def to_pyarrow(self) -> pc.Expression:
        f = self._field()
        if self._is_floating():  # NaN sorts above every number
            return (f > self._value()) | _is_nan(f)
        return f > self._value()


class GreaterThanOrEqual(_LiteralPredicate):
    def to_pyarrow(self) -> pc.Expression:
        f = self._field()
        if self._is_floating():
            return (f >= self._value()) | _is_nan(f)
        return f >= self._value()


class _PrefixPredicate(_LiteralPredicate):
    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        b = self._bind_term(schema, case_sensitive)
        if not isinstance(b.field_type, StringType):
            raise ValidationError(
                f"{type(self).__name__} needs a string column; {self.term!r} is {b.field_type}"
            )
        if not isinstance(self.literal, str):
            raise ValidationError(f"{type(self).__name__}({self.term!r}): expected a string prefix")
        return self._copy_bound(b)


class StartsWith(_PrefixPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return pc.starts_with(self._field(), pattern=str(self.literal))


class NotStartsWith(_PrefixPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return ~pc.starts_with(self._field(), pattern=str(self.literal))


class _SetPredicate(UnboundPredicate):
    def __init__(self, term: str, literals: Iterable[Any]) -> None:
        super().__init__(term)
        if isinstance(literals, (str, bytes)):
            raise ValidationError(f"{type(self).__name__}({term!r}): expected a collection of literals")
        self.literals = tuple(literals)
        if any(v is None for v in self.literals):
            raise ValidationError(
                f"{type(self).__name__}({term!r}): a null literal never matches; use IsNull"
            )
        self._array: pa.Array | None = None

    def bind(self, schema: Schema, case_sensitive: bool = True) -> BooleanExpression:
        b = self._bind_term(schema, case_sensitive)
        if not self.literals:
            return AlwaysFalse() if isinstance(self, In) else AlwaysTrue()
        new = self._copy_bound(b)
        assert isinstance(new, _SetPredicate)
        scalars = [_to_scalar(self, b, v) for v in self.literals]
        new._array = pa.array([s.as_py() for s in scalars], type=scalars[0].type)
        return new

    def _json(self) -> dict[str, Any]:
        return {
            "type": _JSON_NAMES[type(self)],
            "term": self.term,
            "values": [_literal_json(v) for v in self.literals],
        }

    def _values(self) -> Any:
        return self._array if self._array is not None else pa.array(list(self.literals))

    def _key(self) -> tuple[Any, ...]:
        return (self.term, self.literals)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(term={self.term!r}, literals={set(self.literals)!r})"


class In(_SetPredicate):
    def to_pyarrow(self) -> pc.Expression:
        return self._field().isin(self._values())


class NotIn(_SetPredicate):
    def to_pyarrow(self) -> pc.Expression:
        f = self._field()
        return f.is_valid() & ~f.isin(self._values())


def _check_expr(e: Any) -> BooleanExpression:
    if not isinstance(e, BooleanExpression):
        raise ValidationError(f"expected a row filter expression, found {e!r}")
    return e


def as_row_filter(value: BooleanExpression | str | None) -> BooleanExpression:
    """The row filter for a scan argument: an expression, or None for all rows."""
    if value is None:
        return AlwaysTrue()
    if isinstance(value, str):
        return parse_filter(value)
    return _check_expr(value)


def parse_filter(text: str) -> BooleanExpression:
    """The builder tree of a row-filter string (parsed in Rust; ValidationError naming the
    bad token, NotSupportedError for SQL outside the supported subset)."""
    return from_json(json.loads(_native.parse_filter(text)))


_JSON_NAMES: dict[type[BooleanExpression], str] = {}


def _register_json_names() -> None:
    for cls, name in [
        (IsNull, "is-null"),
        (NotNull, "not-null"),
        (IsNaN, "is-nan"),
        (NotNaN, "not-nan"),
        (LessThan, "lt"),
        (LessThanOrEqual, "lt-eq"),
        (GreaterThan, "gt"),
        (GreaterThanOrEqual, "gt-eq"),
        (EqualTo, "eq"),
        (NotEqualTo, "not-eq"),
        (StartsWith, "starts-with"),
        (NotStartsWith, "not-starts-with"),
        (In, "in"),
        (NotIn, "not-in"),
    ]:
        _JSON_NAMES[cls] = name


_register_json_names()
_FROM_JSON_NAMES = {v: k for k, v in _JSON_NAMES.items()}


def _literal_json(v: Any) -> Any:
    if isinstance(v, bool) or isinstance(v, (int, str)):
        return v
    if isinstance(v, float):
        if v != v:
            raise ValidationError("NaN is not a comparable literal; use IsNaN / NotNaN")
        if v in (math.inf, -math.inf):  # JSON has no infinite number: tagged, as Rust reads it
            return {"double": "Infinity" if v > 0 else "-Infinity"}
        return v
    if isinstance(v, decimal.Decimal):  # plain digits: str() gives 0E-10 for a scaled zero
        return {"decimal": format(v, "f")}
    if isinstance(v, (bytes, bytearray)):
        return {"binary": bytes(v).hex().upper()}
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, (dt.date, dt.time)):  # datetime is a date
        return v.isoformat()
    raise ValidationError(f"cannot write literal {v!r} ({type(v).__name__}) in a row filter")


def _literal_from_json(v: Any) -> Any:
    if isinstance(v, dict) and "decimal" in v:
        return decimal.Decimal(v["decimal"])
    if isinstance(v, dict) and "binary" in v:
        return bytes.fromhex(v["binary"])
    if isinstance(v, dict) and v.get("double") in ("Infinity", "-Infinity"):
        return math.inf if v["double"] == "Infinity" else -math.inf
    if isinstance(v, dict) or isinstance(v, list) or v is None:
        raise ValidationError(f"expected a literal in a row filter's JSON, found {v!r}")
    return v


def from_json(obj: Any) -> BooleanExpression:
    """The builder tree of the JSON form (a parsed object or its text)."""
    if isinstance(obj, str):
        obj = json.loads(obj)
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ValidationError(f"expected an expression object with a 'type', found {obj!r}")
    t = obj["type"]
    if t == "true":
        return AlwaysTrue()
    if t == "false":
        return AlwaysFalse()
    if t in ("and", "or"):
        left, right = from_json(obj["left"]), from_json(obj["right"])
        return And(left, right) if t == "and" else Or(left, right)
    if t == "not":
        return Not(from_json(obj["child"]))
    cls = _FROM_JSON_NAMES.get(t)
    if cls is None:
        raise ValidationError(f"unknown expression type {t!r}")
    if issubclass(cls, _UnaryPredicate):
        return cls(obj["term"])
    if issubclass(cls, _SetPredicate):
        return cls(obj["term"], [_literal_from_json(v) for v in obj["values"]])
    pred: BooleanExpression = cls(obj["term"], _literal_from_json(obj["value"]))  # type: ignore[call-arg]
    return pred


# ---- literals ----

_ARROW_PRIMITIVES: dict[type[IcebergType], pa.DataType] = {
    BooleanType: pa.bool_(),
    IntegerType: pa.int32(),
    LongType: pa.int64(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    DateType: pa.date32(),
    TimeType: pa.time64("us"),
    TimestampType: pa.timestamp("us"),
    TimestamptzType: pa.timestamp("us", tz="UTC"),
    TimestampNanoType: pa.timestamp("ns"),
    TimestamptzNanoType: pa.timestamp("ns", tz="UTC"),
    StringType: pa.string(),
    UUIDType: pa.binary(16),
    BinaryType: pa.binary(),
}


def _arrow_type(t: IcebergType) -> pa.DataType | None:
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    return _ARROW_PRIMITIVES.get(type(t))


def _to_scalar(pred: UnboundPredicate, b: _Bound, value: Any) -> pa.Scalar:
    """`value` as an Arrow scalar of the column's type, or ValidationError naming both."""
    name = ".".join(b.path)
    arrow_type = _arrow_type(b.field_type)
    if arrow_type is None:
        raise ValidationError(f"{type(pred).__name__}: column {name!r} is {b.field_type}, which has no order")
    try:
        v = value
        t = b.field_type
        if isinstance(t, (FloatType, DoubleType)) and isinstance(v, decimal.Decimal):
            v = float(v)
        elif isinstance(t, (IntegerType, LongType)) and isinstance(v, decimal.Decimal):
            if v != v.to_integral_value():
                raise ValueError("not an integer")
            v = int(v)
        elif isinstance(t, (IntegerType, LongType)) and isinstance(v, float):
            if not v.is_integer():
                raise ValueError("not an integer")
            v = int(v)
        elif isinstance(t, DateType) and isinstance(v, str):
            v = dt.date.fromisoformat(v)
        elif isinstance(t, (TimestampType, TimestamptzType, TimestampNanoType, TimestamptzNanoType)):
            if isinstance(v, str):
                v = dt.datetime.fromisoformat(v)
            if isinstance(v, dt.datetime) and v.tzinfo is not None and isinstance(t, TimestampType):
                raise ValueError("a timestamp without time zone needs a naive datetime")
        elif isinstance(t, TimeType) and isinstance(v, str):
            v = dt.time.fromisoformat(v)
        elif isinstance(t, DecimalType) and not isinstance(v, decimal.Decimal):
            v = decimal.Decimal(str(v))
        elif isinstance(t, UUIDType):
            v = (v if isinstance(v, uuid.UUID) else uuid.UUID(str(v))).bytes
        elif isinstance(t, BooleanType) and not isinstance(v, bool):
            raise ValueError("not a boolean")
        elif isinstance(t, (IntegerType, LongType)) and isinstance(v, bool):
            raise ValueError("a boolean is not an integer")
        elif isinstance(t, (FloatType, DoubleType)) and isinstance(v, (int, float)) and v != v:
            raise ValueError("NaN is not a comparable literal; use IsNaN / NotNaN")
        return pa.scalar(v, type=arrow_type)
    except (ValueError, TypeError, decimal.InvalidOperation, pa.ArrowException) as e:
        raise ValidationError(
            f"{type(pred).__name__}: literal {value!r} does not fit column {name!r} of type "
            f"{b.field_type} ({e})"
        ) from None
