"""Nested values in icefloe.spark update / merge / upsert against Iceberg Java's Spark SQL
`UPDATE` / `MERGE INTO` on twin tables: struct, array and map values (of the column's type but
for nullability, narrower, structs with fields in another order) are stored as Java stores
them, also after a nested int -> long promotion; what Java refuses is refused naming the
nested field; a nested value that does not fit fails the write as Java's; an upsert whose rows
lack a table column is refused naming it."""

from __future__ import annotations

from typing import Any

import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MODES = ["merge-on-read", "copy-on-write"]
COLUMNS = "id bigint, name string, s struct<a:int, b:string>, arr array<double>, m map<string,bigint>"


def _props(mode: str) -> str:
    return (
        f"'format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
        f"'write.merge.mode'='{mode}'"
    )


def _twins(oracle: Oracle, prefix: str, mode: str, columns: str = COLUMNS) -> tuple[str, str]:
    """Two tables created alike, holding ids 0..5."""
    java, ours = new_table_name(f"{prefix}_java"), new_table_name(f"{prefix}_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} ({columns}) USING iceberg TBLPROPERTIES ({_props(mode)})")
        oracle.sql(
            f"INSERT INTO {q} SELECT id, CAST(id AS STRING), named_struct('a', CAST(id AS INT), 'b', 'v'), "
            "array(CAST(id AS DOUBLE)), map('k', id) FROM range(0, 6)"
        )
    return java, ours


