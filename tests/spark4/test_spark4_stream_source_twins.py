"""`spark.readStream.format("icefloe")` against Iceberg Java's own streaming source on the
same table in the same session (collected only on PySpark 4): tables whose first snapshots
were expired, histories mixing appends with compaction, copy-on-write and merge-on-read
deletes and overwrites, `stream-from-timestamp` at and around a snapshot's time, appends on
another branch, and a big snapshot read in bounded batches across restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


class Batches:
    """What a foreachBatch sink saw: the sorted ids of each non-empty batch."""

    def __init__(self) -> None:
        self.seen: list[list[int]] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        ids = sorted(r[0] for r in df.select("id").collect())
        if ids:
            self.seen.append(ids)

    def all(self) -> list[int]:
        return sorted(i for ids in self.seen for i in ids)


def _stream(
    spark: Any,
    name: str,
    sink: Batches,
    checkpoint: Path,
    fmt: str,
    available_now: bool = False,
    **options: Any,
) -> None:
    """Run a query from `checkpoint` until it has read everything available (or, with
    `available_now`, until its Trigger.AvailableNow run ends), then stop it."""
    reader = spark.readStream.format(fmt)
    for k, v in options.items():
        reader = reader.option(k.replace("_", "-"), str(v))
    table = f"local.{name}" if fmt == "icefloe" else f"oracle.{name}"
    writer = reader.load(table).writeStream.foreachBatch(sink).option("checkpointLocation", str(checkpoint))
    if available_now:
        writer = writer.trigger(availableNow=True)
    query = writer.start()
    try:
        if available_now:
            query.awaitTermination()
        query.processAllAvailable()
    finally:
        query.stop()


def _both(spark: Any, name: str, tmp_path: Path, **options: Any) -> tuple[Batches, Batches]:
    """icefloe's and Java's streams of `name` with the same options."""
    ours, java = Batches(), Batches()
    _stream(spark, name, ours, tmp_path / f"{name}-ours", "icefloe", **options)
    _stream(spark, name, java, tmp_path / f"{name}-java", "iceberg", **options)
    return ours, java


def _table(oracle: Oracle, appends: list[list[int]], files_per_append: int = 1) -> str:
    name = new_table_name("twin")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    for ids in appends:
        _append(oracle, name, ids, files_per_append)
    return name


def _append(oracle: Oracle, name: str, ids: list[int], files: int = 1) -> None:
    df = oracle.spark.createDataFrame([(i, f"s{i}") for i in ids], "id bigint, s string")
    df.repartition(files).writeTo(oracle.qualified(name)).append()


def test_first_snapshots_expired(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    """The oldest snapshot left names an expired parent: Java streams from it (its added
    files, then the later appends), also from a `stream-from-timestamp` before it; and a
    query whose offset's snapshot loses its parent between two runs goes on."""

    def expire_before(name: str, snapshot_id: int) -> None:
        java_table = oracle.java_table(name)
        java_table.expireSnapshots().expireOlderThan(
            java_table.snapshot(snapshot_id).timestampMillis()
        ).commit()

    name = _table(oracle, [[1, 2], [3], [4, 5], [6]])
    keep = oracle.snapshot_ids(name)[2]
    expire_before(name, keep)
    assert oracle.snapshot_ids(name) == [keep, oracle.current_snapshot_id(name)]
    ours, java = _both(source, name, tmp_path)
    assert java.all() == [4, 5, 6]
    assert ours.all() == java.all()
    ours, java = _both(source, name, tmp_path / "ts", stream_from_timestamp=1)
    assert java.all() == [4, 5, 6]
    assert ours.all() == java.all()

    # Both queries stand at the snapshot of [6]; its parent goes, then [7] comes.
    expire_before(name, oracle.snapshot_ids(name)[1])
    _append(oracle, name, [7])
    ours, java = _both(source, name, tmp_path)
    assert java.all() == [7]
    assert ours.all() == java.all()


def _ops(oracle: Oracle, name: str) -> list[str]:
    return [s["operation"] for s in oracle.snapshots(name)]


