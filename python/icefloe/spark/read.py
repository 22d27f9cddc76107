"""icefloe.spark.read: a DataFrame of an Iceberg table, planned in Rust, read in two halves.

Planning happens on the driver (Rust). The planned data files that Spark's own Parquet source
reads as Iceberg does (no deletes, nothing only Iceberg's rules read right: see
`_parquet_source.py`) go to that source, by field id; Spark prunes their columns, pushes
filters into row groups and sizes them from their bytes. The other files are split at their
split offsets and bin-packed into combined tasks (`read.split.*`); each combined task crosses
to the executors as JSON bytes, one Spark partition per combined task, and its file ranges are
read in Rust inside mapInArrow. Both halves are one DataFrame (a union, same schema).

How the Rust half's tasks travel depends on their size. A small plan rides in the mapInArrow
closure over `spark.range(n)`: partition i reads task i, and the source needs no Python worker
of its own. Every task receives the whole closure, so this is used only while the n copies
together stay under `INLINE_TASK_BYTES` (task JSON bytes x tasks: ~90 tasks of a few KB each)
(over a range Spark sizes as unknown when, for `read`, the files hold more bytes than
Spark's broadcast threshold: `spark.range` is sized as tiny and would be broadcast). A larger
plan travels as the rows of a parallelized RDD, one row per partition, so that no task
receives the whole plan; that costs one more Python stage per query (about 0.1 s measured
on `local[2]`), which a large scan amortizes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe._io import IoConfig
from icefloe.spark._arrow import spark_arrow_schema, to_spark_batch
from icefloe.spark._arrow import spark_schema as arrow_to_spark_schema
from icefloe.spark._parquet_source import PlainFiles, parquet_frame, scan_blocker, split_files
from icefloe.spark._session import broadcast_threshold, rows_frame, scan_parallelism, unsized_range
from icefloe.spark._worker import prepare_worker

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.scan import DataScan
    from icefloe.table import Table

__all__ = ["ReadPlan", "plan_read", "read"]


@dataclass(frozen=True)
class SemiJoinKeys:
    """Keys a read keeps rows of (a MERGE's source keys, see `icefloe.spark.merge`): the
    target columns `key_columns` of a row must hold one of the rows of `keys_ipc` (an Arrow
    IPC stream, one column per key column, in that order). `token` names the set, so that
    each executor process builds its hash set once per merge, not once per task."""

    key_columns: tuple[str, ...]
    keys_ipc: bytes
    token: str


# The key sets of this worker process by token (the newest few; a merge reuses one set in
# every task it runs here).
_KEY_SETS: dict[str, Any] = {}
_KEY_SETS_KEPT = 2


def _key_set(native: Any, keys: SemiJoinKeys) -> Any:
    found = _KEY_SETS.get(keys.token)
    if found is None:
        with pa.ipc.open_stream(keys.keys_ipc) as r:
            batch = r.read_all().combine_chunks().to_batches()
        found = native.KeySet(batch[0] if batch else pa.RecordBatch.from_pylist([], r.schema))
        while len(_KEY_SETS) >= _KEY_SETS_KEPT:
            _KEY_SETS.pop(next(iter(_KEY_SETS)))
        _KEY_SETS[keys.token] = found
    return found


# A plan travels inside the mapInArrow closure while (its task JSON bytes) x (its tasks), what
# all tasks together receive, stays under this; larger plans travel as RDD rows, one per task.
INLINE_TASK_BYTES = 16 << 20
# An empty projection's rows travel as counts of at most this many rows each (see `read`).
COUNT_CHUNK = 1 << 16


def read(
    spark: SparkSession,
    table: Table,
    row_filter: Any = None,
    selected_fields: tuple[str, ...] | list[str] | None = None,
    snapshot_id: int | None = None,
    case_sensitive: bool = True,
    **scan_options: Any,
) -> DataFrame:
    """A DataFrame of the table's rows.

    Planning happens here, on the driver, in Rust. The planned data files with no deletes
    are read by Spark's own Parquet source, by Iceberg field id: Spark prunes columns,
    pushes filters into row groups and sizes the relation from the files' bytes. The other
    files (deletes, residual filters, and what only Iceberg's rules read right: see
    `icefloe.spark._parquet_source`) are read in Rust inside mapInArrow, one Spark
    partition per combined task; both halves are one DataFrame. `plan_read` tells which
    file takes which path and why; the session conf `icefloe.read.spark-parquet.enabled=false`
    sends every file through the Rust reader. `scan_options` go to `Table.scan`
    (as_of_timestamp, ref, from_snapshot_id, to_snapshot_id).

    Spark cannot prune the Rust half's columns through mapInArrow, so a scan with deletes
    reads faster when the columns a query needs are named in `selected_fields` (None: all).
    An empty `selected_fields` (as in PyIceberg) reads no column: the DataFrame has no
    columns and one row per table row, which is what `count()` needs.

    In a write-audit-publish session (`spark.wap.branch`, on a table with
    `write.wap.enabled=true`), a read naming no snapshot, ref or time reads that branch once
    it exists, as Java's reads do (`icefloe.spark._wap`).
    """
    return plan_read(
        spark, table, row_filter, selected_fields, snapshot_id, case_sensitive, **scan_options
    ).frame()


@dataclass
class ReadPlan:
    """How `read` reads one scan: the files Spark's Parquet source reads, the files
    icefloe's Rust reader reads (with the reason each cannot take Spark's reader), and the
    reason no file could (`scan_reason`, None when each file was judged on its own)."""

    spark: SparkSession
    table: Table
    scan: DataScan
    plain: PlainFiles
    rust_plan: Any  # icefloe._native.ScanPlan of the files the Rust reader reads
    scan_reason: str | None
    refused: list[tuple[str, str]]  # (path, reason): files the plan allows, Spark cannot open
    rows_filtered_after: bool = False  # see plan_read

    @property
    def spark_files(self) -> list[str]:
        return [path for path, _size, _records in self.plain.files]

    @property
    def rust_files(self) -> dict[str, str]:
        """path -> why the Rust reader reads it (made when asked: a diagnostic)."""
        plan = self.scan.plan_files()._plan
        if self.scan_reason is not None:
            return {plan[i].file_path: self.scan_reason for i in range(len(plan))}
        return {**dict(plan.plain_parquet_blockers(self.rows_filtered_after)), **dict(self.refused)}

    def frame(self) -> DataFrame:
        """The DataFrame of the scan: the Spark half, then the Rust half, one schema."""
        projection = json.loads(self.scan.projection().to_json())
        rust_half = None
        if len(self.rust_plan) or not self.plain.files:
            combined = self.rust_plan.combined(parallelism=scan_parallelism(self.spark)).to_json_list()
            rust_half = _rust_frame(
                self.spark,
                self.table,
                self.scan,
                [bytes(c) for c in combined],
                None,
                self.rust_plan.size_in_bytes(),
            )
        if not self.plain.files:
            assert rust_half is not None
            return rust_half
        spark_half = parquet_frame(self.spark, self.plain, projection)
        if not projection["fields"]:
            spark_half = spark_half.select()
        return spark_half if rust_half is None else spark_half.union(rust_half)


def plan_read(
    spark: SparkSession,
    table: Table,
    row_filter: Any = None,
    selected_fields: tuple[str, ...] | list[str] | None = None,
    snapshot_id: int | None = None,
    case_sensitive: bool = True,
    rows_filtered_after: bool = False,
    **scan_options: Any,
) -> ReadPlan:
    """The plan of `read` with these arguments: which reader reads each planned file and
    why. `ReadPlan.frame()` is the DataFrame `read` returns.

    `rows_filtered_after`: the caller filters the rows itself after the read (a SQL query
    keeps its whole WHERE, of which `row_filter` is the part icefloe can prune with), so a file
    whose rows the filter only partly selects may still take Spark's Parquet source: it then
    yields rows `row_filter` rejects, which the caller's filter drops."""
    selection = ("ref", "as_of_timestamp", "from_snapshot_id", "to_snapshot_id")
    if snapshot_id is None and all(scan_options.get(k) is None for k in selection):
        from icefloe.spark._wap import read_ref

        wap_ref = read_ref(spark, table)
        if wap_ref is not None:
            scan_options["ref"] = wap_ref
    scan = _scan(table, row_filter, selected_fields, snapshot_id, case_sensitive, scan_options)
    native_plan = scan.plan_files()._plan
    scan_reason = scan_blocker(spark, table, scan.projection())
    if scan_reason is not None:
        return ReadPlan(spark, table, scan, PlainFiles(), native_plan, scan_reason, [])
    candidates, rest = native_plan.split_plain_parquet(None, rows_filtered_after)
    plain, refused = split_files(spark, candidates, table.io_properties)
    if refused:
        # Files the plan allows but Spark cannot open go back to the Rust reader.
        _candidates, rest = native_plan.split_plain_parquet(
            {path for path, _why in refused}, rows_filtered_after
        )
    return ReadPlan(spark, table, scan, plain, rest, None, refused, rows_filtered_after)


