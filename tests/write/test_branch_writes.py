"""Writes to branches (`branch="audit"` on every write): the snapshot lands on the branch
only, built on the branch's head; Java reads our branches and writes to them, we read and
write on top of Java's; `main` never moves. A write to a tag is an error that writes nothing."""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pytest
from icefloe.exceptions import ValidationError
from icefloe.expressions import EqualTo
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([("id", pa.int64()), ("data", pa.string())])


def _rows(lo: int, hi: int, tag: str = "r") -> pa.Table:
    return pa.table({"id": list(range(lo, hi)), "data": [f"{tag}{i}" for i in range(lo, hi)]}, schema=SCHEMA)


def _java_branch(oracle: Oracle, name: str, branch: str) -> Any:
    return oracle.spark.sql(f"SELECT * FROM {oracle.qualified(name)} VERSION AS OF '{branch}'")


def _same_on(oracle: Oracle, catalog: Any, name: str, branch: str) -> None:
    table = catalog.load_table(name)
    ours = table.scan().use_ref(branch).to_arrow()
    assert_same_rows(ours, _java_branch(oracle, name, branch), context=f"{name}@{branch}")


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_every_write_on_a_branch_leaves_main_alone(oracle: Oracle, catalog: Any, mode: str) -> None:
    name = new_table_name("branch_w")
    catalog.create_table(
        name,
        SCHEMA,
        properties={
            "write.delete.mode": mode,
            "write.update.mode": mode,
            "write.merge.mode": mode,
        },
    )
    table = catalog.load_table(name)
    table.append(_rows(0, 20))
    main_head = table.current_snapshot().snapshot_id
    with table.manage_snapshots() as ms:
        ms.create_branch(main_head, "audit")

    table.append(_rows(20, 30, "b"), branch="audit")
    table.delete("id < 5", branch="audit")
    table.overwrite(_rows(100, 103, "o"), overwrite_filter="id >= 25", branch="audit")
    table.update("id = 7", {"data": "seven"}, branch="audit")
    table.upsert(_rows(8, 10, "u"), join_cols=["id"], branch="audit")

    fresh = catalog.load_table(name)
    assert fresh.current_snapshot().snapshot_id == main_head, "main must not move"
    assert table.current_snapshot().snapshot_id == main_head, "the table object follows main"
    assert fresh.refs()["audit"].snapshot_id != main_head
    # The branch's history is a chain on top of main's head.
    md = json.loads(fresh.metadata.to_json())
    parents = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in md["snapshots"]}
    chain, sid = [], fresh.refs()["audit"].snapshot_id
    while sid is not None:
        chain.append(sid)
        sid = parents.get(sid)
    assert chain[-1] == main_head and len(chain) == 6
    assert [e["snapshot-id"] for e in md["snapshot-log"]] == [main_head]

    expected = {i: f"r{i}" for i in range(5, 20)} | {i: f"b{i}" for i in range(20, 25)}
    expected |= {100: "o100", 101: "o101", 102: "o102", 7: "seven", 8: "u8", 9: "u9"}
    ours = fresh.scan().use_ref("audit").to_arrow()
    assert dict(zip(ours["id"].to_pylist(), ours["data"].to_pylist())) == expected
    assert len(ours) == len(expected)
    _same_on(oracle, catalog, name, "audit")
    assert_same_rows(fresh.scan().to_arrow(), oracle.df(name), context="main")

    # Java writes on our branch, we write on top of Java's commit, both read the same.
    oracle.sql(f"INSERT INTO {oracle.qualified(name)}.branch_audit VALUES (500, 'java')")
    catalog.load_table(name).append(_rows(600, 601, "i"), branch="audit")
    _same_on(oracle, catalog, name, "audit")
    assert catalog.load_table(name).current_snapshot().snapshot_id == main_head


