"""Merge-on-read read benchmark: icefloe against Iceberg Java on Spark, PyIceberg and raw pyarrow.

A 5,000,000-row unpartitioned v2 table written by Iceberg Java (order_id, order_date, quantity,
product_id, purchaser, amount); then a merge-on-read DELETE of 10% of the rows (position
deletes), then an equality delete of another 10% through the Java API (as Flink's upsert writer).
Times, best of N (Spark queries after warm-up runs of both engines, the two engines' runs
alternating, each query from the table's name), in one run on the same data:

- Iceberg Java on Spark: count(*) and sum(amount)
- icefloe on the same Spark session (icefloe.spark.read): count(*) and sum(amount)
- icefloe in process: scan(selected_fields=(order_id, amount)).to_arrow()
- PyIceberg to_arrow of the same two columns (position-delete snapshot only: it refuses
  equality deletes)
- raw pyarrow: the same two columns of the same data files, no deletes (the floor)

Run with `make bench-read` (data cached under .cache/bench_read/); BENCH_FORMAT_VERSION=3
runs it on a format-v3 copy, where the position deletes are deletion vectors.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from _spark import bench_session, create_orders_table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

ROWS = int(os.environ.get("BENCH_ROWS", "5000000"))
REPEAT = int(os.environ.get("BENCH_REPEAT", "10"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "5"))
CACHE = ROOT / ".cache" / "bench_read"
# BENCH_FORMAT_VERSION=3: the same table as format v3 (Java's DELETE writes deletion vectors).
VERSION = int(os.environ.get("BENCH_FORMAT_VERSION", "2"))
WAREHOUSE = CACHE / (f"warehouse_{ROWS}" if VERSION == 2 else f"warehouse_{ROWS}_v{VERSION}")
TABLE = "db.orders"


def best(fn: Callable[[], Any], repeat: int = REPEAT) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def best_interleaved(
    a: Callable[[], Any], b: Callable[[], Any], repeat: int = REPEAT
) -> tuple[tuple[float, float, Any], tuple[float, float, Any]]:
    """best/median/result of a and of b, run alternately so that a noisy stretch of a shared
    machine falls on both."""
    runs: tuple[list[float], list[float]] = ([], [])
    out: list[Any] = [None, None]
    for _ in range(repeat):
        for i, fn in enumerate((a, b)):
            t0 = time.perf_counter()
            out[i] = fn()
            runs[i].append(time.perf_counter() - t0)
    return (
        (min(runs[0]), statistics.median(runs[0]), out[0]),
        (min(runs[1]), statistics.median(runs[1]), out[1]),
    )


def ingestion_floor(spark: Any, rows: int, partitions: int) -> Any:
    """A DataFrame of `rows` doubles (`amount`) out of mapInArrow over `partitions` tasks, each
    making its batches in the worker: Spark's cost of taking rows from Python, no reading."""
    from icefloe.spark._worker import prepare_worker
    from pyspark.sql.types import DoubleType, StructField, StructType

    def make(batches: Any) -> Any:
        import numpy as np

        prepare_worker()  # the same worker set-up icefloe's tasks get
        for batch in batches:
            for i in batch.column(0).to_pylist():
                left = rows // partitions + (1 if i < rows % partitions else 0)
                while left:
                    k = min(left, 1 << 16)
                    yield pa.RecordBatch.from_arrays([pa.array(np.arange(k, dtype=np.float64))], ["amount"])
                    left -= k

    schema = StructType([StructField("amount", DoubleType())])
    return spark.range(0, partitions, 1, partitions).mapInArrow(make, schema)


