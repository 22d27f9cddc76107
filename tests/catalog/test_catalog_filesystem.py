"""The filesystem catalog (Iceberg's HadoopCatalog layout), without Spark."""

from __future__ import annotations

import os
from pathlib import Path

import icefloe
import pyarrow as pa
import pytest
from icefloe.catalog import FilesystemCatalog
from icefloe.exceptions import (
    IcefloeError,
    NotSupportedError,
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


def test_namespaces_are_folders(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    """Namespaces are folders under the warehouse (the shared contract is in
    test_catalog_contract.py)."""
    assert fs_catalog.list_namespaces() == []
    fs_catalog.create_namespace("db")
    fs_catalog.create_namespace(("db", "inner"))
    assert (wh / "db" / "inner").is_dir()
    assert fs_catalog.load_namespace_properties("db") == {"location": str(wh / "db")}
    fs_catalog.drop_namespace("db.inner")
    assert not (wh / "db" / "inner").exists()
    # Spark's hidden side files do not count as content.
    (wh / "db" / ".hidden.crc").write_text("x")
    fs_catalog.drop_namespace("db")
    assert not (wh / "db").exists()
    assert fs_catalog.list_namespaces() == []


def test_table_layout(fs_catalog: FilesystemCatalog, wh: Path) -> None:
    """A table is the folder <warehouse>/<namespace>/<name> with v<N>.metadata.json and a
    version hint; drop and purge delete the folder (the shared contract is in
    test_catalog_contract.py)."""
    fs_catalog.create_namespace("db")
    t = fs_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    meta = wh / "db" / "t" / "metadata"
    assert (meta / "v1.metadata.json").is_file()
    assert (meta / "version-hint.text").read_bytes() == b"1"
    assert t.metadata_location == str(meta / "v1.metadata.json")
    assert t.location() == str(wh / "db" / "t")
    assert t.sort_order().is_unsorted
    with pytest.raises(NotSupportedError, match="location"):
        fs_catalog.create_table("db.t3", schema=ARROW_SCHEMA, location="/elsewhere")
    assert not (wh / "db" / "t3").exists()
    with pytest.raises(ValidationError):
        fs_catalog.load_table("justaname")

    fs_catalog.create_table("db.t2", schema=ARROW_SCHEMA)
    fs_catalog.drop_table("db.t2")
    assert not (wh / "db" / "t2").exists()
    t.append(rows(5))
    fs_catalog.purge_table("db.t")
    assert not (wh / "db" / "t").exists()


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


def test_file_url_warehouse(tmp_path: Path) -> None:
    cat = icefloe.load_catalog("u", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=ARROW_SCHEMA)
    assert t.location() == f"file://{tmp_path}/wh/db/t"
    t.append(rows(2))
    assert cat.load_table("db.t").scan().to_arrow().num_rows == 2
    assert (tmp_path / "wh" / "db" / "t" / "metadata" / "v2.metadata.json").is_file()
