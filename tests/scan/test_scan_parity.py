"""Scan planning parity with Apache Iceberg Java (the oracle).

One table written by Iceberg Java through Spark SQL walks through partition specs with every
transform (identity on string, bucket, truncate on int and string, year, month, day, hour,
with fields added and dropped), gets position deletes (merge-on-read DELETE) and global
equality deletes (Java API). For 37 filters (every predicate and connective), and for time
travel by id, timestamp, branch and tag, and for incremental append ranges, the data files
icefloe plans and the delete files attached to each must equal what Java's `planFiles()`
returns. Corrupt metadata files give errors naming the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from icefloe import _native
from icefloe.exceptions import IcefloeError, ValidationError
from support.expression_cases import OPERATIONS, operations_and_terms
from support.java_commits import commit_eq_delete
from support.oracle import java_plan
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = (
    "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
)


def _rows(start: int, n: int) -> str:
    """Rows with ids start..start+n, dates and timestamps on both sides of 1970-01-01."""
    out = []
    for k in range(start, start + n):
        day = (k % 12) - 6  # -6 .. 5 days around the epoch
        d = f"date_add(DATE'1970-01-01', {day})"
        ts = f"timestamp_ntz'1970-01-01 00:00:00' + make_interval(0, 0, 0, {day}, {k % 24}, 0, 0)"
        s = "NULL" if k % 11 == 0 else f"'{'abcde'[k % 5]}{'xyz'[k % 3]}{k}'"
        cat = "NULL" if k % 13 == 0 else f"'{'abc'[k % 3]}'"
        amount = "double('NaN')" if k % 17 == 0 else f"{k * 1.5 - 40}"
        out.append(f"({k}, {k % 37 - 18}, {s}, {cat}, {d}, {ts}, {amount})")
    return ", ".join(out)


@pytest.fixture(scope="module")
def evolved(spark: Any, oracle: Any) -> dict[str, Any]:
    name = new_table_name("scanp")
    q = oracle.qualified(name)
    sql = oracle.sql
    sql(
        f"CREATE TABLE {q} (id bigint, i int, s string, cat string, d date, ts timestamp_ntz, "
        f"amount double) USING iceberg {MOR}"
    )
    snaps: dict[str, int] = {}
    sql(f"INSERT INTO {q} VALUES {_rows(0, 30)}")
    sql(f"INSERT INTO {q} VALUES {_rows(30, 30)}")
    # global equality deletes (spec 0 is unpartitioned)
    commit_eq_delete(oracle.warehouse, name, ["id"], [(3,), (33,), (1000,)], spec_id=0)
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD cat")
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD bucket(4, id)")
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD truncate(10, i)")
    sql(f"INSERT INTO {q} VALUES {_rows(100, 40)}")
    snaps["b"] = oracle.current_snapshot_id(name)
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD truncate(2, s)")
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD years(d)")
    sql(f"INSERT INTO {q} VALUES {_rows(200, 40)}")
    sql(f"ALTER TABLE {q} DROP PARTITION FIELD bucket(4, id)")
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD months(ts)")
    sql(f"INSERT INTO {q} VALUES {_rows(300, 30)}")
    snaps["d"] = oracle.current_snapshot_id(name)
    sql(f"ALTER TABLE {q} DROP PARTITION FIELD months(ts)")
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD days(ts)")
    sql(f"INSERT INTO {q} VALUES {_rows(400, 30)}")
    sql(f"ALTER TABLE {q} DROP PARTITION FIELD days(ts)")
    sql(f"ALTER TABLE {q} ADD PARTITION FIELD hours(ts)")
    sql(f"INSERT INTO {q} VALUES {_rows(500, 30)}")
    snaps["f"] = oracle.current_snapshot_id(name)
    sql(f"ALTER TABLE {q} CREATE TAG tag_f")
    sql(f"DELETE FROM {q} WHERE id % 5 = 0")  # position deletes, partition-scoped, every spec
    # narrow global equality deletes: bounds [410, 420] prune them from most data files
    commit_eq_delete(oracle.warehouse, name, ["id"], [(410,), (420,)], spec_id=0)
    sql(f"ALTER TABLE {q} CREATE BRANCH br")
    sql(f"INSERT INTO {q}.branch_br VALUES {_rows(600, 10)}")
    return {"name": name, "snaps": snaps}


def _java_plan(scan: Any) -> set[tuple[str, tuple[str, ...]]]:
    out = java_plan(scan)
    assert len(set(out)) == len(out), "Java planned a data file twice"
    return set(out)


def _icefloe_plan(scan: Any) -> set[tuple[str, tuple[str, ...]]]:
    plan = scan.plan_files()
    out = {(t.file_path, tuple(sorted(t.delete_paths))) for t in plan}
    assert len(out) == len(plan), "a data file was planned twice"
    return out


def _jlist(spark: Any, values: list[Any]) -> Any:
    from py4j.java_collections import ListConverter

    return ListConverter().convert(values, spark.sparkContext._gateway._gateway_client)


# (icefloe filter string, Java expression builder)
def _filters(spark: Any) -> list[tuple[str, Any]]:
    E = spark._jvm.org.apache.iceberg.expressions.Expressions
    L = lambda *v: _jlist(spark, list(v))  # noqa: E731
    AND, OR, NOT, IN = (getattr(E, n) for n in ("and", "or", "not", "in"))
    return [
        ("id = 7", lambda: E.equal("id", 7)),
        ("id = 215", lambda: E.equal("id", 215)),
        ("id <> 7", lambda: E.notEqual("id", 7)),
        ("id < 20", lambda: E.lessThan("id", 20)),
        ("id <= 100", lambda: E.lessThanOrEqual("id", 100)),
        ("id > 450", lambda: E.greaterThan("id", 450)),
        ("id >= 300 AND id < 330", lambda: AND(E.greaterThanOrEqual("id", 300), E.lessThan("id", 330))),
        ("id IN (3, 150, 512)", lambda: IN("id", L(3, 150, 512))),
        ("id NOT IN (3, 150)", lambda: E.notIn("id", L(3, 150))),
        ("i = -18", lambda: E.equal("i", -18)),
        ("i >= 10", lambda: E.greaterThanOrEqual("i", 10)),
        ("i < -5", lambda: E.lessThan("i", -5)),
        ("i IN (1, 2, 3)", lambda: IN("i", L(1, 2, 3))),
        ("cat = 'a'", lambda: E.equal("cat", "a")),
        ("cat IS NULL", lambda: E.isNull("cat")),
        ("cat IS NOT NULL", lambda: E.notNull("cat")),
        ("cat IN ('b', 'c')", lambda: IN("cat", L("b", "c"))),
        ("NOT (cat = 'a')", lambda: NOT(E.equal("cat", "a"))),
        ("s LIKE 'ax%'", lambda: E.startsWith("s", "ax")),
        ("s LIKE 'b%'", lambda: E.startsWith("s", "b")),
        ("s NOT LIKE 'c%'", lambda: E.notStartsWith("s", "c")),
        ("s IS NULL", lambda: E.isNull("s")),
        ("s = 'ey214'", lambda: E.equal("s", "ey214")),
        ("d = DATE '1969-12-31'", lambda: E.equal("d", "1969-12-31")),
        ("d < DATE '1970-01-01'", lambda: E.lessThan("d", "1970-01-01")),
        ("d >= DATE '1970-01-03'", lambda: E.greaterThanOrEqual("d", "1970-01-03")),
        (
            "ts >= TIMESTAMP '1969-12-30 00:00:00' AND ts < TIMESTAMP '1969-12-31 00:00:00'",
            lambda: AND(
                E.greaterThanOrEqual("ts", "1969-12-30T00:00:00"), E.lessThan("ts", "1969-12-31T00:00:00")
            ),
        ),
        ("ts > TIMESTAMP '1970-01-05 10:00:00'", lambda: E.greaterThan("ts", "1970-01-05T10:00:00")),
        ("ts = TIMESTAMP '1970-01-01 05:00:00'", lambda: E.equal("ts", "1970-01-01T05:00:00")),
        ("amount > 500.0", lambda: E.greaterThan("amount", 500.0)),
        ("amount < -30.0", lambda: E.lessThan("amount", -30.0)),
        ("isnan(amount)", lambda: E.isNaN("amount")),
        ("id < 10 OR id > 520", lambda: OR(E.lessThan("id", 10), E.greaterThan("id", 520))),
        (
            "cat = 'b' AND (i > 5 OR s LIKE 'd%')",
            lambda: AND(E.equal("cat", "b"), OR(E.greaterThan("i", 5), E.startsWith("s", "d"))),
        ),
        (
            "NOT (id >= 100 AND id < 500)",
            lambda: NOT(AND(E.greaterThanOrEqual("id", 100), E.lessThan("id", 500))),
        ),
        ("id = 410", lambda: E.equal("id", 410)),
        ("id = 99999", lambda: E.equal("id", 99999)),
    ]


def test_filters_match_java(spark: Any, oracle: Any, catalog: Any, evolved: dict[str, Any]) -> None:
    name = evolved["name"]
    table = catalog.load_table(name)
    jt = oracle.java_table(name)
    filters = _filters(spark)
    # 37 distinct filters using every predicate and connective, on every column (so on every
    # partition source: identity, bucket, truncate and the time transforms).
    assert len(filters) == 37 and len({t for t, _ in filters}) == len(filters)
    ops: set[str] = set()
    terms: set[str] = set()
    for text, _ in filters:
        o, t = operations_and_terms(json.loads(_native.parse_filter(text)))
        ops, terms = ops | o, terms | t
    assert ops == OPERATIONS, (sorted(OPERATIONS - ops), sorted(ops - OPERATIONS))
    assert terms == {"id", "i", "s", "cat", "d", "ts", "amount"}, sorted(terms)
    mismatches = []
    for text, jexpr in filters:
        expected = _java_plan(jt.newScan().filter(jexpr()))
        got = _icefloe_plan(table.scan(row_filter=text))
        if got != expected:
            mismatches.append((text, sorted(got - expected)[:3], sorted(expected - got)[:3]))
    assert not mismatches, "\n".join(f"{t}: extra {x} missing {m}" for t, x, m in mismatches)


def test_unfiltered_plan_deletes_and_metrics(oracle: Any, catalog: Any, evolved: dict[str, Any]) -> None:
    name = evolved["name"]
    table = catalog.load_table(name)
    expected = _java_plan(oracle.java_table(name).newScan())
    scan = table.scan()
    assert _icefloe_plan(scan) == expected
    assert any(len(d) > 1 for _, d in expected), "the table should have data files with several deletes"
    m = scan.metrics
    assert m["result_data_files"] == len(expected)
    assert m["result_delete_files"] == sum(len(d) for _, d in expected)
    assert m["scanned_data_manifests"] > 1 and m["planning_time_ns"] > 0
    # A second scan of the same table object reuses the decoded manifests.
    again = table.scan()
    assert _icefloe_plan(again) == expected
    assert again.metrics["manifests_from_cache"] > 0 and again.metrics["manifests_read"] == 0
    # Combined tasks cover every planned file exactly once (no split offsets overlap).
    combined = scan.plan_tasks()
    paths = sorted(t.file.file_path for c in combined for t in c.tasks if t.start == 0)
    assert paths == sorted(p for p, _ in expected)


def test_time_travel_matches_java(spark: Any, oracle: Any, catalog: Any, evolved: dict[str, Any]) -> None:
    name = evolved["name"]
    table = catalog.load_table(name)
    jt = oracle.java_table(name)
    for snap in oracle.snapshot_ids(name):
        assert _icefloe_plan(table.scan(snapshot_id=snap)) == _java_plan(jt.newScan().useSnapshot(snap)), snap
    for entry in table.metadata.snapshot_log():
        ts = entry["timestamp-ms"]
        for t in (ts, ts + 1):
            assert _icefloe_plan(table.scan(as_of_timestamp=t)) == _java_plan(jt.newScan().asOfTime(t)), t
    for ref in ("tag_f", "br", "main"):
        assert _icefloe_plan(table.scan(ref=ref)) == _java_plan(jt.newScan().useRef(ref)), ref
    # a filter on a branch
    E = spark._jvm.org.apache.iceberg.expressions.Expressions
    got = _icefloe_plan(table.scan(ref="br", row_filter="id >= 600"))
    assert got == _java_plan(jt.newScan().useRef("br").filter(E.greaterThanOrEqual("id", 600)))
    assert got


def test_incremental_append_range_matches_java(oracle: Any, catalog: Any, evolved: dict[str, Any]) -> None:
    name = evolved["name"]
    table = catalog.load_table(name)
    jt = oracle.java_table(name)
    b, d, f = (evolved["snaps"][k] for k in "bdf")
    for lo, hi in ((b, d), (b, f), (d, f)):
        expected = _java_plan(jt.newIncrementalAppendScan().fromSnapshotExclusive(lo).toSnapshot(hi))
        got = _icefloe_plan(table.scan(from_snapshot_id=lo, to_snapshot_id=hi))
        assert got == expected and got, (lo, hi)


def test_incremental_range_over_other_operations_matches_java(
    oracle: Any, catalog: Any, evolved: dict[str, Any]
) -> None:
    """A range holding overwrite / delete / replace snapshots: Java's incremental append scan
    reads the appends' files and passes the others over (icefloe refused such a range)."""
    name = evolved["name"]
    table = catalog.load_table(name)
    jt = oracle.java_table(name)
    first = table.metadata.snapshot_log()[0]["snapshot-id"]
    ops = {s.snapshot_id: str(s.summary.get("operation")) for s in table.snapshots()}
    assert set(ops.values()) - {"append"}, ops  # the range holds other operations
    expected = _java_plan(jt.newIncrementalAppendScan().fromSnapshotExclusive(first))
    got = _icefloe_plan(table.scan(from_snapshot_id=first))
    assert got == expected and got


