"""Where new files go, decided once in Rust (`rust/spec/location_provider.rs`) for every
writer and operation, proven against Iceberg Java's own `LocationProviders`:

- the default layout, `write.data.path` / `write.folder-storage.path`, and the object-storage
  layout (`write.object-storage.enabled`, hashed prefixes, `write.object-storage.path`,
  `write.object-storage.partitioned-paths`) give Java's path for the same file name;
- a table with the object-storage layout written in process and on Spark puts every data and
  delete file where Java would, Java reads it row for row, and an aborted write still finds
  and removes its files;
- `write.metadata.path` takes manifests and manifest lists (Rust producers) as well as the
  SQL catalog's metadata JSON; purge removes them and every data and delete file.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import _io, _native
from support.oracle import Oracle, assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())])
HASH = r"[01]{4}/[01]{4}/[01]{4}/[01]{8}"


def rows(ids: range, region: str = "eu") -> pa.Table:
    return pa.table({"id": list(ids), "region": [region] * len(ids)}, schema=SCHEMA)


def java_location(spark: Any, location: str, props: dict[str, str], name: str) -> str:
    jvm = spark._jvm
    jprops = jvm.java.util.HashMap()
    for k, v in props.items():
        jprops.put(k, v)
    return str(jvm.org.apache.iceberg.LocationProviders.locationsFor(location, jprops).newDataLocation(name))


def ours(location: str, props: dict[str, str], name: str, partition: str | None = None) -> str:
    md = _native.TableMetadata.new_table(
        icefloe.catalog._base._schema_json(SCHEMA), None, None, location, props, 2
    )
    return md.new_data_location(name, partition)


CASES = [
    {},
    {"write.data.path": "s3://other/data/"},
    {"write.folder-storage.path": "s3://legacy/root"},
    {"write.object-storage.enabled": "true"},
    {"write.object-storage.enabled": "true", "write.data.path": "s3://b/wh/db/t/custom"},
    {"write.object-storage.enabled": "true", "write.object-storage.path": "s3://spread/root"},
    {"write.object-storage.enabled": "true", "write.data.path": "s3://elsewhere"},
    {"write.object-storage.enabled": "true", "write.object-storage.partitioned-paths": "false"},
]


# Iceberg Java 1.10 refuses these deprecated names ("use write.data.path"); tables that older
# writers gave them still exist, and icefloe reads them as Java before 1.10 did: as
# write.data.path. The comparison renames them for Java.
DEPRECATED = ("write.folder-storage.path", "write.object-storage.path")


@pytest.mark.parametrize(
    "props", CASES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "default"
)
def test_same_paths_as_java(spark: Any, props: dict[str, str]) -> None:
    location = "s3://b/wh/db/t"
    java_props = props
    if any(k in props for k in DEPRECATED):
        with pytest.raises(Exception, match="deprecated"):
            java_location(spark, location, props, "f.parquet")
        java_props = {("write.data.path" if k in DEPRECATED else k): v for k, v in props.items()}
    for i in range(50):
        name = f"{i:05d}-{uuid.uuid4()}-{i:05d}.parquet"
        # Unpartitioned files: Java's newDataLocation(filename).
        assert ours(location, props, name) == java_location(spark, location, java_props, name), (props, name)
        # Partitioned: Java hashes "<partition path>/<file>" unless partitioned paths are off,
        # in which case the partition path is dropped.
        part = f"region=r{i % 7}/day=2026-11-{1 + i % 28:02d}"
        if props.get("write.object-storage.partitioned-paths") == "false":
            expected = java_location(spark, location, java_props, name)
        else:
            expected = java_location(spark, location, java_props, f"{part}/{name}")
        assert ours(location, props, name, part) == expected, (props, part, name)


def test_object_storage_layout_end_to_end(spark: Any, catalog: Any, oracle: Oracle, table_name: str) -> None:
    import icefloe.spark as ispark

    spec = icefloe.partitioning.PartitionSpec(
        icefloe.partitioning.PartitionField(2, 1000, "identity", "region")
    )
    t = catalog.create_table(
        table_name,
        schema=SCHEMA,
        partition_spec=spec,
        properties={"write.object-storage.enabled": "true", "write.delete.mode": "merge-on-read"},
    )
    t.append(rows(range(100)))
    ispark.append(
        spark.createDataFrame(rows(range(100, 200), "us").to_pandas()), catalog.load_table(table_name)
    )
    t = catalog.load_table(table_name)
    t.delete(f"id IN ({', '.join(str(i) for i in range(0, 200, 10))})")
    t = catalog.load_table(table_name)
    data_root = _io.join(t.location(), "data")
    paths = [(task.file_path, task.delete_paths) for task in t.scan().plan_files()]
    assert paths
    for data, deletes in paths:
        for p in [data, *deletes]:
            rel = (
                p[len(data_root) + 1 :]
                if p.startswith(data_root + "/")
                else p[len(_io.local_path(data_root)) + 1 :]
            )
            assert re.fullmatch(HASH + r"/region=(eu|us)/[^/]+\.parquet", rel), p
    assert any(deletes for _d, deletes in paths), "the delete wrote no delete file"
    assert_same_rows(
        oracle.df(table_name), t.scan().to_arrow(), context="Java reading the object-storage layout"
    )
    assert oracle.df(table_name).count() == 180


def test_failed_write_with_object_storage_layout_leaves_nothing(catalog: Any, table_name: str) -> None:
    t = catalog.create_table(table_name, schema=SCHEMA, properties={"write.object-storage.enabled": "true"})
    t.append(rows(range(10)))
    before = sorted(p for p, _ in _io.list_files(t.location()))
    bad = pa.table({"id": pa.array([1, None], pa.int64()), "region": ["a", "b"]})
    with pytest.raises(icefloe.exceptions.IcefloeError):
        t.append(bad)
    assert sorted(p for p, _ in _io.list_files(t.location())) == before


def test_write_metadata_path_takes_every_metadata_file(tmp_path: Path) -> None:
    meta = tmp_path / "elsewhere-meta"
    cat = icefloe.load_catalog(
        "lp", type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh")
    )
    cat.create_namespace("db")
    t = cat.create_table(
        "db.m",
        schema=SCHEMA,
        properties={"write.metadata.path": str(meta), "write.delete.mode": "merge-on-read"},
    )
    t.append(rows(range(20)))
    t.delete("id < 5")
    t = cat.load_table("db.m")
    assert t.metadata_location.startswith(str(meta) + "/")
    names = sorted(p.name for p in meta.iterdir())
    assert any(n.startswith("snap-") and n.endswith(".avro") for n in names), names
    assert any(re.fullmatch(r"[0-9a-f-]{36}-m\d+\.avro", n) for n in names), names
    assert not (tmp_path / "wh" / "db" / "m" / "metadata").exists()
    assert len(t.scan().to_arrow()) == 15
    cat.purge_table("db.m")
    leftovers = [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".avro", ".parquet", ".json")]
    assert leftovers == []
