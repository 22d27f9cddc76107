"""Branches, tags and the current snapshot: `table.manage_snapshots()` against Iceberg Java's
SQL (`ALTER TABLE ... CREATE TAG/BRANCH`, `DROP`, the `rollback_to_snapshot`,
`set_current_snapshot` and `fast_forward` procedures) on twin tables made the same way. After
every step both twins hold the same refs (with retention), current snapshot and snapshot log,
snapshot ids mapped by position; each engine reads the other's refs."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([("id", pa.int64()), ("data", pa.string())])
DAY_MS = 86_400_000


def _rows(lo: int, hi: int) -> pa.Table:
    return pa.table({"id": list(range(lo, hi)), "data": [f"r{i}" for i in range(lo, hi)]}, schema=SCHEMA)


def _twin(catalog: Any, prefix: str) -> tuple[str, list[int]]:
    """A table with history s0 -> s1 -> s2, then a rollback to s1 and s3 on top of it (s2 is
    no longer an ancestor of main). Returns the name and the snapshot ids in commit order."""
    name = new_table_name(prefix)
    catalog.create_table(name, SCHEMA)
    table = catalog.load_table(name)
    for i in range(3):
        table.append(_rows(i * 10, i * 10 + 10))
    ids = [s.snapshot_id for s in table.snapshots()]
    table.manage_snapshots().rollback_to_snapshot(ids[1]).commit()
    table.append(_rows(30, 40))
    return name, [s.snapshot_id for s in catalog.load_table(name).snapshots()]


def _state(catalog: Any, name: str, ids: list[int]) -> dict[str, Any]:
    """Refs, current snapshot and snapshot log with snapshot ids replaced by their position."""
    md = json.loads(catalog.load_table(name).metadata.to_json())
    pos = {sid: i for i, sid in enumerate(ids)}
    refs = {k: {**v, "snapshot-id": pos[v["snapshot-id"]]} for k, v in (md.get("refs") or {}).items()}
    return {
        "refs": refs,
        "current": pos.get(md.get("current-snapshot-id")),
        "log": [pos[e["snapshot-id"]] for e in md.get("snapshot-log", [])],
    }


def test_ref_changes_equal_javas(oracle: Oracle, catalog: Any) -> None:
    ours, our_ids = _twin(catalog, "refs_ours")
    java, java_ids = _twin(catalog, "refs_java")
    q = oracle.qualified(java)
    assert _state(catalog, ours, our_ids) == _state(catalog, java, java_ids)

    steps: list[tuple[str, Callable[[Any], None], str]] = [
        (
            "tag with retention",
            lambda ms: ms.create_tag(our_ids[0], "v0", max_ref_age_ms=DAY_MS),
            f"ALTER TABLE {q} CREATE TAG v0 AS OF VERSION {java_ids[0]} RETAIN 1 DAYS",
        ),
        (
            "branch with retention",
            lambda ms: ms.create_branch(
                our_ids[1],
                "audit",
                max_ref_age_ms=7 * DAY_MS,
                max_snapshot_age_ms=2 * DAY_MS,
                min_snapshots_to_keep=3,
            ),
            f"ALTER TABLE {q} CREATE BRANCH audit AS OF VERSION {java_ids[1]} RETAIN 7 DAYS "
            "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS",
        ),
        (
            "plain branch",
            lambda ms: ms.create_branch(our_ids[2], "side"),
            f"ALTER TABLE {q} CREATE BRANCH side AS OF VERSION {java_ids[2]}",
        ),
        (
            "rollback",
            lambda ms: ms.rollback_to_snapshot(our_ids[0]),
            f"CALL oracle.system.rollback_to_snapshot('{java}', {java_ids[0]})",
        ),
        (
            "set current to a non-ancestor",
            lambda ms: ms.set_current_snapshot(our_ids[3]),
            f"CALL oracle.system.set_current_snapshot(table => '{java}', snapshot_id => {java_ids[3]})",
        ),
        (
            "fast-forward",
            lambda ms: ms.fast_forward("audit", "main"),
            f"CALL oracle.system.fast_forward('{java}', 'audit', 'main')",
        ),
        (
            "replace tag",
            lambda ms: ms.replace_tag("v0", our_ids[2]),
            f"ALTER TABLE {q} REPLACE TAG v0 AS OF VERSION {java_ids[2]} RETAIN 1 DAYS",
        ),
        ("drop tag", lambda ms: ms.remove_tag("v0"), f"ALTER TABLE {q} DROP TAG v0"),
        ("drop branch", lambda ms: ms.remove_branch("side"), f"ALTER TABLE {q} DROP BRANCH side"),
    ]
    for what, ours_op, java_sql in steps:
        with catalog.load_table(ours).manage_snapshots() as ms:
            ours_op(ms)
        oracle.sql(java_sql)
        assert _state(catalog, ours, our_ids) == _state(catalog, java, java_ids), what

    # Each engine reads the other's branch: Java our `audit`, we Java's.
    for name in (ours, java):
        table = catalog.load_table(name)
        java_rows = oracle.spark.sql(f"SELECT * FROM {oracle.qualified(name)} VERSION AS OF 'audit'")
        assert_same_rows(table.scan().use_ref("audit").to_arrow(), java_rows, context=name)
        assert table.snapshot_by_name("audit") == table.snapshot_by_id(table.refs()["audit"].snapshot_id)
        assert table.refs()["audit"].min_snapshots_to_keep == 3


def test_rollback_to_timestamp_picks_the_newest_older_ancestor(catalog: Any) -> None:
    name, ids = _twin(catalog, "refs_time")
    table = catalog.load_table(name)
    times = {s.snapshot_id: s.timestamp_ms for s in table.snapshots()}
    # The ancestors of main are s3, s1, s0: s2 (rolled back) is never picked.
    table.manage_snapshots().rollback_to_timestamp(times[ids[3]]).commit()
    assert catalog.load_table(name).current_snapshot().snapshot_id == ids[1]
    with pytest.raises(ValidationError, match="no valid snapshot older than"):
        table.manage_snapshots().rollback_to_timestamp(times[ids[0]]).commit()


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (lambda ms, ids: ms.rollback_to_snapshot(ids[2]), "not an ancestor"),
        (lambda ms, ids: ms.rollback_to_snapshot(123), "cannot find snapshot with id 123"),
        (lambda ms, ids: ms.remove_branch("main"), "cannot remove the main branch"),
        (lambda ms, ids: ms.create_tag(ids[0], "t").create_tag(ids[1], "t"), "ref 't' already exists"),
        (
            lambda ms, ids: ms.create_branch(ids[0], "b").fast_forward("b", "nope"),
            "ref 'nope' does not exist",
        ),
        (lambda ms, ids: ms.create_branch(ids[2], "b").fast_forward("b", "main"), "is not an ancestor"),
        (lambda ms, ids: ms.remove_tag("main"), "tag 'main' does not exist"),
        (
            lambda ms, ids: ms.create_branch(ids[0], "b", min_snapshots_to_keep=0),
            "must be a positive integer",
        ),
    ],
)
def test_bad_ref_changes_are_errors_that_change_nothing(catalog: Any, op: Any, message: str) -> None:
    name, ids = _twin(catalog, "refs_bad")
    before = catalog.load_table(name).metadata_location
    with pytest.raises(ValidationError, match=message):
        with catalog.load_table(name).manage_snapshots() as ms:
            op(ms, ids)
    assert catalog.load_table(name).metadata_location == before
