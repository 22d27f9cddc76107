"""Row-level changes in process: merge-on-read delete (position deletes), update in both
modes, upsert with equality deletes and copy-on-write, their validations and bad input.
Iceberg Java's view of the same tables is in test_row_level_interop.py."""

from __future__ import annotations

import datetime as dt
import math
import os
import random
from pathlib import Path

import icefloe
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from icefloe import (
    IdentityTransform,
    NestedField,
    PartitionField,
    PartitionSpec,
    Schema,
    Table,
)
from icefloe.catalog import Catalog
from icefloe.exceptions import CommitConflictError, ResourceLimitError, ValidationError
from icefloe.types import DoubleType, LongType, StringType, TimestampType
from support.row_level_data import ARROW, SCHEMA, rows

MOR = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}


@pytest.fixture
def cat(tmp_path: Path) -> Catalog:
    c = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    c.create_namespace("db")
    return c


def mor_table(cat: Catalog, name: str = "db.t", partitioned: bool = False, **props: str) -> Table:
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")) if partitioned else None
    kwargs = {"partition_spec": spec} if spec else {}
    return cat.create_table(name, schema=SCHEMA, properties={**MOR, **props}, **kwargs)


def ids_of(t: Table) -> list[int]:
    return sorted(t.scan().to_arrow().column("id").to_pylist())


def files_under(path: str) -> set[str]:
    out = set()
    for d, _, fs in os.walk(path):
        out.update(os.path.join(d, f) for f in fs)
    return out


# ---- merge-on-read delete ----
@pytest.mark.parametrize("partitioned", [False, True])
def test_mor_delete_writes_position_deletes_and_leaves_data_files(cat: Catalog, partitioned: bool) -> None:
    t = mor_table(cat, partitioned=partitioned)
    t.append(pa.concat_tables([rows(range(0, 100), "eu"), rows(range(100, 200), "us")]))
    data_before = {f.file.file_path for f in t.scan().plan_files()}

    snap = t.delete("id >= 50 and id < 150")
    assert snap is not None
    assert snap.summary.operation.value == "delete"
    s = snap.summary.additional_properties
    assert s["added-position-deletes"] == "100"
    assert s["added-position-delete-files"] == s["added-delete-files"]
    assert s["total-position-deletes"] == "100"
    assert s["total-records"] == "200"
    assert "deleted-data-files" not in s
    assert ids_of(t) == list(range(0, 50)) + list(range(150, 200))
    tasks = list(t.scan().plan_files())
    assert {x.file.file_path for x in tasks} == data_before, "data files untouched"
    deletes = [d for x in tasks for d in x.delete_files]
    assert deletes and all(d.content == 1 for d in deletes)
    assert all(d.file_path.endswith("-deletes.parquet") for d in deletes)
    # file granularity: each delete file names the one data file it covers
    assert {d._obj.get("referenced_data_file") for d in deletes} <= data_before

    # An overlapping delete only deletes what is still there (no duplicated positions), and
    # merges the data file's earlier file-scoped deletes into its new delete file, as Java
    # 1.10 does: one live delete file per data file.
    snap2 = t.delete("id >= 40 and id < 60")
    assert snap2 is not None
    s2 = snap2.summary.additional_properties
    assert int(s2["added-position-deletes"]) - int(s2["removed-position-deletes"]) == 10
    assert s2["removed-position-delete-files"] == "1"
    assert s2["total-position-deletes"] == "110"
    live = [d for x in t.scan().plan_files() for d in x.delete_files]
    assert len(live) == len({d._obj.get("referenced_data_file") for d in live}) == len(data_before)
    assert ids_of(t) == list(range(0, 40)) + list(range(150, 200))
    assert t.scan().count() == 90


