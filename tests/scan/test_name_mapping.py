"""Data files without Parquet field ids (written by pyarrow, registered through Iceberg Java's
API as `add_files`/migration does) read through the table's name mapping
(`schema.name-mapping.default`, created by Java's `MappingUtil.create`): icefloe in process and
on Spark must return exactly the rows Iceberg Java returns, for every snapshot, across a
rename (Java keeps the old name as an alias in the mapping), an added column and merge-on-read
position deletes against the id-less file.
"""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


def _register(
    oracle: Oracle, name: str, table: pa.Table, file_name: str, partition_path: str | None = None
) -> str:
    """Writes `table` with pyarrow (no field ids) into the table's data folder and appends it
    with Java's `DataFiles.builder(spec)` (no column metrics, as add_files of foreign files)."""
    jt = oracle.java_table(name)
    location = jt.location()
    local_dir = location.removeprefix("file:") + "/data"
    os.makedirs(local_dir, exist_ok=True)
    local = f"{local_dir}/{file_name}"
    pq.write_table(table, local)
    assert pq.read_schema(local).field(0).metadata in (None, {}), "pyarrow wrote a field id"
    jvm = oracle.jvm
    builder = (
        jvm.org.apache.iceberg.DataFiles.builder(jt.spec())
        .withPath(f"{location}/data/{file_name}")
        .withFileSizeInBytes(os.path.getsize(local))
        .withRecordCount(table.num_rows)
        .withFormat("PARQUET")
    )
    if partition_path is not None:
        builder = builder.withPartitionPath(partition_path)
    jt.newAppend().appendFile(builder.build()).commit()
    return local


def _set_name_mapping(oracle: Oracle, name: str) -> str:
    jvm = oracle.jvm
    jt = oracle.java_table(name)
    mapping = jvm.org.apache.iceberg.mapping.MappingUtil.create(jt.schema())
    text = jvm.org.apache.iceberg.mapping.NameMappingParser.toJson(mapping)
    jt.updateProperties().set("schema.name-mapping.default", text).commit()
    return str(text)


def _assert_every_snapshot(spark: Any, oracle: Oracle, catalog: Any, name: str) -> None:
    import icefloe.spark

    table = catalog.load_table(name)
    for snap in oracle.snapshot_ids(name):
        expected = oracle.df(name, snap)
        assert_same_rows(table.scan(snapshot_id=snap).to_arrow(), expected, context=f"{name}@{snap}")
        got = icefloe.spark.read(spark, table, snapshot_id=snap)
        assert_same_rows(got, expected, context=f"spark {name}@{snap}")


def test_files_without_field_ids_read_through_the_name_mapping(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = new_table_name("namemap")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, data string, loc struct<lat: double, lon: double>, "
        "pts array<struct<x: int>>, props map<string, int>) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    text = _set_name_mapping(oracle, name)
    assert '"element"' in text and '"value"' in text
    loc_t = pa.struct([("lat", pa.float64()), ("lon", pa.float64())])
    pts_t = pa.list_(pa.struct([("x", pa.int32())]))
    n = 1000
    foreign = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "data": pa.array([None if i % 7 == 0 else f"d{i}" for i in range(n)]),
            "loc": pa.array(
                [None if i % 11 == 0 else {"lat": i / 2, "lon": -i / 3} for i in range(n)], loc_t
            ),
            "pts": pa.array([[{"x": i}, {"x": i + 1}] if i % 3 else [] for i in range(n)], pts_t),
            "props": pa.array(
                [[("k", i)] if i % 2 else None for i in range(n)], pa.map_(pa.string(), pa.int32())
            ),
            "not_in_table": pa.array(range(n), pa.int32()),
        }
    )
    _register(oracle, name, foreign, "foreign-1.parquet")
    # A file written by Java (with ids) in the same table.
    oracle.sql(f"INSERT INTO {q} VALUES (5000, 'java', named_struct('lat', 1.0, 'lon', 2.0), array(), map())")
    # Rename: Java adds the new name to the mapping and keeps the old one as an alias.
    oracle.sql(f"ALTER TABLE {q} RENAME COLUMN data TO payload")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN added string")
    mapping = oracle.java_table(name).properties().get("schema.name-mapping.default")
    assert '"payload"' in mapping and '"data"' in mapping, mapping
    # A second foreign file with the new name, then position deletes against the first one.
    _register(
        oracle,
        name,
        pa.table({"id": pa.array([7000, 7001], pa.int64()), "payload": ["p0", None], "added": ["a", "b"]}),
        "foreign-2.parquet",
    )
    oracle.sql(f"DELETE FROM {q} WHERE id % 10 = 3 OR id = 7001")
    assert any(f["content"] == 1 for f in oracle.files(name)), "no position deletes were written"
    _assert_every_snapshot(spark, oracle, catalog, name)
    table = catalog.load_table(name)
    assert_same_rows(
        table.scan(selected_fields=("payload", "loc")).to_arrow(), oracle.df(name, columns=["payload", "loc"])
    )


def test_identity_partition_column_missing_from_added_file(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """A file added to an identity-partitioned table without its partition column (as
    add_files of a Hive-style layout does) reads the column from the partition value."""
    name = new_table_name("addfiles")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, category string, amount double) USING iceberg "
        "PARTITIONED BY (category) TBLPROPERTIES ('format-version'='2')"
    )
    _set_name_mapping(oracle, name)
    for cat in ("a", "b"):
        part = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "amount": [1.5, None, 3.5]})
        _register(oracle, name, part, f"added-{cat}.parquet", partition_path=f"category={cat}")
    oracle.sql(f"INSERT INTO {q} VALUES (10, 'a', 0.5), (11, null, 1.0)")
    _assert_every_snapshot(spark, oracle, catalog, name)
    table = catalog.load_table(name)
    assert_same_rows(
        table.scan(row_filter="category = 'b'").to_arrow(), oracle.df(name, where="category = 'b'")
    )
