"""Upserts through `format("icefloe")` on PySpark 4 (collected only there): the streaming sink
and the batch write with `option("upsert-enabled", "true")`, checked against a model of the
change stream (the last change of a key wins) and read back by Iceberg Java.

Each micro-batch is range-partitioned by the change's sequence number, so the DataFrame's
order is the stream's order and the same key sits in several tasks of one batch: the rows of
the earlier tasks must not survive (a task's equality deletes never reach rows of its own
commit)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.write.streaming_commit import BATCH_ID_KEY, QUERY_ID_KEY
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

CHANGES = pa.schema(
    [
        pa.field("seq", pa.int64()),
        pa.field("id", pa.int64()),
        pa.field("region", pa.string()),
        pa.field("v", pa.int64()),
        pa.field("op", pa.string()),
    ]
)


def _java_table(oracle: Oracle, version: int = 2, initial: int = 100, identifier: bool = False) -> str:
    name = new_table_name("upsert_sink")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint NOT NULL, region string, v bigint) USING iceberg "
        f"PARTITIONED BY (bucket(4, id)) TBLPROPERTIES ('format-version'='{version}')"
    )
    if identifier:
        oracle.sql(f"ALTER TABLE {q} SET IDENTIFIER FIELDS id")
    if initial:
        oracle.sql(f"INSERT INTO {q} SELECT id, 'r' || CAST(id % 3 AS STRING), id FROM range({initial})")
    return name


def _changes(rng: random.Random, start_seq: int, n: int, keys: int) -> list[dict[str, Any]]:
    """`n` changes of random keys among `keys` (updates, inserts, about 15% deletes)."""
    out = []
    for i in range(n):
        k = rng.randrange(keys)
        op = "D" if rng.random() < 0.15 else rng.choice(["I", "U", None])
        out.append(
            {"seq": start_seq + i, "id": k, "region": f"r{k % 3}", "v": rng.randrange(10**6), "op": op}
        )
    return out


def _model(
    initial: int, changes: list[dict[str, Any]], key: tuple[str, ...] = ("id",)
) -> list[tuple[Any, ...]]:
    rows = {(i,) if key == ("id",) else (i, f"r{i % 3}"): (i, f"r{i % 3}", i) for i in range(initial)}
    for c in sorted(changes, key=lambda c: c["seq"]):
        k = tuple(c[n] for n in key)
        if c["op"] == "D":
            rows.pop(k, None)
        else:
            rows[k] = (c["id"], c["region"], c["v"])
    return sorted(rows.values())


def _java_rows(oracle: Oracle, name: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in oracle.df(name, columns=["id", "region", "v"]).collect())


def _icefloe_rows(catalog: Any, name: str) -> list[tuple[Any, ...]]:
    t = catalog.load_table(name).scan(selected_fields=("id", "region", "v")).to_arrow()
    return sorted(zip(*(t.column(c).to_pylist() for c in ("id", "region", "v"))))


def _data_files_on_disk(catalog: Any, name: str) -> set[str]:
    data = Path(catalog.load_table(name).location().removeprefix("file:")) / "data"
    return {p.name for p in data.rglob("*.parquet")}


def _ordered(df: Any) -> Any:
    """The micro-batch in the stream's order over three tasks (ranges of `seq`, each sorted:
    a streaming DataFrame cannot be sorted, a task's own rows can)."""
    schema = CHANGES

    def sorted_by_seq(batches: Any) -> Any:  # nested: pickled by value for the workers
        yield from pa.Table.from_batches(list(batches), schema).sort_by("seq").to_batches()

    return df.repartitionByRange(3, "seq").mapInArrow(sorted_by_seq, df.schema).drop("seq")


def _start(spark: Any, src: Path, name: str, checkpoint: Path) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    stream = (
        spark.readStream.schema(from_arrow_schema(CHANGES)).option("maxFilesPerTrigger", 2).parquet(str(src))
    )
    return (
        _ordered(stream)
        .writeStream.format("icefloe")
        .option("upsert-enabled", "true")
        .option("delete-column", "op")
        .option("checkpointLocation", str(checkpoint))
        .start(f"local.{name}")
    )


