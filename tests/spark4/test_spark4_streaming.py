"""`spark.readStream.format("icefloe")` on PySpark 4 (collected only there): micro-batches
bounded by files and rows, restart from a checkpoint, Iceberg's skip options, and the same
micro-batches as Iceberg Java's own streaming source on the same table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


class Batches:
    """What a foreachBatch sink saw: per batch id, the ids (small streams) or aggregates."""

    def __init__(self, ids: bool = True) -> None:
        self.ids = ids
        self.seen: list[tuple[int, Any]] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        if self.ids:
            self.seen.append((batch_id, sorted(r[0] for r in df.select("id").collect())))
        else:
            big = F.col("id").cast("decimal(38,0)")
            row = df.agg(F.count("*"), F.sum(big), F.sum(big * big)).collect()[0]
            self.seen.append((batch_id, (row[0], row[1] or 0, row[2] or 0)))


def _stream(
    spark: Any, name: str, sink: Batches, checkpoint: Path, fmt: str = "icefloe", **options: Any
) -> Any:
    reader = spark.readStream.format(fmt)
    for k, v in options.items():
        reader = reader.option(k.replace("_", "-"), str(v))
    table = f"local.{name}" if fmt == "icefloe" else f"oracle.{name}"
    return (
        reader.load(table)
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .start()
    )


def _run(query: Any) -> None:
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def _java_table(oracle: Oracle, appends: list[list[int]], files_per_append: int = 1) -> str:
    name = new_table_name("stream")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    for ids in appends:
        df = oracle.spark.createDataFrame([(i, f"s{i}") for i in ids], "id bigint, s string")
        df.repartition(files_per_append).writeTo(q).append()
    return name


def test_batches_match_java_streaming_source(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    """Bounded by files: icefloe's micro-batches hold the same rows as Java's with the same
    limit (Java's `streaming-max-files-per-micro-batch`), batch for batch."""
    name = _java_table(
        oracle, [list(range(0, 40)), list(range(100, 130)), list(range(200, 205))], files_per_append=3
    )
    ours, java = Batches(), Batches()
    _run(_stream(source, name, ours, tmp_path / "ours", max_files_per_trigger=2))
    _run(
        _stream(
            source, name, java, tmp_path / "java", fmt="iceberg", **{"streaming-max-files-per-micro-batch": 2}
        )
    )
    assert [ids for _, ids in ours.seen if ids] == [ids for _, ids in java.seen if ids]
    assert sorted(i for _, ids in ours.seen for i in ids) == sorted(r.id for r in oracle.df(name).collect())
    # At most 2 files per batch.
    files = len(oracle.data_files(name))
    assert files > 6
    assert len([b for b in ours.seen if b[1]]) >= -(-files // 2)


def test_record_limit_and_restart_from_checkpoint(
    source: Any, oracle: Oracle, catalog: Any, tmp_path: Path
) -> None:
    name = _java_table(oracle, [list(range(0, 10)), list(range(10, 20))], files_per_append=2)
    sink = Batches()
    checkpoint = tmp_path / "ck"
    _run(_stream(source, name, sink, checkpoint, max_records_per_trigger=6))
    assert all(len(ids) <= 6 for _, ids in sink.seen)
    assert sorted(i for _, ids in sink.seen for i in ids) == list(range(20))

    # New commits while the query is down: the restarted query reads exactly those.
    table = catalog.load_table(name)
    table.append(pa.table({"id": pa.array([20, 21, 22], pa.int64()), "s": ["a", "b", "c"]}))
    table.append(pa.table({"id": pa.array([23], pa.int64()), "s": ["d"]}))
    before = len(sink.seen)
    _run(_stream(source, name, sink, checkpoint, max_records_per_trigger=6))
    assert sorted(i for _, ids in sink.seen[before:] for i in ids) == [20, 21, 22, 23]
    ids = [b for b, _ in sink.seen]
    assert ids == sorted(set(ids)), "batch ids continue after the restart"


def test_overwrite_and_delete_snapshots_need_the_skip_options(
    source: Any, oracle: Oracle, tmp_path: Path
) -> None:
    name = _java_table(oracle, [[1, 2, 3]])
    q = oracle.qualified(name)
    oracle.sql(f"DELETE FROM {q} WHERE id = 1")  # copy-on-write: an overwrite snapshot
    oracle.sql(f"INSERT INTO {q} VALUES (4, 's4')")
    assert [s["operation"] for s in oracle.snapshots(name)] == ["append", "overwrite", "append"]

    with pytest.raises(Exception, match="streaming-skip-overwrite-snapshots"):
        _run(_stream(source, name, Batches(), tmp_path / "a"))
    sink = Batches()
    _run(_stream(source, name, sink, tmp_path / "b", streaming_skip_overwrite_snapshots="true"))
    assert sorted(i for _, ids in sink.seen for i in ids) == [1, 2, 3, 4]  # as Java's source: appends only

    oracle.sql(f"DELETE FROM {q}")  # every file dropped: a delete snapshot
    oracle.sql(f"INSERT INTO {q} VALUES (5, 's5')")
    with pytest.raises(Exception, match="streaming-skip-delete-snapshots"):
        _run(_stream(source, name, Batches(), tmp_path / "c", streaming_skip_overwrite_snapshots="true"))
    sink = Batches()
    _run(
        _stream(
            source, name, sink, tmp_path / "d",
            streaming_skip_overwrite_snapshots="true", streaming_skip_delete_snapshots="true",
        )
    )  # fmt: skip
    assert sorted(i for _, ids in sink.seen for i in ids) == [1, 2, 3, 4, 5]


def test_stream_from_timestamp(source: Any, oracle: Oracle, tmp_path: Path) -> None:
    name = _java_table(oracle, [[1], [2], [3]])
    snaps = oracle.snapshots(name)
    second = oracle.java_table(name).snapshot(snaps[1]["snapshot_id"]).timestampMillis()
    sink = Batches()
    _run(_stream(source, name, sink, tmp_path / "ck", stream_from_timestamp=second))
    assert sorted(i for _, ids in sink.seen for i in ids) == [2, 3]


def test_ten_million_rows_in_one_commit_stream_in_bounded_batches(
    source: Any, catalog: Any, tmp_path: Path
) -> None:
    name = new_table_name("stream_big")
    rows = 10_000_000
    table = catalog.create_table(
        name,
        pa.schema([pa.field("id", pa.int64())]),
        # ~460,000 rows a file (plain, sequential longs compress well): batches of whole
        # files under the limit, and enough files to need many of them.
        properties={"write.target-file-size-bytes": str(1 << 19)},
    )
    ids = pa.array(range(rows), pa.int64())
    table.append(pa.table({"id": ids}))
    files = len(table.scan().plan_files())
    assert files >= 10, files
    limit = 1_500_000
    sink = Batches(ids=False)
    _run(_stream(source, name, sink, tmp_path / "ck", max_records_per_trigger=limit))
    counts = [agg[0] for _, agg in sink.seen if agg[0]]
    assert sum(counts) == rows
    assert max(counts) <= limit, counts
    assert len(counts) >= rows // limit
    assert sum(agg[1] for _, agg in sink.seen) == rows * (rows - 1) // 2
    assert sum(agg[2] for _, agg in sink.seen) == (rows - 1) * rows * (2 * rows - 1) // 6


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("max-files-per-trigger", "0"),
        ("max-records-per-trigger", "x"),
        ("streaming-skip-delete-snapshots", "yes"),
        ("streaming-max-rows-per-micro-batch", "-1"),
    ],
)
def test_a_bad_stream_option_is_icefloes_error(
    source: Any, oracle: Oracle, tmp_path: Path, key: str, value: str
) -> None:
    """Checked when Spark asks for the schema: raised when the stream reader starts, PySpark
    4.1 ended the error with an UnboundLocalError of its own (`reader.stop()` in a finally)."""
    name = _java_table(oracle, [[1]])
    with pytest.raises(Exception) as info:
        _run(_stream(source, name, Batches(), tmp_path / "ck", **{key.replace("-", "_"): value}))
    errors = [line for line in str(info.value).splitlines() if "Error" in line]
    assert errors and "ValidationError" in errors[-1] and f"option {key!r}" in errors[-1], errors[-3:]


