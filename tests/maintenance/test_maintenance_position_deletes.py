"""`table.maintenance.rewrite_position_delete_files` checked against Apache Iceberg Java.

Parity on one table: Java builds a v2 table with many small merge-on-read DELETEs in two
partitions, then compacts one partition's data files (its position deletes now dangle: they
name files no longer live). At snapshot S Java's `CALL
oracle.system.rewrite_position_delete_files(...)` runs; the table is rolled back to S and
icefloe rewrites. The delete files removed, the new delete files (per data file they cover,
with their row counts and data sequence numbers) and the result counts must be Java's; both
engines read the rows of S from both results.

Concurrency: a rewrite planned on a stale version whose delete files another rewrite already
replaced fails (CommitConflictError) and leaves no file behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from icefloe.exceptions import CommitConflictError, ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = "'format-version'='2', 'write.delete.mode'='merge-on-read'"


def _table(spark: Any, oracle: Oracle) -> str:
    """eu: six files, a DELETE in each; us: five files, a DELETE in each, then us is compacted
    by Java (its position deletes dangle); ap: one file and one DELETE (too few to rewrite).
    Java's DELETEs keep one position delete file per data file (file granularity: a second
    DELETE in a file rewrites that file's previous delete file)."""
    name = new_table_name("posdel")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, region STRING) USING iceberg PARTITIONED BY (region) "
        f"TBLPROPERTIES ({MOR})"
    )
    n = 0
    firsts: list[int] = []
    for region, files in (("eu", 6), ("us", 5), ("ap", 1)):
        for _ in range(files):
            spark.sql(f"SELECT id, '{region}' AS region FROM range({n}, {n + 20})").coalesce(1).writeTo(
                q
            ).append()
            firsts.append(n)
            n += 20
    for first in firsts:
        oracle.sql(f"DELETE FROM {q} WHERE id IN ({first + 1}, {first + 7})")
    oracle.sql(f"DELETE FROM {q} WHERE id = 3")  # eu's first file again: still one delete file
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{name}', where => \"region = 'us'\", "
        f"options => map('min-input-files', '2'))"
    )
    return name


def _deletes(oracle: Oracle, name: str) -> dict[str, dict[str, Any]]:
    """Live delete files (and DVs) by `<path>#<data file>`: partition, data file, positions,
    data sequence number (Java's `position_deletes` and `entries` tables)."""
    q = oracle.qualified(name)
    seq = {
        r["path"]: r["seq"]
        for r in oracle.sql(
            f"SELECT data_file.file_path AS path, sequence_number AS seq FROM {q}.entries "
            f"WHERE status < 2 AND data_file.content = 1"
        )
    }
    rows = oracle.sql(
        f"SELECT delete_file_path AS path, file_path AS ref, count(*) AS n, "
        f"first(partition.region) AS region FROM {q}.position_deletes GROUP BY delete_file_path, file_path"
    )
    return {f"{r['path']}#{r['ref']}": {**r.asDict(), "seq": seq[r["path"]]} for r in rows}


def _changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    paths_before = {v["path"] for v in before.values()}
    paths_after = {v["path"] for v in after.values()}
    return {
        "removed": sorted(paths_before - paths_after),
        "added": sorted(
            (a["region"], a["ref"], a["n"], a["seq"]) for a in after.values() if a["path"] not in paths_before
        ),
    }


