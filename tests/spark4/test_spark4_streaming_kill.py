"""Exactly once through crashes, in Spark's own terms (PySpark 4, collected only there): a
query `readStream.format("icefloe")` -> `writeStream.format("icefloe")` copies a table that
another process keeps appending to. Its driver (a subprocess in its own process group:
Python, JVM, Python workers) is SIGKILLed in `ICEFLOE_KILL_RUNS` runs (1 in `make test`, the
kill inside the window below: each restart starts a Spark driver, ~45 s on CI's two cores; 20
in `make soak`) and restarted from its checkpoint, then drained; the target ends with every
source row exactly once, read by icefloe and by Iceberg Java, one snapshot per micro-batch.

The last run, and every other one before it, is killed inside the window the sink's
exactly-once check exists for: after a batch's snapshot is committed and before Spark
records the batch as done; the others at a random time. The harness finds that window
through a `sitecustomize` on the driver's PYTHONPATH (inherited by the Python workers Spark
starts for the sink's commit), which logs each commit and holds it open a moment; the
restarted query must find the batch committed and skip it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
import support.workers
from icefloe.write.streaming_commit import BATCH_ID_KEY
from support.kill_harness import Killable, hooked_env, install_sitecustomize, read_events
from support.oracle import Oracle
from support.session import new_table_name
from support.start_gate import worker_env

pytestmark = [pytest.mark.spark, pytest.mark.interop, pytest.mark.slow]

RUNS = int(os.environ.get("ICEFLOE_KILL_RUNS", "1"))
# The producer appends one commit every 4 s until the test stops it before the drain, so every
# run has fresh batches however slow the machine; the cap only bounds a runaway.
MAX_COMMITS = 50 * RUNS
ROWS_PER_COMMIT = 200
HOLD_S = 1.0

# The driver's sitecustomize (support/workers/stream_commit_site.py, copied: it logs each of the
# sink's commits and holds it open), the source's appender and the streaming driver.
SITECUSTOMIZE = Path(support.workers.__file__).parent / "stream_commit_site.py"
PRODUCER = "support.workers.table_producer"
DRIVER = "support.workers.source_sink_driver"


class Run(Killable):
    """One driver process; the sink's commits it made, read from the events file."""

    def __init__(self, args: list[Any], events: Path, hold: float, log: Path, site: Path) -> None:
        self.events = events
        self.offset = events.stat().st_size if events.exists() else 0
        env = hooked_env(site, events, ICEFLOE_KILL_HOLD=str(hold))
        super().__init__(None, args, log, env, module=DRIVER)

    def done(self) -> list[tuple[int, bool]]:
        """(batch id, skipped) of each commit this run finished so far."""
        lines = read_events(self.events, self.offset)
        return [(int(p[1]), p[2] == "True") for p in lines if len(p) == 3 and p[0] == "done"]

    def wait_for(self, count: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if len(self.done()) >= count:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.05)
        return False


def test_source_to_sink_killed_and_restarted_every_row_once(
    catalog: Any, oracle: Oracle, warehouse: Path, tmp_path: Path
) -> None:
    seed = int(os.environ.get("ICEFLOE_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("val", pa.string())])
    src, dst = new_table_name("kill_src"), new_table_name("kill_dst")
    catalog.create_table(src, schema=schema)
    catalog.create_table(dst, schema=schema)
    site = install_sitecustomize(tmp_path, SITECUSTOMIZE.read_text())
    events, checkpoint, stop = tmp_path / "events.log", tmp_path / "checkpoint", tmp_path / "stop"
    produce = [str(warehouse), src, ROWS_PER_COMMIT, 4.0, str(stop), MAX_COMMITS]
    producer = subprocess.Popen([sys.executable, "-m", PRODUCER, json.dumps(produce)], env=worker_env())
    replays_due: list[int] = []
    replays_seen: list[int] = []
    try:
        for run in range(RUNS + 1):
            drain = run == RUNS
            if drain:
                stop.touch()
                assert producer.wait(timeout=120) == 0
            # The last kill is inside the window (alternating before it): with one run, it is.
            in_window = (RUNS - 1 - run) % 2 == 0
            r = Run(
                [str(warehouse), src, dst, str(checkpoint), drain],
                events,
                HOLD_S if in_window else 0.0,
                tmp_path / f"driver-{run}.log",
                site,
            )
            killed_after = None
            if drain:
                assert r.wait(900) == 0, r.tail()
            elif in_window:
                # Wait for a fresh commit (not a skipped replay), then kill during its hold.
                want = 1 + (1 if replays_due else 0)
                if r.wait_for(want, 240 if producer.poll() is None else 20):
                    batch, skipped = r.done()[-1]
                    if not skipped:
                        killed_after = batch
                    time.sleep(rng.uniform(0.0, HOLD_S * 0.6))
                r.kill()
            else:
                r.wait_for(rng.randrange(3), 240 if producer.poll() is None else 20)
                time.sleep(rng.uniform(0.0, 2.0))
                r.kill()
            finished = r.done()
            if replays_due and finished:
                first, skipped = finished[0]
                assert first == replays_due[0] and skipped, (run, finished, replays_due, seed)
                replays_seen.append(replays_due.pop(0))
            for _batch, skipped in finished[1:]:
                assert not skipped, (run, finished, seed)
            if killed_after is not None:
                replays_due.append(killed_after)
    finally:
        if producer.poll() is None:
            producer.kill()
            producer.wait()
    assert replays_seen, f"no kill landed between a commit and Spark's commit log (seed {seed})"

    produced = sorted(catalog.load_table(src).scan().to_arrow().column("id").to_pylist())
    expected = list(range(len(produced)))
    assert produced == expected and len(expected) >= RUNS * ROWS_PER_COMMIT, len(produced)
    table = catalog.load_table(dst)
    ours = table.scan().to_arrow()
    assert sorted(ours.column("id").to_pylist()) == expected
    java = oracle.sql(f"SELECT id, val FROM {oracle.qualified(dst)}")
    assert sorted(r["id"] for r in java) == expected
    assert all(r["val"] == f"v{r['id']}" for r in java)
    batch_ids = []
    sid = table.metadata.current_snapshot_id
    while sid is not None:
        snap = table.snapshot_by_id(sid)
        assert snap is not None
        batch_ids.append(int(snap.summary[BATCH_ID_KEY]))
        sid = snap.parent_snapshot_id
    assert batch_ids == sorted(batch_ids, reverse=True) and len(set(batch_ids)) == len(batch_ids)