def _run(query: Any) -> None:
    try:
        query.processAllAvailable()
    finally:
        query.stop()


def test_streaming_upsert_keeps_the_last_change_of_each_key_and_commits_each_batch_once(
    source: Any, oracle: Oracle, catalog: Any, tmp_path: Path
) -> None:
    spark = source
    rng = random.Random(int(os.environ.get("ICEFLOE_UPSERT_SEED", "15")))
    name = _java_table(oracle, identifier=True)
    src = tmp_path / "changes"
    src.mkdir()
    changes: list[dict[str, Any]] = []
    for f in range(6):  # 3 micro-batches of 2 files
        part = _changes(rng, len(changes), 300, keys=160)
        changes.extend(part)
        path = src / f"part-{f:03d}.parquet"
        pq.write_table(pa.Table.from_pylist(part, CHANGES), path)
        os.utime(path, (1_700_000_000 + f, 1_700_000_000 + f))  # the file source's order
    checkpoint = tmp_path / "checkpoint"
    _run(_start(spark, src, name, checkpoint))

    expected = _model(100, changes)
    assert _java_rows(oracle, name) == expected
    assert _icefloe_rows(catalog, name) == expected
    snaps = oracle.snapshots(name)[1:]  # after Java's insert
    assert [s["summary"][BATCH_ID_KEY] for s in snaps] == ["0", "1", "2"]
    assert {s["summary"][QUERY_ID_KEY] for s in snaps} == {str(checkpoint)}
    assert all(int(s["summary"]["added-equality-deletes"]) > 0 for s in snaps)
    deletes = [f for f in oracle.files(name) if f["content"] == 2]
    assert deletes and all(f["equality_ids"] == [1] for f in deletes)

    # Spark replays the last batch (its commit mark lost): the sink finds it in the history,
    # commits nothing and deletes the files the replay wrote.
    on_disk = _data_files_on_disk(catalog, name)
    for mark in ("2", ".2.crc"):
        (checkpoint / "commits" / mark).unlink(missing_ok=True)
    _run(_start(spark, src, name, checkpoint))
    assert len(oracle.snapshots(name)) == 4
    assert _java_rows(oracle, name) == expected
    assert _data_files_on_disk(catalog, name) == on_disk

    # Java writes on top; the next batch upserts over Java's rows too.
    q = oracle.qualified(name)
    oracle.sql(f"INSERT INTO {q} VALUES (1000, 'r1', 1), (1001, 'r2', 2)")
    more = [
        {"seq": len(changes), "id": 1000, "region": "r1", "v": 7, "op": "U"},
        {"seq": len(changes) + 1, "id": 1001, "region": "r2", "v": 0, "op": "D"},
    ]
    path = src / "part-006.parquet"
    pq.write_table(pa.Table.from_pylist(more, CHANGES), path)
    os.utime(path, (1_700_000_010, 1_700_000_010))
    _run(_start(spark, src, name, checkpoint))
    expected = sorted([*expected, (1000, "r1", 7)])
    assert _java_rows(oracle, name) == expected
    assert _icefloe_rows(catalog, name) == expected


def test_batch_upsert_by_composite_key_with_duplicates_across_tasks(
    source: Any, oracle: Oracle, catalog: Any
) -> None:
    spark = source
    rng = random.Random(7)
    name = _java_table(oracle, initial=50)
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} SET TBLPROPERTIES ('write.merge.mode'='copy-on-write')")
    changes = _changes(rng, 0, 400, keys=80)
    df = _ordered(spark.createDataFrame(pa.Table.from_pylist(changes, CHANGES).to_pandas()))
    (
        df.write.format("icefloe")
        .mode("append")
        .option("upsert-enabled", "true")
        .option("key-columns", "id, region")
        .option("delete-column", "op")
        .save(f"local.{name}")
    )
    expected = _model(50, changes, key=("id", "region"))
    assert _java_rows(oracle, name) == expected
    assert _icefloe_rows(catalog, name) == expected
    last = oracle.snapshots(name)[-1]
    assert last["operation"] == "overwrite"
    assert {tuple(f["equality_ids"]) for f in oracle.files(name) if f["content"] == 2} == {(1, 2)}


