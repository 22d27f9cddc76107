"""Conflict detection of overwrite by filter, with real processes on both catalogs (issue 5):
only concurrent files that may hold rows matching the filter conflict — decided from their
partition and column stats (Iceberg Java's `validateAddedDataFiles(conflictDetectionFilter)`),
not "anything committed in between".

The interleaving is made deterministic: the overwriting process loads the table, then waits
until the appending process has committed, so its first swap always loses and it must
refresh, validate and retry (or give up naming the winner)."""

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
from icefloe.partitioning import PartitionField, PartitionSpec
from support.catalogs import new_catalog
from support.start_gate import open_gate, ready_path, release, wait_ready, worker_env

SCHEMA = pa.schema(
    [
        pa.field("writer", pa.int32(), nullable=False),
        pa.field("seq", pa.int32(), nullable=False),
        pa.field("region", pa.string(), nullable=False),
    ]
)
SPEC = PartitionSpec(PartitionField(3, 1000, "identity", "region"))

# The writer process: support/workers/filter_writer.py (an append or an overwrite by filter).
WORKER = "support.workers.filter_writer"


def spawn(props: dict[str, str], ident: str, args: list[Any], ready: Path, wait_for: Path) -> Any:
    """A worker that loads the table, writes `ready`, then waits for `wait_for` (start_gate)."""
    return subprocess.Popen(
        [sys.executable, "-m", WORKER, json.dumps([props, ident, *args, str(ready), str(wait_for)])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


def result(p: Any) -> dict[str, Any]:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, f"worker failed:\n{err}"
    return dict(json.loads(out.strip().splitlines()[-1]))


@pytest.fixture(params=["filesystem", "sql"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict[str, str], Catalog]:
    return new_catalog(request, request.param, tmp_path, namespace="db")


def seeded(catalog: Catalog, ident: str) -> Any:
    t = catalog.create_table(
        ident,
        schema=SCHEMA,
        partition_spec=SPEC,
        properties={"commit.retry.num-retries": "10", "commit.retry.min-wait-ms": "10"},
    )
    seed = pa.table(
        {"writer": pa.array([9, 9], pa.int32()), "seq": pa.array([0, 1], pa.int32()), "region": ["eu", "us"]},
        schema=SCHEMA,
    )
    t.append(seed)
    return t


def overwrite_after_append(
    props: dict[str, str], ident: str, tmp_path: Path, row_filter: str, append: tuple[str, int]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The overwrite (writer 1: 3 rows of `eu`, seq 100..102) starts from the seeded version;
    the append (writer 2, one row in `append`'s region and seq) commits before it swaps."""
    go_append, go_overwrite = tmp_path / f"{ident}-a", tmp_path / f"{ident}-o"
    readies = [ready_path(go_overwrite, 0), ready_path(go_append, 0)]
    o = spawn(props, ident, [1, "overwrite", "eu", 100, row_filter], readies[0], go_overwrite)
    a = spawn(props, ident, [2, "append", append[0], append[1], None], readies[1], go_append)
    wait_ready([o, a], readies)  # both loaded the seeded version
    open_gate(go_append)
    ra = result(a)  # the append committed
    open_gate(go_overwrite)
    return result(o), ra


def data_files_on_disk(table: Any) -> list[str]:
    data_dir = Path(table.location()) / "data"
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs)


def referenced_files(table: Any) -> list[str]:
    return sorted(
        {
            t.file.file_path
            for s in table.snapshots()
            for t in table.scan(snapshot_id=s.snapshot_id).plan_files()
        }
    )


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("row_filter", "append"),
    [("region = 'eu'", ("us", 5)), ("seq >= 100", ("eu", 5))],
    ids=["other-partition", "same-partition-outside-stats"],
)
def test_overwrite_retries_past_an_append_it_cannot_match(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path, row_filter: str, append: tuple[str, int]
) -> None:
    props, catalog = setup
    seeded(catalog, "db.t")
    ro, ra = overwrite_after_append(props, "db.t", tmp_path, row_filter, append)
    assert ra["result"] == "ok" and ro["result"] == "ok", (ra, ro)
    # The overwrite lost its first swap, validated against the append and went on top of it.
    assert ro["parent"] == ra["snapshot"]
    table = catalog.load_table("db.t")
    assert len(table.snapshots()) == 3
    rows = sorted((r["writer"], r["seq"], r["region"]) for r in table.scan().to_arrow().to_pylist())
    survivors = [(9, 0, "eu"), (9, 1, "us")] if row_filter == "seq >= 100" else [(9, 1, "us")]
    assert rows == sorted(survivors + [(2, 5, append[0])] + [(1, 100 + i, "eu") for i in range(3)])
    assert data_files_on_disk(table) == referenced_files(table), "the lost attempt left no garbage"


@pytest.mark.timeout(300)
@pytest.mark.parametrize(
    ("row_filter", "append"),
    [("region = 'eu'", ("eu", 5)), ("seq >= 100", ("us", 200))],
    ids=["same-partition", "other-partition-inside-filter"],
)
def test_overwrite_conflicts_with_an_append_it_may_match(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path, row_filter: str, append: tuple[str, int]
) -> None:
    props, catalog = setup
    seeded(catalog, "db.t")
    ro, ra = overwrite_after_append(props, "db.t", tmp_path, row_filter, append)
    assert ra["result"] == "ok", ra
    assert ro["result"] == "conflict", ro
    assert str(ra["snapshot"]) in ro["message"], ro  # names the winner
    table = catalog.load_table("db.t")
    assert len(table.snapshots()) == 2
    rows = sorted((r["writer"], r["seq"], r["region"]) for r in table.scan().to_arrow().to_pylist())
    assert rows == sorted([(9, 0, "eu"), (9, 1, "us"), (2, append[1], append[0])])
    assert data_files_on_disk(table) == referenced_files(table), "the loser's files were deleted"


@pytest.mark.timeout(300)
def test_overwrite_and_append_of_other_partitions_at_once(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path
) -> None:
    """No imposed order: whichever swaps first, both succeed and nothing is lost."""
    props, catalog = setup
    seeded(catalog, "db.t")
    go = tmp_path / "go"
    readies = [ready_path(go, i) for i in range(3)]
    procs = [
        spawn(props, "db.t", [1, "overwrite", "eu", 100, "region = 'eu'"], readies[0], go),
        *[spawn(props, "db.t", [2 + i, "append", "us", i, None], readies[1 + i], go) for i in range(2)],
    ]
    release(procs, readies, go)  # all three start from the seeded version
    results = [result(p) for p in procs]
    assert [r["result"] for r in results] == ["ok"] * 3, results
    table = catalog.load_table("db.t")
    assert len(table.snapshots()) == 4
    rows = sorted((r["writer"], r["seq"], r["region"]) for r in table.scan().to_arrow().to_pylist())
    assert rows == sorted([(9, 1, "us"), (2, 0, "us"), (3, 1, "us")] + [(1, 100 + i, "eu") for i in range(3)])
