"""Snapshot expiry (`table.maintenance.expire_snapshots`) against Apache Iceberg Java's
`CALL oracle.system.expire_snapshots(...)` (the oracle).

Twins in time: one table with a varied history (Java and icefloe writes, merge-on-read
deletes, a metadata-only partition delete, a copy-on-write overwrite, a branch, tags with
and without a max ref age, a snapshot left unreferenced by a rollback, table and partition
statistics files) is built once and kept as a byte-for-byte copy. Each case restores the
table, runs icefloe's expiry, records what it deleted and kept; restores it again, runs
Java's procedure with the same arguments, records the same. The deleted files, the Java
procedure's counts, the snapshots, refs and snapshot log left must be equal, and after each
run both engines read the table's current rows and icefloe reads every retained snapshot
exactly as before.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe.exceptions import ValidationError
from support.maintenance_helpers import relative, ts_literal, visible_files
from support.oracle import Oracle, assert_same_rows, canonical_rows
from support.session import new_table_name
from support.start_gate import ready_path, release, worker_env

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = "'format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'"


class History:
    """The shared table, its pristine copy, and what each snapshot reads."""

    def __init__(
        self, name: str, root: Path, backup: Path, ids: dict[str, int], rows: dict[int, Any]
    ) -> None:
        self.name, self.root, self.backup, self.ids, self.rows = name, root, backup, ids, rows

    def restore(self) -> None:
        shutil.rmtree(self.root)
        shutil.copytree(self.backup, self.root)  # copy2: modification times kept


@pytest.fixture(scope="module")
def history(spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, tmp_path_factory: Any) -> History:
    name = new_table_name("expire")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, region STRING, v STRING) USING iceberg PARTITIONED BY (region) "
        f"TBLPROPERTIES ({MOR})"
    )
    ids: dict[str, int] = {}

    def mark(label: str) -> None:
        cur = oracle.current_snapshot_id(name)
        assert cur is not None
        ids[label] = cur

    oracle.sql(
        f"INSERT INTO {q} VALUES (1,'eu','a'),(2,'eu','b'),(3,'us','c'),(4,'us','d'),(5,'ap','e'),"
        "(6,'ap','f')"
    )
    mark("s1")
    t = catalog.load_table(name)
    t.append(
        pa.table(
            {"id": [7, 8, 9], "region": ["eu", "us", "ap"], "v": ["g", "h", "i"]},
            schema=t.schema().as_arrow(),
        )
    )
    mark("s2")
    oracle.sql(f"DELETE FROM {q} WHERE id = 2")  # position deletes
    mark("s3")
    oracle.sql(f"UPDATE {q} SET v = 'u' WHERE id = 7")  # position deletes + new data
    mark("s4")
    oracle.sql(f"DELETE FROM {q} WHERE region = 'ap'")  # whole files removed
    mark("s5")
    t = catalog.load_table(name)
    t.overwrite(
        pa.table({"id": [30], "region": ["us"], "v": ["x"]}, schema=t.schema().as_arrow()), "region = 'us'"
    )
    mark("s6")
    oracle.sql(f"INSERT INTO {q} VALUES (10,'eu','j')")
    mark("s7")
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {ids['s6']})")
    oracle.sql(f"INSERT INTO {q} VALUES (11,'us','k')")  # s7 is now on no ref
    mark("s8")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b AS OF VERSION {ids['s3']}")
    oracle.sql(f"INSERT INTO {q}.branch_b VALUES (20,'eu','l')")
    oracle.sql(f"DELETE FROM {q}.branch_b WHERE id = 1")
    ids["b2"] = oracle.java_table(name).refs().get("b").snapshotId()
    oracle.sql(f"ALTER TABLE {q} CREATE TAG keep AS OF VERSION {ids['s2']}")
    jt = oracle.java_table(name)
    jt.manageSnapshots().createTag("old", ids["s1"]).setMaxRefAgeMs("old", 1).commit()
    oracle.sql(f"CALL oracle.system.compute_table_stats(table => '{name}', snapshot_id => {ids['s3']})")
    oracle.sql(f"CALL oracle.system.compute_table_stats(table => '{name}')")
    oracle.sql(f"CALL oracle.system.compute_partition_stats(table => '{name}', snapshot_id => {ids['s1']})")

    t = catalog.load_table(name)
    rows = {
        s.snapshot_id: canonical_rows(t.scan(snapshot_id=s.snapshot_id).to_arrow()) for s in t.snapshots()
    }
    assert len(rows) == 10  # s1..s8 and two on branch b
    md = json.loads(t.metadata.to_json())
    assert len(md["statistics"]) == 2 and len(md["partition-statistics"]) == 1
    root = warehouse / "db" / name.split(".")[1]
    backup = tmp_path_factory.mktemp("expire_backup") / "t"
    shutil.copytree(root, backup)
    return History(name, root, backup, ids, rows)


def table_state(catalog: Any, name: str) -> dict[str, Any]:
    t = catalog.load_table(name)
    md = json.loads(t.metadata.to_json())
    return {
        "snapshots": sorted(s.snapshot_id for s in t.snapshots()),
        "refs": {k: v["snapshot-id"] for k, v in t.metadata.refs().items()},
        "log": [e.snapshot_id for e in t.history()],
        "current": t.metadata.current_snapshot_id,
        "statistics": sorted(s["snapshot-id"] for s in md.get("statistics", [])),
        "partition-statistics": sorted(s["snapshot-id"] for s in md.get("partition-statistics", [])),
    }


def check_reads(h: History, oracle: Oracle, catalog: Any) -> None:
    """Both engines read the current rows; icefloe reads every retained snapshot as before."""
    t = catalog.load_table(h.name)
    assert_same_rows(oracle.df(h.name), t.scan().to_arrow(), context="current rows, Java vs icefloe")
    for s in t.snapshots():
        assert_same_rows(
            t.scan(snapshot_id=s.snapshot_id).to_arrow(),
            h.rows[s.snapshot_id],
            context=f"snapshot {s.snapshot_id}",
        )


def java_call(h: History, oracle: Oracle, **args: Any) -> dict[str, int]:
    parts = [f"table => '{h.name}'"]
    older_than = args.get("older_than")
    if isinstance(older_than, dt.datetime):
        older_than = (older_than - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(
            milliseconds=1
        )
    if older_than is not None:
        parts.append(f"older_than => {ts_literal(older_than)}")
    if args.get("retain_last") is not None:
        parts.append(f"retain_last => {args['retain_last']}")
    if args.get("snapshot_ids") is not None:
        parts.append("snapshot_ids => array(" + ", ".join(f"{i}L" for i in args["snapshot_ids"]) + ")")
    row = oracle.sql(f"CALL oracle.system.expire_snapshots({', '.join(parts)})")[0]
    return dict(row.asDict())


def run_twins(h: History, oracle: Oracle, catalog: Any, setup: Any = None, **args: Any) -> Any:
    """Runs icefloe's and Java's expiry on the restored table; asserts they agree; returns
    icefloe's result."""
    h.restore()
    if setup:
        setup()
    before = visible_files(h.root)
    ours = catalog.load_table(h.name).maintenance.expire_snapshots(**args)
    deleted_ours = before - visible_files(h.root)
    assert {relative(p, h.root) for p in ours.deleted_files} == deleted_ours
    assert not ours.failed_deletes
    state_ours = table_state(catalog, h.name)
    check_reads(h, oracle, catalog)
    # No checksum file of a deleted file is left behind.
    for f in deleted_ours:
        p = h.root / f
        assert not (p.parent / f".{p.name}.crc").exists(), f

    h.restore()
    if setup:
        setup()
    before_java = visible_files(h.root)
    counts = java_call(h, oracle, **args)
    deleted_java = before_java - visible_files(h.root)
    state_java = table_state(catalog, h.name)
    check_reads(h, oracle, catalog)

    assert deleted_ours == deleted_java
    assert state_ours == state_java
    assert counts == {
        "deleted_data_files_count": ours.deleted_data_files_count,
        "deleted_position_delete_files_count": ours.deleted_position_delete_files_count,
        "deleted_equality_delete_files_count": ours.deleted_equality_delete_files_count,
        "deleted_manifest_files_count": ours.deleted_manifests_count,
        "deleted_manifest_lists_count": ours.deleted_manifest_lists_count,
        "deleted_statistics_files_count": ours.deleted_statistics_files_count,
    }
    expired = set(h.rows) - set(state_ours["snapshots"])
    assert set(ours.expired_snapshot_ids) == expired
    return ours


