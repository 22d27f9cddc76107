"""`catalog.create_table_transaction(...)`: a staged create (PyIceberg's
`CreateTableTransaction`, Java's `Catalog.newCreateTableTransaction`, the REST spec's
`stage-create`). Nothing of the table is in the catalog until `commit_transaction()`, which
creates it with every staged change as its FIRST version, in one catalog operation:

    with catalog.create_table_transaction("db.t", schema, properties={...}) as txn:
        txn.append(arrow_table)            # data and manifests written now, unreferenced
        txn.set_properties({"k": "v"})
    # the table exists now, with one snapshot

How: the transaction's table (`txn.table`, a `Table`) is bound to a private staging catalog
whose commits only replace the staged metadata in memory, so every operation of `Table` and
`table.transaction()` (append, overwrite, delete, set/remove properties, schema / spec / sort
order evolution, format upgrade) works unchanged on the staged table. At commit the staged
metadata (its `metadata-log` emptied: it is a first version) goes to the real catalog's
`_create_staged`: the filesystem catalog's conditional create of `v1.metadata.json`, the SQL
catalog's INSERT of the table's row, the REST catalog's commit with `assert-create`.

When the table was created meanwhile the commit raises TableAlreadyExistsError; then, and on
an abort (an exception in the `with` block, `abort()`, or the transaction dropped without a
commit), every file the transaction wrote is deleted: the files the staged snapshots reference
(data, delete files, manifests, manifest lists) and every file under the table's data location
carrying one of the transaction's write ids (files of failed writes); never the files
`txn.table.add_files` registered, which were the caller's before and stay (as Iceberg Java's
create transaction never deletes a file it was given). A CommitStateUnknownException keeps them
(the table may exist). Writes through Spark (`icefloe.spark`) on the staged table are
not supported: their commits go through the catalog named in the session.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
import weakref
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from icefloe import _io, _native
from icefloe.catalog._base import Catalog, Identifier, IdentifierLike, Properties
from icefloe.commit.target import CommitBase, CommitTarget
from icefloe.exceptions import (
    CommitConflictError,
    CommitStateUnknownException,
    NotSupportedError,
    ValidationError,
)
from icefloe.table import Table
from icefloe.table_transaction import _file_key, staged_files
from icefloe.write import pending as _pending_write

if TYPE_CHECKING:
    from icefloe.expressions import BooleanExpression
    from icefloe.snapshots import Snapshot
    from icefloe.sorting import SortOrder
    from icefloe.table_transaction import Transaction
    from icefloe.update_schema import UpdateSchema
    from icefloe.update_sort_order import ReplaceSortOrder
    from icefloe.update_spec import UpdateSpec
    from icefloe.write.data import ArrowData

__all__ = ["CreateTableTransaction"]

logger = logging.getLogger("icefloe")


class _StagingCatalog(Catalog):
    """The catalog of a staged table: holds its metadata in memory; a commit replaces it (a
    compare-and-swap on a pseudo metadata location, never written). Nothing else."""

    def __init__(self, real: Catalog, parts: Identifier, metadata: _native.TableMetadata) -> None:
        # Not Catalog.__init__: the real catalog registered the storage settings already.
        self.name = real.name
        self.properties = real.properties
        self._real = real
        self._parts = parts
        self.current = metadata
        self.location = self._pseudo_location(metadata)
        self.closed: str | None = None  # "committed" / "aborted" once the transaction ended

    @staticmethod
    def _pseudo_location(metadata: _native.TableMetadata) -> str:
        return _io.join(metadata.metadata_root, f"staged-{uuid.uuid4().hex}.metadata.json")

    def _name(self) -> str:
        return ".".join(self._parts)

    def _refuse(self, what: str) -> NotSupportedError:
        return NotSupportedError(
            f"{what}: the staged table {self._name()} of a create transaction belongs to no catalog "
            f"yet; use catalog {self._real.name!r} itself"
        )

    def _is_staged(self, identifier: IdentifierLike) -> bool:
        return self.table_identifier(identifier) == self._parts

    def create_table(self, identifier: IdentifierLike, *args: Any, **kwargs: Any) -> Table:
        raise self._refuse("create_table")

    def load_table(self, identifier: IdentifierLike) -> Table:
        if not self._is_staged(identifier):
            raise self._refuse(f"load_table({identifier!r})")
        return Table(self._parts, self.current, self.location, self)

    def table_exists(self, identifier: IdentifierLike) -> bool:
        return self._is_staged(identifier)

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        raise self._refuse("list_tables")

    def drop_table(self, identifier: IdentifierLike) -> None:
        raise self._refuse("drop_table")

    def purge_table(self, identifier: IdentifierLike) -> None:
        raise self._refuse("purge_table")

    def rename_table(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> Table:
        raise self._refuse("rename_table")

    def create_namespace(self, namespace: IdentifierLike, properties: Properties | None = None) -> None:
        raise self._refuse("create_namespace")

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        raise self._refuse("list_namespaces")

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        raise self._refuse("drop_namespace")

    def load_namespace_properties(self, namespace: IdentifierLike) -> Properties:
        raise self._refuse("load_namespace_properties")

    def namespace_exists(self, namespace: IdentifierLike) -> bool:
        raise self._refuse("namespace_exists")

    def _commit_table(self, base: CommitBase, new_metadata: _native.TableMetadata) -> _native.TableMetadata:
        if self.closed is not None:
            raise ValidationError(
                f"the create transaction of table {self._name()} was {self.closed} already; "
                "nothing more can be staged on it"
            )
        if base.metadata_location != self.location:
            raise CommitConflictError(
                f"staged table {self._name()} changed since this object was loaded "
                f"(expected staged version {self.location}, found {base.metadata_location})"
            )
        location = self._pseudo_location(new_metadata)
        self.current = _native.TableMetadata.from_json(new_metadata.to_json(), location)
        self.location = location
        return self.current

    def __repr__(self) -> str:
        return f"StagingCatalog({self._real.name!r}, {self._name()!r})"


class _StagingTarget(CommitTarget):
    """The staged table's commit target: `main` as for any table, and it records the write ids
    of its writes (their files are deleted if the transaction does not commit) and the files
    `add_files` registered (the caller's: never deleted)."""

    def __init__(self, write_ids: list[str], registered: set[tuple[str, str]]) -> None:
        self._write_ids = write_ids
        self._registered = registered

    def started_write(self, write_id: str) -> None:
        self._write_ids.append(write_id)

    def registering(self, file_paths: Iterable[str]) -> None:
        # Noted before the commit: whatever happens next, these files are not the transaction's
        # to delete (Java's create transaction never deletes an appended file either).
        self._registered.update(_file_key(p) for p in file_paths)


class CreateTableTransaction:
    """A table created with every staged change in one commit (see the module doc).
    `catalog.create_table_transaction(...)` makes one; use it as a context manager (commits on
    a clean exit, aborts on an exception) or call `commit_transaction()` / `abort()`."""

    def __init__(
        self,
        catalog: Catalog,
        identifier: Identifier,
        metadata: _native.TableMetadata,
        io_properties: Mapping[str, str] | None = None,
    ) -> None:
        self._catalog = catalog
        self._identifier = tuple(identifier)
        self._stage = _StagingCatalog(catalog, self._identifier, metadata)
        self._write_ids: list[str] = []
        self._registered: set[tuple[str, str]] = set()
        table = Table(self._identifier, metadata, self._stage.location, self._stage, io_properties)._through(
            _StagingTarget(self._write_ids, self._registered)
        )
        self._staged_table: Table = table
        self._committed: Table | None = None
        location = metadata.location
        existed = not _io.is_local(location) or os.path.exists(_io.local_path(location))
        # Runs once: on abort, on a failed commit, or when the transaction is dropped uncommitted
        # (at the latest when the interpreter exits). Holds no reference to `self`.
        self._discard = weakref.finalize(
            self, _discard_files, self._stage, table, self._write_ids, self._registered, not existed
        )

    # ---- state ----
    @property
    def table(self) -> Table:
        """The staged table (operations on it are staged); after the commit, the created table."""
        return self._committed if self._committed is not None else self._staged_table

    @property
    def table_metadata(self) -> _native.TableMetadata:
        """The metadata the table will be created with, as staged so far."""
        return self._stage.current

    def _open(self) -> Table:
        if self._stage.closed is not None:
            raise ValidationError(
                f"the create transaction of table {'.'.join(self._identifier)} was "
                f"{self._stage.closed} already"
            )
        return self._staged_table

    # ---- staged changes (each a commit of the staged table) ----
    def append(
        self,
        df: ArrowData,
        snapshot_properties: dict[str, str] | None = None,
        write_options: Mapping[str, Any] | None = None,
    ) -> None:
        """Writes `df`'s rows now (invisible until the commit) as an `append` snapshot."""
        self._open().append(df, snapshot_properties, write_options)

    def overwrite(
        self,
        df: ArrowData,
        overwrite_filter: BooleanExpression | str | None = None,
        snapshot_properties: dict[str, str] | None = None,
    ) -> Snapshot | None:
        """`Table.overwrite` of the rows staged so far."""
        return self._open().overwrite(df, overwrite_filter, snapshot_properties)

    def delete(
        self, delete_filter: BooleanExpression | str, snapshot_properties: dict[str, str] | None = None
    ) -> Snapshot | None:
        """`Table.delete` of the rows staged so far."""
        return self._open().delete(delete_filter, snapshot_properties)

    def _changes(self) -> Transaction:
        from icefloe.table_transaction import Transaction

        return Transaction(self._open(), autocommit=True)

    def set_properties(
        self, properties: dict[str, str] | None = None, **kwargs: str
    ) -> CreateTableTransaction:
        self._changes().set_properties(properties, **kwargs)
        return self

    def remove_properties(self, *removals: str) -> CreateTableTransaction:
        self._changes().remove_properties(*removals)
        return self

    def upgrade_table_version(self, format_version: int) -> CreateTableTransaction:
        self._changes().upgrade_table_version(format_version)
        return self

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> UpdateSchema:
        return self._changes().update_schema(allow_incompatible_changes, case_sensitive)

    def update_spec(self, case_sensitive: bool = True) -> UpdateSpec:
        return self._changes().update_spec(case_sensitive)

    def replace_sort_order(
        self, order: SortOrder | None = None, case_sensitive: bool = True
    ) -> ReplaceSortOrder:
        return self._open().replace_sort_order(order, case_sensitive)

    # ---- end ----
    def commit_transaction(self) -> Table:
        """Creates the table with everything staged, as its first version; returns it.
        TableAlreadyExistsError (the transaction's files deleted) if the table was created
        meanwhile; CommitStateUnknownException (files kept) when the outcome is unknown."""
        self._open()
        self._stage.closed = "committed"
        final = _first_version(self._stage.current)
        try:
            self._catalog._create_staged(self._identifier, final)
        except CommitStateUnknownException:
            self._discard.detach()  # the table may exist and reference the files
            raise
        except Exception:
            self._stage.closed = "aborted"
            self._discard()
            raise
        self._discard.detach()
        self._committed = self._catalog.load_table(self._identifier)
        return self._committed

    def abort(self) -> None:
        """Drops everything staged and deletes the files written (nothing is created)."""
        if self._stage.closed == "committed":
            raise ValidationError(
                f"the create transaction of table {'.'.join(self._identifier)} was committed already"
            )
        self._discard()

    def __enter__(self) -> CreateTableTransaction:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit_transaction()
        elif self._stage.closed is None:
            self._discard()

    def __repr__(self) -> str:
        state = self._stage.closed or "open"
        return f"CreateTableTransaction({self._catalog.name!r}, {'.'.join(self._identifier)!r}, {state})"


def _first_version(metadata: _native.TableMetadata) -> _native.TableMetadata:
    """The staged metadata as a table's first version: no previous metadata files (the
    staged versions were never written)."""
    doc = json.loads(metadata.to_json())
    doc["metadata-log"] = []
    return _native.TableMetadata.from_json(json.dumps(doc))


def _discard_files(
    stage: _StagingCatalog,
    table: Table,
    write_ids: list[str],
    registered: set[tuple[str, str]],
    remove_location: bool,
) -> None:
    """Deletes what an uncommitted create transaction wrote (not the files `add_files`
    registered). Best effort: logged, never raised (it may run from a finalizer)."""
    if stage.closed == "committed":
        return  # a commit was under way (interrupted?): the table may reference the files
    stage.closed = "aborted"
    metadata = stage.current
    try:
        _native.delete_files(staged_files(metadata, registered))
    except Exception as e:
        logger.warning("icefloe: create transaction of %s: could not delete its files: %s", stage._name(), e)
    for write_id in write_ids:
        try:
            _pending_write.abort_write(table, write_id)
        except Exception as e:
            logger.warning(
                "icefloe: create transaction of %s: could not delete write %s: %s", stage._name(), write_id, e
            )
    location = metadata.location
    if _io.is_local(location):
        # Empty folders the writes made: the data and metadata folders, and the table's own
        # folder when the transaction made it (in a filesystem catalog it would look like a
        # namespace).
        for folder in (metadata.data_location, metadata.metadata_root):
            if _io.is_local(folder):
                _io.remove_empty_dirs(_io.local_path(folder))
        if remove_location:
            _io.remove_empty_dirs(_io.local_path(location))
