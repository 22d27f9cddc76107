"""The streaming commit (`icefloe.write.streaming_commit.commit_batch`) racing in real processes,
on both catalogs: zombie drivers of one query (each process writes and commits the same
batches, as a restarted driver and the one it replaced would) commit every batch exactly
once, while a writer of plain appends commits in between; the losers' files are deleted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.write.streaming_commit import BATCH_ID_KEY, QUERY_ID_KEY
from support.catalogs import catalog_props
from support.start_gate import ready_path, release, worker_env

ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("tag", pa.string())])
BATCHES = 8
ROWS = 5

# Each process: support/workers/zombie_driver.py (a zombie driver of one query, or plain appends).
WORKER = "support.workers.zombie_driver"

RETRIES = {
    "commit.retry.num-retries": "50",
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "100",
}


@pytest.mark.parametrize("kind", ["filesystem", "sql"])
def test_zombie_drivers_commit_each_batch_once(kind: str, tmp_path: Path) -> None:
    props = catalog_props(kind, tmp_path)
    cat = icefloe.load_catalog(**props)
    cat.create_namespace("db")
    table = cat.create_table("db.t", schema=ARROW, properties=RETRIES)
    go = tmp_path / "go"
    roles = ["zombie", "zombie", "zombie", "plain"]
    readies = [ready_path(go, i) for i in range(len(roles))]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", WORKER, json.dumps([props, "db.t", role, str(ready), str(go)])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=worker_env(),
        )
        for ready, role in zip(readies, roles)
    ]
    release(procs, readies, go)  # every worker imported and loaded the table
    outs: list[Any] = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    # Each batch committed by exactly one of the zombies.
    for b in range(BATCHES):
        winners = [o[b] for o in outs[:3] if o[b] is not None]
        assert len(winners) == 1, (b, outs)
    table.refresh()
    rows = table.scan().to_arrow()
    expected = sorted(
        [(i, f"b{i // ROWS}") for i in range(BATCHES * ROWS)] + [(-1 - b, "plain") for b in range(BATCHES)]
    )
    assert sorted(zip(rows.column("id").to_pylist(), rows.column("tag").to_pylist())) == expected
    stream = [
        int(s.summary[BATCH_ID_KEY]) for s in table.snapshots() if s.summary.get(QUERY_ID_KEY) == "q-zombies"
    ]
    assert sorted(stream) == list(range(BATCHES))
    # The losers' files are gone: every data file on disk is live.
    on_disk = {str(p) for p in (Path(table.location().removeprefix("file://")) / "data").rglob("*.parquet")}
    live = {p.removeprefix("file://") for p in table.inspect.files().column("file_path").to_pylist()}
    assert on_disk == live
