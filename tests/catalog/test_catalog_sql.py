"""The SQL catalog (Iceberg JdbcCatalog / PyIceberg SqlCatalog schema), without Spark: every
test on sqlite and on a real Postgres (a fresh database per test)."""

from __future__ import annotations

import contextlib
import re
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.catalog import SqlCatalog
from icefloe.exceptions import (
    IcefloeIOError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
)
from support.servers.postgres import new_database
from support.servers.postgres import query as postgres_query

ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(n: int, start: int = 0) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(start, start + n), pa.int64()),
            "name": [f"n{i}" for i in range(start, start + n)],
        },
        schema=ARROW_SCHEMA,
    )


class Db:
    """One catalog database, with raw SQL access for the checks."""

    uri = ""

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def columns(self, table: str) -> list[str]:
        raise NotImplementedError


class SqliteDb(Db):
    def __init__(self, path: Path) -> None:
        self.path = path
        self.uri = f"sqlite:///{path}"

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        with contextlib.closing(sqlite3.connect(self.path)) as conn, conn:
            return conn.execute(sql).fetchall()

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.rows(f"PRAGMA table_info({table})")]


class PostgresDb(Db):
    def __init__(self, uri: str) -> None:
        self.uri = uri

    def rows(self, sql: str) -> list[tuple[Any, ...]]:
        return postgres_query(self.uri, sql)

    def columns(self, table: str) -> list[str]:
        return [
            r[0]
            for r in self.rows(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                f"AND table_name = '{table}' ORDER BY ordinal_position"
            )
        ]


@pytest.fixture(params=["sqlite", "postgres"])
def new_db(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Db]:
    """Makes empty catalog databases of one backend (Postgres: the session's server)."""
    if request.param == "sqlite":
        count = iter(range(1_000_000))
        return lambda: SqliteDb(tmp_path / f"catalog{next(count)}.db")
    server = request.getfixturevalue("postgres")
    return lambda: PostgresDb(new_database(server))


@pytest.fixture
def db(new_db: Callable[[], Db]) -> Db:
    return new_db()


@pytest.fixture
def sql_catalog(tmp_path: Path, db: Db) -> SqlCatalog:
    cat = icefloe.load_catalog("cat", type="sql", uri=db.uri, warehouse=str(tmp_path / "wh"))
    assert isinstance(cat, SqlCatalog)
    return cat


