"""The SQL catalog on a real Postgres (started by the tests): the same tables as Iceberg's
JdbcCatalog, commits by conditional UPDATE, lost races detected, several processes appending
at once losing nothing, and no password in any message."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import icefloe
import pyarrow as pa
import pytest
from icefloe.catalog import SqlCatalog
from icefloe.exceptions import (
    CommitConflictError,
    NamespaceNotEmptyError,
    NoSuchTableError,
    TableAlreadyExistsError,
)
from servers.postgres import run_postgres
from test_concurrency_processes import SCHEMA as PROC_SCHEMA
from test_concurrency_processes import spawn

ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids]}, schema=ARROW)


@pytest.fixture(scope="module")
def pg_uri() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as root:
        yield from run_postgres(Path(root))


@pytest.fixture
def cat(pg_uri: str, tmp_path: Path) -> SqlCatalog:
    name = f"c{tmp_path.name[-12:].replace('-', '_')}"
    c = icefloe.load_catalog(name, uri=pg_uri, warehouse=str(tmp_path / "wh"))
    assert isinstance(c, SqlCatalog)
    return c


def test_lifecycle_on_postgres(cat: SqlCatalog) -> None:
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=ARROW)
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table("db.t", schema=ARROW)
    t.append(rows(range(5)))
    t.append(rows(range(5, 8)))
    again = cat.load_table("db.t")
    assert sorted(again.scan().to_arrow().column("id").to_pylist()) == list(range(8))
    assert cat.list_tables("db") == [("db", "t")]
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace("db")
    cat.rename_table("db.t", "db.u")
    assert cat.table_exists("db.u") and not cat.table_exists("db.t")
    cat.drop_table("db.u")
    with pytest.raises(NoSuchTableError):
        cat.load_table("db.u")


def test_a_lost_race_is_detected_and_retried(cat: SqlCatalog) -> None:
    cat.create_namespace("db")
    cat.create_table("db.r", schema=ARROW, properties={"commit.retry.num-retries": "0"})
    a, b = cat.load_table("db.r"), cat.load_table("db.r")
    a.append(rows(range(3)))
    with pytest.raises(CommitConflictError):
        b.append(rows(range(3, 6)))
    cat.create_table("db.r2", schema=ARROW, properties={"commit.retry.min-wait-ms": "1"})
    a, b = cat.load_table("db.r2"), cat.load_table("db.r2")
    a.append(rows(range(3)))
    b.append(rows(range(3, 6)))  # refreshes and retries
    assert sorted(cat.load_table("db.r2").scan().to_arrow().column("id").to_pylist()) == list(range(6))


def test_processes_appending_at_once_lose_nothing(cat: SqlCatalog, pg_uri: str, tmp_path: Path) -> None:
    cat.create_namespace("db")
    # Four writers committing back to back: enough retries that none gives up (the test is
    # about losing nothing, not about the default retry budget).
    cat.create_table(
        "db.p",
        schema=icefloe.Schema.from_arrow(PROC_SCHEMA),
        properties={"commit.retry.num-retries": "100", "commit.retry.min-wait-ms": "5"},
    )
    props = {"name": cat.name, "type": "sql", "uri": pg_uri, "warehouse": str(tmp_path / "wh")}
    go = tmp_path / "go"
    n, writers = 10, 4
    procs = [spawn(props, "db.p", w, n, go, "append", "eu") for w in range(writers)]
    go.touch()
    for p in procs:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    t = cat.load_table("db.p")
    assert len(t.snapshots()) == n * writers
    got = sorted(zip(*(t.scan().to_arrow().column(c).to_pylist() for c in ("writer", "seq"))))
    assert got == sorted((w, i) for w in range(writers) for i in range(n))
