"""Where `make test`'s CPU goes, from the files of `tests/support/timeline.py`: each test's
share of the machine's cores while it ran (its wall time, divided among the tests running at
the same moment in both passes, at most one core each), summed per test file, largest first.
`make test`'s phases keep both cores busy, so these shares add up to its CPU time.

Usage: .ci/timeline_report.py DIR [N] [--cores C]"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folder", type=Path)
    parser.add_argument("n", type=int, nargs="?", default=30)
    parser.add_argument("--cores", type=float, default=2.0)
    args = parser.parse_args()
    rows = []
    for path in sorted(args.folder.glob("*.jsonl")):
        line = path.stem.split("-")[0]
        rows += [{**json.loads(text), "pass": line} for text in path.read_text().splitlines() if text]
    if not rows:
        raise SystemExit(f"no timeline files in {args.folder}")
    events = sorted([(r["t0"], 1) for r in rows] + [(r["t1"], -1) for r in rows])
    segments, running, previous = [], 0, None
    for t, step in events:
        if previous is not None and t > previous:
            segments.append((previous, t, running))
        running += step
        previous = t
    starts = [s[0] for s in segments]

    def share(t0: float, t1: float) -> float:
        i, total = max(0, bisect.bisect_right(starts, t0) - 1), 0.0
        while i < len(segments) and segments[i][0] < t1:
            a, b, k = segments[i]
            lo, hi = max(a, t0), min(b, t1)
            if hi > lo and k:
                total += (hi - lo) * min(1.0, args.cores / k)
            i += 1
        return total

    per_file: collections.Counter[tuple[str, str]] = collections.Counter()
    for r in rows:
        per_file[(r["pass"], r["id"].split("::")[0])] += share(r["t0"], r["t1"])
    per_pass: collections.Counter[str] = collections.Counter()
    for (line, _file), cpu in per_file.items():
        per_pass[line] += cpu
    span = max(r["t1"] for r in rows) - min(r["t0"] for r in rows)
    passes = ", ".join(f"{line} {cpu:.0f}" for line, cpu in per_pass.items())
    print(f"{len(rows)} tests over {span:.0f} s; CPU s per pass: {passes}")
    for (line, name), cpu in per_file.most_common(args.n):
        print(f"{cpu:8.1f}  {line}  {name}")


if __name__ == "__main__":
    main()
