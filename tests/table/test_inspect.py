"""Metadata tables: `table.inspect.<name>()` (Rust, Arrow) and `icefloe.spark.inspect` against
Iceberg Java's `SELECT * FROM oracle.db.t.<name>` on the same tables (one warehouse, both
engines writing):

- a partitioned v2 merge-on-read table: Java and icefloe appends, Java position deletes
  (SQL DELETE), partition evolution (Java `ADD PARTITION FIELD bucket(4, id)`), icefloe
  equality deletes (`table.upsert`), a tag and a branch, then Java `expire_snapshots`;
- an unpartitioned table with Java position deletes (no `partition` column anywhere);
- a v3 table whose position deletes are deletion vectors (Puffin).

Every metadata table is compared column by column (rows as multisets, canonical values) and
by schema (names, Spark types, nesting, nullability), at the current snapshot and, for the
tables of one snapshot, at an older one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from icefloe.exceptions import ValidationError
from icefloe.inspect import METADATA_TABLES
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MOR = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)

ONE_SNAPSHOT = (
    "manifests",
    "files",
    "data_files",
    "delete_files",
    "entries",
    "partitions",
    "position_deletes",
)


def _java(oracle: Oracle, name: str, table: str, snapshot_id: int | None = None) -> Any:
    stmt = f"SELECT * FROM {oracle.qualified(name)}.{table}"
    if snapshot_id is not None:
        stmt += f" VERSION AS OF {int(snapshot_id)}"
    return oracle.spark.sql(stmt)


def _shape(t: Any) -> Any:
    """A Spark type as nested tuples of names, types and nullability (no field comments)."""
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return ("struct", tuple((f.name, _shape(f.dataType), f.nullable) for f in t.fields))
    if isinstance(t, T.ArrayType):
        return ("array", _shape(t.elementType), t.containsNull)
    if isinstance(t, T.MapType):
        return ("map", _shape(t.keyType), _shape(t.valueType), t.valueContainsNull)
    return t.simpleString()


def _assert_same_schema(ours: Any, java: Any, context: str) -> None:
    from icefloe.spark.inspect import spark_schema_of

    got = spark_schema_of(ours) if isinstance(ours, pa.Schema) else ours
    assert got.simpleString() == java.simpleString(), f"schema types differ ({context})"
    assert _shape(got) == _shape(java), f"schema nullability differs ({context}):\n{got}\n!=\n{java}"


def _compare(
    spark: Any,
    oracle: Oracle,
    catalog: Any,
    name: str,
    table: str,
    snapshot_id: int | None,
    spark_too: bool = False,
) -> None:
    import icefloe.spark
    from pyspark.sql import functions as F

    context = f"{name}.{table}@{snapshot_id}"
    t = catalog.load_table(name)
    java = _java(oracle, name, table, snapshot_id)
    ours = t.inspect.table(table, snapshot_id)
    if table == "metadata_log_entries":
        # The current metadata file is named as each catalog names it (Java's HadoopCatalog
        # adds `file:`); the previous ones come from the log as written.
        from pyspark.sql import functions as F

        java = java.withColumn("file", F.regexp_replace("file", "^file:", ""))
        ours = ours.set_column(
            1, ours.schema.field("file"), pc.replace_substring_regex(ours.column("file"), "^file:", "")
        )
    _assert_same_schema(ours.schema, java.schema, context)
    expected = java.collect()
    from support.oracle import canonical_rows_from_spark

    canon = canonical_rows_from_spark(expected, java.schema)
    assert_same_rows(ours, canon, context=context)
    if not spark_too:
        return
    on_spark = icefloe.spark.inspect(spark, t, table, snapshot_id)
    if table == "metadata_log_entries":
        on_spark = on_spark.withColumn("file", F.regexp_replace("file", "^file:", ""))
    _assert_same_schema(on_spark.schema, java.schema, "spark " + context)
    assert_same_rows(on_spark, canon, context="spark " + context)


def _compare_all(
    spark: Any, oracle: Oracle, catalog: Any, name: str, older: int | None = None, spark_too: bool = False
) -> None:
    """Every metadata table (and those of one snapshot at `older` too); all differences are
    reported together. `spark_too`: `icefloe.spark.inspect` at the current snapshot as well."""
    cases = [(table, None) for table in METADATA_TABLES]
    if older is not None:
        cases += [(table, older) for table in ONE_SNAPSHOT]
    failures = []
    for table, snapshot_id in cases:
        try:
            _compare(spark, oracle, catalog, name, table, snapshot_id, spark_too and snapshot_id is None)
        except AssertionError as e:
            failures.append(str(e)[:3000])
    assert not failures, "\n\n".join(failures)


def _rows(start: int, n: int, categories: str = "abc") -> str:
    out = []
    for i in range(start, start + n):
        c = categories[i % len(categories)]
        amount = "null" if i % 11 == 0 else f"{i * 1.25}"
        ts = dt.datetime(2024, 1, 1) + dt.timedelta(hours=i)
        info = f"named_struct('x', {i % 7}, 'tag', 't{i}')"
        out.append(f"({i}, '{c}', {amount}, TIMESTAMP '{ts:%Y-%m-%d %H:%M:%S}', {info})")
    return ", ".join(out)


def _arrow_rows(table: Any, ids: list[int], category: str, amount: float) -> pa.Table:
    schema = table.schema().as_arrow()
    data = {
        "id": ids,
        "category": [category] * len(ids),
        "amount": [amount + i for i in ids],
        "ts": [dt.datetime(2024, 3, 1, tzinfo=dt.timezone.utc)] * len(ids),
        "info": [{"x": i, "tag": f"u{i}"} for i in ids],
    }
    return pa.table(data, schema=schema)


@pytest.fixture(scope="module")
def evolved(spark: Any, oracle: Oracle, catalog: Any) -> dict[str, Any]:
    """The partitioned table's name and snapshot ids at interesting points."""
    name = new_table_name("insp")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT NOT NULL, category STRING NOT NULL, amount DOUBLE, ts TIMESTAMP, "
        f"info STRUCT<x: INT, tag: STRING>) USING iceberg PARTITIONED BY (category) "
        f"TBLPROPERTIES ('format-version'='2', {MOR})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES {_rows(1, 30)}")
    oracle.sql(f"INSERT INTO {q} VALUES {_rows(31, 10, 'ab')}")
    table = catalog.load_table(name)
    table.append(_arrow_rows(table, [100, 101, 102], "c", 0.5))
    oracle.sql(f"DELETE FROM {q} WHERE id % 5 = 0")
    before_evolution = oracle.current_snapshot_id(name)
    oracle.sql(f"ALTER TABLE {q} CREATE TAG first_tag AS OF VERSION {before_evolution}")
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD bucket(4, id)")
    oracle.sql(f"INSERT INTO {q} VALUES {_rows(200, 12)}")
    table = catalog.load_table(name)
    # icefloe equality deletes (merge-on-read upsert) on the evolved spec
    table.upsert(_arrow_rows(table, [201, 202, 300], "a", 7.0), join_cols=["id", "category"])
    oracle.sql(f"DELETE FROM {q} WHERE id = 205 OR id = 7")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    before_expiry = oracle.current_snapshot_id(name)
    snaps = oracle.snapshot_ids(name)
    return {
        "name": name,
        "before_evolution": before_evolution,
        "before_expiry": before_expiry,
        "snapshots": snaps,
    }


