"""The catalogs' view API (PyIceberg's names, Java's replace and property updates) on every
catalog kind, and the view metadata rules of Java's `ViewMetadata.Builder`. Java reading and
writing the same views: tests/spark/test_spark_sql_views.py."""

from __future__ import annotations

import gzip
import json
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from icefloe.exceptions import (
    InvalidDataError,
    NamespaceNotEmptyError,
    NoSuchViewError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
    ViewAlreadyExistsError,
)
from icefloe.view import SQLViewRepresentation, ViewVersion, read_view_metadata
from support.catalogs import new_catalog

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "rest"])
def test_view_lifecycle(request: pytest.FixtureRequest, tmp_path: Path, kind: str) -> None:
    ns = f"vns_{uuid.uuid4().hex[:8]}"
    _props, catalog = new_catalog(request, kind, tmp_path, namespace=ns)
    catalog.create_table((ns, "t"), SCHEMA)
    view = catalog.create_view((ns, "v"), SCHEMA, sql=f"SELECT id, name FROM {ns}.t", properties={"k": "1"})
    assert view.current_version().version_id == 1
    assert view.sql_for("SPARK") == SQLViewRepresentation(f"SELECT id, name FROM {ns}.t", "spark")
    assert view.current_version().default_namespace == (ns,)
    loaded = catalog.load_view(f"{ns}.v")
    assert loaded.metadata == view.metadata
    assert loaded.schema().as_arrow().names == ["id", "name"]
    assert catalog.view_exists((ns, "v")) and not catalog.table_exists((ns, "v"))
    assert catalog.list_views(ns) == [(ns, "v")]
    assert catalog.list_tables(ns) == [(ns, "t")]

    with pytest.raises(ViewAlreadyExistsError):
        catalog.create_view((ns, "v"), SCHEMA, sql="SELECT 1")
    with pytest.raises(TableAlreadyExistsError):
        catalog.create_view((ns, "t"), SCHEMA, sql="SELECT 1")
    with pytest.raises((TableAlreadyExistsError, ViewAlreadyExistsError)):
        catalog.create_table((ns, "v"), SCHEMA)

    # a new version, then the first again: its id is reused, as Java's builder does
    second = catalog.replace_view((ns, "v"), SCHEMA, sql=f"SELECT id, name FROM {ns}.t WHERE id > 1")
    assert [v.version_id for v in second.versions()] == [1, 2] and second.current_version().version_id == 2
    first = view.current_version()
    again = catalog.replace_view((ns, "v"), SCHEMA, first)
    assert again.current_version().version_id == 1
    assert [e.version_id for e in again.metadata.version_log] == [1, 2, 1]
    # a new schema gets the next id
    wider = pa.schema([*SCHEMA, pa.field("extra", pa.int32())])
    third = catalog.replace_view((ns, "v"), wider, sql=f"SELECT id, name, 1 AS extra FROM {ns}.t")
    assert third.current_version().schema_id == 1 and third.schema().as_arrow().names == [
        "id",
        "name",
        "extra",
    ]

    props = catalog.update_view_properties((ns, "v"), {"a": "b"}, removals=["k"])
    assert props.properties == {"a": "b"}
    with pytest.raises(ValidationError, match="both updated and removed"):
        catalog.update_view_properties((ns, "v"), {"a": "c"}, removals=["a"])

    catalog.rename_view((ns, "v"), (ns, "w"))
    assert catalog.list_views(ns) == [(ns, "w")] and catalog.load_view((ns, "w")).properties == {"a": "b"}
    with pytest.raises(NoSuchViewError):
        catalog.load_view((ns, "v"))
    catalog.drop_table((ns, "t"))
    if kind != "rest":  # Java's JdbcCatalog (1.12) refuses too; the run's REST server (1.10) does not
        with pytest.raises(NamespaceNotEmptyError, match="w"):
            catalog.drop_namespace(ns)
    catalog.drop_view((ns, "w"))
    assert not catalog.view_exists((ns, "w")) and catalog.list_views(ns) == []
    with pytest.raises(NoSuchViewError):
        catalog.drop_view((ns, "w"))
    catalog.drop_namespace(ns)


