"""The filesystem catalog (Iceberg's HadoopCatalog layout), without Spark."""

from __future__ import annotations

import os
from pathlib import Path

import icefloe
import pyarrow as pa
import pytest
from icefloe import LongType, NestedField, Schema, StringType
from icefloe.catalog import FilesystemCatalog
from icefloe.exceptions import (
    CommitConflictError,
    IcefloeError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
)

ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": [f"n{i}" for i in range(start, start + n)],
        },
        schema=ARROW_SCHEMA,
    )


@pytest.fixture
def fs_catalog(tmp_path: Path) -> FilesystemCatalog:
    cat = icefloe.load_catalog("local", warehouse=str(tmp_path / "wh"))
    assert isinstance(cat, FilesystemCatalog)
    return cat


@pytest.fixture
def wh(fs_catalog: FilesystemCatalog, tmp_path: Path) -> Path:
    return tmp_path / "wh"


def test_load_catalog_picks_the_type(tmp_path: Path) -> None:
    assert isinstance(icefloe.load_catalog("a", warehouse=str(tmp_path)), FilesystemCatalog)
    assert isinstance(icefloe.load_catalog("a", type="hadoop", warehouse=str(tmp_path)), FilesystemCatalog)
    assert isinstance(
        icefloe.load_catalog("a", type="filesystem", warehouse=f"file://{tmp_path}"), FilesystemCatalog
    )
    # A REST catalog contacts its server at once; an unreachable one is an error naming it.
    with pytest.raises(IcefloeError, match=r"127\.0\.0\.1:9"):
        icefloe.load_catalog("a", uri="http://127.0.0.1:9")
    with pytest.raises(NotSupportedError, match="glue"):
        icefloe.load_catalog("a", type="glue", warehouse=str(tmp_path))
    with pytest.raises(NotSupportedError, match="ftp"):
        icefloe.load_catalog("a", uri="ftp://x")
    with pytest.raises(ValidationError):
        icefloe.load_catalog("a")