class Rows:
    """A foreachBatch sink keeping every row (as a tuple) and the stream's column names."""

    def __init__(self) -> None:
        self.columns: list[str] = []
        self.rows: list[tuple[Any, ...]] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        self.columns = list(df.columns)
        self.rows.extend(tuple(r) for r in df.collect())


def test_a_running_stream_keeps_its_schema_through_schema_changes(
    source: Any, oracle: Oracle, tmp_path: Path
) -> None:
    """As Java's source: a running query reads every batch with the schema it started with,
    by field id (an added column is not shown; a dropped column, even one added again
    under the same name, reads as null)."""
    name = _java_table(oracle, [[1]])
    q = oracle.qualified(name)
    ours, java = Rows(), Rows()
    queries = [
        _stream(source, name, ours, tmp_path / "ours"),
        _stream(source, name, java, tmp_path / "java", fmt="iceberg"),
    ]
    try:
        for query in queries:
            query.processAllAvailable()
        oracle.sql(f"ALTER TABLE {q} ADD COLUMN extra string")
        oracle.sql(f"INSERT INTO {q} VALUES (2, 's2', 'x2')")
        oracle.sql(f"ALTER TABLE {q} DROP COLUMN s")
        oracle.sql(f"ALTER TABLE {q} ADD COLUMN s string")  # a new field id
        oracle.sql(f"INSERT INTO {q} VALUES (3, 'x3', 'new-s3')")
        for query in queries:
            query.processAllAvailable()
    finally:
        for query in queries:
            query.stop()
    assert java.columns == ["id", "s"]
    assert sorted(java.rows) == [(1, "s1"), (2, "s2"), (3, None)]
    assert ours.columns == java.columns
    assert sorted(ours.rows) == sorted(java.rows)


