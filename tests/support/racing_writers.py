"""Writer processes racing on one table (tests of concurrent commits on every catalog, on
object stores and under SIGKILL): the table's shape, `spawn` (one worker,
support/workers/racing_writer.py), `run_writers` (several, released together by the start
gate), and the kill loop `kill_writers_at_random_points`."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
from icefloe.catalog import Catalog
from icefloe.partitioning import PartitionField, PartitionSpec

from support.start_gate import ready_path, release, worker_env

SCHEMA = pa.schema(
    [
        pa.field("writer", pa.int32(), nullable=False),
        pa.field("seq", pa.int32(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
    ]
)
SPEC = PartitionSpec(PartitionField(3, 1000, "identity", "region"))


def spawn(
    props: dict[str, str], ident: str, writer: int, n: int, ready: Path, go: Path, mode: str, region: str
) -> Any:
    """A worker that loads the table, writes `ready`, waits for `go` (see start_gate), then
    runs `mode`."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "support.workers.racing_writer",
            json.dumps([props, ident, writer, n, str(ready), str(go), mode, region]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


def run_writers(
    props: dict[str, str], ident: str, jobs: list[tuple[int, int, str, str]], tmp_path: Path
) -> list[Any]:
    go = tmp_path / f"go-{random.random()}"
    readies = [ready_path(go, i) for i in range(len(jobs))]
    procs = [
        spawn(props, ident, w, n, ready, go, mode, region)
        for ready, (w, n, mode, region) in zip(readies, jobs)
    ]
    release(procs, readies, go)  # every worker loaded the table before any writes
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, f"worker failed:\n{err}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def live_files_on_disk(table: Any) -> tuple[list[str], list[str]]:
    """Data files on disk, and those some snapshot references (replaced files stay for
    time travel)."""
    data_dir = Path(table.location()) / "data"
    on_disk = sorted(os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs)
    referenced = {
        t.file.file_path
        for s in table.snapshots()
        for t in table.scan(snapshot_id=s.snapshot_id).plan_files()
    }
    return on_disk, sorted(referenced)


def kill_writers_at_random_points(
    props: dict[str, str], catalog: Catalog, tmp_path: Path, seed: int, check: Any = None
) -> None:
    """Four writers in turn append 10-row writes to `db.kill` until SIGKILLed at a random
    point (mid-write, mid-commit or between commits, once each has committed at least once).
    A writer prints the seq of each write it committed, so what it printed before the kill
    was committed, and at most one more write (committed, killed before printing) may be.
    After every kill the table must be readable and hold exactly the model: each write whole
    or not at all, every writer's commits 0..k-1 with k its printed count (or one more for
    the writer just killed), no earlier writer's commit lost; `check(table)` adds more."""
    rng = random.Random(seed)
    committed: dict[int, int] = {}  # writer -> how many writes the table holds of it
    for rnd in range(4):
        go = tmp_path / f"go-kill-{rnd}"
        go.write_text("go")  # one writer at a time: nothing to wait for
        p = spawn(props, "db.kill", rnd, 0, ready_path(go, 0), go, "forever", "eu" if rnd % 2 else "us")
        assert p.stdout is not None
        first = p.stdout.readline()  # a fixed sleep found no commit yet under load
        assert first.strip().isdigit(), (first, p.stderr.read() if p.poll() is not None else "")
        time.sleep(rng.random() * 1.0)
        p.send_signal(signal.SIGKILL)
        rest = p.stdout.read()  # through the buffer readline() filled (communicate() skips it)
        p.communicate(timeout=60)
        printed = [int(line) for line in (first + rest).split()]
        assert printed == list(range(len(printed))), printed  # the worker printed 0, 1, 2, ...
        table = catalog.load_table("db.kill")  # readable after every kill
        rows = table.scan().to_arrow()
        counts: dict[tuple[int, int], int] = {}
        for w, s in zip(rows.column("writer").to_pylist(), rows.column("seq").to_pylist()):
            counts[(w, s)] = counts.get((w, s), 0) + 1
        assert set(counts.values()) == {10}, counts  # every write whole, or absent
        mine = len([s for (w, s) in counts if w == rnd])
        assert mine in (len(printed), len(printed) + 1), (rnd, printed, mine)
        committed[rnd] = mine
        by_writer = {w: sorted(s for (ww, s) in counts if ww == w) for w in {w for (w, _) in counts}}
        assert by_writer == {w: list(range(k)) for w, k in committed.items()}, (by_writer, committed)
        cur = table.current_snapshot()
        assert cur is not None and cur.summary["total-records"] == str(rows.num_rows)
        assert rows.num_rows == 10 * sum(committed.values())
        if check is not None:
            check(table)
    final = catalog.load_table("db.kill")
    assert final.scan().count() == 10 * sum(committed.values())
    assert len(final.snapshots()) == sum(committed.values())  # one snapshot per committed write
