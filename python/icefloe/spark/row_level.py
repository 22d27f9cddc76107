"""icefloe.spark.delete: row-level deletes with the reading and writing on the executors.

The driver plans the files the condition may match (Rust planner, partition and metrics
pruning); each Spark task reads its files' matching row positions through the scan reader
and writes the position-delete files (Rust, inside mapInArrow); the driver commits one row
delta with Java's validations (`icefloe._row_delta`). Copy-on-write tables
(`write.delete.mode`, the default) are deleted as `Table.delete` does, the rewrite running on
the driver.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native
from icefloe._row_delta import write_mode
from icefloe.spark._worker import prepare_worker
from icefloe.spark.write import _executor_error

if TYPE_CHECKING:
    from icefloe.expressions import BooleanExpression
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

__all__ = ["delete"]

_OUT_SCHEMA = "kind string, descriptor string"
# Planned files per Spark task (each task reads these files' matching positions).
_FILES_PER_TASK = 16


def delete(
    spark: Any,
    table: Table,
    condition: BooleanExpression | str,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
) -> Snapshot | None:
    """Deletes the rows of `table` matching `condition` (a filter string or an
    `icefloe.expressions` expression) as one snapshot, Spark SQL's `DELETE FROM`. With
    `write.delete.mode=merge-on-read` the position-delete files are written by Spark tasks;
    returns the table's current snapshot afterwards."""
    from icefloe import _row_level

    if write_mode(table, "delete") != "merge-on-read":
        return table.delete(condition, snapshot_properties, case_sensitive)

    def run(md: _native.TableMetadata, tasks: list[str], write_id: str) -> tuple[list[str], list[str]]:
        return _run_on_executors(spark, md, tasks, write_id)

    return _row_level.delete_merge_on_read(table, condition, snapshot_properties, case_sensitive, run)


def _run_on_executors(
    spark: Any, md: _native.TableMetadata, tasks: list[str], write_id: str
) -> tuple[list[str], list[str]]:
    chunks = [tasks[i : i + _FILES_PER_TASK] for i in range(0, len(tasks), _FILES_PER_TASK)]
    if not chunks:
        return [], []
    metadata_json = md.to_json()
    rows = [(json.dumps(c),) for c in chunks]
    df = spark.createDataFrame(rows, "tasks string").repartition(len(chunks))

    def delete_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from pyspark import TaskContext

        from icefloe import _native as native

        prepare_worker()
        ctx = TaskContext.get()
        task_id = ctx.taskAttemptId() if ctx is not None else 0
        planned: list[str] = []
        for b in batches:
            for text in b.column(0).to_pylist():
                planned.extend(json.loads(text))
        if not planned:
            return
        meta = native.TableMetadata.from_json(metadata_json)
        files, _rows, replaced = native.delete_rows(meta, planned, write_id, task_id)
        kinds = ["delete"] * len(files) + ["replaced"] * len(replaced)
        yield pa.RecordBatch.from_pydict(
            {"kind": pa.array(kinds, pa.string()), "descriptor": pa.array(files + replaced, pa.string())}
        )

    try:
        out = df.mapInArrow(delete_task, _OUT_SCHEMA).collect()
    except Exception as e:
        raise _executor_error(e) from e
    files = [r["descriptor"] for r in out if r["kind"] == "delete"]
    replaced = sorted({json.loads(r["descriptor"])["file_path"] for r in out if r["kind"] == "replaced"})
    return files, replaced
