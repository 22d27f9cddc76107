"""The `sort` strategy of `rewrite_data_files` on Spark, spread over many tasks as Java's
`SparkSortFileRewriteRunner` does: the groups' rows are read on the executors (deletes
applied, v3 lineage kept), range-partitioned by the output spec's partition keys and the
sort order (the table's, or the rewrite's `sort_order`) into as many Spark partitions as the
groups expect output files, and each partition is sorted and written by the Rust writer. The
new files then cover disjoint key ranges and a large group sorts on every core, not in one
task.

Tables with a column Spark cannot carry losslessly (uuid, fixed, time, nanosecond timestamps,
unknown, variant, geometry) keep the one-task-per-group path (`rewrite_data_files`), which
never leaves Arrow.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.sorting import SortOrder
    from icefloe.table import Table

# Iceberg types whose values Spark holds as they are (through Arrow and Spark rows).
_LOSSLESS = {
    *("boolean", "int", "long", "float", "double", "date", "timestamp", "timestamptz", "string", "binary")
}


def spark_carries(schema_json: str) -> bool:
    """Whether every column of the read schema (Iceberg JSON) survives a trip through Spark."""

    def ok(t: Any) -> bool:
        if isinstance(t, str):
            return t in _LOSSLESS or t.startswith("decimal(")
        if t["type"] == "struct":
            return all(ok(f["type"]) for f in t["fields"])
        if t["type"] == "list":
            return bool(ok(t["element"]))
        if t["type"] == "map":
            return bool(ok(t["key"]) and ok(t["value"]))
        return False

    return all(ok(f["type"]) for f in json.loads(schema_json)["fields"])


def sort_rewrite_on_spark(
    spark: SparkSession,
    table: Table,
    read_tasks: list[str],
    output_files: int,
    target_file_size: int,
    spec_id: int,
    write_id: str,
    read_json: str,
    mapping: str | None,
    order: SortOrder | None = None,
) -> list[str] | None:
    """Writes the rows of `read_tasks` (JSON lists of FileScanTasks, one Spark task each)
    range-partitioned into `output_files` sorted runs; returns the new files' descriptors,
    or None (nothing written) when Spark cannot compute the sort order's first term (a
    bucket of a string, say): the caller then sorts each group in one writer. On failure
    the files of `write_id` are deleted by the caller's abort. `order`: the order to sort by
    and record on the files (default: the table's)."""
    from icefloe import _progress
    from icefloe._io import IoConfig
    from icefloe.maintenance.rewrite_data_files import task_reader
    from icefloe.spark._arrow import spark_arrow_schema, spark_schema, to_spark_batch
    from icefloe.spark._distribution import partition_keys, sort_keys
    from icefloe.spark._session import rows_frame, spark_job
    from icefloe.spark._worker import prepare_worker
    from icefloe.spark.write import write_on_executors

    read_schema = json.loads(read_json)
    target = spark_arrow_schema(read_schema)
    io_config = IoConfig.current()

    def read(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        for batch in batches:
            for tasks in batch.column(0).to_pylist():
                for b in task_reader(native, tasks, read_json, mapping):
                    if b.num_rows:
                        yield to_spark_batch(b, read_schema, target)

    out_schema = spark_schema(target)
    types = {f.name: f.dataType for f in out_schema.fields}
    keys = sort_keys(table, types, prefix=True, order=order)
    if not keys:
        return None
    rows = rows_frame(spark, [(t,) for t in read_tasks], "tasks string", len(read_tasks))
    df = rows.mapInArrow(read, out_schema)
    ranged = df.repartitionByRange(max(1, output_files), *partition_keys(table, types), *keys)
    options: dict[str, Any] = {"sort": True, "target_file_size_bytes": target_file_size, "spec_id": spec_id}
    if order is not None:
        options["sort_order"] = order.to_json()
    label = f"icefloe rewrite_data_files {_progress.table_label(table)}: sort into {output_files} files"
    with spark_job(spark, label):
        return write_on_executors(ranged, table, write_id, options)
