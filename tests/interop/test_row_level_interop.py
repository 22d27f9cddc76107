"""Row-level changes written by icefloe, checked by Apache Iceberg Java (the oracle).

Twin tables: the same rows are written by Java into two tables; each step runs as Java's
Spark SQL (`DELETE FROM` / `UPDATE` with merge-on-read modes) on one and through icefloe on
the other. After every step both engines read both tables and get the same rows, Java's
`position_deletes` / `delete_files` metadata tables show on our table the positions and
files Java wrote on its own, and the snapshot summaries agree. Equality-delete upserts (which
Spark SQL cannot write) are checked against a dict model read back by Java.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR_PROPS = (
    "'format-version'='2', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
)
PARTITIONINGS = {
    "unpartitioned": "",
    "identity": "PARTITIONED BY (region)",
    "bucket": "PARTITIONED BY (bucket(4, id))",
    "day": "PARTITIONED BY (days(ts))",
}
# Summary keys that must be equal for the same change on the same rows (sizes differ by writer).
SUMMARY_KEYS = (
    "added-position-deletes",
    "added-position-delete-files",
    "added-delete-files",
    "added-data-files",
    "added-records",
    "deleted-data-files",
    "deleted-records",
    "changed-partition-count",
    "total-position-deletes",
    "total-delete-files",
    "total-data-files",
    "total-records",
    "total-equality-deletes",
)


def _create_twins(spark: Any, oracle: Oracle, partitioning: str) -> tuple[str, str]:
    java, ours = new_table_name("rl_java"), new_table_name("rl_ours")
    src = spark.sql(
        "SELECT id, CASE WHEN id % 3 = 0 THEN 'eu' WHEN id % 3 = 1 THEN 'us' ELSE 'ap' END AS region, "
        "CAST(id AS DOUBLE) * 1.5 AS amount, "
        "CAST(TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 5 AS INT)) AS TIMESTAMP) "
        "AS ts "
        "FROM range(0, 600)"
    )
    for name in (java, ours):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING, amount DOUBLE, ts TIMESTAMP) "
            f"USING iceberg {PARTITIONINGS[partitioning]} TBLPROPERTIES ({MOR_PROPS})"
        )
        # One task with the same input order: both tables get the same data files.
        src.coalesce(1).sortWithinPartitions("id").writeTo(oracle.qualified(name)).append()
    return java, ours


def _summary(oracle: Oracle, name: str) -> dict[str, Any]:
    snap = oracle.snapshots(name)[-1]
    summary = snap["summary"]
    return {"operation": snap["operation"], **{k: summary.get(k) for k in SUMMARY_KEYS}}


def _positions_per_file(oracle: Oracle, name: str) -> list[tuple[int, ...]]:
    rows = oracle.sql(f"SELECT file_path, pos FROM {oracle.qualified(name)}.position_deletes")
    by_file: dict[str, list[int]] = {}
    for r in rows:
        by_file.setdefault(r["file_path"], []).append(r["pos"])
    return sorted(tuple(sorted(v)) for v in by_file.values())


def _delete_files(oracle: Oracle, name: str) -> list[tuple[int, int, str]]:
    rows = oracle.sql(f"SELECT content, record_count, file_format FROM {oracle.qualified(name)}.delete_files")
    return sorted((r["content"], r["record_count"], r["file_format"]) for r in rows)


def _assert_twins(spark: Any, oracle: Oracle, catalog: Any, java: str, ours: str, step: str) -> None:
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours after {step}")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ours {step}")
    assert_same_rows(catalog.load_table(java).scan().to_arrow(), expected, context=f"icefloe Java's {step}")
    assert _summary(oracle, ours) == _summary(oracle, java), step
    assert _positions_per_file(oracle, ours) == _positions_per_file(oracle, java), step
    assert _delete_files(oracle, ours) == _delete_files(oracle, java), step


@pytest.mark.parametrize("partitioning", list(PARTITIONINGS))
def test_twin_tables_delete_and_update_merge_on_read(
    spark: Any, oracle: Oracle, catalog: Any, partitioning: str
) -> None:
    import pyarrow.compute as pc

    java, ours = _create_twins(spark, oracle, partitioning)
    table = catalog.load_table(ours)

    # 1. a scattered delete
    scattered = "id IN (" + ", ".join(str(i) for i in range(3, 600, 7)) + ") AND amount < 600"
    oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE {scattered}")
    table.delete(scattered.replace("AND", "and"))
    _assert_twins(spark, oracle, catalog, java, ours, "delete 1")

    # 2. an overlapping delete: already-deleted rows are not deleted again
    oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE id >= 100 AND id < 140")
    table.refresh().delete("id >= 100 and id < 140")
    _assert_twins(spark, oracle, catalog, java, ours, "delete 2")

    # 3. an update (merge-on-read: new rows + position deletes)
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET amount = amount * 2 WHERE region = 'us' AND id < 300")
    table.refresh().update("region = 'us' and id < 300", {"amount": pc.field("amount") * 2})
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context="update")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context="icefloe update")
    s_ours, s_java = _summary(oracle, ours), _summary(oracle, java)
    for k in (
        "operation",
        "added-position-deletes",
        "added-records",
        "total-records",
        "total-position-deletes",
    ):
        assert s_ours[k] == s_java[k], (k, s_ours, s_java)

    # 4. a delete by icefloe on the table Java's deletes are on (mixed writers)
    catalog.load_table(java).delete("amount > 800")
    assert_same_rows(catalog.load_table(java).scan().to_arrow(), oracle.df(java), context="mixed")
    assert oracle.df(java).where("amount > 800").count() == 0


def test_java_reads_equality_delete_upserts(spark: Any, oracle: Oracle, catalog: Any) -> None:
    import random

    name = new_table_name("rl_upsert")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id BIGINT NOT NULL, region STRING NOT NULL, amount DOUBLE) "
        f"USING iceberg PARTITIONED BY (region) TBLPROPERTIES ({MOR_PROPS})"
    )
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} SET IDENTIFIER FIELDS id, region")
    table = catalog.load_table(name)
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("region", pa.string(), nullable=False),
            pa.field("amount", pa.float64()),
        ]
    )
    rng = random.Random(11)
    model: dict[tuple[int, str], float] = {}
    for step in range(40):
        keys = [(rng.randrange(0, 60), rng.choice(["eu", "us"])) for _ in range(rng.randrange(1, 10))]
        amounts = [float(step * 100 + j) for j in range(len(keys))]
        data = pa.table(
            {"id": [k[0] for k in keys], "region": [k[1] for k in keys], "amount": amounts}, schema=schema
        )
        table.upsert(data)
        model.update(zip(keys, amounts))
        if step % 10 == 9:
            # Java deletes some rows by SQL (position deletes) between our upserts.
            oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id < 5")
            model = {k: v for k, v in model.items() if k[0] >= 5}
            table.refresh()
    got = {(r["id"], r["region"]): r["amount"] for r in oracle.df(name).collect()}
    assert got == model
    ours = {(r["id"], r["region"]): r["amount"] for r in table.scan().to_arrow().to_pylist()}
    assert ours == model
    eq = oracle.sql(f"SELECT equality_ids FROM {oracle.qualified(name)}.delete_files WHERE content = 2")
    assert eq and all(list(r["equality_ids"]) == [1, 2] for r in eq)
    snap = oracle.snapshots(name)
    assert any(s["summary"].get("added-equality-deletes") for s in snap)


def test_upsert_keyed_off_the_partition_column_twins_javas_merge(
    spark: Any, oracle: Oracle, catalog: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """A merge-on-read table partitioned by `region`, upserted on `id` alone: equality deletes
    cannot reach rows of another partition, so the upsert rewrites those files in process and
    runs a MERGE (position deletes) on Spark, logged, not refused; Java's `MERGE INTO ...
    UPDATE SET * / INSERT *` on the twin gives the same rows, and each engine reads the
    other's table."""
    java, ours = _create_twins(spark, oracle, "identity")
    # Keys that move rows between partitions (id 3 was 'eu'), update in place, and insert.
    source = pa.table(
        {
            "id": pa.array([3, 4, 7, 1000, 1001], pa.int64()),
            "region": ["us", "us", "ap", "eu", "ap"],
            "amount": [-3.0, -4.0, -7.0, 1.0, 2.0],
            "ts": pa.array([None] * 5, pa.timestamp("us", tz="UTC")),
        }
    )
    spark.createDataFrame(source.to_pandas()).createOrReplaceTempView("upsert_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING upsert_src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    with caplog.at_level("WARNING", logger="icefloe"):
        result = catalog.load_table(ours).upsert(source, join_cols=["id"])
    assert "rewrites the files holding its keys" in caplog.text
    assert (result.rows_updated, result.rows_inserted) == (3, 2)
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context="Java reads ours")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context="icefloe reads ours")
    assert_same_rows(catalog.load_table(java).scan().to_arrow(), expected, context="icefloe reads Java's")

    # Then on Spark: icefloe.spark.upsert takes the same way.
    import icefloe.spark

    again = source.set_column(2, "amount", pa.array([30.0, 40.0, 70.0, 10.0, 20.0]))
    again = pa.concat_tables([again, source.slice(0, 1).set_column(0, "id", pa.array([11], pa.int64()))])
    spark.createDataFrame(again.to_pandas()).createOrReplaceTempView("upsert_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING upsert_src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    caplog.clear()
    with caplog.at_level("WARNING", logger="icefloe"):
        icefloe.spark.upsert(spark.table("upsert_src"), catalog.load_table(ours), join_cols=["id"])
    assert "runs as a MERGE (position deletes)" in caplog.text
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context="Java reads ours after the Spark upsert")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context="icefloe, Spark upsert")
    contents = {
        r["content"] for r in oracle.sql(f"SELECT content FROM {oracle.qualified(ours)}.delete_files")
    }
    assert contents == {1}, "position deletes only"


@pytest.mark.parametrize("partitioning", ["unpartitioned", "bucket"])
def test_spark_delete_merge_on_read_matches_java(
    spark: Any, oracle: Oracle, catalog: Any, partitioning: str
) -> None:
    import icefloe.spark

    java, ours = _create_twins(spark, oracle, partitioning)
    for step, cond in enumerate(["id >= 50 AND id < 250", "region = 'eu' AND amount > 100", "id < 60"]):
        oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE {cond}")
        icefloe.spark.delete(spark, catalog.load_table(ours), cond.replace("AND", "and"))
        _assert_twins(spark, oracle, catalog, java, ours, f"spark delete {step}")
        assert_same_rows(
            icefloe.spark.read(spark, catalog.load_table(ours)), oracle.df(java), context="spark read"
        )


@pytest.mark.parametrize("partitioning", ["", "PARTITIONED BY (x)"])
def test_copy_on_write_keeps_rows_whose_column_is_null_as_java(
    spark: Any, oracle: Oracle, catalog: Any, partitioning: str
) -> None:
    """A file (or partition) holding only a null and values outside the condition's literals:
    `x != 42` and `x NOT IN (42, 43)` do not match its null row (SQL), so a copy-on-write
    change must rewrite the file, not drop it whole. Java's UPDATE and NOT IN DELETE keep the
    row; icefloe's delete, update, overwrite and icefloe.spark.update did drop it (the strict
    metrics proof takes a null as matching `!=`, as Java's evaluator does)."""
    import icefloe.spark
    import pyarrow.compute as pc

    cow = "'format-version'='2', 'write.delete.mode'='copy-on-write', 'write.update.mode'='copy-on-write'"

    def twins() -> tuple[str, str]:
        java, ours = new_table_name("cow_null_java"), new_table_name("cow_null_ours")
        for name in (java, ours):
            q = oracle.qualified(name)
            oracle.sql(
                f"CREATE TABLE {q} (id BIGINT, x INT) USING iceberg {partitioning} TBLPROPERTIES ({cow})"
            )
            oracle.sql(f"INSERT INTO {q} VALUES (1, 42)")
            oracle.sql(f"INSERT INTO {q} VALUES (2, 7), (3, NULL)")
        return java, ours

    def same(java: str, ours: str, step: str) -> None:
        expected = oracle.df(java)
        assert sorted(r.id for r in expected.collect()) == ([1, 2, 3] if "update" in step else [1, 3]), step
        assert_same_rows(oracle.df(ours), expected, context=step)
        assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=step)

    java, ours = twins()
    oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE x NOT IN (42, 43)")
    catalog.load_table(ours).delete("x not in (42, 43)")
    same(java, ours, "delete")

    java, ours = twins()
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET x = 0 WHERE x != 42")
    catalog.load_table(ours).update("x != 42", {"x": pc.scalar(pa.scalar(0, pa.int32()))})
    same(java, ours, "update")

    java, ours = twins()
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET x = 0 WHERE x NOT IN (42, 43)")
    icefloe.spark.update(spark, catalog.load_table(ours), "x not in (42, 43)", {"x": "0"})
    same(java, ours, "spark update")

    # An overwrite by the same filter keeps the null row too (Java's DELETE's rows + the new).
    java, ours = twins()
    oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE x NOT IN (42, 43)")
    oracle.sql(f"INSERT INTO {oracle.qualified(java)} VALUES (9, 1)")
    new = pa.table({"id": pa.array([9], pa.int64()), "x": pa.array([1], pa.int32())})
    catalog.load_table(ours).overwrite(new, overwrite_filter="x not in (42, 43)")
    assert_same_rows(oracle.df(ours), oracle.df(java), context="overwrite")


def test_removing_a_data_file_removes_its_deletion_vector_as_java(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """v3: a copy-on-write delete that removes a data file carrying a deletion vector removes
    the vector in the same snapshot (Java's `danglingDVs`); it stayed live, pointing at a file
    no longer in the table, and kept its Puffin file referenced."""
    java, ours = new_table_name("dv_java"), new_table_name("dv_ours")
    props = "'format-version'='3', 'write.delete.mode'='merge-on-read'"
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} (id BIGINT, g STRING) USING iceberg TBLPROPERTIES ({props})")
        oracle.sql(f"INSERT INTO {q} VALUES (1, 'a'), (2, 'a'), (3, 'a')")
        oracle.sql(f"INSERT INTO {q} VALUES (4, 'b'), (5, 'b')")
        oracle.sql(f"DELETE FROM {q} WHERE id = 2")  # a DV on the first file
        oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('write.delete.mode'='copy-on-write')")
    oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE g = 'a'")
    catalog.load_table(ours).delete("g = 'a'")
    assert_same_rows(oracle.df(ours), oracle.df(java), context="rows")
    for key in ("removed-dvs", "removed-delete-files", "total-delete-files", "deleted-data-files"):
        assert _summary_value(oracle, ours, key) == _summary_value(oracle, java, key), key
    assert _summary_value(oracle, ours, "removed-dvs") == "1"
    assert oracle.sql(f"SELECT count(*) AS n FROM {oracle.qualified(ours)}.delete_files")[0]["n"] == 0


def _summary_value(oracle: Oracle, name: str, key: str) -> Any:
    return oracle.snapshots(name)[-1]["summary"].get(key)
