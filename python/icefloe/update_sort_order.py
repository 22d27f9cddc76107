"""`table.replace_sort_order()`: a new default sort order (Iceberg Java's `replaceSortOrder()`,
Spark's `ALTER TABLE ... WRITE ORDERED BY`). Fields are given by column name and transform;
an order with the fields of an existing one reuses its id, an empty one is the unsorted order
(id 0), otherwise the order gets the highest id + 1 (the REST updates `add-sort-order` +
`set-default-sort-order`). Ascending fields put nulls first and descending ones last unless
told otherwise, as in Java.

    with table.replace_sort_order() as o:
        o.asc("category").desc("ts", "day", "nulls-first")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icefloe.schema import Schema
from icefloe.sorting import NullOrder, SortDirection, SortField, SortOrder
from icefloe.table_transaction import StagedBuilder
from icefloe.transforms import Transform, parse_transform

if TYPE_CHECKING:
    from icefloe.table_transaction import Requirement, Transaction

__all__ = ["ReplaceSortOrder"]


class ReplaceSortOrder(StagedBuilder):
    """Pending sort order (see the module doc)."""

    _WHAT = "this sort order replacement"

    def __init__(self, transaction: Transaction, case_sensitive: bool = True) -> None:
        self._transaction = transaction
        md = transaction._staged
        self._schema = Schema.from_json(md.schema_json())
        self._base_schema_id = md.current_schema_id
        self._current = SortOrder.from_json(md.sort_order_json())
        self._case_sensitive = case_sensitive
        self._fields: list[SortField] = []
        self._committed = False

    def _add(
        self,
        column: str,
        transform: Transform | str,
        direction: SortDirection,
        null_order: NullOrder | str | None,
    ) -> ReplaceSortOrder:
        source = self._schema.find_field(column, self._case_sensitive)
        self._fields.append(SortField(source.field_id, parse_transform(transform), direction, null_order))
        return self

    def asc(
        self, column: str, transform: Transform | str = "identity", null_order: NullOrder | str | None = None
    ) -> ReplaceSortOrder:
        return self._add(column, transform, SortDirection.ASC, null_order)

    def desc(
        self, column: str, transform: Transform | str = "identity", null_order: NullOrder | str | None = None
    ) -> ReplaceSortOrder:
        return self._add(column, transform, SortDirection.DESC, null_order)

    def with_order(self, order: SortOrder) -> ReplaceSortOrder:
        """Takes the fields of `order` (source ids of the current schema)."""
        for f in order.fields:
            self._schema.find_field(f.source_id)
        self._fields.extend(order.fields)
        return self

    def apply(self) -> SortOrder:
        return SortOrder(*self._fields)

    def _metadata_updates(self) -> list[dict[str, Any]]:
        order = self.apply()
        if order.fields == self._current.fields:
            return []  # already the default order: no new version, as in Java
        return [
            {"action": "add-sort-order", "sort-order": order.to_dict()},
            {"action": "set-default-sort-order", "sort-order-id": -1},
        ]

    def _requirements(self) -> list[Requirement]:
        return [("current-schema-id", self._base_schema_id)]
