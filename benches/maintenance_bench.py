"""Maintenance benchmarks: icefloe against Iceberg Java's Spark procedures on the same table
(built once, kept as a pristine copy and restored before every run, restore and a sync of
the file system not timed).

- `expire` (`make bench-expire`): a table of 1,010 snapshots, each an overwrite replacing
  the table's rows (one new data file, its manifest and manifest list); expiring all but the
  last 10 (`older_than=now, retain_last=10`) removes 1,000 snapshots and every file only they
  reached. `table.maintenance.expire_snapshots` vs `CALL system.expire_snapshots`.
- `orphans` (`make bench-orphans`): 100,000 files under the table location in 100 folders,
  half of them referenced by the table (one commit of 50,000 data files; the files are
  stand-ins: neither engine opens a data file to find orphans), half orphans, all four days
  old; `older_than` two days ago. `table.maintenance.remove_orphan_files` vs
  `CALL system.remove_orphan_files`.

- `stats` (`make bench-stats`): the 10,000,000-row table of the row-level benchmarks (id,
  purchaser, amount, qty; 8 files, written by Java), distinct-value sketches of its 4 columns
  on Spark: `table.maintenance.compute_table_stats(spark=spark)` vs
  `CALL system.compute_table_stats`. Both estimates checked within 5% of the true counts
  after every run. Bar: at most 0.5x Java's time (BENCH_ROWS, default 10,000,000).

Both engines deliver the same result (checked after every run: the same files deleted).
Timed: loading the table plus the operation (Java's procedure loads its table too). One
untimed warm-up run of each engine first; then best and median of BENCH_REPEAT (default 3)
runs with the ratios. Bar: at most 0.2x Java's time. Environment: BENCH_SNAPSHOTS (1010),
BENCH_FILES (100000), BENCH_REPEAT.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
from _spark import bench_session

ROOT = Path(__file__).resolve().parent.parent
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
CACHE = ROOT / ".cache" / "bench_maintenance"
WAREHOUSE = CACHE / "warehouse"
BAR = 0.2
DAY = 86400


def visible(root: Path) -> set[str]:
    out = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "_"))]
        out.update(os.path.relpath(os.path.join(d, f), root) for f in files if not f.startswith((".", "_")))
    return out


def report(name: str, ours: list[float], java: list[float], bar: float = BAR) -> None:
    best = min(ours) / min(java)
    med = statistics.median(ours) / statistics.median(java)
    verdict = "met" if best <= bar else "MISSED"
    print(
        f"{name:<34} icefloe best {min(ours):7.3f}s median {statistics.median(ours):7.3f}s | "
        f"Java best {min(java):7.3f}s median {statistics.median(java):7.3f}s | "
        f"ratio best {best:.3f}x median {med:.3f}x (bar {bar}x: {verdict})",
        flush=True,
    )


class Twin:
    """A table directory and its pristine copy."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pristine = CACHE / (root.name + ".pristine")

    def keep(self) -> None:
        shutil.rmtree(self.pristine, ignore_errors=True)
        shutil.copytree(self.root, self.pristine)

    def restore(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.pristine, self.root)
        # The copy's 100,000 new inodes and folder blocks are written back before the timed
        # run starts, so neither engine's deletes wait on the previous copy's writeback.
        os.sync()


def run_pairs(
    name: str, twin: Twin, ours: Callable[[], Any], java: Callable[[], Any], check: Callable[[set[str]], None]
) -> None:
    times: dict[str, list[float]] = {"ours": [], "java": []}
    deleted: dict[str, set[str]] = {}
    for i in range(REPEAT + 1):
        for engine, fn in (("ours", ours), ("java", java)):
            twin.restore()
            before = visible(twin.root)
            t0 = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - t0
            gone = before - visible(twin.root)
            check(gone)
            if engine in deleted and deleted[engine] != gone:
                raise SystemExit(f"{engine} deleted different files in run {i}")
            deleted[engine] = gone
            if i > 0:  # run 0 warms both engines
                times[engine].append(elapsed)
        if deleted["ours"] != deleted["java"]:
            raise SystemExit(
                f"icefloe and Java deleted different files: {len(deleted['ours'])} vs {len(deleted['java'])}"
            )
    report(name, times["ours"], times["java"])