def test_bad_upsert_writes_are_clear_errors_and_leave_nothing(
    source: Any, oracle: Oracle, catalog: Any, tmp_path: Path
) -> None:
    spark = source
    name = _java_table(oracle, initial=0)
    rows = spark.createDataFrame([(1, "r1", 1, "I")], "id bigint, region string, v bigint, op string")

    def write(df: Any, mode: str = "append", **options: str) -> None:
        w = df.write.format("icefloe").mode(mode)
        for k, v in options.items():
            w = w.option(k, v)
        w.save(f"local.{name}")

    with pytest.raises(Exception, match="'key-columns' needs option"):
        write(rows.drop("op"), **{"key-columns": "id"})
    with pytest.raises(Exception, match="'upsert-enabled' needs mode"):
        write(rows.drop("op"), "overwrite", **{"upsert-enabled": "true", "key-columns": "id"})
    with pytest.raises(Exception, match="identifier fields"):
        write(rows.drop("op"), **{"upsert-enabled": "true"})
    with pytest.raises(Exception, match="join column 'nope'"):
        write(rows.drop("op"), **{"upsert-enabled": "true", "key-columns": "nope"})
    with pytest.raises(Exception, match="delete-column 'gone'"):
        write(rows.drop("op"), **{"upsert-enabled": "true", "key-columns": "id", "delete-column": "gone"})
    with pytest.raises(Exception, match="must be a boolean or string"):
        write(
            rows.drop("op").withColumn("flag", rows.id),
            **{"upsert-enabled": "true", "key-columns": "id", "delete-column": "flag"},
        )
    with pytest.raises(Exception, match="op"):  # not a column of the table, and not the delete column
        write(rows, **{"upsert-enabled": "true", "key-columns": "id"})
    v1 = _java_table(oracle, version=1, initial=0)
    with pytest.raises(Exception, match="format version 2"):
        rows.drop("op").write.format("icefloe").mode("append").option("upsert-enabled", "true").option(
            "key-columns", "id"
        ).save(f"local.{v1}")
    assert oracle.snapshot_ids(name) == [] and oracle.snapshot_ids(v1) == []
    assert _data_files_on_disk(catalog, name) == set()


def test_a_failed_upsert_task_commits_nothing_and_leaves_no_file(
    source: Any, oracle: Oracle, catalog: Any
) -> None:
    from pyspark.sql import functions as F

    spark = source
    name = _java_table(oracle, initial=10, identifier=True)
    snaps = oracle.snapshot_ids(name)
    before = _data_files_on_disk(catalog, name)
    # Four tasks; the one holding id 3999 fails after the others wrote their files.
    bad = spark.range(0, 4000, 1, 4).select(
        F.when(F.col("id") == 3999, F.raise_error(F.lit("boom")))
        .otherwise(F.col("id"))
        .cast("bigint")
        .alias("id"),
        F.lit("r1").alias("region"),
        F.col("id").alias("v"),
    )
    with pytest.raises(Exception, match="boom"):
        bad.write.format("icefloe").mode("append").option("upsert-enabled", "true").save(f"local.{name}")
    assert oracle.snapshot_ids(name) == snaps
    assert _data_files_on_disk(catalog, name) == before


def test_a_delete_column_the_table_has_is_written_on_kept_rows(source: Any, oracle: Oracle) -> None:
    """`delete-column` naming a column of the table: marked rows delete their key, the others
    keep the column's value (it was written as null)."""
    name = new_table_name("upsert_opcol")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, v bigint, op string) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1, 10, 'I'), (2, 20, 'I'), (3, 30, 'I')")
    rows = source.createDataFrame([(1, 11, "U"), (2, 0, "D"), (4, 40, "I")], "id bigint, v bigint, op string")
    (
        rows.write.format("icefloe")
        .mode("append")
        .option("upsert-enabled", "true")
        .option("key-columns", "id")
        .option("delete-column", "op")
        .save(f"local.{name}")
    )
    got = sorted(tuple(r) for r in oracle.df(name).collect())
    assert got == [(1, 11, "U"), (3, 30, "I"), (4, 40, "I")], got
