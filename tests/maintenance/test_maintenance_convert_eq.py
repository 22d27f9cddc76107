"""`table.maintenance.convert_equality_deletes`: equality deletes written by Iceberg Java (the
Flink upsert writer's API, `tests/java/EqDeleteWriter.java`) and by icefloe's upsert, over
several upsert rounds (a later round re-inserts deleted keys: an equality delete must not
apply to them), on format v2 and v3, partitioned and not, with position deletes / deletion
vectors Java's Spark DELETE wrote beside them. After the conversion both engines read the
same rows as before, the current snapshot has no equality delete left, and Java reads the
position deletes (v2) / deletion vectors (v3) icefloe wrote. Concurrent commits during a
conversion (Java's compaction, a Java DELETE writing a deletion vector, a second process
upserting) are either harmless or conflicts that commit nothing: never a resurrected row.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe.exceptions import CommitConflictError
from icefloe.maintenance import convert_equality_deletes as conv
from support.java_commits import commit_eq_delete
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name
from support.start_gate import ready_path, release, worker_env

pytestmark = [pytest.mark.spark, pytest.mark.interop]

_MOR = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)
_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("v", pa.int32())])


def _region(i: int) -> str:
    return "eu" if i % 2 else "us"


def _values(rows: list[tuple[int | None, str, int]]) -> str:
    return ", ".join(f"({'null' if i is None else i}, '{r}', {v})" for i, r, v in rows)


def _eq_delete(oracle: Oracle, name: str, keys: list[int | None], partitioned: bool) -> None:
    """Java equality deletes of `keys` on id (one file per region when partitioned)."""
    if not partitioned:
        commit_eq_delete(oracle.warehouse, name, ["id"], [(k,) for k in keys])
        return
    for region in ("eu", "us"):
        mine = [(k,) for k in keys if k is not None and _region(k) == region]
        commit_eq_delete(oracle.warehouse, name, ["id"], mine, partition={"region": region})


def _upsert_table(oracle: Oracle, catalog: Any, version: int, partitioned: bool) -> str:
    """Three upsert rounds over ids 0..59 (+ a null id), with Java position deletes / DVs."""
    name = new_table_name(f"conv{version}{'p' if partitioned else ''}")
    q = oracle.qualified(name)
    part = "PARTITIONED BY (region)" if partitioned else ""
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, region string, v int) USING iceberg {part} "
        f"TBLPROPERTIES ('format-version'='{version}', {_MOR})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES {_values([(i, _region(i), 0) for i in range(30)])}")
    oracle.sql(
        f"INSERT INTO {q} VALUES {_values([(i, _region(i), 0) for i in range(30, 60)])}, (null, 'eu', 0)"
    )
    # Round 1 (Java): delete keys, then re-insert some of them in a later snapshot.
    _eq_delete(oracle, name, [1, 2, 3, 4, 31, 32, 999], partitioned)
    oracle.sql(f"INSERT INTO {q} VALUES {_values([(i, _region(i), 1) for i in (1, 2, 31)])}")
    if not partitioned:
        commit_eq_delete(oracle.warehouse, name, ["id"], [(None,), (40,)])  # null matches null
    # Position deletes (v2 files) / deletion vectors (v3) beside the equality deletes, on
    # rows the equality deletes also remove (id 3) and on rows they do not (id 5).
    oracle.sql(f"DELETE FROM {q} WHERE id IN (3, 5, 33)")
    # Round 2 (icefloe's upsert: equality deletes and the new rows in one snapshot).
    table = catalog.load_table(name)
    ups = [(i, _region(i), 2) for i in (2, 6, 7, 35)]
    table.upsert(
        pa.table(
            {"id": [r[0] for r in ups], "region": [r[1] for r in ups], "v": [r[2] for r in ups]},
            schema=_SCHEMA,
        ),
        join_cols=["id", "region"],
    )
    # Round 3 (Java): delete round 1's and round 2's new rows of some keys, re-insert one.
    _eq_delete(oracle, name, [1, 6, 31, 50], partitioned)
    oracle.sql(f"INSERT INTO {q} VALUES {_values([(6, _region(6), 3)])}")
    return name


def _eq_files(oracle: Oracle, name: str) -> list[dict[str, Any]]:
    return [f for f in oracle.files(name) if f["content"] == 2]


def _check_rows(oracle: Oracle, catalog: Any, name: str, expected: Any, context: str) -> None:
    assert_same_rows(oracle.canonical(name), expected, context=f"Java {context}")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), expected, context=f"icefloe {context}")


@pytest.mark.slow
@pytest.mark.parametrize(("version", "partitioned"), [(2, False), (2, True), (3, False), (3, True)])
def test_conversion_keeps_rows_and_leaves_no_equality_deletes(
    spark: Any, oracle: Oracle, catalog: Any, version: int, partitioned: bool
) -> None:
    name = _upsert_table(oracle, catalog, version, partitioned)
    expected = oracle.canonical(name)
    ids = sorted((r[0] for r in oracle.rows(name, columns=["id"])), key=lambda i: (i is None, i))
    # Keys deleted and re-inserted later read their new rows; the null id was deleted (v2
    # unpartitioned: a null key) or not.
    assert 1 not in ids and 2 in ids and 6 in ids and 31 not in ids and 3 not in ids
    _check_rows(oracle, catalog, name, expected, "before the conversion")
    before = _eq_files(oracle, name)
    assert len(before) >= 3
    table = catalog.load_table(name)
    spark_arg = spark if partitioned else None  # executors for the partitioned tables
    if partitioned:
        # Only the us partition: the eu equality deletes stay (their scope is not covered).
        part = table.maintenance.convert_equality_deletes(filter="region = 'us'", spark=spark_arg)
        kept = _eq_files(oracle, name)
        assert part.removed_equality_delete_files_count == len(before) - len(kept) > 0
        assert part.kept_equality_delete_files_count == len(kept) > 0
        assert {f["partition"]["region"] for f in kept} == {"eu"}
        _check_rows(oracle, catalog, name, expected, "after converting one partition")
        table = catalog.load_table(name)
        before = kept
    result = table.maintenance.convert_equality_deletes(spark=spark_arg)
    assert result.removed_equality_delete_files_count == len(before)
    assert result.removed_equality_delete_bytes == sum(f["file_size_in_bytes"] for f in before)
    assert result.deleted_rows_count > 0 and result.data_files_count > 0
    assert result.added_position_delete_files_count > 0 and result.added_position_delete_bytes > 0
    assert _eq_files(oracle, name) == [], "equality deletes left in the current snapshot"
    _check_rows(oracle, catalog, name, expected, "after the conversion")

    snap = oracle.snapshots(name)[-1]
    assert snap["snapshot_id"] == result.snapshot_id
    assert snap["operation"] == "delete", "Java's BaseRowDelta names a delete-files-only row delta so"
    summary = snap["summary"]
    assert summary["removed-equality-delete-files"] == str(len(before))
    deletes = [f for f in oracle.files(name) if f["content"] == 1]
    if version == 3:
        assert summary["added-dvs"] == str(result.added_position_delete_files_count)
        assert {f["file_format"] for f in deletes} == {"PUFFIN"}
        # One deletion vector per data file: the ones Java's DELETE wrote were merged in.
        referenced = [f["referenced_data_file"] for f in deletes]
        assert len(referenced) == len(set(referenced))
        assert result.rewritten_position_delete_files_count > 0
    else:
        assert summary["added-position-delete-files"] == str(result.added_position_delete_files_count)
    # Nothing left: a second conversion commits nothing.
    again = catalog.load_table(name).maintenance.convert_equality_deletes()
    assert again.snapshot_id is None and again.removed_equality_delete_files_count == 0
    assert oracle.snapshots(name)[-1]["snapshot_id"] == result.snapshot_id
    # Java writes on top of the converted table, and its reads stay equal to ours.
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id = 2")
    assert_same_rows(catalog.load_table(name).scan().to_arrow(), oracle.canonical(name), context="Java after")


def test_global_equality_deletes_of_an_unpartitioned_spec_after_partition_evolution(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Spec 0 unpartitioned, then partitioned by region: an equality delete of spec 0 applies
    to every partition (global), one of spec 1 to its partition only. A filter on one
    partition converts the scoped delete and keeps the global one (it also applies to the
    other partition's files); without a filter both go."""
    name = new_table_name("convg")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, region string, v int) USING iceberg "
        f"TBLPROPERTIES ('format-version'='2', {_MOR})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES {_values([(i, _region(i), 0) for i in range(20)])}")
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD region")
    oracle.sql(f"INSERT INTO {q} VALUES {_values([(i, _region(i), 1) for i in range(20, 40)])}")
    commit_eq_delete(oracle.warehouse, name, ["id"], [(3,), (4,), (23,), (24,)], spec_id=0)  # global
    commit_eq_delete(oracle.warehouse, name, ["id"], [(6,), (26,), (27,)], partition={"region": "us"})
    oracle.sql(f"INSERT INTO {q} VALUES (3, 'eu', 2), (26, 'us', 2)")  # later rows of deleted keys
    expected = oracle.canonical(name)
    ids = {r[0] for r in oracle.rows(name, columns=["id"])}
    # 6 lives in the spec-0 file and 27 in eu: the us-scoped delete misses both.
    assert {3, 6, 26, 27} <= ids and not ({4, 23, 24} & ids)
    assert sorted(r[2] for r in oracle.rows(name, where="id IN (3, 26)")) == [2, 2]
    table = catalog.load_table(name)
    part = table.maintenance.convert_equality_deletes(filter="region = 'us'")
    eq = _eq_files(oracle, name)
    assert part.removed_equality_delete_files_count == 1 and part.kept_equality_delete_files_count == 1
    assert len(eq) == 1 and eq[0]["spec_id"] == 0, "the global delete stays"
    _check_rows(oracle, catalog, name, expected, "after converting the us partition")
    rest = catalog.load_table(name).maintenance.convert_equality_deletes()
    assert rest.removed_equality_delete_files_count == 1 and _eq_files(oracle, name) == []
    _check_rows(oracle, catalog, name, expected, "after converting everything")


