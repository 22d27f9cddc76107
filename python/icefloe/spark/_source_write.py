"""Batch writes of the `icefloe` data source: executors write Parquet in Rust and send the
files' descriptors as commit messages; the driver commits one snapshot from them; an abort
deletes every file carrying the write's id (also those of task attempts that sent nothing).

`mode("append")` appends. `mode("overwrite")` replaces every row, or with
`option("overwrite-mode", "dynamic")` the partitions the new rows fall in, or with
`option("overwrite-filter", "<filter>")` (alias `replaceWhere`) the rows matching it.
`snapshot-property.<key>` options become properties of the new snapshot.
`option("upsert-enabled", "true")` (with `mode("append")`, and on streams) upserts by key
instead of appending (`icefloe.spark._source_upsert`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage

from icefloe import _native
from icefloe._io import IoConfig
from icefloe._task_ids import task_attempt_id
from icefloe.exceptions import ValidationError
from icefloe.expressions import AlwaysTrue, BooleanExpression, parse_filter
from icefloe.spark._source_upsert import UpsertWriter, upsert_enabled
from icefloe.spark._store_assign import InputShape
from icefloe.spark._worker import prepare_worker
from icefloe.write import pending as _pending_write

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
        # Spark renames and casts nothing for a Python data source: done here, as Spark's
        # name resolution and ANSI store assignment do it for Java's writes.
        self.shape = InputShape(spark_schema, table)
        self.input_schema = self.shape.input_schema  # PySpark 4.0's stream rows become these
        arrow_schema = self.shape.schema
        _native.check_arrow_schema(table.metadata, arrow_schema)  # fail before any task runs
        self.arrow_schema = arrow_schema
        self.metadata_json = table.metadata.to_json()
        self.write_id = _pending_write.new_write_id()
        self.io_config = IoConfig.current()

    def write(self, batches: Iterator[pa.RecordBatch]) -> WrittenFiles:
        prepare_worker(self.io_config)
        first = next(batches, None)
        if first is None:
            return WrittenFiles([])
        task_id = task_attempt_id()

        head = self.shape(first)

        def chained() -> Iterator[pa.RecordBatch]:
            yield head
            for b in batches:
                yield self.shape(b)

        reader = pa.RecordBatchReader.from_batches(head.schema, chained())
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
        # option("branch"): the write commits to that branch (created by the first write,
        # as Java's), and an overwrite replaces the branch's rows.
        self.branch = opts.options.get("branch") or None
        table = self.target()
        self.start_snapshot_id = table.metadata.current_snapshot_id
        self.upsert: UpsertWriter | None = None
        if upsert_enabled(opts):
            if overwrite:
                raise ValidationError("option 'upsert-enabled' needs mode('append')")
            self.upsert = UpsertWriter(table, opts, schema)
            self.write_id = _pending_write.new_write_id()
        else:
            self.files = FileWriter(table, schema)
            self.write_id = self.files.write_id

    def target(self) -> Table:
        """The table as this write commits to it: a view of its branch, if one is named."""
        from icefloe.write.branch import on_branch

        return on_branch(self.opts.load_table(), self.branch)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        if self.upsert is not None:
            return self.upsert.write(iterator, self.write_id)
        return self.files.write(iterator)

    def commit(self, messages: list[Any]) -> None:
        prepare_worker()  # Spark's commit process (see IcefloeDataSource.source_options)
        table = self.target()
        if self.upsert is not None:
            self.upsert.commit(table, messages, self.write_id, self.opts.snapshot_properties())
            return
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
        table = self.opts.load_table()
        if self.upsert is not None:
            self.upsert.abort(table, messages, self.write_id)
            return
        _pending_write.abort_write(table, self.write_id)


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
    snapshot recording the query id and batch id (`icefloe.write.streaming_commit`), so a batch
    Spark replays after a crash is found in the branch's history and not committed twice.

    The query id is the `query-id` option, else the checkpoint location (stable across
    restarts of the query). Each batch's files carry their own write id (this writer's id
    and the batch id), so an aborted batch deletes only its own files."""

    def __init__(self, opts: SourceOptions, schema: Any, overwrite: bool) -> None:
        from icefloe.write.branch import on_branch

        if overwrite:
            raise ValidationError(
                "a streaming write to an icefloe table appends (outputMode 'append') or upserts "
                "(option 'upsert-enabled'); it cannot replace the table's rows"
            )
        self.opts = opts
        query_id = opts.options.get("query-id") or opts.options.get("checkpointlocation")
        if not query_id:
            raise ValidationError("a streaming write needs option 'checkpointLocation' (or 'query-id')")
        self.query_id = query_id
        self.branch = opts.options.get("branch") or None
        table = on_branch(opts.load_table(), self.branch)
        self.upsert = UpsertWriter(table, opts, schema) if upsert_enabled(opts) else None
        self.files = FileWriter(table, schema) if self.upsert is None else None
        self.write_id = _pending_write.new_write_id()

    def batch_write_id(self, batch_id: int) -> str:
        return f"{self.write_id}b{int(batch_id):012d}"

    def write(self, iterator: Iterator[pa.RecordBatch]) -> WriterCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        batch = ctx.getLocalProperty(_BATCH_ID_PROPERTY) if ctx is not None else None
        if batch is None:
            raise ValidationError(f"a streaming write task without Spark's {_BATCH_ID_PROPERTY!r}")
        write_id = self.batch_write_id(int(batch))
        if self.upsert is not None:
            if not _ARROW_STREAM:
                iterator = _rows_to_batches(iterator, self.upsert.input_schema)
            return self.upsert.write(iterator, write_id)
        assert self.files is not None
        self.files.write_id = write_id
        if not _ARROW_STREAM:
            iterator = _rows_to_batches(iterator, self.files.input_schema)
        return self.files.write(iterator)

    def commit(self, messages: list[Any], batchId: int) -> None:
        from icefloe.write.streaming_commit import commit_batch, commit_or_skip

        prepare_worker()
        table = self.opts.load_table()
        write_id = self.batch_write_id(batchId)
        props = self.opts.snapshot_properties()
        upsert = self.upsert
        if upsert is None:
            commit_batch(
                table, self.query_id, batchId, descriptors_of(messages), write_id, self.branch, props
            )
            return

        def write(view: Table, batch_props: dict[str, str]) -> Any:
            return upsert.commit(view, messages, write_id, batch_props)

        # A failed commit or a replay deletes the batch's files; an unknown outcome or an
        # interrupt does not: the swap may have happened.
        files = upsert.written(messages)
        commit_or_skip(table, self.query_id, batchId, write, files, write_id, self.branch, props)

    def abort(self, messages: list[Any], batchId: int) -> None:
        prepare_worker()
        table = self.opts.load_table()
        if self.upsert is not None:
            self.upsert.abort(table, messages, self.batch_write_id(batchId))
            return
        _pending_write.abort_write(table, self.batch_write_id(batchId))
