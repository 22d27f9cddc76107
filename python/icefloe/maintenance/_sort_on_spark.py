"""The `sort` strategy of `rewrite_data_files` on Spark, spread over many tasks as Java's
`SparkSortFileRewriteRunner` does: the groups' rows are read on the executors (deletes
applied, v3 lineage kept) and each partition of Spark's is sorted and written by the Rust
writer. A group that expects several output files is range-partitioned on its own, by the
output spec's partition keys and the sort order (the table's, or the rewrite's
`sort_order`), into as many Spark partitions as it expects files, as Java ranges each file
group in its own job: its new files cover disjoint key ranges and it sorts on every core, not
in one task. A group of one output file is one Spark partition, no shuffle. One Spark job
writes all of them (a union of the groups' plans), so small groups still run side by side.

(Ranging all groups together, as this module first did, let a range straddle two groups'
partitions: one file became two, depending on Spark's sample.)

A z-order (`sort_order="zorder(a, b)"`) ranges each group by the rows' z-values, as Java's
`SparkZOrderFileRewriteRunner` does: the read task appends the z-value (Rust, from the rows as
read, before Spark's conversion) as one more binary column, the groups are ranged by it, the
column is dropped, and the writer sorts each task by the z-values again.

A group's files with no deletes (and none of the other reasons of `icefloe.spark.read`'s rules,
`icefloe.spark._parquet_source`), when their mean size is at least `MIN_MEAN_FILE_BYTES`
(over small files the Rust reader is faster), are read by Spark's own Parquet source, by field id, and
unioned with the Rust reader's rows of its other files before the group is ranged: Spark's
vectorized reader hands the shuffle its rows without an Arrow round trip. A z-order (its
z-values come from the Rust read task) and a v3 table (the rewrite copies row lineage, which
only the Rust reader reads) keep every file on the Rust reader, as does
`icefloe.read.spark-parquet.enabled=false`.

Tables with a column Spark cannot carry losslessly (uuid, fixed, time, nanosecond timestamps,
unknown, variant, geometry) keep the one-task-per-group path (`rewrite_data_files`), which
never leaves Arrow.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.maintenance._zorder import ZOrder
    from icefloe.sorting import SortOrder
    from icefloe.spark._parquet_source import PlainFiles
    from icefloe.table import Table

logger = logging.getLogger("icefloe")

# The delete-free files of a sort rewrite take Spark's reader only when their mean size is at
# least this. Measured with `make bench-compact` (a sort rewrite into 64 MiB files, one group,
# PySpark 3.5, docs/benchmarks.md), Spark's reader against the Rust reader, medians: 200 files
# of ~0.4 MB 1.8x slower (Spark pays a file open and a footer read per file where the Rust
# reader packs them), 16 of ~5 MB even (0.91x), 4 of ~19.5 MB 0.73x (faster).
MIN_MEAN_CONF = "icefloe.rewrite.spark-parquet.min-mean-file-bytes"
MIN_MEAN_FILE_BYTES = 16 << 20

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


def spark_read_files(
    spark: SparkSession,
    table: Table,
    candidates: list[tuple[str, int, int]],
    order: SortOrder | ZOrder | None,
) -> tuple[PlainFiles, str | None]:
    """The files of `candidates` (each group's `plain_files`) that Spark's Parquet source
    reads in this rewrite, and why none may (None when each file was judged on its own)."""
    from icefloe.maintenance._zorder import ZOrder
    from icefloe.spark._parquet_source import PlainFiles, scan_blocker, split_files
    from icefloe.write import lineage

    if isinstance(order, ZOrder):
        return PlainFiles(), "a z-order: each row's z-value is computed in the Rust read task"
    if lineage.tracked(table):
        return PlainFiles(), "the rewrite copies v3 row lineage, which only the Rust reader reads"
    why = scan_blocker(spark, table, table.schema())
    if why is not None:
        return PlainFiles(), why
    plain, _refused = split_files(spark, candidates, table.io_properties)
    from icefloe.spark._session import conf_bytes

    min_mean = conf_bytes(spark, MIN_MEAN_CONF, MIN_MEAN_FILE_BYTES)
    if plain.files and plain.size_in_bytes < min_mean * len(plain.files):
        return (
            PlainFiles(),
            f"small files (mean under {min_mean} bytes, {MIN_MEAN_CONF}): the Rust reader is faster",
        )
    return plain, None


def sort_rewrite_on_spark(
    spark: SparkSession,
    table: Table,
    groups: list[tuple[list[str], int, list[tuple[str, int, int]]]],
    target_file_size: int,
    spec_id: int,
    write_id: str,
    read_json: str,
    mapping: str | None,
    order: SortOrder | ZOrder | None = None,
) -> list[str] | None:
    """Writes the rows of `groups` (each its read tasks, JSON lists of FileScanTasks, the
    output files it expects and its files Spark's own Parquet source may read), each group
    range-partitioned into as many sorted runs as it expects files; returns the new files'
    descriptors,
    or None (nothing written) when Spark cannot compute the sort order's first term (a
    bucket of a string, say): the caller then sorts each group in one writer. On failure
    the files of `write_id` are deleted by the caller's abort. `order`: the order to sort by
    and record on the files (default: the table's), or a z-order."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, StructField, StructType

    from icefloe import _progress
    from icefloe._io import IoConfig
    from icefloe.maintenance._zorder import ZOrder
    from icefloe.maintenance.rewrite_data_files import task_reader
    from icefloe.spark._arrow import spark_arrow_schema, spark_schema, to_spark_batch
    from icefloe.spark._distribution import partition_keys, sort_keys
    from icefloe.spark._session import rows_frame, spark_job
    from icefloe.spark._worker import prepare_worker
    from icefloe.spark.write import write_on_executors

    read_schema = json.loads(read_json)
    target = spark_arrow_schema(read_schema)
    io_config = IoConfig.current()
    zorder = order if isinstance(order, ZOrder) else None
    z_name = "_icefloe_zvalue"
    while z_name in target.names:
        z_name = "_" + z_name

    def read(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        for batch in batches:
            for tasks in batch.column(0).to_pylist():
                for b in task_reader(native, tasks, read_json, mapping):
                    if b.num_rows:
                        out = to_spark_batch(b, read_schema, target)
                        if zorder is not None:
                            z = native.z_values(
                                [b.column(c) for c in zorder.columns],
                                list(zorder.types),
                                zorder.var_length_contribution,
                                zorder.max_output_size,
                            )
                            out = out.append_column(pa.field(z_name, pa.binary(), nullable=False), z)
                        yield out

    table_schema = spark_schema(target)
    types = {f.name: f.dataType for f in table_schema.fields}
    if isinstance(order, ZOrder):
        out_schema = StructType([*table_schema.fields, StructField(z_name, BinaryType(), False)])
        keys = [F.col(z_name)]
    else:
        out_schema = table_schema
        keys = sort_keys(table, types, prefix=True, order=order)
    if not keys:
        return None
    ranges = [*partition_keys(table, types), *keys]

    def rows(tasks: list[str]) -> DataFrame:
        frame = rows_frame(spark, [(t,) for t in tasks], "tasks string", len(tasks))
        return frame.mapInArrow(read, out_schema)

    plain, why = spark_read_files(spark, table, [f for _t, _n, files in groups for f in files], order)
    by_spark = {path for path, _size, _records in plain.files}

    def rust_tasks(tasks: list[str]) -> list[str]:
        """`tasks` without those of the files Spark's reader reads (empty lists dropped)."""
        kept = [[t for t in json.loads(c) if t["file"]["file_path"] not in by_spark] for c in tasks]
        return [json.dumps(c) for c in kept if c]

    def group_rows(tasks: list[str], files: list[tuple[str, int, int]]) -> DataFrame:
        """The group's rows: Spark's Parquet source over its plain files, then the Rust reader's
        rows of the others."""
        from icefloe.spark._parquet_source import PlainFiles, parquet_frame

        mine = [f for f in files if f[0] in by_spark]
        frame = parquet_frame(spark, PlainFiles(mine, plain.options), read_schema)
        rest = rust_tasks(tasks)
        return frame.unionAll(rows(rest)) if rest else frame

    def spark_reads(files: list[tuple[str, int, int]]) -> bool:
        return any(p in by_spark for p, _size, _records in files)

    # Groups of one file: one Spark partition each (all their read tasks in one row, or the
    # group's rows from both readers coalesced into one partition).
    whole = [
        json.dumps([t for c in tasks for t in json.loads(c)])
        for tasks, n, files in groups
        if n <= 1 and not spark_reads(files)
    ]
    parts = [rows(whole)] if whole else []
    parts += [
        group_rows(tasks, files).coalesce(1) for tasks, n, files in groups if n <= 1 and spark_reads(files)
    ]
    parts += [
        (group_rows(tasks, files) if spark_reads(files) else rows(tasks)).repartitionByRange(n, *ranges)
        for tasks, n, files in groups
        if n > 1
    ]
    ranged = functools.reduce(lambda a, b: a.unionAll(b), parts)
    logger.info(
        "rewrite_data_files %s: %d files read by Spark's Parquet source, the others by the Rust reader%s",
        _progress.table_label(table),
        len(plain.files),
        f" ({why})" if why is not None else "",
    )
    if zorder is not None:  # ranged by it; the writer sorts by the z-values it computes again
        ranged = ranged.drop(z_name)
    output_files = sum(max(1, n) for _t, n, _f in groups)
    options: dict[str, Any] = {"sort": True, "target_file_size_bytes": target_file_size, "spec_id": spec_id}
    if zorder is not None:
        options["zorder"] = zorder.to_json()
    elif order is not None:
        options["sort_order"] = order.to_json()
    label = f"icefloe rewrite_data_files {_progress.table_label(table)}: sort into {output_files} files"
    with spark_job(spark, label):
        return write_on_executors(ranged, table, write_id, options)