def test_compaction_and_deletes_in_the_history(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    """Appends between a compaction (`replace`, passed over silently), a copy-on-write delete
    (`overwrite`), a merge-on-read delete (`delete`) and an INSERT OVERWRITE (`overwrite`):
    with both skip options the same rows as Java (the appended rows, deleted ones included);
    without them the same error as Java."""
    name = _table(oracle, [[1, 2], [3, 4]])
    q = oracle.qualified(name)
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{name}', options => map('min-input-files','2'))"
    )
    _append(oracle, name, [5, 6])
    oracle.sql(f"DELETE FROM {q} WHERE id = 5")  # copy-on-write: overwrite
    _append(oracle, name, [7])
    oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    oracle.sql(f"DELETE FROM {q} WHERE id = 1")  # position deletes: delete
    _append(oracle, name, [8, 9])
    oracle.sql(f"INSERT OVERWRITE {q} SELECT id + 100, s FROM {q} WHERE id = 9")  # overwrite
    _append(oracle, name, [10])
    ops = ["append", "append", "replace", "append", "overwrite", "append", "delete", "append"]
    assert _ops(oracle, name) == [*ops, "overwrite", "append"]
    skips = {"streaming_skip_overwrite_snapshots": "true", "streaming_skip_delete_snapshots": "true"}
    ours, java = _both(source, name, tmp_path, **skips)
    assert java.all() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert ours.all() == java.all()
    for opts, needed in [
        ({}, "streaming-skip-overwrite-snapshots"),
        ({"streaming_skip_overwrite_snapshots": "true"}, "streaming-skip-delete-snapshots"),
    ]:
        for fmt in ("iceberg", "icefloe"):
            with pytest.raises(Exception, match=needed):
                _stream(source, name, Batches(), tmp_path / f"err-{fmt}-{len(opts)}", fmt, **opts)


def test_only_compaction_needs_no_option(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    name = _table(oracle, [[1], [2], [3]])
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{name}', options => map('min-input-files','2'))"
    )
    _append(oracle, name, [4])
    assert _ops(oracle, name) == ["append", "append", "append", "replace", "append"]
    ours, java = _both(source, name, tmp_path)
    assert java.all() == [1, 2, 3, 4]
    assert ours.all() == java.all()


