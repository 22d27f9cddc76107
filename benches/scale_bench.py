"""Scale benchmark (issue 44, `make bench-scale`): time and peak memory of icefloe and Iceberg
Java's core API on the same two large tables, every measurement in a fresh process.

Tables (built once through Iceberg Java, cached under .cache/bench_scale/; a pristine copy of
each is restored before every run that changes it):

- `files_1000000`: 1,000,000 metadata-only data files in 1,000 manifests of 1,000 snapshots
  (benches/java/PlanningBench.java `build`: day(ts) partitions, full metrics on 4 columns).
- `snapshots_10000`: 10,000 snapshots, each an overwrite replacing the table's one data file
  (benches/java/ScaleBench.java `snapshots`; the data files are one-byte stand-ins on disk).

Operations, each run in a new process per engine and repeat (BENCH_REPEAT, default 3),
engines alternating, the table's files read once before each run (in the page cache for
both); timed from before the table's load to the operation's end (icefloe's time also covers
`import icefloe`; Java's covers its classes' loading but not the JVM's start):

- plan (1M): every file scan task of the current snapshot, no filter, held in memory
  (Java: `planFiles()` into a list, as Spark's scan holds its tasks; icefloe:
  `table.scan().plan_files()`, tasks held in Rust, no manifest cache).
- files (1M): every row of the `files` metadata table (Java: the metadata table's data tasks
  iterated; icefloe: `table.inspect.files()`, one Arrow table).
- orphans (1M): orphan removal (files older than a day) with 1,000 two-day-old orphans planted
  in the data folder before each run; both engines must delete exactly those (icefloe:
  `table.maintenance.remove_orphan_files`; Java: its Spark action, on a `local[2]` session
  started before the clock starts, as `CALL remove_orphan_files` runs it: Java has no orphan
  removal without Spark, so its peak memory is a Spark driver's).
- expire (1M, 10k): every snapshot but the last (1M: 999 of 1,000 snapshots, no data file
  leaves) or the last 10 (10k: 9,990 snapshots, each with its replaced data file and
  manifests); both engines must delete the same files.
- commit (10k): 20 successive appends of one metadata-only data file to the 10,000-snapshot
  table (Java `newAppend()`, icefloe `Table._commit_data_files`, what `append` commits after
  writing its files); the median commit.

Peak memory: each process's VmHWM (peak resident set) from /proc at its end. Java runs with
its default heap on this machine (a quarter of RAM) unless BENCH_JAVA_HEAP (e.g. 1g, Spark's
default driver heap) is set. Bars (issue 44): planning 1M files cold at most 0.2x Java's time
and at most 0.5x Java's peak memory.

    make bench-scale                       # all of the above
    make bench-scale ARGS="plan files"     # some operations
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench_scale"
WAREHOUSE = CACHE / "warehouse"
REPEAT = int(os.environ.get("BENCH_REPEAT", "3"))
COMMITS = 20
FILES = 1_000_000
SNAPSHOTS = 10_000

sys.path.insert(0, str(ROOT / "tests"))
from planning_bench import classpath  # noqa: E402

# What Spark's launcher opens to it on Java 17 (its JavaModuleOptions): the orphan removal
# mode starts a Spark session in the benchmark's own JVM.
SPARK_OPENS = [
    f"--add-opens=java.base/{p}=ALL-UNNAMED"
    for p in (
        "java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
        "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch",
        "sun.nio.cs", "sun.security.action", "sun.util.calendar",
    )
]  # fmt: skip


def java_cmd(name: str) -> list[str]:
    from support.java import compile_java

    cp = classpath()
    out = compile_java(ROOT / "benches" / "java" / f"{name}.java", cp, CACHE / "java")
    heap = os.environ.get("BENCH_JAVA_HEAP")
    return ["java", *([f"-Xmx{heap}"] if heap else []), *SPARK_OPENS, "-cp", f"{out}:{cp}", name]


def table_dir(name: str) -> Path:
    return WAREHOUSE / "db" / name


def build() -> None:
    files, snaps = table_dir(f"files_{FILES}"), table_dir(f"snapshots_{SNAPSHOTS}")
    for loc, cmd in (
        (files, [*java_cmd("PlanningBench"), "build", str(files), str(FILES), "1000"]),
        (snaps, [*java_cmd("ScaleBench"), "snapshots", str(snaps), str(SNAPSHOTS)]),
    ):
        pristine = loc.with_name(loc.name + ".pristine")
        if pristine.exists():
            continue
        print(f"building {loc.name} (once, cached in {pristine}) ...", flush=True)
        shutil.rmtree(loc, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        shutil.copytree(loc, pristine)
        print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)


def restore(loc: Path) -> None:
    shutil.rmtree(loc, ignore_errors=True)
    shutil.copytree(loc.with_name(loc.name + ".pristine"), loc)
    os.sync()


def warm(loc: Path) -> None:
    """Reads every file of the table once, so that each run starts with it in the page cache
    (this machine's proactive reclaim evicts idle pages: a first read from disk doubled a plan)."""
    for d, _, fs in os.walk(loc):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                while fh.read(1 << 20):
                    pass


def on_disk(loc: Path) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, f), loc)
        for d, _, fs in os.walk(loc)
        for f in fs
        if not f.startswith(".")
    }


