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
        self.arrow_schema = arrow_schema
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
        prepare_worker()  # Spark's commit process (see IcefloeDataSource.source_options)
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
        prepare_worker()
        _pending_write.abort_write(self.opts.load_table(), self.files.write_id)


# Spark's local property naming the micro-batch a task belongs to (MicroBatchExecution).
_BATCH_ID_PROPERTY = "streaming.sql.batchId"

# PySpark 4.1 hands a streaming writer Arrow batches; 4.0 only Rows (turned into Arrow here).
try:
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase

    _ARROW_STREAM = True
except ImportError:  # PySpark 4.0
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriterBase

    _ARROW_STREAM = False


def _rows_to_batches(rows: Iterator[Any], schema: pa.Schema, chunk: int = 65536) -> Iterator[pa.RecordBatch]:
    names = schema.names
    buffer: list[dict[str, Any]] = []
    for row in rows:
        buffer.append(dict(zip(names, row)))
        if len(buffer) >= chunk:
            yield pa.RecordBatch.from_pylist(buffer, schema)
            buffer = []
    if buffer:
        yield pa.RecordBatch.from_pylist(buffer, schema)


class StreamWriter(_StreamWriterBase):
    """`df.writeStream.format("icefloe")`: each micro-batch's files are committed as one
    snapshot recording the query id and batch id (`icefloe._streaming_commit`), so a batch
    Spark replays after a crash is found in the branch's history and not committed twice.

    The query id is the `query-id` option, else the checkpoint location (stable across
    restarts of the query). Each batch's files carry their own write id (this writer's id
    and the batch id), so an aborted batch deletes only its own files."""

    def __init__(self, opts: SourceOptions, schema: Any, overwrite: bool) -> None:
        if overwrite:
            raise ValidationError(
                "a streaming write to an icefloe table appends (outputMode 'append'); for upserts "
                "use foreachBatch(icefloe.spark.batch_writer(table, mode='upsert', ...))"
            )
        self.opts = opts
        query_id = opts.options.get("query-id") or opts.options.get("checkpointlocation")
        if not query_id:
            raise ValidationError("a streaming write needs option 'checkpointLocation' (or 'query-id')")
        self.query_id = query_id
        self.branch = opts.options.get("branch") or None
        self.files = FileWriter(opts.load_table(), schema)

    def batch_write_id(self, batch_id: int) -> str:
        return f"{self.files.write_id}b{int(batch_id):012d}"

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WrittenFiles:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        batch = ctx.getLocalProperty(_BATCH_ID_PROPERTY) if ctx is not None else None
        if batch is None:
            raise ValidationError(f"a streaming write task without Spark's {_BATCH_ID_PROPERTY!r}")
        self.files.write_id = self.batch_write_id(int(batch))
        if not _ARROW_STREAM:
            iterator = _rows_to_batches(iterator, self.files.arrow_schema)
        return self.files.write(iterator)

    def commit(self, messages: list[Any], batchId: int) -> None:
        from icefloe._streaming_commit import commit_batch

        prepare_worker()
        commit_batch(
            self.opts.load_table(),
            self.query_id,
            batchId,
            descriptors_of(messages),
            write_id=self.batch_write_id(batchId),
            branch=self.branch,
            snapshot_properties=self.opts.snapshot_properties(),
        )

    def abort(self, messages: list[Any], batchId: int) -> None:
        prepare_worker()
        _pending_write.abort_write(self.opts.load_table(), self.batch_write_id(batchId))