def antijoin_rows(
    spark: Any, catalog: Any, snap: int, expected_sum: float
) -> list[tuple[str, float, float, str]]:
    """Issue 41's alternative for files with position deletes: Spark's own Parquet source with
    each row's `_metadata.file_path` / `row_index`, anti-joined with the deleted positions (the
    position delete files read by Spark too), against icefloe.spark.read (the Rust reader in
    mapInArrow, deletes applied in Rust); sum(amount) at the position-delete snapshot, the two
    alternating. Every data file of that snapshot has deletes."""
    import icefloe.spark
    from pyspark.sql import functions as F

    plan = catalog.load_table(TABLE).scan(snapshot_id=snap).plan_files()
    data = sorted({t.file_path for t in plan})
    deletes = sorted({d for t in plan for d in t.delete_paths})
    assert deletes, "the snapshot has no position deletes"

    def path(c: Any) -> Any:  # Hadoop's URI and Iceberg's path of one file, made alike
        return F.regexp_replace(c, "^file:(//)?", "")

    def antijoin(broadcast: bool) -> Any:
        rows = spark.read.parquet(*data).select(
            "amount",
            path(F.col("_metadata.file_path")).alias("fp"),
            F.col("_metadata.row_index").alias("pos"),
        )
        gone = spark.read.parquet(*deletes).select(path(F.col("file_path")).alias("fp"), "pos")
        joined = rows.join(F.broadcast(gone) if broadcast else gone, ["fp", "pos"], "left_anti")
        return joined.agg(F.sum("amount")).collect()[0][0]

    def rust() -> Any:
        t = catalog.load_table(TABLE)
        df = icefloe.spark.read(spark, t, selected_fields=("amount",), snapshot_id=snap)
        return df.agg(F.sum("amount")).collect()[0][0]

    out = []
    for broadcast in (False, True):
        for _ in range(WARMUP):
            antijoin(broadcast)
            rust()
        (rb, rm, rv), (ab, am, av) = best_interleaved(rust, lambda b=broadcast: antijoin(b))
        for v in (rv, av):
            assert abs(v - expected_sum) < 1e-6 * max(1.0, abs(expected_sum)), (v, expected_sum)
        join = "broadcast" if broadcast else "Spark's choice of"
        out += [
            (
                "icefloe.spark.read sum(amount), pos (Rust reader)",
                rb,
                rm,
                f"{len(data)} files, all with deletes",
            ),
            (f"Parquet + row_index, {join} anti-join", ab, am, f"{ab / rb:.2f}x the Rust reader (best)"),
        ]
    return out


def spark_session() -> Any:
    return bench_session("icefloe-read-bench", WAREHOUSE)


def build_table(spark: Any) -> None:
    from support.java_commits import commit_eq_delete

    marker = WAREHOUSE / "READY"
    if marker.exists():
        return
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    WAREHOUSE.mkdir(parents=True)
    q = f"oracle.{TABLE}"
    create_orders_table(spark, q, ROWS, files=4, version=VERSION)
    # 10% position deletes (merge-on-read DELETE), then 10% equality deletes on order_id.
    spark.sql(f"DELETE FROM {q} WHERE order_id % 10 = 3")
    keys = ((k,) for k in range(ROWS) if k % 10 == 7)
    commit_eq_delete(str(WAREHOUSE), TABLE, ["order_id"], keys)
    marker.write_text("ok")


