"""Executor halves of row-level writes on Spark: position deletes from a DataFrame of
(`_file`, `_pos`) rows, written in Rust inside mapInArrow, one Spark task per group of data
files; the driver gets the delete files' descriptors (and the earlier file-scoped delete
files merged into them, which the commit removes)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa

from icefloe import _native
from icefloe.spark._worker import prepare_worker
from icefloe.spark.write import _executor_error

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_OUT_SCHEMA = "kind string, descriptor string"


def write_position_deletes_on_executors(
    positions: DataFrame, md: _native.TableMetadata, tasks_by_path: dict[str, str], write_id: str
) -> tuple[list[str], list[str]]:
    """Writes the rows of `positions` (columns `_file`, `_pos`) as position-delete files.
    `tasks_by_path` maps each data file that may appear to its planned task (JSON: spec,
    partition, the deletes already applying). Returns (delete file descriptors, paths of
    replaced delete files)."""
    metadata_json = md.to_json()
    grouped = positions.select("_file", "_pos").repartition("_file").sortWithinPartitions("_file", "_pos")

    def delete_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from pyspark import TaskContext

        from icefloe import _native as native

        prepare_worker()
        ctx = TaskContext.get()
        task_id = ctx.taskAttemptId() if ctx is not None else 0
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        rows = pa.Table.from_batches(parts).rename_columns(["file_path", "pos"])
        paths = set(rows.column("file_path").unique().to_pylist())
        tasks = [tasks_by_path[p] for p in paths if p in tasks_by_path]
        meta = native.TableMetadata.from_json(metadata_json)
        files, _n, replaced = native.write_position_deletes(meta, tasks, rows.to_reader(), write_id, task_id)
        kinds = ["delete"] * len(files) + ["replaced"] * len(replaced)
        yield pa.RecordBatch.from_pydict(
            {"kind": pa.array(kinds, pa.string()), "descriptor": pa.array(files + replaced, pa.string())}
        )

    try:
        out = grouped.mapInArrow(delete_task, _OUT_SCHEMA).collect()
    except Exception as e:
        raise _executor_error(e) from e
    files = [r["descriptor"] for r in out if r["kind"] == "delete"]
    replaced = sorted({json.loads(r["descriptor"])["file_path"] for r in out if r["kind"] == "replaced"})
    return files, replaced


def planned_tasks_by_path(table_scan_tasks: Iterable[str]) -> dict[str, str]:
    """Planned task JSONs keyed by their data file's path."""
    return {json.loads(t)["file"]["file_path"]: t for t in table_scan_tasks}
