"""Timestamp literals in `icefloe.spark.sql`'s WHERE clauses, read as Spark reads them.

A timestamp literal without an offset is a local time in the session's time zone
(`spark.sql.session.timeZone`), and `TIMESTAMP` means `TIMESTAMP_LTZ` or `TIMESTAMP_NTZ` as
`spark.sql.timestampType` says. `filters.true_of` turns the literals it reads exactly into
icefloe row filters (scan pruning, DELETE / UPDATE without Spark's evaluation, aggregate
pushdown over time partitions) and leaves the rest to Spark. Proven here against Spark and
Iceberg Java in zones with and without clock changes:

- every literal it translates names the instant (or local time) Spark's own evaluation of the
  same literal gives, and it declines the local times a zone skips or repeats;
- queries, DELETEs and aggregates over a table partitioned by `days(ts), hours(ntz)` give
  Java's rows, with the filters pushed where they translate.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from icefloe.spark.sql.dialect import IcebergSpark
from icefloe.spark.sql.filters import Timestamps, true_of
from sqlglot import parse_one
from support.oracle import assert_same_rows
from support.sql_twins import SqlTwins

pytestmark = [pytest.mark.spark, pytest.mark.interop]

Q, J, K = "tsq", "tsj", "tsk"
ZONES = ["UTC", "America/New_York", "Asia/Kolkata"]


@contextmanager
def session(spark: Any, zone: str, timestamp_type: str = "TIMESTAMP_LTZ") -> Iterator[None]:
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    spark.conf.set("spark.sql.timestampType", timestamp_type)
    try:
        yield
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
        spark.conf.unset("spark.sql.timestampType")


# ---- each literal against Spark's own reading of it ----
LITERALS = [
    "TIMESTAMP '2024-01-01 00:00:00'",
    "TIMESTAMP '2024-01-01'",
    "TIMESTAMP_LTZ '2024-07-01T12:34:56.123456'",
    "TIMESTAMP '2024-07-01 12:34:56.5'",
    "TIMESTAMP '2024-01-01 05:00:00Z'",
    "TIMESTAMP '2024-01-01 05:00:00+05:30'",
    "TIMESTAMP '2024-01-01 05:00:00-04:00'",
    "CAST('2024-11-03 01:30:00' AS TIMESTAMP)",
    "TIMESTAMP '2024-03-10 02:30:00'",  # skipped in New York
    "TIMESTAMP '2024-11-03 01:30:00'",  # twice in New York
    "TIMESTAMP '1969-12-31 23:59:59.999999'",
    "TIMESTAMP '0001-01-01 00:00:00Z'",
    "TIMESTAMP_NTZ '2024-03-10 02:30:00'",
    "TIMESTAMP_NTZ '1969-12-31 23:59:59.5'",
    "TIMESTAMP '2024-1-1 00:00:00'",  # forms left to Spark
    "TIMESTAMP '2024-01-01 10:00'",
    "TIMESTAMP '2024-01-01 10:00:00 America/New_York'",
]


def _spark_value(spark: Any, literal: str) -> tuple[str, dt.datetime]:
    """Spark's reading of `literal`: its kind, and its UTC instant (LTZ, as an aware datetime)
    or its local time (NTZ, naive)."""
    kind = str(spark.sql(f"SELECT typeof({literal})").first()[0])
    if kind == "timestamp_ntz":
        text = str(spark.sql(f"SELECT CAST({literal} AS STRING)").first()[0])
        return kind, dt.datetime.fromisoformat(text)
    micros = int(spark.sql(f"SELECT unix_micros({literal})").first()[0])
    return kind, _EPOCH + dt.timedelta(microseconds=micros)


def _ours(literal: str, column_type: str, timestamps: Timestamps) -> Any:
    predicate = parse_one(f"SELECT 1 WHERE c = {literal}", dialect=IcebergSpark).args["where"].this
    found = true_of(predicate, lambda q, n: ("c", column_type) if n == "c" else None, timestamps)
    if found is None:
        return None
    return found.right.literal  # And(NotNull(c), EqualTo(c, value))


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@pytest.mark.parametrize("timestamp_type", ["TIMESTAMP_LTZ", "TIMESTAMP_NTZ"])
@pytest.mark.parametrize("zone", ZONES)
def test_each_translated_literal_is_the_value_spark_reads(spark: Any, zone: str, timestamp_type: str) -> None:
    translated = 0
    timestamps = Timestamps(zone, timestamp_type == "TIMESTAMP_NTZ")
    with session(spark, zone, timestamp_type):
        for literal in LITERALS:
            try:
                kind, value = _spark_value(spark, literal)
            except Exception:
                kind, value = "refused", None
            for column_type in ("timestamptz", "timestamp"):
                ours = _ours(literal, column_type, timestamps)
                if ours is None:
                    continue
                translated += 1
                own_kind = "timestamp" if column_type == "timestamptz" else "timestamp_ntz"
                assert kind == own_kind, (literal, column_type, kind)
                assert ours == value and (ours.tzinfo is None) == (value.tzinfo is None), (
                    literal,
                    zone,
                    ours,
                    value,
                )
        skipped = _ours("TIMESTAMP '2024-03-10 02:30:00'", "timestamptz", timestamps)
        repeated = _ours("TIMESTAMP '2024-11-03 01:30:00'", "timestamptz", timestamps)
    assert translated >= 8
    if zone == "America/New_York" and timestamp_type == "TIMESTAMP_LTZ":
        assert skipped is None and repeated is None  # left to Spark's reading
    elif timestamp_type == "TIMESTAMP_LTZ":
        assert skipped is not None and repeated is not None


# ---- twin tables: Java's rows, and the filters pushed ----
_ROWS = [
    "(1, TIMESTAMP'2024-01-01 00:00:00Z', TIMESTAMP_NTZ'2024-01-01 00:00:00', 'a'), "
    "(2, TIMESTAMP'2024-01-01 04:59:59.999999Z', TIMESTAMP_NTZ'2024-01-01 04:59:59', 'a'), "
    "(3, TIMESTAMP'2024-01-01 05:00:00Z', TIMESTAMP_NTZ'2024-01-01 05:00:00', 'b'), "
    "(4, TIMESTAMP'2024-03-10 06:59:59Z', TIMESTAMP_NTZ'2024-03-10 02:30:00', 'b')",
    "(5, TIMESTAMP'2024-03-10 07:00:00Z', TIMESTAMP_NTZ'2024-03-10 03:00:00', 'a'), "
    "(6, TIMESTAMP'2024-11-03 05:30:00Z', TIMESTAMP_NTZ'2024-11-03 01:30:00', 'a'), "
    "(7, TIMESTAMP'2024-11-03 06:30:00Z', TIMESTAMP_NTZ'1969-12-31 23:59:59.5', 'b'), (8, null, null, null)",
]


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    t = SqlTwins(spark, tmp_path_factory.mktemp("sqlts"), Q, J, K)
    t.java(f"CREATE NAMESPACE IF NOT EXISTS {Q}.db")
    t.java(
        f"CREATE TABLE {Q}.db.ev (id bigint, ts timestamp, ntz timestamp_ntz, p string) USING iceberg "
        "PARTITIONED BY (days(ts), hours(ntz)) TBLPROPERTIES ('format-version'='2')"
    )
    for rows in _ROWS:
        t.java(f"INSERT INTO {Q}.db.ev VALUES {rows}")
    yield t
    t.ice("USE spark_catalog.default")


@pytest.fixture
def pushed(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The row filters icefloe's reads were planned with."""
    seen: list[Any] = []
    module = importlib.import_module("icefloe.spark.read")  # (`icefloe.spark.read` is also a function)
    original = module.plan_read

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("row_filter"))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, "plan_read", spy)
    return seen


