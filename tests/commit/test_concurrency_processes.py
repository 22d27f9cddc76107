"""Concurrency with real processes, on every catalog (issue 5; filesystem, SQL on sqlite and
on Postgres): many writers appending at once lose nothing; racing overwrites of one partition
leave one winner and one CommitConflictError naming the winner's snapshot (racing overwrites
of different partitions both succeed after validating); a writer killed with SIGKILL at
random points leaves a readable table holding each write whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from icefloe.catalog import Catalog
from support.catalogs import new_catalog
from support.racing_writers import (
    SCHEMA,
    SPEC,
    kill_writers_at_random_points,
    live_files_on_disk,
    run_writers,
)


@pytest.fixture(params=["filesystem", "sql", "postgres"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[dict[str, str], Catalog]:
    return new_catalog(request, request.param, tmp_path, namespace="db")


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
    results = run_writers(props, "db.t", [(w, 25, "append", regions[w]) for w in range(4)], tmp_path)
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
        results = run_writers(props, ident, [(1, 1, mode, "eu"), (2, 1, mode, "eu")], tmp_path)
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
    results = run_writers(props, "db.both", [(1, 1, "replace", "eu"), (2, 1, "replace", "us")], tmp_path)
    assert [r[0] for r in results] == ["ok", "ok"]
    table = catalog.load_table("db.both")
    rows = table.scan().to_arrow().to_pylist()
    assert sorted((r["writer"], r["region"]) for r in rows) == [(1, "eu")] * 3 + [(2, "us")] * 3


@pytest.mark.timeout(300)
def test_sigkilled_writer_leaves_whole_writes_or_none(
    setup: tuple[dict[str, str], Catalog], tmp_path: Path
) -> None:
    props, catalog = setup
    catalog.create_table("db.kill", schema=SCHEMA, partition_spec=SPEC)
    kill_writers_at_random_points(props, catalog, tmp_path, seed=5)
