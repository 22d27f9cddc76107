"""icefloe.spark.read: a DataFrame of an Iceberg table, one Spark partition per planned task.

Planning happens on the driver (Rust); each partition's task reads its file in Rust
inside mapInArrow. Tasks cross to the executors as JSON strings, one per row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe.spark._arrow import spark_arrow_schema, to_spark_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.table import Table

__all__ = ["read"]


def read(
    spark: SparkSession,
    table: Table,
    row_filter: Any = None,
    selected_fields: tuple[str, ...] | list[str] | None = None,
    snapshot_id: int | None = None,
    case_sensitive: bool = True,
) -> DataFrame:
    """A DataFrame of the table's rows: one Spark partition per planned file task.

    Planning happens here, on the driver; each partition's task reads its file in Rust.
    """
    from pyspark.sql.pandas.types import from_arrow_schema

    fields = tuple(selected_fields) if selected_fields else ("*",)
    scan = table.scan(
        row_filter=row_filter, selected_fields=fields, snapshot_id=snapshot_id, case_sensitive=case_sensitive
    )
    projection = json.loads(scan.projection().to_json())
    target = spark_arrow_schema(projection)
    spark_schema = from_arrow_schema(target)
    # Tasks read the projection plus what the filter needs, filter, then keep the projection.
    read_schema_json = scan.read_schema().to_json()
    filter_expr = None if scan.row_filter_is_always_true() else scan.bound_row_filter.to_pyarrow()
    out_names = [f["name"] for f in projection["fields"]]

    tasks = [t.to_json() for t in scan.plan_files()]
    if not tasks:
        return spark.createDataFrame([], spark_schema)

    def read_tasks(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        for batch in batches:
            for task in batch.column(0).to_pylist():
                for b in native.read_task(task, read_schema_json):
                    if filter_expr is not None:
                        b = pa.Table.from_batches([b]).filter(filter_expr).combine_chunks()
                        if b.num_rows == 0:
                            continue
                        b = b.to_batches()[0]
                    yield to_spark_batch(b.select(out_names), projection, target)

    task_rdd = spark.sparkContext.parallelize([(t,) for t in tasks], numSlices=len(tasks))
    task_df = spark.createDataFrame(task_rdd, "task string")
    return task_df.mapInArrow(read_tasks, spark_schema)
