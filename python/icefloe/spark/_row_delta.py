"""Executor halves of row-level writes on Spark: position deletes from a DataFrame of
(`_file`, `_pos`) rows, written in Rust inside mapInArrow, one Spark task per group of data
files; the driver gets the delete files' descriptors (and the earlier file-scoped delete
files merged into them, which the commit removes)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from icefloe import _native
from icefloe._io import IoConfig
from icefloe.spark._worker import prepare_worker
from icefloe.spark.write import _executor_error

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

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


def collect_delete_files(df: DataFrame) -> tuple[list[str], list[str], list[str]]:
    """Runs the delete tasks of `df` (rows of `delete_files_batch`): (delete file descriptors,
    paths of replaced delete files, paths of referenced data files); an executor's icefloe
    error is re-raised as its class."""
    try:
        out = df.collect()
    except Exception as e:
        raise _executor_error(e) from e
    files = [r["descriptor"] for r in out if r["kind"] == "delete"]
    replaced = sorted({json.loads(r["descriptor"])["file_path"] for r in out if r["kind"] == "replaced"})
    referenced = sorted({r["descriptor"] for r in out if r["kind"] == "referenced"})
    return files, replaced, referenced


def task_attempt_id() -> int:
    """The running Spark task attempt's id (names the files it writes); 0 outside a task."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.taskAttemptId() if ctx is not None else 0


def planned_tasks_by_path(table_scan_tasks: Iterable[str]) -> dict[str, str]:
    """Planned task JSONs keyed by their data file's path."""
    return {json.loads(t)["file"]["file_path"]: t for t in table_scan_tasks}