def test_first_write_to_a_missing_branch_forks_from_main_as_java_does(oracle: Oracle, catalog: Any) -> None:
    ours, java = new_table_name("branch_new_ours"), new_table_name("branch_new_java")
    for name in (ours, java):
        catalog.create_table(name, SCHEMA)
        catalog.load_table(name).append(_rows(0, 3))
    catalog.load_table(ours).append(_rows(10, 12, "n"), branch="fresh")
    oracle.java_table(java).newFastAppend().toBranch("fresh").commit()
    for name in (ours, java):
        table = catalog.load_table(name)
        head = table.snapshot_by_name("fresh")
        assert head is not None and head.parent_snapshot_id == table.current_snapshot().snapshot_id, name
        _same_on(oracle, catalog, name, "fresh")
    ids = catalog.load_table(ours).scan().use_ref("fresh").to_arrow()["id"].to_pylist()
    assert sorted(ids) == [0, 1, 2, 10, 11]


def test_a_tag_cannot_be_written(catalog: Any) -> None:
    name = new_table_name("branch_tag")
    catalog.create_table(name, SCHEMA)
    table = catalog.load_table(name)
    table.append(_rows(0, 3))
    with table.manage_snapshots() as ms:
        ms.create_tag(table.current_snapshot().snapshot_id, "v1")
    before = catalog.load_table(name).metadata_location
    data_dir = catalog.load_table(name).location()
    files_before = {os.path.join(d, f) for d, _, fs in os.walk(data_dir.removeprefix("file://")) for f in fs}
    with pytest.raises(ValidationError, match="is a tag"):
        table.append(_rows(3, 5), branch="v1")
    with pytest.raises(ValidationError, match="is a tag"):
        table.delete("id = 1", branch="v1")
    assert catalog.load_table(name).metadata_location == before
    files_after = {os.path.join(d, f) for d, _, fs in os.walk(data_dir.removeprefix("file://")) for f in fs}
    assert files_after == files_before, "a refused write leaves nothing behind"


def _history(catalog: Any, name: str) -> list[dict[str, Any]]:
    """Snapshots in commit order with ids replaced by positions: operation, the summary
    keys write-audit-publish sets, parent; plus which one is current."""
    md = json.loads(catalog.load_table(name).metadata.to_json())
    pos = {s["snapshot-id"]: i for i, s in enumerate(md["snapshots"])}
    out = []
    for s in md["snapshots"]:
        summary = s["summary"]
        out.append(
            {
                "operation": summary["operation"],
                "parent": pos.get(s.get("parent-snapshot-id")),
                "added-records": summary.get("added-records"),
                "wap.id": summary.get("wap.id"),
                "published-wap-id": summary.get("published-wap-id"),
                "source": pos.get(int(summary["source-snapshot-id"]))
                if "source-snapshot-id" in summary
                else None,
                "current": s["snapshot-id"] == md.get("current-snapshot-id"),
            }
        )
    return out