def read_combined_task(
    native: Any, task: bytes, read_schema_json: str, name_mapping: str | None
) -> Iterator[pa.RecordBatch]:
    """The executor's read loop, shared by `read` and the data source's reader: the
    non-empty Arrow batches of one combined task (its bytes, as `scan.plan_tasks` makes
    them), each of its file ranges read in Rust (`native` is icefloe._native) in the read
    schema, its residual filter applied."""
    for one in native.split_combined_task(task):
        for b in native.read_task(one, read_schema_json, name_mapping=name_mapping):
            if b.num_rows:
                yield b


def read_rows(
    spark: SparkSession,
    table: Table,
    row_filter: Any = None,
    selected_fields: tuple[str, ...] | list[str] | None = None,
    snapshot_id: int | None = None,
    case_sensitive: bool = True,
    semi_join: SemiJoinKeys | None = None,
    **scan_options: Any,
) -> DataFrame:
    """`read` for icefloe's own row-level operations, every file in Rust: they select
    metadata columns (`_file`, `_pos`), and with `semi_join` only the rows whose keys are in
    it leave the executors' Rust reader (the key columns must be selected)."""
    scan = _scan(table, row_filter, selected_fields, snapshot_id, case_sensitive, scan_options)
    combined = [c.to_bytes() for c in scan.plan_tasks(parallelism=scan_parallelism(spark))]
    # Sized as today (small): MERGE and the row-level paths choose their own joins.
    return _rust_frame(spark, table, scan, combined, semi_join, 0)


