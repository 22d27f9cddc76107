"""`table.maintenance.rewrite_manifests` checked against Apache Iceberg Java's procedure.

Parity on one table, as the compaction tests do: Java builds the table (many small appends,
several partitions, merge-on-read deletes, a partition evolution); at snapshot S Java's
`CALL oracle.system.rewrite_manifests(...)` rewrites its manifests and what it made is
recorded; the table is rolled back to S and icefloe rewrites them. The manifests replaced and
created, the file paths each new manifest holds, each entry's snapshot id and sequence
numbers, and the summary must be Java's; both engines then read the rows of S from both
results, and Java's `manifests` / `entries` metadata tables describe icefloe's manifests.

Concurrency: a delete committed while the rewrite was being built makes the first attempt
lose the swap; the rewrite is rebuilt on the new snapshot, the deleted rows stay deleted and
the lost attempt's manifests are removed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = "'format-version'='2', 'write.delete.mode'='merge-on-read'"


def _appends(spark: Any, oracle: Oracle, name: str, regions: list[str], start: int) -> int:
    """One small append (one file, one manifest) per region in `regions`."""
    n = start
    for region in regions:
        spark.sql(f"SELECT id, '{region}' AS region FROM range({n}, {n + 10})").coalesce(1).writeTo(
            oracle.qualified(name)
        ).append()
        n += 10
    return n


def _table(spark: Any, oracle: Oracle, props: str = "") -> str:
    """Java's table: eight small appends over four regions, then merge-on-read deletes."""
    name = new_table_name("manifests")
    extra = f", {props}" if props else ""
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING) USING iceberg "
        f"PARTITIONED BY (region) TBLPROPERTIES ({MOR}{extra})"
    )
    _appends(spark, oracle, name, ["eu", "us", "ap", "eu", "af", "us", "ap", "eu"], 0)
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id IN (3, 14, 77)")
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id = 25")
    return name


def _manifests(oracle: Oracle, name: str) -> dict[str, dict[str, Any]]:
    """The current snapshot's manifests (Java's `manifests` table) with their live entries."""
    q = oracle.qualified(name)
    out = {r["path"]: r.asDict(recursive=True) for r in oracle.sql(f"SELECT * FROM {q}.manifests")}
    for m in out.values():
        m["entries"] = []
    rows = oracle.sql(
        f"SELECT input_file_name() AS manifest, status, snapshot_id, sequence_number, "
        f"file_sequence_number, data_file.file_path AS path, data_file.content AS content "
        f"FROM {q}.entries WHERE status < 2"
    )
    for r in rows:
        key = r["manifest"]
        match = out.get(key) or next(m for p, m in out.items() if key.endswith(p.split(":", 1)[-1]))
        match["entries"].append(
            (r["path"], r["content"], r["snapshot_id"], r["sequence_number"], r["file_sequence_number"])
        )
    return out


