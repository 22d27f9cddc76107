"""What icefloe needs from a SparkSession, for classic PySpark and for Spark Connect clients
(PySpark >= 4), where the driver-side code runs in the client process and there is no
SparkContext: the number of task slots, and a DataFrame of given rows spread over partitions."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession


def is_connect(spark: Any) -> bool:
    """A Spark Connect session (its class lives in pyspark.sql.connect)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def collect_arrow(df: DataFrame) -> list[pa.RecordBatch]:
    """The rows of `df` as Arrow record batches on the driver (none for no rows): classic
    PySpark's `_collect_as_arrow` (3.5 has no public `toArrow`); over Spark Connect, which
    has no `_collect_as_arrow`, `toArrow` (PySpark >= 4)."""
    if is_connect(df):
        to_arrow: Any = getattr(df, "toArrow")  # noqa: B009 (PySpark >= 4.0; 3.5 has no toArrow)
        return list(to_arrow().to_batches())
    return list(df._collect_as_arrow())


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


def scan_parallelism(spark: SparkSession) -> int:
    """The parallelism a scan's splits are sized for, as Iceberg's Spark scans size theirs:
    the larger of the task slots and `spark.sql.shuffle.partitions`."""
    shuffle_partitions = str(spark.conf.get("spark.sql.shuffle.partitions", "200") or "200")
    return max(default_parallelism(spark), int(shuffle_partitions) if shuffle_partitions.isdigit() else 200)


_BYTE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
}


def broadcast_threshold(spark: SparkSession) -> int:
    """`spark.sql.autoBroadcastJoinThreshold` in bytes (Spark's byte string: `10485760b`,
    `10MB`, ... in binary units); a huge number when broadcasting is off (-1)."""
    text = str(spark.conf.get("spark.sql.autoBroadcastJoinThreshold", "10485760b") or "10485760b")
    m = re.fullmatch(r"\s*(-?\d+)\s*([a-zA-Z]*)\s*", text)
    if m is None or m.group(2).lower() not in _BYTE_UNITS:
        return 10 << 20
    value = int(m.group(1)) * _BYTE_UNITS[m.group(2).lower()]
    return value if value >= 0 else 1 << 62


def conf_bytes(spark: SparkSession, key: str, default: int) -> int:
    """A byte-count setting of the session (`default` when unset): a whole number of bytes
    (`_` separators allowed), else a ValidationError naming the setting and the value."""
    from icefloe.exceptions import ValidationError

    value = spark.conf.get(key, None)
    if value is None:
        return default
    text = str(value).strip()
    try:
        number = int(text)
    except ValueError:
        raise ValidationError(f"{key}: expected a whole number of bytes, found {text!r}") from None
    if number < 0:
        raise ValidationError(f"{key}: expected a whole number of bytes, found {text!r}")
    return number


def unsized_range(spark: SparkSession, n: int) -> DataFrame:
    """`spark.range(0, n, 1, n)` (n rows, one per partition) that Spark's planner sizes as
    unknown (`spark.sql.defaultSizeInBytes`: never broadcast into a join), where
    `spark.range` is sized by its rows (8 bytes each: always broadcast). Classic Spark only:
    the range becomes the JVM RDD of a LogicalRDD, no Python stage; over Spark Connect the
    client cannot build one, and it is `spark.range`."""
    df = spark.range(0, n, 1, n)
    if is_connect(spark):
        return df
    jdf = spark._jsparkSession.createDataFrame(df._jdf.toDF().rdd(), df._jdf.schema())
    return type(df)(jdf, spark)


def rows_frame(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str, partitions: int) -> DataFrame:
    """A DataFrame of `rows` in `partitions` partitions (one row per partition when they are
    as many): an RDD on classic Spark; over Spark Connect the rows travel in the plan and are
    spread round-robin."""
    if not is_connect(spark):
        rdd = spark.sparkContext.parallelize(rows, numSlices=max(1, partitions))
        return spark.createDataFrame(rdd, schema)
    return spark.createDataFrame(rows, schema).repartition(max(1, partitions))


def pack_by_weight(weights: list[int], bins: int) -> list[list[int]]:
    """The indexes of `weights` in at most `bins` groups of near-equal total weight: largest
    first, each into the lightest group so far (LPT: within 4/3 of the best split); each
    group keeps its indexes in ascending order. Empty groups are left out."""
    groups: list[list[int]] = [[] for _ in range(max(1, min(bins, len(weights))))]
    totals = [0] * len(groups)
    for i in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        lightest = min(range(len(groups)), key=lambda g: (totals[g], g))
        groups[lightest].append(i)
        totals[lightest] += max(0, weights[i])
    return [sorted(g) for g in groups if g]


def packed_rows_frame(
    spark: SparkSession, rows: list[tuple[Any, ...]], weights: list[int], schema: str
) -> DataFrame:
    """A DataFrame of `rows` with one partition per task slot (`default_parallelism`), the
    rows packed by `weights` (e.g. input bytes) so the partitions carry near-equal work.

    For work where each row is a whole task (a compaction's output file; its writer takes
    its task id from `packed_row_task_id`): a PySpark task
    has a fixed cost (here, on `local[2]`, ~0.3 s between two tasks of one Python worker:
    scheduling, the RDD's and the Arrow UDF's worker round trips), so one task per slot
    running its rows one after the other beats one task per row. Over Spark Connect (no
    RDDs) each group travels as one row holding its rows; a range partitioning on the
    group's number gives each group a partition of its own (n distinct keys of equal weight
    make n ranges), and exploding the rows there keeps them in it."""
    if len(rows) != len(weights):
        raise ValueError(f"expected one weight per row, found {len(weights)} for {len(rows)} rows")
    groups = pack_by_weight(weights, default_parallelism(spark))
    if is_connect(spark):
        from pyspark.sql import functions as F

        slots = [(g, [rows[i] for i in group]) for g, group in enumerate(groups)]
        per_slot = spark.createDataFrame(slots, f"__icefloe_slot int, __icefloe_rows array<struct<{schema}>>")
        return (
            per_slot.repartitionByRange(len(groups), "__icefloe_slot")
            .select(F.explode("__icefloe_rows").alias("__icefloe_row"))
            .select("__icefloe_row.*")
        )
    packed = [[rows[i] for i in g] for g in groups]
    rdd = spark.sparkContext.parallelize(packed, numSlices=len(packed)).flatMap(lambda group: group)
    return spark.createDataFrame(rdd, schema)


def packed_row_task_id(row: int, rows: int) -> int:
    """The writer task id for row `row` of the `rows` of a `packed_rows_frame` job, called on
    the executor. Writers name files by task id and a count that starts again at every
    writer, so one Spark task writing several rows (the point of packing) must give each its
    own id; the attempt number keeps a retried or speculative attempt off its predecessor's
    names."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx is not None else 0
    return attempt * rows + row


@contextmanager
def spark_job(spark: SparkSession, description: str) -> Iterator[Any]:
    """Names the Spark jobs started inside (Spark's console progress bar and UI show it),
    restoring the previous description afterwards."""
    if is_connect(spark):  # a Spark Connect client has no SparkContext to name jobs with
        yield None
        return
    sc = spark.sparkContext
    previous = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(description)
    try:
        yield sc
    finally:
        sc.setJobDescription(previous)  # type: ignore[arg-type]