def _scan(
    table: Table,
    row_filter: Any,
    selected_fields: tuple[str, ...] | list[str] | None,
    snapshot_id: int | None,
    case_sensitive: bool,
    scan_options: dict[str, Any],
) -> DataScan:
    fields = ("*",) if selected_fields is None else tuple(selected_fields)
    return table.scan(
        row_filter=row_filter,
        selected_fields=fields,
        snapshot_id=snapshot_id,
        case_sensitive=case_sensitive,
        **scan_options,
    )


def _rust_frame(
    spark: SparkSession,
    table: Table,
    scan: DataScan,
    combined: list[bytes],
    semi_join: SemiJoinKeys | None,
    planned_bytes: int,
) -> DataFrame:
    """The rows of `combined` (tasks of `scan`) read in Rust inside mapInArrow.

    Spark sizes a mapInArrow by its source. When the tasks' files hold more bytes than
    `spark.sql.autoBroadcastJoinThreshold`, the source is one Spark sizes as unknown (a JVM
    RDD, or the RDD of task rows): never broadcast, as a scan of those files would not be;
    a smaller one is `spark.range`, which Spark sizes as small."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    projection = json.loads(scan.projection().to_json())
    target = spark_arrow_schema(projection)
    spark_schema = arrow_to_spark_schema(target)
    # Tasks read the projection plus what the filter needs; the Rust reader applies each
    # task's residual filter, then only the projection is kept.
    read_schema_json = scan.read_schema().to_json()
    out_names = [f["name"] for f in projection["fields"]]
    name_mapping = table.properties.get("schema.name-mapping.default")

    if not combined:
        return spark.createDataFrame([], spark_schema)
    # An empty projection: PySpark 3.5 loses the row count of a batch without columns, and
    # turning Arrow rows into Spark rows costs ~20 ns a row in the JVM even for a column
    # without data. So each task sends its row count instead, in chunks of at most
    # COUNT_CHUNK (a column `_n`), and Spark makes the rows itself:
    # explode(sequence(1, _n)) in generated code, then drops every column.
    rows_only = not out_names
    out_schema = StructType([StructField("_n", IntegerType())]) if rows_only else spark_schema

    io_config = IoConfig.current()  # storage settings, for the executors

    def read_one(native: Any, data: bytes) -> Iterable[pa.RecordBatch]:
        rows = 0
        keys = None if semi_join is None else _key_set(native, semi_join)
        key_columns = [] if semi_join is None else list(semi_join.key_columns)
        for b in read_combined_task(native, data, read_schema_json, name_mapping):
            if keys is not None:
                b = keys.semi_join(b, key_columns)
            if rows_only:
                rows += b.num_rows
            elif b.num_rows:
                yield to_spark_batch(b.select(out_names), projection, target)
        if rows:
            full, rest = divmod(rows, COUNT_CHUNK)
            counts = [COUNT_CHUNK] * full + ([rest] if rest else [])
            yield pa.RecordBatch.from_arrays([pa.array(counts, pa.int32())], names=["_n"])

    def finish(df: DataFrame) -> DataFrame:
        if rows_only:
            return df.select(F.explode(F.sequence(F.lit(1), F.col("_n")))).select()
        return df

    def reader(plan: list[bytes] | None) -> Any:
        """The mapInArrow function: each input row names a combined task, by its index in
        `plan` (the plan rides in the closure) or as the task's bytes (`plan` is None, so
        that no task receives the whole plan)."""

        def read_tasks(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
            from icefloe import _native as native

            prepare_worker(io_config)
            for batch in batches:
                for key in batch.column(0).to_pylist():
                    yield from read_one(native, key if plan is None else plan[key])

        return read_tasks

    n = len(combined)
    if sum(len(c) for c in combined) * n <= INLINE_TASK_BYTES:
        small = planned_bytes <= broadcast_threshold(spark)
        source = spark.range(0, n, 1, n) if small else unsized_range(spark, n)
        return finish(source.mapInArrow(reader(combined), out_schema))
    task_df = rows_frame(spark, [(bytearray(c),) for c in combined], "task binary", n)
    return finish(task_df.mapInArrow(reader(None), out_schema))
