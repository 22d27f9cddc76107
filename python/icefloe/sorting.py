"""Sort orders (PyIceberg-style `SortOrder` / `SortField`), their JSON, and Iceberg Java's
string form of a sort order (`parse_sort_order`: `rewrite_data_files`' `sort_order`)."""

from __future__ import annotations

import json
import re
from enum import Enum
from typing import TYPE_CHECKING, Any

from icefloe.exceptions import InvalidDataError, NotSupportedError, ValidationError
from icefloe.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
    parse_transform,
)

if TYPE_CHECKING:
    from icefloe.schema import Schema

__all__ = ["UNSORTED_SORT_ORDER", "NullOrder", "SortDirection", "SortField", "SortOrder", "parse_sort_order"]


class SortDirection(str, Enum):
    ASC = "asc"
    DESC = "desc"

    def __str__(self) -> str:
        return self.value


class NullOrder(str, Enum):
    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"

    def __str__(self) -> str:
        return self.value


class SortField:
    """Sort by `transform(source column)`; nulls default to first for ascending and last
    for descending, as in Iceberg Java and PyIceberg."""

    def __init__(
        self,
        source_id: int,
        transform: Transform | str | None = None,
        direction: SortDirection | str = SortDirection.ASC,
        null_order: NullOrder | str | None = None,
    ) -> None:
        self.source_id = source_id
        self.transform = parse_transform(transform) if transform is not None else IdentityTransform()
        self.direction = SortDirection(direction)
        if null_order is None:
            null_order = (
                NullOrder.NULLS_FIRST if self.direction == SortDirection.ASC else NullOrder.NULLS_LAST
            )
        self.null_order = NullOrder(null_order)

    def to_dict(self) -> dict[str, Any]:
        return {
            "transform": str(self.transform),
            "source-id": self.source_id,
            "direction": self.direction.value,
            "null-order": self.null_order.value,
        }

    def _key(self) -> tuple[Any, ...]:
        return (self.source_id, self.transform, self.direction, self.null_order)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SortField) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"SortField(source_id={self.source_id}, transform={self.transform!r}, "
            f"direction={self.direction.name}, null_order={self.null_order.name})"
        )


class SortOrder:
    """A table sort order; order id 0 is reserved for the unsorted order."""

    def __init__(self, *fields: SortField, order_id: int | None = None) -> None:
        self.fields: tuple[SortField, ...] = tuple(fields)
        self.order_id = order_id if order_id is not None else (1 if fields else 0)

    @property
    def is_unsorted(self) -> bool:
        return not self.fields

    def to_dict(self) -> dict[str, Any]:
        return {"order-id": self.order_id, "fields": [f.to_dict() for f in self.fields]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @staticmethod
    def from_json(text: str | dict[str, Any]) -> SortOrder:
        obj = json.loads(text) if isinstance(text, str) else text
        try:
            fields = [
                SortField(
                    source_id=int(f["source-id"]),
                    transform=f["transform"],
                    direction=f["direction"],
                    null_order=f["null-order"],
                )
                for f in obj["fields"]
            ]
            return SortOrder(*fields, order_id=int(obj["order-id"]))
        except (KeyError, TypeError, ValueError) as e:
            raise InvalidDataError(f"malformed sort order {str(obj)[:200]}: {e}") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SortOrder) and (self.order_id, self.fields) == (other.order_id, other.fields)

    def __hash__(self) -> int:
        return hash((self.order_id, self.fields))

    def __repr__(self) -> str:
        inner = "".join(f"{f!r}, " for f in self.fields)
        return f"SortOrder({inner}order_id={self.order_id})"


UNSORTED_SORT_ORDER = SortOrder(order_id=0)


# Iceberg Java's procedures parse a sort order string with Iceberg's Spark SQL extensions
# (`IcebergSqlExtensions.g4` `order`, then `Spark3Util.toIcebergTerm`): terms `col`,
# `a.b` (a struct field), `` `quoted name` `` or `transform(args)`, each optionally followed
# by ASC / DESC and NULLS FIRST / LAST (keywords and transform names in any case; column
# names exact). Transform names as Java takes them:
_TRANSFORMS: dict[str, str] = {
    "identity": "identity",
    "bucket": "bucket",
    "truncate": "truncate",
    **dict.fromkeys(("year", "years"), "year"),
    **dict.fromkeys(("month", "months"), "month"),
    **dict.fromkeys(("date", "day", "days"), "day"),
    **dict.fromkeys(("date_hour", "hour", "hours"), "hour"),
}
_TOKEN = re.compile(r"\s*(?:(`(?:[^`]|``)*`)|([A-Za-z0-9_]+)|([(),.])|(\S))")
_EXPECTED_TRANSFORMS = "identity, bucket, truncate, years, months, days or hours"


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.items: list[tuple[str, str]] = []  # (kind, value): kind name / int / punct
        for m in _TOKEN.finditer(text):
            quoted, word, punct, other = m.groups()
            if other is not None:
                self.fail("a column, a transform, ',', '(', ')' or '.'", repr(other))
            if quoted is not None:
                self.items.append(("name", quoted[1:-1].replace("``", "`")))
            elif word is not None:
                self.items.append(("int" if word.isdigit() else "name", word))
            elif punct is not None:
                self.items.append(("punct", punct))
        self.pos = 0

    def fail(self, expected: str, found: str) -> None:
        raise ValidationError(f"sort_order {self.text!r}: expected {expected}, found {found}")

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.pos] if self.pos < len(self.items) else None

    def found(self) -> str:
        t = self.peek()
        return "the end" if t is None else repr(t[1])

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            self.fail("more", "the end")
            raise AssertionError  # unreachable: fail raises
        self.pos += 1
        return t

    def punct(self, value: str) -> bool:
        if self.peek() == ("punct", value):
            self.pos += 1
            return True
        return False

    def keyword(self, *words: str) -> str | None:
        t = self.peek()
        if t is not None and t[0] == "name" and t[1].upper() in words:
            self.pos += 1
            return t[1].upper()
        return None

    def name(self) -> str:
        parts = [self.take_name()]
        while self.punct("."):
            parts.append(self.take_name())
        return ".".join(parts)

    def take_name(self) -> str:
        t = self.peek()
        if t is None or t[0] != "name":
            self.fail("a column name", self.found())
        return self.take()[1]