def main() -> None:
    import icefloe
    import icefloe.spark

    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    build_table(spark)
    q = f"oracle.{TABLE}"
    snaps = [
        r.snapshot_id
        for r in spark.sql(f"SELECT snapshot_id FROM {q}.snapshots ORDER BY committed_at").collect()
    ]
    pos_snap, eq_snap = snaps[-2], snaps[-1]
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE))
    table = catalog.load_table(TABLE)
    rows: list[tuple[str, float, float, str]] = []

    # -- the floor: raw pyarrow over the same data files (no deletes) --
    data_files = [
        r.file_path.removeprefix("file:")
        for r in spark.sql(f"SELECT file_path FROM {q}.data_files").collect()
    ]

    def floor() -> pa.Table:
        return pa.concat_tables(pq.read_table(p, columns=["order_id", "amount"]) for p in data_files)

    b, m, t = best(floor)
    rows.append(("raw pyarrow, 2 columns, no deletes (floor)", b, m, f"{t.num_rows} rows"))
    floor_best = b

    # -- icefloe in process, both snapshots --
    results: dict[str, Any] = {}
    for label, snap in (("pos deletes", pos_snap), ("pos + eq deletes", eq_snap)):
        scan = table.scan(selected_fields=("order_id", "amount"), snapshot_id=snap)
        b, m, t = best(scan.to_arrow)
        s = pc.sum(t.column("amount")).as_py()
        results[f"icefloe {snap}"] = (t.num_rows, s)
        rows.append((f"icefloe to_arrow, {label}", b, m, f"{t.num_rows} rows; {b / floor_best:.2f}x floor"))
    in_process_ratio = rows[-1][1] / floor_best

    # -- PyIceberg (position deletes only) --
    try:
        from pyiceberg.table import StaticTable

        md = sorted(
            (WAREHOUSE / "db" / "orders" / "metadata").glob("v*.metadata.json"),
            key=lambda p: int(p.name[1:].split(".")[0]),
        )
        pyt = StaticTable.from_metadata(str(md[-1]))
        pscan = pyt.scan(selected_fields=("order_id", "amount"), snapshot_id=pos_snap)
        b, m, t = best(pscan.to_arrow, repeat=max(REPEAT // 2, 1))
        rows.append(
            ("PyIceberg to_arrow, pos deletes", b, m, f"{t.num_rows} rows; {b / floor_best:.2f}x floor")
        )
        assert t.num_rows == results[f"icefloe {pos_snap}"][0], "PyIceberg and icefloe disagree"
    except ImportError:
        rows.append(("PyIceberg", float("nan"), float("nan"), "not installed"))
    except Exception as e:  # e.g. a format it does not read (v3 deletion vectors)
        rows.append(("PyIceberg", float("nan"), float("nan"), f"refused: {type(e).__name__}: {e}"[:120]))

    # -- Spark: Java vs icefloe, same session, count(*) and sum(amount) --
    # Each timed query starts from the table's name, as a user's query does: Java parses,
    # loads the table (the catalog cache is off) and plans in the query; icefloe loads the
    # table and plans in icefloe.spark.read. Spark prunes Java's scan to the columns a query
    # reads (none for count(*), amount for sum(amount)) but cannot see through mapInArrow, so
    # icefloe is told them as a user would: selected_fields (empty for count(*)).
    spark_ratio: list[float] = []
    spark_median_ratio: list[float] = []
    for label, snap in (("pos", pos_snap), ("pos+eq", eq_snap)):

        def java_df(snap: int = snap) -> Any:
            return spark.sql(f"SELECT order_id, amount FROM {q} VERSION AS OF {snap}")

        def ice_df(fields: tuple[str, ...], snap: int = snap) -> Any:
            t = catalog.load_table(TABLE)
            return icefloe.spark.read(spark, t, selected_fields=fields, snapshot_id=snap)

        queries: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("count(*)", lambda: java_df().count(), lambda: ice_df(()).count()),
            (
                "sum(amount)",
                lambda: java_df().agg({"amount": "sum"}).collect()[0][0],
                lambda: ice_df(("amount",)).agg({"amount": "sum"}).collect()[0][0],
            ),
        ]
        for what, java_q, ice_q in queries:
            # Warm both engines first (JIT, Python workers, delete caches): Java's count(*)
            # keeps getting faster for its first ~10 runs in one session.
            for _ in range(WARMUP):
                java_q()
                ice_q()
            (jb, jm, jv), (ib, im, iv) = best_interleaved(java_q, ice_q)
            if what == "count(*)":
                assert jv == iv == results[f"icefloe {snap}"][0], (jv, iv)
            else:
                assert abs(jv - iv) < 1e-6 * max(1.0, abs(jv)), (jv, iv)
                assert abs(iv - results[f"icefloe {snap}"][1]) < 1e-6 * max(1.0, abs(iv))
            rows.append((f"Java on Spark {what}, {label}", jb, jm, f"= {jv}"))
            rows.append((f"icefloe on Spark {what}, {label}", ib, im, f"{ib / jb:.2f}x Java"))
            spark_ratio.append(ib / jb)
            spark_median_ratio.append(im / jm)
            if what == "sum(amount)" and label == "pos":
                # What Spark costs to take this many rows out of mapInArrow with no reading at
                # all: batches made in the worker, same row count, same partitions.
                n = ice_df(("amount",)).rdd.getNumPartitions()
                floor_rows = results[f"icefloe {snap}"][0]
                fdf = ingestion_floor(spark, floor_rows, n)

                def floor_sum(fdf: Any = fdf) -> Any:
                    return fdf.agg({"amount": "sum"}).collect()[0][0]

                for _ in range(WARMUP):
                    floor_sum()
                fb, fm, _ = best(floor_sum)
                note = f"{floor_rows} made-up doubles, {n} tasks; {fb / jb:.2f}x Java"
                rows.append(("Spark mapInArrow floor: sum, no read", fb, fm, note))

    rows += antijoin_rows(spark, catalog, pos_snap, results[f"icefloe {pos_snap}"][1])

    print(f"\nread benchmark: {ROWS:,} rows, best of {REPEAT} after {WARMUP} warm-up runs", end="")
    print(" (median in brackets)\n")
    print(f"| {'what':<45} | {'best s':>8} | {'median s':>8} | notes |")
    print(f"|{'-' * 47}|{'-' * 10}|{'-' * 10}|-------|")
    for what, b, m, note in rows:
        print(f"| {what:<45} | {b:8.3f} | {m:8.3f} | {note} |")
    print(f"\nin process (pos+eq) / floor = {in_process_ratio:.2f}x (bar 2.5x)")
    print(
        f"on Spark icefloe / Java: worst {max(spark_ratio):.2f}x of best times, "
        f"{max(spark_median_ratio):.2f}x of medians (bar 1.0x)"
    )
    spark.stop()


if __name__ == "__main__":
    main()
