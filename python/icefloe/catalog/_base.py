"""The Catalog base class: PyIceberg's method names, identifier handling, and the
pieces every catalog shares (building new table metadata, purging a table's files)."""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from icefloe import _io, _native
from icefloe.catalog._views import ViewCatalogMixin
from icefloe.exceptions import (
    IcefloeError,
    NamespaceAlreadyExistsError,
    NoSuchTableError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
)
from icefloe.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionSpec
from icefloe.schema import Schema
from icefloe.sorting import UNSORTED_SORT_ORDER, SortOrder

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.commit.target import CommitBase
    from icefloe.create_transaction import CreateTableTransaction
    from icefloe.replace_transaction import ReplaceTableTransaction
    from icefloe.scan import DataScan
    from icefloe.table import Table
    from icefloe.table_transaction import Transaction

logger = logging.getLogger("icefloe")

Identifier = tuple[str, ...]
Properties = dict[str, str]
IdentifierLike = Union[str, Iterable[str]]


@dataclass
class PropertiesUpdateSummary:
    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


class Catalog(ViewCatalogMixin, ABC):
    """A catalog of Iceberg tables grouped in namespaces.

    Identifiers are dotted strings (`"db.events"`) or tuples (`("db", "events")`).
    """

    def __init__(self, name: str, **properties: str) -> None:
        self.name = name
        self.properties: Properties = {k: str(v) for k, v in properties.items()}
        warehouse = self.properties.get("warehouse")
        if warehouse and not _io.is_local(warehouse):
            # As Java's catalog FileIO, the settings reach the whole storage (bucket) of the
            # warehouse: tables may live, or have lived, outside it. A longer prefix (the
            # warehouse, a table's location) wins where several are registered.
            _io.register(_io.parse(warehouse)[1], self.properties)
            _io.register(warehouse, self.properties)

    # ---- identifiers ----
    @staticmethod
    def identifier_to_tuple(identifier: IdentifierLike) -> Identifier:
        if isinstance(identifier, str):
            parts = tuple(identifier.split(".")) if identifier else ()
        else:
            parts = tuple(identifier)
        for p in parts:
            if not isinstance(p, str) or not p:
                raise ValidationError(f"invalid identifier {identifier!r}: empty or non-string part")
        return parts

    @staticmethod
    def table_identifier(identifier: IdentifierLike) -> Identifier:
        parts = Catalog.identifier_to_tuple(identifier)
        if len(parts) < 2:
            raise ValidationError(f"expected a table identifier 'namespace.table', found {identifier!r}")
        return parts

    @staticmethod
    def namespace_from(identifier: IdentifierLike) -> Identifier:
        return Catalog.table_identifier(identifier)[:-1]

    @staticmethod
    def table_name_from(identifier: IdentifierLike) -> str:
        return Catalog.table_identifier(identifier)[-1]

    @staticmethod
    def namespace_to_string(namespace: IdentifierLike) -> str:
        parts = Catalog.identifier_to_tuple(namespace)
        if not parts:
            raise ValidationError("expected a non-empty namespace")
        return ".".join(parts)

    # ---- tables ----
    def create_table(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> Table:
        """Creates a table; TableAlreadyExistsError if one exists, NoSuchNamespaceError
        if its namespace does not. (The catalog's own `_stage_create` + `_create_staged`:
        the same checks and atomic create as a staged create with nothing staged.)"""
        parts, metadata, _io_props = self._stage_create(
            identifier, schema, partition_spec, sort_order, properties, location
        )
        self._create_staged(parts, metadata)
        return self.load_table(parts)

    def create_table_if_not_exists(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> Table:
        try:
            return self.create_table(identifier, schema, partition_spec, sort_order, properties, location)
        except TableAlreadyExistsError:
            return self.load_table(identifier)

    def create_table_transaction(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> CreateTableTransaction:
        """A staged create (PyIceberg's `create_table_transaction`, Java's
        `newCreateTableTransaction`): the table's writes and changes are staged on
        `txn.table` and nothing is in the catalog until `commit_transaction()` (or a clean
        exit of `with`) creates the table with all of them as its first version.
        TableAlreadyExistsError now if the table exists, or at the commit if it was created
        meanwhile (the transaction's files are then deleted, as on an abort). See
        `icefloe.create_transaction`."""
        from icefloe.create_transaction import CreateTableTransaction

        parts, metadata, io_properties = self._stage_create(
            identifier, schema, partition_spec, sort_order, properties, location
        )
        return CreateTableTransaction(self, parts, metadata, io_properties)

    def replace_table_transaction(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> ReplaceTableTransaction:
        """A staged replace of an existing table (Java's `newReplaceTableTransaction`, Spark
        SQL's `REPLACE TABLE`): the same table (uuid, snapshots, history, refs other than
        `main`) with the new schema (ids of same-named columns kept), spec, sort order and
        merged properties, and no current snapshot until the transaction's first write; all of
        it committed as one version by `commit_transaction()` (or a clean exit of `with`).
        NoSuchTableError if the table does not exist; CommitConflictError at the commit if it
        changed meanwhile (the transaction's files are then deleted). See
        `icefloe.replace_transaction`."""
        from icefloe.replace_transaction import replace_table_transaction

        return replace_table_transaction(
            self, self.table_identifier(identifier), schema, partition_spec, sort_order, properties, location
        )

    def create_or_replace_table_transaction(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> CreateTableTransaction | ReplaceTableTransaction:
        """`replace_table_transaction` when the table exists, else `create_table_transaction`
        (Spark SQL's `CREATE OR REPLACE TABLE`)."""
        try:
            return self.replace_table_transaction(
                identifier, schema, partition_spec, sort_order, properties, location
            )
        except NoSuchTableError:
            return self.create_table_transaction(
                identifier, schema, partition_spec, sort_order, properties, location
            )

    def create_or_replace_table(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> Table:
        """Creates the table, or replaces it when it exists (committed at once; a replaced
        table has no current snapshot, its history stays)."""
        return self.create_or_replace_table_transaction(
            identifier, schema, partition_spec, sort_order, properties, location
        ).commit_transaction()

    def _stage_create(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Properties | None,
        location: str | None,
    ) -> tuple[Identifier, _native.TableMetadata, Properties]:
        """The checks of create_table, then the new table's metadata (not written anywhere)
        and its FileIO properties."""
        raise NotSupportedError(f"{type(self).__name__} cannot stage table creates")

    def _create_staged(
        self, identifier: Identifier, metadata: _native.TableMetadata
    ) -> _native.TableMetadata:
        """Creates the table with `metadata` as its first version, atomically: the committed
        metadata (with its metadata_location). TableAlreadyExistsError when the table exists
        (nothing written is left); CommitStateUnknownException when that cannot be told."""
        raise NotSupportedError(f"{type(self).__name__} cannot stage table creates")

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        """Adds an existing table (its current metadata file) to the catalog."""
        raise NotSupportedError(f"{type(self).__name__} cannot register existing tables")

    @abstractmethod
    def load_table(self, identifier: IdentifierLike) -> Table:
        """The table's current version; NoSuchTableError if there is none."""

    @abstractmethod
    def table_exists(self, identifier: IdentifierLike) -> bool: ...

    @abstractmethod
    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]: ...

    @abstractmethod
    def drop_table(self, identifier: IdentifierLike) -> None:
        """Removes the table from the catalog (NoSuchTableError if absent)."""

    def purge_table(self, identifier: IdentifierLike) -> None:
        """Drops the table and deletes its files: data files and manifest lists of every
        snapshot, old metadata files, and the table's metadata folder (when `write.metadata.path`
        names a folder other tables may share, only this table's files in it). With `gc.enabled=false`
        no data or delete file is deleted, as Iceberg Java's `CatalogUtil.dropTableData`: they
        may belong to another table (Java's `snapshot` procedure, `add_files`)."""
        table = self.load_table(identifier)
        files = _table_files(table)
        self.drop_table(identifier)
        _native.delete_files(files)
        _remove_table_dirs(table)

    @abstractmethod
    def rename_table(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> Table: ...

    # ---- namespaces ----
    @abstractmethod
    def create_namespace(self, namespace: IdentifierLike, properties: Properties | None = None) -> None: ...

    def create_namespace_if_not_exists(
        self, namespace: IdentifierLike, properties: Properties | None = None
    ) -> None:
        try:
            self.create_namespace(namespace, properties)
        except NamespaceAlreadyExistsError:
            pass

    @abstractmethod
    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]: ...

    @abstractmethod
    def drop_namespace(self, namespace: IdentifierLike) -> None:
        """NoSuchNamespaceError if absent, NamespaceNotEmptyError if it holds anything."""

    @abstractmethod
    def load_namespace_properties(self, namespace: IdentifierLike) -> Properties: ...

    @abstractmethod
    def namespace_exists(self, namespace: IdentifierLike) -> bool: ...

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Properties | None = None,
    ) -> PropertiesUpdateSummary:
        raise NotSupportedError(f"{type(self).__name__} does not store namespace properties")

    # ---- commit (used by Table) ----
    @abstractmethod
    def _commit_table(self, base: CommitBase, new_metadata: _native.TableMetadata) -> _native.TableMetadata:
        """Swaps the table's pointer from `base.metadata_location` to a new metadata file
        holding `new_metadata`, only if it still names that base. Returns the committed
        metadata (with its metadata_location). CommitConflictError if the table moved on;
        nothing is left behind in that case."""

    # ---- metrics reports (a REST catalog sends them; the others keep none) ----
    def _metrics_reporting(self) -> bool:
        """Whether scans and commits should make reports for `_report_metrics` (their
        building is skipped otherwise)."""
        return False

    def _report_metrics(self, table: Table, report: dict[str, Any]) -> None:
        """A `scan-report` / `commit-report` of `table` (see `icefloe._metrics_reports`).
        Never raises."""

    def _plan_scan_on_server(self, scan: DataScan) -> _native.ScanPlan | None:
        """The scan's tasks planned by the catalog's server, or None: icefloe plans them from
        the manifests (every catalog but a REST one whose server plans)."""
        return None

    def _check_multi_table_commit(self) -> None:
        """NotSupportedError unless `_commit_tables` can swap several tables atomically."""
        raise NotSupportedError(
            f"{type(self).__name__} {self.name!r} cannot commit several tables atomically; "
            "commit each table's transaction on its own (tx.commit_transaction()), or use a SQL "
            "or REST catalog"
        )

    def _commit_tables(
        self, changes: list[tuple[CommitBase, _native.TableMetadata]]
    ) -> list[_native.TableMetadata]:
        """`_commit_table` for several tables at once, atomically: every pointer moves or
        none does (CommitConflictError when one table moved on). See `_check_multi_table_commit`."""
        self._check_multi_table_commit()
        raise NotImplementedError

    def commit_transaction(self, *transactions: Transaction) -> list[Table]:
        """Commits the open transactions (`table.transaction()`, writes included) of several
        tables of this catalog atomically: all of their changes land, each as one new version
        of its table, or none does (Iceberg's multi-table commit: the REST catalog's
        `POST /v1/{prefix}/transactions/commit`, the SQL catalog's one database transaction;
        the filesystem catalog refuses). A conflict is retried as a single table's commit is
        (every table refreshed, each transaction's writes validated against what landed since
        it began). Returns the tables, at their new versions. See `icefloe.catalog._multi_table`."""
        from icefloe.catalog._multi_table import commit_transactions

        return commit_transactions(self, list(transactions))

    # ---- shared helpers ----
    @staticmethod
    def _new_table_metadata(
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        location: str,
        properties: Properties | None,
    ) -> _native.TableMetadata:
        props = {str(k): str(v) for k, v in (properties or {}).items()}
        # format-version is a table attribute, not a stored property (as in Iceberg Java).
        fv_text = props.pop("format-version", "2")
        try:
            format_version = int(fv_text)
        except ValueError:
            raise ValidationError(f"format-version must be 1, 2 or 3, found {fv_text!r}") from None
        schema_json = _schema_json(schema, format_version)
        spec = partition_spec or UNPARTITIONED_PARTITION_SPEC
        order = sort_order or UNSORTED_SORT_ORDER
        return _native.TableMetadata.new_table(
            schema_json,
            spec.to_json(),
            order.to_json(),
            location.rstrip("/"),
            props,
            format_version,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _schema_json(schema: object, format_version: int = 2) -> str:
    if isinstance(schema, Schema):
        return schema.to_json()
    import pyarrow as pa

    if isinstance(schema, pa.Schema):
        # v3 has nanosecond timestamps: an Arrow `timestamp[ns]` column keeps its precision
        # (PyIceberg's mapping); before v3 it becomes a microsecond column.
        return _native.schema_from_arrow(schema, nanosecond_timestamps=format_version >= 3)
    raise ValidationError(f"expected an icefloe Schema or a pyarrow.Schema, found {type(schema).__name__}")


def _table_files(table: Table) -> list[str]:
    """Every file the table's metadata references that purge should delete: data and delete
    files only while `gc.enabled` (default true; any value but `true`, in any case, turns it
    off, as Java's `Boolean.parseBoolean` reads it)."""
    md = table.metadata
    gc_enabled = md.properties.get("gc.enabled", "true").lower() == "true"
    files: set[str] = set()
    for snap in md.snapshots():
        sid = snap.get("snapshot-id")
        ml = snap.get("manifest-list")
        if isinstance(ml, str):
            files.add(ml)
        if gc_enabled and isinstance(sid, int):
            try:
                for task in table.scan(snapshot_id=sid).plan_files():
                    files.add(task.file_path)
                    files.update(task.delete_paths)
            except NotSupportedError:
                logger.warning("icefloe: purge of %s: snapshot %s has delete files; skipped", table, sid)
    if not _own_metadata_folder(table):
        # Its metadata folder is not deleted whole (see `_remove_table_dirs`): the table's own
        # manifests and statistics files go one by one, as Java's `dropTableData` deletes them.
        ids = [sid for s in md.snapshots() if isinstance(sid := s.get("snapshot-id"), int)]
        if ids:
            reached = _native.expired_snapshot_files(md, ids, [])
            files.update(loc for kind, loc, _size in reached if kind in _METADATA_KINDS)
    for entry in md.metadata_log():
        loc = entry.get("metadata-file")
        if isinstance(loc, str):
            files.add(loc)
    if table.metadata_location:
        files.add(table.metadata_location)
    return sorted(files)


# The kinds of `_native.expired_snapshot_files` that are metadata, not data or delete files.
_METADATA_KINDS = ("manifest", "manifest_list", "statistics")


def _own_metadata_folder(table: Table) -> bool:
    """Whether the table's metadata folder is its own, `<location>/metadata`: not one that
    `write.metadata.path` names, which other tables may share (their files have unique names,
    so Java lets them)."""
    return "write.metadata.path" not in table.metadata.properties


def _remove_table_dirs(table: Table) -> None:
    """Removes the table's metadata folder (manifests live there) when it is the table's own,
    else only what is left of it empty; and, when local, its data folder if it now holds
    nothing but what this table wrote."""
    loc = table.location()
    meta = table.metadata.metadata_root
    if _own_metadata_folder(table):
        try:
            _io.delete_prefix(meta)
        except IcefloeError as e:
            logger.warning("icefloe: purge of %s: could not delete %s: %s", table, meta, e)
    elif _io.is_local(meta):
        _io.remove_empty_dirs(_io.local_path(meta))
    if not _io.is_local(loc):
        return  # object stores have no empty folders to remove
    data = table.metadata.data_location
    if _io.is_local(data):
        _io.remove_empty_dirs(_io.local_path(data))
    _io.remove_empty_dirs(_io.local_path(loc))
