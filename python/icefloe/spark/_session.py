"""What icefloe needs from a SparkSession, for classic PySpark and for Spark Connect clients
(PySpark >= 4), where the driver-side code runs in the client process and there is no
SparkContext: the number of task slots, and a DataFrame of given rows spread over partitions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def is_connect(spark: Any) -> bool:
    """A Spark Connect session (its class lives in pyspark.sql.connect)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def default_parallelism(spark: SparkSession) -> int:
    """The cluster's task slots; over Spark Connect, `spark.default.parallelism` when set,
    else the shuffle partitions (the client cannot ask the scheduler)."""
    if not is_connect(spark):
        return max(1, int(spark.sparkContext.defaultParallelism))
    for key in ("spark.default.parallelism", "spark.sql.shuffle.partitions"):
        value = spark.conf.get(key, None)
        if value and str(value).isdigit():
            return max(1, int(value))
    return 1


def rows_frame(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str, partitions: int) -> DataFrame:
    """A DataFrame of `rows` in `partitions` partitions (one row per partition when they are
    as many): an RDD on classic Spark; over Spark Connect the rows travel in the plan and are
    spread round-robin."""
    if not is_connect(spark):
        rdd = spark.sparkContext.parallelize(rows, numSlices=max(1, partitions))
        return spark.createDataFrame(rdd, schema)
    return spark.createDataFrame(rows, schema).repartition(max(1, partitions))