def test_older_than(history: History, oracle: Oracle, catalog: Any) -> None:
    h = history
    t = catalog.load_table(h.name)
    cut = t.snapshot_by_id(h.ids["s4"]).timestamp_ms
    ours = run_twins(h, oracle, catalog, older_than=dt.datetime.fromtimestamp(cut / 1000, tz=dt.timezone.utc))
    # s1 (its tag too old), s3 (the branch keeps only its head and newer) expire; the tag
    # `keep` holds s2.
    assert set(ours.expired_snapshot_ids) == {h.ids["s1"], h.ids["s3"]}
    assert ours.removed_refs == ("old",)
    assert ours.deleted_manifest_lists_count == 2
    assert ours.deleted_statistics_files_count == 2  # s3's table stats, s1's partition stats
    assert ours.deleted_bytes > 0


def test_retain_last(history: History, oracle: Oracle, catalog: Any) -> None:
    h = history
    now = int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    ours = run_twins(h, oracle, catalog, older_than=now, retain_last=3)
    kept = set(h.rows) - set(ours.expired_snapshot_ids)
    # main keeps s8, s6, s5; the branch b2, its parent, s3; the tag s2.
    assert {h.ids[k] for k in ("s8", "s6", "s5", "s3", "s2", "b2")} <= kept
    assert h.ids["s7"] in ours.expired_snapshot_ids
    assert ours.deleted_data_files_count > 0


