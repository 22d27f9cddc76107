# ruff: noqa: E501
"""Iceberg's SQL functions through `icefloe.spark.sql` against Iceberg Java's own
(`SparkFunctions`): the same query text over one table (Java's catalog and icefloe's on one
warehouse), `years` / `months` / `days` / `hours` / `bucket` / `truncate` on every type Java's
functions take, with values at the edges (nulls, -1, integer extremes, pre-1970 and far
instants, non-BMP strings, full-width decimals), in the SELECT list and in WHERE, in a UTC
session and in one whose time zone is not UTC."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.exceptions import ValidationError
from support.catalogs import java_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]

F = "sqlf"

ROWS = [
    "(1, 0, 0, DATE'1970-01-01', TIMESTAMP'1970-01-01 00:00:00', TIMESTAMP_NTZ'1970-01-01 00:00:00', 0.00, 0, '', X'')",
    "(2, -1, -1, DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', -0.01, -1, 'a', X'00')",
    "(3, 2147483647, 9223372036854775807, DATE'2026-12-06', TIMESTAMP'2026-12-06 10:11:12.123456', "
    "TIMESTAMP_NTZ'2026-12-06 10:11:12.123456', 1234567.89, 999999999999999999, 'iceberg ❄ 𝄞 snow', X'0102030405')",
    "(4, -2147483648, -9223372036854775808, DATE'1900-03-01', TIMESTAMP'1900-02-28 23:00:00.5', "
    "TIMESTAMP_NTZ'1900-02-28 23:00:00.5', -9999999.50, -999999999999999999, '🧊🧊🧊🧊🧊', X'FFFFFFFFFF')",
    "(5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "(6, 7, 12345, DATE'9999-12-31', TIMESTAMP'2262-04-11 23:47:16.854775', TIMESTAMP_NTZ'0001-01-01 00:00:00', 5.55, 10, 'snow', X'0A0B')",
]


@pytest.fixture(scope="module")
def fq(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    wh: Path = tmp_path_factory.mktemp("functions")
    set_java_catalog(spark, F, java_catalog_conf("filesystem", {"warehouse": str(wh)}, wh, None))
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {F}.db")
    spark.sql(
        f"CREATE TABLE {F}.db.v (id INT, i INT, l BIGINT, d DATE, ts TIMESTAMP, ntz TIMESTAMP_NTZ, "
        f"dec DECIMAL(9, 2), dec0 DECIMAL(18, 0), s STRING, b BINARY) USING iceberg"
    )
    spark.sql(f"INSERT INTO {F}.db.v VALUES {', '.join(ROWS)}")
    return {F: icefloe.load_catalog(F, type="filesystem", warehouse=str(wh))}


CALLS = [
    "{c}.system.years(d), {c}.system.years(ts), {c}.system.years(ntz)",
    "{c}.system.months(d), {c}.system.months(ts), {c}.system.months(ntz)",
    "{c}.system.days(d), {c}.system.days(ts), {c}.system.days(ntz)",
    "{c}.system.hours(ts), {c}.system.hours(ntz)",
    "{c}.system.bucket(16, i), {c}.system.bucket(16, l), {c}.system.bucket(7, d), {c}.system.bucket(3, CAST(id AS SMALLINT))",
    "{c}.system.bucket(7, ts), {c}.system.bucket(7, ntz), {c}.system.bucket(5, dec), {c}.system.bucket(5, dec0)",
    "{c}.system.bucket(16, s), {c}.system.bucket(16, b), {c}.bucket(1000, id)",
    "{c}.system.truncate(10, i), {c}.system.truncate(10, l), {c}.system.truncate(3, CAST(id - 4 AS TINYINT))",
    "{c}.system.truncate(50, dec), {c}.system.truncate(7, dec0), {c}.truncate(3, s), {c}.system.truncate(2, b)",
    "{c}.system.bucket(4, {c}.system.truncate(2, s)), {c}.system.days(ts) < DATE'2000-01-01'",
]


def _same(spark: Any, catalogs: dict[str, Any], text: str) -> None:
    java = spark.sql(text.format(c=F))
    ours = icefloe.spark.sql(spark, text.format(c=F), catalogs=catalogs)
    assert [f.dataType for f in ours.schema.fields] == [f.dataType for f in java.schema.fields], text
    assert_same_rows(ours, java, check_columns=False, context=text)


# The time zone is the query's, not Spark's: the other zone runs on PySpark 3.5 only.
@pytest.mark.parametrize(
    "zone", ["UTC", pytest.param("America/Los_Angeles", marks=pytest.mark.one_spark_line)]
)
@pytest.mark.parametrize("calls", CALLS)
def test_functions_return_javas_values(spark: Any, fq: dict[str, Any], calls: str, zone: str) -> None:
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        _same(spark, fq, f"SELECT id, {calls} FROM {{c}}.db.v")
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


@pytest.mark.parametrize(
    "text",
    [
        "SELECT id FROM {c}.db.v WHERE {c}.system.bucket(4, id) = 1",
        "SELECT id, s FROM {c}.db.v WHERE {c}.system.truncate(3, s) = 'ice' OR {c}.system.years(d) < 0",
        "SELECT {c}.system.bucket(16, 'iceberg'), {c}.system.truncate(3, 'iceberg'), {c}.system.days(DATE'2020-02-29')",
        "WITH w AS (SELECT id, ts FROM {c}.db.v) SELECT id, {c}.system.hours(ts) FROM w",
        "SELECT {c}.system.months(ts) AS m, count(*) FROM {c}.db.v GROUP BY 1",
        # arguments naming a column of an outer query (correlated subqueries)
        "SELECT id FROM {c}.db.v o WHERE EXISTS (SELECT 1 FROM {c}.db.v i "
        "WHERE {c}.system.bucket(4, o.l) = {c}.system.bucket(4, i.l) AND i.id < o.id)",
        "SELECT id FROM {c}.db.v o WHERE o.id IN (SELECT i.id FROM {c}.db.v i "
        "WHERE {c}.system.years(o.ts) = {c}.system.years(i.ts) OR {c}.system.truncate(2, o.s) = i.s)",
        "SELECT id, (SELECT count(*) FROM {c}.db.v i WHERE {c}.system.truncate(1, o.s) = {c}.system.truncate(1, i.s)) AS n "
        "FROM {c}.db.v o",
    ],
)
def test_functions_in_where_ctes_and_groups_as_java(spark: Any, fq: dict[str, Any], text: str) -> None:
    _same(spark, fq, text)


def test_iceberg_version_and_refusals(spark: Any, fq: dict[str, Any]) -> None:
    got = icefloe.spark.sql(spark, f"SELECT {F}.system.iceberg_version()", catalogs=fq).collect()[0][0]
    assert got == f"icefloe {icefloe.__version__}"
    for text, message in [
        (f"SELECT {F}.system.bucket(16, 1.5D)", "bucket: cannot apply to a value of type double"),
        (f"SELECT {F}.system.hours(d) FROM {F}.db.v", "hours: cannot apply to a value of type date"),
        (f"SELECT {F}.system.bucket(id, id) FROM {F}.db.v", "bucket: the width must be an integer literal"),
        (f"SELECT {F}.system.truncate(0, s) FROM {F}.db.v", "truncate: the width must be positive"),
        (f"SELECT {F}.system.days(d, d) FROM {F}.db.v", "days: expected 1 argument, found 2"),
    ]:
        with pytest.raises(ValidationError, match=message):
            icefloe.spark.sql(spark, text, catalogs=fq)


@pytest.mark.parametrize(
    "text",
    [
        "DELETE FROM {t} WHERE {c}.system.bucket(4, id) = 1 OR {c}.system.truncate(2, b) = X'FFFF'",
        "DELETE FROM {t} WHERE id IN (SELECT id FROM {c}.db.v WHERE {c}.system.years(d) < 0)",
        "UPDATE {t} SET s = {c}.system.truncate(2, s), dec = {c}.system.truncate(50, dec), i = {c}.system.years(ts) "
        "WHERE {c}.system.days(ts) < DATE'2000-01-01' OR {c}.system.bucket(16, s) = 2",
        "MERGE INTO {t} AS t USING (SELECT id + 3 AS id, ts, {c}.system.truncate(3, s) AS s FROM {c}.db.v) AS u "
        "ON t.id = u.id - 3 AND {c}.system.years(t.ts) = {c}.system.years(u.ts) "
        "WHEN MATCHED AND {c}.system.bucket(16, t.s) > 3 THEN UPDATE SET t.l = {c}.system.hours(u.ts) "
        "WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED THEN INSERT (id, i, l, d, ts, ntz, dec, dec0, s, b) "
        "VALUES (u.id, {c}.system.bucket(8, u.id), NULL, NULL, u.ts, NULL, NULL, NULL, u.s, NULL)",
        "DELETE FROM {t} AS x WHERE EXISTS (SELECT 1 FROM {c}.db.v u WHERE u.id = x.id + 1 "
        "AND {c}.system.bucket(2, x.s) = {c}.system.bucket(2, u.s))",
        "INSERT INTO {t} SELECT id + 10, {c}.system.bucket(16, l), l, {c}.system.days(ts), ts, ntz, dec, dec0, "
        "{c}.system.truncate(1, s), b FROM {c}.db.v",
    ],
    ids=["delete", "delete-subquery", "update", "merge", "delete-correlated", "insert"],
)
def test_functions_in_dml_write_javas_rows(spark: Any, fq: dict[str, Any], text: str) -> None:
    """Iceberg's functions in DELETE / UPDATE / MERGE / INSERT (WHERE, SET values, ON, clause
    conditions and values, subqueries): the same statement by Java on one twin and by icefloe
    on the other leaves the same rows."""
    import uuid

    twins = {who: f"{F}.db.{who}_{uuid.uuid4().hex[:8]}" for who in ("java", "ours")}
    for name in twins.values():
        spark.sql(f"CREATE TABLE {name} USING iceberg AS SELECT * FROM {F}.db.v")
    spark.sql(text.format(c=F, t=twins["java"]))
    icefloe.spark.sql(spark, text.format(c=F, t=twins["ours"]), catalogs=fq)
    java, ours = spark.table(twins["java"]), spark.table(twins["ours"])
    assert ours.count() > 0
    assert_same_rows(ours, java, context=text)
    assert_same_rows(
        icefloe.spark.sql(spark, f"SELECT * FROM {twins['ours']}", catalogs=fq), java, context=text
    )