def test_selection_errors_list_what_exists(catalog: Any, evolved: dict[str, Any]) -> None:
    table = catalog.load_table(evolved["name"])
    with pytest.raises(ValidationError, match=r"snapshot id 1 is not in the table \(known snapshot ids"):
        table.scan(snapshot_id=1)
    with pytest.raises(ValidationError, match=r"no branch or tag named 'nope'.*tag_f \(tag\)"):
        table.scan(ref="nope")
    with pytest.raises(ValidationError, match="no snapshot was current at or before timestamp 5"):
        table.scan(as_of_timestamp=5)


def _small_table(oracle: Any) -> tuple[str, Any]:
    name = new_table_name("scanc")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a'), (2, 'b')")
    return name, oracle.java_table(name)


def _local(p: str) -> Path:
    return Path(p.removeprefix("file:"))


@pytest.mark.parametrize("damage", ["truncated_manifest", "manifest_list_magic", "missing_manifest"])
def test_corrupt_inputs_name_the_file(oracle: Any, catalog: Any, damage: str) -> None:
    name, jt = _small_table(oracle)
    snap = jt.currentSnapshot()
    manifest = str(snap.allManifests(jt.io()).get(0).path())
    mlist = str(snap.manifestListLocation())
    if damage == "truncated_manifest":
        path = manifest
        data = _local(path).read_bytes()
        _local(path).write_bytes(data[: len(data) // 2])
    elif damage == "manifest_list_magic":
        path = mlist
        data = _local(path).read_bytes()
        _local(path).write_bytes(b"XXXX" + data[4:])
    else:
        path = manifest
        os.unlink(_local(path))
    table = catalog.load_table(name)
    with pytest.raises(IcefloeError) as e:
        table.scan().plan_files()
    assert path.removeprefix("file:") in str(e.value)