# ---- the icefloe side: one operation in this (fresh) process ----
def peak_rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(mode: str, loc: str, arg: str | None) -> None:
    t0 = time.perf_counter()
    import icefloe

    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE))
    table = catalog.load_table(("db", Path(loc).name))
    if mode == "plan":
        count = len(table.scan().plan_files())
    elif mode == "files":
        count = table.inspect.files().num_rows
    elif mode == "orphans":
        older_than = time.time_ns() // 1_000_000 - 86_400_000
        count = table.maintenance.remove_orphan_files(older_than=older_than).orphan_files_count
    elif mode == "expire":
        result = table.maintenance.expire_snapshots(
            older_than=time.time_ns() // 1_000_000 + 1, retain_last=int(arg or 1)
        )
        count = len(result.expired_snapshot_ids)
    elif mode == "append":
        times = []
        for i in range(int(arg or COMMITS)):
            c0 = time.perf_counter()
            table._commit_data_files([stand_in(f"{loc}/data/icefloe-append-{i}.parquet")])
            times.append((time.perf_counter() - c0) * 1000)
        print(f"{statistics.median(times)}\t{len(times)}\t{peak_rss_kb()}")
        print(json.dumps(times))
        return
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(f"{(time.perf_counter() - t0) * 1000}\t{count}\t{peak_rss_kb()}")


def stand_in(path: str) -> str:
    return json.dumps(
        {
            "content": "Data", "file_path": path, "file_format": "Parquet", "partition": [],
            "record_count": 1, "file_size_in_bytes": 1, "column_sizes": {}, "value_counts": {},
            "null_value_counts": {}, "nan_value_counts": {}, "lower_bounds": {}, "upper_bounds": {},
            "key_metadata": None, "split_offsets": None, "equality_ids": None,
            "sort_order_id": None, "referenced_data_file": None, "spec_id": 0,
        }
    )  # fmt: skip


# ---- the driver ----
def run(engine: str, mode: str, loc: Path, arg: str | None) -> tuple[float, int, int, float]:
    """(operation ms, count, peak RSS kB, the whole process's wall ms: start to exit)."""
    if engine == "java":
        cmd = [*java_cmd("ScaleBench"), mode, str(loc), *([arg] if arg else [])]
    else:
        cmd = [sys.executable, __file__, "--child", mode, str(loc), *([arg] if arg else [])]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()
    wall = (time.perf_counter() - t0) * 1000
    ms, count, rss = out[0].split("\t")
    return float(ms), int(count), int(rss), wall


OPS = {
    # name: (table, mode, argument, changes the table)
    "plan": (f"files_{FILES}", "plan", None, False),
    "files": (f"files_{FILES}", "files", None, False),
    "orphans-1m": (f"files_{FILES}", "orphans", None, False),
    "expire-1m": (f"files_{FILES}", "expire", "1", True),
    "expire-10k": (f"snapshots_{SNAPSHOTS}", "expire", "10", True),
    "commit-10k": (f"snapshots_{SNAPSHOTS}", "append", str(COMMITS), True),
}


ORPHANS = 1_000


def plant_orphans(loc: Path) -> set[str]:
    """ORPHANS files two days old under the table's data folder (its million data files are
    metadata only: not on disk), for orphan removal to find; their paths relative to `loc`."""
    folder = loc / "data" / "orphans"
    folder.mkdir(parents=True, exist_ok=True)
    old = time.time() - 2 * 86_400
    planted = set()
    for i in range(ORPHANS):
        f = folder / f"orphan-{i:05d}.parquet"
        f.write_bytes(b"x")
        os.utime(f, (old, old))
        planted.add(os.path.relpath(f, loc))
    return planted


def lazily_kept(loc: Path, extra: list[str], retain: str) -> bool:
    """Whether the files icefloe's expiry deleted and Java's kept are data files that no
    snapshot left after the expiry reads: files replaced by the oldest retained snapshot, which
    Java's incremental cleanup deletes only once that snapshot expires too (it looks for
    removals in expired snapshots), and icefloe as soon as nothing retained reads them."""
    if not extra:
        return True
    import icefloe

    restore(loc)
    subprocess.run(  # Java's expiry, then what its table still references
        [*java_cmd("ScaleBench"), "expire", str(loc), retain], check=True, capture_output=True
    )
    table = icefloe.load_catalog("bench", type="filesystem", warehouse=str(WAREHOUSE)).load_table(
        ("db", loc.name)
    )
    live = set(table.inspect.all_files().column("file_path").to_pylist())
    restore(loc)
    return all(e.startswith("data/") and not any(p.endswith("/" + e) for p in live) for e in extra)


