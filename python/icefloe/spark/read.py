"""icefloe.spark.read: a DataFrame of an Iceberg table, one Spark partition per combined task.

Planning happens on the driver (Rust): files are split at their split offsets and bin-packed
into combined tasks (`read.split.*`). Each combined task crosses to the executors as JSON
bytes, one Spark partition per combined task, and its file ranges are read in Rust inside
mapInArrow.

How the tasks travel depends on their size. A small plan rides in the mapInArrow closure
over `spark.range(n)`: partition i reads task i, and the source needs no Python worker of its
own. Every task receives the whole closure, so this is used only while the n copies together
stay under `INLINE_TASK_BYTES` (task JSON bytes x tasks: ~90 tasks of a few KB each). A larger
plan travels as the rows of a parallelized RDD, one row per partition, so that no task
receives the whole plan; that costs one more Python stage per query (about 0.1 s measured on
`local[2]`), which a large scan amortizes.
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
from icefloe.spark._session import rows_frame, scan_parallelism
from icefloe.spark._worker import prepare_worker

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.table import Table

__all__ = ["read"]


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
    """A DataFrame of the table's rows: one Spark partition per combined task.

    Planning happens here, on the driver; each partition reads its tasks' file ranges in
    Rust. `scan_options` go to `Table.scan` (as_of_timestamp, ref, from_snapshot_id,
    to_snapshot_id).

    Spark cannot prune columns through mapInArrow, so name the columns a query needs in
    `selected_fields` (None: all). An empty `selected_fields` (as in PyIceberg) reads no
    column: the DataFrame has no columns and one row per table row, which is what
    `count()` needs; only the deletes (and the columns the filter and equality deletes
    need) are read, and Spark makes the rows from each task's count.

    In a write-audit-publish session (`spark.wap.branch`, on a table with
    `write.wap.enabled=true`), a read naming no snapshot, ref or time reads that branch once
    it exists, as Java's reads do (`icefloe.spark._wap`).
    """
    selection = ("ref", "as_of_timestamp", "from_snapshot_id", "to_snapshot_id")
    if snapshot_id is None and all(scan_options.get(k) is None for k in selection):
        from icefloe.spark._wap import read_ref

        wap_ref = read_ref(spark, table)
        if wap_ref is not None:
            scan_options["ref"] = wap_ref
    return read_rows(spark, table, row_filter, selected_fields, snapshot_id, case_sensitive, **scan_options)


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
    """`read`, for icefloe's own row-level operations: with `semi_join`, only the rows whose
    keys are in it leave the executors' Rust reader (the key columns must be selected)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    fields = ("*",) if selected_fields is None else tuple(selected_fields)
    scan = table.scan(
        row_filter=row_filter,
        selected_fields=fields,
        snapshot_id=snapshot_id,
        case_sensitive=case_sensitive,
        **scan_options,
    )
    projection = json.loads(scan.projection().to_json())
    target = spark_arrow_schema(projection)
    spark_schema = arrow_to_spark_schema(target)
    # Tasks read the projection plus what the filter needs; the Rust reader applies each
    # task's residual filter, then only the projection is kept.
    read_schema_json = scan.read_schema().to_json()
    out_names = [f["name"] for f in projection["fields"]]
    name_mapping = table.properties.get("schema.name-mapping.default")

    # Like Iceberg's Spark scans: a small scan gets splits small enough to use every slot.
    combined = [c.to_bytes() for c in scan.plan_tasks(parallelism=scan_parallelism(spark))]
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
        return finish(spark.range(0, n, 1, n).mapInArrow(reader(combined), out_schema))
    task_df = rows_frame(spark, [(bytearray(c),) for c in combined], "task binary", n)
    return finish(task_df.mapInArrow(reader(None), out_schema))
