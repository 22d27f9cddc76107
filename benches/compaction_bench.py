"""Compaction benchmark (`make bench-compact`): icefloe's `rewrite_data_files` on Spark
executors against Iceberg Java's `CALL system.rewrite_data_files` procedure, same session
(local[2]), twin tables written by Java (creation is not timed).

The table: BENCH_ROWS rows (default 10,000,000) in BENCH_FILES small files (default 2,000)
over 20 partitions (`identity(part)`), 5% of the rows under merge-on-read position deletes
(Java's `DELETE FROM`: 100 delete files at the defaults). Both engines compact with their
defaults (bin-pack, Java's options), so every partition's 100 files become one file, deletes
applied. `BENCH_STRATEGY=sort` compacts with the sort strategy instead (both tables ordered
by `amount`; `BENCH_PARTITIONS=1 BENCH_TARGET_MB=64` makes one large group that both
engines range-partition over many tasks), and times icefloe twice: as it reads by default
(delete-free files of a mean size of 16 MiB or more through Spark's own Parquet source) and
with `icefloe.read.spark-parquet.enabled=false` (every file through the Rust reader).
`BENCH_STRATEGY=zorder` rewrites with the sort strategy and `sort_order => 'zorder(id,
amount)'` (Java's `SparkZOrderFileRewriteRunner` against icefloe's z-values from the Rust read
task; `BENCH_FILES=400 BENCH_PARTITIONS=1` is the issue's 400 files of 10,000,000 rows).
`BENCH_DELETES=0` writes no deletes (every file then qualifies for Spark's reader), and
`BENCH_MIN_MEAN_FILE_BYTES` sets the size rule (0: every delete-free file). After each timed
pair both tables must read back equal (Spark `exceptAll` both ways, read by Java) and hold the
same number of live data files; then both are rolled back to the pre-compaction snapshot
(untimed) for the next run. Best and median of BENCH_REPEAT (default 3) runs and the ratio
are printed. Bar: at most 0.5x Java's time.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _spark import bench_session

ROOT = Path(__file__).resolve().parent.parent
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
ROWS = int(os.environ.get("BENCH_ROWS", "10000000"))
FILES = int(os.environ.get("BENCH_FILES", "2000"))
PARTITIONS = int(os.environ.get("BENCH_PARTITIONS", "20"))
STRATEGY = os.environ.get("BENCH_STRATEGY", "binpack")
TARGET_MB = os.environ.get("BENCH_TARGET_MB")
DELETES = os.environ.get("BENCH_DELETES", "1") != "0"
ZORDER = "zorder(id, amount)"
WAREHOUSE = ROOT / ".cache" / "bench_compaction" / "warehouse"
BAR = 0.5


def create(spark: Any, name: str) -> int:
    """Java writes the table: FILES / PARTITIONS Spark tasks, each writing one file per
    partition; then deletes 5% of the rows. Returns the snapshot to roll back to."""
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(
        f"CREATE TABLE {name} (id bigint, part int, purchaser string, amount double) USING iceberg "
        "PARTITIONED BY (part) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.distribution-mode'='none', 'write.spark.fanout.enabled'='true')"
    )
    tasks = max(1, FILES // PARTITIONS)
    spark.sql(
        f"SELECT id, CAST(id % {PARTITIONS} AS int) AS part, concat('user_', CAST(id % 100000 AS string)) "
        f"AS purchaser, CAST(id % 1000 AS double) / 10 AS amount FROM range({ROWS})"
    ).repartition(tasks).writeTo(name).append()
    if DELETES:
        spark.sql(f"DELETE FROM {name} WHERE id % 20 = 7")
    if STRATEGY == "sort":
        spark.sql(f"ALTER TABLE {name} WRITE ORDERED BY amount")
    # (zorder: the order is the rewrite's own `sort_order`, not the table's)
    return int(
        spark.sql(f"SELECT snapshot_id FROM {name}.snapshots ORDER BY committed_at DESC LIMIT 1").first()[0]
    )


def count_files(spark: Any, name: str) -> tuple[int, int]:
    row = spark.sql(f"SELECT count_if(content = 0), count_if(content != 0) FROM {name}.files").first()
    return int(row[0]), int(row[1])


def main() -> None:
    import icefloe

    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    WAREHOUSE.mkdir(parents=True)
    spark = bench_session("icefloe-bench-compaction", WAREHOUSE)
    spark.sparkContext.setLogLevel("ERROR")
    spark.sql("CREATE NAMESPACE IF NOT EXISTS oracle.db")
    java, ours = "oracle.db.compact_java", "oracle.db.compact_ours"
    start = {t: create(spark, t) for t in (java, ours)}
    files = count_files(spark, ours)
    print(
        f"table: {ROWS:,} rows, {files[0]:,} data files, {files[1]:,} delete files, {PARTITIONS} partitions"
    )
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE))
    expected = spark.table(java).count()

    target = None if TARGET_MB is None else int(TARGET_MB) << 20
    java_options = "" if target is None else f", options => map('target-file-size-bytes', '{target}')"
    strategy, sort_order = ("sort", ZORDER) if STRATEGY == "zorder" else (STRATEGY, None)
    if sort_order is not None:
        java_options += f", sort_order => '{sort_order}'"

    def run_java() -> None:
        spark.sql(
            f"CALL oracle.system.rewrite_data_files(table => 'db.compact_java', strategy => '{strategy}'"
            f"{java_options})"
        )

    def run_ours() -> None:
        catalog.load_table("db.compact_ours").maintenance.rewrite_data_files(
            strategy=strategy, sort_order=sort_order, target_file_size_bytes=target, spark=spark
        )

    def run_ours_rust() -> None:
        spark.conf.set("icefloe.read.spark-parquet.enabled", "false")
        try:
            run_ours()
        finally:
            spark.conf.unset("icefloe.read.spark-parquet.enabled")

    def rollback(tables: tuple[str, ...]) -> None:
        for t in tables:
            spark.sql(f"CALL oracle.system.rollback_to_snapshot('{t.split('.', 1)[1]}', {start[t]})")

    def check(label: str) -> None:
        da, db = spark.table(java), spark.table(ours)
        if da.exceptAll(db).limit(1).count() or db.exceptAll(da).limit(1).count() or db.count() != expected:
            raise SystemExit(f"compacted tables differ ({label})")
        jf, of = count_files(spark, java), count_files(spark, ours)
        # a sort's (and a z-order's) file count follows each engine's size estimate
        if jf[0] != of[0] and STRATEGY == "binpack":
            raise SystemExit(f"live data files differ: Java {jf}, icefloe {of}")
        rollback((ours,))

    # BENCH_MIN_MEAN_FILE_BYTES sets the mean file size from which the sort rewrite reads with
    # Spark's reader (its default: 16 MiB); 0 makes "ours" read every delete-free file with it.
    min_mean = os.environ.get("BENCH_MIN_MEAN_FILE_BYTES")
    if min_mean:
        spark.conf.set("icefloe.rewrite.spark-parquet.min-mean-file-bytes", min_mean)
    runs = [("java", run_java), ("ours", run_ours)]
    if STRATEGY == "sort":  # the read through Spark's Parquet source against the Rust reader alone
        runs.append(("ours_rust", run_ours_rust))
    times: dict[str, list[float]] = {label: [] for label, _ in runs}
    for i in range(REPEAT + 1):  # the first round warms the engines (untimed)
        order = runs[i % len(runs) :] + runs[: i % len(runs)]
        for label, fn in order:
            t0 = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - t0
            if i > 0:
                times[label].append(elapsed)
            if label != "java":
                check(label)
        if i > 0:
            print(f"run {i}: " + ", ".join(f"{k} {v[-1]:.2f}s" for k, v in times.items()), flush=True)
        rollback((java,))
    o, j = times["ours"], times["java"]
    best, med = min(o) / min(j), statistics.median(o) / statistics.median(j)
    print(
        f"compaction ({STRATEGY}) {files[0]} files -> icefloe best {min(o):.2f}s "
        f"median {statistics.median(o):.2f}s | "
        f"Java best {min(j):.2f}s median {statistics.median(j):.2f}s | ratio best {best:.2f}x median "
        f"{med:.2f}x (bar {BAR}x: {'met' if best <= BAR else 'MISSED'})"
    )
    if "ours_rust" in times:
        r = times["ours_rust"]
        print(
            f"icefloe with every file through the Rust reader: best {min(r):.2f}s median "
            f"{statistics.median(r):.2f}s | Spark's reader for the delete-free files / Rust only: best "
            f"{min(o) / min(r):.2f}x median {statistics.median(o) / statistics.median(r):.2f}x"
        )
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
