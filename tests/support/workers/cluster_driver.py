"""The driver of tests/spark/test_spark_cluster.py, in a process of its own on the standalone
cluster: `python -m support.workers.cluster_driver < config.json`. It runs icefloe.spark's
append, read, delete, merge, upsert, update and overwrite there, checks each against a model
kept here, records where every task ran (Spark's status API and probe tasks) and which files
hold the S3 secret, and writes its findings to the config's `result` file. Run as
`__main__`, its functions travel to the executors by value: nothing of tests/ is imported
there."""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

NAMESPACE = "db"
TABLE = "db.cluster_events"
REGIONS = ("eu", "us", "ap")
BASE_TS = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("name", pa.string()),
    ]
)
MOR = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}


# The same row in Spark SQL (executors) and in Python (the model): region, day and name by id.
ROW_SQL = (
    "id, CASE id % 3 WHEN 0 THEN 'eu' WHEN 1 THEN 'us' ELSE 'ap' END AS region, {amount} AS amount, "
    "CAST(TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 2 AS INT), "
    "CAST(id % 24 AS INT)) AS TIMESTAMP) AS ts, concat('n', CAST(id AS STRING)) AS name"
)


def model_row(i: int, amount: float) -> tuple[int, str, float, int, str]:
    """(id, region, amount, ts as UTC microseconds, name), as ROW_SQL makes it."""
    ts = BASE_TS + dt.timedelta(days=i % 2, hours=i % 24)
    return (i, REGIONS[i % 3], amount, (ts - EPOCH) // dt.timedelta(microseconds=1), f"n{i}")


def rows_of(table: pa.Table) -> list[tuple[Any, ...]]:
    """Sorted (id, region, amount, ts micros, name) tuples of an Arrow table of ARROW_SCHEMA's columns."""
    cols = [table.column(n) for n in ("id", "region", "amount", "ts", "name")]
    ts = cols[3].cast(pa.timestamp("us", tz=cols[3].type.tz)).cast(pa.int64())  # naive: UTC here
    return sorted(
        zip(
            cols[0].to_pylist(),
            cols[1].to_pylist(),
            cols[2].to_pylist(),
            ts.to_pylist(),
            cols[4].to_pylist(),
        )
    )


def _spark_df_rows(df: Any) -> list[tuple[Any, ...]]:
    return rows_of(pa.Table.from_pandas(df.toPandas(), preserve_index=False))


def _task_record(ui: str, app_id: str) -> dict[str, Any]:
    """Every task Spark ran, by stage name: (executor id, host); from the driver's REST API."""
    import urllib.request

    def get(path: str) -> Any:
        with urllib.request.urlopen(f"{ui}/api/v1/applications/{app_id}/{path}", timeout=30) as r:
            return json.loads(r.read())

    def at(st: dict[str, Any], key: str) -> dt.datetime:
        return dt.datetime.strptime(st[key].replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z")

    def seconds(st: dict[str, Any]) -> float:
        return (at(st, "completionTime") - at(st, "submissionTime")).total_seconds()

    executors: dict[str, list[str]] = {}
    stages = get("stages?status=complete")
    for st in stages:
        tasks = get(f"stages/{st['stageId']}/{st['attemptId']}/taskList?length=100000")
        for t in tasks:
            executors.setdefault(t["executorId"], []).append(st["name"])
    slowest = sorted(stages, key=seconds, reverse=True)[:8]
    t0 = min((at(st, "submissionTime") for st in stages), default=None)
    return {
        "t0": None if t0 is None else t0.timestamp(),
        "timeline": sorted(
            (
                round((at(st, "submissionTime") - t0).total_seconds(), 1),
                seconds(st),
                st["name"],
                st["numTasks"],
            )
            for st in stages
            if t0 is not None
        ),
        "slowest_stages": [(st["stageId"], st["name"], st["numTasks"], seconds(st)) for st in slowest],
        "stages": len(stages),
        "tasks_by_executor": {k: len(v) for k, v in executors.items()},
        "executors": [
            {"id": e["id"], "host": e["hostPort"], "tasks": e["totalTasks"]} for e in get("allexecutors")
        ],
    }


PROBE_SCHEMA = (
    "part long, pid long, executor string, cwd string, driver_root_seen string, catalog_db_visible boolean"
)


def _probe(driver_root: str) -> Any:
    """A mapInArrow function reporting, from inside a task, which process runs it."""

    def probe(batches: Any) -> Any:
        import os

        import pyarrow as pa

        def ancestry() -> list[str]:
            out, pid = [], os.getppid()
            for _ in range(6):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
                    with open(f"/proc/{pid}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except OSError:
                    break
                out.append(cmd)
                if ppid <= 1:
                    break
                pid = ppid
            return out

        catalog_db = os.path.join(driver_root, "catalog.db")
        for b in batches:
            jvm = [c for c in ancestry() if "java" in c.split(" ", 1)[0]]
            executor = next((c for c in jvm if "CoarseGrainedExecutorBackend" in c), "")
            words = executor.split()
            exec_id = words[words.index("--executor-id") + 1] if "--executor-id" in words else ""
            try:
                seen = sorted(os.listdir(driver_root))
            except OSError as e:
                seen = [f"<{type(e).__name__}>"]
            yield pa.RecordBatch.from_pydict(
                {
                    "part": b.column(0),
                    "pid": [os.getpid()] * b.num_rows,
                    "executor": [exec_id] * b.num_rows,
                    "cwd": [os.getcwd()] * b.num_rows,
                    "driver_root_seen": [json.dumps(seen)] * b.num_rows,
                    "catalog_db_visible": [os.path.exists(catalog_db)] * b.num_rows,
                }
            )

    return probe


def driver_main(config: str) -> None:
    cfg = json.loads(config)
    driver_root = cfg["driver_root"]
    os.environ["PYSPARK_PYTHON"] = sys.executable  # the executors' Python (the driver's own)
    import icefloe
    import icefloe.spark as ispark
    from icefloe.partitioning import PartitionField, PartitionSpec
    from icefloe.spark._parquet_source import S3_MIN_MEAN_CONF
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(cfg["master"])
        .appName("icefloe-cluster-test")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.local.dir", f"{driver_root}/spark-local")
        .config("spark.executor.memory", "768m")
        .config("spark.executor.cores", "1")
        .config("spark.cores.max", "2")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.executorEnv.TZ", "UTC")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.ui.enabled", "true")  # its REST API lists where every task ran
        .config("spark.ui.port", "0")
        .config("spark.ui.showConsoleProgress", "false")
        # Hadoop's S3A connector (hadoop-aws, its AWS SDK), shipped to the executors by Spark
        .config("spark.jars", ",".join(cfg["s3a_jars"]))
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    sc = spark.sparkContext
    deadline = time.monotonic() + 180
    while len(sc._jsc.sc().statusTracker().getExecutorInfos()) < 3:  # the driver + 2 executors
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster's 2 executors did not register within 180 s")
        time.sleep(0.5)

    started = time.monotonic()
    result: dict[str, Any] = {"driver_pid": os.getpid(), "steps": [["executors up", 0, 0.0]]}
    cat = icefloe.load_catalog(
        cfg["catalog_name"],
        type="sql",
        uri=f"sqlite:///{driver_root}/catalog.db",
        warehouse=cfg["warehouse"],
        **cfg["s3"],
    )
    cat.create_namespace(NAMESPACE)
    spec = PartitionSpec(
        PartitionField(2, 1000, "identity", "region"),
        PartitionField(4, 1001, "day", "ts_day"),
    )
    t = cat.create_table(TABLE, schema=ARROW_SCHEMA, partition_spec=spec, properties=MOR)
    result["step_epochs"] = [["table created", time.time()]]

    model: dict[int, tuple[Any, ...]] = {}

    def check(step: str, df: Any = None, expected: list[tuple[Any, ...]] | None = None) -> None:
        got = _spark_df_rows(df if df is not None else ispark.read(spark, cat.load_table(TABLE)))
        want = sorted(model.values()) if expected is None else sorted(expected)
        if got != want:
            missing = sorted(set(want) - set(got))[:5]
            extra = sorted(set(got) - set(want))[:5]
            raise AssertionError(
                f"{step}: {len(got)} rows, not {len(want)}; missing {missing}, extra {extra}"
            )
        result["steps"].append([step, len(got), round(time.monotonic() - started, 1)])
        result.setdefault("step_epochs", []).append([step, time.time()])

    # 1. a partitioned append whose rows are made on the executors (4 input partitions)
    n = 3000
    ispark.append(spark.range(0, n, 1, 4).selectExpr(*_row_sql("CAST(id * 1.5 AS DOUBLE)")), t)
    model.update({i: model_row(i, i * 1.5) for i in range(n)})
    check("append")

    # 2. a filtered read
    filtered = ispark.read(spark, cat.load_table(TABLE), row_filter="region = 'eu' and id < 1000")
    check("read eu id<1000", filtered, [r for r in model.values() if r[1] == "eu" and r[0] < 1000])

    # 3. merge-on-read deletes (position-delete files written by the executors)
    ispark.delete(spark, cat.load_table(TABLE), "id >= 100 and id < 400")
    ispark.delete(spark, cat.load_table(TABLE), "region = 'us' and amount > 4000")
    model = {i: r for i, r in model.items() if not (100 <= i < 400) and not (r[1] == "us" and r[2] > 4000)}
    summary = cat.load_table(TABLE).current_snapshot().summary
    assert int(summary["added-position-deletes"]) > 0, summary
    check("delete merge-on-read")

    # 4. MERGE: update matched amounts, insert the rest (merge-on-read)
    src = spark.range(2900, 3100, 1, 2).selectExpr(*_row_sql("CAST(-id AS DOUBLE)"))
    b = ispark.merge(src, cat.load_table(TABLE), "target.id = source.id")
    b.when_matched_update({"amount": "source.amount"})
    b.when_not_matched_insert({c: f"source.{c}" for c in ARROW_SCHEMA.names})
    metrics = b.execute()
    for i in range(2900, 3100):
        model[i] = model_row(i, float(-i))
    result["merge"] = {"updated": metrics.rows_updated, "inserted": metrics.rows_inserted}
    check("merge")

    # 5. upsert by key: equality deletes + new rows, written on the executors
    keys = list(range(0, 60, 5)) + list(range(3095, 3110))
    up = spark.createDataFrame([(k,) for k in keys], "id long").repartition(2)
    up = up.selectExpr(*_row_sql("CAST(1000000 + id AS DOUBLE)"))
    # (every partition source column must be a join column of a merge-on-read upsert)
    ispark.upsert(up, cat.load_table(TABLE), join_cols=["id", "region", "ts"])
    for k in keys:
        model[k] = model_row(k, float(1_000_000 + k))
    summary = cat.load_table(TABLE).current_snapshot().summary
    assert int(summary.get("added-equality-deletes", 0)) > 0, summary
    check("upsert")

    # 6. UPDATE (merge-on-read): the changed rows read and rewritten by the executors
    ispark.update(spark, cat.load_table(TABLE), "region = 'eu' and id < 600", {"amount": "amount + 0.5"})
    for i, r in list(model.items()):
        if r[1] == "eu" and i < 600:
            model[i] = (*r[:2], r[2] + 0.5, *r[3:])
    check("update")

    # 7. dynamic partition overwrite: the partitions of the new rows (region 'ap', 2024-01-02) replaced
    new_rows = spark.range(5000, 5150, 1, 2).where("id % 6 = 5").selectExpr(*_row_sql("-1.0D"))
    ispark.overwrite(new_rows, cat.load_table(TABLE))
    model = {i: r for i, r in model.items() if not (r[1] == "ap" and i % 2 == 1)}
    model.update({i: model_row(i, -1.0) for i in range(5000, 5150) if i % 6 == 5})
    check("overwrite partitions")

    # 8. a read whose plan travels as RDD rows (one task's bytes per partition), not in the closure
    spark_read = sys.modules["icefloe.spark.read"]  # (the package's `read` is the function)
    inline, spark_read.INLINE_TASK_BYTES = spark_read.INLINE_TASK_BYTES, 0
    try:
        check("read, tasks as RDD rows")
    finally:
        spark_read.INLINE_TASK_BYTES = inline
    md = cat.load_table(TABLE)
    count = ispark.read(spark, md, selected_fields=[]).count()
    assert count == len(model), (count, len(model))
    # With the default minimum mean file size, this table's small files on S3 take the Rust reader.
    result["s3_reasons"] = sorted(set(ispark.plan_read(spark, md).rust_files.values()))

    # 9. the S3 table's delete-free files through Spark's Parquet source and the S3A connector
    # on the executors, with the catalog's settings carried in the read's options (the
    # executors' Hadoop configuration has no S3 setting); the files with deletes in Rust
    spark.conf.set(S3_MIN_MEAN_CONF, "0")
    try:
        plan = ispark.plan_read(spark, md)
        result["s3a_paths"] = {
            "spark": sorted(plan.spark_files),
            "rust": sorted(set(plan.rust_files.values())),
            "plan": plan.frame()._jdf.queryExecution().executedPlan().toString(),
        }
        check("read of the S3 table, Spark's S3A reader and Rust", plan.frame())
    finally:
        spark.conf.unset(S3_MIN_MEAN_CONF)

    # 10. a table on the nodes' shared disk: its files without deletes take Spark's Parquet
    # source on the executors, by field id (a renamed column), the rest the Rust reader
    local = icefloe.load_catalog("nodes", type="filesystem", warehouse=f"{cfg['nodes_root']}/localwh")
    local.create_namespace(NAMESPACE)
    lt = local.create_table(TABLE, schema=ARROW_SCHEMA, partition_spec=spec, properties=MOR)
    ispark.append(ispark.read(spark, md), lt)
    ispark.delete(spark, local.load_table(TABLE), "region = 'us' and id < 700")
    with local.load_table(TABLE).update_schema() as u:
        u.rename_column("amount", "amount_renamed")
    lt = local.load_table(TABLE)
    plan = ispark.plan_read(spark, lt)
    result["local_paths"] = {"spark": len(plan.spark_files), "rust": sorted(set(plan.rust_files.values()))}
    assert plan.spark_files and plan.rust_files and set(plan.rust_files.values()) == {"deletes"}, plan
    expected = [r for r in model.values() if not (r[1] == "us" and r[0] < 700)]
    renamed_back = plan.frame().withColumnRenamed("amount_renamed", "amount")
    check("read of a local table, Spark's Parquet source and Rust", renamed_back, expected)

    # where the work ran
    probe_df = spark.range(0, 8, 1, 8).mapInArrow(_probe(driver_root), PROBE_SCHEMA)
    result["probe"] = [r.asDict() for r in probe_df.collect()]
    result["tasks"] = _task_record(sc.uiWebUrl, sc.applicationId)
    # Shuffle files of an icefloe read, held (referenced) during the scan: Spark's cleaner
    # deletes a shuffle's files once its DataFrame is garbage, so without this the
    # executors' block-manager files the scan must look at may already be gone.
    held = ispark.read(spark, md, selected_fields=["id", "region"]).repartition(2)
    held.count()
    result["scan_while_running"] = files_holding(
        cfg["s3"]["s3.secret-access-key"], driver_root, cfg["nodes_root"]
    )
    del held
    result["expected"] = sorted(model.values())
    result["metadata_location"] = md.metadata_location
    Path(cfg["result"]).write_text(json.dumps(result))
    spark.stop()


def files_holding(secret: str, *roots: str) -> dict[str, Any]:
    """The files under `roots` (recursively) and those whose bytes hold `secret`."""
    files = [p for root in roots for p in Path(root).rglob("*") if p.is_file()]
    return {
        "files": [str(p) for p in files],
        "holding": [str(p) for p in files if secret.encode() in p.read_bytes()],
    }


def _row_sql(amount: str) -> list[str]:
    """ROW_SQL's column expressions, with `amount` as given."""
    return [c.strip() for c in _split_top_level(ROW_SQL.format(amount=amount))]


def _split_top_level(sql: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in sql:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    out.append(cur)
    return out


if __name__ == "__main__":
    driver_main(sys.stdin.read())
