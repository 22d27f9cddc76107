"""Merge-on-read read benchmark: icefloe against Iceberg Java on Spark, PyIceberg and raw pyarrow.

A 5,000,000-row unpartitioned v2 table written by Iceberg Java (order_id, order_date, quantity,
product_id, purchaser, amount); then a merge-on-read DELETE of 10% of the rows (position
deletes), then an equality delete of another 10% through the Java API (as Flink's upsert writer).
Times, best of N (Spark queries after warm-up runs of both engines), in one run on the same data:

- Iceberg Java on Spark: count(*) and sum(amount)
- icefloe on the same Spark session (icefloe.spark.read): count(*) and sum(amount)
- icefloe in process: scan(selected_fields=(order_id, amount)).to_arrow()
- PyIceberg to_arrow of the same two columns (position-delete snapshot only: it refuses
  equality deletes)
- raw pyarrow: the same two columns of the same data files, no deletes (the floor)

Run with `make bench-read` (data cached under .cache/bench_read/).
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
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "5"))
CACHE = ROOT / ".cache" / "bench_read"
WAREHOUSE = CACHE / f"warehouse_{ROWS}"
TABLE = "db.orders"


def best(fn: Callable[[], Any], repeat: int = REPEAT) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def spark_session() -> Any:
    return bench_session("icefloe-read-bench", WAREHOUSE)


def build_table(spark: Any) -> None:
    from test_merge_on_read import commit_eq_delete

    marker = WAREHOUSE / "READY"
    if marker.exists():
        return
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    WAREHOUSE.mkdir(parents=True)
    q = f"oracle.{TABLE}"
    create_orders_table(spark, q, ROWS, files=4)
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

    # -- Spark: Java vs icefloe, same session, count(*) and sum(amount) --
    spark_ratio = []
    for label, snap in (("pos", pos_snap), ("pos+eq", eq_snap)):
        java_df = spark.sql(f"SELECT order_id, amount FROM {q} VERSION AS OF {snap}")
        # Spark prunes Java's scan to the columns a query reads (none for count(*), amount for
        # sum(amount)) but cannot see through mapInArrow, so icefloe is told them as a user
        # would: selected_fields (empty for count(*): a column-less DataFrame).
        ice_df = icefloe.spark.read(spark, table, selected_fields=("amount",), snapshot_id=snap)
        ice_count_df = icefloe.spark.read(spark, table, selected_fields=(), snapshot_id=snap)
        for what, agg, ice in (
            ("count(*)", lambda d: d.count(), ice_count_df),
            ("sum(amount)", lambda d: d.agg({"amount": "sum"}).collect()[0][0], ice_df),
        ):
            # Warm both engines first (JIT, Python workers, delete caches): Java's count(*)
            # keeps getting faster for its first ~10 runs in one session.
            for _ in range(WARMUP):
                agg(java_df)
                agg(ice)
            jb, jm, jv = best(lambda agg=agg, d=java_df: agg(d))
            ib, im, iv = best(lambda agg=agg, d=ice: agg(d))
            if what == "count(*)":
                assert jv == iv == results[f"icefloe {snap}"][0], (jv, iv)
            else:
                assert abs(jv - iv) < 1e-6 * max(1.0, abs(jv)), (jv, iv)
                assert abs(iv - results[f"icefloe {snap}"][1]) < 1e-6 * max(1.0, abs(iv))
            rows.append((f"Java on Spark {what}, {label}", jb, jm, f"= {jv}"))
            rows.append((f"icefloe on Spark {what}, {label}", ib, im, f"{ib / jb:.2f}x Java"))
            spark_ratio.append(ib / jb)

    print(f"\nread benchmark: {ROWS:,} rows, best of {REPEAT} after {WARMUP} warm-up runs", end="")
    print(" (median in brackets)\n")
    print(f"| {'what':<45} | {'best s':>8} | {'median s':>8} | notes |")
    print(f"|{'-' * 47}|{'-' * 10}|{'-' * 10}|-------|")
    for what, b, m, note in rows:
        print(f"| {what:<45} | {b:8.3f} | {m:8.3f} | {note} |")
    print(f"\nin process (pos+eq) / floor = {in_process_ratio:.2f}x (bar 2.5x)")
    print(f"on Spark icefloe / Java: worst {max(spark_ratio):.2f}x (bar 1.0x)")
    spark.stop()


if __name__ == "__main__":
    main()