def test_stream_from_timestamp_around_a_snapshot(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    """`stream-from-timestamp` one ms before, exactly at and one ms after the second
    snapshot's time, and before the first snapshot."""
    import time

    name = _table(oracle, [])
    for i in (1, 2, 3):
        _append(oracle, name, [i])
        time.sleep(0.01)
    jt = oracle.java_table(name)
    times = [jt.snapshot(sid).timestampMillis() for sid in oracle.snapshot_ids(name)]
    assert times == sorted(set(times))
    for ts in (times[1] - 1, times[1], times[1] + 1, times[0] - 1000):
        ours, java = _both(source, name, tmp_path / str(ts), stream_from_timestamp=ts)
        assert ours.all() == java.all(), ts
    assert java.all() == [1, 2, 3]


def test_appends_on_another_branch_are_not_streamed(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    name = _table(oracle, [[1]])
    q = oracle.qualified(name)
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH audit")
    oracle.sql(f"INSERT INTO {q}.branch_audit VALUES (50, 'b')")
    _append(oracle, name, [2])
    ours, java = _both(source, name, tmp_path)
    assert java.all() == [1, 2]
    assert ours.all() == java.all()


def test_commits_while_the_queries_run(source: Any, oracle: Oracle, catalog: Any, tmp_path: Path) -> None:
    """Commits by Java and by icefloe (with a compaction between) while both queries run."""
    import pyarrow as pa

    name = _table(oracle, [[1, 2]])
    sinks = {"icefloe": Batches(), "iceberg": Batches()}
    queries = []
    for fmt, sink in sinks.items():
        table = f"local.{name}" if fmt == "icefloe" else f"oracle.{name}"
        df = source.readStream.format(fmt).option("max-files-per-trigger", "1").load(table)
        if fmt == "iceberg":
            df = source.readStream.format(fmt).option("streaming-max-files-per-micro-batch", "1").load(table)
        ck = str(tmp_path / fmt)
        queries.append(df.writeStream.foreachBatch(sink).option("checkpointLocation", ck).start())
    try:
        for query in queries:
            query.processAllAvailable()
        _append(oracle, name, [3, 4, 5], files=3)
        for query in queries:
            query.processAllAvailable()
        t = catalog.load_table(name)
        t.append(pa.table({"id": pa.array([6, 7], pa.int64()), "s": ["a", "b"]}))
        oracle.sql(
            f"CALL oracle.system.rewrite_data_files(table => '{name}', options => map('min-input-files','2'))"
        )
        _append(oracle, name, [8])
        for query in queries:
            query.processAllAvailable()
    finally:
        for query in queries:
            query.stop()
    assert sinks["iceberg"].all() == [1, 2, 3, 4, 5, 6, 7, 8]
    assert sinks["icefloe"].all() == sinks["iceberg"].all()
    assert sinks["icefloe"].seen == sinks["iceberg"].seen


@pytest.mark.parametrize(
    ("ours_limit", "java_limit"),
    [
        # Java's option names, as a query moved from Java's source keeps them (icefloe's own,
        # `max_files_per_trigger` / `max_records_per_trigger`, are twin-tested with the same
        # limits in test_spark4_streaming.py).
        ({"streaming-max-files-per-micro-batch": 2}, {"streaming-max-files-per-micro-batch": 2}),
        ({"streaming-max-rows-per-micro-batch": 3}, {"streaming-max-rows-per-micro-batch": 3}),
    ],
)
def test_a_big_snapshot_across_restarts(
    source: Any, oracle: Oracle, tmp_path: Path, ours_limit: dict[str, Any], java_limit: dict[str, Any]
) -> None:
    """One snapshot of 5 files of very different sizes (1 to 40 rows; a row limit smaller than
    most files), then two more: icefloe's query restarted from its checkpoint after each
    Trigger.AvailableNow run (one bounded batch per start on PySpark 4.1) reads every row
    once, as Java's."""
    name = new_table_name("twin")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    sizes = [1, 40, 2, 25, 9]
    rows, start = [], 0
    for part, n in enumerate(sizes):
        rows += [(part, i) for i in range(start, start + n)]
        start += n
    # One Spark partition (one file) per part: an RDD partitioned by the part itself.
    rdd = oracle.spark.sparkContext.parallelize(rows).partitionBy(len(sizes), lambda p: p)
    df = oracle.spark.createDataFrame(rdd.map(lambda r: (r[1], f"s{r[1]}")), "id bigint, s string")
    df.writeTo(q).append()
    assert len(oracle.data_files(name)) == len(sizes)
    _append(oracle, name, [1000, 1001], files=2)
    _append(oracle, name, [2000])
    expected = sorted(r.id for r in oracle.df(name).collect())

    java = Batches()
    _stream(source, name, java, tmp_path / "java", "iceberg", available_now=True, **java_limit)
    assert java.all() == expected
    ours = Batches()
    for _ in range(40):
        before = len(ours.seen)
        _stream(source, name, ours, tmp_path / "ours", "icefloe", available_now=True, **ours_limit)
        if len(ours.seen) == before:
            break
    assert ours.all() == expected
    assert len(ours.seen) >= 4
    if "max_files_per_trigger" in ours_limit or "streaming-max-files-per-micro-batch" in ours_limit:
        assert ours.seen == java.seen
    else:  # a file over the limit is a batch of its own
        assert all(len(ids) <= 3 or len(ids) in sizes for ids in ours.seen), ours.seen


def test_empty_table_then_appends(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    name = _table(oracle, [])
    sinks = {"icefloe": Batches(), "iceberg": Batches()}
    queries = [
        source.readStream.format(fmt)
        .load(f"{'local' if fmt == 'icefloe' else 'oracle'}.{name}")
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(tmp_path / fmt))
        .start()
        for fmt, sink in sinks.items()
    ]
    try:
        for query in queries:
            query.processAllAvailable()
        _append(oracle, name, [1, 2], files=2)
        _append(oracle, name, [3])
        for query in queries:
            query.processAllAvailable()
    finally:
        for query in queries:
            query.stop()
    assert sinks["iceberg"].all() == [1, 2, 3]
    assert sinks["icefloe"].all() == sinks["iceberg"].all()


def test_oldest_snapshot_left_is_a_compaction(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    """Compaction, then every earlier snapshot expired: the oldest snapshot left is a
    `replace`, passed over as Java does (the compacted rows are not streamed again), and the
    appends after it are streamed."""
    name = _table(oracle, [[1], [2], [3]])
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{name}', options => map('min-input-files','2'))"
    )
    _append(oracle, name, [4])
    replace = oracle.snapshot_ids(name)[3]
    java_table = oracle.java_table(name)
    java_table.expireSnapshots().expireOlderThan(java_table.snapshot(replace).timestampMillis()).commit()
    assert _ops(oracle, name) == ["replace", "append"]
    ours, java = _both(source, name, tmp_path)
    assert java.all() == [4]
    assert ours.all() == java.all()