def test_mor_delete_of_whole_files_removes_them_and_no_match_commits_nothing(cat: Catalog) -> None:
    t = mor_table(cat, partitioned=True)
    t.append(pa.concat_tables([rows(range(0, 10), "eu"), rows(range(10, 20), "us")]))
    before = t.current_snapshot()
    assert t.delete("id > 1000") == before
    assert t.current_snapshot() == before
    snap = t.delete("region = 'us'")
    assert snap is not None and snap.summary.additional_properties["deleted-data-files"] == "1"
    assert "added-delete-files" not in snap.summary.additional_properties
    assert ids_of(t) == list(range(10))


def test_mor_delete_of_files_proven_whole_by_column_stats_removes_them(cat: Catalog) -> None:
    """Java removes the files a DELETE's filter covers whole when their partition *or their
    column stats* prove it, for every file the filter may match (SparkTable's metadata-only
    delete); icefloe's merge-on-read delete wrote a position delete for every row of them
    instead (the differential soak, seed 429632993). Stats proving only some files keep the
    row-level path."""
    t = mor_table(cat, partitioned=True)
    for lo in (0, 10, 20):  # three files of one partition: ids 0-9, 10-19, 20-29
        t.append(rows(range(lo, lo + 10), "eu"))
    snap = t.delete("id >= 10 and id < 30")
    props = snap.summary.additional_properties
    assert props["deleted-data-files"] == "2" and "added-delete-files" not in props, props
    assert ids_of(t) == list(range(10))
    snap = t.delete("id >= 5")  # the last file only partly: position deletes, its file kept
    props = snap.summary.additional_properties
    assert props["added-position-deletes"] == "5" and "deleted-data-files" not in props, props
    assert ids_of(t) == list(range(5))


def test_mor_delete_partition_granularity(cat: Catalog) -> None:
    t = mor_table(cat, partitioned=True, **{"write.delete.granularity": "partition"})
    t.append(rows(range(0, 10), "eu"))
    t.append(rows(range(10, 20), "eu"))
    snap = t.delete("id < 3 or (id >= 10 and id < 15)")
    assert snap is not None
    deletes = {d.file_path: d for x in t.scan().plan_files() for d in x.delete_files}
    assert len(deletes) == 1, "one delete file for the partition, covering both data files"
    (d,) = deletes.values()
    assert d.record_count == 8
    assert d._obj.get("referenced_data_file") is None
    assert ids_of(t) == list(range(3, 10)) + list(range(15, 20))