def test_the_filesystem_catalog_refuses_views(tmp_path: Path) -> None:
    import icefloe

    catalog = icefloe.load_catalog("fs", type="filesystem", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    for call in (
        lambda: catalog.create_view("db.v", SCHEMA, sql="SELECT 1"),
        lambda: catalog.list_views("db"),
        lambda: catalog.drop_view("db.v"),
    ):
        with pytest.raises(NotSupportedError, match="does not support views"):
            call()
    assert not (tmp_path / "db" / "v").exists()


def _sql_catalog(tmp_path: Path):  # type: ignore[no-untyped-def]
    import icefloe

    catalog = icefloe.load_catalog("s", type="sql", uri=f"sqlite:///{tmp_path}/c.db", warehouse=str(tmp_path))
    catalog.create_namespace("db")
    return catalog


def test_metadata_files_are_javas(tmp_path: Path) -> None:
    """`<location>/metadata/NNNNN-<uuid>.gz.metadata.json`, gzip, numbered per commit; plain JSON
    with `write.metadata.compression-codec=none`; in `write.metadata.path` when set."""
    catalog = _sql_catalog(tmp_path)
    view = catalog.create_view("db.v", SCHEMA, sql="SELECT 1")
    assert Path(view.metadata_location).parent == tmp_path / "db" / "v" / "metadata"
    assert Path(view.metadata_location).name.startswith("00000-")
    assert view.metadata_location.endswith(".gz.metadata.json")
    raw = json.loads(gzip.decompress(Path(view.metadata_location).read_bytes()))
    assert raw["format-version"] == 1 and raw["current-version-id"] == 1
    assert [e["version-id"] for e in raw["version-log"]] == [1]
    after = catalog.update_view_properties("db.v", {"write.metadata.compression-codec": "none"})
    assert Path(after.metadata_location).name.startswith("00001-")
    assert after.metadata_location.endswith(".metadata.json") and not after.metadata_location.endswith(
        ".gz.metadata.json"
    )
    assert (
        json.loads(Path(after.metadata_location).read_text())["properties"][
            "write.metadata.compression-codec"
        ]
        == "none"
    )
    elsewhere = tmp_path / "meta"
    moved = catalog.create_view(
        "db.m", SCHEMA, sql="SELECT 1", properties={"write.metadata.path": str(elsewhere)}
    )
    assert Path(moved.metadata_location).parent == elsewhere
    assert read_view_metadata(moved.metadata_location) == moved.metadata


def test_versions_past_the_history_size_expire_oldest_first(tmp_path: Path) -> None:
    catalog = _sql_catalog(tmp_path)
    catalog.create_view("db.v", SCHEMA, sql="SELECT 1", properties={"version.history.num-entries": "2"})
    for i in range(2, 5):
        view = catalog.replace_view("db.v", SCHEMA, sql=f"SELECT {i}")
    assert [v.version_id for v in view.versions()] == [3, 4]
    assert [e.version_id for e in view.metadata.version_log] == [3, 4]
    with pytest.raises(ValidationError, match="must be positive"):
        catalog.update_view_properties("db.v", {"version.history.num-entries": "0"})


def test_a_replace_may_not_drop_a_dialect_unless_allowed(tmp_path: Path) -> None:
    catalog = _sql_catalog(tmp_path)
    both = ViewVersion(
        version_id=1,
        schema_id=0,
        timestamp_ms=1,
        summary={},
        representations=(
            SQLViewRepresentation("SELECT 1", "spark"),
            SQLViewRepresentation("SELECT 1", "trino"),
        ),
        default_namespace=("db",),
    )
    catalog.create_view("db.v", SCHEMA, both)
    with pytest.raises(ValidationError, match="loss of view dialects"):
        catalog.replace_view("db.v", SCHEMA, sql="SELECT 2")
    assert catalog.load_view("db.v").current_version().dialects() == {"spark", "trino"}
    catalog.update_view_properties("db.v", {"replace.drop-dialect.allowed": "true"})
    assert catalog.replace_view("db.v", SCHEMA, sql="SELECT 2").current_version().dialects() == {"spark"}
    twice = ViewVersion(
        1, 0, 1, {}, (SQLViewRepresentation("a", "spark"), SQLViewRepresentation("b", "SPARK")), ("db",)
    )
    with pytest.raises(ValidationError, match="multiple queries for dialect spark"):
        catalog.create_view("db.x", SCHEMA, twice)
    with pytest.raises(ValidationError, match="either view_version or sql"):
        catalog.create_view("db.y", SCHEMA)


def test_a_damaged_metadata_file_names_itself(tmp_path: Path) -> None:
    catalog = _sql_catalog(tmp_path)
    view = catalog.create_view("db.v", SCHEMA, sql="SELECT 1")
    Path(view.metadata_location).write_bytes(gzip.compress(b'{"format-version": 1, "view-uuid": "u"}'))
    damaged = r"view metadata .*00000-.*\.gz\.metadata\.json: missing field"
    with pytest.raises(InvalidDataError, match=damaged):
        catalog.load_view("db.v")
    Path(view.metadata_location).write_bytes(b"\x1f\x8bnot gzip")
    with pytest.raises(InvalidDataError, match="cannot decompress"):
        catalog.load_view("db.v")