def bench_expire(spark: Any, catalog: Any) -> None:
    import icefloe  # noqa: F401

    n = int(os.environ.get("BENCH_SNAPSHOTS", "1010"))
    ident = f"db.expire_{n}"
    twin = Twin(WAREHOUSE / "db" / f"expire_{n}")
    if not twin.pristine.exists():
        print(f"building a table of {n} snapshots (once, cached in {twin.pristine}) ...", flush=True)
        shutil.rmtree(twin.root, ignore_errors=True)
        schema = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.string())])
        t = catalog.create_table(
            ident, schema=schema, properties={"write.metadata.previous-versions-max": "10"}
        )
        for i in range(n):
            rows = pa.table({"id": list(range(i, i + 100)), "v": [f"snapshot {i}"] * 100}, schema=schema)
            t.overwrite(rows, "true")  # every snapshot replaces the table's rows
        time.sleep(0.01)
        twin.keep()
    expected_removed = n - 10

    def ours() -> None:
        t = catalog.load_table(ident)
        r = t.maintenance.expire_snapshots(older_than=time.time_ns() // 1_000_000, retain_last=10)
        if len(r.expired_snapshot_ids) != expected_removed:
            raise SystemExit(f"icefloe expired {len(r.expired_snapshot_ids)} snapshots")

    def java() -> None:
        now = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time.time() + 1))
        spark.sql(
            f"CALL oracle.system.expire_snapshots(table => '{ident}', older_than => TIMESTAMP '{now}', "
            "retain_last => 10)"
        ).collect()

    def check(gone: set[str]) -> None:
        lists = sum(1 for g in gone if Path(g).name.startswith("snap-"))
        if lists != expected_removed:
            raise SystemExit(f"{lists} manifest lists deleted, expected {expected_removed}")

    print(f"expire_snapshots: {expected_removed} of {n} snapshots", flush=True)
    run_pairs(f"expire {expected_removed} of {n} snapshots", twin, ours, java, check)


def bench_orphans(spark: Any, catalog: Any) -> None:
    from icefloe import _native

    total = int(os.environ.get("BENCH_FILES", "100000"))
    ident = f"db.orphans_{total}"
    twin = Twin(WAREHOUSE / "db" / f"orphans_{total}")
    folders = 100
    if not twin.pristine.exists():
        print(f"building a table location of {total} files (once, cached in {twin.pristine}) ...", flush=True)
        shutil.rmtree(twin.root, ignore_errors=True)
        schema = pa.schema([pa.field("id", pa.int64())])
        t = catalog.create_table(ident, schema=schema)
        referenced = []
        for i in range(total // 2):
            folder = twin.root / "data" / f"f{i % folders:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"live-{i:06d}.parquet").write_bytes(b"x")
            (folder / f"orphan-{i:06d}.parquet").write_bytes(b"y")
            referenced.append(str(folder / f"live-{i:06d}.parquet"))
        descriptor = {
            "content": "Data", "file_format": "Parquet", "partition": [], "record_count": 1,
            "file_size_in_bytes": 1, "column_sizes": {}, "value_counts": {}, "null_value_counts": {},
            "nan_value_counts": {}, "lower_bounds": {}, "upper_bounds": {}, "key_metadata": None,
            "split_offsets": None, "equality_ids": None, "sort_order_id": None,
            "referenced_data_file": None, "spec_id": 0,
        }  # fmt: skip
        descriptors = [json.dumps({**descriptor, "file_path": p}) for p in referenced]
        t._commit(lambda base: _native.fast_append(base, descriptors))
        old = time.time() - 4 * DAY
        for d, _, files in os.walk(twin.root):
            for f in files:
                os.utime(os.path.join(d, f), (old, old))
        twin.keep()
    older_than_s = time.time() - 2 * DAY
    expected = total // 2

    def ours() -> None:
        t = catalog.load_table(ident)
        r = t.maintenance.remove_orphan_files(older_than=int(older_than_s * 1000))
        if r.orphan_files_count != expected:
            raise SystemExit(f"icefloe found {r.orphan_files_count} orphans, expected {expected}")

    def java() -> None:
        ts = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(older_than_s))
        spark.sql(
            f"CALL oracle.system.remove_orphan_files(table => '{ident}', older_than => TIMESTAMP '{ts}')"
        ).collect()

    def check(gone: set[str]) -> None:
        if len(gone) != expected or not all(Path(g).name.startswith("orphan-") for g in gone):
            raise SystemExit(f"{len(gone)} files deleted, expected the {expected} orphans")

    print(f"remove_orphan_files: {total} files, {expected} orphans", flush=True)
    run_pairs(f"remove_orphan_files over {total} files", twin, ours, java, check)


