"""`make bench-tpch`: the 22 TPC-H queries on twin tables, Iceberg Java's vs icefloe's.

Data: DuckDB's `tpch` extension (PyPI `duckdb-extension-tpch`) at `--sf` (default 1). Each
table is written twice with the same number of data files: by Iceberg Java's Spark runtime
(`oracle` catalog) and by icefloe (`table.append`, one file per chunk). Each query runs over
temp views: Java's tables through its catalog, icefloe's through `icefloe.spark.read` with no
`selected_fields` (as a SQL user has them); and as `icefloe.spark.sql` text after
`icefloe.spark.sql(spark, "USE bench.tpch")` (side `sql`: icefloe resolves the names, reads
only the columns each query uses and pushes its WHERE conjuncts); with `--rust-only`, also with
every file through icefloe's Rust reader (`icefloe.read.spark-parquet.enabled=false`), today's
path before Spark's Parquet source.

Each query runs once to warm up and to compare rows (they must be Java's), then `--reps`
times per side, alternating; the table prints the best time per side and the ratio, the
join strategies of both final plans, and the total. A second part times a 5,000,000-row
scan with no deletes, `sum(amount)`, Java vs icefloe on the same (Java-written) table, and
on PySpark 4 `format("icefloe")` beside them: each query from the table's name (Java parses,
loads and plans in the query; icefloe loads, plans and builds its read), `--scan-warmups`
untimed rounds, then `--scan-rounds` rounds with the engines alternating; best and median
of each, and their ratios to Java's. At ~0.1 s a query, one run's noise is ~10 ms: the
median of many interleaved rounds is the figure to quote. `--scan-only` skips TPC-H.

Runs on the PySpark of the interpreter (`make bench-tpch` runs it on 3.5 and 4.1).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _spark import bench_session, create_orders_table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.oracle import assert_same_rows, canonical_rows_from_spark
from support.tpch import tpch_data

FILES = {"lineitem": 8, "orders": 4, "partsupp": 2, "customer": 2, "part": 2}
JOINS = (
    "BroadcastHashJoin",
    "SortMergeJoin",
    "ShuffledHashJoin",
    "BroadcastNestedLoopJoin",
    "CartesianProduct",
)


def _chunks(table: Any, n: int) -> list[Any]:
    step = -(-table.num_rows // n)
    return [table.slice(i, step) for i in range(0, table.num_rows, step)]


def _joins(df: Any) -> str:
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    found = Counter(j for j in JOINS for _ in re.finditer(rf"\b{j}\b", plan))
    return " ".join(
        f"{k.replace('Join', '').replace('Broadcast', 'B')}x{v}" for k, v in sorted(found.items())
    )


def _timed(fn: Any) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    import icefloe

    ap = argparse.ArgumentParser()
    ap.add_argument("--sf", type=float, default=1.0)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rust-only", action="store_true", help="also time every file through the Rust reader")
    ap.add_argument("--queries", default="", help="comma-separated query numbers (default: all 22)")
    ap.add_argument("--scan-rows", type=int, default=5_000_000)
    ap.add_argument("--scan-warmups", type=int, default=8)
    ap.add_argument("--scan-rounds", type=int, default=20)
    ap.add_argument("--scan-only", action="store_true", help="only the 5,000,000-row scan, no TPC-H")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="icefloe-tpch-"))
    warehouse = work / "warehouse"
    spark = bench_session("icefloe-bench-tpch", warehouse, memory="8g")
    spark.sparkContext.setLogLevel("ERROR")
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(warehouse))
    spark.sql("CREATE NAMESPACE IF NOT EXISTS oracle.db")
    catalog.create_namespace("tpch")
    try:
        if not args.scan_only:
            _tpch(spark, catalog, work, args)
        _scan(spark, catalog, warehouse, args)
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


def _tpch(spark: Any, catalog: Any, work: Path, args: argparse.Namespace) -> None:
    """The 22 queries on twin tables, best of `--reps` per side and query."""
    import icefloe
    import icefloe.spark
    import pyarrow.parquet as pq
    import pyspark
    from icefloe.spark._parquet_source import ENABLED_CONF

    t0 = time.perf_counter()
    tables, queries = tpch_data(args.sf)
    print(
        f"TPC-H SF{args.sf:g} generated in {time.perf_counter() - t0:.1f} s (PySpark {pyspark.__version__})"
    )
    t0 = time.perf_counter()
    for name, data in tables.items():
        n = FILES.get(name, 1)
        folder = work / "staging" / name
        folder.mkdir(parents=True)
        for i, chunk in enumerate(_chunks(data, n)):
            pq.write_table(chunk, folder / f"part-{i}.parquet")
        spark.read.parquet(str(folder)).repartition(n).writeTo(f"oracle.db.j_{name}").using(
            "iceberg"
        ).create()
        table = catalog.create_table(f"tpch.{name}", data.schema)
        for chunk in _chunks(data, n):
            table.append(chunk)
    del tables
    print(f"twin tables written in {time.perf_counter() - t0:.1f} s")

    def views(side: str) -> None:
        for name in FILES.keys() | {"nation", "region", "supplier"}:
            if side == "java":
                df = spark.table(f"oracle.db.j_{name}")
            else:
                df = icefloe.spark.read(spark, catalog.load_table(f"tpch.{name}"))
            df.createOrReplaceTempView(name)

    names = FILES.keys() | {"nation", "region", "supplier"}
    icefloe.spark.sql(spark, "USE bench.tpch", catalogs={"bench": catalog})

    def run(side: str, q: str) -> Any:
        spark.conf.set(ENABLED_CONF, "false" if side == "rust" else "true")
        if side == "sql":  # no temp views: the names are icefloe's tables
            for name in names:
                spark.catalog.dropTempView(name)
            df = icefloe.spark.sql(spark, q, catalogs={"bench": catalog})
            return df, df.collect()
        views(side)
        df = spark.sql(q)
        rows = df.collect()
        return df, rows

    sides = ["java", "icefloe", "sql"] + (["rust"] if args.rust_only else [])
    wanted = [int(x) for x in args.queries.split(",") if x] or list(range(1, 23))
    best: dict[str, dict[int, float]] = {s: {} for s in sides}
    joins: dict[str, dict[int, str]] = {s: {} for s in sides}
    for qn in wanted:
        q = queries[qn - 1]
        java_df, java_rows = run("java", q)
        expected = canonical_rows_from_spark(java_rows, java_df.schema)
        for side in sides:
            df, got = run(side, q)
            joins[side][qn] = _joins(df)
            if side != "java":
                assert_same_rows(canonical_rows_from_spark(got, df.schema), expected, context=f"Q{qn} {side}")
        for _ in range(args.reps):
            for side in sides:
                t = _timed(lambda side=side, q=q: run(side, q))
                best[side][qn] = min(best[side].get(qn, float("inf")), t)
        ratio = best["icefloe"][qn] / best["java"][qn]
        extra = f"  sql {best['sql'][qn]:6.2f}s {best['sql'][qn] / best['java'][qn]:5.2f}x"
        extra += f"  rust-only {best['rust'][qn]:.2f}s" if args.rust_only else ""
        same = "same" if joins["icefloe"][qn] == joins["java"][qn] else "DIFFERENT"
        print(
            f"Q{qn:<2} java {best['java'][qn]:6.2f}s  icefloe {best['icefloe'][qn]:6.2f}s  "
            f"ratio {ratio:5.2f}x{extra}   joins {same}: java [{joins['java'][qn]}] "
            f"icefloe [{joins['icefloe'][qn]}]",
            flush=True,
        )
    tj, ti = sum(best["java"].values()), sum(best["icefloe"].values())
    print(f"TOTAL java {tj:.2f}s icefloe {ti:.2f}s ratio {ti / tj:.2f}x (best of {args.reps} per query)")
    ts = sum(best["sql"].values())
    print(f"TOTAL icefloe.spark.sql {ts:.2f}s ratio {ts / tj:.2f}x")
    if args.rust_only:
        tr = sum(best["rust"].values())
        print(f"TOTAL rust-only icefloe {tr:.2f}s ratio {tr / tj:.2f}x")


def _scan(spark: Any, catalog: Any, warehouse: Path, args: argparse.Namespace) -> None:
    """A 5M-row scan, no deletes: sum(amount), Java vs icefloe on Java's table."""
    import statistics

    import icefloe
    import icefloe.spark
    import pyspark
    from icefloe.spark._parquet_source import ENABLED_CONF

    create_orders_table(spark, "oracle.db.orders", args.scan_rows, files=4)
    table = catalog.load_table("db.orders")  # Java's table, read through its warehouse
    spark.conf.set(ENABLED_CONF, "true")

    def java_sum() -> Any:
        return spark.sql("SELECT sum(amount) FROM oracle.db.orders").collect()[0][0]

    def ice_sum() -> Any:
        return (
            icefloe.spark.read(spark, catalog.load_table("db.orders")).agg({"amount": "sum"}).collect()[0][0]
        )

    def source_sum() -> Any:
        df = spark.read.format("icefloe").load("bench.db.orders")
        return df.agg({"amount": "sum"}).collect()[0][0]

    sums = {"java": java_sum, "icefloe.spark.read": ice_sum}
    if int(pyspark.__version__.split(".")[0]) >= 4:
        spark.conf.set("icefloe.catalog.bench.type", "filesystem")
        spark.conf.set("icefloe.catalog.bench.warehouse", str(warehouse))
        icefloe.spark.register(spark)
        sums['format("icefloe")'] = source_sum
    want = java_sum()
    for label, fn in sums.items():
        assert abs(fn() - want) < 1e-6 * abs(want), label
    del table
    for _ in range(args.scan_warmups):
        for fn in sums.values():
            fn()
    times: dict[str, list[float]] = {label: [] for label in sums}
    for _ in range(args.scan_rounds):
        for label, fn in sums.items():
            times[label].append(_timed(fn))
    best = {label: min(ts) for label, ts in times.items()}
    median = {label: statistics.median(ts) for label, ts in times.items()}
    for label in sums:
        print(
            f"SCAN {args.scan_rows} rows sum(amount) (PySpark {pyspark.__version__}): {label} "
            f"best {best[label]:.3f}s ratio {best[label] / best['java']:.2f}x, "
            f"median {median[label]:.3f}s ratio {median[label] / median['java']:.2f}x "
            f"({args.scan_rounds} rounds after {args.scan_warmups} warm-ups)"
        )


if __name__ == "__main__":
    main()