def test_partitioned_evolved_table_before_expiry(
    spark: Any, oracle: Oracle, catalog: Any, evolved: dict[str, Any]
) -> None:
    _compare_all(spark, oracle, catalog, evolved["name"], older=evolved["before_evolution"], spark_too=True)
    # the table really holds what the comparison claims to cover
    t = catalog.load_table(evolved["name"])
    deletes = t.inspect.delete_files().to_pylist()
    assert {d["content"] for d in deletes} == {1, 2}, "position and equality deletes"
    assert {d["spec_id"] for d in t.inspect.files().to_pylist()} == {0, 1}, "files of both specs"
    assert {r["type"] for r in t.inspect.refs().to_pylist()} == {"BRANCH", "TAG"}
    assert t.inspect.position_deletes().num_rows >= 8, "deleted positions listed"
    assert t.inspect.partitions().num_rows >= 4, "partitions of both specs"
    assert t.inspect.all_manifests().num_rows > t.inspect.manifests().num_rows
    metrics = t.inspect.data_files().column("readable_metrics").type
    assert [f.name for f in metrics] == ["amount", "category", "id", "info.tag", "info.x", "ts"]


def test_partitioned_evolved_table_after_expiry(
    spark: Any, oracle: Oracle, catalog: Any, evolved: dict[str, Any]
) -> None:
    name = evolved["name"]
    snaps = evolved["snapshots"]
    # expire the two oldest snapshots (the tag keeps its own)
    oracle.sql(
        f"CALL oracle.system.expire_snapshots(table => '{name}', "
        f"older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => {len(snaps) - 2})"
    )
    t = catalog.load_table(name)
    left = [s["snapshot_id"] for s in t.inspect.snapshots().to_pylist()]
    assert snaps[0] not in left and snaps[1] not in left and len(left) < len(snaps)
    _compare_all(spark, oracle, catalog, name, older=evolved["before_evolution"])


def test_unpartitioned_table(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("insp_u")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT NOT NULL, category STRING NOT NULL, amount DOUBLE, ts TIMESTAMP, "
        f"info STRUCT<x: INT, tag: STRING>) USING iceberg TBLPROPERTIES ('format-version'='2', {MOR})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES {_rows(1, 20)}")
    first = oracle.current_snapshot_id(name)
    table = catalog.load_table(name)
    table.append(_arrow_rows(table, [50, 51], "z", 1.0))
    oracle.sql(f"DELETE FROM {q} WHERE id < 4")
    _compare_all(spark, oracle, catalog, name, older=first, spark_too=True)
    assert "partition" not in catalog.load_table(name).inspect.files().column_names


def test_v3_deletion_vectors(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("insp_dv")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT NOT NULL, category STRING NOT NULL, amount DOUBLE, ts TIMESTAMP, "
        f"info STRUCT<x: INT, tag: STRING>) USING iceberg PARTITIONED BY (category) "
        f"TBLPROPERTIES ('format-version'='3', {MOR})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES {_rows(1, 24)}")
    oracle.sql(f"DELETE FROM {q} WHERE id % 4 = 0")
    t = catalog.load_table(name)
    assert {d["file_format"] for d in t.inspect.delete_files().to_pylist()} == {"PUFFIN"}
    for table in METADATA_TABLES:
        _compare(spark, oracle, catalog, name, table, None)


def test_empty_table_and_bad_arguments(spark: Any, oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("insp_e")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, s STRING) USING iceberg PARTITIONED BY (s)"
    )
    for table in METADATA_TABLES:
        _compare(spark, oracle, catalog, name, table, None)
    t = catalog.load_table(name)
    with pytest.raises(ValidationError, match="metadata table name"):
        t.inspect.table("nope")
    with pytest.raises(ValidationError, match="does not read one snapshot"):
        t.inspect.table("all_files", 1)
    with pytest.raises(ValidationError):
        t.inspect.files(snapshot_id=12345)
