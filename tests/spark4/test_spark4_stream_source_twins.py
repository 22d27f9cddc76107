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


def _stream(spark: Any, name: str, sink: Batches, checkpoint: Path, fmt: str, **options: Any) -> None:
    """Run a query from `checkpoint` until it has read everything available, then stop it."""
    reader = spark.readStream.format(fmt)
    for k, v in options.items():
        reader = reader.option(k.replace("_", "-"), str(v))
    table = f"local.{name}" if fmt == "icefloe" else f"oracle.{name}"
    query = (
        reader.load(table)
        .writeStream.foreachBatch(sink)
        .option("checkpointLocation", str(checkpoint))
        .start()
    )
    try:
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
    files, then the later appends)."""
    name = _table(oracle, [[1, 2], [3], [4, 5], [6]])
    keep = oracle.snapshot_ids(name)[2]
    java_table = oracle.java_table(name)
    java_table.expireSnapshots().expireOlderThan(java_table.snapshot(keep).timestampMillis()).commit()
    assert oracle.snapshot_ids(name) == [keep, oracle.current_snapshot_id(name)]
    ours, java = _both(source, name, tmp_path)
    assert java.all() == [4, 5, 6]
    assert ours.all() == java.all()
