"""`Table`: one Iceberg table as loaded from a catalog (PyIceberg's names), with append
and scan, plus the write/commit hooks the Spark layer reuses."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _io, _native
from icefloe.commit.retry import BuildFn
from icefloe.commit.target import MAIN, CommitBase, CommitTarget, TableVersion
from icefloe.exceptions import ValidationError
from icefloe.expressions import BooleanExpression
from icefloe.partitioning import PartitionSpec
from icefloe.schema import Schema
from icefloe.snapshots import Snapshot, SnapshotLogEntry
from icefloe.sorting import SortOrder
from icefloe.statistics import PartitionStatisticsFile, StatisticsFile
from icefloe.write import pending as _pending_write
from icefloe.write.branch import on_branch
from icefloe.write.data import ArrowData, as_reader
from icefloe.write.options import write_kwargs

if TYPE_CHECKING:
    from icefloe.catalog import Catalog
    from icefloe.inspect import InspectTable
    from icefloe.io import FileIO
    from icefloe.maintenance import Maintenance
    from icefloe.manage_snapshots import ManageSnapshots, SnapshotRef
    from icefloe.scan import DataScan
    from icefloe.table_transaction import Transaction
    from icefloe.update_schema import UpdateSchema as _update_schema_UpdateSchema
    from icefloe.update_sort_order import ReplaceSortOrder as _update_sort_order_ReplaceSortOrder
    from icefloe.update_spec import UpdateSpec as _update_spec_UpdateSpec
    from icefloe.write.merge import TableMerger as _merge_TableMerger
    from icefloe.write.row_level import UpsertResult as _row_level_UpsertResult

__all__ = ["ArrowData", "Table", "as_reader"]

logger = logging.getLogger("icefloe")


class Table:
    """An Iceberg table at the version it was loaded (or last committed) at."""

    def __init__(
        self,
        identifier: tuple[str, ...],
        metadata: _native.TableMetadata,
        metadata_location: str,
        catalog: Catalog,
        io_properties: Mapping[str, str] | None = None,
    ) -> None:
        self._identifier = tuple(identifier)
        self._catalog = catalog
        # The catalog's storage settings, then the table's own (a REST catalog's vended
        # credentials in its loadTable `config`).
        props = _io.file_io_properties({**catalog.properties, **(io_properties or {})})
        self._version = TableVersion(metadata, metadata_location, props)
        self._target: CommitTarget = MAIN

    def _through(self, target: CommitTarget) -> Table:
        """This table seen and committed through `target` (a branch, a guarded view; see
        `icefloe.commit.target`): it shares this table's version, so its commits move both."""
        view = object.__new__(Table)
        view.__dict__.update(self.__dict__)
        view._target = target
        return view

    @property
    def _metadata(self) -> _native.TableMetadata:
        return self._target.view(self._version.metadata)

    @property
    def _metadata_location(self) -> str:
        return self._version.location

    @property
    def _io_properties(self) -> dict[str, str]:
        return self._version.io_properties

    def _commit_base(self) -> CommitBase:
        """What the catalog swaps against: the real metadata, not a branch's view of it."""
        return CommitBase(self._identifier, self._version.metadata, self._version.location)

    # ---- identity ----
    @property
    def identifier(self) -> tuple[str, ...]:
        return self._identifier

    def name(self) -> tuple[str, ...]:
        return self._identifier

    @property
    def catalog(self) -> Catalog:
        return self._catalog

    @property
    def metadata(self) -> _native.TableMetadata:
        return self._metadata

    @property
    def metadata_location(self) -> str:
        """The metadata file this object was loaded from; commits are swapped against it."""
        return self._metadata_location

    @property
    def format_version(self) -> int:
        return self._metadata.format_version

    def location(self) -> str:
        return self._metadata.location

    @property
    def properties(self) -> dict[str, str]:
        return dict(self._metadata.properties)

    # ---- schema, spec, order ----
    def schema(self) -> Schema:
        return Schema.from_json(self._metadata.schema_json())

    def schemas(self) -> dict[int, Schema]:
        return {s.schema_id: s for s in map(Schema.from_json, self._metadata.schemas_json())}

    def spec(self) -> PartitionSpec:
        return PartitionSpec.from_json(self._metadata.spec_json())

    def specs(self) -> dict[int, PartitionSpec]:
        return {s.spec_id: s for s in map(PartitionSpec.from_json, self._metadata.specs_json())}

    def sort_order(self) -> SortOrder:
        return SortOrder.from_json(self._metadata.sort_order_json())

    def sort_orders(self) -> dict[int, SortOrder]:
        """Every sort order of the table by id (PyIceberg's `sort_orders`)."""
        return {o.order_id: o for o in map(SortOrder.from_json, self._metadata.sort_orders_json())}

    # ---- snapshots ----
    def current_snapshot(self) -> Snapshot | None:
        sid = self._metadata.current_snapshot_id
        return None if sid is None else self.snapshot_by_id(sid)

    def snapshots(self) -> list[Snapshot]:
        return [Snapshot.from_native(d) for d in self._metadata.snapshots()]

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot | None:
        d = self._metadata.snapshot_by_id(snapshot_id)
        return None if d is None else Snapshot.from_native(d)

    def refs(self) -> dict[str, SnapshotRef]:
        """The table's branches and tags by name (`main` included once the table has a
        snapshot)."""
        from icefloe.manage_snapshots import table_refs

        return table_refs(self._metadata)

    def snapshot_by_name(self, name: str) -> Snapshot | None:
        """The snapshot a branch or tag points at, or None when there is no such ref."""
        ref = self.refs().get(name)
        return None if ref is None else self.snapshot_by_id(ref.snapshot_id)

    def statistics(self) -> list[StatisticsFile]:
        """The table's statistics files (one per snapshot that has one; see
        `icefloe.statistics`), each with its blobs' metadata and `ndv` estimates."""
        return [StatisticsFile.from_json(e) for e in self._metadata.statistics()]

    def partition_statistics(self) -> list[PartitionStatisticsFile]:
        """The table's partition statistics files (one per snapshot that has one; see
        `table.maintenance.compute_partition_stats`)."""
        return [PartitionStatisticsFile.from_json(e) for e in self._metadata.partition_statistics()]

    def history(self) -> list[SnapshotLogEntry]:
        return [
            SnapshotLogEntry(snapshot_id=int(e["snapshot-id"]), timestamp_ms=int(e["timestamp-ms"]))
            for e in self._metadata.snapshot_log()
        ]

    @property
    def inspect(self) -> InspectTable:
        """The metadata tables (`table.inspect.files()`, `.snapshots()`, ...) as Arrow tables
        with Iceberg Java's columns and types (see `icefloe.inspect`)."""
        from icefloe.inspect import InspectTable

        return InspectTable(self)

    def refresh(self) -> Table:
        """Reloads the table's current version from the catalog."""
        fresh = self._catalog.load_table(self._identifier)._version
        self._version.io_properties = fresh.io_properties
        self._version.move_to(fresh.metadata, fresh.location)
        return self

    def _set_metadata(self, metadata: _native.TableMetadata) -> None:
        location = metadata.metadata_location
        if location is None:
            raise ValidationError("committed metadata has no metadata_location")
        self._version.move_to(metadata, location)

    # ---- storage ----
    @property
    def io_properties(self) -> dict[str, str]:
        """The FileIO properties of this table's storage (the catalog's `s3.*`, `gcs.*`,
        `adls.*` settings and, for a REST catalog, the table's vended config)."""
        return dict(self._io_properties)

    @property
    def io(self) -> FileIO:
        """The table's FileIO (PyIceberg's `table.io`): `new_input(path).open()`,
        `new_output(path).create()`, `delete(path)`, over the same Rust FileIO and storage
        settings as every read and write of this table."""
        from icefloe.io import FileIO

        return FileIO(self._io_properties)

    @property
    def io_config(self) -> _io.IoConfig:
        """What a Spark task needs to reach this table's files on an executor."""
        return self._version.io_config

    # ---- evolution and snapshot management ----
    def manage_snapshots(self) -> ManageSnapshots:
        """Branches, tags, rollback (see `icefloe.manage_snapshots`):
        `with table.manage_snapshots() as ms: ms.create_tag(snapshot_id, "v1")`."""
        from icefloe.manage_snapshots import ManageSnapshots

        return ManageSnapshots(self)

    # ---- maintenance ----
    @property
    def maintenance(self) -> Maintenance:
        """Snapshot expiry, orphan-file removal and compaction:
        `table.maintenance.expire_snapshots(...)`, `remove_orphan_files(...)`,
        `rewrite_data_files(...)` (see `icefloe.maintenance`)."""
        from icefloe.maintenance import Maintenance

        return Maintenance(self)

    # ---- read ----
    def transaction(self) -> Transaction:
        """Table-level changes committed together (see `icefloe.table_transaction`):
        `with table.transaction() as tx: tx.upgrade_table_version(3)`."""
        from icefloe.table_transaction import Transaction

        return Transaction(self)

    def update_schema(
        self, allow_incompatible_changes: bool = False, case_sensitive: bool = True
    ) -> _update_schema_UpdateSchema:
        """Schema evolution committed as one new version on leaving the `with` block (see
        `icefloe.update_schema`): `with table.update_schema() as u: u.add_column("x", LongType())`."""
        from icefloe.table_transaction import Transaction

        return Transaction(self, autocommit=True).update_schema(allow_incompatible_changes, case_sensitive)

    def update_spec(self, case_sensitive: bool = True) -> _update_spec_UpdateSpec:
        """Partition-spec evolution (see `icefloe.update_spec`):
        `with table.update_spec() as u: u.add_field("ts", "day")`."""
        from icefloe.table_transaction import Transaction

        return Transaction(self, autocommit=True).update_spec(case_sensitive)

    def replace_sort_order(
        self, order: SortOrder | None = None, case_sensitive: bool = True
    ) -> _update_sort_order_ReplaceSortOrder:
        """A new default sort order (see `icefloe.update_sort_order`): committed at once when
        `order` is given, else on leaving `with table.replace_sort_order() as o: o.asc("id")`."""
        from icefloe.table_transaction import Transaction

        builder = Transaction(self, autocommit=True).replace_sort_order(case_sensitive=case_sensitive)
        if order is not None:
            builder.with_order(order).commit()
        return builder

    def scan(
        self,
        row_filter: BooleanExpression | str | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        snapshot_id: int | None = None,
        case_sensitive: bool = True,
        limit: int | None = None,
        **scan_options: Any,
    ) -> DataScan:
        """A scan; `scan_options` go to DataScan (as_of_timestamp, ref, from_snapshot_id,
        to_snapshot_id, include_column_stats, ...)."""
        from icefloe.scan import DataScan

        return DataScan(self, row_filter, selected_fields, snapshot_id, case_sensitive, limit, **scan_options)

    def changelog(
        self,
        from_snapshot_id: int | None = None,
        to_snapshot_id: int | None = None,
        identifier_columns: list[str] | tuple[str, ...] | None = None,
    ) -> pa.Table:
        """The row changes of the snapshots after `from_snapshot_id` (exclusive; default the
        start of history) up to `to_snapshot_id` (inclusive; default current), as Iceberg's
        `create_changelog_view`: the table's columns plus `_change_type` (INSERT, DELETE;
        UPDATE_BEFORE / UPDATE_AFTER when `identifier_columns` are given),
        `_change_ordinal` and `_commit_snapshot_id`. Unlike Java, snapshots with position,
        deletion-vector and equality deletes are read too (see `icefloe.changelog`)."""
        from icefloe.changelog import changelog_arrow

        return changelog_arrow(self, from_snapshot_id, to_snapshot_id, identifier_columns)

    # ---- write ----
    def append(
        self,
        df: ArrowData,
        snapshot_properties: dict[str, str] | None = None,
        write_options: Mapping[str, Any] | None = None,
        branch: str | None = None,
    ) -> None:
        """Appends Arrow data as a new `append` snapshot (a merge append: small manifests are
        merged per `commit.manifest.*`, as Iceberg Java's `newAppend()`). The data must fit
        the table's schema (ValidationError naming each column that does not); on any
        failure nothing is committed and every file written is deleted. `write_options`:
        see `icefloe.write.options` (fanout/clustered mode, open-file bound, sort).

        `branch` (every write takes it): commit to that branch instead of `main`; the
        operation reads, validates against and builds on the branch's head, and the first
        write to a missing branch creates it (see `icefloe.write.branch`)."""
        if branch is not None and branch != "main":
            return on_branch(self, branch).append(df, snapshot_properties, write_options)
        options = write_kwargs(write_options)
        reader = as_reader(df)
        _native.check_arrow_schema(self._metadata, reader.schema)
        write_id = self._new_write_id()
        descriptors = self._write_local(reader, write_id, options)
        if descriptors:
            self._commit_data_files(descriptors, snapshot_properties, write_id=write_id)

    def overwrite(
        self,
        df: ArrowData,
        overwrite_filter: BooleanExpression | str | None = None,
        snapshot_properties: dict[str, str] | None = None,
        validate_added_files_match_filter: bool = False,
        branch: str | None = None,
        case_sensitive: bool = True,
    ) -> Snapshot | None:
        """Replaces rows with `df`'s, as one snapshot.

        With `overwrite_filter`: removes the rows matching it (files where every row
        matches are dropped, files where some do are rewritten without them) and adds
        `df` (`overwrite`, or `delete` when `df` is empty). Without a filter: a dynamic
        partition overwrite, replacing exactly the partitions `df`'s rows fall in (Spark's
        `overwritePartitions()`; in an unpartitioned table, the whole table).

        Concurrent commits are validated at serializable isolation: CommitConflictError
        (naming the snapshot) when new data or deletes landed in what this replaces (for a
        filter: files that may hold matching rows, by partition and column stats).

        `validate_added_files_match_filter` (Java's `validateAddedFilesMatchOverwriteFilter`;
        off by default, as in Java's Spark `overwrite(expr)`): ValidationError unless every
        file of `df` is proven by partition or column stats to match the filter.

        `case_sensitive` (as PyIceberg's): whether the filter's column names must match the
        schema's case.
        """
        if branch is not None and branch != "main":
            view = on_branch(self, branch)
            return view.overwrite(
                df,
                overwrite_filter,
                snapshot_properties,
                validate_added_files_match_filter,
                case_sensitive=case_sensitive,
            )
        if overwrite_filter is not None:  # names resolved here, with `case_sensitive`
            from icefloe.write import row_level as _row_level

            overwrite_filter = _row_level.bind_condition(self, overwrite_filter, case_sensitive)
        reader = as_reader(df)
        _native.check_arrow_schema(self._metadata, reader.schema)
        write_id = self._new_write_id()
        start = self._metadata.current_snapshot_id
        descriptors = self._write_local(reader, write_id)
        return self._overwrite_with(
            descriptors,
            overwrite_filter,
            write_id,
            start,
            snapshot_properties,
            validate_added_files_match_filter=validate_added_files_match_filter,
        )

    def add_files(
        self,
        file_paths: list[str],
        snapshot_properties: dict[str, str] | None = None,
        check_duplicate_files: bool = True,
    ) -> Snapshot | None:
        """Registers existing Parquet files as data files in one `append` snapshot, as
        PyIceberg's `add_files` (migrations): each file's schema is checked against the
        table's (files with Parquet field ids of another schema are refused), its metrics
        come from the footer and its partition tuple from its data (exactly one per file).
        ValidationError, with nothing committed, for duplicate paths, files the table already
        references (unless `check_duplicate_files=False`) or a file that does not fit. The
        files are never moved or deleted. See `icefloe.write.add_files`."""
        from icefloe.write import add_files as _add_files

        if not isinstance(file_paths, str):
            file_paths = [str(p) for p in file_paths]
            # Noted before the commit: whatever happens next, these files are the caller's.
            self._target.registering(file_paths)
        return _add_files.add_files(self, file_paths, snapshot_properties, check_duplicate_files)

    def _add_files_from_folders(
        self,
        file_paths: list[str],
        partitions: list[list[str | None]] | None,
        check_duplicate_files: bool = True,
        spec_id: int | None = None,
    ) -> Snapshot | None:
        """`add_files` of files whose partition tuples come from their Hive-style folders'
        values (one text or None per partition field of spec `spec_id`, default the table's;
        `icefloe.migration`), not their data."""
        from icefloe.write import add_files as _add_files

        self._target.registering(file_paths)
        return _add_files.add_files(
            self, file_paths, None, check_duplicate_files, partitions=partitions, spec_id=spec_id
        )

    def dynamic_partition_overwrite(
        self, df: ArrowData, snapshot_properties: dict[str, str] | None = None, branch: str | None = None
    ) -> Snapshot | None:
        """PyIceberg's name for `overwrite(df)` without a filter: replaces exactly the
        partitions `df`'s rows fall in, as one `overwrite` snapshot (Java's
        `ReplacePartitions`, Spark's `overwritePartitions()`). Unlike PyIceberg (a delete
        snapshot, then an append) it commits once, accepts every partition transform, and
        on an unpartitioned table replaces the whole table, as Spark does; an empty `df`
        changes nothing."""
        return self.overwrite(df, None, snapshot_properties, branch=branch)

    def delete(
        self,
        delete_filter: BooleanExpression | str,
        snapshot_properties: dict[str, str] | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
    ) -> Snapshot | None:
        """Deletes the rows matching `delete_filter` as one snapshot (none when nothing
        matches) and returns the current snapshot. The table property `write.delete.mode`
        picks how: `copy-on-write` (the default) rewrites the files holding matching rows;
        `merge-on-read` writes position-delete files (`write.delete.granularity`: `file`,
        the default, or `partition`) and leaves data files untouched. Files every row of
        which matches are removed whole either way. Concurrent commits are validated per
        `write.delete.isolation-level` (see `icefloe.write.row_delta`)."""
        if branch is not None and branch != "main":
            return on_branch(self, branch).delete(delete_filter, snapshot_properties, case_sensitive)
        from icefloe.write import row_level as _row_level

        return _row_level.delete(
            self, delete_filter, snapshot_properties, case_sensitive, new_write_id=self._new_write_id
        )

    def update(
        self,
        condition: BooleanExpression | str,
        set: Mapping[str, Any],  # SQL's clause name, as delta-rs' update(set=...)
        snapshot_properties: dict[str, str] | None = None,
        case_sensitive: bool = True,
        branch: str | None = None,
    ) -> Snapshot | None:
        """Sets columns of the rows matching `condition`, as one snapshot: `set` maps column
        names to literals or pyarrow compute expressions over the row as it was
        (`{"amount": pc.field("amount") * 2, "status": "closed"}`). A key may also be a field
        of a struct at any depth (`"s.a"`, "s.`x.y`"), as Spark's `UPDATE t SET s.a = ...`:
        the struct's other fields keep their values and a NULL struct becomes a struct of
        NULLs holding the field, as Java stores it; a field inside a list or map, one field
        assigned twice, or a field with its struct are refused. `write.update.mode`:
        `copy-on-write` (default) rewrites the files; `merge-on-read` writes the new rows
        plus position deletes for the old ones. ValidationError (nothing written) for an
        unknown column or a value that does not fit its column's type."""
        if branch is not None and branch != "main":
            return on_branch(self, branch).update(condition, set, snapshot_properties, case_sensitive)
        from icefloe.write import row_level as _row_level

        return _row_level.update(self, condition, set, snapshot_properties, case_sensitive)

    def merge(
        self,
        source: ArrowData,
        on: str,
        source_alias: str = "source",
        target_alias: str = "target",
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
        merge_schema: bool = False,
    ) -> _merge_TableMerger:
        """A MERGE of Arrow `source` rows into this table (Spark's `MERGE INTO`, delta-rs'
        `TableMerger`): `on` joins `target.<col> = source.<col>` equalities; add
        `when_matched_update(set, condition)`, `when_matched_update_all`,
        `when_matched_delete`, `when_not_matched_insert(values)`,
        `when_not_matched_insert_all`, `when_not_matched_by_source_update(set)`,
        `when_not_matched_by_source_delete` clauses (conditions are row-filter strings over
        the aliases), then `.execute()`. `write.merge.mode` picks merge-on-read or
        copy-on-write. See `icefloe.write.merge`.

        `merge_schema=True` is Spark 4.1's `MERGE WITH SCHEMA EVOLUTION` (as Iceberg Java 1.12):
        the source's columns the table lacks (nested struct fields too) are added, and its
        wider types promoted (`union_by_name`), in the same commit as the rows;
        `when_matched_update_all` / `when_not_matched_insert_all` then take every source
        column, and a table column the source lacks keeps its value (update) or takes its
        default (insert). The table property `write.spark.auto-schema-evolution.enabled=false`
        turns the evolution off, as in Java; not on branches (as in Java)."""
        from icefloe.table_transaction import evolves_schema, merge_with_schema_evolution
        from icefloe.write import merge as _merge

        if evolves_schema(self, merge_schema, branch):
            data = as_reader(source).read_all()
            return merge_with_schema_evolution(
                self,
                data.schema,
                lambda t: _merge.merge(t, data, on, source_alias, target_alias, snapshot_properties),
            )
        if branch is not None and branch != "main":
            return on_branch(self, branch).merge(source, on, source_alias, target_alias, snapshot_properties)
        return _merge.merge(self, source, on, source_alias, target_alias, snapshot_properties)

    def upsert(
        self,
        df: ArrowData,
        join_cols: list[str] | None = None,
        snapshot_properties: dict[str, str] | None = None,
        branch: str | None = None,
    ) -> _row_level_UpsertResult:
        """Inserts `df`'s rows, replacing the rows with the same values in `join_cols`
        (default: the schema's identifier fields), as one snapshot. Within `df` the last
        row of a key wins. `write.merge.mode=merge-on-read`: equality deletes on the join
        columns plus the new rows, without reading the table (Flink's upsert); when the
        table is partitioned by a column outside the join columns (equality deletes reach
        only their own partition) the files holding those keys are rewritten instead, with a
        log line. `copy-on-write` (default): a MERGE rewrites the files holding those keys,
        every row of a key taking the new values (PyIceberg's upsert)."""
        if branch is not None and branch != "main":
            return on_branch(self, branch).upsert(df, join_cols, snapshot_properties)
        from icefloe.write import row_level as _row_level

        return _row_level.upsert(self, df, join_cols, snapshot_properties)

    # ---- the commit path lives in icefloe.write.pending; these delegate to it ----
    def _write_local(
        self, reader: pa.RecordBatchReader, write_id: str, options: Mapping[str, Any] | None = None
    ) -> list[str]:
        return _pending_write.write_local(self, reader, write_id, options)

    def _new_write_id(self) -> str:
        write_id = _pending_write.new_write_id()
        self._target.started_write(write_id)
        return write_id

    def _commit(self, build: BuildFn) -> _native.TableMetadata:
        """Commits the metadata `build(base)` makes, retrying on conflict (see transaction);
        through the table's commit target (a transaction's writes are recorded in it)."""
        return self._target.commit(self, build)

    def _commit_data_files(
        self,
        descriptors: list[str],
        snapshot_properties: dict[str, str] | None = None,
        write_id: str | None = None,
    ) -> Snapshot | None:
        return _pending_write.commit_append(self, descriptors, snapshot_properties, write_id)

    def _overwrite_with(
        self,
        descriptors: list[str],
        overwrite_filter: BooleanExpression | str | None,
        write_id: str,
        start_snapshot_id: int | None,
        snapshot_properties: dict[str, str] | None = None,
        require_filter: bool = False,
        validate_added_files_match_filter: bool = False,
        isolation: str = "serializable",
    ) -> Snapshot | None:
        return _pending_write.commit_overwrite(
            self,
            descriptors,
            overwrite_filter,
            write_id,
            start_snapshot_id,
            snapshot_properties,
            require_filter=require_filter,
            validate_added_files_match_filter=validate_added_files_match_filter,
            isolation=isolation,
        )

    def _commit_write(self, build: BuildFn, descriptors: list[str], write_id: str | None) -> Snapshot | None:
        return _pending_write.commit_write(self, build, descriptors, write_id)

    def _data_location(self) -> str:
        return _pending_write.data_location(self)

    def _abort_write(self, write_id: str, keep: set[str] | None = None) -> list[str]:
        return _pending_write.abort_write(self, write_id, keep)

    def __repr__(self) -> str:
        name = ".".join(self._identifier) + self._target.label()
        return f"Table({name!r}, {self._metadata_location!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Table)
            and self._identifier == other._identifier
            and self._metadata_location == other._metadata_location
        )

    def __hash__(self) -> int:
        return hash((self._identifier, self._metadata_location))
