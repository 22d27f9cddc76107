"""Upserts through the `icefloe` data source: `option("upsert-enabled", "true")` on
`writeStream.format("icefloe")` (and on a batch `mode("append")` write). Iceberg Flink's
upsert writer in Spark's terms: each task writes, for its rows, equality deletes on the key
columns and the new rows, without reading the table; the driver commits them as one row
delta (per micro-batch, exactly once).

Options: `key-columns` (comma-separated, default the table's identifier fields),
`delete-column` (a boolean column, or a string column where 'D'/'delete'/'-D'/'U-' mark a
deletion of the key: the row's key is deleted and the row is not written).

Rows with the same key: the last in the DataFrame's order wins (partition index, then the
row's place in its partition), as in `icefloe.spark.upsert`. Each task keeps its last row of
a key; a key that several tasks of one write hold is found on the driver from the keys the
tasks send with their files, and the earlier tasks' rows of it are dropped by rewriting their
new files before the commit (their equality deletes cannot do it: a delete never reaches rows
of its own commit). No row beyond the duplicated keys' files is read. A task holds its own
rows in memory to keep the last of each key (as `Table.upsert` holds its input).

Like Flink's upsert sink, the equality deletes are written whatever `write.merge.mode` says
(format version 2 or later). A table with live files of a partition spec that is partitioned
by a column outside the keys is refused: equality deletes cannot reach those rows (rewrite
them to the current spec, or use `foreachBatch(batch_writer(mode="upsert"))`, which falls
back to a MERGE). The key columns and the delete files' specs are those of the table when
the write (or streaming query) started.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import WriterCommitMessage

from icefloe import _native, _pending_write
from icefloe._io import IoConfig
from icefloe._row_delta import RowDeltaWrite
from icefloe.exceptions import ValidationError
from icefloe.spark._worker import prepare_worker

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.spark.datasource import SourceOptions
    from icefloe.table import Table

UPSERT_OPTIONS = ("upsert-enabled", "key-columns", "delete-column")
_DELETE_MARKS = ["D", "DELETE", "-D", "U-"]
_PARTITION = "__icefloe_partition"


@dataclass
class UpsertFiles(WriterCommitMessage):
    """A task's files and its keys (Arrow IPC stream, one row per key it wrote)."""

    partition: int
    data: list[str]
    deletes: list[str]
    keys: bytes


def upsert_enabled(opts: SourceOptions) -> bool:
    """Whether the write is an upsert; ValidationError for the key options without it."""
    if opts.bool_option("upsert-enabled"):
        return True
    for key in UPSERT_OPTIONS[1:]:
        if key in opts.options:
            raise ValidationError(f"option {key!r} needs option('upsert-enabled', 'true')")
    return False