def test_write_audit_publish_equals_javas(oracle: Oracle, catalog: Any) -> None:
    ours, java = new_table_name("wap_ours"), new_table_name("wap_java")
    for name in (ours, java):
        catalog.create_table(name, SCHEMA, properties={"write.wap.enabled": "true"})
        catalog.load_table(name).append(_rows(0, 3))

    # Stage w1 on the current snapshot and publish it (a fast-forward); stage w2, let main
    # move on, publish w2 (re-applied as a new append).
    table = catalog.load_table(ours)
    table.append(_rows(10, 12, "w"), snapshot_properties={"wap.id": "w1"})
    assert catalog.load_table(ours).current_snapshot().snapshot_id == table.snapshots()[0].snapshot_id
    staged1 = catalog.load_table(ours).snapshots()[-1].snapshot_id
    table.manage_snapshots().cherrypick_snapshot(staged1).commit()
    table.append(_rows(20, 22, "x"), snapshot_properties={"wap.id": "w2"})
    staged2 = catalog.load_table(ours).snapshots()[-1].snapshot_id
    table.append(_rows(30, 31, "m"))
    table.manage_snapshots().cherrypick_snapshot(staged2).commit()

    q = oracle.qualified(java)
    spark = oracle.spark
    try:
        spark.conf.set("spark.wap.id", "w1")
        oracle.sql(f"INSERT INTO {q} VALUES (10, 'w10'), (11, 'w11')")
        j1 = oracle.java_table(java).snapshots()
        staged1_java = list(j1)[-1].snapshotId()
        oracle.sql(f"CALL oracle.system.cherrypick_snapshot('{java}', {staged1_java})")
        spark.conf.set("spark.wap.id", "w2")
        oracle.sql(f"INSERT INTO {q} VALUES (20, 'x20'), (21, 'x21')")
        staged2_java = list(oracle.java_table(java).snapshots())[-1].snapshotId()
    finally:
        spark.conf.unset("spark.wap.id")
    oracle.sql(f"INSERT INTO {q} VALUES (30, 'm30')")
    oracle.sql(f"CALL oracle.system.cherrypick_snapshot('{java}', {staged2_java})")

    assert _history(catalog, ours) == _history(catalog, java)
    for name in (ours, java):
        assert_same_rows(catalog.load_table(name).scan().to_arrow(), oracle.df(name), context=name)
    assert sorted(catalog.load_table(ours).scan().to_arrow()["id"].to_pylist()) == [
        0,
        1,
        2,
        10,
        11,
        20,
        21,
        30,
    ]

    # A WAP id publishes once (a fast-forwarded staged snapshot's wap.id counts, as Java's
    # WapUtil); an ancestor cannot be picked.
    before = catalog.load_table(ours).metadata_location
    for staged in (staged2, staged1):
        with pytest.raises(ValidationError, match="published already"):
            catalog.load_table(ours).manage_snapshots().cherrypick_snapshot(staged).commit()
    first = min(catalog.load_table(ours).snapshots(), key=lambda s: s.sequence_number).snapshot_id
    with pytest.raises(ValidationError, match="already an ancestor"):
        catalog.load_table(ours).manage_snapshots().cherrypick_snapshot(first).commit()
    assert catalog.load_table(ours).metadata_location == before


def test_spark_writes_on_a_branch(oracle: Oracle, catalog: Any) -> None:
    import icefloe.spark

    spark = oracle.spark
    name = new_table_name("branch_spark")
    catalog.create_table(name, SCHEMA, properties={"write.delete.mode": "merge-on-read"})
    table = catalog.load_table(name)
    table.append(_rows(0, 10))
    main_head = table.current_snapshot().snapshot_id
    df = spark.createDataFrame(_rows(10, 20, "s").to_pandas())
    icefloe.spark.append(df, table, branch="dev")
    icefloe.spark.delete(spark, table, f"id IN ({', '.join(str(i) for i in range(0, 20, 2))})", branch="dev")
    icefloe.spark.update(spark, table, "id = 3", {"data": "'three'"}, branch="dev")
    icefloe.spark.merge(
        spark.createDataFrame(_rows(5, 6, "m").to_pandas()), table, "target.id = source.id", branch="dev"
    ).when_matched_update_all().execute()
    fresh = catalog.load_table(name)
    assert fresh.current_snapshot().snapshot_id == main_head
    got = fresh.scan().use_ref("dev").to_arrow()
    expected = {i: f"r{i}" for i in range(1, 10, 2)} | {i: f"s{i}" for i in range(11, 20, 2)}
    expected |= {3: "three", 5: "m5"}
    assert dict(zip(got["id"].to_pylist(), got["data"].to_pylist())) == expected and len(got) == len(expected)
    _same_on(oracle, catalog, name, "dev")
    assert sorted(fresh.scan().to_arrow()["id"].to_pylist()) == list(range(10))


