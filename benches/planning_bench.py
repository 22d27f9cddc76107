"""Scan planning benchmark: icefloe vs Iceberg Java planFiles() vs PyIceberg plan_files().

Builds once (cached under .cache/bench/) a day(ts)-partitioned table of metadata-only data
files with full metrics through Iceberg Java (benches/java/PlanningBench.java: newFastAppend
of 1,000 files per commit), then plans three cases: no filter, `id = <one value>` and a
one-day `ts` range. Java: warm JVM, best of 5, tasks iterated in Java. PyIceberg: best of 3
(StaticTable.from_metadata). icefloe: best of 5, cold (no manifest cache) and warm (cache).

    make bench-planning                      # 100,000 files in 100 manifests
    make bench-planning ARGS="--files 1000000 --no-pyiceberg"   # the 1M-file variant
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "bench"
SRC = ROOT / "benches" / "java" / "PlanningBench.java"
DAY0 = 19000
CASES = ["no filter", "id = one value", "one-day ts range"]

sys.path.insert(0, str(ROOT / "tests"))
from support.java import java_command  # noqa: E402


def classpath() -> str:
    import pyspark

    jar = os.environ.get("ICEFLOE_ORACLE_JAR") or str(
        ROOT / ".cache/oracle/iceberg-spark-runtime-3.5_2.12-1.12.0.jar"
    )
    return f"{jar}:{Path(pyspark.__file__).parent / 'jars'}/*"


def java(*args: str) -> str:
    cmd = [*java_command(SRC, classpath(), heap="4g", cache=CACHE / "java"), *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def filters(files: int) -> list[str | None]:
    day = dt.date(1970, 1, 1) + dt.timedelta(days=DAY0 + 100)
    nxt = day + dt.timedelta(days=1)
    return [
        None,
        f"id = {(files // 2) * 1000 + 7}",
        f"ts >= TIMESTAMP '{day} 00:00:00' AND ts < TIMESTAMP '{nxt} 00:00:00'",
    ]


def latest_metadata(loc: Path) -> Path:
    return max((loc / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))


def best(fn, runs: int) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    times, n = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        n = fn()
        times.append((time.perf_counter() - t0) * 1000)
    return min(times), n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--per-commit", type=int, default=1000)
    ap.add_argument("--no-pyiceberg", action="store_true")
    ap.add_argument("--no-java", action="store_true")
    ap.add_argument("--no-cache", action="store_true", help="skip the warm manifest-cache runs")
    args = ap.parse_args()

    loc = CACHE / f"planning_{args.files}"
    if not (loc / "metadata").exists():
        print(f"building {args.files} files in {args.files // args.per_commit} manifests ...", flush=True)
        print(java("build", str(loc), str(args.files), str(args.per_commit)).strip())
    meta_path = latest_metadata(loc)

    from icefloe import _native

    md = _native.TableMetadata.from_json(meta_path.read_text(), str(meta_path))
    flt = filters(args.files)
    results: dict[str, dict[str, tuple[float, int]]] = {c: {} for c in CASES}

    for case, f in zip(CASES, flt):
        results[case]["icefloe"] = best(lambda f=f: len(_native.plan_scan(md, row_filter=f)), 5)
    # peak RSS of the process so far: metadata + uncached planning (tasks of the largest plan)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if not args.no_cache:
        for case, f in zip(CASES, flt):
            cache = _native.ManifestCache(max_entries=args.files + 1)
            len(_native.plan_scan(md, row_filter=f, cache=cache))
            results[case]["icefloe (cached)"] = best(
                lambda f=f, cache=cache: len(_native.plan_scan(md, row_filter=f, cache=cache)), 5
            )
            del cache
    rss_cached_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    if not args.no_java:
        for line in java("time", str(loc), "5").strip().splitlines():
            name, ms, n = line.split("\t")
            results[name]["java"] = (float(ms), int(n))

    if not args.no_pyiceberg:
        from pyiceberg.expressions import And, EqualTo, GreaterThanOrEqual, LessThan
        from pyiceberg.table import StaticTable

        st = StaticTable.from_metadata(str(meta_path))
        day = dt.date(1970, 1, 1) + dt.timedelta(days=DAY0 + 100)
        py_filters = [
            None,
            EqualTo("id", (args.files // 2) * 1000 + 7),
            And(
                GreaterThanOrEqual("ts", f"{day}T00:00:00"),
                LessThan("ts", f"{day + dt.timedelta(days=1)}T00:00:00"),
            ),
        ]
        for case, f in zip(CASES, py_filters):
            scan = st.scan() if f is None else st.scan(row_filter=f)
            results[case]["pyiceberg"] = best(lambda scan=scan: len(list(scan.plan_files())), 3)

    print(
        f"\nplanning {args.files:,} data files; {dt.date.today()}, {platform.machine()} "
        f"{platform.processor() or ''}, {os.cpu_count()} cores, python {sys.version.split()[0]}; "
        f"peak RSS after uncached planning {rss_mb:.0f} MB, after the cached runs {rss_cached_mb:.0f} MB"
    )
    print(f"{'case':<20}{'engine':<18}{'best ms':>10}{'files':>9}{'vs java':>9}{'vs pyiceberg':>14}")
    for case in CASES:
        r = results[case]
        for eng, (ms, n) in r.items():
            vj = f"{ms / r['java'][0]:.3f}x" if "java" in r else "-"
            vp = f"{ms / r['pyiceberg'][0]:.4f}x" if "pyiceberg" in r else "-"
            print(f"{case:<20}{eng:<18}{ms:>10.1f}{n:>9}{vj:>9}{vp:>14}")
        counts = {n for _, n in r.values()}
        if len(counts) != 1:
            print(f"  !! engines disagree on the number of files for {case}: {counts}")
    # the bars, for the uncached icefloe plan
    print("bars (icefloe, no cache):")
    for i, case in enumerate(CASES):
        r = results[case]
        ms = r["icefloe"][0]
        if "java" in r:
            bar = 0.5 if i == 2 else 0.2
            ok = "met" if ms <= bar * r["java"][0] else "MISSED"
            print(f"  {case:<20} vs java {ms / r['java'][0]:.3f}x (bar {bar}x): {ok}")
        if "pyiceberg" in r:
            ok = "met" if ms <= 0.02 * r["pyiceberg"][0] else "MISSED"
            print(f"  {case:<20} vs pyiceberg {ms / r['pyiceberg'][0]:.4f}x (bar 0.02x): {ok}")
    base = CACHE / "planning_100000_results.json"
    if args.files != 100_000 and base.exists():
        small = json.loads(base.read_text())
        scale = args.files / 100_000
        print(f"growth vs the 100,000-file run (x{scale:g} files; linear = x{scale:g}):")
        for case in CASES:
            if "icefloe" in small.get(case, {}):
                g = results[case]["icefloe"][0] / small[case]["icefloe"][0]
                print(f"  {case:<20} time x{g:.1f}")
    (CACHE / f"planning_{args.files}_results.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