def _data_files_on_disk(warehouse: Path, name: str) -> set[str]:
    root = warehouse.joinpath(*name.split(".")) / "data"
    return {str(p) for p in root.rglob("*") if p.is_file() and not p.name.endswith(".crc")}


def _icefloe_upsert_table(oracle: Oracle, catalog: Any, version: int) -> str:
    name = new_table_name(f"convc{version}")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, region string, v int) USING iceberg "
        f"TBLPROPERTIES ('format-version'='{version}', {_MOR})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES {_values([(i, _region(i), 0) for i in range(40)])}")
    table = catalog.load_table(name)
    for rnd, keys in enumerate([(1, 2, 3), (2, 10, 11)], start=1):
        table.upsert(
            pa.table(
                {"id": list(keys), "region": [_region(k) for k in keys], "v": [rnd] * len(keys)},
                schema=_SCHEMA,
            ),
            join_cols=["id"],
        )
    return name


@pytest.mark.parametrize("concurrent", ["java-compaction", "java-delete-dv"])
def test_a_concurrent_conflicting_commit_fails_the_conversion_and_leaves_nothing(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, concurrent: str
) -> None:
    """Between the conversion's plan/write and its commit, Java compacts the converted data
    files (their rows move to a new file the removed equality deletes would still apply to),
    or Java's DELETE writes a deletion vector for a data file the conversion writes one for:
    a CommitConflictError, nothing committed, the conversion's files deleted."""
    name = _icefloe_upsert_table(oracle, catalog, 3)
    q = oracle.qualified(name)
    before_files = _data_files_on_disk(warehouse, name)
    pending = conv.prepare(catalog.load_table(name), None, None)
    assert pending is not None and pending.delete_files and pending.removed()
    written = set(_data_files_on_disk(warehouse, name)) - before_files
    assert written, "the conversion wrote its deletion vectors"
    if concurrent == "java-compaction":
        oracle.sql(
            f"CALL oracle.system.rewrite_data_files(table => '{name}', "
            "options => map('rewrite-all', 'true', 'min-input-files', '1'))"
        )
        match = "removed data file"
    else:
        # id 0 lives in the first data file of the insert (rows 0..19, which the conversion
        # writes a vector for: ids 1, 2, 3, 10, 11), which has no vector yet.
        oracle.sql(f"DELETE FROM {q} WHERE id = 0")
        match = "deletion vector"
    expected = oracle.canonical(name)
    head = oracle.current_snapshot_id(name)
    with pytest.raises(CommitConflictError, match=match):
        pending.commit({})
    assert oracle.current_snapshot_id(name) == head, "nothing committed"
    assert not (written & _data_files_on_disk(warehouse, name)), "the conversion's files are deleted"
    _check_rows(oracle, catalog, name, expected, "after the failed conversion")
    # Run again from the new state, it converts.
    result = catalog.load_table(name).maintenance.convert_equality_deletes()
    assert _eq_files(oracle, name) == [] and result.snapshot_id is not None
    _check_rows(oracle, catalog, name, expected, "after converting again")