def bench(name: str) -> dict[str, object]:
    table, mode, arg, changes = OPS[name]
    loc = table_dir(table)
    samples: dict[str, list[tuple[float, int, int, float]]] = {"icefloe": [], "java": []}
    removed: dict[str, set[str]] = {}
    for _ in range(REPEAT):
        for engine in ("icefloe", "java"):
            if changes:
                restore(loc)
            planted = plant_orphans(loc) if mode == "orphans" else set()
            warm(loc)
            before = on_disk(loc)
            samples[engine].append(run(engine, mode, loc, arg))
            if mode == "orphans" and before - on_disk(loc) != planted:
                raise SystemExit(f"{name}: {engine} deleted other files than the {ORPHANS} planted orphans")
            if mode == "expire":
                gone = before - on_disk(loc)
                if engine in removed and removed[engine] != gone:
                    raise SystemExit(f"{name}: {engine} deleted different files between runs")
                removed[engine] = gone
    extra: list[str] = []
    if mode == "expire":
        extra = sorted(removed["icefloe"] - removed["java"])
        if removed["java"] - removed["icefloe"] or not lazily_kept(loc, extra, arg or "1"):
            raise SystemExit(
                f"{name}: icefloe deleted {len(removed['icefloe'])} files, Java {len(removed['java'])}; "
                f"only icefloe: {extra[:5]}, only Java: {sorted(removed['java'] - removed['icefloe'])[:5]}"
            )
    counts = {e: {x[1] for x in s} for e, s in samples.items()}
    if counts["icefloe"] != counts["java"] or len(counts["java"]) != 1:
        raise SystemExit(f"{name}: the engines' counts differ: {counts}")
    if changes:
        restore(loc)
    row: dict[str, object] = {"op": name, "count": counts["java"].pop()}
    if mode == "expire":
        row["files deleted"] = len(removed["java"])
        row["deleted by icefloe only"] = len(extra)
    for engine, s in samples.items():
        ms = [x[0] for x in s]
        rss = [x[2] / 1024 for x in s]
        row[engine] = {
            "best ms": min(ms),
            "median ms": statistics.median(ms),
            "peak MB": statistics.median(rss),
            "median process ms": statistics.median(x[3] for x in s),
        }
    return row


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
        return
    names = sys.argv[1:] or list(OPS)
    unknown = [n for n in names if n not in OPS]
    if unknown:
        raise SystemExit(f"unknown operations {unknown}; choose from {list(OPS)}")
    build()
    rows = []
    print(
        f"{'operation':<12}{'count':>9} | {'icefloe best/median ms':>24}{'peak MB':>9} | "
        f"{'Java best/median ms':>22}{'peak MB':>9} | {'time':>7}{'memory':>8}  (median ratios)",
        flush=True,
    )
    for name in names:
        row = bench(name)
        rows.append(row)
        i, j = row["icefloe"], row["java"]
        assert isinstance(i, dict) and isinstance(j, dict)
        only = row.get("deleted by icefloe only")
        print(
            f"{name:<12}{row['count']:>9} | {i['best ms']:>11.0f} / {i['median ms']:>9.0f}"
            f"{i['peak MB']:>9.0f} | {j['best ms']:>9.0f} / {j['median ms']:>9.0f}{j['peak MB']:>9.0f} | "
            f"{i['median ms'] / j['median ms']:>6.3f}x{i['peak MB'] / j['peak MB']:>7.3f}x"
            + (f"  ({only} deleted by icefloe only)" if only else ""),
            flush=True,
        )
        pi, pj = i["median process ms"], j["median process ms"]
        print(f"  whole processes (start to exit): {pi:.0f} / {pj:.0f} ms, {pi / pj:.3f}x", flush=True)
        if name == "plan":
            t, m = i["median ms"] / j["median ms"], i["peak MB"] / j["peak MB"]
            print(
                f"  bars: time {t:.3f}x (0.2x: {'met' if t <= 0.2 else 'MISSED'}; whole processes "
                f"{pi / pj:.3f}x), memory {m:.3f}x (0.5x: {'met' if m <= 0.5 else 'MISSED'})",
                flush=True,
            )
    heap = os.environ.get("BENCH_JAVA_HEAP", "default")
    (CACHE / f"results_java_heap_{heap}.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