def test_a_branch_reads_with_the_tables_schema_a_tag_with_its_snapshots(oracle: Oracle, catalog: Any) -> None:
    """Java's `SnapshotUtil.schemaFor`: a branch whose head predates schema changes reads with
    the table's current schema (filters may name the new names), a tag with its snapshot's."""
    import icefloe.spark

    name = new_table_name("branch_schema")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, a string, d int) USING iceberg")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'x', 10), (2, 'y', 20)")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b")
    oracle.sql(f"ALTER TABLE {q} CREATE TAG t0")
    oracle.sql(f"ALTER TABLE {q} RENAME COLUMN a TO a2")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN n string")
    oracle.sql(f"ALTER TABLE {q} DROP COLUMN d")
    table = catalog.load_table(name)
    for ref in ("b", "t0"):
        java = _java_branch(oracle, name, ref)
        ours = table.scan(ref=ref).to_arrow()
        assert ours.column_names == java.columns, ref
        assert_same_rows(ours, java, context=ref)
        spark_ours = icefloe.spark.read(oracle.spark, table, ref=ref)
        assert spark_ours.columns == java.columns, ref
        # builder-style changes keep reading the ref
        assert table.scan(ref=ref).select("id").to_arrow().num_rows == 2
    filtered = table.scan(ref="b", row_filter="a2 = 'x'")
    assert_same_rows(filtered.to_arrow(), _java_branch(oracle, name, "b").where("a2 = 'x'"), context="filter")
    assert table.scan(ref="b").filter(EqualTo("a2", "y")).to_arrow().column("id").to_pylist() == [2]


def test_branch_writes_and_fast_forward_on_a_table_without_main(oracle: Oracle, catalog: Any) -> None:
    """Write-audit-publish on a new table: writes land on `audit` while `main` does not exist
    yet, each returns the branch's new snapshot, and fast-forwarding `main` to `audit` creates
    it there, as Java's `fast_forward` procedure does."""
    import icefloe.spark

    name = new_table_name("branch_nomain")
    catalog.create_table(name, SCHEMA)
    table = catalog.load_table(name)
    table.append(_rows(0, 5), branch="audit")  # creates the branch
    first = table.snapshot_by_name("audit")
    assert first is not None and first.parent_snapshot_id is None
    more = oracle.spark.createDataFrame(_rows(5, 8).to_pylist())
    icefloe.spark.append(more, table, branch="audit")
    table = catalog.load_table(name)
    second = table.snapshot_by_name("audit")
    assert second is not None and second.parent_snapshot_id == first.snapshot_id
    assert "main" not in table.refs() and table.current_snapshot() is None
    third = table.delete("id = 0", branch="audit")
    assert third is not None and catalog.load_table(name).refs()["audit"].snapshot_id == third.snapshot_id
    _same_on(oracle, catalog, name, "audit")

    with table.manage_snapshots() as ms:
        ms.fast_forward("main", "audit")
    table = catalog.load_table(name)
    assert table.current_snapshot() is not None
    assert table.current_snapshot().snapshot_id == table.refs()["audit"].snapshot_id == third.snapshot_id
    assert_same_rows(table.scan().to_arrow(), oracle.df(name), context="main after fast-forward")
    assert sorted(r.id for r in oracle.df(name).collect()) == list(range(1, 8))


