"""`table.transaction()`: table-level changes made together as one commit (PyIceberg's
`Transaction` shape): properties set and removed, and the format version upgraded
(`upgrade_table_version(3)`, or the `format-version` property as Java's
`ALTER TABLE ... SET TBLPROPERTIES`). Nothing is written until `commit_transaction()`, which
the `with` block calls on a clean exit; a conflicting concurrent commit is retried on the
refreshed table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icefloe.exceptions import ValidationError
from icefloe.transaction import commit_with_retry

if TYPE_CHECKING:
    from icefloe.table import Table


class Transaction:
    def __init__(self, table: Table) -> None:
        self._table = table
        self._updates: dict[str, str] = {}
        self._removals: list[str] = []
        self._committed = False

    def set_properties(self, properties: dict[str, str] | None = None, **kwargs: str) -> Transaction:
        """Sets table properties (values as strings); `format-version` upgrades the table."""
        for k, v in {**(properties or {}), **kwargs}.items():
            if not isinstance(v, str):
                raise ValidationError(f"table property {k!r} must be a string, found {v!r}")
            self._updates[str(k)] = v
            if k in self._removals:
                self._removals.remove(k)
        return self

    def remove_properties(self, *removals: str) -> Transaction:
        for k in removals:
            if k == "format-version":
                raise ValidationError("format-version cannot be removed")
            self._removals.append(k)
            self._updates.pop(k, None)
        return self

    def upgrade_table_version(self, format_version: int) -> Transaction:
        """Upgrades the table to `format_version` (2 or 3; a lower one is an error, the same
        one no change). On reaching v3 rows get row ids from the next commit on."""
        if not isinstance(format_version, int) or not 1 <= format_version <= 3:
            raise ValidationError(f"format_version must be 1, 2 or 3, found {format_version!r}")
        if format_version < self._table.format_version:
            raise ValidationError(
                f"cannot downgrade table {self._table} from format version "
                f"{self._table.format_version} to {format_version}"
            )
        self._updates["format-version"] = str(format_version)
        return self

    def commit_transaction(self) -> Table:
        if self._committed:
            raise ValidationError("this transaction was committed already")
        self._committed = True
        if self._updates or self._removals:
            updates, removals = dict(self._updates), list(self._removals)
            commit_with_retry(self._table, lambda md: (md.with_properties(updates, removals), []))
        return self._table

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit_transaction()