def test_snapshot_ids_leave_a_gap_the_log_drops(history: History, oracle: Oracle, catalog: Any) -> None:
    h = history
    ours = run_twins(h, oracle, catalog, older_than=0, snapshot_ids=[h.ids["s7"], h.ids["s4"]])
    assert set(ours.expired_snapshot_ids) == {h.ids["s7"], h.ids["s4"]}
    # The history before the removed s4 is gone from the snapshot log, as Java drops it.
    log = [e.snapshot_id for e in catalog.load_table(h.name).history()]
    assert h.ids["s1"] not in log and log[-1] == h.ids["s8"]


def test_table_properties_and_ref_retention(history: History, oracle: Oracle, catalog: Any) -> None:
    h = history

    def setup() -> None:
        oracle.sql(
            f"ALTER TABLE {oracle.qualified(h.name)} SET TBLPROPERTIES ("
            "'history.expire.max-snapshot-age-ms'='1', 'history.expire.min-snapshots-to-keep'='2')"
        )
        jt = oracle.java_table(h.name)
        jt.manageSnapshots().setMinSnapshotsToKeep("b", 1).setMaxRefAgeMs("keep", 1).commit()

    ours = run_twins(h, oracle, catalog, setup=setup)
    state = table_state(catalog, h.name)
    assert set(state["refs"]) == {"main", "b"}
    assert set(state["snapshots"]) == {h.ids["s8"], h.ids["s6"], h.ids["b2"]}
    assert set(ours.removed_refs) == {"keep", "old"}


def test_a_snapshot_a_ref_holds_is_refused_by_both(history: History, oracle: Oracle, catalog: Any) -> None:
    h = history
    h.restore()
    before = visible_files(h.root)
    t = catalog.load_table(h.name)
    with pytest.raises(ValidationError, match=f"cannot expire snapshot {h.ids['s2']}.*keep"):
        t.maintenance.expire_snapshots(snapshot_ids=[h.ids["s2"]])
    assert visible_files(h.root) == before  # no commit, nothing deleted
    with pytest.raises(Exception, match="Still referenced by refs"):
        java_call(h, oracle, snapshot_ids=[h.ids["s2"]])


def test_nothing_to_expire_commits_nothing(history: History, catalog: Any) -> None:
    h = history
    h.restore()
    before = visible_files(h.root)
    t = catalog.load_table(h.name)
    # Only the tag past its max ref age goes; every snapshot is young enough for older_than=0.
    first = t.maintenance.expire_snapshots(older_than=0)
    assert (first.expired_snapshot_ids, first.removed_refs, first.deleted_files) == ((), ("old",), ())
    assert before <= visible_files(h.root)
    location = catalog.load_table(h.name).metadata_location
    second = catalog.load_table(h.name).maintenance.expire_snapshots(older_than=0)
    assert second == type(second)()
    assert catalog.load_table(h.name).metadata_location == location


def test_bad_arguments(history: History, catalog: Any) -> None:
    h = history
    h.restore()
    t = catalog.load_table(h.name)
    with pytest.raises(ValidationError, match="time zone"):
        t.maintenance.expire_snapshots(older_than=dt.datetime(2020, 1, 1))
    with pytest.raises(ValidationError, match="retain_last"):
        t.maintenance.expire_snapshots(retain_last=0)
    with pytest.raises(ValidationError, match="snapshot_ids"):
        t.maintenance.expire_snapshots(snapshot_ids=["1"])  # type: ignore[list-item]
    assert catalog.load_table(h.name).metadata_location == t.metadata_location


