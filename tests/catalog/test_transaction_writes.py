"""Transactions that write (`table.transaction()` with `tx.append`, `tx.overwrite`,
`tx.delete`, `tx.dynamic_partition_overwrite`, `tx.upsert`) and the atomic commit of several
tables' transactions (`catalog.commit_transaction(tx1, tx2)`), on every catalog: filesystem,
SQL on sqlite and on a real Postgres, and REST against Apache Iceberg's RESTCatalogServer
(which implements `POST /v1/{prefix}/transactions/commit`). Iceberg Java reads every table
through a Spark catalog on the same tables.

- A transaction's changes land as ONE new metadata version holding each write's snapshot, in
  order; writes see what the transaction staged before them (a delete the rows appended before
  it, an append a column added before it). Java reads the same rows and snapshots.
- The table moved meanwhile: a concurrent append is no conflict (the transaction is applied
  again on the new version, its first manifests deleted: no orphans); a concurrent delete of
  the rows the transaction deletes is a CommitConflictError, and nothing of the transaction is
  left (no files, no commit).
- An exception in the `with` block, or `abort()`, deletes everything the writes made.
- Several tables: all land or none (a conflict on one table fails all); the filesystem catalog
  refuses before anything is written; transactions of another catalog, or two of one table,
  are refused.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.exceptions import CommitConflictError, NotSupportedError, ValidationError
from icefloe.table import Table
from icefloe.types import LongType
from support.catalogs import KINDS, TwinEnv, twin_catalog
from support.oracle import assert_same_rows

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(ids: list[int], tag: str = "n") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "name": [f"{tag}{i}" for i in ids]}, schema=SCHEMA)


class Env(TwinEnv):
    """One catalog kind (see `support.catalogs.TwinEnv`)."""

    def java_rows(self, ident: str, columns: str = "id, name") -> Any:
        self.spark.sql(f"REFRESH TABLE {self.java}.{ident}")
        return self.spark.sql(f"SELECT {columns} FROM {self.java}.{ident}")

    def java_operations(self, ident: str) -> list[str]:
        return [
            r["operation"]
            for r in self.spark.sql(
                f"SELECT operation FROM {self.java}.{ident}.snapshots ORDER BY committed_at"
            ).collect()
        ]


@pytest.fixture(params=KINDS)
def env(request: pytest.FixtureRequest, tmp_path: Path, spark: Any) -> Iterator[Env]:
    catalog, name, s3 = twin_catalog(request, request.param, tmp_path, spark, "txw")
    yield Env(request.param, catalog, spark, name, s3)


@pytest.fixture
def ns(env: Env) -> str:
    return env.new_namespace()


def orphans(table: Table) -> tuple[str, ...]:
    """Files under the table's location that it does not reference (any age)."""
    later = int(time.time() * 1000) + 60_000
    return table.maintenance.remove_orphan_files(
        older_than=later, dry_run=True, allow_recent=True
    ).orphan_file_locations


def table_of(env: Env, ident: str, ids: list[int]) -> Table:
    t = env.catalog.create_table(ident, SCHEMA)
    t.append(rows(ids))
    return t


def test_writes_land_as_one_version_java_reads(env: Env, ns: str) -> None:
    ident = f"{ns}.t"
    t = table_of(env, ident, [1, 2, 3])
    before = t.metadata_location
    with t.transaction() as tx:
        tx.update_schema().add_column("x", LongType()).commit()
        tx.append(pa.table({"id": pa.array([4, 5], pa.int64()), "name": ["n4", "n5"], "x": [40, 50]}))
        tx.delete("id = 1 or id = 5")  # one row of the table, one appended in this transaction
        tx.upsert(pa.table({"id": pa.array([2, 6], pa.int64()), "name": ["u2", "u6"], "x": [20, 60]}), ["id"])
        tx.set_properties({"owner": "tx"})
        assert env.catalog.load_table(ident).metadata_location == before  # nothing committed yet
    loaded = env.catalog.load_table(ident)
    # One new metadata file for the whole transaction.
    assert [e["metadata-file"] for e in loaded.metadata.metadata_log()][-1] == before
    assert loaded.properties["owner"] == "tx"
    ops = [s.summary["operation"] for s in loaded.snapshots()]
    assert ops[0] == "append" and ops[1] == "append" and len(ops) == 4, ops
    got = loaded.scan().to_arrow().sort_by("id")
    assert got.to_pydict() == {"id": [2, 3, 4, 6], "name": ["u2", "n3", "n4", "u6"], "x": [20, None, 40, 60]}
    assert_same_rows(
        env.java_rows(ident, "id, name, x"), got, context=f"Java reading a transaction ({env.kind})"
    )
    assert env.java_operations(ident) == ops
    assert orphans(loaded) == ()


