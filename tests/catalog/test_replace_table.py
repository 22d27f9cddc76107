"""`catalog.replace_table_transaction(...)`, `create_or_replace_table_transaction(...)` and
`create_or_replace_table(...)` against Iceberg Java's `REPLACE TABLE`, `CREATE OR REPLACE TABLE`
and `CREATE OR REPLACE TABLE ... AS SELECT` (Spark SQL on the same catalog: HadoopCatalog for
the filesystem catalog, JdbcCatalog on sqlite for the SQL catalog, the REST catalog against
Apache Iceberg's RESTCatalogServer).

Twin tables are made alike by Java (schema, partitioning, sort order, properties, two
snapshots, a tag and a branch); one is replaced by Java, the other by icefloe, and then both
are compared: schemas with field ids and schema ids, specs with partition field ids, sort
orders, the current snapshot (none after a bare replace; after AS SELECT one `append` without a
parent), snapshot log, metadata log and refs (by the position of the snapshot they name),
properties, and rows read by both engines; time travel to a snapshot from before the replace
reads the old rows in both engines. A commit made between the replace's start and its commit
makes the commit a CommitConflictError and leaves none of its files.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe.exceptions import CommitConflictError, NoSuchTableError
from icefloe.partitioning import PartitionField, PartitionSpec
from support.catalogs import TwinEnv, files_under, twin_catalog
from support.oracle import assert_same_rows

KINDS_HERE = ("filesystem", "sqlite", "rest")

# The replacement's columns: `name`, `id`, `s.b` and `m` (key and value) exist in the old table
# (their ids are kept), `extra`, `cat`, `s.c` and `l` are new. Spark makes every column of a
# replaced table nullable.
NEW_SCHEMA = pa.schema(
    [
        pa.field("name", pa.string()),
        pa.field("id", pa.int64()),
        pa.field("extra", pa.int32()),
        pa.field("cat", pa.string()),
        pa.field("s", pa.struct([pa.field("b", pa.string()), pa.field("c", pa.int32())])),
        pa.field("m", pa.map_(pa.string(), pa.int32())),
        pa.field("l", pa.list_(pa.struct([pa.field("x", pa.int32())]))),
    ]
)
NEW_COLUMNS_SQL = (
    "name string, id bigint, extra int, cat string, s struct<b:string, c:int>, m map<string, int>, "
    "l array<struct<x:int>>"
)
# Source ids are the positions in NEW_SCHEMA (1-based) as `schema_from_arrow` numbers them.
NEW_SPEC = PartitionSpec(
    PartitionField(source_id=4, field_id=1000, transform="identity", name="cat"),
    PartitionField(source_id=2, field_id=1001, transform="bucket[4]", name="id_bucket"),
)
NEW_SPEC_SQL = "PARTITIONED BY (cat, bucket(4, id))"


class Env(TwinEnv):
    """One catalog kind (see `support.catalogs.TwinEnv`)."""

    def sql(self, text: str) -> Any:
        return self.spark.sql(text.replace("CAT.", f"{self.java}."))

    def java_rows(self, ident: str, version: int | None = None) -> Any:
        at = f" VERSION AS OF {version}" if version is not None else ""
        return self.spark.sql(f"SELECT * FROM {self.java}.{ident}{at}")


@pytest.fixture(params=KINDS_HERE)
def env(request: pytest.FixtureRequest, tmp_path: Path, spark: Any) -> Iterator[Env]:
    catalog, name, s3 = twin_catalog(request, request.param, tmp_path, spark, "rpl")
    yield Env(request.param, catalog, spark, name, s3)


@pytest.fixture
def ns(env: Env) -> str:
    return env.new_namespace()


def _make_old_table(env: Env, ident: str) -> int:
    """The table both twins start as, made by Java: two snapshots, a tag on the first, a
    branch, a sort order. Returns the id of the first snapshot."""
    env.sql(
        f"CREATE TABLE CAT.{ident} (id bigint, name string, ts timestamp, s struct<a:int, b:string>, "
        "m map<string, int>) USING iceberg "
        "PARTITIONED BY (bucket(8, id)) TBLPROPERTIES ('format-version'='2', 'k1'='old', 'keep'='me')"
    )
    env.sql(f"ALTER TABLE CAT.{ident} WRITE ORDERED BY name")
    env.sql(
        f"INSERT INTO CAT.{ident} VALUES (1, 'a', TIMESTAMP '2024-01-01 00:00:00', "
        "named_struct('a', 1, 'b', 'x'), map('k', 1)), (2, 'b', NULL, NULL, NULL)"
    )
    first = env.catalog.load_table(ident).metadata.current_snapshot_id
    assert first is not None
    env.sql(f"ALTER TABLE CAT.{ident} CREATE TAG t1 AS OF VERSION {first}")
    env.sql(f"INSERT INTO CAT.{ident} VALUES (3, 'c', NULL, NULL, map('j', 2))")
    env.sql(f"ALTER TABLE CAT.{ident} CREATE BRANCH b1")
    return first


def _shape(table: Any) -> dict[str, Any]:
    """What a replace decides, with snapshot ids turned into positions in the table's list of
    snapshots (the twins' ids differ) and times left out."""
    md = json.loads(table.metadata.to_json())
    order = [s["snapshot-id"] for s in md.get("snapshots", [])]

    def pos(sid: Any) -> Any:
        return order.index(sid) if sid in order else sid

    current = md.get("current-snapshot-id")
    current = None if current in (None, -1) else current
    snaps = {s["snapshot-id"]: s for s in md.get("snapshots", [])}
    cur = snaps.get(current) if current is not None else None
    props = dict(md.get("properties", {}))
    return {
        "format-version": md["format-version"],
        "schemas": md["schemas"],
        "current-schema-id": md["current-schema-id"],
        "last-column-id": md["last-column-id"],
        "partition-specs": md["partition-specs"],
        "default-spec-id": md["default-spec-id"],
        "last-partition-id": md["last-partition-id"],
        "sort-orders": md["sort-orders"],
        "default-sort-order-id": md["default-sort-order-id"],
        "current-snapshot": None
        if cur is None
        else {
            "position": pos(current),
            "parent": pos(cur.get("parent-snapshot-id")),
            "operation": cur["summary"]["operation"],
            "added-records": cur["summary"].get("added-records"),
            "total-records": cur["summary"].get("total-records"),
            "schema-id": cur.get("schema-id"),
        },
        "snapshots": len(order),
        "snapshot-log": [pos(e["snapshot-id"]) for e in md.get("snapshot-log", [])],
        "metadata-log": len(md.get("metadata-log", [])),
        "refs": {k: (v["type"], pos(v["snapshot-id"])) for k, v in md.get("refs", {}).items()},
        "properties": props,
    }


def _assert_twins(env: Env, java_ident: str, ours_ident: str, uuids: tuple[str, str]) -> None:
    j = env.catalog.load_table(java_ident)
    o = env.catalog.load_table(ours_ident)
    assert j.metadata.table_uuid == uuids[0], "Java's replace keeps the table uuid"
    assert o.metadata.table_uuid == uuids[1]
    sj, so = _shape(j), _shape(o)
    for key in sj:
        assert so[key] == sj[key], f"{key}: icefloe {so[key]!r} != Java {sj[key]!r}"
    # Rows read by both engines, of both twins.
    assert_same_rows(o.scan().to_arrow(), env.java_rows(java_ident), context="icefloe's twin vs Java's")
    assert_same_rows(env.java_rows(ours_ident), env.java_rows(java_ident), context="Java reads both")
    assert_same_rows(j.scan().to_arrow(), env.java_rows(java_ident), context="icefloe reads Java's")


def _assert_time_travel(env: Env, ident: str, first: int) -> None:
    """The snapshot from before the replace still reads the old rows, in both engines."""
    old = env.catalog.load_table(ident).scan(snapshot_id=first).to_arrow()
    assert sorted(old.column("id").to_pylist()) == [1, 2]
    assert old.column_names == ["id", "name", "ts", "s", "m"]
    assert_same_rows(old, env.java_rows(ident, first), context=f"{ident} VERSION AS OF {first}")


def test_replace_table_matches_java(env: Env, ns: str) -> None:
    java, ours = f"{ns}.j", f"{ns}.o"
    firsts = [_make_old_table(env, t) for t in (java, ours)]
    uuids = (
        env.catalog.load_table(java).metadata.table_uuid,
        env.catalog.load_table(ours).metadata.table_uuid,
    )

    env.sql(
        f"REPLACE TABLE CAT.{java} ({NEW_COLUMNS_SQL}) USING iceberg {NEW_SPEC_SQL} "
        "TBLPROPERTIES ('k1'='new', 'k2'='v2')"
    )
    txn = env.catalog.replace_table_transaction(
        ours, NEW_SCHEMA, NEW_SPEC, properties={"k1": "new", "k2": "v2"}
    )
    assert txn.table.metadata.current_snapshot_id is None
    t = txn.commit_transaction()
    assert t.metadata.current_snapshot_id is None

    _assert_twins(env, java, ours, (uuids[0] or "", uuids[1] or ""))
    shape = _shape(env.catalog.load_table(ours))
    assert shape["current-snapshot"] is None and shape["refs"].keys() == {"t1", "b1"}
    assert env.catalog.load_table(ours).scan().to_arrow().num_rows == 0
    for ident, first in zip((java, ours), firsts):
        _assert_time_travel(env, ident, first)

    # Replaced again by the same definition (Spark's CREATE OR REPLACE TABLE): the schema and
    # spec are reused, not added again.
    env.sql(
        f"CREATE OR REPLACE TABLE CAT.{java} ({NEW_COLUMNS_SQL}) USING iceberg {NEW_SPEC_SQL} "
        "TBLPROPERTIES ('k3'='v3')"
    )
    env.catalog.create_or_replace_table(ours, NEW_SCHEMA, NEW_SPEC, properties={"k3": "v3"})
    _assert_twins(env, java, ours, (uuids[0] or "", uuids[1] or ""))


def test_create_or_replace_as_select_matches_java(env: Env, ns: str) -> None:
    java, ours = f"{ns}.j", f"{ns}.o"
    firsts = [_make_old_table(env, t) for t in (java, ours)]
    uuids = (
        env.catalog.load_table(java).metadata.table_uuid,
        env.catalog.load_table(ours).metadata.table_uuid,
    )
    values = [("x", 10, 1, "p"), ("y", 11, None, "q"), ("z", 12, 3, "p")]
    nested_sql = "named_struct('b', 'sb', 'c', 5), map('k', 7), array(named_struct('x', 9))"

    env.sql(
        f"CREATE OR REPLACE TABLE CAT.{java} USING iceberg {NEW_SPEC_SQL} "
        "TBLPROPERTIES ('format-version'='3', 'k1'='new') AS SELECT * FROM VALUES "
        + ", ".join(
            f"('{n}', CAST({i} AS BIGINT), CAST({e or 'NULL'} AS INT), '{c}', {nested_sql})"
            for n, i, e, c in values
        )
        + " AS v(name, id, extra, cat, s, m, l)"
    )
    rows = pa.table(
        {
            "name": [v[0] for v in values],
            "id": pa.array([v[1] for v in values], pa.int64()),
            "extra": pa.array([v[2] for v in values], pa.int32()),
            "cat": [v[3] for v in values],
            "s": [{"b": "sb", "c": 5}] * 3,
            "m": [[("k", 7)]] * 3,
            "l": [[{"x": 9}]] * 3,
        },
        schema=NEW_SCHEMA,
    )
    with env.catalog.create_or_replace_table_transaction(
        ours, NEW_SCHEMA, NEW_SPEC, properties={"format-version": "3", "k1": "new"}
    ) as txn:
        # Spark's AS SELECT writes an overwrite of everything (Java's overwriteByRowFilter(true)).
        txn.overwrite(rows)
        # Staged: the table itself has not changed yet.
        assert env.catalog.load_table(ours).scan().to_arrow().num_rows == 3

    _assert_twins(env, java, ours, (uuids[0] or "", uuids[1] or ""))
    shape = _shape(env.catalog.load_table(ours))
    assert shape["format-version"] == 3
    assert (
        shape["current-snapshot"]["parent"] is None and shape["current-snapshot"]["operation"] == "overwrite"
    )
    for ident, first in zip((java, ours), firsts):
        _assert_time_travel(env, ident, first)


def test_create_or_replace_creates_a_missing_table(env: Env, ns: str) -> None:
    java, ours = f"{ns}.j", f"{ns}.o"
    env.sql(f"CREATE OR REPLACE TABLE CAT.{java} ({NEW_COLUMNS_SQL}) USING iceberg {NEW_SPEC_SQL}")
    with pytest.raises(NoSuchTableError):
        env.catalog.replace_table_transaction(ours, NEW_SCHEMA, NEW_SPEC)
    env.catalog.create_or_replace_table(ours, NEW_SCHEMA, NEW_SPEC)
    j, o = env.catalog.load_table(java), env.catalog.load_table(ours)
    for key in ("current-schema-id", "default-spec-id", "last-partition-id"):
        assert _shape(o)[key] == _shape(j)[key], key
    assert json.loads(o.metadata.schema_json())["fields"] == json.loads(j.metadata.schema_json())["fields"]
    assert json.loads(o.metadata.spec_json()) == json.loads(j.metadata.spec_json())
    assert o.metadata.current_snapshot_id is None and j.metadata.current_snapshot_id is None


def test_a_commit_meanwhile_fails_the_replace_and_its_files_go(env: Env, ns: str) -> None:
    ident = f"{ns}.t"
    _make_old_table(env, ident)
    location = env.catalog.load_table(ident).location()
    before = files_under(location, env.s3)
    txn = env.catalog.replace_table_transaction(ident, NEW_SCHEMA, NEW_SPEC)
    one = {"name": ["n"], "id": [7], "extra": [1], "cat": ["c"], "s": [None], "m": [None], "l": [None]}
    txn.append(pa.table(one, schema=NEW_SCHEMA))
    written = files_under(location, env.s3) - before
    assert any("cat=c" in f for f in written), "the transaction wrote its data file"
    env.sql(f"INSERT INTO CAT.{ident} VALUES (4, 'd', NULL, NULL, NULL)")  # a concurrent commit (Java's)
    before_commit = files_under(location, env.s3)
    with pytest.raises(CommitConflictError):
        txn.commit_transaction()
    after = files_under(location, env.s3)
    # Every file the transaction wrote is gone; the table's own (and Java's new) ones stay.
    assert not (written & after), sorted(written & after)
    assert before_commit - written == after
    t = env.catalog.load_table(ident)
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]
    assert_same_rows(t.scan().to_arrow(), env.java_rows(ident), context="after the failed replace")


def test_an_aborted_replace_leaves_the_table_and_its_files(env: Env, ns: str) -> None:
    ident = f"{ns}.t"
    first = _make_old_table(env, ident)
    table = env.catalog.load_table(ident)
    location, version = table.location(), table.metadata_location
    before = files_under(location, env.s3)
    one = {"name": ["n"], "id": [7], "extra": [1], "cat": ["c"], "s": [None], "m": [None], "l": [None]}
    with pytest.raises(RuntimeError, match="stop"):
        with env.catalog.replace_table_transaction(ident, NEW_SCHEMA, NEW_SPEC) as txn:
            txn.append(pa.table(one, schema=NEW_SCHEMA))
            assert files_under(location, env.s3) - before
            raise RuntimeError("stop")
    assert files_under(location, env.s3) == before
    assert env.catalog.load_table(ident).metadata_location == version
    assert_same_rows(env.catalog.load_table(ident).scan().to_arrow(), env.java_rows(ident))
    _assert_time_travel(env, ident, first)
