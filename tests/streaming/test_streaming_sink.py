"""The exactly-once foreachBatch sink (`icefloe.spark.batch_writer`) in the test session: a
real streaming query writes through it and its snapshots carry Spark's query id and batch ids;
a batch replayed directly commits nothing and leaves no file; a writer holding a stale table
re-checks after losing the commit race (a zombie of the same query: skipped; another writer:
committed on top); upserts by key equal a model of the batches; branches; bad arguments fail
before anything is written. Rows are read back by icefloe and by Iceberg Java."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe import NestedField, Schema
from icefloe.exceptions import ValidationError
from icefloe.types import LongType, StringType
from icefloe.write.streaming_commit import BATCH_ID_KEY, QUERY_ID_KEY, commit_batch, last_committed_batch
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

ARROW = pa.schema([pa.field("id", pa.int64()), pa.field("val", pa.string())])
SPARK_SCHEMA = "id bigint, val string"


def _create(
    catalog: Any, properties: dict[str, str] | None = None, identifier: bool = False
) -> tuple[str, Any]:
    name = new_table_name("stream")
    schema = Schema(
        NestedField(1, "id", LongType(), required=identifier),
        NestedField(2, "val", StringType()),
        identifier_field_ids=[1] if identifier else [],
    )
    return name, catalog.create_table(name, schema=schema, properties=properties or {})


def _rows(spark: Any, ids: range | list[int], tag: str) -> Any:
    return spark.createDataFrame([(i, f"{tag}{i}") for i in ids], SPARK_SCHEMA)


def _icefloe_rows(catalog: Any, name: str, branch: str | None = None) -> list[tuple[int, str]]:
    table = catalog.load_table(name)
    scan = table.scan() if branch is None else table.scan(snapshot_id=table.refs()[branch].snapshot_id)
    return sorted((r["id"], r["val"]) for r in scan.to_arrow().to_pylist())


def _java_rows(oracle: Oracle, name: str, branch: str | None = None) -> list[tuple[int, str]]:
    ref = "" if branch is None else f".branch_{branch}"
    return sorted(
        (r["id"], r["val"]) for r in oracle.sql(f"SELECT id, val FROM {oracle.qualified(name)}{ref}")
    )


def _stream_summaries(oracle: Oracle, name: str) -> list[tuple[str, int]]:
    """(query id, batch id) of the snapshots Java lists, oldest first."""
    out = []
    for s in oracle.snapshots(name):
        if QUERY_ID_KEY in s["summary"]:
            out.append((s["summary"][QUERY_ID_KEY], int(s["summary"][BATCH_ID_KEY])))
    return out


def _files_on_disk(table: Any) -> set[str]:
    root = Path(table.location().removeprefix("file://")) / "data"
    return {str(p) for p in root.rglob("*.parquet")} if root.exists() else set()


def _live_files(table: Any) -> set[str]:
    table.refresh()
    if table.current_snapshot() is None:
        return set()
    return {p.removeprefix("file://") for p in table.inspect.files().column("file_path").to_pylist()}


def test_streaming_query_commits_each_batch_once_with_spark_ids(
    spark: Any, oracle: Oracle, catalog: Any, tmp_path: Path
) -> None:
    """A file-source query through foreachBatch, run twice from one checkpoint: every row once,
    one snapshot per batch named by Spark's query id (the default) and the batch id."""
    name, table = _create(catalog)
    src, checkpoint = tmp_path / "src", tmp_path / "checkpoint"
    src.mkdir()

    def drop(k: int) -> None:
        ids = list(range(k * 100, k * 100 + 100))
        pq.write_table(
            pa.table({"id": ids, "val": [f"v{i}" for i in ids]}, schema=ARROW), src / f"f{k:03d}.parquet"
        )
        os.utime(src / f"f{k:03d}.parquet", (1_000_000 + k, 1_000_000 + k))

    query_ids = []
    for first, last in ((0, 4), (5, 7)):
        for k in range(first, last + 1):
            drop(k)
        q = (
            spark.readStream.schema(SPARK_SCHEMA)
            .option("maxFilesPerTrigger", 2)
            .parquet(str(src))
            .writeStream.foreachBatch(icefloe.spark.batch_writer(table))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        q.awaitTermination(120)
        assert q.exception() is None
        query_ids.append(str(q.id))
    assert query_ids[0] == query_ids[1]
    expected = [(i, f"v{i}") for i in range(800)]
    assert _icefloe_rows(catalog, name) == expected
    assert _java_rows(oracle, name) == expected
    # 5 files in batches of 2, then 3 more: batches 0..2 and 3..4.
    assert _stream_summaries(oracle, name) == [(query_ids[0], b) for b in range(5)]
    assert last_committed_batch(catalog.load_table(name), query_ids[0]) == 4


def test_replayed_batch_commits_nothing_and_leaves_no_file(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name, table = _create(catalog)
    writer = icefloe.spark.batch_writer(table, query_id="q-replay")
    writer(_rows(spark, range(0, 10), "a"), 0)
    writer(_rows(spark, range(10, 20), "b"), 1)
    snapshots = [s.snapshot_id for s in catalog.load_table(name).snapshots()]
    # Batch 1 again (with other rows: a replay must not even look at them), and batch 0.
    writer(_rows(spark, range(100, 110), "x"), 1)
    writer(_rows(spark, range(200, 210), "y"), 0)
    assert writer.skipped == [1, 0]
    table = catalog.load_table(name)
    assert [s.snapshot_id for s in table.snapshots()] == snapshots
    expected = [(i, f"a{i}") for i in range(10)] + [(i, f"b{i}") for i in range(10, 20)]
    assert _icefloe_rows(catalog, name) == expected
    assert _java_rows(oracle, name) == expected
    assert _stream_summaries(oracle, name) == [("q-replay", 0), ("q-replay", 1)]
    assert _files_on_disk(table) == _live_files(table)
    # Another query's batch 1 is its own.
    icefloe.spark.batch_writer(table, query_id="q-other")(_rows(spark, range(20, 25), "c"), 1)
    assert len(_java_rows(oracle, name)) == 25


def test_commit_batch_rechecks_after_losing_the_race(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """The shared driver-side commit: a writer whose table is stale loses the swap, refreshes,
    and finds its batch committed by a zombie of the same query (skipped, files deleted), or
    another writer's commit (its batch committed on top)."""
    name, _ = _create(catalog)
    fresh, stale = catalog.load_table(name), catalog.load_table(name)

    def written(table: Any, ids: range, write_id: str) -> list[str]:
        data = pa.table({"id": list(ids), "val": [f"s{i}" for i in ids]}, schema=ARROW)
        return table._write_local(data.to_reader(), write_id)

    snap = commit_batch(fresh, "q-race", 7, written(fresh, range(0, 5), "a" * 32))
    assert snap is not None and snap.summary[BATCH_ID_KEY] == "7"
    # The stale object still sees no batch: only the retry inside the commit loop can tell.
    assert last_committed_batch(stale, "q-race") is None
    files = written(stale, range(100, 105), "b" * 32)
    assert commit_batch(stale, "q-race", 7, files, "b" * 32) is None
    table = catalog.load_table(name)
    assert len(table.snapshots()) == 1
    assert _files_on_disk(table) == _live_files(table)
    # An unrelated writer commits; the stale object's next batch lands on top of it.
    fresh.refresh().append(pa.table({"id": [50], "val": ["other"]}, schema=ARROW))
    stale2 = catalog.load_table(name)
    fresh.refresh().append(pa.table({"id": [51], "val": ["other"]}, schema=ARROW))
    snap = commit_batch(stale2, "q-race", 8, written(stale2, range(200, 203), "c" * 32), "c" * 32)
    assert snap is not None and snap.summary[BATCH_ID_KEY] == "8"
    expected = sorted(
        [(i, f"s{i}") for i in [*range(0, 5), *range(200, 203)]] + [(50, "other"), (51, "other")]
    )
    assert _icefloe_rows(catalog, name) == expected
    assert _java_rows(oracle, name) == expected
    assert _stream_summaries(oracle, name) == [("q-race", 7), ("q-race", 8)]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_upsert_mode_equals_the_model(spark: Any, oracle: Oracle, catalog: Any, mode: str) -> None:
    name, table = _create(catalog, {"write.merge.mode": mode, "format-version": "2"}, identifier=True)
    writer = icefloe.spark.batch_writer(table, query_id=f"q-upsert-{mode}", mode="upsert")
    model: dict[int, str] = {}
    batches = [
        [(i, f"b0-{i}") for i in range(0, 30)],
        [(i, f"b1-{i}") for i in range(20, 40)],
        [(i, f"b2-{i}") for i in range(0, 50, 3)],
        [(i, f"b3-{i}") for i in range(45, 60)],
    ]
    for batch_id, rows in enumerate(batches):
        writer(spark.createDataFrame(rows, SPARK_SCHEMA), batch_id)
        model.update(dict(rows))
        if batch_id == 2:  # a replay of batch 2 with other values changes nothing
            writer(spark.createDataFrame([(i, "replayed") for i in range(0, 60)], SPARK_SCHEMA), 2)
    assert writer.skipped == [2]
    expected = sorted(model.items())
    assert _icefloe_rows(catalog, name) == expected
    assert _java_rows(oracle, name) == expected
    assert _stream_summaries(oracle, name) == [(f"q-upsert-{mode}", b) for b in range(4)]
    table = catalog.load_table(name)
    if mode == "copy-on-write":  # every file is live or was replaced by a commit
        assert _files_on_disk(table) <= _live_files(table) | _all_files(table)


def _all_files(table: Any) -> set[str]:
    return {p.removeprefix("file://") for p in table.inspect.all_files().column("file_path").to_pylist()}


def test_upsert_by_explicit_key_columns(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name, table = _create(catalog)
    writer = icefloe.spark.batch_writer(table, query_id="q-keys", mode="upsert", key_columns=["id"])
    writer(_rows(spark, range(0, 5), "a"), 0)
    writer(_rows(spark, range(3, 8), "b"), 1)
    expected = [(i, "a" + str(i)) for i in range(3)] + [(i, "b" + str(i)) for i in range(3, 8)]
    assert _java_rows(oracle, name) == expected


def test_batches_on_a_branch(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name, table = _create(catalog)
    table.append(pa.table({"id": [-1], "val": ["main"]}, schema=ARROW))
    writer = icefloe.spark.batch_writer(table, query_id="q-branch", branch="stream")
    writer(_rows(spark, range(0, 4), "a"), 0)
    writer(_rows(spark, range(4, 8), "b"), 1)
    writer(_rows(spark, range(100, 104), "x"), 1)
    assert writer.skipped == [1]
    assert _java_rows(oracle, name) == [(-1, "main")]
    expected = [(-1, "main")] + [(i, f"a{i}") for i in range(4)] + [(i, f"b{i}") for i in range(4, 8)]
    assert _java_rows(oracle, name, "stream") == expected
    assert _icefloe_rows(catalog, name, "stream") == expected
    table = catalog.load_table(name)
    assert last_committed_batch(table, "q-branch", "stream") == 1
    assert last_committed_batch(table, "q-branch") is None  # main's history has none


def test_bad_arguments_fail_before_anything_is_written(spark: Any, catalog: Any) -> None:
    name, table = _create(catalog)
    table.append(pa.table({"id": [1], "val": ["x"]}, schema=ARROW))
    table.manage_snapshots().create_tag(table.current_snapshot().snapshot_id, "v1").commit()
    table = catalog.load_table(name)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"mode": "complete"}, "mode must be one of"),
        ({"mode": "update"}, "mode must be one of"),
        ({"mode": "append", "key_columns": ["id"]}, "apply to mode='upsert' only"),
        ({"mode": "upsert"}, "upsert needs join columns"),
        ({"mode": "upsert", "key_columns": ["nope"]}, "'nope' is not a column"),
        ({"mode": "upsert", "key_columns": "id"}, "non-empty list"),
        ({"query_id": ""}, "non-empty string"),
        ({"snapshot_properties": {QUERY_ID_KEY: "x"}}, "may not set"),
        ({"branch": "v1"}, "it is a tag"),
    ]
    for kwargs, message in bad:
        with pytest.raises(ValidationError, match=message):
            icefloe.spark.batch_writer(table, **kwargs)
    with pytest.raises(ValidationError, match="needs an icefloe Table"):
        icefloe.spark.batch_writer("db.t")  # type: ignore[arg-type]
    # Errors found only when the batch arrives: nothing is committed, no file is left.
    writer = icefloe.spark.batch_writer(table, query_id="q-bad", mode="upsert", key_columns=["id"])
    with pytest.raises(ValidationError, match="lack join column"):
        writer(spark.createDataFrame([("a",)], "val string"), 0)
    with pytest.raises(ValidationError):
        icefloe.spark.batch_writer(table, query_id="q-bad")(
            spark.createDataFrame([("a", 1)], "id string, x int"), 0
        )
    with pytest.raises(ValidationError, match="batch id must be a non-negative integer"):
        icefloe.spark.batch_writer(table, query_id="q-bad")(_rows(spark, range(2), "a"), -1)
    table = catalog.load_table(name)
    assert len(table.snapshots()) == 1
    assert _files_on_disk(table) == _live_files(table)


def test_without_a_visible_query_id_the_error_says_what_to_pass(spark: Any, catalog: Any) -> None:
    """Outside a streaming query (no local property) the default query id cannot be found."""
    _, table = _create(catalog)
    with pytest.raises(ValidationError, match="pass query_id"):
        icefloe.spark.batch_writer(table)(_rows(spark, range(2), "a"), 0)
    assert catalog.load_table(table.identifier).current_snapshot() is None


def test_an_empty_batch_commits_no_snapshot(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name, table = _create(catalog)
    writer = icefloe.spark.batch_writer(table, query_id="q-empty")
    writer(spark.createDataFrame([], SPARK_SCHEMA), 0)
    assert writer.skipped == [] and catalog.load_table(name).current_snapshot() is None
    writer(_rows(spark, range(3), "a"), 1)
    writer(spark.createDataFrame([], SPARK_SCHEMA), 2)
    assert writer.skipped == []
    assert _stream_summaries(oracle, name) == [("q-empty", 1)]
    assert _java_rows(oracle, name) == [(i, f"a{i}") for i in range(3)]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_upsert_rechecks_after_losing_the_race(spark: Any, oracle: Oracle, catalog: Any, mode: str) -> None:
    """An upsert batch of a stale writer loses the swap to the same batch committed by a zombie:
    the retry finds it and skips; the loser's data and delete files are deleted."""
    from icefloe.write.streaming_commit import guarded

    name, _ = _create(catalog, {"write.merge.mode": mode, "format-version": "2"}, identifier=True)
    fresh, stale = catalog.load_table(name), catalog.load_table(name)
    fresh.append(pa.table({"id": [1, 2], "val": ["x", "y"]}, schema=ARROW))
    stale = catalog.load_table(name)
    icefloe.spark.batch_writer(fresh.refresh(), "q-up-race", "upsert")(_rows(spark, [2, 3], "a"), 4)

    def upsert(view: Any, props: dict[str, str]) -> Any:
        return icefloe.spark.upsert(_rows(spark, [1, 3], "z"), view, snapshot_properties=props)

    assert guarded(stale, "q-up-race", 4, upsert) == (False, None)
    expected = [(1, "x"), (2, "a2"), (3, "a3")]
    assert _java_rows(oracle, name) == expected
    assert _icefloe_rows(catalog, name) == expected
    table = catalog.load_table(name)
    assert _stream_summaries(oracle, name) == [("q-up-race", 4)]
    assert _files_on_disk(table) <= _all_files(table)