def test_overwrite_and_dynamic_partition_overwrite_in_one_transaction(env: Env, ns: str) -> None:
    ident = f"{ns}.p"
    t = env.catalog.create_table(ident, SCHEMA)
    with t.update_spec() as u:
        u.add_identity("name")
    t.append(rows([1, 2], "a"))
    t.append(rows([3], "b"))
    with t.transaction() as tx:
        tx.dynamic_partition_overwrite(pa.table({"id": pa.array([7], pa.int64()), "name": ["b3"]}))
        tx.overwrite(rows([8], "c"), "id = 1")
    loaded = env.catalog.load_table(ident)
    got = loaded.scan().to_arrow().sort_by("id")
    assert got.to_pydict() == {"id": [2, 7, 8], "name": ["a2", "b3", "c8"]}
    assert_same_rows(
        env.java_rows(ident), got, context=f"Java reading overwrites of a transaction ({env.kind})"
    )
    assert len(loaded.snapshots()) == 4


def test_a_concurrent_append_is_no_conflict(env: Env, ns: str) -> None:
    ident = f"{ns}.c"
    t = table_of(env, ident, [1, 2])
    tx = t.transaction()
    tx.append(rows([10]))
    tx.delete("id = 2")
    env.catalog.load_table(ident).append(rows([20]))  # lands first
    tx.commit_transaction()
    loaded = env.catalog.load_table(ident)
    got = loaded.scan().to_arrow().sort_by("id")
    assert got["id"].to_pylist() == [1, 10, 20]
    assert [s.summary["operation"] for s in loaded.snapshots()][-3:] == ["append", "append", "overwrite"]
    assert t.metadata_location == loaded.metadata_location
    assert_same_rows(env.java_rows(ident), got, context="Java reading a transaction applied again")
    # The manifests of the first, staged, attempt were deleted.
    assert orphans(loaded) == ()


def test_a_conflicting_delete_fails_the_transaction_and_leaves_nothing(env: Env, ns: str) -> None:
    ident = f"{ns}.x"
    t = table_of(env, ident, [1, 2])
    t.append(rows([3, 4]))
    files = env.files_under(t.location())
    tx = t.transaction()
    tx.append(rows([10]))
    tx.delete("id = 3")  # rewrites the file of 3 and 4
    assert env.files_under(t.location()) > files  # written, not committed
    other = env.catalog.load_table(ident)
    other.delete("id = 4")  # removes that same file first
    with pytest.raises(CommitConflictError):
        tx.commit_transaction()
    loaded = env.catalog.load_table(ident)
    assert loaded.metadata_location == other.metadata_location
    assert sorted(loaded.scan().to_arrow()["id"].to_pylist()) == [1, 2, 3]
    assert orphans(loaded) == ()  # every file of the transaction deleted
    with pytest.raises(ValidationError, match="committed already"):
        tx.commit_transaction()


def test_an_aborted_transaction_leaves_nothing(env: Env, ns: str) -> None:
    ident = f"{ns}.a"
    t = table_of(env, ident, [1])
    files = env.files_under(t.location())
    with pytest.raises(RuntimeError, match="boom"):
        with t.transaction() as tx:
            tx.append(rows([2]))
            tx.delete("id = 1")
            raise RuntimeError("boom")
    assert env.files_under(t.location()) == files
    tx = t.transaction()
    tx.append(rows([3]))
    tx.abort()
    assert env.files_under(t.location()) == files
    with pytest.raises(ValidationError, match="aborted"):
        tx.append(rows([4]))
    assert env.catalog.load_table(ident).scan().count() == 1