def test_creates_the_jdbc_catalog_tables(sql_catalog: SqlCatalog, db: Db) -> None:
    assert db.columns("iceberg_tables") == [
        "catalog_name",
        "table_namespace",
        "table_name",
        "metadata_location",
        "previous_metadata_location",
        "iceberg_type",
    ]
    assert db.columns("iceberg_namespace_properties") == [
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
    # Postgres is a supported backend (every other test runs on it too): an unreachable server
    # is an I/O error that names the database but never the password.
    with pytest.raises(IcefloeIOError, match=r"127\.0\.0\.1:1/db") as err:
        icefloe.load_catalog("x", type="sql", uri="postgresql://u:s3cr3t@127.0.0.1:1/db")
    assert "s3cr3t" not in str(err.value) and "s3cr3t" not in repr(err.value)
    with pytest.raises(NotSupportedError):
        icefloe.load_catalog("x", type="sql", uri="mysql://localhost/db")
    with pytest.raises(NotSupportedError):
        icefloe.load_catalog("x", uri="thrift://metastore:9083")
    with pytest.raises(ValidationError):
        icefloe.load_catalog("x", type="sql")


def test_namespace_rows(sql_catalog: SqlCatalog, db: Db) -> None:
    """Namespaces are rows of iceberg_namespace_properties, as Iceberg's JdbcCatalog keeps them
    (the shared contract is in test_catalog_contract.py)."""
    assert sql_catalog.list_namespaces() == []
    sql_catalog.create_namespace("db")
    sql_catalog.create_namespace("db.inner", {"owner": "me"})
    sql_catalog.create_namespace(("other",))
    # JdbcCatalog's marker row ("exists") is in the database but, as Java's
    # loadNamespaceMetadata, not among the properties, which have the default location.
    assert len(db.rows("SELECT 1 FROM iceberg_namespace_properties WHERE property_key = 'exists'")) == 3
    wh = str(sql_catalog.properties["warehouse"])
    assert sql_catalog.load_namespace_properties("db") == {"location": f"{wh}/db"}
    assert sql_catalog.load_namespace_properties("db.inner") == {"owner": "me", "location": f"{wh}/db/inner"}
    sql_catalog.update_namespace_properties(
        "db.inner", removals={"owner"}, updates={"a": "1", "location": "/x"}
    )
    assert sql_catalog.load_namespace_properties("db.inner") == {"a": "1", "location": "/x"}
    sql_catalog.drop_namespace("db.inner")
    sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    with pytest.raises(NamespaceNotEmptyError, match=r"db\.t"):
        sql_catalog.drop_namespace("db")
    sql_catalog.drop_table("db.t")
    sql_catalog.drop_namespace("db")
    assert db.rows("SELECT DISTINCT namespace FROM iceberg_namespace_properties") == [("other",)]


def test_table_rows_and_locations(sql_catalog: SqlCatalog, db: Db, tmp_path: Path) -> None:
    """A table is a row of iceberg_tables pointing at <location>/metadata/00000-<uuid>.metadata.json;
    a custom location is honoured; drop keeps the files (the shared contract is in
    test_catalog_contract.py)."""
    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    assert t.location() == str(tmp_path / "wh" / "db" / "t")
    assert re.fullmatch(
        re.escape(str(tmp_path / "wh" / "db" / "t" / "metadata")) + r"/00000-[0-9a-f-]{36}\.metadata\.json",
        t.metadata_location,
    )
    assert db.rows("SELECT * FROM iceberg_tables") == [("cat", "db", "t", t.metadata_location, None, "TABLE")]

    custom = tmp_path / "elsewhere" / "t2"
    t2 = sql_catalog.create_table("db.t2", schema=ARROW_SCHEMA, location=str(custom))
    assert t2.location() == str(custom)
    assert t2.metadata_location.startswith(str(custom / "metadata") + "/")

    sql_catalog.create_namespace("db2")
    sql_catalog.rename_table("db.t", "db2.moved")
    assert db.rows(
        "SELECT table_namespace, table_name, metadata_location FROM iceberg_tables ORDER BY 2"
    ) == [
        ("db2", "moved", t.metadata_location),
        ("db", "t2", t2.metadata_location),
    ]

    sql_catalog.drop_table("db.t2")
    # Drop keeps the files (purge deletes them).
    assert (custom / "metadata").is_dir()
    assert Path(t2.metadata_location).is_file()


def test_commit_updates_the_pointer(sql_catalog: SqlCatalog, db: Db) -> None:
    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    first = t.metadata_location
    t.append(rows(2))
    assert re.search(r"/00001-[0-9a-f-]{36}\.metadata\.json$", t.metadata_location)
    assert db.rows("SELECT metadata_location, previous_metadata_location FROM iceberg_tables") == [
        (t.metadata_location, first)
    ]
    t.append(rows(2, 2))
    assert re.search(r"/00002-", t.metadata_location)
    assert sql_catalog.load_table("db.t").scan().count() == 4


def test_tables_of_other_catalogs_and_views_are_invisible(
    sql_catalog: SqlCatalog, db: Db, tmp_path: Path
) -> None:
    sql_catalog.create_namespace("db")
    sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    other = icefloe.load_catalog("other", type="sql", uri=db.uri, warehouse=str(tmp_path / "wh2"))
    assert other.list_namespaces() == []
    assert not other.table_exists("db.t")
    db.rows("INSERT INTO iceberg_tables VALUES ('cat', 'db', 'v', '/x/v.metadata.json', NULL, 'VIEW')")
    assert sql_catalog.list_tables("db") == [("db", "t")]
    assert not sql_catalog.table_exists("db.v")


def test_reads_a_pyiceberg_style_database_without_iceberg_type(db: Db, tmp_path: Path) -> None:
    db.rows(
        "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) "
        "NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
        "previous_metadata_location VARCHAR(1000), "
        "PRIMARY KEY (catalog_name, table_namespace, table_name))"
    )
    db.rows(
        "CREATE TABLE iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace "
        "VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, "
        "property_value VARCHAR(1000) NOT NULL, "
        "PRIMARY KEY (catalog_name, namespace, property_key))"
    )
    cat = icefloe.load_catalog("default", uri=db.uri, warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(2))
    assert cat.load_table("db.t").scan().count() == 2
    assert db.rows("SELECT catalog_name, table_namespace, table_name FROM iceberg_tables") == [
        ("default", "db", "t")
    ]


def test_register_table(sql_catalog: SqlCatalog, new_db: Callable[[], Db], tmp_path: Path) -> None:
    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(3))
    other = icefloe.load_catalog("other", type="sql", uri=new_db().uri, warehouse=str(tmp_path / "wh"))
    other.create_namespace("imported")
    r = other.register_table("imported.t", t.metadata_location)
    assert r.metadata_location == t.metadata_location
    assert r.scan().count() == 3
    with pytest.raises(TableAlreadyExistsError):
        other.register_table("imported.t", t.metadata_location)
    with pytest.raises(NoSuchNamespaceError):
        other.register_table("nons.t", t.metadata_location)


