"""The Spark driver of tests/spark/test_spark_parquet_s3a.py, in a process of its own whose
Spark has Hadoop's S3A connector (hadoop-aws and its AWS SDK bundle) and no Iceberg jar, as a
user's session that reads S3 would: `python -m support.workers.s3a_reader < config.json`
(the config, storage secret included, comes on stdin, never in a file).

For each table of the config it runs `icefloe.spark.plan_read` and the plan's DataFrame, and
writes to the config's `out` folder the rows it read (`<n>.parquet`) and `result.json`:
which file took which reader (by the session's defaults, then with the config's `spark_conf`),
the option keys of the Spark half (no values), the DataFrame's physical plan and input files,
whether S3A was used at all before the queries ran (building the file index needs no
request), the S3 requests S3A made while each query ran, and what
the S3A file system of the bucket was configured with (the endpoint, whether the access key
is the catalog's)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

# S3A's request counters (StorageStatistics names) worth reporting.
_COUNTERS = (
    "object_metadata_request",
    "object_list_request",
    "object_continue_list_request",
    "object_get_request",  # not counted by every Hadoop release; stream opens are
    "stream_read_opened",
    "op_get_file_status",
    "op_exists",
    "op_list_status",
    "op_open",
)


def _s3a_used(spark: Any) -> bool:
    """Whether any S3A file system exists in the driver JVM (Hadoop's global statistics registry
    holds S3A's once one was made)."""
    jvm: Any = spark.sparkContext._jvm
    return jvm.org.apache.hadoop.fs.GlobalStorageStatistics.INSTANCE.get("S3AStorageStatistics") is not None


def _s3a_counters(spark: Any, bucket: str) -> dict[str, int]:
    """The request counters of the driver JVM's S3A file system of `bucket` (in local mode the
    tasks use it too); empty while no S3A file system exists. Asking for the file system before
    a read made it would make it with the session's settings, and Hadoop would keep that one, so
    Hadoop's global statistics registry tells first whether S3A has been used at all."""
    jvm: Any = spark.sparkContext._jvm
    if not _s3a_used(spark):
        return {}
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(f"s3a://{bucket}/"), conf)
    stats = fs.getStorageStatistics()
    return {c: int(stats.getLong(c) or 0) for c in _COUNTERS if stats.isTracked(c)}


def _diff(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before.get(k, 0) for k in after if after[k] - before.get(k, 0)}


def main() -> None:
    cfg = json.load(sys.stdin)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-s3a-reader")
        .config("spark.jars", ",".join(cfg["jars"]))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    import icefloe
    import icefloe.spark

    props = cfg["properties"]
    catalog = icefloe.load_catalog(
        cfg["catalog"], type="sql", uri=cfg["uri"], warehouse=cfg["warehouse"], **props
    )
    out = Path(cfg["out"])
    result: dict[str, Any] = {"tables": {}}
    bucket = cfg["bucket"]
    # First every table's plan and DataFrame (Spark's file index is made here), before any query.
    frames = {}
    for name in cfg["tables"]:
        table = catalog.load_table(name)
        # By default small files on S3 take the Rust reader (fewer requests); the config's
        # Spark settings (a smaller minimum) send them to Spark's reader.
        default_reasons = sorted(set(icefloe.spark.plan_read(spark, table).rust_files.values()))
        for key, value in cfg.get("spark_conf", {}).items():
            spark.conf.set(key, value)
        plan = icefloe.spark.plan_read(spark, table)
        frames[name] = (plan, plan.frame(), default_reasons)
        for key in cfg.get("spark_conf", {}):
            spark.conf.unset(key)
    result["s3a_used_before_queries"] = _s3a_used(spark)
    for i, (name, (plan, df, default_reasons)) in enumerate(frames.items()):
        before = _s3a_counters(spark, bucket)
        rows = pa.Table.from_pandas(df.toPandas(), preserve_index=False)
        after = _s3a_counters(spark, bucket)
        pq.write_table(rows, out / f"{i}.parquet")
        qe = df._jdf.queryExecution()
        jvm_: Any = spark.sparkContext._jvm
        explain = jvm_.PythonSQLUtils.explainString
        plan_text = explain(qe, "formatted") + explain(qe, "extended")
        result["tables"][name] = {
            "spark_files": plan.spark_files,
            "rust_files": plan.rust_files,
            "scan_reason": plan.scan_reason,
            "default_rust_reasons": default_reasons,
            "columns": df.columns,
            "input_files": sorted(df._jdf.inputFiles()),
            "option_keys": sorted(plan.plain.options),
            "plan": plan_text,
            "query_requests": _diff(after, before),  # informative: Hadoop 3.4 counts late
        }
    if any(t["spark_files"] for t in result["tables"].values()):
        jvm: Any = spark.sparkContext._jvm
        fs = jvm.org.apache.hadoop.fs.FileSystem.get(
            jvm.java.net.URI(f"s3a://{bucket}/"), spark.sparkContext._jsc.hadoopConfiguration()
        )
        fs_conf = fs.getConf()
        session_conf = spark.sparkContext._jsc.hadoopConfiguration()
        result["s3a"] = {
            "class": fs.getClass().getName(),
            "endpoint": fs_conf.get("fs.s3a.endpoint"),
            "access_key_is_catalogs": fs_conf.get("fs.s3a.access.key") == props.get("s3.access-key-id"),
            "session_conf_has_bucket_keys": session_conf.get(f"fs.s3a.bucket.{bucket}.endpoint") is not None,
        }
    (out / "result.json").write_text(json.dumps(result, indent=1))
    spark.stop()
    os._exit(0)  # py4j's threads


if __name__ == "__main__":
    main()
