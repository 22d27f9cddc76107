"""A writer killed with SIGKILL at random points of its appends and commits, with the table on
the S3 server (filesystem catalog: conditional-create commits; SQL catalog: conditional UPDATE
with the warehouse on S3): after every kill the table is readable, each write is there whole
or not at all, the writer's committed writes have no hole, and every file any snapshot
references exists on the store with the size its manifest records.

(Objects of the killed, uncommitted write may remain: nothing is left to delete them but
orphan-file removal, which is table maintenance.)"""

from __future__ import annotations

import random
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import icefloe
import pytest
from icefloe import _io
from servers.s3 import BUCKET, S3Server
from test_concurrency_processes import SCHEMA, SPEC, spawn


@pytest.fixture(params=["filesystem", "sql"])
def setup(request: pytest.FixtureRequest, s3: S3Server, tmp_path: Path) -> tuple[dict[str, str], Any]:
    warehouse = f"s3://{BUCKET}/kill-{uuid.uuid4().hex[:8]}/wh"
    props: dict[str, str] = {"name": "k", "type": request.param, "warehouse": warehouse, **s3.properties()}
    if request.param == "sql":
        props["uri"] = f"sqlite:///{tmp_path}/c.db"
    catalog = icefloe.load_catalog(**props)
    catalog.create_namespace("db")
    return props, catalog


def referenced_files(table: Any) -> dict[str, int]:
    """Every data and delete file of every snapshot, with its recorded size."""
    out: dict[str, int] = {}
    for s in table.snapshots():
        for task in table.scan(snapshot_id=s.snapshot_id).plan_files():
            out[task.file_path] = task.file.file_size_in_bytes
            for d in task.delete_files:
                out[d.file_path] = d.file_size_in_bytes
    return out


@pytest.mark.timeout(600)
def test_sigkilled_writer_on_s3_leaves_whole_writes_or_none(
    setup: tuple[dict[str, str], Any], tmp_path: Path
) -> None:
    props, catalog = setup
    catalog.create_table("db.kill", schema=SCHEMA, partition_spec=SPEC)
    rng = random.Random(11)
    for rnd in range(4):
        go = tmp_path / f"go-{rnd}"
        go.write_text("go")
        p = spawn(props, "db.kill", rnd, 0, go, "forever", "eu" if rnd % 2 else "us")
        # Once the writer has committed at least once (it prints each committed attempt), a
        # random point: mid-write, mid-commit or between commits.
        assert p.stdout is not None
        first = p.stdout.readline()
        assert first.strip().isdigit(), (first, p.stderr.read() if p.poll() is not None else "")
        time.sleep(rng.random() * 2.0)
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        table = catalog.load_table("db.kill")  # readable after every kill
        data = table.scan().to_arrow()
        counts: dict[tuple[int, int], int] = {}
        for w, s in zip(data.column("writer").to_pylist(), data.column("seq").to_pylist()):
            counts[(w, s)] = counts.get((w, s), 0) + 1
        assert set(counts.values()) <= {10}, counts  # every write whole, or absent
        for w in range(rnd + 1):
            seqs = sorted(s for (ww, s) in counts if ww == w)
            assert seqs == list(range(len(seqs))), (w, seqs)  # no hole in a writer's commits
        cur = table.current_snapshot()
        if cur is not None:
            assert cur.summary["total-records"] == str(data.num_rows)
        on_store = dict(_io.list_files(table.location()))
        for path, size in referenced_files(table).items():
            assert on_store.get(path) == size, (
                f"{path}: recorded {size} bytes, store has {on_store.get(path)}"
            )
    assert catalog.load_table("db.kill").scan().count() > 0
