"""Exactly once through crashes: a streaming query copies Parquet files that another process
keeps dropping into a folder into an icefloe table through `icefloe.spark.batch_writer`; its
driver (a subprocess with its own checkpoint: Python, JVM and Python workers, one process
group) is SIGKILLed at random points in `ICEFLOE_KILL_RUNS` runs (2 in `make test`: one at
a random time, one in the window; 20 in `make soak`) and restarted from its checkpoint each
time, then drained. The table ends with every source row exactly once, read by icefloe and by
Iceberg Java, and one snapshot per batch along the history.

Half the runs are killed at a uniformly random time; the other half at a random time inside
the window the sink exists for: after the batch's snapshot is committed and before Spark
records the batch as done (the harness holds the batch open a moment there). Spark replays
those batches on restart, and each replay must be found committed and skipped."""

from __future__ import annotations

import json
import os
import queue
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe.write.streaming_commit import BATCH_ID_KEY, QUERY_ID_KEY
from support.kill_harness import TESTS, Killable
from support.oracle import Oracle
from support.session import new_table_name
from support.start_gate import worker_env

pytestmark = [pytest.mark.spark, pytest.mark.interop]

RUNS = int(os.environ.get("ICEFLOE_KILL_RUNS", "2"))
# The producer drops one file every 2 s until the test stops it before the drain, so every run
# has fresh batches however slow the machine; the cap only bounds a runaway.
MAX_FILES = 100 * RUNS
ROWS_PER_FILE = 200
HOLD_S = 1.0  # the harness's pause between a batch's commit and Spark's commit log

# The two programs: support/workers/file_producer.py (Parquet files dropped into the source
# folder) and support/workers/sink_driver.py (the streaming query into the icefloe table).
PRODUCER = "support.workers.file_producer"
DRIVER = "support.workers.sink_driver"