@pytest.mark.parametrize("mode", MODES)
def test_update_sets_struct_array_and_map_values_as_javas_update(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """`named_struct(...)`, `array(...)`, `map(...)` values were refused with two types that
    look alike (they differed in nullability only); Java's UPDATE stores them, and narrower
    leaves (an int into a bigint map value, a float into a double array, a number into a
    string), a struct's fields given in another order and case, matched by name."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_upd", mode)
    updates = [
        (
            "id < 2",
            {
                "s": "named_struct('a', CAST(id AS INT) + 10, 'b', concat('x', name))",
                "arr": "array(CAST(id AS DOUBLE), 2.5D)",
                "m": "map('k', id * 2, 'j', CAST(NULL AS BIGINT))",
            },
        ),
        (
            "id >= 2 AND id < 4",
            {
                "s": "named_struct('B', id, 'a', 7)",
                "arr": "array(CAST(1.5 AS FLOAT), 2, NULL)",
                "m": "map('k', 1)",
                "name": "id * 100",
            },
        ),
        ("id = 4", {"s": "NULL", "arr": "array()", "m": "map()"}),
    ]
    for where, sets in updates:
        assignments = ", ".join(f"{c} = {v}" for c, v in sets.items())
        oracle.sql(f"UPDATE {oracle.qualified(java)} SET {assignments} WHERE {where}")
        icefloe.spark.update(spark, catalog.load_table(ours), where, sets)
    expected = oracle.df(java)
    assert expected.where("id = 2").collect()[0]["s"].asDict() == {"a": 7, "b": "2"}
    assert_same_rows(oracle.df(ours), expected, context=f"nested update ({mode})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe reads ({mode})")


@pytest.mark.parametrize("mode", MODES)
def test_merge_and_upsert_of_narrower_nested_values_after_promotions_twin_java(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """After `s.a` int -> long, `arr.element` float -> double and `m.value` int -> long, a
    source of the old (narrower) nested types was refused by merge (update_all / insert_all,
    and clauses assigning the nested columns) and upsert; Java's MERGE INTO stores it."""
    import icefloe.spark

    columns = "id bigint, s struct<a:int, b:string>, arr array<float>, m map<string,int>"
    java, ours = new_table_name("nested_prom_java"), new_table_name("nested_prom_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} ({columns}) USING iceberg TBLPROPERTIES ({_props(mode)})")
        oracle.sql(
            f"INSERT INTO {q} SELECT id, named_struct('a', CAST(id AS INT), 'b', 'v'), "
            "array(CAST(id AS FLOAT)), map('k', CAST(id AS INT)) FROM range(0, 6)"
        )
        oracle.sql(f"ALTER TABLE {q} ALTER COLUMN s.a TYPE bigint")
        oracle.sql(f"ALTER TABLE {q} ALTER COLUMN arr.element TYPE double")
        oracle.sql(f"ALTER TABLE {q} ALTER COLUMN m.value TYPE bigint")

    def source(ids: range, base: int) -> Any:
        rows = [(i, (base + i, f"n{i}"), [base + i + 0.5], {"k": base + i}) for i in ids]
        return spark.createDataFrame(rows, columns).coalesce(1)

    # update_all / insert_all on unique keys
    src = source(range(3, 9), 1000)
    src.createOrReplaceTempView("nested_prom_all")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING nested_prom_all s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    (
        icefloe.spark.merge(src, catalog.load_table(ours), "target.id = source.id")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    # clauses assigning the nested columns (the joined path)
    src = source(range(0, 3), 2000)
    src.createOrReplaceTempView("nested_prom_set")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING nested_prom_set s ON t.id = s.id "
        "WHEN MATCHED AND t.id > 0 THEN UPDATE SET s = s.s, arr = s.arr, m = s.m"
    )
    (
        icefloe.spark.merge(src, catalog.load_table(ours), "target.id = source.id")
        .when_matched_update({"s": "source.s", "arr": "source.arr", "m": "source.m"}, "target.id > 0")
        .execute()
    )
    # upsert: each row replaces its key's row, as MERGE ... UPDATE SET * ... INSERT *
    src = source(range(7, 11), 3000)
    src.createOrReplaceTempView("nested_prom_upsert")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING nested_prom_upsert s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    icefloe.spark.upsert(src, catalog.load_table(ours), join_cols=["id"])
    expected = oracle.df(java)
    assert expected.count() == 11
    assert_same_rows(oracle.df(ours), expected, context=f"promoted nested merge ({mode})")


@pytest.mark.parametrize(
    ("sets", "path"),
    [
        ({"s": "named_struct('a', 'x', 'b', 'y')"}, "'s.a'"),
        ({"s": "named_struct('a', 1)"}, "'s.b'"),
        ({"s": "named_struct('a', 1, 'b', 'x', 'c', 2)"}, r"\['c'\]"),
        ({"s": "named_struct('p', 1, 'q', 'x')"}, "'s.a'"),
        ({"arr": "array('x')"}, "'arr.element'"),
        ({"arr": "array(array(1D))"}, "'arr.element'"),
        ({"m": "map('k', 'v')"}, "'m.value'"),
        ({"m": "map(true, 1L)"}, None),  # a boolean key into a string key: Java stores it
    ],
)
def test_nested_values_java_refuses_are_refused_naming_the_field(
    spark: Any, oracle: Oracle, catalog: Any, sets: dict[str, str], path: str | None
) -> None:
    """A string into a nested int, a struct without a field of the column's or with one it
    lacks, an array or map of the wrong leaf type: Java's UPDATE and MERGE refuse them at
    analysis; so do icefloe's update, merge and upsert, before anything is written, naming
    the nested field. What Java takes (`map(true, 1L)` into map<string,bigint>) is taken."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_bad", "merge-on-read")
    before = oracle.snapshot_ids(ours)
    column, value = next(iter(sets.items()))
    statement = f"UPDATE {oracle.qualified(java)} SET {column} = {value} WHERE id = 1"
    source = spark.sql(f"SELECT 1L AS id, '1' AS name, {value} AS {column}")
    rest = [c for c in ("s", "arr", "m") if c != column]
    source = source.crossJoin(spark.table(oracle.qualified(ours)).where("id = 1").select(*rest))
    if path is None:
        oracle.sql(statement)
        icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", sets)
        icefloe.spark.upsert(source, catalog.load_table(ours), join_cols=["id"])
        assert_same_rows(oracle.df(ours), oracle.df(java), context=str(sets))
        return
    with pytest.raises(Exception, match="INCOMPATIBLE_DATA_FOR_TABLE"):
        oracle.sql(statement)
    with pytest.raises(ValidationError, match=path):
        icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", sets)
    with pytest.raises(ValidationError, match=path):
        icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id").when_matched_update(
            {column: f"source.{column}"}
        ).execute()
    with pytest.raises(ValidationError, match=path):
        icefloe.spark.upsert(source, catalog.load_table(ours), join_cols=["id"])
    assert oracle.snapshot_ids(ours) == before


# One write mode: the values fail where they are computed, before any file of either mode is
# written (the modes' write paths are twin-tested by the tests above and below).
@pytest.mark.parametrize("mode", ["merge-on-read"])
def test_nested_values_that_do_not_fit_fail_the_write_as_javas(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """A bigint beyond int inside a struct, an array or a map value, a NaN into a nested int:
    Java's UPDATE and MERGE fail (CAST_OVERFLOW_IN_TABLE_INSERT, ANSI store assignment) and
    commit nothing, and so do icefloe's; values that fit are stored as Java stores them (a
    decimal into a nested int truncated)."""
    import icefloe.spark

    columns = "id bigint, s struct<a:int, b:string>, arr array<int>, m map<string,int>"
    java, ours = new_table_name("nested_fit_java"), new_table_name("nested_fit_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} ({columns}) USING iceberg TBLPROPERTIES ({_props(mode)})")
        oracle.sql(f"INSERT INTO {q} VALUES (1, named_struct('a', 1, 'b', 'v'), array(1), map('k', 1))")
    before = oracle.snapshot_ids(ours)
    bad = [
        {"s": "named_struct('a', 5000000000L, 'b', 'x')"},
        {"arr": "array(1L, 5000000000L)"},
        {"m": "map('k', -5000000000L)"},
        {"s": "named_struct('a', CAST('NaN' AS DOUBLE), 'b', 'x')"},
    ]
    overflow = r"CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE"
    for sets in bad:
        ((column, value),) = sets.items()
        with pytest.raises(Exception, match=overflow):
            oracle.sql(f"UPDATE {oracle.qualified(java)} SET {column} = {value} WHERE id = 1")
        with pytest.raises(Exception, match=overflow):
            icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", sets)
    source = spark.sql(
        "SELECT 1L AS id, named_struct('a', 1L, 'b', 'x') AS s, array(5000000000L) AS arr, map('k', 1L) AS m"
    )
    with pytest.raises(Exception, match=overflow):
        icefloe.spark.upsert(source, catalog.load_table(ours), join_cols=["id"])
    for insert_all in (False, True):
        b = icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id")
        b = b.when_matched_update_all()
        if insert_all:  # update_all + insert_all on unique keys: the join-free path
            b = b.when_not_matched_insert_all()
        with pytest.raises(Exception, match=overflow):
            b.execute()
    assert oracle.snapshot_ids(ours) == before
    fits = {"s": "named_struct('a', 7.6, 'b', 'x')", "arr": "array(2L, -3.9D)", "m": "map('k', 2147483647L)"}
    assignments = ", ".join(f"{c} = {v}" for c, v in fits.items())
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET {assignments} WHERE id = 1")
    icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", fits)
    assert_same_rows(oracle.df(ours), oracle.df(java), context="fits")


@pytest.mark.parametrize("mode", MODES)
def test_a_null_into_a_required_nested_field_fails_the_write_as_javas(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """Nullability is not part of the check (a value whose `y` cannot be null was refused for
    a column whose `y` can), but a null that reaches a required nested field fails the write,
    as it fails Java's UPDATE / MERGE at run time, and nothing is committed."""
    import icefloe.spark

    java, ours = new_table_name("nested_req_java"), new_table_name("nested_req_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id bigint, r struct<x:int not null, y:string>) USING iceberg "
            f"TBLPROPERTIES ({_props(mode)})"
        )
        oracle.sql(f"INSERT INTO {q} VALUES (1, named_struct('x', 1, 'y', 'a'))")
    before = oracle.snapshot_ids(ours)
    value = "named_struct('x', CAST(NULL AS INT), 'y', 'b')"
    with pytest.raises(Exception, match=r"(?i)non-nullable"):
        oracle.sql(f"UPDATE {oracle.qualified(java)} SET r = {value} WHERE id = 1")
    with pytest.raises(Exception, match=r"(?i)non-nullable"):
        icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", {"r": value})
    source = spark.sql(f"SELECT 1L AS id, {value} AS r")
    with pytest.raises(Exception, match=r"(?i)non-nullable"):
        icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id").when_matched_update(
            {"r": "source.r"}
        ).execute()
    assert oracle.snapshot_ids(ours) == before
    fits = "named_struct('y', 'c', 'x', 2)"
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET r = {fits} WHERE id = 1")
    icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", {"r": fits})
    assert_same_rows(oracle.df(ours), oracle.df(java), context="required nested field")


@pytest.mark.parametrize("mode", MODES)
def test_upsert_refuses_rows_lacking_an_optional_column(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """Rows without one of the table's optional columns: the upsert failed with Spark's
    UNRESOLVED_COLUMN naming icefloe's internal columns. PyIceberg's `Table.upsert` fails on
    such rows as soon as one matches a table row (and stores nulls while none does): icefloe
    refuses them whatever they match, naming the column, and writes nothing."""
    import icefloe.spark

    name = new_table_name("upsert_lacking")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint NOT NULL, a string, b string) USING iceberg "
        f"TBLPROPERTIES ({_props(mode)})"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'x', 'keep')")
    before = oracle.snapshot_ids(name)
    for ids in ([1, 2], [3]):  # one matching a row, one matching none
        rows = spark.createDataFrame([(i, "y") for i in ids], "id bigint, a string")
        with pytest.raises(ValidationError, match=r"lack the table's column\(s\) \['b'\]"):
            icefloe.spark.upsert(rows, catalog.load_table(name), join_cols=["id"])
    assert oracle.snapshot_ids(name) == before