def test_namespaces(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    assert fs_catalog.list_namespaces() == []
    fs_catalog.create_namespace("db")
    fs_catalog.create_namespace(("db", "inner"))
    fs_catalog.create_namespace("other")
    assert (wh / "db" / "inner").is_dir()
    assert fs_catalog.list_namespaces() == [("db",), ("other",)]
    assert fs_catalog.list_namespaces("db") == [("db", "inner")]
    assert fs_catalog.namespace_exists("db.inner")
    assert not fs_catalog.namespace_exists("nope")
    assert fs_catalog.load_namespace_properties("db") == {"location": str(wh / "db")}
    with pytest.raises(NamespaceAlreadyExistsError):
        fs_catalog.create_namespace("db")
    fs_catalog.create_namespace_if_not_exists("db")
    with pytest.raises(NotSupportedError):
        fs_catalog.create_namespace("withprops", {"owner": "me"})
    with pytest.raises(NamespaceNotEmptyError):
        fs_catalog.drop_namespace("db")
    fs_catalog.drop_namespace("db.inner")
    # Spark's hidden side files do not count as content.
    (wh / "db" / ".hidden.crc").write_text("x")
    fs_catalog.drop_namespace("db")
    assert fs_catalog.list_namespaces() == [("other",)]
    with pytest.raises(NoSuchNamespaceError):
        fs_catalog.drop_namespace("db")
    with pytest.raises(NoSuchNamespaceError):
        fs_catalog.list_tables("db")
    with pytest.raises(NoSuchNamespaceError):
        fs_catalog.load_namespace_properties("db")


def test_create_load_list_drop(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.t", schema=ARROW_SCHEMA, properties={"owner": "me"})
    meta = wh / "db" / "t" / "metadata"
    assert (meta / "v1.metadata.json").is_file()
    assert (meta / "version-hint.text").read_bytes() == b"1"
    assert t.metadata_location == str(meta / "v1.metadata.json")
    assert t.location() == str(wh / "db" / "t")
    assert t.identifier == ("db", "t")
    assert t.properties["owner"] == "me"
    assert t.current_snapshot() is None and t.snapshots() == []
    assert [f.name for f in t.schema().fields] == ["id", "name"]
    assert t.schema().find_field("id").required
    assert t.spec().is_unpartitioned()
    assert t.sort_order().is_unsorted

    schema = Schema(NestedField(1, "a", LongType(), required=True), NestedField(2, "b", StringType()))
    t2 = fs_catalog.create_table(("db", "t2"), schema=schema)
    assert t2.schema().fields == schema.fields

    assert fs_catalog.list_tables("db") == [("db", "t"), ("db", "t2")]
    # A table is not a namespace.
    assert fs_catalog.list_namespaces() == [("db",)]
    assert fs_catalog.table_exists("db.t") and not fs_catalog.table_exists("db.nope")
    loaded = fs_catalog.load_table("db.t")
    assert loaded.metadata_location == t.metadata_location
    assert loaded.metadata.table_uuid == t.metadata.table_uuid

    with pytest.raises(TableAlreadyExistsError):
        fs_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    assert fs_catalog.create_table_if_not_exists("db.t", schema=ARROW_SCHEMA) == loaded
    with pytest.raises(NoSuchTableError):
        fs_catalog.load_table("db.nope")
    with pytest.raises(NoSuchNamespaceError):
        fs_catalog.create_table("nons.t", schema=ARROW_SCHEMA)
    with pytest.raises(NotSupportedError, match="location"):
        fs_catalog.create_table("db.t3", schema=ARROW_SCHEMA, location="/elsewhere")
    with pytest.raises(NotSupportedError, match="rename"):
        fs_catalog.rename_table("db.t", "db.t9")
    with pytest.raises(ValidationError):
        fs_catalog.load_table("justaname")

    fs_catalog.drop_table("db.t2")
    assert not (wh / "db" / "t2").exists()
    assert fs_catalog.list_tables("db") == [("db", "t")]
    with pytest.raises(NoSuchTableError):
        fs_catalog.drop_table("db.t2")


def test_commits_write_the_next_version_and_hint(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(3))
    t.append(rows(2, 3))
    meta = wh / "db" / "t" / "metadata"
    assert (meta / "v3.metadata.json").is_file()
    assert (meta / "version-hint.text").read_text() == "3"
    assert t.metadata_location.endswith("v3.metadata.json")
    # No temp files are left next to the metadata.
    assert not [n for n in os.listdir(meta) if n.endswith(".tmp")]
    # A checksum side file Hadoop (Iceberg Java) left for the old hint is removed with it.
    (meta / ".version-hint.text.crc").write_bytes(b"stale")
    t.append(rows(1, 5))
    assert (meta / "version-hint.text").read_text() == "4"
    assert not (meta / ".version-hint.text.crc").exists()
    log = t.metadata.metadata_log()
    assert [e["metadata-file"] for e in log][-3:] == [
        str(meta / "v1.metadata.json"),
        str(meta / "v2.metadata.json"),
        str(meta / "v3.metadata.json"),
    ]


def test_load_verifies_the_version_hint(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(1))
    t.append(rows(1, 1))
    meta = wh / "db" / "t" / "metadata"
    # A stale hint (a writer that crashed between the swap and the hint): advance past it.
    (meta / "version-hint.text").write_text("1")
    assert fs_catalog.load_table("db.t").metadata_location.endswith("v3.metadata.json")
    # No hint, or garbage in it: take the highest version; .crc side files are ignored.
    (meta / "version-hint.text").unlink()
    (meta / ".v9.metadata.json.crc").write_bytes(b"crc")
    assert fs_catalog.load_table("db.t").metadata_location.endswith("v3.metadata.json")
    (meta / "version-hint.text").write_text("garbage")
    assert fs_catalog.load_table("db.t").metadata_location.endswith("v3.metadata.json")
    # A hint pointing at a missing version falls back to listing.
    (meta / "version-hint.text").write_text("7")
    assert fs_catalog.load_table("db.t").current_snapshot() is not None
    assert fs_catalog.load_table("db.t").metadata_location.endswith("v3.metadata.json")


def test_commit_is_a_compare_and_swap(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    fs_catalog.create_namespace("db")
    fs_catalog.create_table("db.t", schema=ARROW_SCHEMA, properties={"commit.retry.num-retries": "0"})
    a = fs_catalog.load_table("db.t")
    b = fs_catalog.load_table("db.t")
    a.append(rows(1))
    with pytest.raises(CommitConflictError):
        b.append(rows(1, 100))
    meta = wh / "db" / "t" / "metadata"
    assert sorted(n for n in os.listdir(meta) if n.endswith(".metadata.json")) == [
        "v1.metadata.json",
        "v2.metadata.json",
    ]
    # The loser left no data file behind.
    data_files = [f for _, _, fs in os.walk(wh / "db" / "t" / "data") for f in fs]
    assert len(data_files) == len(a.scan().plan_files())
    assert fs_catalog.load_table("db.t").scan().to_arrow().column("id").to_pylist() == [0]


def test_purge_deletes_files(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(5))
    fs_catalog.purge_table("db.t")
    assert not (wh / "db" / "t").exists()
    assert not fs_catalog.table_exists("db.t")
    with pytest.raises(NoSuchTableError):
        fs_catalog.purge_table("db.t")


def test_file_url_warehouse(tmp_path: Path) -> None:
    cat = icefloe.load_catalog("u", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=ARROW_SCHEMA)
    assert t.location() == f"file://{tmp_path}/wh/db/t"
    t.append(rows(2))
    assert cat.load_table("db.t").scan().to_arrow().num_rows == 2
    assert (tmp_path / "wh" / "db" / "t" / "metadata" / "v2.metadata.json").is_file()
