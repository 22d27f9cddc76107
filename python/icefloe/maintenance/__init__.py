"""Table maintenance (`Table.maintenance`): compaction and the other housekeeping
operations, each in its own module; `Maintenance` is the thin entry point."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icefloe.maintenance.rewrite_data_files import RewriteDataFilesResult

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.expressions import BooleanExpression
    from icefloe.table import Table

__all__ = ["Maintenance", "RewriteDataFilesResult"]


class Maintenance:
    """Maintenance operations on one table (`table.maintenance`)."""

    def __init__(self, table: Table) -> None:
        self._table = table

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
        `max_file_group_size_bytes`, `rewrite_all`, `remove_dangling_deletes`,
        `use_starting_sequence_number`, `partial_progress_max_commits`,
        `snapshot_properties`, `case_sensitive`."""
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
