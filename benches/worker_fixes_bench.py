"""Are the worker fixes of `icefloe/spark/_worker.py` still worth it? Each one switched off in
turn, on the PySpark this runs under (`make bench-worker` runs it on 3.5 and on 4.x).

The fixes remove per-task costs of PySpark's Python workers (a zipimport re-read of
pyspark.zip, a full gc after every task, Nagle plus delayed ACK on the worker's socket), so
the table here has many small tasks: 48 data files of 20,000 rows (icefloe-written,
unpartitioned) and a split target small enough that each file is one task. The query is
`icefloe.spark.read(...).agg(sum(amount))` (every task reads one column and returns one
row's worth of work to Spark), and a count(*).

A fix's environment switch reaches the executors' Python workers only through the process
that starts Spark, so each configuration runs in a child process with its own session;
configurations are interleaved round by round (the machine is shared and noisy), and each
child runs WARMUP queries before it times REPEAT. Printed: median and best query time per
configuration over all rounds, and the ratio to the configuration with every fix on (a fix
that still pays shows a ratio above 1 when it is off).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WAREHOUSE = ROOT / ".cache" / "bench_worker"
TABLE = "bench.orders_small_files"
FILES = 48
ROWS_PER_FILE = 20_000
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "7"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "3"))

SWITCHES = ("ICEFLOE_WORKER_ZIPIMPORT_FIX", "ICEFLOE_WORKER_GC_FREEZE", "ICEFLOE_WORKER_TCP_TUNING")
CONFIGS: dict[str, dict[str, str]] = {
    "all fixes on": {},
    "zipimport fix off": {"ICEFLOE_WORKER_ZIPIMPORT_FIX": "0"},
    "gc freeze off": {"ICEFLOE_WORKER_GC_FREEZE": "0"},
    "tcp tuning off": {"ICEFLOE_WORKER_TCP_TUNING": "0"},
    "all fixes off": {name: "0" for name in SWITCHES},
}
QUERIES = ("sum(amount)", "count(*)")


def build_table() -> None:
    import icefloe
    import pyarrow as pa

    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE))
    if catalog.table_exists(TABLE):
        return
    catalog.create_namespace_if_not_exists("bench")
    schema = pa.schema([("order_id", pa.int64()), ("amount", pa.float64()), ("purchaser", pa.string())])
    table = catalog.create_table(TABLE, schema, properties={"read.split.target-size": str(64 * 1024)})
    for f in range(FILES):
        ids = pa.array(range(f * ROWS_PER_FILE, (f + 1) * ROWS_PER_FILE), pa.int64())
        batch = pa.table(
            {
                "order_id": ids,
                "amount": pa.array([i * 0.5 for i in range(ROWS_PER_FILE)], pa.float64()),
                "purchaser": pa.array([f"user_{i % 1000}" for i in range(ROWS_PER_FILE)]),
            },
            schema=schema,
        )
        table.append(batch)


def child() -> None:
    """One configuration's session: WARMUP then REPEAT timed runs of each query; prints JSON."""
    sys.path.insert(0, str(ROOT / "benches"))
    import icefloe
    import icefloe.spark
    from _spark import bench_session
    from pyspark.sql import functions as F

    spark = bench_session("icefloe-worker-fixes", WAREHOUSE)
    spark.sparkContext.setLogLevel("ERROR")
    table = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE)).load_table(TABLE)
    expected = FILES * ROWS_PER_FILE

    def run(query: str) -> None:
        if query == "count(*)":
            n = icefloe.spark.read(spark, table, selected_fields=()).count()
            assert n == expected, (n, expected)
        else:
            df = icefloe.spark.read(spark, table, selected_fields=("amount",))
            total = df.agg(F.sum("amount")).collect()[0][0]
            assert total == FILES * sum(i * 0.5 for i in range(ROWS_PER_FILE)), total

    partitions = icefloe.spark.read(spark, table, selected_fields=("amount",)).rdd.getNumPartitions()
    times: dict[str, list[float]] = {}
    for query in QUERIES:
        for _ in range(WARMUP):
            run(query)
        for _ in range(REPEAT):
            t0 = time.perf_counter()
            run(query)
            times.setdefault(query, []).append(time.perf_counter() - t0)
    spark.stop()
    print("RESULT " + json.dumps({"partitions": partitions, "times": times}))


def main() -> None:
    import pyspark

    build_table()
    results: dict[str, dict[str, list[float]]] = {name: {} for name in CONFIGS}
    partitions = 0
    for r in range(ROUNDS):
        for name, env_changes in CONFIGS.items():
            env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
            env.update(env_changes)
            out = subprocess.run(
                [sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=False
            )
            lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
            if out.returncode != 0 or not lines:
                failed = f"configuration {name!r} failed (exit {out.returncode})"
                raise SystemExit(f"{failed}:\n{out.stderr[-4000:]}")
            got = json.loads(lines[-1][len("RESULT ") :])
            partitions = got["partitions"]
            for query, ts in got["times"].items():
                results[name].setdefault(query, []).extend(ts)
            print(f"round {r + 1}/{ROUNDS}: {name} done", file=sys.stderr, flush=True)
    print(
        f"PySpark {pyspark.__version__}, Python {sys.version.split()[0]}: "
        f"{FILES} files x {ROWS_PER_FILE} rows, "
        f"{partitions} tasks per query; {ROUNDS} rounds x {REPEAT} runs per configuration"
    )
    base = {q: statistics.median(results["all fixes on"][q]) for q in QUERIES}
    print(f"{'configuration':<20} {'query':<12} {'median s':>9} {'best s':>8} {'median / all-on':>16}")
    for name in CONFIGS:
        for query in QUERIES:
            ts = results[name][query]
            med = statistics.median(ts)
            print(f"{name:<20} {query:<12} {med:>9.3f} {min(ts):>8.3f} {med / base[query]:>16.2f}")


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        main()
