"""The SQL catalog on sqlite (Iceberg JdbcCatalog / PyIceberg SqlCatalog schema), without Spark."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import icefloe
import pyarrow as pa
import pytest
from icefloe import LongType, NestedField, Schema, StringType
from icefloe.catalog import SqlCatalog
from icefloe.exceptions import (
    CommitConflictError,
    IcefloeIOError,
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
def db(tmp_path: Path) -> Path:
    return tmp_path / "catalog.db"


@pytest.fixture
def sql_catalog(tmp_path: Path, db: Path) -> SqlCatalog:
    cat = icefloe.load_catalog("cat", type="sql", uri=f"sqlite:///{db}", warehouse=str(tmp_path / "wh"))
    assert isinstance(cat, SqlCatalog)
    return cat


def columns(db: Path, table: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def test_creates_the_jdbc_catalog_tables(sql_catalog: SqlCatalog, db: Path) -> None:
    assert columns(db, "iceberg_tables") == [
        "catalog_name",
        "table_namespace",
        "table_name",
        "metadata_location",
        "previous_metadata_location",
        "iceberg_type",
    ]
    assert columns(db, "iceberg_namespace_properties") == [
        "catalog_name",
        "namespace",
        "property_key",
        "property_value",
    ]


def test_uri_forms(tmp_path: Path) -> None:
    assert isinstance(icefloe.load_catalog("x", uri=f"sqlite:///{tmp_path}/a.db"), SqlCatalog)
    mem = icefloe.load_catalog("x", type="sql", uri="sqlite:///:memory:", warehouse=str(tmp_path / "w"))
    mem.create_namespace("db")
    mem.create_table("db.t", schema=ARROW_SCHEMA)
    assert mem.list_tables("db") == [("db", "t")]
    # Postgres is a supported backend: an unreachable server is an I/O error that names the
    # database but never the password (the Postgres suite is test_catalog_sql_postgres.py).
    with pytest.raises(IcefloeIOError, match=r"127\.0\.0\.1:1/db") as err:
        icefloe.load_catalog("x", type="sql", uri="postgresql://u:s3cr3t@127.0.0.1:1/db")
    assert "s3cr3t" not in str(err.value) and "s3cr3t" not in repr(err.value)
    with pytest.raises(NotSupportedError):
        icefloe.load_catalog("x", type="sql", uri="mysql://localhost/db")
    with pytest.raises(NotSupportedError):
        icefloe.load_catalog("x", uri="thrift://metastore:9083")
    with pytest.raises(ValidationError):
        icefloe.load_catalog("x", type="sql")


def test_namespaces(sql_catalog: SqlCatalog, db: Path) -> None:
    assert sql_catalog.list_namespaces() == []
    sql_catalog.create_namespace("db")
    sql_catalog.create_namespace("db.inner", {"owner": "me"})
    sql_catalog.create_namespace(("other",))
    assert sql_catalog.list_namespaces() == [("db",), ("other",)]
    assert sql_catalog.list_namespaces("db") == [("db", "inner")]
    assert sql_catalog.namespace_exists("db") and sql_catalog.namespace_exists(("db", "inner"))
    assert not sql_catalog.namespace_exists("d")  # no prefix matching
    assert sql_catalog.load_namespace_properties("db") == {"exists": "true"}
    assert sql_catalog.load_namespace_properties("db.inner") == {"owner": "me"}
    summary = sql_catalog.update_namespace_properties(
        "db.inner", removals={"owner", "gone"}, updates={"a": "1"}
    )
    assert summary.removed == ["owner"] and summary.missing == ["gone"] and summary.updated == ["a"]
    assert sql_catalog.load_namespace_properties("db.inner") == {"a": "1"}
    with pytest.raises(NamespaceAlreadyExistsError):
        sql_catalog.create_namespace("db")
    sql_catalog.create_namespace_if_not_exists("db")
    with pytest.raises(NamespaceNotEmptyError):
        sql_catalog.drop_namespace("db")  # holds db.inner
    sql_catalog.drop_namespace("db.inner")
    sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    with pytest.raises(NamespaceNotEmptyError, match=r"db\.t"):
        sql_catalog.drop_namespace("db")
    sql_catalog.drop_table("db.t")
    sql_catalog.drop_namespace("db")
    assert sql_catalog.list_namespaces() == [("other",)]
    with pytest.raises(NoSuchNamespaceError):
        sql_catalog.drop_namespace("db")
    with pytest.raises(NoSuchNamespaceError):
        sql_catalog.load_namespace_properties("db")
    with pytest.raises(NoSuchNamespaceError):
        sql_catalog.list_tables("db")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT DISTINCT namespace FROM iceberg_namespace_properties").fetchall() == [
            ("other",)
        ]


def test_create_load_list_rename_drop(sql_catalog: SqlCatalog, db: Path, tmp_path: Path) -> None:
    sql_catalog.create_namespace("db")
    sql_catalog.create_namespace("db2")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA, properties={"owner": "me"})
    assert t.location() == str(tmp_path / "wh" / "db" / "t")
    assert re.fullmatch(
        re.escape(str(tmp_path / "wh" / "db" / "t" / "metadata")) + r"/00000-[0-9a-f-]{36}\.metadata\.json",
        t.metadata_location,
    )
    assert Path(t.metadata_location).is_file()
    assert t.properties["owner"] == "me"
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT * FROM iceberg_tables").fetchall() == [
            ("cat", "db", "t", t.metadata_location, None, "TABLE")
        ]

    schema = Schema(NestedField(1, "a", LongType(), required=True), NestedField(2, "b", StringType()))
    custom = tmp_path / "elsewhere" / "t2"
    t2 = sql_catalog.create_table("db.t2", schema=schema, location=str(custom))
    assert t2.location() == str(custom)
    assert t2.schema().fields == schema.fields
    assert t2.metadata_location.startswith(str(custom / "metadata") + "/")

    assert sql_catalog.list_tables("db") == [("db", "t"), ("db", "t2")]
    assert sql_catalog.table_exists("db.t") and not sql_catalog.table_exists("db.x")
    with pytest.raises(TableAlreadyExistsError):
        sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    assert sql_catalog.create_table_if_not_exists("db.t", schema=ARROW_SCHEMA).metadata_location == (
        t.metadata_location
    )
    with pytest.raises(NoSuchTableError):
        sql_catalog.load_table("db.x")
    with pytest.raises(NoSuchNamespaceError):
        sql_catalog.create_table("nons.t", schema=ARROW_SCHEMA)

    t.append(rows(3))
    renamed = sql_catalog.rename_table("db.t", "db2.moved")
    assert renamed.identifier == ("db2", "moved")
    assert renamed.scan().to_arrow().num_rows == 3
    assert not sql_catalog.table_exists("db.t")
    with pytest.raises(TableAlreadyExistsError):
        sql_catalog.rename_table("db.t2", "db2.moved")
    with pytest.raises(NoSuchTableError):
        sql_catalog.rename_table("db.nope", "db2.x")
    with pytest.raises(NoSuchNamespaceError):
        sql_catalog.rename_table("db.t2", "nons.x")

    sql_catalog.drop_table("db.t2")
    assert sql_catalog.list_tables("db") == []
    # Drop keeps the files (purge deletes them).
    assert (custom / "metadata").is_dir()
    with pytest.raises(NoSuchTableError):
        sql_catalog.drop_table("db.t2")


def test_commit_updates_the_pointer(sql_catalog: SqlCatalog, db: Path) -> None:
    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    first = t.metadata_location
    t.append(rows(2))
    assert re.search(r"/00001-[0-9a-f-]{36}\.metadata\.json$", t.metadata_location)
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT metadata_location, previous_metadata_location FROM iceberg_tables"
        ).fetchall() == [(t.metadata_location, first)]
    t.append(rows(2, 2))
    assert re.search(r"/00002-", t.metadata_location)
    assert sql_catalog.load_table("db.t").scan().count() == 4


def test_commit_is_a_compare_and_swap(sql_catalog: SqlCatalog) -> None:
    sql_catalog.create_namespace("db")
    sql_catalog.create_table("db.t", schema=ARROW_SCHEMA, properties={"commit.retry.num-retries": "0"})
    a = sql_catalog.load_table("db.t")
    b = sql_catalog.load_table("db.t")
    a.append(rows(1))
    meta_dir = Path(a.metadata_location).parent
    before = sorted(p.name for p in meta_dir.iterdir())
    with pytest.raises(CommitConflictError):
        b.append(rows(1, 100))
    # The loser's metadata file, manifest and manifest list are gone.
    assert sorted(p.name for p in meta_dir.iterdir()) == before
    assert sql_catalog.load_table("db.t").scan().to_arrow().column("id").to_pylist() == [0]


def test_tables_of_other_catalogs_and_views_are_invisible(
    sql_catalog: SqlCatalog, db: Path, tmp_path: Path
) -> None:
    sql_catalog.create_namespace("db")
    sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    other = icefloe.load_catalog("other", type="sql", uri=f"sqlite:///{db}", warehouse=str(tmp_path / "wh2"))
    assert other.list_namespaces() == []
    assert not other.table_exists("db.t")
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO iceberg_tables VALUES ('cat', 'db', 'v', '/x/v.metadata.json', NULL, 'VIEW')"
        )
    assert sql_catalog.list_tables("db") == [("db", "t")]
    assert not sql_catalog.table_exists("db.v")


def test_reads_a_pyiceberg_style_database_without_iceberg_type(tmp_path: Path) -> None:
    db = tmp_path / "py.db"
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) "
            "NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
            "previous_metadata_location VARCHAR(1000), "
            "PRIMARY KEY (catalog_name, table_namespace, table_name))"
        )
        conn.execute(
            "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace "
            "VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
            "property_value VARCHAR(1000) NOT NULL, "
            "PRIMARY KEY (catalog_name, namespace, property_key))"
        )
    cat = icefloe.load_catalog("default", uri=f"sqlite:///{db}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(2))
    assert cat.load_table("db.t").scan().count() == 2
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT catalog_name, table_namespace, table_name FROM iceberg_tables"
        ).fetchall() == [("default", "db", "t")]


def test_purge_deletes_files(sql_catalog: SqlCatalog, tmp_path: Path) -> None:
    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(5))
    t.append(rows(5, 5))
    data_files = [task.file.file_path for task in t.scan().plan_files()]
    assert len(data_files) == 2 and all(Path(p).exists() for p in data_files)
    sql_catalog.purge_table("db.t")
    assert not sql_catalog.table_exists("db.t")
    assert not any(Path(p).exists() for p in data_files)
    assert not (tmp_path / "wh" / "db" / "t" / "metadata").exists()


def test_register_table(sql_catalog: SqlCatalog, tmp_path: Path) -> None:
    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(3))
    other = icefloe.load_catalog(
        "other", type="sql", uri=f"sqlite:///{tmp_path}/other.db", warehouse=str(tmp_path / "wh")
    )
    other.create_namespace("imported")
    r = other.register_table("imported.t", t.metadata_location)
    assert r.metadata_location == t.metadata_location
    assert r.scan().count() == 3
    with pytest.raises(TableAlreadyExistsError):
        other.register_table("imported.t", t.metadata_location)
    with pytest.raises(NoSuchNamespaceError):
        other.register_table("nons.t", t.metadata_location)
