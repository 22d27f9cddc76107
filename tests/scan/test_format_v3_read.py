"""Format v3 tables written by Iceberg Java (the oracle), read by icefloe: deletion vectors
(Puffin `deletion-vector-v1` blobs, merged by Java on every further delete), v2 position
deletes an upgrade left behind, and row lineage (`_row_id`, `_last_updated_sequence_number`).
Every snapshot reads the rows Java reads, in process and on Spark; a corrupt deletion vector
is an error naming its file, never fewer deletes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from icefloe.exceptions import IcefloeError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)
LINEAGE = ("id", "data", "_row_id", "_last_updated_sequence_number")


def _assert_every_snapshot(spark: Any, oracle: Oracle, catalog: Any, name: str, lineage: bool) -> None:
    import icefloe.spark

    table = catalog.load_table(name)
    ids = oracle.snapshot_ids(name)
    assert len(ids) >= 4
    for sid in ids:
        ctx = f"{name} at snapshot {sid}"
        expected = oracle.df(name, snapshot_id=sid, columns=("id", "data"))
        ours = table.scan(snapshot_id=sid, selected_fields=("id", "data")).to_arrow()
        assert_same_rows(ours, expected, context=f"icefloe in process, {ctx}")
        on_spark = icefloe.spark.read(spark, table, snapshot_id=sid, selected_fields=("id", "data"))
        assert_same_rows(on_spark, expected, context=f"icefloe on Spark, {ctx}")
        if lineage:
            java = oracle.df(name, snapshot_id=sid, columns=LINEAGE)
            mine = table.scan(snapshot_id=sid, selected_fields=LINEAGE).to_arrow()
            assert_same_rows(mine, java, context=f"row lineage, {ctx}")


@pytest.mark.parametrize("partitioning", ["", "PARTITIONED BY (bucket(4, id))"])
def test_java_v3_deletion_vectors_and_row_lineage_read_as_java_reads_them(
    spark: Any, oracle: Oracle, catalog: Any, partitioning: str
) -> None:
    name = new_table_name("v3_java")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg {partitioning} "
        f"TBLPROPERTIES ('format-version'='3', {MOR})"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 2000)")
    oracle.sql(f"INSERT INTO {q} SELECT id, 'second' FROM range(2000, 2500)")
    oracle.sql(f"DELETE FROM {q} WHERE id % 10 = 0")
    # A further delete on the same files: Java merges each file's DV into a new one.
    oracle.sql(f"DELETE FROM {q} WHERE id % 10 = 1 OR id BETWEEN 600 AND 700")
    oracle.sql(f"UPDATE {q} SET data = 'updated' WHERE id % 7 = 0")
    spark.createDataFrame(
        [(i, f"merged {i}") for i in range(2400, 2600, 3)], "id bigint, data string"
    ).createOrReplaceTempView("v3_src")
    oracle.sql(
        f"MERGE INTO {q} t USING v3_src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET data = s.data WHEN NOT MATCHED THEN INSERT *"
    )
    files = oracle.sql(f"SELECT file_format, referenced_data_file FROM {q}.delete_files")
    assert files and {r["file_format"] for r in files} == {"PUFFIN"}
    table = catalog.load_table(name)
    assert table.format_version == 3
    _assert_every_snapshot(spark, oracle, catalog, name, lineage=True)
    # Row lineage on Spark too (the current snapshot).
    import icefloe.spark

    on_spark = icefloe.spark.read(spark, table, selected_fields=LINEAGE)
    assert_same_rows(on_spark, oracle.df(name, columns=LINEAGE), context="row lineage on Spark")


def test_v2_position_deletes_still_apply_after_an_upgrade_to_v3(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Position delete files written before the upgrade keep applying until a DV replaces
    them (Java merges them into the DV of the file's next delete)."""
    name = new_table_name("v3_upgraded")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg PARTITIONED BY (bucket(2, id)) "
        f"TBLPROPERTIES ('format-version'='2', {MOR})"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 1000)")
    oracle.sql(f"DELETE FROM {q} WHERE id % 5 = 0")
    oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('format-version'='3')")
    oracle.sql(f"INSERT INTO {q} SELECT id, 'after' FROM range(1000, 1200)")
    # Touches only some files: the others keep their v2 position deletes.
    oracle.sql(f"DELETE FROM {q} WHERE id IN (1, 2, 3, 1001)")
    formats = {r["file_format"] for r in oracle.sql(f"SELECT file_format FROM {q}.delete_files")}
    assert formats == {"PARQUET", "PUFFIN"} or formats == {"PUFFIN"}
    _assert_every_snapshot(spark, oracle, catalog, name, lineage=True)


def test_a_corrupt_deletion_vector_is_an_error_naming_its_file(oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("v3_corrupt")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg TBLPROPERTIES ('format-version'='3', {MOR})"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 100)")
    oracle.sql(f"DELETE FROM {q} WHERE id < 10")
    (dv,) = oracle.sql(f"SELECT file_path, content_offset, content_size_in_bytes FROM {q}.delete_files")
    path = Path(dv["file_path"].removeprefix("file:"))
    original = path.read_bytes()
    offset, size = dv["content_offset"], dv["content_size_in_bytes"]
    # (Read only after each corruption: a DV read once stays cached in this process.)
    for label, broken in [
        ("bad CRC", original[: offset + 9] + bytes([original[offset + 9] ^ 0x10]) + original[offset + 10 :]),
        ("bad length", original[:offset] + b"\x7f" + original[offset + 1 :]),
        ("truncated", original[: offset + size // 2]),
    ]:
        path.write_bytes(broken)
        try:
            with pytest.raises(IcefloeError) as err:
                catalog.load_table(name).scan().to_arrow()
            assert path.name in str(err.value), (label, str(err.value))
        finally:
            path.write_bytes(original)
    assert catalog.load_table(name).scan().to_arrow().num_rows == 90
