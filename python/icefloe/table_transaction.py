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

Writes (PyIceberg's `tx.append`, `tx.overwrite`, `tx.delete`, `tx.dynamic_partition_overwrite`,
`tx.upsert`, and `tx.update`, `tx.merge`) go into the same version: each runs now, as `Table`'s
operation of that name on the table as staged so far (a delete sees the rows appended before it
in the transaction; an append sees a column added before it), writing its data and manifests,
but its snapshot only joins the staged metadata (`_StagedWrites`). The commit swaps in the
staged metadata as ONE new version holding every write's snapshot, in order (as Iceberg Java's
transactions: one metadata file, no files for the steps between). When the table moved
meanwhile, each write is first validated against the commits made since the transaction began,
as its own commit would be (an append conflicts with nothing; a delete with a concurrent file
that may hold rows it deletes), and then everything is applied again on the moved table,
reusing the data and delete files and writing new manifests. A transaction that does not commit
(an exception in the `with` block, a failed commit, the object dropped) deletes every file its
writes made (never the files `add_files` registered).
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from icefloe import _io, _native
from icefloe.commit.retry import BuildFn, ProducerBuild, commit_with_retry
from icefloe.commit.target import MAIN, CommitTarget
from icefloe.exceptions import (
    CommitConflictError,
    CommitStateUnknownException,
    NotSupportedError,
    ValidationError,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.expressions import BooleanExpression
    from icefloe.sorting import SortOrder
    from icefloe.table import ArrowData, Table
    from icefloe.update_schema import UpdateSchema
    from icefloe.update_sort_order import ReplaceSortOrder
    from icefloe.update_spec import UpdateSpec
    from icefloe.write.merge import MergeClauses, TableMerger
    from icefloe.write.row_level import UpsertResult

logger = logging.getLogger("icefloe")

Requirement = tuple[str, int]

_Builder = TypeVar("_Builder", bound="StagedBuilder")
_Merger = TypeVar("_Merger", bound="MergeClauses")

AUTO_SCHEMA_EVOLUTION = "write.spark.auto-schema-evolution.enabled"


def evolves_schema(table: Table, merge_schema: bool, branch: str | None) -> bool:
    """Whether a MERGE with `merge_schema` evolves the table's schema: unless the table property
    `write.spark.auto-schema-evolution.enabled` is false (Java's switch); refused on a branch,
    as in Java."""
    if not merge_schema:
        return False
    if branch is not None and branch != "main":
        raise NotSupportedError("MERGE with schema evolution does not work on branches (as in Java)")
    return table.metadata.properties.get(AUTO_SCHEMA_EVOLUTION, "true").strip().lower() != "false"


def merge_with_schema_evolution(
    table: Table, source_schema: pa.Schema, make_merger: Callable[[Table], _Merger]
) -> _Merger:
    """A MERGE WITH SCHEMA EVOLUTION (Spark 4.1, Iceberg 1.12): a transaction adds the source's
    columns and nested fields and widens types (`union_by_name`), the merger made by
    `make_merger` works on the transaction's table, and its `execute()` commits the schema
    change and the rows as ONE version (Java commits the schema first, then the rows)."""
    tx = Transaction(table)
    with tx.update_schema() as u:
        u.union_by_name(source_schema)
    merger = make_merger(tx._writer())
    merger.evolve_schema = True

    def commit() -> int | None:
        tx.commit_transaction()
        return table.metadata.current_snapshot_id

    merger._transaction = (commit, tx.abort)
    return merger


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


class _StagedWrites(CommitTarget):
    """The commit target of a transaction's writes: they see the transaction's staged
    metadata, and their commits are recorded in the transaction (see the module doc)."""

    def __init__(self, transaction: Transaction) -> None:
        self._tx = transaction

    def view(self, metadata: _native.TableMetadata) -> _native.TableMetadata:
        return self._tx._staged

    def commit(self, table: Table, build: BuildFn) -> _native.TableMetadata:
        return self._tx._stage_write(build)

    def started_write(self, write_id: str) -> None:
        self._tx._log.write_ids.append(write_id)

    def registering(self, file_paths: Iterable[str]) -> None:
        self._tx._log.registered.update(_file_key(p) for p in file_paths)

    def label(self) -> str:
        return " (transaction)"


def _file_key(location: str) -> tuple[str, str]:
    """A file's storage root and key: `/x`, `file:/x` and `file:///x` are one file."""
    try:
        return _io.parse(location)[1:]
    except Exception:  # not a location icefloe reads: add_files refuses it
        return ("", location)


def staged_files(
    metadata: _native.TableMetadata,
    registered: set[tuple[str, str]] | None = None,
    base: _native.TableMetadata | None = None,
) -> list[str]:
    """Every file the snapshots of `metadata` that `base` lacks (all of them without a base)
    reference and no snapshot of `base` does: data and delete files, manifests, manifest lists,
    statistics; less the files `registered` by `add_files` (see `_file_key`), which were there
    before the transaction and stay."""
    known = set() if base is None else {s.get("snapshot-id") for s in base.snapshots()}
    ids = [i for s in metadata.snapshots() if isinstance(i := s.get("snapshot-id"), int) and i not in known]
    if not ids:
        return []
    found = _native.expired_snapshot_files(metadata, ids, [] if base is None else [base])
    return sorted({loc for _kind, loc, _size in found if not registered or _file_key(loc) not in registered})


class _WriteLog:
    """What a transaction's writes left that an uncommitted end must delete: the staged
    metadata (its new snapshots reference every data, delete and manifest file the writes
    made), the write ids (files of failed tasks), and the files `add_files` registered (the
    caller's: never deleted). Holds no reference to the transaction (it runs from a finalizer)."""

    def __init__(self, table: Table, base: _native.TableMetadata) -> None:
        self.table = table
        self.base = base
        self.staged = base
        self.write_ids: list[str] = []
        self.registered: set[tuple[str, str]] = set()
        self.manifests: list[str] = []  # what the staged builds wrote (manifests, lists)
        self.state = "open"  # "committed" / "aborted" once the transaction ended

    def discard(self) -> None:
        """Deletes what the writes made. Best effort: logged, never raised."""
        if self.state != "open":
            return
        self.state = "aborted"
        try:
            made = staged_files(self.staged, self.registered, self.base)
            _native.delete_files(sorted(set(made) | set(self.manifests)))
        except Exception as e:
            logger.warning("icefloe: transaction on %s: could not delete its files: %s", self.table, e)
        from icefloe.write import pending as _pending_write

        for write_id in self.write_ids:
            try:
                _pending_write.abort_write(self.table, write_id)
            except Exception as e:
                logger.warning(
                    "icefloe: transaction on %s: could not delete write %s: %s", self.table, write_id, e
                )


class Transaction:
    def __init__(self, table: Table, autocommit: bool = False) -> None:
        self._table = table
        self._autocommit = autocommit
        self._base: _native.TableMetadata = table.metadata
        self._staged: _native.TableMetadata = table.metadata
        self._requirements: list[Requirement] = []
        # Every change in order: ("updates", [TableUpdate, ...]) or ("write", build).
        self._steps: list[tuple[str, Any]] = []
        self._log = _WriteLog(table, self._base)
        self._discard = weakref.finalize(self, self._log.discard)
        self._writes: Table | None = None
        self._committed = False

    @property
    def table_metadata(self) -> _native.TableMetadata:
        """The metadata as it will be after the changes staged so far."""
        return self._staged

    def _stage(self, updates: list[dict[str, Any]], requirements: list[Requirement]) -> None:
        """Adds one change: applied to the staged metadata now (so a bad one fails here, with
        nothing staged), committed with the rest later (at once when autocommitting)."""
        self._check_open()
        if updates:
            self._staged = self._staged.apply_updates(json.dumps(updates))
            self._log.staged = self._staged
            self._steps.append(("updates", list(updates)))
            # A change made on top of earlier ones of this transaction requires what they
            # require: the table as it was when the transaction began.
            for kind, _ in requirements:
                if kind not in {k for k, _ in self._requirements}:
                    self._requirements.append((kind, _current(self._base, kind)))
        if self._autocommit:
            self.commit_transaction()

    def _check_open(self) -> None:
        if self._committed:
            raise ValidationError("this transaction was committed already")
        if self._log.state == "aborted":
            raise ValidationError("this transaction was aborted (its writes were deleted)")

    # ---- writes (see the module doc) ----
    def _stage_write(self, build: BuildFn) -> _native.TableMetadata:
        """A write's commit, recorded: its snapshot joins the staged metadata."""
        self._check_open()
        produced, written = build(self._staged)
        self._log.manifests.extend(written)
        self._staged = produced
        self._log.staged = produced
        self._steps.append(("write", build))
        return produced

    def _writer(self) -> Table:
        """The table as staged so far, its commits recorded in this transaction."""
        self._check_open()
        if self._autocommit:
            raise ValidationError("a write cannot join a transaction that commits each change")
        if self._table._target is not MAIN:
            raise NotSupportedError(
                f"writes in a transaction of {self._table} (a branch or guarded view): use the "
                "table itself, and `branch=` on each write outside a transaction"
            )
        if self._writes is None:
            self._writes = self._table._through(_StagedWrites(self))
        return self._writes

    def append(
        self,
        df: ArrowData,
        snapshot_properties: dict[str, str] | None = None,
        write_options: Mapping[str, Any] | None = None,
    ) -> Transaction:
        """`Table.append` in this transaction: the rows are written now, their `append`
        snapshot committed with the transaction."""
        self._writer().append(df, snapshot_properties, write_options)
        return self

    def overwrite(
        self,
        df: ArrowData,
        overwrite_filter: BooleanExpression | str | None = None,
        snapshot_properties: dict[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """`Table.overwrite` in this transaction, of the rows as staged so far."""
        self._writer().overwrite(df, overwrite_filter, snapshot_properties, case_sensitive=case_sensitive)
        return self

    def dynamic_partition_overwrite(
        self, df: ArrowData, snapshot_properties: dict[str, str] | None = None
    ) -> Transaction:
        """`Table.dynamic_partition_overwrite` in this transaction."""
        self._writer().dynamic_partition_overwrite(df, snapshot_properties)
        return self

    def delete(
        self,
        delete_filter: BooleanExpression | str,
        snapshot_properties: dict[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """`Table.delete` in this transaction, of the rows as staged so far (rows appended
        earlier in the transaction included)."""
        self._writer().delete(delete_filter, snapshot_properties, case_sensitive)
        return self

    def update(
        self,
        condition: BooleanExpression | str,
        set: Mapping[str, Any],  # SQL's clause name, as Table.update
        snapshot_properties: dict[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> Transaction:
        """`Table.update` in this transaction, of the rows as staged so far."""
        self._writer().update(condition, set, snapshot_properties, case_sensitive)
        return self

    def merge(
        self,
        source: ArrowData,
        on: str,
        source_alias: str = "source",
        target_alias: str = "target",
        snapshot_properties: dict[str, str] | None = None,
    ) -> TableMerger:
        """`Table.merge` in this transaction: add clauses, then `.execute()`, which stages the
        MERGE's snapshot here (against the rows as staged so far)."""
        return self._writer().merge(source, on, source_alias, target_alias, snapshot_properties)

    def upsert(
        self,
        df: ArrowData,
        join_cols: list[str] | None = None,
        snapshot_properties: dict[str, str] | None = None,
    ) -> UpsertResult:
        """`Table.upsert` in this transaction, against the rows as staged so far."""
        return self._writer().upsert(df, join_cols, snapshot_properties)

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
        """Commits every staged change as one new version of the table (see the module doc)
        and returns the table. On a failure nothing is committed and the files the writes made
        are deleted (kept on a CommitStateUnknownException: the version may have landed)."""
        build, replayed = self._begin_commit()
        if build is None:
            self._end_commit(replayed, None)
            return self._table
        try:
            commit_with_retry(self._table, build)
        except BaseException as e:
            self._end_commit(replayed, e)
            raise
        self._end_commit(replayed, None)
        return self._table

    def _begin_commit(self) -> tuple[BuildFn | None, list[bool]]:
        """Closes the transaction for changes; the build of its one commit (None when there is
        nothing to commit) and the list in which that build records, per attempt, whether it
        applied the changes again on a moved table."""
        self._check_open()
        self._committed = True
        replayed: list[bool] = []
        if any(kind == "write" for kind, _ in self._steps):
            return self._build_with_writes(replayed), replayed
        updates = [u for kind, step in self._steps if kind == "updates" for u in step]
        if not updates:
            return None, replayed
        requirements, table = list(self._requirements), self._table
        text = json.dumps(updates)

        def build(md: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
            check_requirements(table, md, requirements)
            return md.apply_updates(text), []

        return build, replayed

    def _end_commit(self, replayed: list[bool], error: BaseException | None) -> None:
        """After the commit: on success, the staged snapshots' manifests deleted when the last
        attempt applied the changes again (nobody references them); on a failure every file
        the writes made deleted, unless the outcome is unknown (the version may have landed)."""
        if error is not None and not isinstance(error, CommitStateUnknownException):
            self._discard()
            return
        self._log.state = "committed"
        self._discard.detach()
        if error is None and replayed and replayed[-1] and self._log.manifests:
            _native.delete_files(sorted(set(self._log.manifests)))

    def _build_with_writes(self, replayed: list[bool]) -> BuildFn:
        """The build of a transaction with writes: on the version it began from, the staged
        metadata as it is; on a moved table, every change again after validating each write
        against the commits made since the transaction began. `replayed` records, per
        attempt, which it was."""
        base_location = self._base.metadata_location
        since = self._base.current_snapshot_id
        staged, steps, table = self._staged, list(self._steps), self._table
        requirements = list(self._requirements)

        def build(seen: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
            if base_location is not None and seen.metadata_location == base_location:
                replayed.append(False)
                return staged, []
            replayed.append(True)
            check_requirements(table, seen, requirements)
            writes = [b for kind, b in steps if kind == "write"]
            for b in writes:
                if not isinstance(b, ProducerBuild):
                    raise CommitConflictError(
                        f"commit to {table} failed: the table changed since the transaction began, "
                        "and one of its writes cannot be applied again on the new version; retry "
                        "the transaction"
                    )
                b.validate(seen, since)
            md, written = seen, []
            try:
                for kind, step in steps:
                    if kind == "updates":
                        md = md.apply_updates(json.dumps(step))
                    else:
                        md, files = step.produce(md)
                        written.extend(files)
            except BaseException:
                _native.delete_files(written)
                raise
            return md, written

        return build

    def abort(self) -> None:
        """Drops every staged change and deletes the files the writes made."""
        if self._committed:
            raise ValidationError("this transaction was committed already")
        self._discard()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit_transaction()
        elif not self._committed:
            self._discard()
