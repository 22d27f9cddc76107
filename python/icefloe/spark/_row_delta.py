"""Executor halves of row-level writes on Spark, from a DataFrame of (`_file`, `_pos`) rows,
in Rust inside mapInArrow, one Spark task per group of data files: position-delete files
(merge-on-read; the driver gets their descriptors and the earlier file-scoped delete files
merged into them, which the commit removes), or the files rewritten without those rows
(copy-on-write); and, for a copy-on-write removal by filter, the files the filter may match
read and rewritten without its rows (`filter_rewriter`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native
from icefloe._io import IoConfig
from icefloe._task_ids import task_attempt_id
from icefloe.spark._session import default_parallelism
from icefloe.spark._worker import prepare_worker
from icefloe.spark.write import chain_batches, executor_error
from icefloe.write import lineage as _lineage
from icefloe.write.row_delta import removal_key

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.table import Table
    from icefloe.write.overwrite import PartialRewriter, RowMatch

OUT_SCHEMA = "kind string, descriptor string"


def write_position_deletes_on_executors(
    positions: DataFrame, md: _native.TableMetadata, tasks_by_path: dict[str, str], write_id: str
) -> tuple[list[str], list[str], list[str]]:
    """Writes the rows of `positions` (columns `_file`, `_pos`) as position-delete files.
    `tasks_by_path` maps each data file that may appear to its planned task (JSON: spec,
    partition, the deletes already applying). Returns (delete file descriptors, paths of
    replaced delete files, paths of the data files the deletes reference)."""
    metadata_json = md.to_json()
    grouped = positions.select("_file", "_pos").repartition("_file").sortWithinPartitions("_file", "_pos")

    io_config = IoConfig.current()  # storage settings, for the executors

    def delete_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        task_id = task_attempt_id()
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        rows = pa.Table.from_batches(parts).rename_columns(["file_path", "pos"])
        paths = set(rows.column("file_path").unique().to_pylist())
        tasks = [tasks_by_path[p] for p in paths if p in tasks_by_path]
        meta = native.TableMetadata.from_json(metadata_json)
        files, _n, replaced = native.write_position_deletes(meta, tasks, rows.to_reader(), write_id, task_id)
        yield delete_files_batch(files, replaced, sorted(paths))

    return collect_delete_files(grouped.mapInArrow(delete_task, OUT_SCHEMA))


def delete_files_batch(
    files: list[str], replaced: list[str], referenced: Sequence[str] = ()
) -> pa.RecordBatch:
    """What a delete task returns: its delete files, the earlier ones they replace and the
    data files its deletes reference."""
    kinds = ["delete"] * len(files) + ["replaced"] * len(replaced) + ["referenced"] * len(referenced)
    values = [*files, *replaced, *referenced]
    return pa.RecordBatch.from_pydict(
        {"kind": pa.array(kinds, pa.string()), "descriptor": pa.array(values, pa.string())}
    )


def write_rows(metadata_json: str, batches: Iterable[pa.RecordBatch], write_id: str) -> list[str]:
    """In a Spark task: writes `batches` (the table's columns) as the table's data files,
    named by the task attempt; their descriptors, none when there are no rows."""
    it = iter(batches)
    first = next(it, None)
    if first is None:
        return []
    reader = pa.RecordBatchReader.from_batches(first.schema, chain_batches(first, it))
    md = _native.TableMetadata.from_json(metadata_json)
    return list(_native.write_data_files(md, reader, write_id, task_attempt_id()))


def rewrite_batch(descriptors: list[str], rewritten: Sequence[str]) -> pa.RecordBatch:
    """What a copy-on-write task returns: its new data files and the paths it rewrote."""
    kinds = ["data"] * len(descriptors) + ["rewritten"] * len(rewritten)
    values = [*descriptors, *rewritten]
    return pa.RecordBatch.from_pydict(
        {"kind": pa.array(kinds, pa.string()), "descriptor": pa.array(values, pa.string())}
    )


def collect_delete_files(df: DataFrame) -> tuple[list[str], list[str], list[str]]:
    """Runs the delete tasks of `df` (rows of `delete_files_batch`): (delete file descriptors,
    paths of replaced delete files, paths of referenced data files); an executor's icefloe
    error is re-raised as its class."""
    try:
        out = df.collect()
    except Exception as e:
        raise executor_error(e) from e
    files = [r["descriptor"] for r in out if r["kind"] == "delete"]
    replaced = sorted({removal_key(r["descriptor"]) for r in out if r["kind"] == "replaced"})
    referenced = sorted({r["descriptor"] for r in out if r["kind"] == "referenced"})
    return files, replaced, referenced


def planned_tasks_by_path(table_scan_tasks: Iterable[str]) -> dict[str, str]:
    """Planned task JSONs keyed by their data file's path."""
    return {json.loads(t)["file"]["file_path"]: t for t in table_scan_tasks}


def rewrite_files_on_executors(
    positions: DataFrame, table: Table, tasks_by_path: dict[str, str], write_id: str
) -> tuple[list[str], list[str]]:
    """Copy-on-write on the executors: each data file named in `positions` (columns `_file`,
    `_pos`: the rows to drop) is read in Rust with the deletes that already apply to it, its
    other rows are written as new data files (Rust, the table's partitioned rolling writer),
    and none of them becomes a Spark row. Returns (new data file descriptors, the rewritten
    files' paths). On failure every file carrying `write_id` is deleted."""
    from icefloe.write import pending as _pending_write

    # Copied rows keep their lineage on v3 tables (see icefloe.write.lineage).
    columns = [f.name for f in table.schema().fields] + list(_lineage.copied_columns(table))
    read_schema_json = table.scan(selected_fields=(*columns, "_pos")).read_schema().to_json()
    name_mapping = table.properties.get("schema.name-mapping.default")
    metadata_json = table.metadata.to_json()
    grouped = positions.select("_file", "_pos").repartition("_file")
    io_config = IoConfig.current()  # storage settings, for the executors

    def rewrite_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        import pyarrow.compute as pc

        from icefloe import _native as native

        prepare_worker(io_config)
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        rows = pa.Table.from_batches(parts)
        paths = sorted(set(rows.column("_file").unique().to_pylist()))

        def kept() -> Iterable[pa.RecordBatch]:
            for path in paths:
                drop = pc.filter(rows.column("_pos"), pc.equal(rows.column("_file"), path))
                for b in native.read_task(tasks_by_path[path], read_schema_json, name_mapping=name_mapping):
                    keep = pc.invert(pc.is_in(b.column("_pos"), value_set=drop))
                    out = b.filter(keep).select(columns)
                    if out.num_rows:
                        yield out

        yield rewrite_batch(write_rows(metadata_json, kept(), write_id), paths)

    with _pending_write.abort_on_failure(table, write_id):
        try:
            out = grouped.mapInArrow(rewrite_task, OUT_SCHEMA).collect()
        except Exception as e:
            raise executor_error(e) from e
    files = [r["descriptor"] for r in out if r["kind"] == "data"]
    rewritten = sorted({r["descriptor"] for r in out if r["kind"] == "rewritten"})
    return files, rewritten


def filter_rewriter(spark: Any) -> PartialRewriter:
    """The `PartialRewriter` of copy-on-write deletes, updates and overwrites by filter on
    Spark: the files the filter may match are read, masked and rewritten in Spark tasks
    (chunks as `icefloe.write.row_level.chunk_tasks` makes them: a partition's files together),
    one `write_data_files` per task, so the driver never holds their rows."""

    def rewrite(
        md: _native.TableMetadata, partial: list[str], match: RowMatch, write_id: str
    ) -> tuple[list[str], list[str]]:
        from icefloe.write.row_level import chunk_tasks

        chunks = chunk_tasks(partial, default_parallelism(spark))
        metadata_json = md.to_json()
        io_config = IoConfig.current()  # storage settings, for the executors

        def rewrite_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
            from icefloe.write.overwrite import kept_rows

            prepare_worker(io_config)
            planned = [t for b in batches for i in b.column(0).to_pylist() for t in chunks[i]]
            removed: list[str] = []

            def kept() -> Iterable[pa.RecordBatch]:
                for task_json in planned:
                    found = kept_rows(task_json, match)
                    if found is None:
                        continue
                    removed.append(found[0])
                    if found[1] is not None:
                        yield from found[1]

            descriptors = write_rows(metadata_json, kept(), write_id)
            yield rewrite_batch(descriptors, removed)  # `removed` is complete once written

        # Partition i of spark.range(n) runs chunk i: the chunks ride in the closure.
        n = len(chunks)
        try:
            out = spark.range(0, n, 1, n).mapInArrow(rewrite_task, OUT_SCHEMA).collect()
        except Exception as e:
            raise executor_error(e) from e
        files = [r["descriptor"] for r in out if r["kind"] == "data"]
        return sorted({r["descriptor"] for r in out if r["kind"] == "rewritten"}), files

    return rewrite
