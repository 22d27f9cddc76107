"""Concurrent commits from real processes, on every catalog (filesystem; SQL on sqlite and on
Postgres): optimistic concurrency with retries must lose nothing and keep the snapshot chain
linear; a swap from a stale base without retries must fail with CommitConflictError."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe.catalog import Catalog
from support.catalogs import new_catalog
from support.start_gate import ready_path, release, worker_env

PROCESSES = 4
APPENDS = 10

SCHEMA = pa.schema(
    [pa.field("writer", pa.int32(), nullable=False), pa.field("seq", pa.int32(), nullable=False)]
)

# Each worker (support/workers/append_writer.py): load the catalog and table, say it is ready,
# wait for the start signal, append.
WORKER = "support.workers.append_writer"


def run_workers(props: dict[str, str], ident: str, appends: int, mode: str, tmp_path: Path) -> list[Any]:
    go = tmp_path / f"go-{mode}"
    readies = [ready_path(go, w) for w in range(PROCESSES)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                WORKER,
                json.dumps([props, ident, w, appends, str(readies[w]), str(go), mode]),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=worker_env(),
        )
        for w in range(PROCESSES)
    ]
    release(procs, readies, go)  # every worker loaded the table before any appends
    results = []
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, f"worker failed:\n{err}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


@pytest.fixture(params=["filesystem", "sql", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict[str, str], Catalog]:
    return new_catalog(request, request.param, tmp_path, namespace="db")


@pytest.mark.timeout(900)
def test_concurrent_appends_lose_nothing(setup: tuple[dict[str, str], Catalog], tmp_path: Path) -> None:
    props, catalog = setup
    # Four writers hammering one table collide often: allow more retries than Java's 4.
    catalog.create_table(
        "db.t",
        schema=SCHEMA,
        properties={"commit.retry.num-retries": "100", "commit.retry.min-wait-ms": "20"},
    )
    results = run_workers(props, "db.t", APPENDS, "retry", tmp_path)
    assert results == [["ok"] * APPENDS] * PROCESSES

    table = catalog.load_table("db.t")
    snaps = table.snapshots()
    assert len(snaps) == PROCESSES * APPENDS
    rows = table.scan().to_arrow()
    assert sorted(zip(rows.column("writer").to_pylist(), rows.column("seq").to_pylist())) == [
        (w, i) for w in range(PROCESSES) for i in range(APPENDS)
    ]
    by_seq = sorted(snaps, key=lambda s: s.sequence_number)
    assert [s.sequence_number for s in by_seq] == list(range(1, PROCESSES * APPENDS + 1))
    assert by_seq[0].parent_snapshot_id is None
    for prev, cur in zip(by_seq, by_seq[1:]):
        assert cur.parent_snapshot_id == prev.snapshot_id
    assert len({s.snapshot_id for s in snaps}) == len(snaps)
    current = table.current_snapshot()
    assert current is not None and current.snapshot_id == by_seq[-1].snapshot_id
    assert current.summary["total-records"] == str(PROCESSES * APPENDS)
    assert len(table.scan().plan_files()) == PROCESSES * APPENDS
    # Every data file on disk is live: losers of each round cleaned up after themselves.
    data_dir = Path(table.location()) / "data"
    on_disk = sorted(os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs)
    assert on_disk == sorted(t.file.file_path for t in table.scan().plan_files())
    # ... and so did their commit attempts: one manifest list + one manifest per snapshot,
    # one metadata file per version (the creation plus 40 appends).
    meta_dir = Path(table.metadata_location).parent
    names = os.listdir(meta_dir)
    assert sorted(str(meta_dir / n) for n in names if n.startswith("snap-")) == sorted(
        str(s.manifest_list) for s in snaps
    )
    assert len([n for n in names if n.endswith("-m0.avro")]) == PROCESSES * APPENDS
    assert len([n for n in names if n.endswith(".metadata.json")]) == PROCESSES * APPENDS + 1
    assert not [n for n in names if n.endswith(".tmp")]


@pytest.mark.timeout(600)
def test_racing_commits_from_one_base_exactly_one_wins(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path
) -> None:
    props, catalog = setup
    catalog.create_table("db.race", schema=SCHEMA, properties={"commit.retry.num-retries": "0"})
    results = run_workers(props, "db.race", 1, "once", tmp_path)
    outcomes = [r[0] for r in results]
    assert outcomes.count("ok") == 1, outcomes
    assert all(o.startswith("conflict: ") for o in outcomes if o != "ok")

    table = catalog.load_table("db.race")
    assert len(table.snapshots()) == 1
    assert table.scan().count() == 1
    data_dir = Path(table.location()) / "data"
    on_disk = sorted(os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs)
    assert on_disk == sorted(t.file.file_path for t in table.scan().plan_files())


def test_two_commits_from_the_same_base_in_process(setup: tuple[dict[str, str], Catalog]) -> None:
    from icefloe import _native
    from icefloe.exceptions import CommitConflictError

    _props, catalog = setup
    catalog.create_table("db.cas", schema=SCHEMA, properties={"commit.retry.num-retries": "0"})
    a = catalog.load_table("db.cas")
    b = catalog.load_table("db.cas")
    assert a.metadata_location == b.metadata_location
    data = pa.table({"writer": pa.array([1], pa.int32()), "seq": pa.array([1], pa.int32())}, schema=SCHEMA)
    files_a = _native.write_data_files(a.metadata, data.to_reader(), a._new_write_id(), 0)
    files_b = _native.write_data_files(b.metadata, data.to_reader(), b._new_write_id(), 0)
    a._commit_data_files(files_a)
    with pytest.raises(CommitConflictError):
        b._commit_data_files(files_b)
    for d in files_b:  # the loser's data files were deleted with it
        assert not Path(json.loads(d)["file_path"]).exists()
    assert catalog.load_table("db.cas").scan().count() == 1
