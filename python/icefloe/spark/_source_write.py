"""Batch writes of the `icefloe` data source: executors write Parquet in Rust and send the
files' descriptors as commit messages; the driver commits one snapshot from them; an abort
deletes every file carrying the write's id (also those of task attempts that sent nothing).

`mode("append")` appends. `mode("overwrite")` replaces every row, or with
`option("overwrite-mode", "dynamic")` the partitions the new rows fall in, or with
`option("overwrite-filter", "<filter>")` (alias `replaceWhere`) the rows matching it.
`snapshot-property.<key>` options become properties of the new snapshot.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from icefloe import _native, _pending_write
from icefloe._io import IoConfig
from icefloe.exceptions import ValidationError
from icefloe.expressions import AlwaysTrue, BooleanExpression, parse_filter
from icefloe.spark._worker import prepare_worker

if TYPE_CHECKING:
    from icefloe.spark.datasource import SourceOptions
    from icefloe.table import Table


@dataclass
class WrittenFiles(WriterCommitMessage):
    """A task's written data files (descriptors, JSON)."""

    descriptors: list[str]


class FileWriter:
    """The executor side of a write: the table's metadata when the write started, the
    write's id and the storage settings."""

    def __init__(self, table: Table, spark_schema: Any) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        try:
            arrow_schema = to_arrow_schema(spark_schema)
        except TypeError as e:  # a Spark type Arrow cannot carry
            raise ValidationError(f"DataFrame schema cannot be written to Iceberg: {e}") from e
        _native.check_arrow_schema(table.metadata, arrow_schema)  # fail before any task runs
        self.metadata_json = table.metadata.to_json()
        self.write_id = _pending_write.new_write_id()
        self.io_config = IoConfig.current()

    def write(self, batches: Iterator[pa.RecordBatch]) -> WrittenFiles:
        from pyspark import TaskContext

        prepare_worker(self.io_config)
        first = next(batches, None)
        if first is None:
            return WrittenFiles([])
        ctx = TaskContext.get()
        task_id = ctx.taskAttemptId() if ctx is not None else 0

        def chained() -> Iterator[pa.RecordBatch]:
            yield first
            yield from batches

        reader = pa.RecordBatchReader.from_batches(first.schema, chained())
        md = _native.TableMetadata.from_json(self.metadata_json)
        return WrittenFiles(list(_native.write_data_files(md, reader, self.write_id, task_id)))


def descriptors_of(messages: list[Any]) -> list[str]:
    return [d for m in messages if isinstance(m, WrittenFiles) for d in m.descriptors]


def overwrite_filter(opts: SourceOptions) -> BooleanExpression | None:
    """What `mode("overwrite")` replaces: None for dynamic partition overwrite."""
    mode = opts.options.get("overwrite-mode", "").lower()
    text = opts.options.get("overwrite-filter") or opts.options.get("replacewhere")
    if mode not in ("", "static", "dynamic"):
        raise ValidationError(f"option 'overwrite-mode' must be 'static' or 'dynamic', found {mode!r}")
    if mode == "dynamic":
        if text:
            raise ValidationError("option 'overwrite-mode'='dynamic' cannot be combined with a filter")
        return None
    return parse_filter(text) if text else AlwaysTrue()


class BatchWriter(DataSourceArrowWriter):
    def __init__(self, opts: SourceOptions, schema: Any, overwrite: bool) -> None:
        self.opts = opts
        self.overwrite = overwrite
        for key in ("overwrite-mode", "overwrite-filter", "replacewhere"):
            if key in opts.options and not overwrite:
                raise ValidationError(f"option {key!r} needs mode('overwrite')")
        # Checked here, on the driver, before any task runs.
        self.filter = overwrite_filter(opts) if overwrite else None
        table = opts.load_table()
        self.start_snapshot_id = table.metadata.current_snapshot_id
        self.files = FileWriter(table, schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        return self.files.write(iterator)

    def commit(self, messages: list[Any]) -> None:
        table = self.opts.load_table()
        descriptors = descriptors_of(messages)
        props = self.opts.snapshot_properties()
        write_id = self.files.write_id
        if not self.overwrite:
            _pending_write.commit_append(table, descriptors, props, write_id=write_id)
            return
        _pending_write.commit_overwrite(
            table, descriptors, self.filter, write_id, self.start_snapshot_id, props
        )

    def abort(self, messages: list[Any]) -> None:
        _pending_write.abort_write(self.opts.load_table(), self.files.write_id)