def test_several_tables_commit_together(env: Env, ns: str) -> None:
    cat = env.catalog
    t1, t2 = table_of(env, f"{ns}.one", [1, 2]), table_of(env, f"{ns}.two", [5])
    tx1, tx2 = t1.transaction(), t2.transaction()
    tx1.delete("id = 1")
    tx1.append(rows([3]))
    tx2.append(rows([6]))
    tx2.set_properties({"moved": "yes"})
    if env.kind == "filesystem":
        with pytest.raises(NotSupportedError, match="cannot commit several tables atomically"):
            cat.commit_transaction(tx1, tx2)
        # Refused before anything changed: each still commits on its own.
        tx1.commit_transaction()
        tx2.commit_transaction()
    else:
        committed = cat.commit_transaction(tx1, tx2)
        assert [c.identifier for c in committed] == [t1.identifier, t2.identifier]
    one, two = cat.load_table(f"{ns}.one"), cat.load_table(f"{ns}.two")
    assert one.scan().to_arrow().sort_by("id")["id"].to_pylist() == [2, 3]
    assert two.scan().to_arrow().sort_by("id")["id"].to_pylist() == [5, 6]
    assert two.properties["moved"] == "yes"
    assert_same_rows(env.java_rows(f"{ns}.one"), one.scan().to_arrow(), context="Java, table one")
    assert_same_rows(env.java_rows(f"{ns}.two"), two.scan().to_arrow(), context="Java, table two")


@pytest.mark.parametrize("env", [k for k in KINDS if k != "filesystem"], indirect=True)
def test_several_tables_all_or_none(env: Env, ns: str) -> None:
    """A conflict on one table fails the commit of all: nothing lands, no file is left (the
    filesystem catalog refuses multi-table commits: the test above)."""
    cat = env.catalog
    t1, t2 = table_of(env, f"{ns}.one", [1]), table_of(env, f"{ns}.two", [5, 6])
    before1 = t1.metadata_location
    tx1, tx2 = t1.transaction(), t2.transaction()
    tx1.append(rows([2]))
    tx2.delete("id = 5")
    cat.load_table(f"{ns}.two").delete("id = 6")  # the same file, first
    with pytest.raises(CommitConflictError):
        cat.commit_transaction(tx1, tx2)
    assert cat.load_table(f"{ns}.one").metadata_location == before1
    assert orphans(cat.load_table(f"{ns}.one")) == ()
    assert orphans(cat.load_table(f"{ns}.two")) == ()
    assert cat.load_table(f"{ns}.one").scan().count() == 1


@pytest.mark.parametrize("env", ["sqlite"], indirect=True)  # checked before the catalog is asked
def test_bad_multi_table_commits_are_refused(env: Env, ns: str, tmp_path: Path) -> None:
    cat = env.catalog
    t = table_of(env, f"{ns}.b", [1])
    other = icefloe.load_catalog("elsewhere", type="filesystem", warehouse=str(tmp_path / "other"))
    other.create_namespace("db")
    o = other.create_table("db.o", SCHEMA)
    tx, ox = t.transaction(), o.transaction()
    tx.append(rows([2]))
    ox.append(rows([3]))
    with pytest.raises(ValidationError, match="one atomic commit covers the tables of one catalog"):
        cat.commit_transaction(tx, ox)
    with pytest.raises(ValidationError, match="two transactions of table"):
        cat.commit_transaction(tx, cat.load_table(f"{ns}.b").transaction())
    with pytest.raises(ValidationError, match="at least one"):
        cat.commit_transaction()
    # Nothing was closed by the refusals.
    cat.commit_transaction(tx)
    assert cat.load_table(f"{ns}.b").scan().count() == 2
    ox.abort()


