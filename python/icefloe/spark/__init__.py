"""icefloe on Spark: read and write Iceberg tables through DataFrame.mapInArrow.

The driver plans (Rust) and commits; executors read and write Parquet (Rust) inside
mapInArrow. Tasks and written-file descriptors cross the driver/executor boundary
as JSON strings, one per row of a small DataFrame.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.spark._arrow import spark_arrow_schema, to_spark_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.table import Table

__all__ = ["append", "read"]

_DESCRIPTOR_SCHEMA = "descriptor string"


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


def append(df: DataFrame, table: Table, snapshot_properties: dict[str, str] | None = None) -> None:
    """Appends a DataFrame's rows to the table as one new `append` snapshot.

    Executors write Parquet files (Rust) and return one descriptor each; the driver
    commits them. If anything fails, every file this write produced is deleted,
    including files of Spark task attempts the driver never heard of (found by the
    write's unique id in their names).
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        arrow_schema = to_arrow_schema(df.schema)
    except TypeError as e:  # a Spark type Arrow cannot carry
        raise ValidationError(f"DataFrame schema cannot be written to Iceberg: {e}") from e
    # Fail fast, before any task runs, when the DataFrame cannot fit the table.
    _native.check_arrow_schema(table.metadata, arrow_schema)

    write_id = table._new_write_id()
    metadata_json = table.metadata.to_json()

    def write_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from pyspark import TaskContext

        from icefloe import _native as native

        ctx = TaskContext.get()
        task_id = ctx.taskAttemptId() if ctx is not None else 0
        it = iter(batches)
        first = next(it, None)
        if first is None:
            return
        reader = pa.RecordBatchReader.from_batches(first.schema, _chain(first, it))
        md = native.TableMetadata.from_json(metadata_json)
        descriptors = native.write_data_files(md, reader, write_id, task_id)
        yield pa.RecordBatch.from_pydict({"descriptor": pa.array(descriptors, pa.string())})

    try:
        try:
            rows = df.mapInArrow(write_task, _DESCRIPTOR_SCHEMA).collect()
        except Exception as e:
            raise _executor_error(e) from e
        table._commit_data_files([r["descriptor"] for r in rows], snapshot_properties)
    except BaseException:
        table._abort_write(write_id)
        raise


_EXECUTOR_ERROR = re.compile(r"icefloe\.exceptions\.(\w+): (.*)")


def _executor_error(e: Exception) -> Exception:
    """The icefloe exception an executor raised, re-raised as its own class on the driver.

    Spark wraps a Python worker's exception in a PythonException carrying its traceback
    text; callers should be able to catch ValidationError etc. whichever side raised it.
    """
    import icefloe.exceptions as exc

    m = _EXECUTOR_ERROR.search(str(e))
    if m is None:
        return e
    cls = getattr(exc, m.group(1), None)
    if not (isinstance(cls, type) and issubclass(cls, exc.IcefloeError)):
        return e
    return cls(f"{m.group(2).strip()} (raised in a Spark task)")


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest
