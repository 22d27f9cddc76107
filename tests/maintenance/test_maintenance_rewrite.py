"""Compaction (`table.maintenance.rewrite_data_files`) checked against Apache Iceberg Java.

Parity on one table: Java builds a table of small files with merge-on-read deletes (and
icefloe adds equality deletes where the test says so); at snapshot S Java's procedure
`CALL oracle.system.rewrite_data_files(...)` compacts it; the table is rolled back to S and
icefloe compacts it with the same options. The data and delete files each removed, and the
number of files each added per partition, must be the same; Java then reads icefloe's
compacted table and gets the rows of S. Both the in-process and the Spark path are checked.

Concurrency: a position delete committed on a rewritten file while the rewrite ran fails it
(nothing committed, no file left); an equality delete committed meanwhile does not, and still
applies to the rewritten rows. A writer process appending and deleting while another process
compacts loses nothing and resurrects nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.exceptions import CommitConflictError, ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name
from support.start_gate import ready_path, release, worker_env

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = (
    "'format-version'='{v}', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
)


def _small_files_table(spark: Any, oracle: Oracle, version: int = 2) -> str:
    """Java's table: partitions eu (8 small files), us (4), ap (2), deletes in each; one ap
    file loses half its rows (a high delete ratio)."""
    name = new_table_name("compact")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING, amount DOUBLE) "
        f"USING iceberg PARTITIONED BY (region) TBLPROPERTIES ({MOR.format(v=version)})"
    )
    batches = [("eu", 8), ("us", 4), ("ap", 2)]
    n = 0
    for region, files in batches:
        for _ in range(files):
            spark.sql(
                f"SELECT id, '{region}' AS region, CAST(id AS DOUBLE) / 4 AS amount FROM range({n}, {n + 40})"
            ).coalesce(1).writeTo(oracle.qualified(name)).append()
            n += 40
    # eu and us: a few rows each; ap: half of its first file (40 rows: 0.5 >= 0.3).
    ap_first = sum(f * 40 for _, f in batches[:2])
    oracle.sql(
        f"DELETE FROM {oracle.qualified(name)} "
        f"WHERE id % 17 = 3 OR (id >= {ap_first} AND id < {ap_first + 20})"
    )
    return name


def _files(oracle: Oracle, name: str, snapshot_id: int | None = None) -> dict[str, dict[str, Any]]:
    return {f["file_path"]: f for f in oracle.files(name, snapshot_id)}


def _changes(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What a rewrite changed: removed data / delete paths, added data files per partition."""
    removed = set(before) - set(after)
    added = set(after) - set(before)
    return {
        "removed_data": sorted(p for p in removed if before[p]["content"] == 0),
        "removed_deletes": sorted(p for p in removed if before[p]["content"] != 0),
        "added_per_partition": Counter(
            json.dumps(after[p]["partition"], sort_keys=True, default=str)
            for p in added
            if after[p]["content"] == 0
        ),
        "added_deletes": sorted(p for p in added if after[p]["content"] != 0),
    }


def _java_then_ours(
    spark: Any,
    oracle: Oracle,
    catalog: Any,
    name: str,
    java_options: dict[str, str],
    our_options: dict[str, Any],
    via_spark: bool,
    where: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any], Any]:
    """Runs Java's procedure at S, rolls back to S, runs ours: (java changes, our changes,
    our result); `where` is the filter both are given."""
    start = oracle.current_snapshot_id(name)
    assert start is not None
    before = _files(oracle, name, start)
    opts = ", ".join(f"'{k}', '{v}'" for k, v in java_options.items())
    call = f"CALL oracle.system.rewrite_data_files(table => '{name}'"
    if where is not None:
        call += f', where => "{where}"'
    call += f", options => map({opts}))" if opts else ")"
    oracle.sql(call)
    java = _changes(before, _files(oracle, name))
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    table = catalog.load_table(name)
    assert table.current_snapshot().snapshot_id == start
    result = table.maintenance.rewrite_data_files(where, spark=spark if via_spark else None, **our_options)
    ours = _changes(before, _files(oracle, name))
    return java, ours, result


@pytest.mark.parametrize(
    ("java_options", "our_options", "via_spark"),
    [
        ({"remove-dangling-deletes": "true"}, {}, False),
        (
            {"min-input-files": "3", "delete-file-threshold": "1", "remove-dangling-deletes": "true"},
            {"min_input_files": 3, "delete_file_threshold": 1},
            True,
        ),
        ({}, {"remove_dangling_deletes": False}, True),
    ],
    ids=["defaults-in-process", "min-input-files-3-delete-threshold-1-spark", "no-dangling-spark"],
)
def test_rewrite_matches_javas_procedure(
    spark: Any,
    oracle: Oracle,
    catalog: Any,
    java_options: dict[str, str],
    our_options: dict[str, Any],
    via_spark: bool,
) -> None:
    name = _small_files_table(spark, oracle)
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    java, ours, result = _java_then_ours(spark, oracle, catalog, name, java_options, our_options, via_spark)
    assert java["removed_data"], "the fixture must give Java something to compact"
    assert ours["removed_data"] == java["removed_data"]
    assert ours["removed_deletes"] == java["removed_deletes"]
    assert ours["added_per_partition"] == java["added_per_partition"]
    assert ours["added_deletes"] == java["added_deletes"] == []
    assert result.rewritten_data_files_count == len(java["removed_data"])
    assert result.added_data_files_count == sum(java["added_per_partition"].values())
    assert result.removed_delete_files_count == len(java["removed_deletes"])
    # Java reads our compacted table: the rows of S.
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's compaction")
    table = catalog.load_table(name)
    assert_same_rows(table.scan().to_arrow(), expected, context="icefloe reading its compaction")
    snap = oracle.snapshots(name)[-1]
    assert snap["operation"] == "replace"
    assert snap["summary"]["deleted-data-files"] == str(len(java["removed_data"]))