def test_stream_from_a_timestamp_after_the_newest_snapshot(
    source: Any, oracle: Oracle, catalog: Any, tmp_path: Path
) -> None:
    """`stream-from-timestamp` after every snapshot when the query starts (a table with a
    snapshot, an empty table): as Java's source, a commit made before the timestamp is never
    streamed, the first one at or after it is (from where the query stood at its restart)."""
    import time

    def append(name: str, i: int) -> int:
        table = catalog.load_table(name)
        table.append(pa.table({"id": pa.array([i], pa.int64()), "s": [f"s{i}"]}))
        return int(table.current_snapshot().timestamp_ms)

    future = int(time.time() * 1000) + 3_600_000
    later, empty, soon = _java_table(oracle, [[1]]), _java_table(oracle, []), _java_table(oracle, [])
    first = append(soon, 1)
    starts = {later: future, empty: future, soon: first + 1}
    sinks = {(name, fmt): Batches() for name in starts for fmt in ("icefloe", "iceberg")}

    def run_all() -> None:  # one query at a time, each restarted from its checkpoint
        for (name, fmt), sink in sinks.items():
            _run(
                _stream(
                    source,
                    name,
                    sink,
                    tmp_path / f"{name}-{fmt}",
                    fmt=fmt,
                    stream_from_timestamp=starts[name],
                )
            )

    run_all()
    assert append(later, 2) < future and append(empty, 2) < future
    time.sleep(max(0.0, (first + 2 - time.time() * 1000) / 1000))
    assert append(soon, 2) > first
    run_all()
    streamed = {key: sorted(i for _, ids in sink.seen for i in ids) for key, sink in sinks.items()}
    assert [streamed[name, "iceberg"] for name in starts] == [[], [], [2]]
    assert [streamed[name, "icefloe"] for name in starts] == [[], [], [2]]


def test_a_limit_under_both_names_must_agree() -> None:
    """`max-files-per-trigger` and Java's `streaming-max-files-per-micro-batch` are one limit:
    either name sets it, and two different values are refused."""
    from icefloe.exceptions import ValidationError
    from icefloe.spark._source_stream import stream_options
    from icefloe.spark.datasource import SourceOptions

    def limits(**options: str) -> tuple[int | None, int | None]:
        opts = SourceOptions("c", {}, "db.t", {k.replace("_", "-"): v for k, v in options.items()})
        return stream_options(opts)[:2]

    assert limits(streaming_max_files_per_micro_batch="3", streaming_max_rows_per_micro_batch="7") == (3, 7)
    assert limits(max_files_per_trigger="3", streaming_max_files_per_micro_batch="3") == (3, None)
    with pytest.raises(ValidationError, match="set one limit twice"):
        limits(max_records_per_trigger="5", streaming_max_rows_per_micro_batch="6")
