"""A MERGE's conflict-detection filter, with real processes (serializable isolation).

As Iceberg Java's MERGE, a merge that lost the race is validated only against what it could
have read: the conjuncts of its `on` condition over the target alone (`target.region =
'eu'`) and, in process, the source's keys. A process loads the table and waits; another
commits an append or a merge-on-read delete; then the first runs its MERGE from the version
it loaded. A concurrent change in another partition, or of keys the merge does not touch, is
no conflict (the merge commits on top of it); one that may touch the merge's rows is (the
merge fails with CommitConflictError, commits nothing and leaves no file behind).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import IdentityTransform, PartitionField, PartitionSpec
from support.catalogs import catalog_props
from support.row_level_data import ARROW, SCHEMA
from support.start_gate import open_gate, ready_path, wait_ready, worker_env

PROPS = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
    "commit.retry.num-retries": "5",
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "100",
}

# The process: support/workers/merge_racer.py (a MERGE, an append or a delete).
WORKER = "support.workers.merge_racer"

BEFORE = [(i, "eu", float(i)) for i in range(10)] + [(100 + i, "us", float(i)) for i in range(10)]
# The MERGE: updates eu rows 1 and 2, inserts eu row 50.
MERGE_ROWS = [(1, "eu", -1.0), (2, "eu", -2.0), (50, "eu", 50.0)]
ON = "target.region = 'eu' AND target.id = source.id"

# (concurrent operation, its argument, rows it leaves, whether the MERGE must conflict)
CASES = {
    "append-other-partition": ("append", [(200, "us", 0.0)], "+200", False),
    "delete-other-partition": ("delete", "region = 'us' and id < 105", "-100..104", False),
    "append-same-partition-other-key": ("append", [(300, "eu", 0.0)], "+300", False),
    "append-a-merged-key": ("append", [(50, "eu", 0.5)], "+50", True),
    "delete-a-merged-row": ("delete", "id = 2", "-2", True),
}


def _worker(props: dict[str, str], ident: str, mode: str, arg: Any, ready: str, go: str) -> Any:
    """With `go`: loads the table, writes `ready`, waits for `go` (start_gate), then runs."""
    return subprocess.Popen(
        [sys.executable, "-m", WORKER, json.dumps([props, ident, mode, arg, ready, go])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


def _result(p: Any) -> list[Any]:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    result: list[Any] = json.loads(out.strip().splitlines()[-1])
    return result


def _rows(t: Any) -> dict[int, tuple[str, float]]:
    return {r["id"]: (r["region"], r["amount"]) for r in t.scan().to_arrow().to_pylist()}


@pytest.mark.parametrize(
    ("case", "kind"),
    [(case, "filesystem") for case in sorted(CASES)]
    + [("append-same-partition-other-key", "sql"), ("delete-a-merged-row", "sql")],
)
def test_merge_conflicts_only_with_concurrent_changes_it_could_have_read(
    case: str, kind: str, tmp_path: Path
) -> None:
    mode, arg, _, conflicts = CASES[case]
    props = catalog_props(kind, tmp_path)
    cat = icefloe.load_catalog(**props)
    cat.create_namespace("db")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    t = cat.create_table("db.t", schema=SCHEMA, partition_spec=spec, properties=PROPS)
    t.append(pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in BEFORE], schema=ARROW))

    # The merging process loads the table, then waits while the other one commits.
    go = tmp_path / "go"
    ready = ready_path(go, 0)
    merging = _worker(props, "db.t", "merge", {"rows": MERGE_ROWS, "on": ON}, str(ready), str(go))
    wait_ready([merging], [ready])
    assert _result(_worker(props, "db.t", mode, arg, "", "")) == ["ok"]
    after_concurrent = _rows(t.refresh())
    snapshots = len(t.snapshots())
    open_gate(go)
    out = _result(merging)

    t.refresh()
    if conflicts:
        assert out[0] == "conflict", out
        assert _rows(t) == after_concurrent, "the failed merge committed nothing"
        assert len(t.snapshots()) == snapshots
    else:
        assert out == ["ok", 2, 1], out
        expected = dict(after_concurrent)
        expected.update({k: (region, amount) for k, region, amount in MERGE_ROWS})
        assert _rows(t) == expected
    # Every file under data/ is live: a failed merge left nothing behind.
    live = set()
    for task in t.scan().plan_files():
        live.add(task.file.file_path)
        live.update(d.file_path for d in task.delete_files)
    on_disk = {str(p) for p in (Path(t.location().removeprefix("file://")) / "data").rglob("*.parquet")}
    assert {p.removeprefix("file://") for p in live} == on_disk


def test_merge_with_a_not_matched_by_source_clause_conflicts_with_any_concurrent_append(
    tmp_path: Path,
) -> None:
    """`when_not_matched_by_source_*` acts on every target row: the whole table is its scope."""
    props = catalog_props("filesystem", tmp_path)
    cat = icefloe.load_catalog(**props)
    cat.create_namespace("db")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    t = cat.create_table("db.t", schema=SCHEMA, partition_spec=spec, properties=PROPS)
    t.append(pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in BEFORE], schema=ARROW))
    stale = cat.load_table("db.t")
    cat.load_table("db.t").append(
        pa.Table.from_pylist([{"id": 200, "region": "us", "amount": 0.0}], schema=ARROW)
    )
    source = pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in MERGE_ROWS], schema=ARROW)
    from icefloe.exceptions import CommitConflictError

    with pytest.raises(CommitConflictError):
        stale.merge(source, ON).when_matched_update_all().when_not_matched_by_source_delete(
            condition="target.region = 'eu'"
        ).execute()
    # Without that clause the same merge from the same stale version commits.
    stale = cat.load_table("db.t")
    cat.load_table("db.t").append(
        pa.Table.from_pylist([{"id": 201, "region": "us", "amount": 0.0}], schema=ARROW)
    )
    m = stale.merge(source, ON).when_matched_update_all().execute()
    assert m.rows_updated == 2
