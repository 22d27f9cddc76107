"""`format("icefloe")` on PySpark 4 against Iceberg Java and `icefloe.spark.read`, on the
same session and data: bench-read's 5,000,000-row merge-on-read table (written by Iceberg
Java; 10% position deletes, then 10% equality deletes), its last snapshot.

Queries, each from the table's name, the three engines' runs interleaved after warm-up,
best and median of N: count(*), sum(amount), and a full read of every column
(`DataFrame.write.format("noop")`). Java's scan is pruned by Spark; a Python data source
cannot be pruned by Spark, so `format("icefloe")` is told the columns as
`icefloe.spark.read` is (`selected-fields`), and the full read compares all three on the
same columns.

Bars (issue 15): format("icefloe") at most Java's time, and within 1.1x of icefloe.spark.read.
Run with `make bench-datasource` (PySpark 4 in .venv4; the table is cached under
.cache/bench_read/).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _spark import bench_session

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

REPEAT = int(os.environ.get("BENCH_REPEAT", "7"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "3"))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def main() -> None:
    import icefloe
    import icefloe.spark
    import read_bench

    spark = bench_session("icefloe-datasource-bench", read_bench.WAREHOUSE)
    spark.sparkContext.setLogLevel("ERROR")
    read_bench.build_table(spark)
    warehouse = str(read_bench.WAREHOUSE)
    spark.conf.set("icefloe.catalog.bench.warehouse", warehouse)
    icefloe.spark.register(spark)
    q = f"oracle.{read_bench.TABLE}"
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=warehouse)
    snap = catalog.load_table(read_bench.TABLE).metadata.current_snapshot_id

    def java(cols: str) -> Any:
        return spark.sql(f"SELECT {cols} FROM {q} VERSION AS OF {snap}")

    def source(fields: str | None) -> Any:
        r = spark.read.format("icefloe").option("snapshot-id", snap)
        if fields is not None:
            r = r.option("selected-fields", fields)
        return r.load(f"bench.{read_bench.TABLE}")

    def mapinarrow(fields: tuple[str, ...] | None) -> Any:
        t = catalog.load_table(read_bench.TABLE)
        return icefloe.spark.read(spark, t, selected_fields=fields, snapshot_id=snap)

    queries: list[tuple[str, list[tuple[str, Callable[[], Any]]]]] = [
        (
            "count(*)",
            [
                ("Java", lambda: java("order_id").count()),
                ("format(icefloe)", lambda: source("order_id").count()),
                ("icefloe.spark.read", lambda: mapinarrow(("order_id",)).count()),
            ],
        ),
        (
            "sum(amount)",
            [
                ("Java", lambda: java("amount").agg({"amount": "sum"}).collect()[0][0]),
                ("format(icefloe)", lambda: source("amount").agg({"amount": "sum"}).collect()[0][0]),
                (
                    "icefloe.spark.read",
                    lambda: mapinarrow(("amount",)).agg({"amount": "sum"}).collect()[0][0],
                ),
            ],
        ),
        (
            "all columns (noop write)",
            [
                ("Java", lambda: java("*").write.format("noop").mode("overwrite").save()),
                ("format(icefloe)", lambda: source(None).write.format("noop").mode("overwrite").save()),
                (
                    "icefloe.spark.read",
                    lambda: mapinarrow(None).write.format("noop").mode("overwrite").save(),
                ),
            ],
        ),
    ]
    print(f"\ndata source benchmark: PySpark {spark.version}, snapshot {snap}, best/median of {REPEAT}\n")
    print(f"| {'query':<26} | {'engine':<20} | {'best s':>7} | {'median s':>8} | vs Java | vs spark.read |")
    print(f"|{'-' * 28}|{'-' * 22}|{'-' * 9}|{'-' * 10}|---------|---------------|")
    for what, engines in queries:
        for _ in range(WARMUP):
            for _name, fn in engines:
                fn()
        times: dict[str, list[float]] = {name: [] for name, _ in engines}
        results: dict[str, Any] = {}
        for _ in range(REPEAT):
            for name, fn in engines:
                t, out = timed(fn)
                times[name].append(t)
                results[name] = out
        if what != "all columns (noop write)":
            values = list(results.values())
            assert all(abs(v - values[0]) < 1e-6 * max(1.0, abs(values[0])) for v in values), results
        java_best = min(times["Java"])
        read_best = min(times["icefloe.spark.read"])
        for name, _fn in engines:
            b, m = min(times[name]), statistics.median(times[name])
            print(
                f"| {what:<26} | {name:<20} | {b:7.3f} | {m:8.3f} | {b / java_best:6.2f}x "
                f"| {b / read_best:12.2f}x |"
            )


if __name__ == "__main__":
    main()
