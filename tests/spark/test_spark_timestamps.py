"""Iceberg `timestamp` (without zone) on Spark is a wall-clock time, Spark's `timestamp_ntz`,
as Iceberg Java's Spark reads it; `timestamptz` is Spark's `timestamp`. In a session whose
time zone is not UTC a wrong mapping shows (a `timestamp` read as Spark's `timestamp` is
rendered shifted by the session's offset), and a table's own rows could not be written back
(a `timestamp_ntz` column is refused as a `timestamp`). Checked against Java's reads in a
session at UTC-5: the Spark types, the rendered strings, a read-append round trip, UPDATE
and MERGE."""

from __future__ import annotations

from typing import Any

import pytest
from support.oracle import Oracle, assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]


@pytest.fixture
def new_york(spark: Any) -> Any:
    key = "spark.sql.session.timeZone"
    before = spark.conf.get(key)
    spark.conf.set(key, "America/New_York")
    yield
    spark.conf.set(key, before)


def _rendered(df: Any) -> list[tuple[Any, ...]]:
    return sorted(
        tuple(r) for r in df.selectExpr("id", "CAST(ts AS STRING)", "CAST(tstz AS STRING)").collect()
    )


def test_timestamps_read_write_and_change_as_java_in_a_non_utc_session(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, new_york: Any
) -> None:
    import icefloe.spark

    ours_q, q = oracle.qualified(table_name), oracle.qualified(f"{table_name}_java")
    for name in (ours_q, q):
        oracle.sql(
            f"CREATE TABLE {name} (id bigint, ts timestamp_ntz, tstz timestamp) USING iceberg "
            "TBLPROPERTIES ('format-version'='2')"
        )
        oracle.sql(
            f"INSERT INTO {name} VALUES "
            "(1, TIMESTAMP_NTZ '2024-03-10 01:30:00', TIMESTAMP '2024-03-10 01:30:00'), "
            "(2, TIMESTAMP_NTZ '1969-12-31 23:59:59.999999', TIMESTAMP '1969-12-31 23:59:59.999999'), "
            "(3, NULL, NULL)"
        )
    table = catalog.load_table(table_name)
    ours = icefloe.spark.read(spark, table)
    java = spark.table(q)
    assert [f.dataType for f in ours.schema.fields] == [f.dataType for f in java.schema.fields]
    assert _rendered(ours) == _rendered(java)
    assert _rendered(ours)[0][:2] == (1, "2024-03-10 01:30:00")

    # The table's own rows go back in (the read's types are the table's), and UPDATE and
    # MERGE write the rows they read.
    icefloe.spark.append(ours.where("id = 1").selectExpr("id + 10 AS id", "ts", "tstz"), table)
    oracle.sql(f"INSERT INTO {q} SELECT id + 10, ts, tstz FROM {q} WHERE id = 1")
    icefloe.spark.update(spark, catalog.load_table(table_name), "id = 2", {"ts": "ts + INTERVAL 1 HOUR"})
    oracle.sql(f"UPDATE {q} SET ts = ts + INTERVAL 1 HOUR WHERE id = 2")
    src = spark.sql(
        "SELECT 3L AS id, TIMESTAMP_NTZ '2000-01-01 12:00:00' AS ts, TIMESTAMP '2000-01-01 12:00:00' AS tstz"
    )
    merge = icefloe.spark.merge(src, catalog.load_table(table_name), "target.id = source.id")
    merge.when_matched_update_all().execute()
    oracle.sql(
        f"UPDATE {q} SET ts = TIMESTAMP_NTZ '2000-01-01 12:00:00', tstz = TIMESTAMP '2000-01-01 12:00:00' "
        "WHERE id = 3"
    )
    after = icefloe.spark.read(spark, catalog.load_table(table_name))
    assert _rendered(after) == _rendered(spark.table(q))
    assert _rendered(spark.table(ours_q)) == _rendered(spark.table(q))  # Java reads ours
    assert_same_rows(after, spark.table(q))