def race(n: int, action: Callable[[int], str]) -> list[str]:
    """Runs `action(i)` in n threads released at once; their results (or exceptions' names)."""
    barrier = threading.Barrier(n)
    out: list[str] = [""] * n

    def run(i: int) -> None:
        barrier.wait()
        try:
            out[i] = action(i)
        except Exception as e:
            out[i] = f"{type(e).__name__}: {e}"

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_racing_catalog_changes_have_one_winner(sql_catalog: SqlCatalog, tmp_path: Path) -> None:
    """Several catalogs on one database creating the same namespace, table, or property at
    once: one wins, the others get the catalog's own error, never a driver error."""
    cats = [
        icefloe.load_catalog(
            "cat", type="sql", uri=sql_catalog.properties["uri"], warehouse=str(tmp_path / "wh")
        )
        for _ in range(4)
    ]
    for rnd in range(5):

        def create_ns(i: int, rnd: int = rnd) -> str:
            try:
                cats[i].create_namespace(f"ns{rnd}")
            except NamespaceAlreadyExistsError:
                return "exists"
            return "ok"

        assert sorted(race(4, create_ns)) == ["exists"] * 3 + ["ok"]

        def create_table(i: int, rnd: int = rnd) -> str:
            try:
                cats[i].create_table(f"ns{rnd}.t", schema=ARROW_SCHEMA)
            except TableAlreadyExistsError:
                return "exists"
            return "ok"

        assert sorted(race(4, create_table)) == ["exists"] * 3 + ["ok"]

        def set_prop(i: int, rnd: int = rnd) -> str:
            cats[i].update_namespace_properties(f"ns{rnd}", updates={"k": str(i), f"w{i}": "1"})
            return "ok"

        assert race(4, set_prop) == ["ok"] * 4
        props = sql_catalog.load_namespace_properties(f"ns{rnd}")
        assert props["k"] in {"0", "1", "2", "3"}
        assert {k for k in props if k.startswith("w")} == {"w0", "w1", "w2", "w3"}


def test_postgres_uri_forms(postgres: str, tmp_path: Path) -> None:
    uri = new_database(postgres)
    rest = uri.split("://", 1)[1]
    for scheme in ("postgresql", "postgres", "postgresql+pg8000", "postgresql+psycopg"):
        cat = icefloe.load_catalog("x", uri=f"{scheme}://{rest}", warehouse=str(tmp_path / "wh"))
        assert isinstance(cat, SqlCatalog)
        cat.create_namespace_if_not_exists("db")
        assert cat.list_namespaces() == [("db",)]
    missing = uri.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(IcefloeIOError, match="no_such_db"):
        icefloe.load_catalog("x", uri=missing.replace("postgres@", "postgres:s3cr3t@"))
    with pytest.raises(IcefloeIOError) as err:
        icefloe.load_catalog("x", uri=missing.replace("postgres@", "postgres:s3cr3t@"))
    assert "s3cr3t" not in str(err.value) and "s3cr3t" not in repr(err.value)


def test_repr_never_shows_the_password(postgres: str, tmp_path: Path) -> None:
    """A Postgres uri's password stays out of the catalog's repr (the test server trusts
    every password); the repr still names the user, host, port and database."""
    uri = new_database(postgres)
    cat = icefloe.load_catalog("x", uri=uri.replace("postgres@", "postgres:s3cr3t-pw@", 1))
    assert isinstance(cat, SqlCatalog)
    shown = repr(cat)
    assert "s3cr3t-pw" not in shown
    assert uri.rsplit("/", 1)[1] in shown and "postgres@127.0.0.1:" in shown
    sqlite = icefloe.load_catalog("y", uri=f"sqlite:///{tmp_path}/r.db", warehouse=str(tmp_path / "wh"))
    assert repr(sqlite) == f"SqlCatalog('y', uri='sqlite:///{tmp_path}/r.db')"


