"""A MERGE's `on` condition, target side: the split into conjuncts, the conjuncts over the
target alone as a row filter, the conflict-detection filter built from them (and from the
source's keys in process); in-process MERGE with target-only conjuncts against Iceberg
Java's `MERGE INTO`; and on Spark, a stale merge that conflicts only with concurrent files
its target-only conjuncts may match."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from icefloe import IdentityTransform, NestedField, PartitionField, PartitionSpec, Schema, _native
from icefloe.exceptions import CommitConflictError, NotSupportedError
from icefloe.expressions import And, EqualTo, GreaterThan, In
from icefloe.types import DoubleType, LongType, StringType, TimestamptzType
from icefloe.write.merge_condition import (
    CONFLICT_KEYS_MAX,
    conflict_filter_json,
    split_conjuncts,
    target_filter,
    target_only_filter,
)
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "amount", DoubleType()),
)
ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
    ]
)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
MOR = {"format-version": "2", "write.merge.mode": "merge-on-read", "write.delete.mode": "merge-on-read"}


@pytest.mark.parametrize(
    ("condition", "parts"),
    [
        ("target.id = source.id", ["target.id = source.id"]),
        (
            "target.region = 'a AND b' and target.id = source.id",
            ["target.region = 'a AND b'", "target.id = source.id"],
        ),
        (
            "(target.id BETWEEN 1 AND 5) AND target.id = source.id",
            ["target.id BETWEEN 1 AND 5", "target.id = source.id"],
        ),
        ("target.id between 1 and 5 and x = 1", ["target.id between 1 and 5", "x = 1"]),
        ("((a = 1 AND b = 2)) AND (c = 3)", ["a = 1", "b = 2", "c = 3"]),
        ("(a = 1) OR (b = 2 AND c = 3)", ["(a = 1) OR (b = 2 AND c = 3)"]),
        ("band = 1 AND android = 2", ["band = 1", "android = 2"]),
        ("`x and y` = 1 AND target.s = 'it''s and'", ["`x and y` = 1", "target.s = 'it''s and'"]),
        ("f(a AND b) AND c", ["f(a AND b)", "c"]),
        # OR binds looser than AND: a top-level OR makes the whole condition one conjunct.
        ("t.id = s.id AND t.a = 1 OR t.b = 2", ["t.id = s.id AND t.a = 1 OR t.b = 2"]),
        (
            "t.id = s.id AND (t.a = 1 OR t.a = 2 AND t.b = 3)",
            ["t.id = s.id", "t.a = 1 OR t.a = 2 AND t.b = 3"],
        ),
        ("a = 1 or b = 2 and c = 3", ["a = 1 or b = 2 and c = 3"]),
        # CASE ... END holds its own ANDs (and ORs).
        (
            "t.id = s.id AND CASE WHEN t.a > 0 AND t.b > 0 THEN true ELSE t.c OR t.d END",
            ["t.id = s.id", "CASE WHEN t.a > 0 AND t.b > 0 THEN true ELSE t.c OR t.d END"],
        ),
        (
            "case when x between 1 and 2 then 1 end = 1 AND y = 2",
            ["case when x between 1 and 2 then 1 end = 1", "y = 2"],
        ),
        ("t.end = 1 AND t.`or` = 2", ["t.end = 1", "t.`or` = 2"]),
    ],
)
def test_split_conjuncts(condition: str, parts: list[str]) -> None:
    assert split_conjuncts(condition) == parts


def test_target_only_conjuncts_become_a_filter_over_the_table() -> None:
    def f(text: str) -> Any:
        return target_only_filter(text, SCHEMA, "target", "source")

    assert f("target.region = 'eu'") == EqualTo("region", "eu")
    assert f("TARGET.Region = 'eu'") == EqualTo("region", "eu"), "names resolve as Spark does"
    assert f("t.amount > 1.5") is None, "another alias is not the target"
    assert target_only_filter("t.amount > 1.5", SCHEMA, "t", "s") == GreaterThan("amount", 1.5)
    for other in (
        "target.id = source.id",  # both sides
        "source.amount > 0",  # the source's
        "target.nope = 1",  # not a column
        "target.id = 'x'",  # does not bind
        "upper(target.region) = 'EU'",  # outside the parser's subset
        "id = 1",  # no alias
    ):
        assert f(other) is None, other
    assert target_filter(
        "target.region = 'eu' AND target.id = source.id AND target.amount > 1.5", SCHEMA, "target", "source"
    ) == And(EqualTo("region", "eu"), GreaterThan("amount", 1.5))


def test_conflict_filter_is_target_conjuncts_and_source_keys() -> None:
    on = "target.region = 'eu' AND target.id = source.id"

    def cf(kinds: set[str], keys: list[Any]) -> Any:
        return json.loads(conflict_filter_json(on, SCHEMA, "target", "source", kinds, [("id", keys)]))

    assert cf({"matched"}, [3, 1, None, 3]) == json.loads(
        And(EqualTo("region", "eu"), In("id", [3, 1])).to_json()
    )
    # Too many keys: the target-only conjuncts alone.
    assert cf({"matched"}, list(range(CONFLICT_KEYS_MAX + 1))) == json.loads(
        EqualTo("region", "eu").to_json()
    )
    # A clause on the rows the source does not match: the whole table.
    assert cf({"matched", "not_matched_by_source"}, [1]) == {"type": "true"}
    assert json.loads(
        conflict_filter_json("target.id = source.id", SCHEMA, "target", "source", {"matched"})
    ) == {"type": "true"}


# ---- in process, against Java's MERGE INTO ----
def _rows(ids: list[int], region: str) -> list[tuple[int, str, float]]:
    return [(i, region, float(i)) for i in ids]


BEFORE = _rows(list(range(0, 10)), "eu") + _rows(list(range(5, 15)), "us")  # ids 5..9 in both
SOURCE = [(1, "eu", -1.0), (7, "us", 70.0), (12, "eu", 120.0), (40, "eu", 40.0), (3, "eu", 30.0)]


def test_in_process_merge_without_an_equality_is_refused(tmp_path: Path) -> None:
    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA, properties=MOR)
    t.append(pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in BEFORE], schema=ARROW))
    source = pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in SOURCE], schema=ARROW)
    with pytest.raises(NotSupportedError, match="at least one equality"):
        t.merge(source, "target.region = 'eu'").when_matched_delete().execute()
    with pytest.raises(NotSupportedError, match=r"source\.amount > 0"):
        t.merge(source, "target.id = source.id AND source.amount > 0").when_matched_delete().execute()


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize(
    ("engine", "by_source"), [("in-process", False), ("in-process", True), ("spark", True)]
)
def test_merge_with_target_only_conjuncts_matches_java(
    spark: Any, oracle: Oracle, catalog: Any, engine: str, by_source: bool
) -> None:
    """`target.region = 'eu' AND target.id = source.id`: us rows never match (a source key
    found only in us is inserted); a `not matched by source` clause sees them."""
    import icefloe.spark

    java, ours = new_table_name("mc_java"), new_table_name("mc_ours")
    src = spark.createDataFrame(BEFORE, "id bigint, region string, amount double")
    for name in (java, ours):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING, amount DOUBLE) USING iceberg "
            "PARTITIONED BY (region) TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='merge-on-read')"
        )
        src.coalesce(1).writeTo(oracle.qualified(name)).append()
    spark.createDataFrame(SOURCE, "id bigint, region string, amount double").createOrReplaceTempView("mc_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING mc_src s ON t.region = 'eu' AND t.id = s.id "
        "WHEN MATCHED AND s.amount < 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET amount = s.amount + t.amount "
        "WHEN NOT MATCHED THEN INSERT * "
        + ("WHEN NOT MATCHED BY SOURCE AND t.id >= 8 THEN DELETE" if by_source else "")
    )
    on = "target.region = 'eu' AND target.id = source.id"
    table = catalog.load_table(ours)
    if engine == "spark":
        m: Any = icefloe.spark.merge(spark.table("mc_src"), table, on)
        m = m.when_matched_delete("source.amount < 0").when_matched_update(
            {"amount": "source.amount + target.amount"}
        )
    else:
        source = pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in SOURCE], schema=ARROW)
        m = table.merge(source, on)
        m = m.when_matched_delete("source.amount < 0").when_matched_update(
            {"amount": pc.field("source.amount") + pc.field("target.amount")}
        )
    m = m.when_not_matched_insert_all()
    if by_source:
        m = m.when_not_matched_by_source_delete("target.id >= 8")
    metrics = m.execute()
    # Matched (eu rows only): 1 deleted, 3 and 7 updated; not matched: 12 (us has it, eu
    # does not) and 40 inserted; not matched by source with id >= 8: eu 8, 9 and us 8..14.
    by_source_deleted = 2 + 7 if by_source else 0
    assert (metrics.rows_updated, metrics.rows_inserted, metrics.rows_deleted) == (
        2,
        2,
        1 + by_source_deleted,
    )
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({engine})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ({engine})")


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize("engine", ["in-process", "spark"])
def test_merge_condition_with_or_keeps_sql_precedence_as_java(
    spark: Any, oracle: Oracle, catalog: Any, engine: str
) -> None:
    """`id = id AND (region = 'us' OR region = 'eu' AND amount > 5)`: AND binds tighter than
    OR, so every us row can match (us 5 has amount 5). Read as `(us OR eu) AND amount > 5`,
    us 5 would be cut from the target rows and source key 5 inserted a second time."""
    import icefloe.spark

    source_rows = [*SOURCE, (5, "us", 50.0)]
    java, ours = new_table_name("mc_or_java"), new_table_name("mc_or_ours")
    src = spark.createDataFrame(BEFORE, "id bigint, region string, amount double")
    for name in (java, ours):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING, amount DOUBLE) USING iceberg "
            "TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='merge-on-read')"
        )
        src.coalesce(1).writeTo(oracle.qualified(name)).append()
    spark.createDataFrame(source_rows, "id bigint, region string, amount double").createOrReplaceTempView(
        "mc_or_src"
    )
    cond = "{t}.id = {s}.id AND ({t}.region = 'us' OR {t}.region = 'eu' AND {t}.amount > 5)"
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING mc_or_src s ON {cond.format(t='t', s='s')} "
        "WHEN MATCHED THEN UPDATE SET amount = s.amount + t.amount WHEN NOT MATCHED THEN INSERT *"
    )
    on = cond.format(t="target", s="source")
    table = catalog.load_table(ours)
    if engine == "spark":
        m: Any = icefloe.spark.merge(spark.table("mc_or_src"), table, on).when_matched_update(
            {"amount": "source.amount + target.amount"}
        )
    else:
        source = pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in source_rows], schema=ARROW)
        m = table.merge(source, on).when_matched_update(
            {"amount": pc.field("source.amount") + pc.field("target.amount")}
        )
    metrics = m.when_not_matched_insert_all().execute()
    # Matched: us 5, us 7 and eu 7, us 12; inserted: 1, 3, 40.
    assert (metrics.rows_updated, metrics.rows_inserted) == (4, 3)
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({engine})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ({engine})")


@pytest.mark.spark
def test_zone_less_timestamp_strings_read_as_sparks_cast(spark: Any) -> None:
    """The instant icefloe gives a zone-less string in a session zone is the one Spark's
    cast gives it, across a DST gap (02:30 on a spring-forward day) and overlap (01:30 on a
    fall-back day), date-only strings, zoned strings and fractions."""
    from icefloe.write.merge_condition import _zone, _zoned_timestamp

    texts = [
        "2024-03-10 02:30:00",
        "2024-11-03 01:30:00",
        "2024-11-03T01:59:59.999999",
        "2024-06-01",
        "1969-12-31 23:59:59.5",
        "2024-06-01T03:00:00Z",
        "2024-06-01 03:00:00+02:00",
        "2024-06-01 3:04",
    ]
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        for zone in ("America/Los_Angeles", "Europe/Berlin", "Asia/Kolkata", "-03:30", "UTC"):
            spark.conf.set("spark.sql.session.timeZone", zone)
            row = spark.sql(
                "SELECT "
                + ", ".join(f"unix_micros(CAST('{t}' AS TIMESTAMP)) AS c{i}" for i, t in enumerate(texts))
            ).collect()[0]
            tz = _zone(zone)
            assert tz is not None, zone
            for i, text in enumerate(texts):
                ours = _zoned_timestamp(text, tz)
                assert ours is not None, (zone, text)
                got = json.loads(
                    _native.bind_filter(
                        EqualTo("ts", ours).to_json(),
                        Schema(NestedField(1, "ts", TimestamptzType())).to_json(),
                    )
                )["value"]
                micros = int((dt.datetime.fromisoformat(got) - EPOCH) / dt.timedelta(microseconds=1))
                assert micros == row[i], (zone, text, ours, got)
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)
    assert _zoned_timestamp("not a time", dt.timezone.utc) is None
    assert _zone("Mars/Olympus") is None


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata", "+05:00"])
def test_spark_merge_reads_zone_less_timestamps_in_the_session_time_zone_as_java(
    spark: Any, oracle: Oracle, catalog: Any, zone: str
) -> None:
    """`ON t.id = s.id AND t.ts < '2024-06-01 00:00:00'` on a timestamptz column: Spark casts
    the string in the session time zone. The target rows icefloe reads for the merge (its
    target-only conjuncts as a row filter) must be read the same way, or a row Spark would
    match is never seen and its source row is inserted again."""
    import icefloe.spark

    java, ours = new_table_name("mc_tz_java"), new_table_name("mc_tz_ours")
    rows = [
        (1, "2024-05-31 20:00:00"),
        (2, "2024-06-01 03:00:00"),
        (3, "2024-06-01 06:59:59"),
        (4, "2024-06-01 12:00:00"),
        (5, "2024-06-02 00:00:00"),
    ]
    before = spark.conf.get("spark.sql.session.timeZone")
    try:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        target = spark.createDataFrame(rows, "id bigint, ts string").selectExpr(
            "id", "to_timestamp(ts) AS ts", "0D AS amount"
        )
        for name in (java, ours):
            oracle.sql(
                f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, ts TIMESTAMP, amount DOUBLE) "
                "USING iceberg TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='merge-on-read')"
            )
            target.coalesce(1).writeTo(oracle.qualified(name)).append()
        spark.conf.set("spark.sql.session.timeZone", zone)
        source = spark.createDataFrame(
            [(i, 10.0 * i) for i in range(1, 7)], "id bigint, amount double"
        ).selectExpr("id", "to_timestamp('2030-01-01') AS ts", "amount")
        source.createOrReplaceTempView("mc_tz_src")
        cond = (
            "{t}.id = {s}.id AND {t}.ts < '2024-06-01 00:00:00' "
            "AND {t}.ts IN ('2024-05-31 20:00:00', '2024-06-01 03:00:00', '2024-06-01 06:59:59', "
            "'2024-06-01T03:00:00Z', '2024-05-31 13:00:00', '2024-05-31 08:30:00', "
            "'2024-05-31 23:59:59', '2024-05-31 01:00:00')"
        )
        oracle.sql(
            f"MERGE INTO {oracle.qualified(java)} t USING mc_tz_src s ON {cond.format(t='t', s='s')} "
            "WHEN MATCHED THEN UPDATE SET amount = s.amount WHEN NOT MATCHED THEN INSERT *"
        )
        table = catalog.load_table(ours)
        icefloe.spark.merge(
            spark.table("mc_tz_src"), table, cond.format(t="target", s="source")
        ).when_matched_update({"amount": "source.amount"}).when_not_matched_insert_all().execute()
        expected = oracle.df(java)
        assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({zone})")
        assert expected.count() > len(rows), "the source's unmatched keys were inserted"
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize("conjunct", ["{t}.f > 0.1", "{t}.f = 0.1", "{t}.f IN (0.1, 0.5)", "{t}.f >= 0.5"])
def test_spark_merge_compares_a_float_column_as_spark_does(
    spark: Any, oracle: Oracle, catalog: Any, conjunct: str
) -> None:
    """Spark compares a float column with `0.1` as doubles: the float 0.1 is above 0.1 and
    not equal to it. The target rows icefloe reads as the ones that can match must agree,
    or a matched key is inserted again, or an unmatched one is lost."""
    import icefloe.spark

    java, ours = new_table_name("mc_f_java"), new_table_name("mc_f_ours")
    target = spark.createDataFrame([(1, 0.1), (2, 0.5), (3, 0.0)], "id bigint, f float")
    for name in (java, ours):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, f FLOAT) USING iceberg "
            "TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='merge-on-read')"
        )
        target.coalesce(1).writeTo(oracle.qualified(name)).append()
    spark.createDataFrame([(i, 9.0) for i in range(1, 5)], "id bigint, f float").createOrReplaceTempView(
        "mc_f_src"
    )
    cond = "{t}.id = {s}.id AND " + conjunct
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING mc_f_src s ON {cond.format(t='t', s='s')} "
        "WHEN MATCHED THEN UPDATE SET f = s.f WHEN NOT MATCHED THEN INSERT *"
    )
    table = catalog.load_table(ours)
    icefloe.spark.merge(
        spark.table("mc_f_src"), table, cond.format(t="target", s="source")
    ).when_matched_update({"f": "source.f"}).when_not_matched_insert_all().execute()
    assert_same_rows(oracle.df(ours), oracle.df(java), context=conjunct)


@pytest.mark.spark
@pytest.mark.interop
def test_spark_merge_conflicts_only_with_files_its_target_conjuncts_may_match(
    spark: Any, catalog: Any
) -> None:
    import icefloe.spark

    name = new_table_name("mc_conflict")
    spec = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
    t = catalog.create_table(name, schema=SCHEMA, partition_spec=spec, properties=MOR)
    t.append(pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in BEFORE], schema=ARROW))
    source = spark.createDataFrame([(1, "eu", 10.0)], "id bigint, region string, amount double")
    on = "target.region = 'eu' AND target.id = source.id"

    def us_row(i: int, region: str) -> pa.Table:
        return pa.Table.from_pylist([{"id": i, "region": region, "amount": 0.0}], schema=ARROW)

    # A concurrent append to us: no conflict, the merge commits on top of it.
    stale = catalog.load_table(name)
    catalog.load_table(name).append(us_row(200, "us"))
    metrics = icefloe.spark.merge(source, stale, on).when_matched_update_all().execute()
    assert metrics.rows_updated == 1
    got = {
        r["id"]: r["amount"]
        for r in catalog.load_table(name).scan().to_arrow().to_pylist()
        if r["region"] == "eu"
    }
    assert got[1] == 10.0
    assert 200 in {r["id"] for r in catalog.load_table(name).scan().to_arrow().to_pylist()}
    # A concurrent append to eu: the merge might have matched its rows, so it conflicts.
    stale = catalog.load_table(name)
    catalog.load_table(name).append(us_row(201, "eu"))
    before = catalog.load_table(name).current_snapshot()
    with pytest.raises(CommitConflictError):
        icefloe.spark.merge(source, stale, on).when_matched_update_all().execute()
    assert catalog.load_table(name).current_snapshot() == before


def test_in_process_merge_into_an_empty_table_or_matching_nothing(tmp_path: Path) -> None:
    """With no target row to join (an empty table, or no source key in it) the merge
    inserts; the empty target side used to be an untyped column pyarrow cannot join."""
    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA, properties=MOR)
    source = pa.Table.from_pylist([dict(zip(ARROW.names, r)) for r in SOURCE], schema=ARROW)
    m = (
        t.merge(source, "target.id = source.id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    assert (m.rows_updated, m.rows_inserted) == (0, 5)
    more = pa.Table.from_pylist([{"id": 1000, "region": "eu", "amount": 1.0}], schema=ARROW)
    m = (
        t.merge(more, "target.id = source.id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    assert (m.rows_updated, m.rows_inserted) == (0, 1)
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 3, 7, 12, 40, 1000]
