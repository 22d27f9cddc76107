"""Streaming sink benchmark: icefloe's foreachBatch sink against Iceberg Java's streaming sink.

The same 200 Parquet files of 10,000 rows (id long, ts timestamp, amount double, purchaser
string, qty int; generated once into .cache/bench_streaming/input) are streamed with
`maxFilesPerTrigger=1` (200 micro-batches of 10,000 rows, `Trigger.AvailableNow`) in the same
Spark session into two unpartitioned tables of the `oracle` catalog:

- Iceberg Java: `writeStream.format("iceberg").outputMode("append").toTable("oracle.db.<t>")`
- icefloe: `writeStream.foreachBatch(icefloe.spark.batch_writer(table))`

Per batch: Spark's own `durationMs.addBatch` from the query's progress reports (the sink's
whole time for the batch: the Spark job writing the files, then the driver's commit), best
and median over the 200 batches, and the ratio; plus, timed inside the sink, icefloe's
whole writer call and its driver-side commit alone (`commit_batch_result`), and Iceberg Java's
commit alone: the `totalDuration` of the CommitReport its LoggingMetricsReporter logs for
every snapshot (`SnapshotProducer.commit`: manifests, manifest list, metadata, catalog swap;
Java's check for an already committed epoch comes before it and is not counted, while
icefloe's replay check is inside `commit_batch_result`). The order of the
two engines alternates between rounds (BENCH_ROUNDS, default 2; each round a fresh pair of
tables). Both tables must end with the same 2,000,000 rows, one snapshot per batch.
On PySpark >= 4 (`make bench-streaming4`) a third table is fed through the data source's
sink, `writeStream.format("icefloe")`, timed the same way.
Run with `make bench-streaming`.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _spark import bench_session

ROOT = Path(__file__).resolve().parent.parent
BATCHES = int(os.environ.get("BENCH_BATCHES", "200"))
ROWS = int(os.environ.get("BENCH_BATCH_ROWS", "10000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
CACHE = ROOT / ".cache" / "bench_streaming"
WAREHOUSE = CACHE / "warehouse"
INPUT = CACHE / f"input_{BATCHES}x{ROWS}"
DDL = "id bigint, ts timestamp, amount double, purchaser string, qty int"


# Iceberg's LoggingMetricsReporter (INFO) into its own file; everything else at Spark's level.
LOG4J2 = """
rootLogger.level = error
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
appender.commits.type = File
appender.commits.name = commits
appender.commits.fileName = {path}
appender.commits.layout.type = PatternLayout
appender.commits.layout.pattern = %m%n
logger.commits.name = org.apache.iceberg.metrics.LoggingMetricsReporter
logger.commits.level = info
logger.commits.additivity = false
logger.commits.appenderRef.commits.ref = commits
"""
COMMIT_LOG = CACHE / "java_commit_reports.log"
_REPORT = re.compile(
    r"CommitReport\{tableName=(?P<table>[^,]+),.*?commitMetrics=CommitMetricsResult\{"
    r"totalDuration=TimerResult\{timeUnit=\w+, totalDuration=(?P<duration>PT[^,]+), count=1\}"
)
_ISO = re.compile(r"PT(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?(?:(?P<s>[\d.]+)S)?$")


def java_commit_ms(table: str) -> list[float]:
    """Iceberg Java's commit durations (ms) for `table`, in commit order, from its CommitReports."""
    out = []
    for line in COMMIT_LOG.read_text().splitlines():
        m = _REPORT.search(line)
        if m and m.group("table").endswith(table):
            d = _ISO.match(m.group("duration"))
            if d is None:
                raise RuntimeError(f"unexpected duration in a CommitReport: {m.group('duration')}")
            secs = int(d.group("h") or 0) * 3600 + int(d.group("m") or 0) * 60 + float(d.group("s") or 0)
            out.append(secs * 1000)
    return out