# (WHERE, the zones whose session does not push it: a skipped or repeated local time there)
QUERIES = [
    ("ts >= TIMESTAMP '2024-01-01 00:00:00'", ()),
    ("ts < TIMESTAMP_LTZ '2024-03-10 02:30:00'", ("America/New_York",)),
    ("ts BETWEEN TIMESTAMP '2024-11-03 01:30:00' AND TIMESTAMP '2024-12-01'", ("America/New_York",)),
    (
        "ts = TIMESTAMP '2024-01-01T05:00:00Z' OR ts IN (TIMESTAMP '2024-03-10 07:00:00+00:00', "
        "TIMESTAMP '2024-11-03 01:30:00-04:00')",
        (),
    ),
    ("ts > CAST('2024-01-01 04:59:59.999999' AS TIMESTAMP) AND p = 'a'", ()),
    ("NOT (ts <= TIMESTAMP '2024-01-01 00:00:00.5') OR ts IS NULL", ()),
    ("ntz >= TIMESTAMP_NTZ '2024-03-10 02:30:00' AND ntz < TIMESTAMP_NTZ '2024-11-03 01:30:00.000001'", ()),
    ("ntz < TIMESTAMP '2024-01-01 05:00:00'", tuple(ZONES)),  # an LTZ literal: Spark casts the column
    # strings and dates in comparisons: Spark casts them to the column's type
    ("ts >= '2024-01-01 05:00:00' AND ts < '2024-11-03T01:30:00-04:00'", ()),
    ("ts < DATE '2024-01-02' OR ntz >= DATE '2024-11-03'", ()),
    ("ntz = '2024-03-10 02:30:00' OR ntz BETWEEN '2024-01-01' AND '2024-01-01 04:59:59'", ()),
    # an IN list of strings: Spark 3.5 compares them as strings
    ("ts IN ('2024-01-01 05:00:00', '2024-03-10 07:00:00') OR ntz IN ('2024-03-10 03:00:00')", tuple(ZONES)),
]