def delete_mask(column: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array:
    """Which rows a delete column marks as deletions (null: not a deletion)."""
    if pa.types.is_boolean(column.type):
        return pc.fill_null(column, False)
    marks = pc.is_in(pc.utf8_upper(pc.cast(column, pa.string())), value_set=pa.array(_DELETE_MARKS))
    return pc.fill_null(marks, False)


class UpsertWriter:
    """The executor and driver sides of an upsert write of the table as it was when the
    write started. Everything is checked here, on the driver, before any task runs."""

    def __init__(self, table: Table, opts: SourceOptions, spark_schema: Any) -> None:
        from pyspark.sql.pandas.types import to_arrow_schema

        from icefloe._row_level import _join_columns, equality_delete_plan

        if table.format_version < 2:
            raise ValidationError(
                f"an upsert writes equality deletes, which need format version 2 or later; {table} is v1"
            )
        keys = opts.options.get("key-columns")
        names = _join_columns(table, [k.strip() for k in keys.split(",")] if keys else None)
        try:
            arrow_schema = to_arrow_schema(spark_schema)
        except TypeError as e:  # a Spark type Arrow cannot carry
            raise ValidationError(f"DataFrame schema cannot be written to Iceberg: {e}") from e
        self.delete_column = opts.options.get("delete-column") or None
        if self.delete_column is not None:
            field = _field(arrow_schema, self.delete_column, "delete-column")
            if not (pa.types.is_boolean(field.type) or pa.types.is_string(field.type)):
                raise ValidationError(
                    f"delete-column {self.delete_column!r} must be a boolean or string column, "
                    f"found {field.type}"
                )
        for n in names:
            _field(arrow_schema, n, "key column")
        self.arrow_schema = arrow_schema
        self.data_columns = [f.name for f in arrow_schema if f.name != self.delete_column]
        _native.check_arrow_schema(
            table.metadata, pa.schema([arrow_schema.field(c) for c in self.data_columns])
        )
        self.ids, self.key_schema, self.specs = equality_delete_plan(table, names)
        if self.specs is None:
            raise ValidationError(
                f"{table} has live files of a partition spec partitioned by a column outside the "
                f"upsert keys {names}: equality deletes cannot reach their rows. Rewrite them to the "
                "current spec (rewrite_data_files(rewrite_all=True)) or upsert through "
                "foreachBatch(icefloe.spark.batch_writer(table, mode='upsert'))"
            )
        self.names = names
        self.metadata_json = table.metadata.to_json()
        self.io_config = IoConfig.current()

    # ---- executor ----
    def write(self, batches: Iterator[pa.RecordBatch], write_id: str) -> UpsertFiles:
        from pyspark import TaskContext

        from icefloe._row_level import _last_per_key

        prepare_worker(self.io_config)
        ctx = TaskContext.get()
        task_id = ctx.taskAttemptId() if ctx is not None else 0
        partition = ctx.partitionId() if ctx is not None else 0
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return UpsertFiles(partition, [], [], b"")
        rows = _last_per_key(pa.Table.from_batches(parts), self.names)
        md = _native.TableMetadata.from_json(self.metadata_json)
        keys = rows.select(self.names).cast(self.key_schema)  # the table's types, as files read back
        deletes = _native.write_equality_deletes(
            md, self.ids, keys.to_reader(), write_id, task_id, spec_ids=self.specs
        )
        if self.delete_column is not None:
            rows = rows.filter(pc.invert(delete_mask(rows.column(self.delete_column))))
        data: list[str] = []
        if rows.num_rows:
            data = _native.write_data_files(md, rows.select(self.data_columns).to_reader(), write_id, task_id)
        return UpsertFiles(partition, list(data), list(deletes), _ipc(keys))

    # ---- driver ----
    def commit(
        self, view: Table, messages: list[Any], write_id: str, props: dict[str, str]
    ) -> Snapshot | None:
        """Commits the tasks' files as one row delta on `view` (after dropping the rows of
        keys a later task also wrote); on failure deletes every file of the write."""
        files = [m for m in messages if isinstance(m, UpsertFiles)]
        write = RowDeltaWrite(view, write_id, view.metadata.current_snapshot_id, snapshot_properties=props)
        write.delete_files = [d for m in files for d in m.deletes]
        write.data_files = [d for m in files for d in m.data]
        try:
            write.data_files = self._without_overwritten_rows(view, files, write_id)
        except BaseException:
            write.abort()
            raise
        return write.commit()

    def abort(self, table: Table, messages: list[Any], write_id: str) -> None:
        paths = [d for m in messages if isinstance(m, UpsertFiles) for d in (*m.data, *m.deletes)]
        _native.delete_files(_pending_write.descriptor_paths(paths))
        _pending_write.abort_write(table, write_id)

    def _without_overwritten_rows(self, table: Table, files: list[UpsertFiles], write_id: str) -> list[str]:
        """The data files to commit: each task's, except that a task's files holding a key a
        later task (higher partition index) also wrote are rewritten without those rows."""
        drop = overwritten_keys(files, self.names)
        out: list[str] = []
        for m in sorted(files, key=lambda m: m.partition):
            gone = drop.get(m.partition)
            if gone is None:
                out.extend(m.data)
                continue
            for descriptor in m.data:
                out.extend(self._rewrite_without(table, descriptor, gone, f"{write_id}r", m.partition))
        return out

    def _rewrite_without(
        self, table: Table, descriptor: str, gone: pa.Table, write_id: str, task_id: int
    ) -> list[str]:
        from icefloe._row_level import _read_schema_json

        d = json.loads(descriptor)
        task = json.dumps({"file": d, "start": 0, "length": int(d["file_size_in_bytes"])})
        rows = _native.read_task(task, _read_schema_json(table)).read_all()
        keep = pc.invert(key_in(rows.select(self.names), gone))
        if pc.all(keep).as_py():
            return [descriptor]
        kept = rows.filter(keep).select([f.name for f in table.schema().fields])
        md = _native.TableMetadata.from_json(self.metadata_json)
        new = list(_native.write_data_files(md, kept.to_reader(), write_id, task_id)) if kept.num_rows else []
        _native.delete_files([str(d["file_path"])])
        return new


def overwritten_keys(files: list[UpsertFiles], names: list[str]) -> dict[int, pa.Table]:
    """Per partition index, the keys it wrote that a task of a higher index wrote too."""
    parts = []
    for m in files:
        if m.keys:
            keys = pa.ipc.open_stream(m.keys).read_all()
            parts.append(keys.append_column(_PARTITION, pa.array([m.partition] * keys.num_rows, pa.int64())))
    if len(parts) < 2:
        return {}
    every = pa.concat_tables(parts)
    counts = every.group_by(names, use_threads=False).aggregate([(_PARTITION, "count"), (_PARTITION, "list")])
    shared = counts.filter(pc.greater(counts.column(f"{_PARTITION}_count"), 1))
    if shared.num_rows == 0:
        return {}
    rows: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for key in shared.to_pylist():
        holders = key[f"{_PARTITION}_list"]
        last = max(holders)
        for p in holders:
            if p != last:
                rows[p].append({n: key[n] for n in names})
    schema = every.schema.remove(every.schema.get_field_index(_PARTITION))
    return {p: pa.Table.from_pylist(r, schema) for p, r in rows.items()}


def key_in(keys: pa.Table, values: pa.Table) -> pa.ChunkedArray | pa.Array:
    """Which rows of `keys` are among `values` (same columns; null equals null, as equality
    deletes compare)."""
    if keys.num_columns == 1:
        return pc.is_in(keys.column(0), value_set=values.column(0).combine_chunks(), skip_nulls=False)
    wanted = {tuple(r.values()) for r in values.to_pylist()}
    return pa.array([tuple(r.values()) in wanted for r in keys.to_pylist()], pa.bool_())


def _field(schema: pa.Schema, name: str, what: str) -> pa.Field:
    i = schema.get_field_index(name)
    if i < 0:
        raise ValidationError(f"{what} {name!r} is not a column of the DataFrame ({schema.names})")
    return schema.field(i)


def _ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return bytes(sink.getvalue().to_pybytes())