def _view(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a rewrite changed: the manifests replaced, the groups of files each new manifest
    holds (per content and spec), and every live entry (file, content, snapshot id, sequence
    numbers)."""
    replaced = sorted(set(before) - set(after))
    added = [after[p] for p in after if p not in before]
    return {
        "replaced": replaced,
        "groups": Counter(
            (m["content"], m["partition_spec_id"], frozenset(e[0] for e in m["entries"])) for m in added
        ),
        "entries": sorted(e for m in after.values() for e in m["entries"]),
        "added_counts": sorted(
            (m["added_data_files_count"], m["existing_data_files_count"], m["added_delete_files_count"])
            for m in added
        ),
    }


def _java_then_ours(
    spark: Any, oracle: Oracle, catalog: Any, name: str, spec_id: int | None = None
) -> tuple[dict[str, Any], dict[str, Any], Any, Any, dict[str, Any]]:
    """Java's procedure at S, rollback to S, ours: (java view, our view, java result row,
    our result, java's snapshot summary)."""
    start = oracle.current_snapshot_id(name)
    assert start is not None
    before = _manifests(oracle, name)
    args = f"table => '{name}'" + (f", spec_id => {spec_id}" if spec_id is not None else "")
    java_result = oracle.sql(f"CALL oracle.system.rewrite_manifests({args})")[0]
    java = _view(before, _manifests(oracle, name))
    java_summary = oracle.snapshots(name)[-1]["summary"]
    java_snapshot = oracle.current_snapshot_id(name)
    java["rows"] = oracle.canonical(name, java_snapshot)
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    table = catalog.load_table(name)
    assert table.current_snapshot().snapshot_id == start
    result = table.maintenance.rewrite_manifests(spec_id=spec_id)
    ours = _view(before, _manifests(oracle, name))
    return java, ours, java_result, result, java_summary


def _check(
    java: dict[str, Any], ours: dict[str, Any], java_result: Any, result: Any, java_summary: dict[str, Any]
) -> None:
    assert java["replaced"], "the fixture must give Java something to rewrite"
    assert ours["replaced"] == java["replaced"]
    assert ours["groups"] == java["groups"], "each new manifest holds the files Java's holds"
    assert ours["entries"] == java["entries"], "same live files, snapshot ids and sequence numbers"
    assert ours["added_counts"] == java["added_counts"]
    assert result.rewritten_manifests_count == java_result["rewritten_manifests_count"]
    assert result.added_manifests_count == java_result["added_manifests_count"]
    assert result.rewritten_manifests_bytes > 0 and result.added_manifests_bytes > 0


@pytest.mark.parametrize("target", [None, "tiny"], ids=["default-target", "three-manifests"])
def test_rewrite_manifests_matches_javas_procedure(
    spark: Any, oracle: Oracle, catalog: Any, target: str | None
) -> None:
    name = _table(spark, oracle)
    if target == "tiny":
        # About a third of the data manifests' bytes: both engines cluster into three ranges.
        total = sum(m["length"] for m in _manifests(oracle, name).values() if m["content"] == 0)
        oracle.sql(
            f"ALTER TABLE {oracle.qualified(name)} SET TBLPROPERTIES "
            f"('commit.manifest.target-size-bytes'='{total // 3 + 1}')"
        )
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    java, ours, java_result, result, java_summary = _java_then_ours(spark, oracle, catalog, name)
    _check(java, ours, java_result, result, java_summary)
    if target == "tiny":
        data_groups = [g for g in ours["groups"] if g[0] == 0]
        assert len(data_groups) == 3
    # The summary: Java's keys and values (entries-processed: ours counts them, Java's 0).
    summary = oracle.snapshots(name)[-1]
    assert summary["operation"] == "replace"
    for key in (
        "manifests-created",
        "manifests-kept",
        "manifests-replaced",
        "total-data-files",
        "total-delete-files",
        "total-records",
        "total-files-size",
        "total-position-deletes",
    ):
        assert summary["summary"].get(key) == java_summary.get(key), key
    assert java_summary.get("entries-processed") == "0"
    assert summary["summary"]["entries-processed"] == str(len(ours["entries"]))
    assert result.entries_processed_count == len(ours["entries"])
    # Both engines read the rows of S from both results.
    assert_same_rows(java["rows"], expected, context="Java reading its own rewrite")
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's rewrite")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe reading it")


def test_rewrite_manifests_after_partition_evolution(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """Two specs: by default only the current spec's manifests are rewritten (its data
    manifests); spec_id=0 rewrites the old spec's (its delete manifests)."""
    name = _table(spark, oracle)
    q = oracle.qualified(name)
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD bucket(2, id) AS b")
    _appends(spark, oracle, name, ["eu", "us", "eu"], 1000)
    # Java's appends merged spec 0's data manifests into one; deletes of its rows after the
    # evolution add spec 0 delete manifests (and one of spec 1).
    oracle.sql(f"DELETE FROM {q} WHERE id IN (5, 33)")
    oracle.sql(f"DELETE FROM {q} WHERE id IN (1003, 1011)")
    oracle.sql(f"DELETE FROM {q} WHERE id = 47")
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    for spec_id in (None, 0):
        oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
        java, ours, java_result, result, java_summary = _java_then_ours(
            spark, oracle, catalog, name, spec_id=spec_id
        )
        _check(java, ours, java_result, result, java_summary)
        specs = {g[1] for g in ours["groups"]}
        assert specs == {1 if spec_id is None else 0}
        assert_same_rows(
            oracle.canonical(name), expected, context=f"Java reading icefloe's rewrite of {spec_id}"
        )
        assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe reading it")


def test_nothing_to_rewrite_and_bad_spec(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("manifests")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING) USING iceberg "
        f"PARTITIONED BY (region) TBLPROPERTIES ({MOR})"
    )
    _appends(spark, oracle, name, ["eu"], 0)
    java_result = oracle.sql(f"CALL oracle.system.rewrite_manifests(table => '{name}')")[0]
    assert java_result["rewritten_manifests_count"] == 0
    table = catalog.load_table(name)
    snap = table.current_snapshot().snapshot_id
    result = table.maintenance.rewrite_manifests()
    assert result.rewritten_manifests_count == 0 and result.snapshot_id is None
    assert catalog.load_table(name).current_snapshot().snapshot_id == snap
    with pytest.raises(ValidationError, match="spec id 9"):
        table.maintenance.rewrite_manifests(spec_id=9)


def test_a_concurrent_delete_is_kept_when_the_rewrite_rebuilds(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path
) -> None:
    name = _table(spark, oracle)
    stale = catalog.load_table(name)  # the rewrite's first attempt builds on this version
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE region = 'af'")  # removes a whole file
    deleted_at = oracle.current_snapshot_id(name)
    assert deleted_at != stale.current_snapshot().snapshot_id
    expected = oracle.canonical(name)
    metadata_dir = warehouse.joinpath(*name.split(".")) / "metadata"
    result = stale.maintenance.rewrite_manifests()
    assert result.rewritten_manifests_count > 0
    assert_same_rows(oracle.canonical(name), expected, context="Java after rewrite + concurrent delete")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe after it")
    table = catalog.load_table(name)
    assert table.current_snapshot().parent_snapshot_id == deleted_at, "rebuilt on the delete"
    live = {"/" + p.removeprefix("file:").lstrip("/") for p in _manifests(oracle, name)}
    ours_on_disk = {str(p) for p in metadata_dir.glob("optimized-m-*.avro")}
    assert {p for p in live if "optimized-m-" in p} == ours_on_disk, (
        "the lost attempt's manifests are deleted"
    )


def test_v3_rewrite_keeps_row_lineage(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """Format v3: the rewritten entries keep their first row ids, so Java reads every row
    with the `_row_id` and `_last_updated_sequence_number` it had."""
    name = new_table_name("manifests")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, region STRING) USING iceberg PARTITIONED BY (region) "
        f"TBLPROPERTIES ('format-version'='3')"
    )
    _appends(spark, oracle, name, ["eu", "us", "eu", "ap"], 0)
    lineage_sql = f"SELECT id, _row_id, _last_updated_sequence_number FROM {q}"
    lineage = sorted(tuple(r) for r in spark.sql(lineage_sql).collect())
    expected = oracle.canonical(name)
    result = catalog.load_table(name).maintenance.rewrite_manifests()
    assert (result.rewritten_manifests_count, result.added_manifests_count) == (4, 1)
    assert sorted(tuple(r) for r in spark.sql(lineage_sql).collect()) == lineage
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's v3 rewrite")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe reading it")
