"""Merge-on-read tables written by Apache Iceberg Java, read by icefloe.

Position deletes come from Spark SQL (`DELETE`, `UPDATE`, `MERGE INTO` with merge-on-read
modes); equality deletes are committed through the Java API the way Flink's upsert writer does
(`GenericFileWriterFactory.newEqualityDeleteWriter` + `newRowDelta().addDeletes`). For every snapshot,
icefloe in process (`scan().to_arrow()`) and on Spark (`icefloe.spark.read`) must return exactly
the rows Iceberg Java returns.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from icefloe.exceptions import InvalidDataError, NotFoundError
from support.java_commits import commit_eq_delete
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = (
    "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
    "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
)


def _assert_every_snapshot(
    spark: Any, oracle: Oracle, catalog: Any, name: str, spark_too: bool = True
) -> None:
    import icefloe.spark

    table = catalog.load_table(name)
    for snap in oracle.snapshot_ids(name):
        expected = oracle.df(name, snap)
        assert_same_rows(table.scan(snapshot_id=snap).to_arrow(), expected, context=f"{name}@{snap}")
        if spark_too:
            got = icefloe.spark.read(spark, table, snapshot_id=snap)
            assert_same_rows(got, expected, context=f"spark {name}@{snap}")
        # counts apply the deletes too: scan.count(), an empty projection, and on Spark
        n = expected.count()
        assert table.scan(snapshot_id=snap).count() == n, f"count() {name}@{snap}"
        empty = table.scan(selected_fields=(), snapshot_id=snap).to_arrow()
        assert (empty.num_columns, empty.num_rows) == (0, n), f"empty projection {name}@{snap}"
        if spark_too:
            rows_only = icefloe.spark.read(spark, table, selected_fields=(), snapshot_id=snap)
            assert rows_only.columns == []
            assert rows_only.count() == n, f"spark count {name}@{snap}"


# ------------------------------------------------------------------------------------------------
# position deletes (Spark SQL merge-on-read)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("partitioned", [False, True])
def test_position_deletes_delete_update_merge(
    spark: Any, oracle: Oracle, catalog: Any, partitioned: bool, monkeypatch: Any
) -> None:
    name = new_table_name("mor_pos")
    q = oracle.qualified(name)
    part = "PARTITIONED BY (category)" if partitioned else ""
    oracle.sql(f"CREATE TABLE {q} (id bigint, category string, amount double) USING iceberg {part} {MOR}")
    rows = ", ".join(f"({i}, '{'abc'[i % 3]}', {i * 1.5})" for i in range(1, 41))
    oracle.sql(f"INSERT INTO {q} VALUES {rows}")
    oracle.sql(f"INSERT INTO {q} VALUES (41, null, null), (42, 'a', 0.0)")
    oracle.sql(f"DELETE FROM {q} WHERE id % 5 = 0")
    oracle.sql(f"UPDATE {q} SET amount = -amount WHERE id % 7 = 0")
    oracle.sql(
        f"MERGE INTO {q} t USING (SELECT id, 'c' AS category, 99.0 AS amount FROM range(35, 50)) s "
        "ON t.id = s.id WHEN MATCHED AND t.id % 2 = 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET t.amount = s.amount WHEN NOT MATCHED THEN INSERT *"
    )
    oracle.sql(f"DELETE FROM {q} WHERE category IS NULL OR id = 3")
    files = oracle.files(name)
    assert any(f["content"] == 1 for f in files), "the oracle wrote no position deletes"
    _assert_every_snapshot(spark, oracle, catalog, name)
    # projection and _pos-free reads with a filter still apply the deletes
    table = catalog.load_table(name)
    assert_same_rows(table.scan(selected_fields=("id",)).to_arrow(), oracle.df(name, columns=["id"]))
    # a filtered count reads the filter's column and still applies the deletes
    import icefloe.spark

    where = "amount > 10"
    n = oracle.df(name, where=where).count()
    assert table.scan(row_filter=where).count() == n
    assert icefloe.spark.read(spark, table, row_filter=where, selected_fields=()).count() == n
    # on Spark an empty projection's rows travel as counts of at most COUNT_CHUNK rows: with a
    # small chunk every snapshot has several full chunks and most a remainder
    monkeypatch.setattr(importlib.import_module("icefloe.spark.read"), "COUNT_CHUNK", 4)
    for snap in oracle.snapshot_ids(name):
        n = oracle.df(name, snap).count()
        assert n > 8
        got = icefloe.spark.read(spark, table, selected_fields=(), snapshot_id=snap)
        assert got.columns == [] and got.count() == n, f"chunked count @{snap}"


# ------------------------------------------------------------------------------------------------
# equality deletes (Java API, as Flink's upsert writer)
# ------------------------------------------------------------------------------------------------


def _eq_delete(
    oracle: Oracle,
    name: str,
    columns: list[str],
    keys: list[tuple[Any, ...]],
    spec_id: int | None = None,
    partition: dict[str, Any] | None = None,
) -> None:
    commit_eq_delete(oracle.warehouse, name, columns, keys, spec_id, partition)


def test_equality_deletes_primary_key_upserts(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """Unpartitioned v2 table keyed by id: several eq-delete files over several snapshots,
    re-inserts of deleted keys (newer data survives older deletes), a null key."""
    name = new_table_name("mor_eq")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, name string, v int) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(
        f"INSERT INTO {q} VALUES "
        + ", ".join(f"({i}, 'n{i}', {i})" for i in range(1, 21))
        + ", (null, 'nul', 0)"
    )
    _eq_delete(oracle, name, ["id"], [(3,), (5,), (7,), (999,)])
    # upsert: delete key 5 again and re-insert it in a later snapshot
    oracle.sql(f"INSERT INTO {q} VALUES (5, 'n5-new', 50), (21, 'n21', 21)")
    _eq_delete(oracle, name, ["id"], [(None,), (11,)])
    _eq_delete(oracle, name, ["id"], [(21,), (12,)])
    oracle.sql(f"INSERT INTO {q} VALUES (null, 'nul-new', 1), (3, 'n3-new', 30)")
    assert sum(1 for f in oracle.files(name) if f["content"] == 2) == 3
    _assert_every_snapshot(spark, oracle, catalog, name)
    # key column not projected: read for the join, then dropped
    table = catalog.load_table(name)
    assert_same_rows(table.scan(selected_fields=("name",)).to_arrow(), oracle.df(name, columns=["name"]))


def test_equality_deletes_two_key_columns_with_nulls(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("mor_eq2")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (a int, b string, v double) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(
        f"INSERT INTO {q} VALUES (1, 'x', 1.0), (1, 'y', 2.0), (2, 'x', 3.0), (null, 'x', 4.0), "
        "(2, null, 5.0), (null, null, 6.0), (3, 'z', 7.0)"
    )
    _eq_delete(oracle, name, ["a", "b"], [(1, "y"), (None, "x"), (None, None), (3, "x")])
    _assert_every_snapshot(spark, oracle, catalog, name, spark_too=False)


def test_equality_deletes_partition_scoped_and_global_with_partition_evolution(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Spec 0 unpartitioned, then partitioned by category (spec 1): eq deletes written in a
    partition of spec 1 apply only there; eq deletes of spec 0 (unpartitioned) apply globally."""
    name = new_table_name("mor_eqp")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, category string, v int) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a', 1), (2, 'b', 2), (3, 'a', 3)")
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD category")
    oracle.sql(f"INSERT INTO {q} VALUES (4, 'a', 4), (5, 'b', 5), (1, 'b', 10), (2, 'a', 20)")
    # scoped to partition category=a of spec 1: deletes id 4 and id 2 there (not in b, not spec 0 files)
    _eq_delete(oracle, name, ["id"], [(4,), (2,), (1,)], partition={"category": "a"})
    # global (spec 0 unpartitioned): id 5 and 3 everywhere
    _eq_delete(oracle, name, ["id"], [(5,), (3,)], spec_id=0)
    oracle.sql(f"INSERT INTO {q} VALUES (5, 'b', 55)")
    _assert_every_snapshot(spark, oracle, catalog, name)