def test_catalogs_starting_at_once_on_an_empty_database(db: Db, tmp_path: Path) -> None:
    def start(i: int) -> str:
        cat = icefloe.load_catalog(f"c{i}", type="sql", uri=db.uri, warehouse=str(tmp_path / "wh"))
        cat.create_namespace("db")
        return "ok"

    assert race(4, start) == ["ok"] * 4
    assert db.columns("iceberg_tables")[-1] == "iceberg_type"


def test_postgres_reads_the_catalog_tables_the_search_path_names(postgres: str, tmp_path: Path) -> None:
    """A PyIceberg-style table (no iceberg_type) in the search path, a JdbcCatalog-style
    namesake in another schema: the catalog writes the columns its own table has."""
    db = PostgresDb(new_database(postgres))
    db.rows(
        "CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) "
        "NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
        "previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, table_name))"
    )
    db.rows("CREATE SCHEMA other")
    db.rows("CREATE TABLE other.iceberg_tables (table_name VARCHAR(255), iceberg_type VARCHAR(5))")
    cat = icefloe.load_catalog("default", uri=db.uri, warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    cat.create_table("db.t", schema=ARROW_SCHEMA).append(rows(2))
    assert cat.load_table("db.t").scan().count() == 2
    assert db.rows("SELECT table_name FROM iceberg_tables") == [("t",)]


@pytest.mark.parametrize("outcome", ["landed", "rolled back", "unknown"])
def test_a_commit_without_an_answer(
    sql_catalog: SqlCatalog, monkeypatch: pytest.MonkeyPatch, outcome: str
) -> None:
    """The COMMIT statement fails (Postgres: the connection broke while committing): the
    catalog finds out whether the swap happened; when it cannot, the commit's state is
    unknown and its files are kept, never deleted under a table that may use them."""
    from icefloe.catalog import _sql_backend
    from icefloe.exceptions import CommitStateUnknownException

    sql_catalog.create_namespace("db")
    t = sql_catalog.create_table("db.t", schema=ARROW_SCHEMA)
    t.append(rows(1))
    real = _sql_backend.Connection.execute
    broken = {"commit": False, "all": False}

    def execute(self: Any, sql: str, params: Any = ()) -> Any:
        if broken["all"]:
            raise sqlite3.OperationalError("connection lost")
        if sql == "COMMIT" and broken["commit"]:
            broken["commit"] = False
            real(self, "ROLLBACK" if outcome == "rolled back" else "COMMIT")
            broken["all"] = outcome == "unknown"
            raise sqlite3.OperationalError("connection lost")
        return real(self, sql, params)

    monkeypatch.setattr(_sql_backend.Connection, "execute", execute)
    meta_dir = Path(t.metadata_location).parent
    before = set(meta_dir.iterdir())
    broken["commit"] = True
    if outcome == "landed":
        t.append(rows(1, 1))
    elif outcome == "rolled back":
        with pytest.raises(IcefloeIOError, match="cannot commit"):
            t.append(rows(1, 1))
    else:
        with pytest.raises(CommitStateUnknownException):
            t.append(rows(1, 1))
    broken["all"] = False
    again = sql_catalog.load_table("db.t")
    ids = sorted(again.scan().to_arrow().column("id").to_pylist())
    assert ids == ([0] if outcome == "rolled back" else [0, 1])
    live = {task.file.file_path for task in again.scan().plan_files()}
    assert all(Path(p).exists() for p in live)
    if outcome == "rolled back":
        assert set(meta_dir.iterdir()) == before  # the loser's metadata, manifest, list: gone
    else:
        assert Path(again.metadata_location).exists()


def test_an_interrupt_as_a_create_commits_keeps_its_metadata_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A KeyboardInterrupt landing once the COMMIT of a create went through: the table exists,
    so its first metadata file must stay (as a commit keeps its files on an interrupt: the
    swap may have happened); deleting it left a table that cannot be loaded."""
    from icefloe.catalog import _sql_backend

    cat = icefloe.load_catalog(
        "cat", type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path)
    )
    cat.create_namespace("db")
    real = _sql_backend.Connection.execute

    def execute(self: Any, sql: str, params: Any = ()) -> Any:
        result = real(self, sql, params)
        if sql == "COMMIT":
            raise KeyboardInterrupt
        return result

    monkeypatch.setattr(_sql_backend.Connection, "execute", execute)
    with pytest.raises(KeyboardInterrupt):
        cat.create_table("db.t", schema=ARROW_SCHEMA)
    monkeypatch.undo()
    t = cat.load_table("db.t")
    assert Path(t.metadata_location).exists()
    t.append(rows(2))
    assert cat.load_table("db.t").scan().count() == 2