def test_spark_writes_and_reads_follow_the_sessions_wap_settings(oracle: Oracle, catalog: Any) -> None:
    """In a session with `spark.wap.branch` / `spark.wap.id` (a table with
    `write.wap.enabled=true`), icefloe.spark writes land where Java's do: on the WAP branch,
    or staged with the wap id; reads see the WAP branch. Both settings at once: Java's error."""
    import icefloe.spark

    spark = oracle.spark
    name = new_table_name("wap_session")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint) USING iceberg TBLPROPERTIES "
        "('write.wap.enabled'='true', 'write.delete.mode'='merge-on-read')"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1), (2), (3)")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH audit")

    def ids(sql: str) -> list[int]:
        return sorted(r[0] for r in spark.sql(sql).collect())

    try:
        spark.conf.set("spark.wap.branch", "audit")
        oracle.sql(f"INSERT INTO {q} VALUES (10)")
        icefloe.spark.append(spark.createDataFrame([(11,)], "id long"), catalog.load_table(name))
        icefloe.spark.delete(spark, catalog.load_table(name), "id = 2")
        java_read = ids(f"SELECT id FROM {q}")
        ours = sorted(r.id for r in icefloe.spark.read(spark, catalog.load_table(name)).collect())
        assert java_read == ours == [1, 3, 10, 11]
        with pytest.raises(ValidationError, match=r"both branch and WAP branch"):
            icefloe.spark.append(spark.range(12, 13), catalog.load_table(name), branch="x")
        spark.conf.set("spark.wap.id", "w1")
        with pytest.raises(ValidationError, match=r"Cannot set both WAP ID and branch"):
            icefloe.spark.append(spark.createDataFrame([(12,)], "id long"), catalog.load_table(name))
    finally:
        spark.conf.unset("spark.wap.branch")
        spark.conf.unset("spark.wap.id")
    assert ids(f"SELECT id FROM {q}") == [1, 2, 3]  # main never moved

    try:
        spark.conf.set("spark.wap.id", "w1")
        oracle.sql(f"INSERT INTO {q} VALUES (20)")
        icefloe.spark.append(spark.createDataFrame([(21,)], "id long"), catalog.load_table(name))
    finally:
        spark.conf.unset("spark.wap.id")
    assert ids(f"SELECT id FROM {q}") == [1, 2, 3]  # both staged
    staged = spark.sql(f"SELECT summary['wap.id'] AS w FROM {q}.snapshots")
    staged = staged.where("w IS NOT NULL")
    assert [r.w for r in staged.collect()] == ["w1", "w1"]


def test_a_wap_id_write_to_a_branch_is_staged_as_javas(oracle: Oracle, catalog: Any) -> None:
    """With `write.wap.enabled=true`, a write carrying a wap id is staged on a branch too
    (Java's stageOnly): the branch does not move, the snapshot waits to be cherry-picked."""
    spark = oracle.spark
    staged = {}
    for who in ("java", "ours"):
        name = new_table_name(f"wap_branch_{who}")
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id bigint) USING iceberg TBLPROPERTIES "
            "('write.wap.enabled'='true', 'write.delete.mode'='merge-on-read')"
        )
        oracle.sql(f"INSERT INTO {q} VALUES (1), (2)")
        oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b")
        if who == "java":
            try:
                spark.conf.set("spark.wap.id", "x")
                oracle.sql(f"INSERT INTO {q}.branch_b VALUES (3)")
            finally:
                spark.conf.unset("spark.wap.id")
        else:
            wap = {"wap.id": "x"}
            catalog.load_table(name).append(pa.table({"id": pa.array([3], pa.int64())}), wap, branch="b")
            catalog.load_table(name).delete("id = 1", snapshot_properties=wap, branch="b")
        refs = {r.name: r.snapshot_id for r in spark.sql(f"SELECT * FROM {q}.refs").collect()}
        assert refs["b"] == refs["main"], (who, refs)  # the branch never moved
        assert sorted(r.id for r in spark.sql(f"SELECT * FROM {q}.branch_b").collect()) == [1, 2], who
        rows = spark.sql(f"SELECT operation, summary['wap.id'] AS w FROM {q}.snapshots").where("w = 'x'")
        staged[who] = sorted(r.operation for r in rows.collect())
    assert staged == {"java": ["append"], "ours": ["append", "delete"]}