def bench_stats(spark: Any, catalog: Any) -> None:
    """compute_table_stats of 4 columns on Spark, icefloe vs Java's procedure, alternating
    (one untimed warm-up run of each first). Each run replaces the snapshot's statistics file
    (both engines register theirs for the same snapshot); the estimates are checked."""
    rows = int(os.environ.get("BENCH_ROWS", "10000000"))
    ident = f"db.stats_{rows}"
    if not catalog.table_exists(ident):
        print(f"building a table of {rows:,} rows (once, kept in {WAREHOUSE}) ...", flush=True)
        spark.sql(
            f"CREATE TABLE oracle.{ident} (id bigint, purchaser string, amount double, qty int) USING iceberg"
        )
        spark.sql(
            f"INSERT INTO oracle.{ident} SELECT id * 2, concat('user_', CAST(id % 100000 AS string)), "
            f"CAST(id % 1000 AS double) / 10, CAST(id % 7 AS int) FROM range({rows}) "
            f"DISTRIBUTE BY CAST(id / {max(rows // 8, 1)} AS int)"
        )
    truth = {"id": rows, "purchaser": min(rows, 100000), "amount": min(rows, 1000), "qty": min(rows, 7)}

    def check(engine: str) -> None:
        t = catalog.load_table(ident)
        (stats,) = [f for f in t.statistics() if f.snapshot_id == t.current_snapshot().snapshot_id]
        names = {f.field_id: f.name for f in t.schema().fields}
        got = {names[fid]: ndv for fid, ndv in stats.ndv.items()}
        for column, n in truth.items():
            if abs(got[column] - n) > 0.05 * n:
                raise SystemExit(f"{engine}: {column} estimated {got[column]}, truth {n}")

    def ours() -> None:
        catalog.load_table(ident).maintenance.compute_table_stats(spark=spark)

    def java() -> None:
        spark.sql(f"CALL oracle.system.compute_table_stats(table => '{ident}')").collect()

    times: dict[str, list[float]] = {"ours": [], "java": []}
    for i in range(REPEAT + 1):
        for engine, fn in (("ours", ours), ("java", java)):
            t0 = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - t0
            check(engine)
            if i > 0:  # run 0 warms both engines
                times[engine].append(elapsed)
            print(f"  run {i} {engine}: {elapsed:.2f}s", flush=True)
    report(f"compute_table_stats, {rows:,} rows x 4 columns", times["ours"], times["java"], 0.5)


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "expire"
    benches = {"expire": bench_expire, "orphans": bench_orphans, "stats": bench_stats}
    if which not in benches:
        raise SystemExit("usage: maintenance_bench.py expire|orphans|stats")
    import icefloe

    WAREHOUSE.mkdir(parents=True, exist_ok=True)
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE))
    catalog.create_namespace_if_not_exists("db")
    spark = bench_session(f"maintenance-{which}", WAREHOUSE)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        benches[which](spark, catalog)
    finally:
        spark.stop()


if __name__ == "__main__":
    main()
