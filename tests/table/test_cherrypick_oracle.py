"""Cherry-pick (`manage_snapshots().cherrypick_snapshot(id)`) against Iceberg Java's
`CherryPickOperation` (`CALL oracle.system.cherrypick_snapshot`): twin tables get the same
history, written by Java through Spark SQL; then one twin is published by icefloe and the other
by Java. Both must accept or refuse alike (the same Java message), and leave the same rows and
the same published snapshot (operation, file and record counts, `source-snapshot-id` naming the
picked snapshot, `published-wap-id`, no `replace-partitions`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

# Summary entries the published snapshot of both twins must agree on.
SUMMARY_KEYS = (
    "added-data-files",
    "deleted-data-files",
    "added-records",
    "deleted-records",
    "total-data-files",
    "total-records",
    "published-wap-id",
    "replace-partitions",
)

Prep = Callable[[Oracle, str], int]


def _create(oracle: Oracle, name: str, *, partitioned: bool = True, props: str = "") -> None:
    q = oracle.qualified(name)
    part = "PARTITIONED BY (cat)" if partitioned else ""
    extra = f", {props}" if props else ""
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, cat string) USING iceberg {part} "
        f"TBLPROPERTIES ('format-version'='2', 'write.wap.enabled'='true'{extra})"
    )
    # One task writes the rows (one file per partition): a later row-level delete then cannot
    # be answered by dropping a whole file (a metadata-only delete, which Spark never stages).
    oracle.sql(f"INSERT INTO {q} SELECT /*+ REPARTITION(1) */ * FROM VALUES (1, '0'), (2, '0'), (3, '1')")


@contextmanager
def _conf(oracle: Oracle, **settings: str) -> Iterator[None]:
    """Spark session settings (`wap_id` -> `spark.wap.id`, `overwrite_mode` ->
    `spark.sql.sources.partitionOverwriteMode`) for the block."""
    keys = {"wap_id": "spark.wap.id", "overwrite_mode": "spark.sql.sources.partitionOverwriteMode"}
    try:
        for k, v in settings.items():
            oracle.spark.conf.set(keys[k], v)
        yield
    finally:
        for k in settings:
            oracle.spark.conf.unset(keys[k])


def _snapshot_where(oracle: Oracle, name: str, pred: Callable[[dict[str, Any]], bool]) -> int:
    """The newest snapshot (metadata order) whose `.snapshots` row satisfies `pred`."""
    found = [s["snapshot_id"] for s in oracle.snapshots(name) if pred(s)]
    assert found, f"no snapshot of {name} matches"
    return int(found[-1])


def _ref(oracle: Oracle, name: str, ref: str) -> int:
    rows = oracle.sql(f"SELECT snapshot_id FROM {oracle.qualified(name)}.refs WHERE name = '{ref}'")
    assert len(rows) == 1, f"{name} has no ref {ref}"
    return int(rows[0][0])


def _java_pick(oracle: Oracle, name: str, snapshot_id: int) -> str | None:
    """None when Java publishes the snapshot, else its error text."""
    try:
        oracle.sql(f"CALL oracle.system.cherrypick_snapshot('{name}', {snapshot_id})")
    except Exception as e:
        return str(e)
    return None


def _icefloe_pick(catalog: Any, name: str, snapshot_id: int) -> str | None:
    """None when icefloe publishes the snapshot, else its ValidationError's text (any other
    error fails the test). A refusal commits nothing."""
    before = catalog.load_table(name).metadata_location
    try:
        catalog.load_table(name).manage_snapshots().cherrypick_snapshot(snapshot_id).commit()
    except ValidationError as e:
        assert catalog.load_table(name).metadata_location == before, "a refused cherry-pick committed"
        return str(e)
    return None


def _twins(oracle: Oracle, prefix: str, prep: Prep, **create: Any) -> tuple[str, int, str, int]:
    """Two tables with the same history; returns (ours, our picked id, java's, java's picked id)."""
    ours, java = new_table_name(f"{prefix}_ours"), new_table_name(f"{prefix}_java")
    for name in (ours, java):
        _create(oracle, name, **create)
    return ours, prep(oracle, ours), java, prep(oracle, java)


def _same_rows(oracle: Oracle, catalog: Any, ours: str, java: str) -> None:
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), oracle.df(java), context=f"{ours} vs {java}")
    # Java reads what icefloe committed the same way.
    assert_same_rows(oracle.df(ours), oracle.df(java), context=f"java reads {ours}")


def _published(oracle: Oracle, name: str, picked: int) -> dict[str, Any]:
    """The current snapshot's operation and SUMMARY_KEYS entries; `source-snapshot-id` as
    "picked" when it names the picked snapshot."""
    current = oracle.current_snapshot_id(name)
    row = next(s for s in oracle.snapshots(name) if s["snapshot_id"] == current)
    summary = row["summary"] or {}
    out = {"operation": row["operation"], **{k: summary.get(k) for k in SUMMARY_KEYS}}
    source = summary.get("source-snapshot-id")
    out["source-snapshot-id"] = "picked" if source == str(picked) else source
    return out


def _both_refuse(
    oracle: Oracle, catalog: Any, ours: str, sid_ours: int, java: str, sid_java: int, pattern: str
) -> None:
    rows_before = oracle.rows(java)
    java_err = _java_pick(oracle, java, sid_java)
    assert java_err is not None, "Java published the snapshot"
    assert re.search(pattern, java_err), java_err
    ours_err = _icefloe_pick(catalog, ours, sid_ours)
    assert ours_err is not None, "icefloe published a snapshot Java refuses"
    assert re.search(pattern, ours_err), ours_err
    assert oracle.rows(java) == rows_before
    _same_rows(oracle, catalog, ours, java)


# ---- (a) a snapshot picked once is not picked again ---------------------------------------------


def _picked_from_a_branch(oracle: Oracle, name: str) -> int:
    q = oracle.qualified(name)
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b")
    oracle.sql(f"INSERT INTO {q}.branch_b VALUES (10, '0')")
    picked = _ref(oracle, name, "b")
    oracle.sql(f"INSERT INTO {q} VALUES (11, '1')")  # main moves on: the pick re-applies
    return picked


def test_an_append_picked_twice_is_refused_as_java(oracle: Oracle, catalog: Any) -> None:
    ours, s_ours, java, s_java = _twins(oracle, "cp_twice", _picked_from_a_branch)
    # The first pick re-applies the append on both twins, alike.
    assert _icefloe_pick(catalog, ours, s_ours) is None
    assert _java_pick(oracle, java, s_java) is None
    _same_rows(oracle, catalog, ours, java)
    assert _published(oracle, ours, s_ours) == _published(oracle, java, s_java)
    assert _published(oracle, ours, s_ours)["source-snapshot-id"] == "picked"
    assert _published(oracle, ours, s_ours)["operation"] == "append"

    # The second is refused: an ancestor records the snapshot as its source.
    pattern = r"Cannot cherrypick snapshot \d+: already picked to create ancestor \d+"
    _both_refuse(oracle, catalog, ours, s_ours, java, s_java, pattern)
    assert "CherrypickAncestorCommitException" in (_java_pick(oracle, java, s_java) or "")
    # icefloe also recognises a pick Java made (and the other way round): cross-check on the
    # Java twin with icefloe and on ours with Java.
    assert re.search(pattern, _icefloe_pick(catalog, java, s_java) or "")
    assert re.search(pattern, _java_pick(oracle, ours, s_ours) or "")
    assert sorted(r[0] for r in oracle.rows(ours)) == [1, 2, 3, 10, 11]


# ---- (b) a staged dynamic overwrite whose partition changed since -------------------------------


def _staged_overwrite_then(main_row: str | None) -> Prep:
    """A staged (wap id w1) dynamic overwrite of cat=0, then `main_row` inserted on main."""

    def prep(oracle: Oracle, name: str) -> int:
        q = oracle.qualified(name)
        with _conf(oracle, wap_id="w1", overwrite_mode="dynamic"):
            oracle.sql(f"INSERT OVERWRITE {q} VALUES (50, '0')")
        picked = _snapshot_where(oracle, name, lambda s: (s["summary"] or {}).get("wap.id") == "w1")
        if main_row is not None:
            oracle.sql(f"INSERT INTO {q} VALUES {main_row}")
        return picked

    return prep


def test_a_dynamic_overwrite_whose_partition_changed_is_refused_as_java(oracle: Oracle, catalog: Any) -> None:
    ours, s_ours, java, s_java = _twins(oracle, "cp_changed", _staged_overwrite_then("(52, '0')"))
    pattern = r"Cannot cherry-pick replace partitions with changed partition: .*cat=0"
    _both_refuse(oracle, catalog, ours, s_ours, java, s_java, pattern)
    # main's concurrent row is kept (icefloe replaced the partition before: a lost update)
    assert sorted(r[0] for r in oracle.rows(ours)) == [1, 2, 3, 52]


def test_a_dynamic_overwrite_reapplies_exactly_its_files_as_java(oracle: Oracle, catalog: Any) -> None:
    # Main moved on in another partition: both re-apply the overwrite as a new snapshot.
    ours, s_ours, java, s_java = _twins(oracle, "cp_dynow", _staged_overwrite_then("(53, '1')"))
    assert _java_pick(oracle, java, s_java) is None
    assert _icefloe_pick(catalog, ours, s_ours) is None
    _same_rows(oracle, catalog, ours, java)
    assert sorted(r[0] for r in oracle.rows(ours)) == [3, 50, 53]
    published = _published(oracle, ours, s_ours)
    assert published == _published(oracle, java, s_java)
    assert published["operation"] == "overwrite"
    assert published["replace-partitions"] is None  # Java does not carry it over
    assert published["published-wap-id"] == "w1"
    assert published["source-snapshot-id"] == "picked"
    assert oracle.current_snapshot_id(ours) != s_ours


def _staged_overwrite_then_partition_deleted(oracle: Oracle, name: str) -> int:
    picked = _staged_overwrite_then(None)(oracle, name)
    # A metadata-only delete of the whole partition: the file the overwrite removes is gone,
    # and nothing was added to the partition.
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE cat = '0'")
    return picked


def test_a_dynamic_overwrite_whose_removed_file_is_gone_is_refused_as_java(
    oracle: Oracle, catalog: Any
) -> None:
    ours, s_ours, java, s_java = _twins(oracle, "cp_gone", _staged_overwrite_then_partition_deleted)
    _both_refuse(oracle, catalog, ours, s_ours, java, s_java, r"Missing required files to delete: ")
    assert sorted(r[0] for r in oracle.rows(ours)) == [3]


# ---- (c) a dynamic overwrite not based on an ancestor of main -----------------------------------


def _overwrite_on_a_diverged_branch(oracle: Oracle, name: str) -> int:
    q = oracle.qualified(name)
    first = oracle.current_snapshot_id(name)
    oracle.sql(f"INSERT INTO {q} VALUES (4, '1')")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b")
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {first})")
    oracle.sql(f"INSERT INTO {q} VALUES (5, '1')")  # main diverged from b
    with _conf(oracle, overwrite_mode="dynamic"):
        oracle.sql(f"INSERT OVERWRITE {q}.branch_b VALUES (60, '1')")
    return _ref(oracle, name, "b")


def test_a_dynamic_overwrite_not_based_on_an_ancestor_is_refused_as_java(
    oracle: Oracle, catalog: Any
) -> None:
    ours, s_ours, java, s_java = _twins(oracle, "cp_nonanc", _overwrite_on_a_diverged_branch)
    pattern = r"Cannot cherry-pick overwrite not based on an ancestor of the current state: \d+"
    _both_refuse(oracle, catalog, ours, s_ours, java, s_java, pattern)
    assert sorted(r[0] for r in oracle.rows(ours)) == [1, 2, 3, 5]


# ---- (d) a fast-forwardable delete whose wap id was published ----------------------------------


def _staged_delete_with_a_published_wap_id(oracle: Oracle, name: str) -> int:
    q = oracle.qualified(name)
    with _conf(oracle, wap_id="w"):
        oracle.sql(f"INSERT INTO {q} VALUES (10, '0')")
    staged = _snapshot_where(oracle, name, lambda s: (s["summary"] or {}).get("wap.id") == "w")
    oracle.sql(f"INSERT INTO {q} VALUES (4, '1')")
    oracle.sql(f"CALL oracle.system.cherrypick_snapshot('{name}', {staged})")  # publishes w (re-applied)
    with _conf(oracle, wap_id="w"):
        oracle.sql(f"DELETE FROM {q} WHERE id = 1")  # staged again with w, parent = current
    staged = _snapshot_where(
        oracle, name, lambda s: (s["summary"] or {}).get("wap.id") == "w" and s["operation"] != "append"
    )
    assert oracle.current_snapshot_id(name) != staged, "the delete was not staged"
    return staged


def test_a_fast_forwardable_delete_with_a_published_wap_id_fast_forwards_as_java(
    oracle: Oracle, catalog: Any
) -> None:
    ours, s_ours, java, s_java = _twins(
        oracle,
        "cp_wapdel",
        _staged_delete_with_a_published_wap_id,
        partitioned=False,
        props="'write.delete.mode'='merge-on-read'",
    )
    assert _java_pick(oracle, java, s_java) is None
    assert _icefloe_pick(catalog, ours, s_ours) is None
    # A fast-forward: main is the staged snapshot itself.
    assert oracle.current_snapshot_id(java) == s_java
    assert catalog.load_table(ours).current_snapshot().snapshot_id == s_ours
    _same_rows(oracle, catalog, ours, java)
    assert sorted(r[0] for r in oracle.rows(ours)) == [2, 3, 4, 10]
