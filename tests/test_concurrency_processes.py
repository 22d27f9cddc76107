"""Concurrency with real processes, on every catalog (issue 5; filesystem, SQL on sqlite and
on Postgres): many writers appending at once lose nothing; racing overwrites of one partition
leave one winner and one CommitConflictError naming the winner's snapshot (racing overwrites
of different partitions both succeed after validating); a writer killed with SIGKILL at
random points leaves a readable table holding each write whole or not at all."""

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

import icefloe
import pyarrow as pa
import pytest
from icefloe.catalog import Catalog
from icefloe.partitioning import PartitionField, PartitionSpec
from servers.postgres import new_database
from start_gate import ready_path, release, worker_env

SCHEMA = pa.schema(
    [
        pa.field("writer", pa.int32(), nullable=False),
        pa.field("seq", pa.int32(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
    ]
)
SPEC = PartitionSpec(PartitionField(3, 1000, "identity", "region"))

WORKER = r"""
import json, sys
import pyarrow as pa
import icefloe
from icefloe.exceptions import CommitConflictError
from icefloe.expressions import EqualTo
from start_gate import ready_then_wait

props, ident, writer, n, ready, go, mode, region = json.loads(sys.argv[1])
catalog = icefloe.load_catalog(**props)
table = catalog.load_table(ident)
schema = pa.schema([pa.field("writer", pa.int32(), nullable=False),
                    pa.field("seq", pa.int32(), nullable=False),
                    pa.field("region", pa.string(), nullable=False)])
def rows(seq, k):
    return pa.table({"writer": pa.array([writer] * k, pa.int32()), "seq": pa.array([seq] * k, pa.int32()),
                     "region": pa.array([region] * k)}, schema=schema)
ready_then_wait(ready, go)
out = []
if mode == "append":
    for i in range(n):
        table.append(rows(i, 1))
        out.append("ok")
elif mode in ("replace", "filter"):
    try:
        if mode == "replace":
            table.overwrite(rows(0, 3))
        else:
            table.overwrite(rows(0, 3), EqualTo("region", region))
        out.append("ok")
    except CommitConflictError as e:
        out.append("conflict: " + str(e))
elif mode == "forever":  # appends of 10 rows until killed; seq = attempt number
    i = 0
    while True:
        table.append(rows(i, 10))
        print(i, flush=True)
        i += 1
print(json.dumps(out), flush=True)
"""


def catalog_props(kind: str, tmp_path: Path, postgres: str = "") -> dict[str, str]:
    """`kind`: filesystem, sql (sqlite) or postgres (SQL catalog on a fresh database of the
    server `postgres`)."""
    if kind == "filesystem":
        return {"name": "fs", "type": "filesystem", "warehouse": str(tmp_path / "wh")}
    uri = new_database(postgres) if kind == "postgres" else f"sqlite:///{tmp_path}/c.db"
    return {"name": "sql", "type": "sql", "uri": uri, "warehouse": str(tmp_path / "wh")}


def spawn(
    props: dict[str, str], ident: str, writer: int, n: int, ready: Path, go: Path, mode: str, region: str
) -> Any:
    """A worker that loads the table, writes `ready`, waits for `go` (see start_gate), then
    runs `mode`."""
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            WORKER,
            json.dumps([props, ident, writer, n, str(ready), str(go), mode, region]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


def run(
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


@pytest.fixture(params=["filesystem", "sql", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict[str, str], Catalog]:
    server = request.getfixturevalue("postgres") if request.param == "postgres" else ""
    props = catalog_props(request.param, tmp_path, server)
    catalog = icefloe.load_catalog(**props)
    catalog.create_namespace("db")
    return props, catalog


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


@pytest.mark.timeout(600)
def test_four_writers_25_appends_each(setup: tuple[dict[str, str], Catalog], tmp_path: Path) -> None:
    props, catalog = setup
    catalog.create_table(
        "db.t",
        schema=SCHEMA,
        partition_spec=SPEC,
        properties={
            "commit.retry.num-retries": "200",
            "commit.retry.min-wait-ms": "5",
            "commit.retry.max-wait-ms": "200",
        },
    )
    regions = ["eu", "us", "eu", "apac"]
    results = run(props, "db.t", [(w, 25, "append", regions[w]) for w in range(4)], tmp_path)
    assert results == [["ok"] * 25] * 4
    table = catalog.load_table("db.t")
    snaps = table.snapshots()
    assert len(snaps) == 100
    assert sorted(s.sequence_number for s in snaps) == list(range(1, 101))
    rows = table.scan().to_arrow()
    got = sorted(zip(rows.column("writer").to_pylist(), rows.column("seq").to_pylist()))
    assert got == [(w, i) for w in range(4) for i in range(25)]
    cur = table.current_snapshot()
    assert cur is not None and cur.summary["total-records"] == "100"
    # 100 manifests reached commit.manifest.min-count-to-merge (100): the last append merged.
    assert len(table.scan().plan_files()) == 100
    on_disk, live = live_files_on_disk(table)
    assert on_disk == live


@pytest.mark.timeout(300)
def test_racing_overwrites_of_one_partition(setup: tuple[dict[str, str], Catalog], tmp_path: Path) -> None:
    props, catalog = setup
    props_t = {"commit.retry.num-retries": "10", "commit.retry.min-wait-ms": "10"}
    for mode in ("replace", "filter"):
        ident = f"db.race_{mode}"
        t = catalog.create_table(ident, schema=SCHEMA, partition_spec=SPEC, properties=props_t)
        seed = pa.table(
            {
                "writer": pa.array([9, 9], pa.int32()),
                "seq": pa.array([0, 1], pa.int32()),
                "region": ["eu", "us"],
            },
            schema=SCHEMA,
        )
        t.append(seed)
        results = run(props, ident, [(1, 1, mode, "eu"), (2, 1, mode, "eu")], tmp_path)
        outcomes = [r[0] for r in results]
        assert sorted(o.split(":")[0] for o in outcomes) == ["conflict", "ok"], outcomes
        table = catalog.load_table(ident)
        winner = 1 if outcomes[0] == "ok" else 2
        loser_msg = outcomes[2 - winner]
        # The conflict names the winner's snapshot.
        cur = table.current_snapshot()
        assert cur is not None and str(cur.snapshot_id) in loser_msg, loser_msg
        assert len(table.snapshots()) == 2
        rows = table.scan().to_arrow().to_pylist()
        assert sorted((r["writer"], r["region"]) for r in rows) == sorted([(winner, "eu")] * 3 + [(9, "us")])
        on_disk, live = live_files_on_disk(table)
        assert on_disk == live, "the loser's data files were deleted"


@pytest.mark.timeout(300)
def test_racing_overwrites_of_different_partitions_both_validate(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path
) -> None:
    props, catalog = setup
    catalog.create_table(
        "db.both",
        schema=SCHEMA,
        partition_spec=SPEC,
        properties={"commit.retry.num-retries": "10", "commit.retry.min-wait-ms": "10"},
    )
    results = run(props, "db.both", [(1, 1, "replace", "eu"), (2, 1, "replace", "us")], tmp_path)
    assert [r[0] for r in results] == ["ok", "ok"]
    table = catalog.load_table("db.both")
    rows = table.scan().to_arrow().to_pylist()
    assert sorted((r["writer"], r["region"]) for r in rows) == [(1, "eu")] * 3 + [(2, "us")] * 3


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


@pytest.mark.timeout(300)
def test_sigkilled_writer_leaves_whole_writes_or_none(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path
) -> None:
    props, catalog = setup
    catalog.create_table("db.kill", schema=SCHEMA, partition_spec=SPEC)
    kill_writers_at_random_points(props, catalog, tmp_path, seed=5)
