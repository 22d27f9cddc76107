"""icefloe on Spark: read and write Iceberg tables without Iceberg's jar.

The driver plans (Rust) and commits; executors read and write Parquet (Rust) inside
mapInArrow, and Spark's own Parquet source reads the planned files without deletes. `read`
lives in `read.py` (`_parquet_source.py` decides which files Spark's reader takes), the write
operations in `write.py`, row-level changes in `row_level.py` and `merge.py`. On PySpark >= 4.0,
`register(spark)` adds the data source `format("icefloe")` (`datasource.py`). `sql(spark, text)`
runs Spark SQL statements over icefloe tables (`sql/`).
"""

from icefloe.spark.changelog import read_changelog
from icefloe.spark.datasource import register
from icefloe.spark.inspect import inspect
from icefloe.spark.merge import MergeBuilder, MergeMetrics, merge
from icefloe.spark.read import ReadPlan, plan_read, read
from icefloe.spark.row_level import delete, update, upsert
from icefloe.spark.sql import sql
from icefloe.spark.streaming import batch_writer
from icefloe.spark.write import append, overwrite

__all__ = [
    "MergeBuilder",
    "MergeMetrics",
    "ReadPlan",
    "append",
    "batch_writer",
    "delete",
    "inspect",
    "merge",
    "overwrite",
    "plan_read",
    "read",
    "read_changelog",
    "register",
    "sql",
    "update",
    "upsert",
]
