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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import WriterCommitMessage

from icefloe import _native
from icefloe._io import IoConfig
from icefloe._task_ids import task_attempt_id
from icefloe.exceptions import ValidationError
from icefloe.spark._arrow import ipc_bytes
from icefloe.spark._store_assign import InputShape
from icefloe.spark._worker import prepare_worker
from icefloe.write import pending as _pending_write
from icefloe.write.row_delta import RowDeltaWrite

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.spark.datasource import SourceOptions
    from icefloe.table import Table

UPSERT_OPTIONS = ("upsert-enabled", "key-columns", "delete-column")
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
    from icefloe.write.row_level import DELETE_MARKS

    marks = pc.is_in(pc.utf8_upper(pc.cast(column, pa.string())), value_set=pa.array(DELETE_MARKS))
    return pc.fill_null(marks, False)


class UpsertWriter:
    """The executor and driver sides of an upsert write of the table as it was when the
    write started. Everything is checked here, on the driver, before any task runs."""

    def __init__(self, table: Table, opts: SourceOptions, spark_schema: Any) -> None:
        from icefloe.write.row_level import equality_delete_plan, join_columns

        if table.format_version < 2:
            raise ValidationError(
                f"an upsert writes equality deletes, which need format version 2 or later; {table} is v1"
            )
        keys = opts.options.get("key-columns")
        names = join_columns(table, [k.strip() for k in keys.split(",")] if keys else None)
        # As the data source's appends: the table's spelling of names, Spark's numeric widenings.
        self.shape = InputShape(spark_schema, table)
        self.input_schema = self.shape.input_schema
        arrow_schema = self.shape.schema
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
        # The delete column is not data, unless the table has a column of that name.
        table_columns = {f.name for f in table.schema().fields}
        self.data_columns = [
            f.name for f in arrow_schema if f.name != self.delete_column or f.name in table_columns
        ]
        _native.check_arrow_schema(
            table.metadata, pa.schema([arrow_schema.field(c) for c in self.data_columns])
        )
        ids, key_schema, specs = equality_delete_plan(table, names)
        if specs is None or key_schema is None:
            raise ValidationError(
                f"{table} is (or has live files) partitioned by a column outside the upsert keys "
                f"{names}: equality deletes cannot reach those rows. Upsert by keys that include the "
                "partition source columns, rewrite older files to the current spec "
                "(rewrite_data_files(rewrite_all=True)), or upsert through "
                "foreachBatch(icefloe.spark.batch_writer(table, mode='upsert')), which runs a MERGE"
            )
        self.ids, self.key_schema, self.specs = ids, key_schema, specs
        self.names = names
        self.metadata_json = table.metadata.to_json()
        self.io_config = IoConfig.current()

    # ---- executor ----
    def write(self, batches: Iterator[pa.RecordBatch], write_id: str) -> UpsertFiles:
        from pyspark import TaskContext

        from icefloe.write.row_level import last_per_key

        prepare_worker(self.io_config)
        ctx = TaskContext.get()
        task_id = task_attempt_id()
        partition = ctx.partitionId() if ctx is not None else 0
        parts = [self.shape(b) for b in batches if b.num_rows]
        if not parts:
            return UpsertFiles(partition, [], [], b"")
        rows = last_per_key(pa.Table.from_batches(parts), self.names)
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
        return UpsertFiles(partition, list(data), list(deletes), ipc_bytes(keys))

    # ---- driver ----
    def commit(
        self, view: Table, messages: list[Any], write_id: str, props: dict[str, str]
    ) -> Snapshot | None:
        """Commits the tasks' files as one row delta on `view` (after dropping the rows of
        keys a later task also wrote); on failure deletes every file of the write."""
        files = [m for m in messages if isinstance(m, UpsertFiles)]
        write = RowDeltaWrite(view, write_id, view.metadata.current_snapshot_id, snapshot_properties=props)
        write.delete_files = [d for m in files for d in m.deletes]
        write.data_files = [d for m in files for d in m.data]  # what abort() deletes until replaced
        with write.aborting():
            write.data_files = self._without_overwritten_rows(view, files, write_id)
        return write.commit()

    @staticmethod
    def written(messages: list[Any]) -> list[str]:
        """The descriptors of the files the tasks' messages name (data and delete files)."""
        return [d for m in messages if isinstance(m, UpsertFiles) for d in (*m.data, *m.deletes)]

    def abort(self, table: Table, messages: list[Any], write_id: str) -> None:
        _pending_write.discard(table, write_id, self.written(messages))

    def _without_overwritten_rows(self, table: Table, files: list[UpsertFiles], write_id: str) -> list[str]:
        """The data files to commit: each task's, except that a task's files holding a key a
        later task (higher partition index) also wrote are rewritten without those rows."""
        drop = overwritten_keys(files, self.names)
        if not drop:
            return [d for m in files for d in m.data]
        fields = json.loads(table.schema().to_json())
        full_json = json.dumps(fields)
        fields["fields"] = [f for f in fields["fields"] if f["name"] in self.names]
        keys_json = json.dumps(fields)
        out: list[str] = []
        for m in files:
            gone = drop.get(m.partition)
            for d in m.data:
                if gone is None:
                    out.append(d)
                else:
                    out.extend(self._rewrite_without(d, gone, keys_json, full_json, write_id, m.partition))
        return out

    def _rewrite_without(
        self, descriptor: str, gone: pa.Table, keys_json: str, full_json: str, write_id: str, task_id: int
    ) -> list[str]:
        """The file of `descriptor` without the rows whose keys are in `gone`: itself when it
        holds none (only its key columns read), else the rest rewritten (`<write_id>r`, so
        an abort finds them) and the file deleted."""
        d = json.loads(descriptor)
        task = json.dumps({"file": d, "start": 0, "length": int(d["file_size_in_bytes"])})
        keys = _native.read_task(task, keys_json).read_all().select(self.names)
        keep = pc.invert(key_in(keys, gone))
        if pc.all(keep).as_py():
            return [descriptor]
        kept = _native.read_task(task, full_json).read_all().filter(keep)  # same rows, same order
        md = _native.TableMetadata.from_json(self.metadata_json)
        new = []
        if kept.num_rows:
            new = list(_native.write_data_files(md, kept.to_reader(), f"{write_id}r", task_id))
        _native.delete_files([str(d["file_path"])])
        return new


def overwritten_keys(files: list[UpsertFiles], names: list[str]) -> dict[int, pa.Table]:
    """Per partition index, the keys it wrote that a task of a higher index wrote too."""
    parts = [(m.partition, pa.ipc.open_stream(m.keys).read_all()) for m in files if m.keys]
    if len(parts) < 2:
        return {}
    every = pa.concat_tables([k for _, k in parts])
    holders = np.repeat([p for p, _ in parts], [k.num_rows for _, k in parts]).astype(np.int64)
    (codes,) = key_codes(every.select(names))
    by_key = pa.table({"code": codes, "p": holders}).group_by("code", use_threads=False)
    last = by_key.aggregate([("p", "max")])
    last_by_code = np.zeros(len(codes), np.int64)
    last_by_code[last.column("code").to_numpy()] = last.column("p_max").to_numpy()
    earlier = holders < last_by_code[codes.to_numpy()]
    return {
        int(p): every.filter(pa.array(earlier & (holders == p))).select(names)
        for p in np.unique(holders[earlier])
    }


def key_codes(*tables: pa.Table) -> list[pa.Array]:
    """An int64 code per row of each table (same key columns), equal exactly when the rows'
    keys are equal, null equal to null (as equality deletes compare): each column
    dictionary-encoded over all tables, the codes combined column by column and re-encoded
    so they stay below the row count."""
    combined: pa.Array | None = None
    for name in tables[0].column_names:
        column = pa.chunked_array(
            [c for t in tables for c in t.column(name).chunks], tables[0].schema.field(name).type
        ).combine_chunks()
        codes = pc.add(pc.fill_null(pc.dictionary_encode(column).indices, -1).cast(pa.int64()), 1)
        if combined is not None:
            width = (pc.max(codes).as_py() or 0) + 1
            codes = pc.add(pc.multiply(combined, width), codes)
        combined = pc.dictionary_encode(codes).indices.cast(pa.int64())  # 0 .. distinct keys - 1
    assert combined is not None  # key tables have at least one column
    out, start = [], 0
    for t in tables:
        out.append(combined.slice(start, t.num_rows))
        start += t.num_rows
    return out


def key_in(keys: pa.Table, values: pa.Table) -> pa.Array:
    """Which rows of `keys` are among `values` (same columns; null equals null)."""
    mine, theirs = key_codes(keys, values)
    return pc.is_in(mine, value_set=theirs)


def _field(schema: pa.Schema, name: str, what: str) -> pa.Field:
    i = schema.get_field_index(name)
    if i < 0:
        raise ValidationError(f"{what} {name!r} is not a column of the DataFrame ({schema.names})")
    return schema.field(i)
