"""`catalog.create_table_transaction(...)` (a staged create) on every catalog: the filesystem
catalog, the SQL catalog on sqlite and on a real Postgres, and the REST client against Apache
Iceberg's RESTCatalogServer (warehouse on the S3 test server, `stage-create` then a commit
with `assert-create`). Iceberg Java reads each through a Spark catalog on the same tables
(HadoopCatalog, JdbcCatalog, the REST catalog).

- Nothing is visible before the commit (not to icefloe, not to Java); after it the table
  exists with the staged rows and properties in one snapshot, and Java reads the same.
- An aborted transaction (an exception in the `with` block, or the object dropped) leaves no
  table and no files.
- A create of the same name before the commit makes the commit a TableAlreadyExistsError and
  deletes the transaction's files, leaving the other table whole.
- Files `txn.table.add_files` registered were the caller's: no abort deletes them.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.exceptions import TableAlreadyExistsError
from support.catalogs import KINDS, TwinEnv, files_under, new_catalog, twin_catalog
from support.oracle import assert_same_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids]}, schema=SCHEMA)


class Env(TwinEnv):
    """One catalog kind: icefloe's catalog, the Spark catalog of Iceberg Java on the same
    tables, and a lister of the files under a location."""

    def java_rows(self, ident: str) -> Any:
        return self.spark.sql(f"SELECT id, name FROM {self.java}.{ident}")

    def java_cannot_load(self, ident: str) -> None:
        with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
            self.spark.sql(f"SELECT * FROM {self.java}.{ident}").collect()

    def java_properties(self, ident: str) -> dict[str, str]:
        return {
            r["key"]: r["value"] for r in self.spark.sql(f"SHOW TBLPROPERTIES {self.java}.{ident}").collect()
        }

    def java_snapshots(self, ident: str) -> list[Any]:
        return self.spark.sql(f"SELECT snapshot_id, operation FROM {self.java}.{ident}.snapshots").collect()


@pytest.fixture(params=KINDS)
def env(request: pytest.FixtureRequest, tmp_path: Path, spark: Any) -> Iterator[Env]:
    catalog, name, s3 = twin_catalog(request, request.param, tmp_path, spark, "ctt")
    yield Env(request.param, catalog, spark, name, s3)


@pytest.fixture
def ns(env: Env) -> str:
    return env.new_namespace()


def test_the_table_appears_with_everything_staged_in_one_commit(env: Env, ns: str) -> None:
    cat, ident = env.catalog, f"{ns}.t"
    with cat.create_table_transaction(ident, SCHEMA, properties={"team": "me"}) as txn:
        txn.append(rows(range(5)))
        txn.set_properties({"k": "v"})
        txn.append(rows(range(5, 7)))
        location = txn.table.location()
        # Written, but nothing of the table is in the catalog yet.
        assert env.files_under(location)
        assert not cat.table_exists(ident)
        assert cat.list_tables(ns) == []
        env.java_cannot_load(ident)
        assert txn.table_metadata.properties["k"] == "v"
    t = cat.load_table(ident)
    assert txn.table.metadata_location == t.metadata_location
    assert cat.list_tables(ns) == [(ns, "t")]
    assert t.properties["team"] == "me" and t.properties["k"] == "v"
    assert [s.summary["operation"] for s in t.snapshots()] == ["append", "append"]
    assert t.metadata.metadata_log() == []  # the staged versions were never files
    got = t.scan().to_arrow().sort_by("id")
    assert got.to_pydict() == rows(range(7)).to_pydict()
    # Iceberg Java reads the same table.
    assert_same_rows(env.java_rows(ident), got, context=f"Java reading a staged create ({env.kind})")
    java_props = env.java_properties(ident)
    assert java_props["team"] == "me" and java_props["k"] == "v"
    assert len(env.java_snapshots(ident)) == 2
    # ... and it is an ordinary table afterwards.
    t.append(rows(range(7, 8)))
    assert cat.load_table(ident).scan().count() == 8


def test_one_append_gives_one_snapshot(env: Env, ns: str) -> None:
    cat, ident = env.catalog, f"{ns}.one"
    txn = cat.create_table_transaction(ident, SCHEMA)
    txn.append(rows(range(3)))
    created = txn.commit_transaction()
    assert len(created.snapshots()) == 1
    assert cat.load_table(ident).scan().count() == 3
    assert [r["operation"] for r in env.java_snapshots(ident)] == ["append"]
    with pytest.raises(TableAlreadyExistsError):
        cat.create_table_transaction(ident, SCHEMA)  # checked at once too


def test_an_aborted_transaction_leaves_nothing(env: Env, ns: str) -> None:
    cat = env.catalog
    with pytest.raises(RuntimeError, match="boom"):
        with cat.create_table_transaction(f"{ns}.a", SCHEMA) as txn:
            txn.append(rows(range(5)))
            txn.set_properties({"k": "v"})
            location = txn.table.location()
            assert env.files_under(location)
            raise RuntimeError("boom")
    assert not cat.table_exists(f"{ns}.a")
    assert env.files_under(location) == set()
    if env.s3 is None:
        assert not os.path.exists(location)  # not even an empty folder (a namespace, to Hadoop)
    env.java_cannot_load(f"{ns}.a")

    # Dropped without a commit: the same.
    dropped = cat.create_table_transaction(f"{ns}.b", SCHEMA)
    dropped.append(rows(range(3)))
    location = dropped.table.location()
    assert env.files_under(location)
    del dropped
    gc.collect()
    assert not cat.table_exists(f"{ns}.b")
    assert env.files_under(location) == set()
    assert cat.list_tables(ns) == []
    assert cat.list_namespaces(ns) == []


def test_a_table_created_meanwhile_fails_the_commit_and_its_files_go(env: Env, ns: str) -> None:
    cat, ident = env.catalog, f"{ns}.c"
    txn = cat.create_table_transaction(ident, SCHEMA, properties={"who": "txn"})
    txn.append(rows(range(5)))
    location = txn.table.location()
    staged = env.files_under(location)
    assert staged
    other = cat.create_table(ident, SCHEMA, properties={"who": "other"})
    other.append(rows(range(100, 102)))
    others = env.files_under(other.location()) - staged
    with pytest.raises(TableAlreadyExistsError, match="already exists"):
        txn.commit_transaction()
    # The transaction's files are gone; the other table is whole.
    assert env.files_under(location) & staged == set()
    assert others <= env.files_under(other.location())
    now = cat.load_table(ident)
    assert now.properties["who"] == "other"
    assert sorted(now.scan().to_arrow().column("id").to_pylist()) == [100, 101]
    assert sorted(r["id"] for r in env.java_rows(ident).collect()) == [100, 101]
    assert env.java_properties(ident)["who"] == "other"


@pytest.mark.parametrize("kind", ["filesystem", "sqlite"])
def test_files_registered_by_add_files_outlive_an_abort(
    request: pytest.FixtureRequest, kind: str, tmp_path: Path
) -> None:
    """`txn.table.add_files` registers files that were there before: an aborted, dropped or
    losing create transaction deletes the files it wrote, never those (Iceberg Java's create
    transaction never deletes a file it was given: its clean-up deletes only the manifests and
    manifest lists it wrote, and a write's own abort only that write's files)."""
    _, cat = new_catalog(request, kind, tmp_path / "cat", namespace="db")
    outside = tmp_path / "outside"
    outside.mkdir()

    def parquet(name: str, ids: range) -> str:
        path = outside / name
        pq.write_table(rows(ids), path)
        return str(path)

    registered = parquet("a.parquet", range(3))
    with pytest.raises(RuntimeError, match="boom"):
        with cat.create_table_transaction("db.a", SCHEMA) as txn:
            txn.table.add_files([registered])
            txn.append(rows(range(3, 5)))
            location = txn.table.location()
            raise RuntimeError("boom")
    assert os.path.exists(registered)
    assert files_under(location, None) == set()  # what the transaction wrote is gone

    # Dropped without a commit; the file named with another spelling of its path.
    registered = parquet("b.parquet", range(3))
    dropped = cat.create_table_transaction("db.b", SCHEMA)
    dropped.table.add_files([f"file://{registered}"])
    del dropped
    gc.collect()
    assert os.path.exists(registered)

    # A table of that name created meanwhile: the commit fails, the file stays.
    registered = parquet("c.parquet", range(3))
    txn = cat.create_table_transaction("db.c", SCHEMA)
    txn.table.add_files([registered])
    cat.create_table("db.c", SCHEMA)
    with pytest.raises(TableAlreadyExistsError):
        txn.commit_transaction()
    assert os.path.exists(registered)
    cat.load_table("db.c").add_files([registered])
    assert cat.load_table("db.c").scan().count() == 3