def test_rewrite_matches_javas_procedure_and_drops_dangling_positions(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = _table(spark, oracle)
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    before = _deletes(oracle, name)
    java_row = oracle.sql(f"CALL oracle.system.rewrite_position_delete_files(table => '{name}')")[0]
    java = _changes(before, _deletes(oracle, name))
    java_rows = oracle.canonical(name)
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")

    table = catalog.load_table(name)
    result = table.maintenance.rewrite_position_delete_files()
    ours = _changes(before, _deletes(oracle, name))

    assert java["removed"], "the fixture must give Java something to rewrite"
    assert ours["removed"] == java["removed"]
    assert ours["added"] == java["added"], "one delete file per live data file, same rows and sequence"
    assert not any(a[0] == "us" for a in ours["added"]), "us positions dangle: dropped"
    assert result.rewritten_delete_files_count == java_row["rewritten_delete_files_count"]
    assert result.added_delete_files_count == java_row["added_delete_files_count"]
    assert result.rewritten_bytes_count == java_row["rewritten_bytes_count"]
    assert result.added_bytes_count > 0 and java_row["added_bytes_count"] > 0
    assert result.dangling_positions_dropped == 10  # two in each of us's five files
    snap = oracle.snapshots(name)[-1]
    assert snap["operation"] == "replace"
    assert snap["summary"]["removed-delete-files"] == str(len(java["removed"]))
    assert_same_rows(java_rows, expected, context="Java reading its own rewrite")
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's rewrite")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe reading it")


def test_options_filter_and_executors_match_java(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name = _table(spark, oracle)
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    before = _deletes(oracle, name)
    # min-input-files above every partition's count: neither engine does anything.
    none = oracle.sql(
        f"CALL oracle.system.rewrite_position_delete_files(table => '{name}', "
        f"options => map('min-input-files', '20'))"
    )[0]
    assert none["rewritten_delete_files_count"] == 0
    table = catalog.load_table(name)
    assert (
        table.maintenance.rewrite_position_delete_files(min_input_files=20).rewritten_delete_files_count == 0
    )
    assert oracle.current_snapshot_id(name) == start
    # rewrite-all on eu only (a filter on the partition column).
    java_row = oracle.sql(
        f"CALL oracle.system.rewrite_position_delete_files(table => '{name}', "
        f"where => \"region = 'eu'\", options => map('rewrite-all', 'true'))"
    )[0]
    java = _changes(before, _deletes(oracle, name))
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    result = catalog.load_table(name).maintenance.rewrite_position_delete_files(
        filter="region = 'eu'",
        rewrite_all=True,
        spark=spark,  # on the executors
    )
    ours = _changes(before, _deletes(oracle, name))
    assert ours == java
    assert {v["region"] for v in before.values() if v["path"] in ours["removed"]} == {"eu"}
    assert result.rewritten_delete_files_count == java_row["rewritten_delete_files_count"] == 6
    assert result.added_delete_files_count == java_row["added_delete_files_count"]
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's eu rewrite")
    with pytest.raises(ValidationError, match="min-file-size-bytes"):
        table.maintenance.rewrite_position_delete_files(target_file_size_bytes=10, min_file_size_bytes=20)


def test_max_file_group_input_files_matches_java(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """At most 4 files per group, at least 3 to keep one: eu's six delete files pack as 4 + 2
    and us's five as 4 + 1, so both engines rewrite 4 of each (ap's one file stays). Which 4
    follows each engine's listing order, so counts and partitions are compared."""
    name = _table(spark, oracle)
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    before = _deletes(oracle, name)
    region = {v["path"]: v["region"] for v in before.values()}
    opts = "map('max-file-group-input-files', '4', 'min-input-files', '3')"
    java_row = oracle.sql(
        f"CALL oracle.system.rewrite_position_delete_files(table => '{name}', options => {opts})"
    )[0]
    java = _changes(before, _deletes(oracle, name))
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    result = catalog.load_table(name).maintenance.rewrite_position_delete_files(
        min_input_files=3, max_file_group_input_files=4
    )
    ours = _changes(before, _deletes(oracle, name))
    assert result.rewritten_delete_files_count == java_row["rewritten_delete_files_count"] == 8
    assert result.added_delete_files_count == java_row["added_delete_files_count"]
    assert sorted(region[p] for p in ours["removed"]) == sorted(region[p] for p in java["removed"])
    assert sorted(region[p] for p in ours["removed"]) == ["eu"] * 4 + ["us"] * 4
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's rewrite")
    with pytest.raises(ValidationError, match="max-file-group-input-files"):
        catalog.load_table(name).maintenance.rewrite_position_delete_files(max_file_group_input_files=0)


def test_a_stale_rewrite_conflicts_and_leaves_nothing(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path
) -> None:
    name = _table(spark, oracle)
    stale = catalog.load_table(name)
    catalog.load_table(name).maintenance.rewrite_position_delete_files()
    expected = oracle.canonical(name)
    data_dir = warehouse.joinpath(*name.split(".")) / "data"
    on_disk = {str(p) for p in data_dir.rglob("*.parquet")}
    snap = oracle.current_snapshot_id(name)
    with pytest.raises(CommitConflictError, match="no longer a live file"):
        stale.maintenance.rewrite_position_delete_files()
    assert oracle.current_snapshot_id(name) == snap, "nothing committed"
    assert {str(p) for p in data_dir.rglob("*.parquet")} == on_disk, "no file left behind"
    assert_same_rows(oracle.canonical(name), expected, context="after the failed rewrite")


def test_v3_rewrites_position_deletes_into_deletion_vectors(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """A v2 table upgraded to v3: Java's procedure turns its Parquet position deletes into
    deletion vectors (one per live data file); so does icefloe's."""
    name = _table(spark, oracle)
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} SET TBLPROPERTIES ('format-version'='3')")
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    before = _deletes(oracle, name)
    java_row = oracle.sql(f"CALL oracle.system.rewrite_position_delete_files(table => '{name}')")[0]
    java = _changes(before, _deletes(oracle, name))
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    result = catalog.load_table(name).maintenance.rewrite_position_delete_files()
    after = _deletes(oracle, name)
    ours = _changes(before, after)
    assert java["removed"] and ours == java
    assert result.added_delete_files_count == java_row["added_delete_files_count"]
    assert all(v["path"].endswith(".puffin") for k, v in after.items() if k not in before)
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's DVs")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe reading its DVs")
