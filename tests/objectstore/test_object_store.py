"""Tables on an object store: the warehouse on a real S3-compatible server (moto in server
mode, its own process on localhost), reached through the Rust FileIO.

- FileIO: conditional create (exactly one of two creates wins), listing, deletes, and no
  secret in any repr or error message.
- The filesystem catalog on S3: the whole table life cycle; 4 processes x 25 appends at once
  leave 100 snapshots and every row (commits by `If-None-Match: *`).
- The SQL catalog on a real Postgres with an S3 warehouse against Iceberg Java's JdbcCatalog
  (same database) with S3FileIO on the same server: Java reads what icefloe writes (in
  process and on Spark), icefloe reads what Java writes, row for row.
- A write that fails leaves no object behind; no secret lands in any file written.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import _io
from icefloe.catalog import FilesystemCatalog, SqlCatalog
from icefloe.exceptions import NoSuchTableError, ValidationError
from support.oracle import assert_same_rows
from support.racing_writers import SCHEMA as PROC_SCHEMA
from support.racing_writers import spawn
from support.servers.s3 import SECRET_KEY, S3Server
from support.start_gate import ready_path, release

ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("region", pa.string()),
    ]
)


def rows(ids: range, region: str = "eu") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "name": [f"n{i}" for i in ids],
            "region": [region] * len(ids),
        },
        schema=ARROW,
    )


@pytest.fixture
def fs_catalog(s3: S3Server, prefix: str) -> FilesystemCatalog:
    cat = icefloe.load_catalog("s3fs", type="filesystem", warehouse=f"{prefix}/wh", **s3.properties())
    assert isinstance(cat, FilesystemCatalog)
    return cat


def objects(location: str) -> list[str]:
    return [p for p, _size in _io.list_files(location)]


# ---- FileIO ----
def test_file_io_conditional_create_list_delete(s3: S3Server, prefix: str) -> None:
    _io.register(prefix, s3.properties())
    loc = f"{prefix}/m/v1.metadata.json"
    _io.write_new(loc, b"first")
    with pytest.raises(FileExistsError):
        _io.write_new(loc, b"second")
    assert _io.read_bytes(loc) == b"first"
    _io.write(f"{prefix}/m/version-hint.text", b"1")
    _io.write(f"{prefix}/d/a=1/x.parquet", b"x")
    assert _io.list_dir(f"{prefix}/m") == ([], [("v1.metadata.json", 5), ("version-hint.text", 1)])
    assert _io.list_dir(prefix)[0] == ["d", "m"]
    assert objects(f"{prefix}/d") == [f"{prefix}/d/a=1/x.parquet"]
    _io.delete_prefix(prefix)
    assert objects(prefix) == []
    assert not _io.exists(loc)


def test_secrets_never_shown(s3: S3Server, prefix: str) -> None:
    _io.register(prefix, s3.properties())
    shown = repr(_io.IoConfig.current()) + repr(_native_props(prefix))
    assert SECRET_KEY not in shown and "***" in shown
    # An error from the store names the object, not the credentials.
    bad = dict(s3.properties(), **{"s3.secret-access-key": "wrong-" + SECRET_KEY})
    _io.register(f"{prefix}/bad", bad)
    with pytest.raises(icefloe.exceptions.IcefloeError) as e:
        _io.read_bytes(f"{prefix}/bad/nothing.json")
    assert f"{prefix}/bad/nothing.json" in str(e.value)
    assert SECRET_KEY not in str(e.value)


def _native_props(location: str) -> dict[str, str]:
    from icefloe import _native

    return _native.file_io_properties(location)


# ---- filesystem catalog on S3 ----
def test_filesystem_catalog_on_s3(fs_catalog: FilesystemCatalog, prefix: str) -> None:
    cat = fs_catalog
    cat.create_namespace("db")
    assert cat.list_namespaces() == [("db",)]
    t = cat.create_table("db.t", schema=ARROW, properties={"write.target-file-size-bytes": "4096"})
    assert t.location() == f"{prefix}/wh/db/t"
    t.append(rows(range(0, 3000)))
    t.append(rows(range(3000, 3100), "us"))
    again = cat.load_table("db.t")
    got = again.scan(row_filter="id >= 2990").to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(2990, 3100))
    assert len(again.scan().to_arrow()) == 3100
    again.delete("region = 'us'")
    assert len(cat.load_table("db.t").scan().to_arrow()) == 3000
    assert cat.list_tables("db") == [("db", "t")]
    names = objects(f"{prefix}/wh/db/t/metadata")
    assert f"{prefix}/wh/db/t/metadata/v4.metadata.json" in names
    cat.drop_table("db.t")
    assert objects(f"{prefix}/wh/db/t") == []
    with pytest.raises(NoSuchTableError):
        cat.load_table("db.t")
    cat.drop_namespace("db")
    assert cat.list_namespaces() == []


def test_stale_version_hint_is_looked_past(fs_catalog: FilesystemCatalog, prefix: str) -> None:
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.h", schema=ARROW)
    t.append(rows(range(3)))
    t.append(rows(range(3, 5)))
    _io.write(f"{prefix}/wh/db/h/metadata/version-hint.text", b"1")
    assert len(fs_catalog.load_table("db.h").scan().to_arrow()) == 5


def test_four_processes_append_25_times_each_on_s3(
    fs_catalog: FilesystemCatalog, s3: S3Server, prefix: str, tmp_path: Path
) -> None:
    fs_catalog.create_namespace("db")
    fs_catalog.create_table(
        "db.p",
        schema=icefloe.Schema.from_arrow(PROC_SCHEMA),
        properties={"commit.retry.num-retries": "200", "commit.retry.min-wait-ms": "5"},
    )
    props = {"name": "s3fs", "type": "filesystem", "warehouse": f"{prefix}/wh", **s3.properties()}
    go = tmp_path / "go"
    n, writers = 25, 4
    readies = [ready_path(go, w) for w in range(writers)]
    procs = [spawn(props, "db.p", w, n, readies[w], go, "append", "eu") for w in range(writers)]
    release(procs, readies, go)  # all four loaded the table: their appends race
    for p in procs:
        _out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        assert SECRET_KEY not in err
    t = fs_catalog.load_table("db.p")
    assert len(t.snapshots()) == n * writers
    got = sorted(zip(*(t.scan().to_arrow().column(c).to_pylist() for c in ("writer", "seq"))))
    assert got == sorted((w, i) for w in range(writers) for i in range(n))


def test_failed_write_leaves_no_object(fs_catalog: FilesystemCatalog, prefix: str) -> None:
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.f", schema=ARROW, properties={"write.target-file-size-bytes": "2048"})

    def batches() -> Iterator[pa.RecordBatch]:
        yield from rows(range(5000)).to_batches(max_chunksize=500)
        raise ValidationError("the source failed half way")

    with pytest.raises(icefloe.exceptions.IcefloeError, match="half way"):
        t.append(pa.RecordBatchReader.from_batches(ARROW, batches()))
    assert objects(f"{prefix}/wh/db/f/data") == []
    assert t.current_snapshot() is None


def test_java_reads_what_icefloe_writes_on_s3(spark: Any, java_s3: tuple[SqlCatalog, str]) -> None:
    import icefloe.spark as ispark

    cat, java = java_s3
    spec = icefloe.partitioning.PartitionSpec(
        icefloe.partitioning.PartitionField(3, 1000, "identity", "region")
    )
    t = cat.create_table("db.w", schema=ARROW, partition_spec=spec)
    t.append(rows(range(100)))
    t.append(rows(range(100, 150), "us"))
    df = spark.createDataFrame(rows(range(150, 400), "ap").to_pandas())
    ispark.append(df, cat.load_table("db.w"))
    t = cat.load_table("db.w")
    t.delete("id < 10")
    expected = cat.load_table("db.w").scan().to_arrow()
    assert len(expected) == 390
    java_rows = spark.sql(f"SELECT id, name, region FROM {java}.db.w")
    assert_same_rows(java_rows, expected, context="Java (S3FileIO) reading icefloe's table")
    # icefloe on Spark reads it too.
    assert_same_rows(ispark.read(spark, cat.load_table("db.w")), expected, context="icefloe.spark.read on S3")


def test_icefloe_reads_what_java_writes_on_s3(spark: Any, java_s3: tuple[SqlCatalog, str]) -> None:
    cat, java = java_s3
    spark.sql(
        f"CREATE TABLE {java}.db.j (id BIGINT NOT NULL, name STRING, region STRING) USING iceberg "
        "PARTITIONED BY (region) TBLPROPERTIES ('write.delete.mode'='merge-on-read')"
    )
    spark.sql(
        f"INSERT INTO {java}.db.j SELECT id, concat('n', id), IF(id % 2 = 0, 'eu', 'us') FROM range(1000)"
    )
    spark.sql(f"DELETE FROM {java}.db.j WHERE id % 7 = 0")
    t = cat.load_table("db.j")
    got = t.scan().to_arrow()
    expected = spark.sql(f"SELECT id, name, region FROM {java}.db.j")
    assert_same_rows(got, expected, context="icefloe reading Java's S3 table (position deletes)")
    # Interleaved: icefloe appends, Java appends, both see everything.
    t.append(rows(range(2000, 2010)))
    spark.sql(f"INSERT INTO {java}.db.j VALUES (3000, 'x', 'eu')")
    assert len(cat.load_table("db.j").scan().to_arrow()) == spark.sql(f"SELECT * FROM {java}.db.j").count()


def test_no_secret_in_any_file_written(java_s3: tuple[SqlCatalog, str], s3: S3Server) -> None:
    cat, _java = java_s3
    t = cat.create_table("db.s", schema=ARROW)
    t.append(rows(range(10)), snapshot_properties={"note": "x"})
    for loc in objects(t.location()):
        assert SECRET_KEY.encode() not in _io.read_bytes(loc), loc
    assert SECRET_KEY not in repr(t) + repr(cat) + repr(t.io_config)