def test_delete_agrees_with_filtered_read_row_for_row(cat: Catalog) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "s", StringType()),
        NestedField(3, "x", DoubleType()),
        NestedField(4, "ts", TimestampType()),
    )
    values_x = [math.nan, -0.0, 0.0, None, 1.5, -math.inf, math.inf, -2.0]
    values_s = ["a", "é", "日本", "𝄞clef", None, "", "Z", "aa"]
    values_ts = [
        dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        dt.datetime(1900, 1, 1),
        None,
        dt.datetime(1970, 1, 1),
        dt.datetime(2024, 2, 29, 12),
        dt.datetime(1969, 7, 20, 20, 17),
        dt.datetime(2262, 1, 1),
        dt.datetime(1970, 1, 1, 0, 0, 0, 1),
    ]
    n = len(values_x) * 4
    data = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "s": pa.array([values_s[i % 8] for i in range(n)], pa.string()),
            "x": pa.array([values_x[(i * 3) % 8] for i in range(n)], pa.float64()),
            "ts": pa.array([values_ts[(i * 5) % 8] for i in range(n)], pa.timestamp("us")),
        }
    )
    conditions = [
        "x = 0.0",
        "x < 0",
        "x != 1.5",
        "x is null",
        "isnan(x)",
        "not isnan(x)",
        "s >= 'Z'",
        "s != 'a'",
        "s not in ('a', 'é')",
        "s like 'aa%'",
        "ts < '1970-01-01T00:00:00'",
        "ts is not null and ts <= '1969-12-31T23:59:59.999999'",
        "x > -1 or s = '日本'",
    ]
    for i, cond in enumerate(conditions):
        t = cat.create_table(f"db.agree{i}", schema=schema, properties=MOR)
        t.append(data.slice(0, n // 2))
        t.append(data.slice(n // 2))
        try:
            matched = set(t.scan(row_filter=cond).to_arrow().column("id").to_pylist())
        except Exception as e:  # a condition the filter language rejects is a test bug
            raise AssertionError(f"{cond}: {e}") from e
        t.delete(cond)
        remaining = set(ids_of(t))
        assert remaining == set(range(n)) - matched, cond
        assert matched, f"{cond} matched nothing: the case proves nothing"


# ---- update ----
@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_update_both_modes(cat: Catalog, mode: str) -> None:
    t = cat.create_table(
        "db.u",
        schema=SCHEMA,
        properties={"write.update.mode": mode},
        partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")),
    )
    t.append(pa.concat_tables([rows(range(0, 10), "eu"), rows(range(10, 20), "us")]))
    snap = t.update("id >= 5 and id < 15", {"amount": pc.field("amount") * 2, "region": "eu"})
    assert snap is not None and snap.summary.operation.value == "overwrite"
    s = snap.summary.additional_properties
    if mode == "merge-on-read":
        assert s["added-position-deletes"] == "10" and s["added-records"] == "10"
        assert "deleted-data-files" not in s
    else:
        assert "added-delete-files" not in s
    got = {r["id"]: (r["region"], r["amount"]) for r in t.scan().to_arrow().to_pylist()}
    assert len(got) == 20
    for i in range(20):
        if 5 <= i < 15:
            assert got[i] == ("eu", 2.0 * i), i
        else:
            assert got[i] == ("eu" if i < 10 else "us", float(i)), i


def test_update_bad_input_names_the_column_and_leaves_nothing(cat: Catalog) -> None:
    t = mor_table(cat)
    t.append(rows(range(10)))
    before = t.current_snapshot()
    data_dir = os.path.join(t.location(), "data")
    files = files_under(data_dir)
    with pytest.raises(ValidationError, match="nope"):
        t.update("id = 1", {"nope": 1})
    with pytest.raises(ValidationError, match="'amount'"):
        t.update("id = 1", {"amount": "not a number"})
    with pytest.raises(ValidationError, match="'id'"):
        t.update("id = 1", {"id": None})
    with pytest.raises(ValidationError, match="missing_col"):
        t.update("missing_col = 1", {"amount": 1.0})
    with pytest.raises(ValidationError, match="missing"):
        t.delete("missing = 1")
    t.refresh()
    assert t.current_snapshot() == before
    assert files_under(data_dir) == files


# ---- upsert ----
def test_upsert_mor_writes_equality_deletes_and_last_duplicate_wins(cat: Catalog) -> None:
    t = mor_table(cat, partitioned=False)
    t.append(rows(range(5)))
    batch = pa.concat_tables([rows([3, 7], amount=30.0), rows([3], amount=33.0), rows([9], amount=9.0)])
    res = t.upsert(batch)
    assert res.rows_written == 3 and res.rows_updated is None
    snap = t.current_snapshot()
    assert snap is not None and snap.summary.operation.value == "overwrite"
    s = snap.summary.additional_properties
    assert s["added-equality-deletes"] == "3" and s["added-equality-delete-files"] == "1"
    assert s["added-records"] == "3"
    got = {r["id"]: r["amount"] for r in t.scan().to_arrow().to_pylist()}
    assert got == {0: 0.0, 1: 1.0, 2: 2.0, 3: 33.0, 4: 4.0, 7: 30.0, 9: 9.0}
    eq = [d for x in t.scan().plan_files() for d in x.delete_files if d.content == 2]
    assert eq and all(d._obj.get("equality_ids") == [1] for d in eq)


def test_equality_deletes_past_the_memory_budget_fail_the_read_with_a_clear_error(
    cat: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read whose equality-delete keys would need more than ICEFLOE_EQUALITY_DELETE_MEMORY_MB
    fails with ResourceLimitError naming the setting and the delete file, instead of growing
    until the worker is OOM-killed; the same read works under a budget that fits."""
    t = mor_table(cat, name="db.budget")
    t.append(rows(range(200_000)))
    t.upsert(rows(range(0, 200_000, 2), amount=-1.0))  # 100,000 keys: a ~2.2 MB hash table
    eq = [d.file_path for x in t.scan().plan_files() for d in x.delete_files if d.content == 2]
    assert len(set(eq)) == 1
    monkeypatch.setenv("ICEFLOE_EQUALITY_DELETE_MEMORY_MB", "1")
    with pytest.raises(ResourceLimitError) as e:
        t.scan().to_arrow()
    msg = str(e.value)
    assert "ICEFLOE_EQUALITY_DELETE_MEMORY_MB" in msg and "budget of 1 MB" in msg, msg
    assert eq[0] in msg, msg
    monkeypatch.setenv("ICEFLOE_EQUALITY_DELETE_MEMORY_MB", "16")
    got = t.scan().to_arrow()
    assert got.num_rows == 200_000
    assert pc.sum(pc.equal(got.column("amount"), -1.0)).as_py() == 100_000


def test_upsert_mor_reaches_rows_of_an_older_partition_spec(cat: Catalog) -> None:
    """A partitioned equality delete applies only to data files of its own spec, so the keys
    are written once per spec with live files, each copy partitioned by its spec (found by
    tests/table/test_table_model_stateful.py: the old row survived); an old spec partitioned
    by a non-key column is rewritten copy-on-write instead."""
    from icefloe import BucketTransform, TruncateTransform

    spec = PartitionSpec(PartitionField(1, 1000, TruncateTransform(10), "id_trunc"))
    t = cat.create_table("db.evolved", schema=SCHEMA, partition_spec=spec, properties=MOR)
    t.append(rows(range(4)))
    with t.update_spec() as u:
        u.add_field("id", BucketTransform(4), "id_bucket")
    t.upsert(rows([0, 5], amount=50.0))
    got = {r["id"]: r["amount"] for r in t.scan().to_arrow().to_pylist()}
    assert got == {0: 50.0, 1: 1.0, 2: 2.0, 3: 3.0, 5: 50.0}
    assert t.scan().to_arrow().num_rows == 5
    s = t.current_snapshot().summary.additional_properties
    assert s["added-equality-deletes"] == "4", "two keys, once under each live spec"
    assert "deleted-data-files" not in s
    specs = {d.spec_id for x in t.scan().plan_files() for d in x.delete_files}
    assert specs == {0}, "the old spec's file gets the old spec's copy"
    t.upsert(rows([5, 40], amount=7.0))
    got = {r["id"]: r["amount"] for r in t.scan().to_arrow().to_pylist()}
    assert got == {0: 50.0, 1: 1.0, 2: 2.0, 3: 3.0, 5: 7.0, 40: 7.0}

    # Old spec by a non-key column: equality deletes cannot reach those rows by key.
    by_region = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    r = cat.create_table("db.by_region", schema=SCHEMA, partition_spec=by_region, properties=MOR)
    r.append(rows(range(4)))
    with r.update_spec() as u:
        u.remove_field("region")
        u.add_field("id", BucketTransform(4), "id_bucket")
    r.upsert(rows([1, 9], amount=60.0))
    got = {x["id"]: x["amount"] for x in r.scan().to_arrow().to_pylist()}
    assert got == {0: 0.0, 1: 60.0, 2: 2.0, 3: 3.0, 9: 60.0}
    assert all(not x.delete_files for x in r.scan().plan_files()), "copy-on-write"


def test_upsert_by_keys_without_the_partition_column_rewrites_copy_on_write(
    cat: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    """Partitioned by `region`, upserted on `id`: equality deletes reach only their own
    partition, so the upsert rewrites the files holding its keys (one row per key, as the
    equality-delete upsert leaves), where Flink refuses; Java's MERGE and PyIceberg's upsert
    succeed on the same table. A log line says so."""
    p = mor_table(cat, name="db.by_id", partitioned=True)
    p.append(pa.concat_tables([rows(range(3), "eu"), rows(range(3, 6), "us")]))
    moved = rows([1, 4, 9], "ap", amount=-1.0)
    with caplog.at_level("WARNING", logger="icefloe"):
        res = p.upsert(moved, join_cols=["id"])
    assert "rewrites the files holding its keys" in caplog.text
    assert (res.rows_written, res.rows_updated, res.rows_inserted) == (3, 2, 1)
    got = {r["id"]: (r["region"], r["amount"]) for r in p.scan().to_arrow().to_pylist()}
    assert got == {
        0: ("eu", 0.0),
        1: ("ap", -1.0),
        2: ("eu", 2.0),
        3: ("us", 3.0),
        4: ("ap", -1.0),
        5: ("us", 5.0),
        9: ("ap", -1.0),
    }
    assert all(not x.delete_files for x in p.scan().plan_files()), "copy-on-write"


def test_upsert_copy_on_write_keeps_a_key_held_twice_as_two_rows(cat: Catalog) -> None:
    """PyIceberg's upsert: every target row of a key takes the source row's values, so a key
    the table holds twice stays two rows (found by the stateful model test)."""
    t = cat.create_table("db.twice", schema=SCHEMA)
    t.append(rows([0, 1]))
    t.append(rows([0]))
    res = t.upsert(rows([0, 7], amount=5.0))
    assert (res.rows_updated, res.rows_inserted) == (2, 1)
    got = sorted((r["id"], r["amount"]) for r in t.scan().to_arrow().to_pylist())
    assert got == [(0, 5.0), (0, 5.0), (1, 1.0), (7, 5.0)]


def test_upsert_copy_on_write_counts_updates_and_inserts(cat: Catalog) -> None:
    t = cat.create_table("db.cow", schema=SCHEMA)
    t.append(rows(range(5)))
    res = t.upsert(pa.concat_tables([rows([1, 2], amount=10.0), rows([8], amount=8.0)]))
    assert (res.rows_written, res.rows_updated, res.rows_inserted) == (3, 2, 1)
    got = {r["id"]: r["amount"] for r in t.scan().to_arrow().to_pylist()}
    assert got == {0: 0.0, 1: 10.0, 2: 10.0, 3: 3.0, 4: 4.0, 8: 8.0}
    assert all(not x.delete_files for x in t.scan().plan_files())


def test_upsert_bad_input_is_refused_and_leaves_nothing(cat: Catalog) -> None:
    no_ids = Schema(*SCHEMA.fields)
    t = cat.create_table("db.noid", schema=no_ids, properties=MOR)
    with pytest.raises(ValidationError, match="join"):
        t.upsert(rows(range(3)))
    with pytest.raises(ValidationError, match="'nope'"):
        t.upsert(rows(range(3)), join_cols=["nope"])
    p = mor_table(cat, name="db.part", partitioned=True)
    p.append(rows(range(3)))
    before = p.current_snapshot()
    data_dir = os.path.join(p.location(), "data")
    files = files_under(data_dir)
    with pytest.raises(ValidationError, match="floating-point"):
        p.upsert(rows(range(3)), join_cols=["id", "region", "amount"])
    p.refresh()
    assert p.current_snapshot() == before
    assert files_under(data_dir) == files
    # With the partition column among the keys it works.
    p.upsert(rows([1], amount=-1.0), join_cols=["id", "region"])
    assert {r["id"]: r["amount"] for r in p.scan().to_arrow().to_pylist()} == {0: 0.0, 1: -1.0, 2: 2.0}


def test_upsert_random_batches_match_a_dict_model(cat: Catalog) -> None:
    """300 batches of random inserts/updates (upsert, equality deletes) and deletes (position
    deletes) end with exactly the rows a dict predicts."""
    t = mor_table(cat, name="db.model")
    rng = random.Random(7)
    model: dict[int, float] = {}
    for step in range(300):
        if step % 10 == 9 and model:
            lo = rng.randrange(0, 200)
            hi = lo + rng.randrange(1, 20)
            t.delete(f"id >= {lo} and id < {hi}")
            model = {k: v for k, v in model.items() if not lo <= k < hi}
            continue
        keys = [rng.randrange(0, 200) for _ in range(rng.randrange(1, 8))]
        amounts = [float(step * 1000 + j) for j in range(len(keys))]
        t.upsert(
            pa.table(
                {"id": pa.array(keys, pa.int64()), "region": ["eu"] * len(keys), "amount": amounts},
                schema=ARROW,
            )
        )
        for k, a in zip(keys, amounts):
            model[k] = a
        if step % 50 == 49:
            got = {r["id"]: r["amount"] for r in t.scan().to_arrow().to_pylist()}
            assert got == model, f"step {step}"
    got = {r["id"]: r["amount"] for r in t.scan().to_arrow().to_pylist()}
    assert got == model


# ---- validation against concurrent commits ----
def test_mor_delete_racing_an_overwrite_of_its_files_conflicts(cat: Catalog) -> None:
    t = mor_table(cat, **{"commit.retry.min-wait-ms": "1"})
    t.append(rows(range(10)))
    other = cat.load_table("db.t")
    other.overwrite(rows(range(100, 105)))  # removes the file our delete will reference
    data_dir = os.path.join(t.location(), "data")
    files = files_under(data_dir)
    with pytest.raises(CommitConflictError, match="removed a data file"):
        t.delete("id < 5")
    assert files_under(data_dir) == files, "the failed delete left no file"
    assert ids_of(t.refresh()) == list(range(100, 105))


def test_two_deletes_of_the_same_rows_delete_them_once(cat: Catalog) -> None:
    t = mor_table(cat, **{"commit.retry.min-wait-ms": "1"})
    t.append(rows(range(10)))
    a = cat.load_table("db.t")
    b = cat.load_table("db.t")
    a.delete("id < 5")
    with pytest.raises(CommitConflictError):
        b.delete("id < 5")
    b.refresh()
    assert b.current_snapshot() is not None
    assert b.current_snapshot().summary.additional_properties["total-position-deletes"] == "5"
    # Run again from the new state: nothing left to delete, nothing committed.
    before = b.current_snapshot()
    assert b.delete("id < 5") == before
    assert ids_of(b) == list(range(5, 10))


def test_concurrent_append_outside_the_condition_does_not_conflict(cat: Catalog) -> None:
    t = mor_table(cat, partitioned=True, **{"commit.retry.min-wait-ms": "1"})
    t.append(rows(range(10), "eu"))
    other = cat.load_table("db.t")
    other.append(rows(range(10, 20), "us"))
    t.delete("region = 'eu' and id < 3")
    assert ids_of(t.refresh()) == list(range(3, 20))


def test_cow_delete_conflicts_with_a_concurrent_delete_file_applying_to_a_rewritten_file(
    cat: Catalog,
) -> None:
    """Java's `validateNoNewDeletesForDataFiles`: a copy-on-write rewrite copies rows into a
    new file (a newer sequence number), so a delete file committed concurrently against the
    old file would stop applying to them, bringing deleted rows back. Here the concurrent
    equality delete (key (id, region), stats region = 'us') is outside the delete's filter
    `region = 'eu'`, so only that rule catches it."""
    props = {**MOR, "write.delete.mode": "copy-on-write", "commit.retry.min-wait-ms": "1"}
    t = cat.create_table("db.t", schema=SCHEMA, properties=props)
    t.append(pa.concat_tables([rows(range(5), "eu"), rows(range(5, 10), "us")]))
    other = cat.load_table("db.t")
    other.upsert(rows([7], "us", amount=70.0), join_cols=["id", "region"])  # equality delete of (7, us)
    with pytest.raises(CommitConflictError, match="delete files that may apply"):
        t.delete("region = 'eu'")
    got = sorted((r["id"], r["amount"]) for r in t.refresh().scan().to_arrow().to_pylist())
    assert got == [(i, 70.0 if i == 7 else float(i)) for i in range(10)], "no row came back or went"
    # From the new state the delete succeeds and the upserted row stays single.
    t.delete("region = 'eu'")
    got = sorted((r["id"], r["amount"]) for r in t.refresh().scan().to_arrow().to_pylist())
    assert got == [(i, 70.0 if i == 7 else float(i)) for i in range(5, 10)]


# ---- merge (in process) ----
@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_merge_in_process_all_clauses(cat: Catalog, mode: str) -> None:
    t = cat.create_table("db.m", schema=SCHEMA, properties={"write.merge.mode": mode})
    t.append(rows(range(20)))
    source = pa.concat_tables(
        [rows([1, 2, 3], "us", amount=-1.0), rows([5, 6], "us", amount=50.0), rows([100, 101])]
    )
    res = (
        t.merge(source, "target.id = source.id")
        .when_matched_delete("source.amount < 0")
        .when_matched_update(
            {"amount": pc.field("source.amount") + pc.field("target.amount"), "region": "source.region"}
        )
        .when_not_matched_insert_all("source.id > 100")
        .when_not_matched_by_source_update({"region": "ap"}, "target.id >= 18")
        .execute()
    )
    assert (res.rows_deleted, res.rows_updated, res.rows_inserted) == (3, 4, 1)
    got = {r["id"]: (r["region"], r["amount"]) for r in t.scan().to_arrow().to_pylist()}
    expected = {i: ("eu", float(i)) for i in range(20) if i not in (1, 2, 3)}
    expected.update(
        {5: ("us", 55.0), 6: ("us", 56.0), 18: ("ap", 18.0), 19: ("ap", 19.0), 101: ("eu", 101.0)}
    )
    assert got == expected
    snap = t.current_snapshot()
    assert snap is not None and snap.snapshot_id == res.snapshot_id
    s = snap.summary.additional_properties
    if mode == "merge-on-read":
        assert s["added-position-deletes"] == "7" and s["added-records"] == "5"
    else:
        assert "added-delete-files" not in s and s["total-records"] == str(len(expected))


def test_merge_in_process_refuses_bad_input_and_leaves_nothing(cat: Catalog) -> None:
    t = mor_table(cat)
    t.append(rows(range(10)))
    before = t.current_snapshot()
    data_dir = os.path.join(t.location(), "data")
    files = files_under(data_dir)
    dup = rows([4, 4])
    with pytest.raises(ValidationError, match=r"'id': 4.*2 source rows"):
        t.merge(dup, "target.id = source.id").when_matched_update_all().execute()
    with pytest.raises(ValidationError, match="'nope'"):
        t.merge(dup, "target.id = source.id").when_matched_update({"nope": 1})
    with pytest.raises(ValidationError, match="'amount'"):
        t.merge(rows([4]), "target.id = source.id").when_matched_update({"amount": "text"}).execute()
    with pytest.raises(icefloe.exceptions.NotSupportedError, match="spark"):
        t.merge(rows([4]), "target.id < source.id").when_matched_delete().execute()
    t.refresh()
    assert t.current_snapshot() == before
    assert files_under(data_dir) == files


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_delete_with_case_insensitive_names(cat: Catalog, mode: str) -> None:
    """`case_sensitive=False` resolves `ID` to `id` in both delete modes (copy-on-write
    bound the filter case-sensitively before); the default stays case-sensitive."""
    t = cat.create_table("db.t", schema=SCHEMA, properties={"write.delete.mode": mode})
    t.append(rows(range(5)))
    t.delete("ID = 3 OR Region = 'us'", case_sensitive=False)
    assert sorted(r["id"] for r in t.refresh().scan().to_arrow().to_pylist()) == [0, 1, 2, 4]
    with pytest.raises(ValidationError, match="ID"):
        t.delete("ID = 1")
    assert t.refresh().scan().to_arrow().num_rows == 4


def test_overwrite_with_case_insensitive_names(cat: Catalog) -> None:
    """`Table.overwrite(..., case_sensitive=False)` (PyIceberg's flag) resolves `ID` to `id`;
    the default refuses it, naming the column, with nothing committed and no file left."""
    t = cat.create_table("db.t", schema=SCHEMA)
    t.append(rows(range(5)))
    before = t.refresh().current_snapshot()
    data_dir = os.path.join(t.location(), "data")
    files = files_under(data_dir)
    with pytest.raises(ValidationError, match="ID"):
        t.overwrite(rows([7]), "ID >= 3")
    assert t.refresh().current_snapshot() == before
    assert files_under(data_dir) == files
    t.overwrite(rows([7]), "ID >= 3", case_sensitive=False)
    assert sorted(r["id"] for r in t.refresh().scan().to_arrow().to_pylist()) == [0, 1, 2, 7]
    head = t.current_snapshot()
    assert head is not None
    t.manage_snapshots().create_branch(head.snapshot_id, "b").commit()
    t.overwrite(rows([8]), "iD = 7", case_sensitive=False, branch="b")
    on_b = t.refresh().snapshot_by_name("b")
    assert on_b is not None
    got = t.scan(snapshot_id=on_b.snapshot_id).to_arrow().column("id").to_pylist()
    assert sorted(got) == [0, 1, 2, 8]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_delete_by_a_struct_field_or_a_dotted_column_name(cat: Catalog, mode: str) -> None:
    """The merge-on-read delete task reads only `_pos` plus the filter's columns: a filter
    on a struct's field, or on a top-level column whose name holds a dot, was refused
    ("nested field ... not in the projection") before; copy-on-write always worked."""
    st = pa.struct([pa.field("x", pa.int64()), pa.field("y", pa.string())])
    schema = pa.schema(
        [pa.field("id", pa.int64(), nullable=False), pa.field("s", st), pa.field("a.b", pa.int64())]
    )
    data = pa.Table.from_pylist(
        [{"id": i, "s": {"x": i, "y": f"y{i}"}, "a.b": i * 10} for i in range(6)], schema
    )
    t = cat.create_table("db.t", schema=schema, properties={"write.delete.mode": mode})
    t.append(data)
    t.delete("s.x = 2")
    t.delete('"a.b" = 40')
    t.delete("s.y = 'y5' AND \"a.b\" > 0")
    assert sorted(r["id"] for r in t.refresh().scan().to_arrow().to_pylist()) == [0, 1, 3]
    assert t.refresh().current_snapshot().summary["total-records"] == (
        "6" if mode == "merge-on-read" else "3"
    )


@pytest.mark.parametrize("version", ["2", "3"])
def test_merge_and_upsert_take_join_keys_of_another_width(cat: Catalog, version: str) -> None:
    """A source whose key is int32 / large_string against the table's long / string columns
    joins as Spark's MERGE compares them (Arrow's join needs equal types: it failed with a raw
    ArrowInvalid, and so did a v3 copy-on-write upsert, which runs as a MERGE)."""
    props = {"format-version": version, "write.merge.mode": "copy-on-write"}
    t = cat.create_table(f"db.keys{version}", schema=SCHEMA, properties=props)
    t.append(rows(range(5)))

    def source(ids: list[int], region: str) -> pa.Table:
        return pa.table(
            {
                "id": pa.array(ids, pa.int32()),
                "region": pa.array([region] * len(ids), pa.large_string()),
                "amount": pa.array([10.0 * i for i in ids]),
            }
        )

    m = (
        t.merge(source([1, 7], "us"), "target.id = source.id and target.region = source.region")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    assert (m.rows_updated, m.rows_inserted) == (0, 2)  # id 1 is 'eu' in the table
    t.delete("region = 'us'")
    result = t.upsert(source([1, 8], "eu"), join_cols=["id"])
    assert (result.rows_updated, result.rows_inserted) == (1, 1)
    got = sorted((r["id"], r["amount"]) for r in t.scan().to_arrow().to_pylist())
    assert [i for i, _ in got] == [0, 1, 2, 3, 4, 8] and dict(got)[1] == 10.0
