"""Sort orders (PyIceberg-style `SortOrder` / `SortField`) and their JSON."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from icefloe.exceptions import InvalidDataError
from icefloe.transforms import IdentityTransform, Transform, parse_transform

__all__ = ["UNSORTED_SORT_ORDER", "NullOrder", "SortDirection", "SortField", "SortOrder"]


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