@pytest.mark.parametrize("env", ["filesystem"], indirect=True)  # the catalog plays no part
def test_merge_with_schema_evolution_is_one_commit_or_nothing(env: Env, ns: str) -> None:
    """`merge(..., merge_schema=True)` commits the new column with the rows as one version (its
    rows against Java: tests/spark4/test_spark4_merge_schema.py); a MERGE that fails leaves the
    schema as it was and no file behind; branches refuse it."""
    t = table_of(env, f"{ns}.m", [1, 2])
    before = t.metadata_location
    source = pa.table({"id": pa.array([2, 3], pa.int64()), "name": ["u2", "n3"], "score": [2.5, 3.5]})
    merger = t.merge(source, "target.id = source.id", merge_schema=True)
    merger.when_matched_update_all().when_not_matched_insert_all().execute()
    loaded = env.catalog.load_table(f"{ns}.m")
    assert [e["metadata-file"] for e in loaded.metadata.metadata_log()][-1] == before
    assert [f.name for f in loaded.schema().fields] == ["id", "name", "score"]
    got = loaded.scan().to_arrow().sort_by("id").to_pylist()
    assert got == [
        {"id": 1, "name": "n1", "score": None},
        {"id": 2, "name": "u2", "score": 2.5},
        {"id": 3, "name": "n3", "score": 3.5},
    ]
    # Two source rows of one key: the MERGE fails; nothing of it lands.
    bad = pa.table({"id": pa.array([1, 1], pa.int64()), "name": ["a", "b"], "extra": ["x", "y"]})
    merger = loaded.merge(bad, "target.id = source.id", merge_schema=True)
    with pytest.raises(ValidationError):
        merger.when_matched_update_all().execute()
    again = env.catalog.load_table(f"{ns}.m")
    assert again.metadata_location == loaded.metadata_location
    assert "extra" not in [f.name for f in again.schema().fields]
    assert orphans(again) == ()
    with pytest.raises(NotSupportedError, match="branches"):
        again.merge(source, "target.id = source.id", branch="b", merge_schema=True)


@pytest.mark.parametrize("env", ["filesystem"], indirect=True)
def test_merge_with_schema_evolution_on_spark_35(env: Env, ns: str) -> None:
    """On PySpark 3.5: `icefloe.spark.merge(..., merge_schema=True)` evolves the schema in its
    commit as in process; the statement `MERGE WITH SCHEMA EVOLUTION` is Spark 4.1's, refused
    by Spark 3.5's parser and so by `icefloe.spark.sql` there (its rows against Java's on Spark
    4.1: tests/spark4/test_spark4_merge_schema.py)."""
    import icefloe.spark

    spark = env.spark
    t = table_of(env, f"{ns}.s", [1, 2])
    before = t.metadata_location
    src = spark.createDataFrame([(2, "u2", 7), (3, "n3", 8)], "id bigint, name string, level int")
    builder = icefloe.spark.merge(src, t, "target.id = source.id", merge_schema=True)
    builder.when_matched_update_all().when_not_matched_insert_all().execute()
    loaded = env.catalog.load_table(f"{ns}.s")
    assert [e["metadata-file"] for e in loaded.metadata.metadata_log()][-1] == before
    assert sorted(tuple(r.values()) for r in loaded.scan().to_arrow().to_pylist()) == sorted(
        [(1, "n1", None), (2, "u2", 7), (3, "n3", 8)]
    )
    src.createOrReplaceTempView("mse_src")
    text = (
        f"MERGE WITH SCHEMA EVOLUTION INTO ice.{ns}.s AS t USING mse_src AS s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET *"
    )
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
        spark.sql(text.replace("ice.", f"{env.java}."))
    with pytest.raises(ValidationError, match=r"Spark 4\.1's statement"):
        icefloe.spark.sql(spark, text, catalogs={"ice": env.catalog})


@pytest.mark.parametrize("env", ["filesystem"], indirect=True)  # the catalog plays no part
def test_update_and_merge_join_the_transaction(env: Env, ns: str) -> None:
    """`tx.update` and `tx.merge(...).execute()` stage their snapshots like the other writes:
    one version, each seeing the rows staged before it; Java reads the result."""
    t = table_of(env, f"{ns}.u", [1, 2, 3])
    before = t.metadata_location
    with t.transaction() as tx:
        tx.append(rows([4]))
        tx.update("id = 4", {"name": "four"})  # a row appended in this transaction
        source = rows([3, 5], "m")
        merger = tx.merge(source, "target.id = source.id")
        merger.when_matched_update_all().when_not_matched_insert_all().execute()
        assert env.catalog.load_table(f"{ns}.u").metadata_location == before
    loaded = env.catalog.load_table(f"{ns}.u")
    assert [e["metadata-file"] for e in loaded.metadata.metadata_log()][-1] == before
    got = loaded.scan().to_arrow().sort_by("id")
    assert got.to_pydict() == {"id": [1, 2, 3, 4, 5], "name": ["n1", "n2", "m3", "four", "m5"]}
    assert len(loaded.snapshots()) == 4
    assert_same_rows(env.java_rows(f"{ns}.u"), got, context="Java reading a transaction's update and merge")
    assert orphans(loaded) == ()