def test_max_file_group_input_files_splits_groups_like_java(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """`max-file-group-input-files` 3 on eu's 8 files: groups of 3, 3 and 2, each written
    as its own file (1 file without the option), in both engines."""
    name = _small_files_table(spark, oracle)
    expected = oracle.canonical(name, oracle.current_snapshot_id(name))
    java, ours, result = _java_then_ours(
        spark,
        oracle,
        catalog,
        name,
        {"max-file-group-input-files": "3", "min-input-files": "2", "remove-dangling-deletes": "true"},
        {"max_file_group_input_files": 3, "min_input_files": 2},
        True,
        where="region = 'eu'",
    )
    assert len(java["removed_data"]) == 8, java
    assert sum(java["added_per_partition"].values()) == 3, java
    assert ours["removed_data"] == java["removed_data"]
    assert ours["removed_deletes"] == java["removed_deletes"]
    assert ours["added_per_partition"] == java["added_per_partition"]
    assert result.added_data_files_count == 3
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's compaction")


def test_max_files_to_rewrite_rewrites_as_many_files_as_java(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """`max-files-to-rewrite` 5 on eu's group of 8: both engines rewrite 5 of them into one
    file. Which 5 is not compared: Java takes the group's first files in the order its
    planner's worker pool returned the manifests (a `ParallelIterable`, so it changes from
    run to run); icefloe takes the first 5 in its plan order, the same every time."""
    name = _small_files_table(spark, oracle)
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    java, ours, result = _java_then_ours(
        spark,
        oracle,
        catalog,
        name,
        {"max-files-to-rewrite": "5", "rewrite-job-order": "files-desc", "remove-dangling-deletes": "true"},
        {"max_files_to_rewrite": 5, "rewrite_job_order": "files-desc"},
        False,
        where="region = 'eu'",
    )
    assert len(java["removed_data"]) == len(ours["removed_data"]) == 5, (java, ours)
    assert ours["added_per_partition"] == java["added_per_partition"]
    assert result.rewritten_data_files_count == 5
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's compaction")
    # The choice is icefloe's plan order: the same 5 files again from the same snapshot.
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    catalog.load_table(name).maintenance.rewrite_data_files("region = 'eu'", max_files_to_rewrite=5)
    assert _changes(_files(oracle, name, start), _files(oracle, name))["removed_data"] == ours["removed_data"]


def test_output_spec_id_writes_the_files_in_an_older_spec_like_java(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """After `ADD PARTITION FIELD bucket(2, id)` (spec 1) and more appends, `output-spec-id`
    0 with `rewrite-all`: every file is rewritten into spec 0 (partitioned by region only),
    in both engines, and each reads the other's result as the rows before."""
    name = _small_files_table(spark, oracle)
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} ADD PARTITION FIELD bucket(2, id)")
    for region in ("eu", "us"):
        spark.sql(
            f"SELECT id, '{region}' AS region, CAST(id AS DOUBLE) AS amount FROM range(1000, 1010)"
        ).coalesce(1).writeTo(oracle.qualified(name)).append()
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    before = _files(oracle, name, start)
    assert {f["spec_id"] for f in before.values() if f["content"] == 0} == {0, 1}
    java, ours, result = _java_then_ours(
        spark,
        oracle,
        catalog,
        name,
        {"output-spec-id": "0", "rewrite-all": "true", "remove-dangling-deletes": "true"},
        {"output_spec_id": 0, "rewrite_all": True},
        True,
    )
    assert (
        ours["removed_data"]
        == java["removed_data"]
        == sorted(p for p, f in before.items() if f["content"] == 0)
    )
    assert set(ours["added_per_partition"]) == set(java["added_per_partition"])
    after = _files(oracle, name)
    assert {f["spec_id"] for p, f in after.items() if p not in before} == {0}
    assert result.rewritten_data_files_count == len(java["removed_data"])
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's compaction")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context="icefloe reading it")


def test_rewrite_applies_equality_deletes_like_java(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """Equality deletes (icefloe's merge-on-read upsert) are applied by both rewrites."""
    name = _small_files_table(spark, oracle)
    table = catalog.load_table(name)
    ids = pa.array([1, 2, 41, 42, 330], pa.int64())
    table.upsert(
        pa.table({"id": ids, "region": ["eu", "eu", "eu", "eu", "us"], "amount": [9.0] * 5}),
        join_cols=["id", "region"],
    )
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    java, ours, _ = _java_then_ours(
        spark, oracle, catalog, name, {"remove-dangling-deletes": "true"}, {}, via_spark=False
    )
    assert ours["removed_data"] == java["removed_data"]
    assert ours["removed_deletes"] == java["removed_deletes"]
    assert ours["added_per_partition"] == java["added_per_partition"]
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's compaction")


def test_rewrite_on_v3_removes_the_dvs_of_rewritten_files(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """Format v3: Java's deletes are deletion vectors; a rewrite drops those of the files it
    rewrites (Java's `danglingDVs`) and keeps the rows' lineage."""
    name = _small_files_table(spark, oracle, version=3)
    start = oracle.current_snapshot_id(name)
    expected = oracle.canonical(name, start)
    lineage = sorted(
        (r[0], r[1]) for r in spark.sql(f"SELECT id, _row_id FROM {oracle.qualified(name)}").collect()
    )
    java, ours, result = _java_then_ours(spark, oracle, catalog, name, {}, {}, via_spark=False)
    assert ours["removed_data"] == java["removed_data"]
    assert ours["removed_deletes"] == java["removed_deletes"]
    assert result.removed_delete_files_count > 0
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's v3 compaction")
    after = sorted(
        (r[0], r[1]) for r in spark.sql(f"SELECT id, _row_id FROM {oracle.qualified(name)}").collect()
    )
    assert after == lineage, "rewritten rows keep their row ids"


def test_sort_rewrite_on_spark_keeps_v3_lineage_and_sorts_each_file(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """The Spark sort rewrite sends the rows through Spark (read, range-partition, write):
    Java's deletion vectors are applied, every row keeps `_row_id` and
    `_last_updated_sequence_number`, and each new file is sorted by the order (descending)."""
    name = _small_files_table(spark, oracle, version=3)
    q = oracle.qualified(name)
    oracle.sql(f"ALTER TABLE {q} WRITE ORDERED BY amount DESC")
    expected = oracle.canonical(name)
    query = f"SELECT id, _row_id, _last_updated_sequence_number FROM {q}"
    lineage = sorted(tuple(r) for r in spark.sql(query).collect())
    before = _files(oracle, name)
    result = catalog.load_table(name).maintenance.rewrite_data_files(
        strategy="sort", rewrite_all=True, spark=spark
    )
    assert result.rewritten_data_files_count == len([f for f in before.values() if f["content"] == 0])
    assert_same_rows(oracle.canonical(name), expected, context="Java reading the sort rewrite on Spark")
    assert sorted(tuple(r) for r in spark.sql(query).collect()) == lineage, "rows keep their lineage"
    added = [p for p in _files(oracle, name) if p not in before]
    assert added
    for path in added:
        amounts = pq.read_table(path.removeprefix("file:"), columns=["amount"]).column("amount").to_pylist()
        assert amounts == sorted(amounts, reverse=True), path


def test_sort_rewrite_on_spark_by_an_order_spark_cannot_compute_sorts_each_group_in_one_writer(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """An order led by `bucket(4, region)` on a string: Spark has no expression for it, and
    ranges by the later terms alone would not follow the order, so the range path declines
    (None, before any Spark job) and each group sorts in one writer; Java reads the rows."""
    from icefloe.maintenance import _sort_on_spark
    from icefloe.maintenance.rewrite_data_files import _read_schema_json

    name = _small_files_table(spark, oracle)
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} WRITE ORDERED BY bucket(4, region), amount")
    expected = oracle.canonical(name)
    table = catalog.load_table(name)
    declined = _sort_on_spark.sort_rewrite_on_spark(
        spark, table, [(["[]"], 2)], 1 << 20, 0, "unused", _read_schema_json(table), None
    )
    assert declined is None
    result = table.maintenance.rewrite_data_files(strategy="sort", rewrite_all=True, spark=spark)
    assert result.rewritten_data_files_count > 0
    assert_same_rows(oracle.canonical(name), expected, context="Java reading the sort rewrite")


def test_concurrent_position_delete_fails_the_rewrite_and_leaves_nothing(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path
) -> None:
    name = _small_files_table(spark, oracle)
    stale = catalog.load_table(name)  # the rewrite plans from this version
    start = stale.current_snapshot().snapshot_id
    # Another writer deletes rows of an eu file (a file the rewrite will replace).
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id = 5")
    expected = oracle.canonical(name)
    data_before = {p for p, _ in _data_files_on_disk(warehouse, name)}
    with pytest.raises(CommitConflictError, match="delete"):
        stale.maintenance.rewrite_data_files()
    assert oracle.snapshots(name)[-1]["operation"] == "delete", "nothing committed"
    assert oracle.current_snapshot_id(name) != start
    assert {p for p, _ in _data_files_on_disk(warehouse, name)} == data_before, "no file left behind"
    assert_same_rows(oracle.canonical(name), expected, context="after the failed rewrite")


def test_concurrent_equality_delete_still_applies_after_the_rewrite(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = _small_files_table(spark, oracle)
    stale = catalog.load_table(name)
    catalog.load_table(name).upsert(
        pa.table({"id": pa.array([7, 8], pa.int64()), "region": ["eu", "eu"], "amount": [-1.0, -1.0]}),
        join_cols=["id", "region"],
    )
    expected = oracle.canonical(name)
    result = stale.maintenance.rewrite_data_files()
    assert result.rewritten_data_files_count > 0
    assert_same_rows(oracle.canonical(name), expected, context="Java after rewrite + concurrent upsert")
    rows = oracle.rows(name, where="id IN (7, 8)")
    assert sorted(r[2] for r in rows) == [-1.0, -1.0], "the old rows of 7 and 8 are not resurrected"


def test_bad_options_are_refused_before_anything_is_written(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path
) -> None:
    name = _small_files_table(spark, oracle)
    table = catalog.load_table(name)
    before = set(_data_files_on_disk(warehouse, name))
    snap = table.current_snapshot().snapshot_id
    with pytest.raises(ValidationError, match="min-file-size-bytes"):
        table.maintenance.rewrite_data_files(target_file_size_bytes=1000, min_file_size_bytes=2000)
    with pytest.raises(ValidationError, match="strategy"):
        table.maintenance.rewrite_data_files(strategy="zorder")
    with pytest.raises(ValidationError, match="sort order"):
        table.maintenance.rewrite_data_files(strategy="sort")
    with pytest.raises(ValidationError, match="'max-files-to-rewrite' is set to -1"):
        table.maintenance.rewrite_data_files(max_files_to_rewrite=-1)
    with pytest.raises(ValidationError, match="'rewrite-job-order' expected one of"):
        table.maintenance.rewrite_data_files(rewrite_job_order="biggest")
    with pytest.raises(ValidationError, match="Cannot use output spec id 9"):
        table.maintenance.rewrite_data_files(output_spec_id=9)
    assert set(_data_files_on_disk(warehouse, name)) == before
    assert catalog.load_table(name).current_snapshot().snapshot_id == snap


def _data_files_on_disk(warehouse: Path, name: str) -> list[tuple[str, int]]:
    root = warehouse.joinpath(*name.split(".")) / "data"
    return sorted((str(p), p.stat().st_size) for p in root.rglob("*.parquet"))


WORKER = "support.workers.compaction_race"  # a writer, or a compactor racing it


def test_writer_and_compaction_in_real_processes_lose_and_resurrect_nothing(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, tmp_path: Path
) -> None:
    name = _small_files_table(spark, oracle)
    oracle.sql(
        f"ALTER TABLE {oracle.qualified(name)} SET TBLPROPERTIES ('commit.retry.num-retries'='30', "
        "'commit.retry.min-wait-ms'='5', 'commit.retry.max-wait-ms'='200')"
    )
    initial = {r[0] for r in oracle.rows(name, columns=["id"])}
    props = {"name": "local", "type": "filesystem", "warehouse": str(warehouse)}
    go, done = tmp_path / "go", tmp_path / "done"
    env_args = {
        "stdout": subprocess.PIPE,
        "stderr": subprocess.PIPE,
        "text": True,
        "env": worker_env(),
    }
    readies = [ready_path(go, 0), ready_path(go, 1)]
    writer = subprocess.Popen(
        [sys.executable, "-m", WORKER, json.dumps([props, name, "writer", 16, str(readies[0]), str(go)])],
        **env_args,
    )
    compactor = subprocess.Popen(
        [
            sys.executable,
            "-m",
            WORKER,
            json.dumps([props, name, "compact", 0, str(readies[1]), str(go)]),
            str(done),
        ],
        **env_args,
    )
    release([writer, compactor], readies, go)  # the compactions start with the writes
    w_out, w_err = writer.communicate(timeout=600)
    done.touch()
    c_out, c_err = compactor.communicate(timeout=600)
    assert writer.returncode == 0, w_err
    assert compactor.returncode == 0, c_err
    expected = set(initial)
    for kind, ids in json.loads(w_out):
        if kind == "append":
            expected |= set(ids)
        else:
            expected -= set(ids)
    compactions = json.loads(c_out)
    assert any(k == "compacted" and n > 0 for k, n in compactions), compactions
    got_java = [r[0] for r in oracle.rows(name, columns=["id"])]
    assert len(got_java) == len(set(got_java)), "no row duplicated"
    assert set(got_java) == expected, (
        sorted(set(got_java) - expected)[:10],
        sorted(expected - set(got_java))[:10],
    )
    got_ours = catalog.load_table(name).scan(selected_fields=("id",)).to_arrow().column("id").to_pylist()
    assert sorted(got_ours) == sorted(got_java)
    assert "replace" in [s["operation"] for s in oracle.snapshots(name)]


def test_sort_strategy_writes_files_sorted_by_the_tables_sort_order(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:

    name = _small_files_table(spark, oracle)
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} WRITE ORDERED BY amount DESC")
    expected = oracle.canonical(name)
    table = catalog.load_table(name)
    result = table.maintenance.rewrite_data_files(strategy="sort")
    assert result.rewritten_data_files_count > 0
    assert_same_rows(oracle.canonical(name), expected, context="Java reading the sorted compaction")
    # Our in-process rewrite names its files by driver task ids (3_000_000_000 and up).
    added = [
        f["file_path"] for f in oracle.data_files(name) if f["file_path"].rsplit("/", 1)[-1].startswith("3")
    ]
    assert len(added) == result.added_data_files_count
    for path in added:
        amounts = pq.read_table(path.removeprefix("file:")).column("amount").to_pylist()
        assert amounts == sorted(amounts, reverse=True), path


def _file_ranges(paths: list[str], column: str) -> list[tuple[float, float]]:
    import pyarrow.compute as pc

    out = []
    for path in paths:
        values = pq.read_table(path.removeprefix("file:"), columns=[column]).column(column)
        assert values.null_count == 0, path
        bounds = pc.min_max(values)
        out.append((bounds["min"].as_py(), bounds["max"].as_py()))
    return sorted(out)


@pytest.mark.parametrize("via_spark", [False, True], ids=["in-process", "spark"])
def test_sort_strategy_splits_each_group_into_disjoint_key_ranges_like_java(
    spark: Any, oracle: Oracle, catalog: Any, via_spark: bool
) -> None:
    """Java's sort rewrite range-partitions a group across its output files; so does ours (one
    sort of the whole group, spilled and merged, rolling at the target size): within a
    partition no two new files overlap in the sort key, in both engines."""
    name = new_table_name("sortcompact")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, region STRING, amount DOUBLE) USING iceberg PARTITIONED BY (region) "
        f"TBLPROPERTIES ({MOR.format(v=2)})"
    )
    for k in range(4):
        spark.sql(
            f"SELECT id, IF(id % 2 = 0, 'eu', 'us') AS region, "
            f"CAST(pmod(hash(id), 100000) AS DOUBLE) AS amount FROM range({k * 20000}, {(k + 1) * 20000})"
        ).coalesce(1).writeTo(q).append()
    oracle.sql(f"ALTER TABLE {q} WRITE ORDERED BY amount")
    expected = oracle.canonical(name)
    start = oracle.current_snapshot_id(name)
    before = _files(oracle, name, start)
    group_bytes = sum(f["file_size_in_bytes"] for f in before.values()) // 2
    target = group_bytes // 3

    def added() -> dict[str, list[str]]:
        after = _files(oracle, name)
        out: dict[str, list[str]] = {}
        for p in set(after) - set(before):
            out.setdefault(json.dumps(after[p]["partition"], sort_keys=True), []).append(p)
        return out

    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{name}', strategy => 'sort', "
        f"options => map('rewrite-all', 'true', 'target-file-size-bytes', '{target}'))"
    )
    java = added()
    oracle.sql(f"CALL oracle.system.rollback_to_snapshot('{name}', {start})")
    table = catalog.load_table(name)
    result = table.maintenance.rewrite_data_files(
        strategy="sort", rewrite_all=True, target_file_size_bytes=target, spark=spark if via_spark else None
    )
    ours = added()
    assert_same_rows(oracle.canonical(name), expected, context="Java reading the sorted compaction")
    assert result.rewritten_data_files_count == len(before)
    assert sorted(java) == sorted(ours) and len(ours) == 2, (java.keys(), ours.keys())
    for partition in ours:
        for engine, files in (("java", java[partition]), ("icefloe", ours[partition])):
            ranges = _file_ranges(files, "amount")
            assert len(ranges) > 1, f"{engine} {partition}: one file, the test would prove nothing"
            overlaps = [(a, b) for a, b in zip(ranges, ranges[1:]) if b[0] < a[1]]
            assert not overlaps, f"{engine} {partition}: files overlap in amount: {overlaps}"
        # Java range-partitions the group into ceil(group bytes / target) tasks whose writers
        # roll by their own estimate (smaller files); ours rolls at the target as it writes.
        sizes = [Path(p.removeprefix("file:").removeprefix("//")).stat().st_size for p in ours[partition]]
        assert max(sizes) <= target * 1.25, (target, sizes)
        # On Spark the group is range-partitioned over several tasks, as in Java (a file's
        # name starts with the id of the task that wrote it); in process one writer sorts it.
        tasks = {Path(p).name.split("-")[0] for p in ours[partition]}
        assert (len(tasks) > 1) == via_spark, (partition, sorted(ours[partition]))


def test_partial_progress_commits_the_groups_that_do_not_conflict(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = _small_files_table(spark, oracle)
    stale = catalog.load_table(name)
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id = 5")  # an eu file, meanwhile
    expected = oracle.canonical(name)
    result = stale.maintenance.rewrite_data_files(partial_progress=True)
    assert result.failed_data_files_count == 8, result  # the eu group conflicted
    assert result.rewritten_data_files_count == 2, result  # the ap group committed
    assert len(result.snapshot_ids) == 1
    assert oracle.snapshots(name)[-1]["operation"] == "replace"
    assert_same_rows(oracle.canonical(name), expected, context="after a partial rewrite")