def make_input() -> None:
    if INPUT.exists():
        return
    tmp = INPUT.with_suffix(".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    rng = np.random.default_rng(7)
    start = 1_704_067_200_000_000
    for k in range(BATCHES):
        ids = np.arange(k * ROWS, (k + 1) * ROWS, dtype=np.int64)
        t = pa.table(
            {
                "id": pa.array(ids, pa.int64()),
                "ts": pa.array(start + rng.integers(0, 86_400_000_000, ROWS), pa.timestamp("us", tz="UTC")),
                "amount": pa.array(rng.random(ROWS) * 1000, pa.float64()),
                "purchaser": pa.array(
                    [f"user_{i % 100_000}" for i in rng.integers(0, 10**9, ROWS)], pa.string()
                ),
                "qty": pa.array(rng.integers(1, 100, ROWS), pa.int32()),
            }
        )
        path = tmp / f"part-{k:05d}.parquet"
        pq.write_table(t, path)
        os.utime(path, (1_000_000 + k, 1_000_000 + k))  # the file source's order: by time
    tmp.rename(INPUT)


def stream(spark: Any) -> Any:
    return spark.readStream.schema(DDL).option("maxFilesPerTrigger", 1).parquet(str(INPUT))


def run_query(writer: Any, checkpoint: Path, table: str | None = None) -> list[float]:
    """Runs a query to the end of the input (into `table` by `toTable` when given);
    `durationMs.addBatch` of each batch."""
    shutil.rmtree(checkpoint, ignore_errors=True)
    w = writer.option("checkpointLocation", str(checkpoint)).trigger(availableNow=True)
    q = w.start() if table is None else w.toTable(table)
    q.awaitTermination()
    if q.exception() is not None:
        raise RuntimeError(f"query failed: {q.exception()}")
    times = [float(p["durationMs"]["addBatch"]) for p in q.recentProgress if p["numInputRows"] > 0]
    if len(times) != BATCHES:
        raise RuntimeError(f"expected {BATCHES} batches with rows, found {len(times)}")
    return times


def run_java(spark: Any, name: str) -> list[float]:
    spark.sql(f"CREATE TABLE oracle.db.{name} ({DDL}) USING iceberg TBLPROPERTIES ('format-version'='2')")
    w = stream(spark).writeStream.format("iceberg").outputMode("append")
    return run_query(w, CACHE / "checkpoints" / name, f"oracle.db.{name}")


def run_icefloe(spark: Any, catalog: Any, name: str) -> tuple[list[float], list[float], list[float]]:
    import icefloe.spark
    from icefloe.write import streaming_commit as _streaming_commit

    spark.sql(f"CREATE TABLE oracle.db.{name} ({DDL}) USING iceberg TBLPROPERTIES ('format-version'='2')")
    table = catalog.load_table(f"db.{name}")
    commits: list[float] = []
    original = _streaming_commit.commit_batch_result

    def timed(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            commits.append((time.perf_counter() - t0) * 1000)

    _streaming_commit.commit_batch_result = timed  # type: ignore[assignment]
    try:
        writer = icefloe.spark.batch_writer(table)
        calls: list[float] = []

        def each(df: Any, batch_id: int) -> None:
            t0 = time.perf_counter()
            writer(df, batch_id)
            calls.append((time.perf_counter() - t0) * 1000)

        w = stream(spark).writeStream.foreachBatch(each)
        times = run_query(w, CACHE / "checkpoints" / name)
    finally:
        _streaming_commit.commit_batch_result = original  # type: ignore[assignment]
    return times, commits, calls


def run_datasource(spark: Any, name: str) -> list[float]:
    """PySpark >= 4: the `format("icefloe")` streaming sink (DataSourceStreamWriter)."""
    import icefloe.spark

    spark.sql(f"CREATE TABLE oracle.db.{name} ({DDL}) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.conf.set("icefloe.catalog.bench.warehouse", str(WAREHOUSE))
    icefloe.spark.register(spark)
    w = stream(spark).writeStream.format("icefloe").option("path", f"bench.db.{name}")
    return run_query(w, CACHE / "checkpoints" / name)


def check_same(spark: Any, java: str, ours: str) -> None:
    for name in (java, ours):
        n = spark.sql(f"SELECT count(*) AS n, count(DISTINCT id) AS d FROM oracle.db.{name}").collect()[0]
        if n["n"] != BATCHES * ROWS or n["d"] != BATCHES * ROWS:
            raise RuntimeError(f"{name}: {n['n']} rows, {n['d']} distinct ids; expected {BATCHES * ROWS}")
        snaps = spark.sql(f"SELECT count(*) AS n FROM oracle.db.{name}.snapshots").collect()[0]["n"]
        if snaps != BATCHES:
            raise RuntimeError(f"{name}: {snaps} snapshots, expected one per batch ({BATCHES})")
    a, b = f"oracle.db.{java}", f"oracle.db.{ours}"
    diff = spark.sql(
        f"SELECT count(*) AS n FROM ((SELECT * FROM {a} EXCEPT ALL SELECT * FROM {b}) "
        f"UNION ALL (SELECT * FROM {b} EXCEPT ALL SELECT * FROM {a}))"
    ).collect()[0]["n"]
    if diff:
        raise RuntimeError(f"{java} and {ours} differ in {diff} rows")


def main() -> None:
    import icefloe

    make_input()
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    COMMIT_LOG.unlink(missing_ok=True)
    log4j = CACHE / "log4j2-bench.properties"
    log4j.write_text(LOG4J2.replace("{path}", str(COMMIT_LOG)))
    spark = bench_session(
        "icefloe-streaming-bench",
        WAREHOUSE,
        "4g",
        **{
            "spark.sql.shuffle.partitions": "2",
            "spark.sql.streaming.numRecentProgressUpdates": str(BATCHES + 50),
            "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile=file:{log4j}",
        },
    )
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS oracle.db")
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE))
    java_all: list[float] = []
    java_commit_all: list[float] = []
    ours_all: list[float] = []
    commit_all: list[float] = []
    call_all: list[float] = []
    import pyspark

    with_source = int(pyspark.__version__.split(".")[0]) >= 4
    source_all: list[float] = []
    for r in range(ROUNDS):
        java, ours = f"java_{r}", f"ours_{r}"
        order: tuple[str, ...] = ("java", "icefloe") if r % 2 == 0 else ("icefloe", "java")
        if with_source:
            order = (*order, "source") if r % 2 == 0 else ("source", *order)
        for engine in order:
            t0 = time.perf_counter()
            if engine == "java":
                times = run_java(spark, java)
                java_all += times
            elif engine == "source":
                times = run_datasource(spark, f"source_{r}")
                source_all += times
            else:
                times, commits, calls = run_icefloe(spark, catalog, ours)
                ours_all += times
                commit_all += commits
                call_all += calls
            wall = time.perf_counter() - t0
            print(
                f"round {r} {engine:8s} addBatch best {min(times):7.1f} ms  "
                f"median {statistics.median(times):7.1f} ms  ({BATCHES} batches, {wall:.1f} s wall)",
                flush=True,
            )
        check_same(spark, java, ours)
        java_commits = java_commit_ms(f"db.{java}")
        if len(java_commits) != BATCHES:
            found = f"{len(java_commits)} CommitReports of {java} in {COMMIT_LOG}"
            raise RuntimeError(f"{found}, expected {BATCHES}")
        java_commit_all += java_commits
        if with_source:
            check_same(spark, java, f"source_{r}")
    jb, jm = min(java_all), statistics.median(java_all)
    ib, im = min(ours_all), statistics.median(ours_all)
    print(f"\n{BATCHES} micro-batches of {ROWS:,} rows, {ROUNDS} round(s), per-batch sink time (addBatch):")
    print(f"  Iceberg Java  writeStream.format('iceberg')  best {jb:7.1f} ms  median {jm:7.1f} ms")
    print(f"  icefloe       foreachBatch(batch_writer)     best {ib:7.1f} ms  median {im:7.1f} ms")
    print(f"  ratio icefloe/Java: best {ib / jb:.2f}x  median {im / jm:.2f}x")
    if source_all:
        sb, sm = min(source_all), statistics.median(source_all)
        print(f"  icefloe       writeStream.format('icefloe')  best {sb:7.1f} ms  median {sm:7.1f} ms")
        print(f"  ratio format('icefloe')/Java: best {sb / jb:.2f}x  median {sm / jm:.2f}x")
    print(
        f"  icefloe inside foreachBatch (refresh, check, Spark write job, commit): "
        f"best {min(call_all):.1f} ms  median {statistics.median(call_all):.1f} ms"
    )
    print(
        f"  icefloe driver-side commit_batch alone: best {min(commit_all):.1f} ms  "
        f"median {statistics.median(commit_all):.1f} ms"
    )
    cb, cm = min(java_commit_all), statistics.median(java_commit_all)
    print(f"  Iceberg Java commit alone (CommitReport totalDuration): best {cb:.1f} ms  median {cm:.1f} ms")
    print(
        f"  ratio commit alone icefloe/Java: best {min(commit_all) / cb:.2f}x  "
        f"median {statistics.median(commit_all) / cm:.2f}x"
    )
    spark.stop()


if __name__ == "__main__":
    main()