def test_new_data_and_equality_deletes_committed_meanwhile_are_kept_and_still_apply(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """A Java upsert (equality delete + re-insert of keys the conversion converts) between
    plan and commit: the conversion commits, the concurrent equality delete stays live and
    still deletes the converted files' rows it applies to, the new rows survive."""
    name = _icefloe_upsert_table(oracle, catalog, 2)
    pending = conv.prepare(catalog.load_table(name), None, None)
    assert pending is not None and pending.removed()
    commit_eq_delete(oracle.warehouse, name, ["id"], [(2,), (20,)])
    oracle.sql(f"INSERT INTO {oracle.qualified(name)} VALUES (2, 'us', 9), (20, 'us', 9)")
    expected = oracle.canonical(name)
    snap = pending.commit({})
    assert snap is not None
    _check_rows(oracle, catalog, name, expected, "after the conversion")
    eq = _eq_files(oracle, name)
    assert len(eq) == 1, "the concurrent equality delete is kept"
    assert sorted(r[2] for r in oracle.rows(name, where="id IN (2, 20)")) == [9, 9]


# The upserting process: support/workers/upserter.py.
UPSERTER = "support.workers.upserter"


def test_upserts_in_a_second_process_during_conversions_lose_and_resurrect_nothing(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, tmp_path: Path
) -> None:
    name = _icefloe_upsert_table(oracle, catalog, 3)
    oracle.sql(
        f"ALTER TABLE {oracle.qualified(name)} SET TBLPROPERTIES ('commit.retry.num-retries'='30', "
        "'commit.retry.min-wait-ms'='5', 'commit.retry.max-wait-ms'='200')"
    )
    model = {r[0]: r[2] for r in oracle.rows(name)}
    go = tmp_path / "go"
    props = {"name": "local", "type": "filesystem", "warehouse": str(warehouse)}
    proc = subprocess.Popen(
        [sys.executable, "-m", UPSERTER, json.dumps([props, name, 12, str(ready_path(go, 0)), str(go)])],
        cwd=str(Path(__file__).parent),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )
    outcomes = []
    release([proc], [ready_path(go, 0)], go)  # the conversions start with the upserts
    while proc.poll() is None:
        try:
            r = catalog.load_table(name).maintenance.convert_equality_deletes()
            outcomes.append(r.removed_equality_delete_files_count)
        except CommitConflictError:
            outcomes.append(-1)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    for ids, v in json.loads(out):
        for i in ids:
            model[i] = v
    catalog.load_table(name).maintenance.convert_equality_deletes()  # what the last upsert left
    # Conversions committed while the upserts went on (not only after them).
    assert sum(1 for n in outcomes if n > 0) >= 2, outcomes
    got = oracle.rows(name)
    assert len(got) == len({r[0] for r in got}), "one row per key: nothing resurrected"
    assert {r[0]: r[2] for r in got} == model
    assert _eq_files(oracle, name) == []
    assert_same_rows(
        catalog.load_table(name).scan().to_arrow(), oracle.canonical(name), context="icefloe final"
    )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bad_filter_is_refused_before_anything_is_written_and_properties_reach_the_summary(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, monkeypatch: Any
) -> None:
    """Also: a progress bar on a terminal (stderr), nothing when stderr is not one."""
    from icefloe.exceptions import IcefloeError

    name = _icefloe_upsert_table(oracle, catalog, 2)
    table = catalog.load_table(name)
    files = _data_files_on_disk(warehouse, name)
    head = oracle.current_snapshot_id(name)
    with pytest.raises(IcefloeError, match="nope"):
        table.maintenance.convert_equality_deletes(filter="nope = 1")
    assert _data_files_on_disk(warehouse, name) == files and oracle.current_snapshot_id(name) == head
    expected = oracle.canonical(name)
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    # No data file may hold such rows: nothing is converted, both equality deletes are kept.
    none = table.maintenance.convert_equality_deletes(filter="id > 1000")
    assert none.snapshot_id is None and none.kept_equality_delete_files_count == 2
    assert quiet.getvalue() == ""
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    result = table.maintenance.convert_equality_deletes(snapshot_properties={"app": "convert-test"})
    monkeypatch.undo()
    assert "converting equality deletes" in terminal.getvalue()
    # Initial rows 1, 2, 3, 10, 11, and round 1's new row of key 2 (round 2 deleted it).
    assert result.removed_equality_delete_files_count == 2 and result.deleted_rows_count == 6
    assert oracle.snapshots(name)[-1]["summary"]["app"] == "convert-test"
    _check_rows(oracle, catalog, name, expected, "after the conversion")