def driver_env() -> dict[str, str]:
    """This process's environment with tests/ first on PYTHONPATH (for `-m`), output unbuffered."""
    path = os.pathsep.join(p for p in [str(TESTS), os.environ.get("PYTHONPATH", "")] if p)
    return {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": path}


class Driver(Killable):
    """One run of the streaming driver, its stdout lines on a queue."""

    def __init__(self, args: list[Any], log: Path) -> None:
        super().__init__(None, args, log, env=driver_env(), pipe_stdout=True, module=DRIVER)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.pump = threading.Thread(target=self._pump, daemon=True)
        self.pump.start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def next_line(self, prefix: str, timeout: float) -> str | None:
        """The next line starting with `prefix` (None if the driver ended or time ran out)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return None
            if line is None:
                return None
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def kill(self) -> None:
        super().kill()
        self.stop()

    def stop(self) -> None:
        self.wait(60)
        self.pump.join(timeout=60)  # to the end of what the driver (and its JVM) printed
        while True:
            try:
                line = self.lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.seen.append(line)
        if self.proc.stdout is not None and not self.pump.is_alive():
            self.proc.stdout.close()

    def batches(self) -> list[tuple[int, bool]]:
        """(batch id, skipped) of each batch this run finished."""
        out = []
        for line in self.seen:
            parts = line.split()
            if parts and parts[0] == "done":
                out.append((int(parts[1]), parts[2] == "True"))
        return out


@pytest.mark.slow
def test_killed_and_restarted_every_row_once(
    catalog: Any, oracle: Oracle, warehouse: Path, tmp_path: Path
) -> None:
    seed = int(os.environ.get("ICEFLOE_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    name = new_table_name("killed")
    catalog.create_table(name, schema=pa.schema([pa.field("id", pa.int64()), pa.field("val", pa.string())]))
    src, checkpoint, stop = tmp_path / "src", tmp_path / "checkpoint", tmp_path / "stop"
    src.mkdir()
    producer = subprocess.Popen(
        [sys.executable, "-m", PRODUCER, json.dumps([str(src), ROWS_PER_FILE, 2.0, str(stop), MAX_FILES])],
        stdout=subprocess.DEVNULL,
        env=worker_env(),
    )
    query_ids: set[str] = set()
    replays_due: list[int] = []  # batches committed, then killed before Spark marked them done
    replays_seen: list[int] = []
    try:
        for run in range(RUNS + 1):
            drain = run == RUNS
            if drain:
                stop.touch()
                assert producer.wait(timeout=120) == 0
            in_window = run % 2 == 1
            d = Driver(
                [str(warehouse), name, str(src), str(checkpoint), HOLD_S if in_window else 0.0, drain],
                tmp_path / f"driver-{run}.log",
            )
            started = d.next_line("started", 180)
            assert started is not None, f"run {run} did not start (seed {seed}): {d.log_path}"
            query_ids.add(started.split()[1])
            killed_after = None
            if drain:
                assert d.next_line("finished", 300) is not None, f"drain did not finish (seed {seed})"
                d.stop()
                assert d.proc.returncode == 0, d.tail()
            elif in_window:
                # Killed after a batch's snapshot is committed, before Spark's commit log.
                while True:
                    done = d.next_line("done", 180 if producer.poll() is None else 30)
                    if done is None:  # every file is in: nothing new to commit
                        assert producer.poll() is not None, f"run {run} stalled (seed {seed}): {d.log_path}"
                        break
                    if done.split()[2] == "False":
                        killed_after = int(done.split()[1])
                        break
                time.sleep(rng.uniform(0.0, HOLD_S * 0.6))
                d.kill()
            else:
                # Killed at a random time: after 0-2 batches, 0-2 s into what follows (the
                # next batch's planning, its Spark job, its commit, or Spark's logs).
                for _ in range(rng.randrange(3)):
                    if d.next_line("done", 180 if producer.poll() is None else 30) is None:
                        assert producer.poll() is not None, f"run {run} stalled (seed {seed})"
                        break
                d.next_line("never", rng.uniform(0.0, 2.0))
                d.kill()
            print(f"run {run}: {' | '.join(x for x in d.seen if not x.startswith('started'))}", flush=True)
            finished = d.batches()
            if replays_due and finished:
                # The first batch a restart runs is the one it was killed in; if that one
                # was committed, the restart must skip it.
                first_id, skipped = finished[0]
                assert first_id == replays_due[0] and skipped, (run, finished, replays_due, seed)
                replays_seen.append(replays_due.pop(0))
            for _batch_id, skipped in finished[1:]:
                assert not skipped, (run, finished, seed)
            if killed_after is not None:
                replays_due.append(killed_after)
    finally:
        if producer.poll() is None:
            producer.kill()
            producer.wait()
    assert len(query_ids) == 1, query_ids
    assert replays_seen, f"no kill landed between a commit and Spark's commit log (seed {seed})"

    files = len(list(src.glob("part-*.parquet")))
    assert files >= RUNS, files
    expected = list(range(files * ROWS_PER_FILE))
    table = catalog.load_table(name)
    ours = table.scan().to_arrow()
    assert sorted(ours.column("id").to_pylist()) == expected
    assert all(v == f"v{i}" for i, v in zip(ours.column("id").to_pylist(), ours.column("val").to_pylist()))
    java = oracle.sql(f"SELECT id, val FROM {oracle.qualified(name)}")
    assert sorted(r["id"] for r in java) == expected
    assert all(r["val"] == f"v{r['id']}" for r in java)
    # Along the history: one snapshot per batch, batch ids strictly growing.
    batch_ids = []
    sid = table.metadata.current_snapshot_id
    while sid is not None:
        snap = table.snapshot_by_id(sid)
        assert snap is not None
        assert snap.summary[QUERY_ID_KEY] in query_ids
        batch_ids.append(int(snap.summary[BATCH_ID_KEY]))
        sid = snap.parent_snapshot_id
    assert batch_ids == sorted(batch_ids, reverse=True) and len(set(batch_ids)) == len(batch_ids)
