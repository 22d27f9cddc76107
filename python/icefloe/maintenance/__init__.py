"""Table maintenance, reached as `table.maintenance`:

    result = table.maintenance.expire_snapshots(older_than=datetime(2026, 1, 1, tzinfo=timezone.utc))
    orphans = table.maintenance.remove_orphan_files(dry_run=True)
    compacted = table.maintenance.rewrite_data_files(spark=spark)
    converted = table.maintenance.convert_equality_deletes()
    clustered = table.maintenance.rewrite_manifests()
    stats = table.maintenance.compute_table_stats()
    partition_stats = table.maintenance.compute_partition_stats()
    copy = table.maintenance.rewrite_table_path("s3://prod/db/t", "s3://dr/db/t")

Each method returns a result with counts and bytes. Times (`older_than`) are a `datetime`
with a time zone, or epoch milliseconds. The work is in `expire_snapshots.py`,
`orphan_files.py`, `rewrite_data_files.py` and `convert_equality_deletes.py` (and the Rust
room `rust/maintenance/`); this class only delegates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from icefloe.maintenance.convert_equality_deletes import ConvertEqualityDeletesResult
from icefloe.maintenance.expire_snapshots import ExpireSnapshotsResult
from icefloe.maintenance.orphan_files import RemoveOrphanFilesResult
from icefloe.maintenance.rewrite_data_files import RewriteDataFilesResult
from icefloe.maintenance.rewrite_manifests import RewriteManifestsResult
from icefloe.maintenance.rewrite_position_delete_files import RewritePositionDeleteFilesResult
from icefloe.maintenance.rewrite_table_path import RewriteTablePathResult

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.expressions import BooleanExpression
    from icefloe.statistics import PartitionStatisticsFile, StatisticsFile
    from icefloe.table import Table

__all__ = [
    "ConvertEqualityDeletesResult",
    "ExpireSnapshotsResult",
    "Maintenance",
    "RemoveOrphanFilesResult",
    "RewriteDataFilesResult",
    "RewriteManifestsResult",
    "RewritePositionDeleteFilesResult",
    "RewriteTablePathResult",
]


class Maintenance:
    """The maintenance operations of one table (`table.maintenance`)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def compute_table_stats(
        self,
        columns: Sequence[str] | None = None,
        snapshot_id: int | None = None,
        spark: SparkSession | None = None,
    ) -> StatisticsFile | None:
        """Distinct-value sketches (Apache DataSketches theta, the `ndv` of each) of the
        snapshot's columns (default: the current snapshot, every top-level primitive column),
        written to a Puffin statistics file and registered in the table metadata, as Iceberg
        Java's `compute_table_stats`. The rows are read and sketched on Spark's executors
        when `spark` is given, else in this process. None when the table has no snapshot.
        See `icefloe.maintenance.table_statistics`."""
        from icefloe.maintenance import table_statistics

        return table_statistics.compute_table_stats(self._table, columns, snapshot_id, spark)

    def statistics_estimates(self, snapshot_id: int | None = None) -> dict[str, float]:
        """The distinct-value estimates of the snapshot's statistics file (default current),
        read from its theta sketches, by column name ({} when it has none)."""
        from icefloe.maintenance import table_statistics

        return table_statistics.sketch_estimates(self._table, snapshot_id)

    def compute_partition_stats(self, snapshot_id: int | None = None) -> PartitionStatisticsFile | None:
        """Per-partition counts of the snapshot (default current) in a partition statistics
        file, computed incrementally from the last one when an ancestor has one, and registered
        in the table metadata, as Iceberg Java's `compute_partition_stats`. None when the table
        has no snapshot. See `icefloe.maintenance.partition_statistics`."""
        from icefloe.maintenance import partition_statistics

        return partition_statistics.compute_partition_stats(self._table, snapshot_id)

    def partition_stats(self, snapshot_id: int | None = None) -> list[dict[str, Any]]:
        """The rows of the snapshot's (default current) partition statistics file, Java's
        columns ([] when it has none)."""
        from icefloe.maintenance import partition_statistics

        return partition_statistics.read_partition_stats(self._table, snapshot_id)

    def expire_snapshots(
        self,
        older_than: datetime | int | None = None,
        retain_last: int | None = None,
        snapshot_ids: Iterable[int] | None = None,
        clean_expired_files: bool = True,
        clean_expired_metadata: bool = False,
    ) -> ExpireSnapshotsResult:
        """Removes old snapshots and refs (Iceberg Java's `ExpireSnapshots`, with the
        `history.expire.*` table properties and each ref's retention), then deletes the
        files only they reached; with `clean_expired_metadata`, also the partition specs and
        schemas no retained snapshot uses. See `icefloe.maintenance.expire_snapshots`."""
        from icefloe.maintenance import expire_snapshots

        return expire_snapshots.expire_snapshots(
            self._table, older_than, retain_last, snapshot_ids, clean_expired_files, clean_expired_metadata
        )

    def remove_orphan_files(
        self,
        older_than: datetime | int | None = None,
        location: str | None = None,
        dry_run: bool = False,
        prefix_mismatch_mode: str = "error",
        equal_schemes: Mapping[str, str] | None = None,
        equal_authorities: Mapping[str, str] | None = None,
        allow_recent: bool = False,
        file_list: Iterable[tuple[str, datetime | int]] | None = None,
    ) -> RemoveOrphanFilesResult:
        """Deletes files under the table location (or `location`) that the table does not
        reference, last modified before `older_than` (default: 3 days ago), with Iceberg
        Java's rules; with `file_list` (`(location, last modified)` pairs) those files are
        compared instead of a listing, as Java's `compareToFileList`. See
        `icefloe.maintenance.orphan_files`."""
        from icefloe.maintenance import orphan_files

        return orphan_files.remove_orphan_files(
            self._table,
            older_than,
            location,
            dry_run,
            prefix_mismatch_mode,
            equal_schemes,
            equal_authorities,
            allow_recent,
            file_list,
        )

    def rewrite_data_files(
        self,
        filter: BooleanExpression | str | None = None,
        strategy: str = "binpack",
        sort_order: Any = None,
        target_file_size_bytes: int | None = None,
        min_input_files: int = 5,
        delete_file_threshold: int | None = None,
        partial_progress: bool = False,
        spark: SparkSession | None = None,
        **options: Any,
    ) -> RewriteDataFilesResult:
        """Compacts data files by Iceberg Java's bin-pack rules, deletes applied, as one
        `replace` snapshot (see `icefloe.maintenance.rewrite_data_files`). On Spark
        executors when `spark` is given, else in this process. `options`:
        `min_file_size_bytes`, `max_file_size_bytes`, `delete_ratio_threshold`,
        `max_file_group_size_bytes`, `max_file_group_input_files`, `rewrite_all`, `remove_dangling_deletes`,
        `use_starting_sequence_number`, `partial_progress_max_commits`,
        `max_files_to_rewrite`, `rewrite_job_order` (`bytes-asc`, `bytes-desc`, `files-asc`,
        `files-desc`, `none`), `output_spec_id`, `snapshot_properties`, `case_sensitive`;
        with `sort_order="zorder(a, b)"`: `var_length_contribution`, `max_output_size`."""
        from icefloe.maintenance.rewrite_data_files import rewrite_data_files

        return rewrite_data_files(
            self._table,
            filter,
            strategy,
            sort_order,
            target_file_size_bytes,
            min_input_files,
            delete_file_threshold,
            partial_progress,
            spark,
            **options,
        )

    def convert_equality_deletes(
        self,
        filter: BooleanExpression | str | None = None,
        spark: SparkSession | None = None,
        snapshot_properties: dict[str, str] | None = None,
        case_sensitive: bool = True,
    ) -> ConvertEqualityDeletesResult:
        """Turns the equality deletes an upsert stream leaves behind into position deletes
        (deletion vectors on format v3) by joining them with the data files they apply to,
        committed as one validated row delta; the data files are not rewritten. Only
        equality deletes whose whole scope `filter` selects are converted (all without one).
        On Spark executors when `spark` is given, else in this process. See
        `icefloe.maintenance.convert_equality_deletes`."""
        from icefloe.maintenance.convert_equality_deletes import convert_equality_deletes

        return convert_equality_deletes(self._table, filter, spark, snapshot_properties, case_sensitive)

    def rewrite_manifests(
        self,
        spec_id: int | None = None,
        snapshot_properties: dict[str, str] | None = None,
        sort_by: Sequence[str] | None = None,
    ) -> RewriteManifestsResult:
        """Rewrites the current snapshot's data and delete manifests of `spec_id` (default:
        the current spec) clustered by partition (or by the partition fields `sort_by` names,
        in order) and sized to `commit.manifest.target-size-bytes`, as one `replace` snapshot
        (Iceberg Java's `rewrite_manifests`). See `icefloe.maintenance.rewrite_manifests`."""
        from icefloe.maintenance.rewrite_manifests import rewrite_manifests

        return rewrite_manifests(self._table, spec_id, snapshot_properties, sort_by)

    def rewrite_position_delete_files(
        self,
        filter: BooleanExpression | str | None = None,
        target_file_size_bytes: int | None = None,
        min_input_files: int = 5,
        rewrite_all: bool = False,
        spark: SparkSession | None = None,
        **options: Any,
    ) -> RewritePositionDeleteFilesResult:
        """Rewrites small position delete files per partition by Iceberg Java's bin-pack
        rules, dropping positions of data files no longer live, as one `replace` snapshot
        (see `icefloe.maintenance.rewrite_position_delete_files`). `options`:
        `min_file_size_bytes`, `max_file_size_bytes`, `max_file_group_size_bytes`,
        `max_file_group_input_files`, `snapshot_properties`, `case_sensitive`."""
        from icefloe.maintenance.rewrite_position_delete_files import rewrite_position_delete_files

        return rewrite_position_delete_files(
            self._table, filter, target_file_size_bytes, min_input_files, rewrite_all, spark, **options
        )

    def __repr__(self) -> str:
        return f"Maintenance({self._table!r})"

    def rewrite_table_path(
        self,
        source_prefix: str,
        target_prefix: str,
        start_version: str | None = None,
        end_version: str | None = None,
        staging_location: str | None = None,
        create_file_list: bool = True,
    ) -> RewriteTablePathResult:
        """Stages a copy of the table's metadata with every path under `source_prefix` moved
        under `target_prefix` (Iceberg Java's `rewrite_table_path`, for replication): the
        metadata JSON files of the versions after `start_version` up to `end_version`
        (file names such as `v3.metadata.json`; default: all, up to the current one), their
        manifest lists, manifests and position delete files, written to `staging_location`
        (default `<metadata>/copy-table-staging-<uuid>/`), and a `file-list` of `source,target`
        pairs to copy. Nothing is committed. See `icefloe.maintenance.rewrite_table_path`."""
        from icefloe.maintenance.rewrite_table_path import rewrite_table_path

        return rewrite_table_path(
            self._table,
            source_prefix,
            target_prefix,
            start_version,
            end_version,
            staging_location,
            create_file_list,
        )
