"""`table.transaction()`: table-level changes made together as one commit (PyIceberg's
`Transaction` shape): properties set and removed, the format version upgraded
(`upgrade_table_version(3)`, or the `format-version` property as Java's
`ALTER TABLE ... SET TBLPROPERTIES`), and schema, partition-spec and sort-order evolution
(`update_schema()`, `update_spec()`, `replace_sort_order()`).

Every change is recorded as REST `TableUpdate`s (`add-schema`, `set-properties`, ...) and
staged on a copy of the metadata, so a later change in the same transaction sees the earlier
ones (a partition field on a column added just before). Nothing is written until
`commit_transaction()`, which the `with` block calls on a clean exit; the whole list is then
applied to the table's current metadata as ONE new version. Changes carry requirements like the
REST spec's (`assert-current-schema-id`, `assert-default-spec-id`, ...): a concurrent commit
that breaks one (another schema change, say) is a CommitConflictError naming the ids, while
one that does not (an append) is retried on the refreshed table.

`table.update_schema()` and friends are the same thing with a one-change transaction.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from icefloe import _native
from icefloe.commit.retry import commit_with_retry
from icefloe.exceptions import CommitConflictError, ValidationError

if TYPE_CHECKING:
    from icefloe.sorting import SortOrder
    from icefloe.table import Table
    from icefloe.update_schema import UpdateSchema
    from icefloe.update_sort_order import ReplaceSortOrder
    from icefloe.update_spec import UpdateSpec

Requirement = tuple[str, int]

_Builder = TypeVar("_Builder", bound="StagedBuilder")


class StagedBuilder:
    """What a transaction's builders (`UpdateSchema`, `UpdateSpec`, `ReplaceSortOrder`)
    share: `commit()` stages the builder's metadata updates and requirements in its
    transaction, once; as a context manager it commits on a clean exit, and on an error
    stages nothing. A subclass sets `_transaction` and `_committed = False`, names itself in
    `_WHAT` (for the error of a second commit) and builds `_metadata_updates` and
    `_requirements`."""

    _WHAT: ClassVar[str]
    _transaction: Transaction
    _committed: bool

    def _metadata_updates(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def _requirements(self) -> list[Requirement]:
        raise NotImplementedError

    def commit(self) -> None:
        if self._committed:
            raise ValidationError(f"{self._WHAT} was committed already")
        self._committed = True
        self._transaction._stage(self._metadata_updates(), self._requirements())

    def __enter__(self: _Builder) -> _Builder:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()


def last_partition_id(md: _native.TableMetadata) -> int:
    value = json.loads(md.to_json()).get("last-partition-id", 999)
    return int(value)


def _current(md: _native.TableMetadata, kind: str) -> int:
    if kind == "current-schema-id":
        return md.current_schema_id
    if kind == "last-assigned-field-id":
        return md.last_column_id
    if kind == "default-spec-id":
        return md.default_spec_id
    if kind == "last-assigned-partition-id":
        return last_partition_id(md)
    if kind == "default-sort-order-id":
        return md.default_sort_order_id
    raise ValidationError(f"unknown commit requirement {kind!r}")


def check_requirements(table: Table, md: _native.TableMetadata, requirements: list[Requirement]) -> None:
    """CommitConflictError when `md` (the table as it is now) breaks a requirement."""
    for kind, expected in requirements:
        found = _current(md, kind)
        if found != expected:
            raise CommitConflictError(
                f"commit to {table} failed: the change was made against {kind} {expected}, but the "
                f"table is now at {kind} {found} (changed concurrently); reload the table and retry"
            )


class Transaction:
    def __init__(self, table: Table, autocommit: bool = False) -> None:
        self._table = table
        self._autocommit = autocommit
        self._base: _native.TableMetadata = table.metadata
        self._staged: _native.TableMetadata = table.metadata
        self._updates: list[dict[str, Any]] = []
        self._requirements: list[Requirement] = []
        self._committed = False

    @property
    def table_metadata(self) -> _native.TableMetadata:
        """The metadata as it will be after the changes staged so far."""
        return self._staged

    def _stage(self, updates: list[dict[str, Any]], requirements: list[Requirement]) -> None:
        """Adds one change: applied to the staged metadata now (so a bad one fails here, with
        nothing staged), committed with the rest later (at once when autocommitting)."""
        if self._committed:
            raise ValidationError("this transaction was committed already")
        if updates:
            self._staged = self._staged.apply_updates(json.dumps(updates))
            self._updates.extend(updates)
            # A change made on top of earlier ones of this transaction requires what they
            # require: the table as it was when the transaction began.
            for kind, _ in requirements:
                if kind not in {k for k, _ in self._requirements}:
                    self._requirements.append((kind, _current(self._base, kind)))
        if self._autocommit:
            self.commit_transaction()

    def set_properties(self, properties: dict[str, str] | None = None, **kwargs: str) -> Transaction:
        """Sets table properties (values as strings); `format-version` upgrades the table."""
        updates = {**(properties or {}), **kwargs}
        for k, v in updates.items():
            if not isinstance(v, str):
                raise ValidationError(f"table property {k!r} must be a string, found {v!r}")
        if updates:
            self._stage(
                [{"action": "set-properties", "updates": {str(k): v for k, v in updates.items()}}], []
            )
        return self

    def remove_properties(self, *removals: str) -> Transaction:
        for k in removals:
            if k == "format-version":
                raise ValidationError("format-version cannot be removed")
        if removals:
            self._stage([{"action": "remove-properties", "removals": list(removals)}], [])
        return self

    def upgrade_table_version(self, format_version: int) -> Transaction:
        """Upgrades the table to `format_version` (2 or 3; a lower one is an error, the same
        one no change). On reaching v3 rows get row ids from the next commit on."""
        if not isinstance(format_version, int) or not 1 <= format_version <= 3:
            raise ValidationError(f"format_version must be 1, 2 or 3, found {format_version!r}")
        if format_version < self._staged.format_version:
            raise ValidationError(
                f"cannot downgrade table {self._table} from format version "
                f"{self._staged.format_version} to {format_version}"
            )
        self._stage([{"action": "set-properties", "updates": {"format-version": str(format_version)}}], [])
        return self

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        """Schema evolution staged in this transaction (see `icefloe.update_schema`)."""
        from icefloe.update_schema import UpdateSchema

        return UpdateSchema(self, allow_incompatible_changes, case_sensitive)

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        """Partition-spec evolution staged in this transaction (see `icefloe.update_spec`)."""
        from icefloe.update_spec import UpdateSpec

        return UpdateSpec(self, case_sensitive)

    def replace_sort_order(
        self, order: SortOrder | None = None, case_sensitive: bool = True
    ) -> ReplaceSortOrder:
        """A new default sort order staged in this transaction (see
        `icefloe.update_sort_order`): staged at once when `order` is given, else when the
        returned builder is committed (or its `with` block left)."""
        from icefloe.update_sort_order import ReplaceSortOrder

        builder = ReplaceSortOrder(self, case_sensitive)
        if order is not None:
            builder.with_order(order).commit()
        return builder

    def commit_transaction(self) -> Table:
        if self._committed:
            raise ValidationError("this transaction was committed already")
        self._committed = True
        if self._updates:
            updates, requirements, table = list(self._updates), list(self._requirements), self._table
            text = json.dumps(updates)

            def build(md: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
                check_requirements(table, md, requirements)
                return md.apply_updates(text), []

            commit_with_retry(table, build)
        return self._table

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit_transaction()