@pytest.mark.parametrize("zone", ZONES)
def test_queries_read_javas_rows_with_the_filters_pushed(tw: SqlTwins, pushed: list[Any], zone: str) -> None:
    with session(tw.spark, zone):
        for where, left in QUERIES:
            text = f"SELECT id, ts, ntz FROM {Q}.db.ev WHERE {where}"
            pushed.clear()
            assert_same_rows(tw.ice(text), tw.java(text), context=f"{zone}: {text}")
            assert len(pushed) == 1, text
            assert (pushed[0] is not None) == (zone not in left), (zone, text, pushed[0])


def test_timestamp_type_ntz_makes_timestamp_literals_ntz(tw: SqlTwins, pushed: list[Any]) -> None:
    with session(tw.spark, "America/New_York", "TIMESTAMP_NTZ"):
        for where in ("ntz >= TIMESTAMP '2024-03-10 02:30:00'", "ts >= TIMESTAMP '2024-03-10 02:30:00'"):
            text = f"SELECT id FROM {Q}.db.ev WHERE {where}"
            pushed.clear()
            assert_same_rows(tw.ice(text), tw.java(text), context=text)
            assert (pushed[0] is not None) == where.startswith("ntz"), (where, pushed[0])


def test_legacy_datetime_to_string_coercion_leaves_strings_to_spark(tw: SqlTwins, pushed: list[Any]) -> None:
    """Under Spark's legacy coercion a timestamp compared with a string is cast to a string:
    such a WHERE is not translated, and the rows are still Java's."""
    key = "spark.sql.legacy.typeCoercion.datetimeToString.enabled"
    tw.spark.conf.set(key, "true")
    try:
        text = f"SELECT id FROM {Q}.db.ev WHERE ts >= '2024-01-01 05:00:00'"
        assert_same_rows(tw.ice(text), tw.java(text), context=text)
        assert pushed == [None]
    finally:
        tw.spark.conf.unset(key)


# Aggregates from metrics: pushed only where the filter selects whole partitions (no residual)
AGGREGATES = [
    ("UTC", "ts >= TIMESTAMP '2024-01-02 00:00:00'", True),
    ("UTC", "ts >= TIMESTAMP '2024-01-01 05:00:00'", False),  # part of Jan 1: a residual
    ("America/New_York", "ts >= TIMESTAMP '2023-12-31 19:00:00'", True),  # midnight UTC
    ("America/New_York", "ts >= TIMESTAMP '2024-01-01 00:00:00'", False),  # 05:00 UTC
    (
        "Asia/Kolkata",
        "ts < TIMESTAMP '2024-03-11 05:30:00' AND ntz >= TIMESTAMP_NTZ '2024-01-01 05:00:00'",
        True,
    ),
    ("UTC", "ntz < TIMESTAMP_NTZ '2024-03-10 03:00:00' OR ntz IS NULL", True),
    # midnight in New York is 05:00 UTC: part of January 1st's file matches (a residual), and
    # March 10th's file, whose rows are all later, is pruned by its bounds
    ("America/New_York", "ts >= DATE '2024-01-01'", False),
    ("America/New_York", "ts < DATE '2024-03-10'", True),
    ("UTC", "ts >= '2024-03-10' AND ntz < '2024-11-03 02:00:00'", True),
]


@pytest.mark.parametrize(("zone", "where", "from_metrics"), AGGREGATES)
def test_aggregates_over_time_partitions(
    tw: SqlTwins, pushed: list[Any], zone: str, where: str, from_metrics: bool
) -> None:
    text = f"SELECT count(*), max(id), min(ts), max(ntz) FROM {Q}.db.ev WHERE {where}"
    with session(tw.spark, zone):
        pushed.clear()
        ours = tw.ice(text)
        assert_same_rows(ours, tw.java(text), context=f"{zone}: {text}")
    assert (not pushed) == from_metrics, (zone, where, pushed)  # read: one planned icefloe read


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata"])
def test_delete_with_timestamp_literals_as_java(tw: SqlTwins, zone: str) -> None:
    name = f"db.d_{zone.split('/')[1].lower()}"
    tw.setup(f"CREATE NAMESPACE IF NOT EXISTS {J}.db")
    tw.setup(
        f"CREATE TABLE {J}.{name} (id bigint, ts timestamp, ntz timestamp_ntz, p string) USING iceberg "
        "PARTITIONED BY (days(ts)) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    for rows in _ROWS:
        tw.setup(f"INSERT INTO {J}.{name} VALUES {rows}")
    with session(tw.spark, zone):
        tw.both(f"DELETE FROM {J}.{name} WHERE ts < TIMESTAMP '2024-01-01 10:00:00'")  # part of a day
        tw.both(f"DELETE FROM {J}.{name} WHERE ts >= TIMESTAMP '2024-11-03 00:00:00+00:00'")  # whole days
        tw.both(f"DELETE FROM {J}.{name} WHERE ntz = TIMESTAMP_NTZ '2024-03-10 02:30:00'")
    tw.assert_same_table(name)