def test_gc_disabled_is_refused(catalog: Any, tmp_path: Path) -> None:
    name = new_table_name("gc")
    t = catalog.create_table(
        name, schema=pa.schema([pa.field("id", pa.int64())]), properties={"gc.enabled": "false"}
    )
    t.append(pa.table({"id": [1]}))
    t.append(pa.table({"id": [2]}))
    with pytest.raises(ValidationError, match="GC is disabled"):
        t.maintenance.expire_snapshots(retain_last=1, older_than=dt.datetime.now(dt.timezone.utc))
    assert len(catalog.load_table(name).snapshots()) == 2


def test_format_v3_deletion_vectors(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, tmp_path: Path
) -> None:
    """Deletion vectors replaced by later ones (Puffin files) and data files of an expired
    history, v3: the same files as Java's procedure."""
    name = new_table_name("expire_v3")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ("
        "'format-version'='3', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 50)")
    for k in range(3):
        oracle.sql(f"DELETE FROM {q} WHERE id % 7 = {k}")
    oracle.sql(f"UPDATE {q} SET v = 'x' WHERE id = 10")
    t = catalog.load_table(name)
    rows = {
        s.snapshot_id: canonical_rows(t.scan(snapshot_id=s.snapshot_id).to_arrow()) for s in t.snapshots()
    }
    root = warehouse / "db" / name.split(".")[1]
    backup = tmp_path / "backup"
    shutil.copytree(root, backup)
    h = History(name, root, backup, {}, rows)
    cut = t.snapshots()[-1].timestamp_ms
    ours = run_twins(h, oracle, catalog, older_than=cut)
    assert ours.deleted_position_delete_files_count >= 2  # replaced DV Puffin files


# ---- concurrency: a writer appending and deleting while another process expires ------------

# The two processes: support/workers/expire_writer.py and support/workers/expirer.py.
WRITER = "support.workers.expire_writer"
EXPIRER = "support.workers.expirer"


def _spawn(module: str, args: list[Any]) -> Any:
    return subprocess.Popen(
        [sys.executable, "-m", module, json.dumps(args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


@pytest.mark.timeout(600)
def test_expiry_racing_a_writer_loses_and_resurrects_nothing(
    oracle: Oracle, catalog: Any, warehouse: Path, tmp_path: Path
) -> None:
    name = new_table_name("expire_race")
    schema = pa.schema(
        [pa.field("seq", pa.int64(), nullable=False), pa.field("k", pa.int64(), nullable=False)]
    )
    catalog.create_table(
        name,
        schema=schema,
        properties={
            "write.delete.mode": "merge-on-read",
            "commit.retry.num-retries": "100",
            "commit.retry.min-wait-ms": "5",
            "commit.retry.max-wait-ms": "100",
        },
    )
    props = {"name": "local", "type": "filesystem", "warehouse": str(warehouse)}
    go, done = tmp_path / "go", tmp_path / "done"
    n = 40
    readies = [ready_path(go, 0), ready_path(go, 1)]
    writer = _spawn(WRITER, [props, name, n, str(readies[0]), str(go), str(done)])
    expirer = _spawn(EXPIRER, [props, name, str(readies[1]), str(go), str(done)])
    release([writer, expirer], readies, go)  # both imported icefloe and loaded the table
    results = []
    for p in (writer, expirer):
        out, err = p.communicate(timeout=500)
        assert p.returncode == 0, f"worker failed:\n{err}"
        results.append(json.loads(out.strip().splitlines()[-1]))
    log, (runs, expired, deleted) = results
    assert runs >= 3 and expired > 0 and deleted > 0, (runs, expired, deleted)

    # The model: what every successful step left.
    model: dict[tuple[int, int], bool] = {}
    for step in log:
        if step[0] == "append":
            model.update({(step[1], k): True for k in range(5)})
        elif step[0] == "delete":
            seq, mor = step[1], step[2]
            for k in range(5):
                model.pop((seq, k), None)
            if mor:
                model.pop((seq + 1, 0), None)
    expected = pa.table(
        {"seq": [s for s, _ in sorted(model)], "k": [k for _, k in sorted(model)]}, schema=schema
    )
    t = catalog.load_table(name)
    assert_same_rows(t.scan().to_arrow(), expected, context="icefloe after the race")
    assert_same_rows(oracle.df(name), expected, context="Java after the race")
    # Every snapshot left reads whole (no file it needs was deleted).
    for s in t.snapshots():
        t.scan(snapshot_id=s.snapshot_id).to_arrow()
    # A last expiry leaves one snapshot and deletes everything else the writer left.
    t.maintenance.expire_snapshots(older_than=time.time_ns() // 1_000_000, retain_last=1)
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="after the last expiry")
    assert len(catalog.load_table(name).snapshots()) == 1
