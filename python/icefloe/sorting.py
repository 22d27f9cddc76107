"""Sort orders (PyIceberg-style `SortOrder` / `SortField`), their JSON, and Iceberg Java's
string form of a sort order (`parse_sort_order`: `rewrite_data_files`' `sort_order`)."""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Any, NoReturn

from icefloe import _native
from icefloe.exceptions import InvalidDataError, NotSupportedError, ValidationError
from icefloe.transforms import IdentityTransform, Transform, parse_transform

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
# names exact). The syntax is parsed in Rust with sqlparser (`_native.parse_sort_order_terms`,
# an ORDER BY list); the transforms and columns are checked here. Transform names as Java
# takes them:
_TRANSFORMS: dict[str, str] = {
    "identity": "identity",
    "bucket": "bucket",
    "truncate": "truncate",
    **dict.fromkeys(("year", "years"), "year"),
    **dict.fromkeys(("month", "months"), "month"),
    **dict.fromkeys(("date", "day", "days"), "day"),
    **dict.fromkeys(("date_hour", "hour", "hours"), "hour"),
}
_EXPECTED_TRANSFORMS = "identity, bucket, truncate, years, months, days or hours"


def parse_sort_order(text: str, schema: Schema, order_id: int = 1) -> SortOrder:
    """A sort order written as Iceberg Java's procedures take it (`rewrite_data_files`'
    `sort_order`): `"id DESC NULLS LAST, bucket(4, name), days(ts)"`. Columns are looked up
    in `schema` by exact (dotted) name; nulls default as in `SortField`. A malformed string,
    an unknown column or transform is a ValidationError naming what was expected and found;
    `zorder(...)` is a NotSupportedError."""
    fields = []
    for columns, name, args, direction, nulls in _native.parse_sort_order_terms(text):
        source_id, transform = _term(text, schema, [".".join(c) for c in columns], name, args)
        null_order = None if nulls is None else NullOrder(f"nulls-{nulls}")
        fields.append(SortField(source_id, transform, SortDirection(direction or "asc"), null_order))
    return SortOrder(*fields, order_id=order_id)


def _fail(text: str, expected: str, found: str) -> NoReturn:
    raise ValidationError(f"sort_order {text!r}: expected {expected}, found {found}")


def _term(
    text: str, schema: Schema, columns: list[str], name: str | None, widths: list[int]
) -> tuple[int, Transform]:
    if name is None:
        return _column(text, schema, columns[0]), IdentityTransform()
    if name == "zorder":
        raise NotSupportedError(
            f"sort_order {text!r}: zorder(...) is not supported (Java's z-order rewrite); "
            "expected a sort order of columns and transforms"
        )
    transform = _TRANSFORMS.get(name)
    if transform is None:
        _fail(text, f"a transform ({_EXPECTED_TRANSFORMS})", repr(name))
    if len(columns) != 1:
        _fail(text, f"one column in {name}(...)", f"{len(columns)}: {columns}")
    takes_width = transform in ("bucket", "truncate")
    if len(widths) != (1 if takes_width else 0):
        expected = f"one integer width in {name}(...)" if takes_width else f"no number in {name}(...)"
        _fail(text, expected, f"{len(widths)}: {widths}")
    if takes_width and widths[0] <= 0:
        _fail(text, f"a positive width in {name}(...)", str(widths[0]))
    # Iceberg's own transform strings (`bucket[4]`, `day`): the spec's parser builds it.
    spec_form = f"{transform}[{widths[0]}]" if takes_width else transform
    return _column(text, schema, columns[0]), parse_transform(spec_form)


def _column(text: str, schema: Schema, name: str) -> int:
    try:
        return schema.find_field(name).field_id
    except ValidationError:
        columns = ", ".join(f.name for f in schema.fields)
        _fail(text, f"a column of the table ({columns})", repr(name))