def parse_sort_order(text: str, schema: Schema, order_id: int = 1) -> SortOrder:
    """A sort order written as Iceberg Java's procedures take it (`rewrite_data_files`'
    `sort_order`): `"id DESC NULLS LAST, bucket(4, name), days(ts)"`. Columns are looked up
    in `schema` by exact (dotted) name; nulls default as in `SortField`. A malformed string,
    an unknown column or transform is a ValidationError naming what was expected and found;
    `zorder(...)` is a NotSupportedError."""
    tokens = _Tokens(text)
    fields = []
    while True:
        source_id, transform = _term(tokens, schema)
        direction = tokens.keyword("ASC", "DESC") or "ASC"
        null_order = None
        if tokens.keyword("NULLS"):
            which = tokens.keyword("FIRST", "LAST")
            if which is None:
                tokens.fail("FIRST or LAST after NULLS", tokens.found())
            null_order = NullOrder.NULLS_FIRST if which == "FIRST" else NullOrder.NULLS_LAST
        fields.append(SortField(source_id, transform, SortDirection(direction.lower()), null_order))
        if tokens.peek() is None:
            return SortOrder(*fields, order_id=order_id)
        if not tokens.punct(","):
            tokens.fail("',', ASC, DESC, NULLS or the end of the order", tokens.found())


def _term(tokens: _Tokens, schema: Schema) -> tuple[int, Transform]:
    if tokens.peek() is None:
        tokens.fail("a column or a transform", "the end")
    start = tokens.pos
    name = tokens.name()
    if not tokens.punct("("):
        return _column(tokens, schema, name), IdentityTransform()
    if "." in name or tokens.items[start][1] != name:
        tokens.fail(f"a transform ({_EXPECTED_TRANSFORMS})", repr(name))
    columns: list[str] = []
    widths: list[int] = []
    while True:
        t = tokens.peek()
        if t is not None and t[0] == "int":
            widths.append(int(tokens.take()[1]))
        else:
            columns.append(tokens.name())
        if tokens.punct(")"):
            break
        if not tokens.punct(","):
            tokens.fail(f"',' or ')' in {name}(...)", tokens.found())
    kind = name.lower()
    if kind == "zorder":
        raise NotSupportedError(
            f"sort_order {tokens.text!r}: zorder(...) is not supported (Java's z-order rewrite); "
            "expected a sort order of columns and transforms"
        )
    transform = _TRANSFORMS.get(kind)
    if transform is None:
        tokens.fail(f"a transform ({_EXPECTED_TRANSFORMS})", repr(name))
    if len(columns) != 1:
        tokens.fail(f"one column in {name}(...)", f"{len(columns)}: {columns}")
    takes_width = transform in ("bucket", "truncate")
    if len(widths) != (1 if takes_width else 0):
        expected = f"one integer width in {name}(...)" if takes_width else f"no number in {name}(...)"
        tokens.fail(expected, f"{len(widths)}: {widths}")
    if takes_width and widths[0] <= 0:
        tokens.fail(f"a positive width in {name}(...)", str(widths[0]))
    source_id = _column(tokens, schema, columns[0])
    if transform == "bucket":
        return source_id, BucketTransform(widths[0])
    if transform == "truncate":
        return source_id, TruncateTransform(widths[0])
    by_name: dict[str, Transform] = {
        "identity": IdentityTransform(),
        "year": YearTransform(),
        "month": MonthTransform(),
        "day": DayTransform(),
        "hour": HourTransform(),
    }
    return source_id, by_name[str(transform)]


def _column(tokens: _Tokens, schema: Schema, name: str) -> int:
    try:
        return schema.find_field(name).field_id
    except ValidationError:
        columns = ", ".join(f.name for f in schema.fields)
        tokens.fail(f"a column of the table ({columns})", repr(name))
        raise