@pytest.mark.parametrize("value", [" true", "TRUE"])
def test_wap_enabled_is_read_as_javas_boolean(oracle: Oracle, catalog: Any, value: str) -> None:
    """`write.wap.enabled` is read as Java's `Boolean.parseBoolean`, the same in
    `Table` (staging a write that carries a wap id) and in `icefloe.spark` (following the
    session's `spark.wap.branch`): "TRUE" enables write-audit-publish, " true" does not
    (Java does not trim the value)."""
    import icefloe.spark

    enabled = value == "TRUE"
    spark = oracle.spark
    name = new_table_name("wap_value")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint) USING iceberg TBLPROPERTIES ('write.wap.enabled'='{value}')")
    oracle.sql(f"INSERT INTO {q} VALUES (1)")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH audit")

    def ids(sql: str) -> list[int]:
        return sorted(r[0] for r in spark.sql(sql).collect())

    head = catalog.load_table(name).current_snapshot().snapshot_id
    catalog.load_table(name).append(pa.table({"id": pa.array([2], pa.int64())}), {"wap.id": "w"})
    assert (catalog.load_table(name).current_snapshot().snapshot_id == head) == enabled  # staged
    try:
        spark.conf.set("spark.wap.branch", "audit")
        oracle.sql(f"INSERT INTO {q} VALUES (3)")
        icefloe.spark.append(spark.createDataFrame([(4,)], "id long"), catalog.load_table(name))
        java_read = ids(f"SELECT id FROM {q}")
        ours = sorted(r.id for r in icefloe.spark.read(spark, catalog.load_table(name)).collect())
        assert java_read == ours == ([1, 3, 4] if enabled else [1, 2, 3, 4])
    finally:
        spark.conf.unset("spark.wap.branch")
    assert ids(f"SELECT id FROM {q}") == ([1] if enabled else [1, 2, 3, 4])
    assert ids(f"SELECT id FROM {q}.branch_audit") == ([1, 3, 4] if enabled else [1])


def test_publish_changes_cherry_picks_the_staged_wap_snapshot_as_java(oracle: Oracle, catalog: Any) -> None:
    """`CALL system.publish_changes(table, wap_id)` through `icefloe.spark.sql` on a twin of
    Java's table: the snapshot staged with the WAP id is cherry-picked (Java's result columns,
    the same rows); an unknown and a non-unique WAP id are Java's errors, nothing changed."""
    import icefloe.spark

    spark = oracle.spark
    names = new_table_name("publish_java"), new_table_name("publish_ours")
    for name in names:
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} (id bigint) USING iceberg TBLPROPERTIES ('write.wap.enabled'='true')")
        oracle.sql(f"INSERT INTO {q} VALUES (1)")
    java, ours = names
    try:
        spark.conf.set("spark.wap.id", "w1")
        oracle.sql(f"INSERT INTO {oracle.qualified(java)} VALUES (2)")
        icefloe.spark.append(spark.createDataFrame([(2,)], "id long"), catalog.load_table(ours))
        spark.conf.set("spark.wap.id", "dup")
        for _ in range(2):
            oracle.sql(f"INSERT INTO {oracle.qualified(java)} VALUES (3)")
            icefloe.spark.append(spark.createDataFrame([(3,)], "id long"), catalog.load_table(ours))
    finally:
        spark.conf.unset("spark.wap.id")
    theirs = spark.sql(f"CALL {oracle.catalog}.system.publish_changes('{java}', 'w1')")
    mine = icefloe.spark.sql(
        spark, f"CALL ice.system.publish_changes('{ours}', 'w1')", catalogs={"ice": catalog}
    )
    assert mine.schema == theirs.schema
    ((source, current),) = [tuple(r) for r in mine.collect()]
    staged = [s for s in catalog.load_table(ours).snapshots() if s.summary.get("wap.id") == "w1"]
    assert (
        source == staged[0].snapshot_id and current == catalog.load_table(ours).current_snapshot().snapshot_id
    )
    theirs.collect()
    for name in names:
        assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {oracle.qualified(name)}").collect()) == [1, 2]
    for wap, message in (("nope", "Cannot apply unknown WAP ID 'nope'"), ("dup", "non-unique WAP ID")):
        with pytest.raises(Exception, match=message):
            spark.sql(f"CALL {oracle.catalog}.system.publish_changes('{java}', '{wap}')").collect()
        before = catalog.load_table(ours).current_snapshot().snapshot_id
        with pytest.raises(ValidationError, match=message):
            icefloe.spark.sql(
                spark, f"CALL ice.system.publish_changes('{ours}', '{wap}')", catalogs={"ice": catalog}
            )
        assert catalog.load_table(ours).current_snapshot().snapshot_id == before