# ------------------------------------------------------------------------------------------------
# schema evolution between snapshots, with deletes
# ------------------------------------------------------------------------------------------------


def test_schema_evolution_with_position_and_equality_deletes(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = new_table_name("mor_evo")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id int, name string, price float, gone string) USING iceberg {MOR}")
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'a', 1.5, 'g1'), (2, 'b', 2.5, 'g2'), (3, 'c', 3.5, 'g3')")
    oracle.sql(f"DELETE FROM {q} WHERE id = 2")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN note string")
    oracle.sql(f"ALTER TABLE {q} RENAME COLUMN name TO full_name")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN id TYPE bigint")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN price TYPE double")
    oracle.sql(f"ALTER TABLE {q} DROP COLUMN gone")
    oracle.sql(f"INSERT INTO {q} VALUES (3000000000, 'big', 9.25, 'new'), (4, 'd', 4.5, null)")
    _eq_delete(oracle, name, ["id"], [(1,), (4,)])
    oracle.sql(f"UPDATE {q} SET note = 'upd' WHERE id = 3")
    _assert_every_snapshot(spark, oracle, catalog, name)


# ------------------------------------------------------------------------------------------------
# a damaged delete file fails the read, naming the file
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("damage", ["missing position deletes", "corrupt equality deletes"])
def test_a_damaged_delete_file_fails_every_read_naming_it(
    spark: Any, oracle: Oracle, catalog: Any, damage: str
) -> None:
    """Never a result that silently keeps deleted rows: in process (to_arrow, to_batches,
    count) and on Spark, the read fails and the error names the delete file. Each case has
    its own table, so no earlier read has the file in a delete cache."""
    import icefloe.spark

    name = new_table_name("mor_bad")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, v string) USING iceberg {MOR}")
    oracle.sql(f"INSERT INTO {q} VALUES " + ", ".join(f"({i}, 'v{i}')" for i in range(20)))
    oracle.sql(f"DELETE FROM {q} WHERE id % 4 = 1")
    _eq_delete(oracle, name, ["id"], [(2,), (6,)])
    assert oracle.df(name).count() == 13
    content = 1 if damage.startswith("missing") else 2
    victim = next(f["file_path"] for f in oracle.files(name) if f["content"] == content)
    path = Path(victim.removeprefix("file:"))
    if content == 1:
        path.unlink()
    else:
        path.write_bytes(b"PAR1 this is not a parquet file PAR1")

    table = catalog.load_table(name)
    expected = NotFoundError if content == 1 else InvalidDataError
    in_process = {
        "to_arrow": lambda: table.scan().to_arrow(),
        "to_batches": lambda: table.scan().to_batches().read_all(),
        "count": lambda: table.scan().count(),
    }
    for what, read in in_process.items():
        with pytest.raises(expected) as info:
            read()
        assert path.name in str(info.value), f"{what}: {info.value}"
    on_spark = {
        "spark": lambda: icefloe.spark.read(spark, table).collect(),
        "spark count": lambda: icefloe.spark.read(spark, table, selected_fields=()).count(),
    }
    for what, read in on_spark.items():
        with pytest.raises(Exception) as info:  # the worker's error, raised by PySpark
            read()
        message = str(info.value)
        assert expected.__name__ in message and path.name in message, f"{what}: {message[-2000:]}"
