"""Assigning fields of structs in icefloe.spark update / merge against Iceberg Java's Spark
SQL `UPDATE t SET s.a = ...` / `MERGE INTO ... UPDATE SET s.a = ...` on twin tables: a field
at any depth is set and the struct's other fields keep their values, a NULL struct becomes a
struct of NULLs holding the assigned field (as Java stores it), names match ignoring case
unless `spark.sql.caseSensitive`; what Java refuses (a column and a field inside it, one field
twice, a field inside an array or map element, a path that is no field, an insert's nested
key) is refused naming the path, and nothing is committed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

MODES = ["merge-on-read", "copy-on-write"]
COLUMNS = (
    "id bigint, s struct<a:int, b:string, n:struct<x:int, y:string>>, "
    "arr array<struct<a:int>>, m map<string,struct<a:int>>, p struct<`x.y`:int, z:string>"
)
ROWS = [
    "(1, named_struct('a', 1, 'b', 'v', 'n', named_struct('x', 10, 'y', 'w')), "
    "array(named_struct('a', 1)), map('k', named_struct('a', 1)), named_struct('x.y', 1, 'z', 'z'))",
    "(2, NULL, NULL, NULL, NULL)",  # NULL structs: Java makes them structs of NULLs
    "(3, named_struct('a', 3, 'b', 'v', 'n', NULL), NULL, NULL, named_struct('x.y', 3, 'z', NULL))",
    "(4, named_struct('a', 4, 'b', NULL, 'n', named_struct('x', 40, 'y', NULL)), NULL, NULL, NULL)",
]


def _props(mode: str) -> str:
    return (
        f"'format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
        f"'write.merge.mode'='{mode}'"
    )


def _twins(oracle: Oracle, prefix: str, mode: str) -> tuple[str, str]:
    java, ours = new_table_name(f"{prefix}_java"), new_table_name(f"{prefix}_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} ({COLUMNS}) USING iceberg TBLPROPERTIES ({_props(mode)})")
        oracle.sql(f"INSERT INTO {q} VALUES {', '.join(ROWS)}")
    return java, ours


@pytest.fixture
def case_sensitive(spark: Any) -> Iterator[None]:
    spark.conf.set("spark.sql.caseSensitive", "true")
    try:
        yield
    finally:
        spark.conf.set("spark.sql.caseSensitive", "false")


@pytest.mark.parametrize("mode", MODES)
def test_update_assigns_struct_fields_as_javas_update(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """A field of a struct, of a nested struct, two fields of one struct, names in another
    case, a field named with a dot, values reading the old row, a struct value for a struct
    field, a NULL: each statement by Java's UPDATE and by icefloe's update, rows compared as
    Java reads them. Before, icefloe refused every nested key as an unknown column."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_upd", mode)
    updates = [
        ("id < 3", {"s.a": "5"}),
        ("id >= 2", {"s.n.x": "CAST(id AS INT) * 10", "s.b": "concat(s.b, '!')"}),
        ("id = 1 OR id = 3", {"S.N.Y": "'q'", "P.`X.Y`": "-1"}),
        ("id > 1", {"s.a": "s.a + 1", "s.b": "s.n.y", "p.z": "s.b"}),
        ("id = 4", {"s.n": "named_struct('y', 'r', 'x', 1L)", "id": "id + 100"}),
        ("id = 1", {"s.a": "NULL", "s.n.y": "NULL"}),
    ]
    for where, sets in updates:
        assignments = ", ".join(f"{k} = {v}" for k, v in sets.items())
        oracle.sql(f"UPDATE {oracle.qualified(java)} SET {assignments} WHERE {where}")
        icefloe.spark.update(spark, catalog.load_table(ours), where, sets)
    expected = oracle.df(java)
    # Java's UPDATE of a field of a NULL struct stores a struct, not NULL.
    row2 = expected.where("id = 2").collect()[0]
    assert row2["s"].asDict(recursive=True) == {"a": 6, "b": None, "n": {"x": 20, "y": None}}
    assert row2["p"].asDict() == {"x.y": None, "z": None}
    assert_same_rows(oracle.df(ours), expected, context=f"nested update ({mode})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe reads ({mode})")


@pytest.mark.one_spark_line  # in process: no Spark of icefloe's in it
@pytest.mark.parametrize("mode", MODES)
def test_table_update_assigns_struct_fields_as_javas_update(oracle: Oracle, catalog: Any, mode: str) -> None:
    """`Table.update` in process with struct-field keys (pyarrow values and expressions) against
    Java's UPDATE with the same assignments: a field, a nested field, a field named with a
    dot, values reading the old row (nested ones too), a struct value for a struct field, NULLs,
    NULL structs becoming structs of NULLs. Before, every nested key was an unknown column.
    What Java refuses is refused naming the path, and nothing is committed."""
    import pyarrow as pa
    import pyarrow.compute as pc

    java, ours = _twins(oracle, "nested_upd_ip", mode)
    updates = [
        ("id < 3", "s.a = 5", {"s.a": 5}),
        (
            "id >= 2",
            "s.n.x = CAST(id AS INT) * 10, s.b = s.n.y",
            {"s.n.x": pc.field("id").cast(pa.int32()) * 10, "s.b": pc.field("s", "n", "y")},
        ),
        ("id = 1 OR id = 3", "p.`x.y` = -1", {"p.`x.y`": -1}),
        (
            "id = 4",
            "s.n = named_struct('x', 1, 'y', 'r'), id = id + 100",
            {"s.n": {"x": 1, "y": "r"}, "id": pc.field("id") + 100},
        ),
        ("id = 1", "s.a = NULL, s.n.y = NULL", {"s.a": None, "s.n.y": None}),
    ]
    for where, java_sets, sets in updates:
        oracle.sql(f"UPDATE {oracle.qualified(java)} SET {java_sets} WHERE {where}")
        catalog.load_table(ours).update(where, sets)
    expected = oracle.df(java)
    row2 = expected.where("id = 2").collect()[0]
    assert row2["s"].asDict(recursive=True) == {"a": 5, "b": None, "n": {"x": 20, "y": None}}
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ({mode})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe reads ({mode})")
    table = catalog.load_table(ours)
    before = table.current_snapshot()
    for sets, refusal in (
        ({"s.a": 1, "s": None}, "together with 's.a'"),
        ({"arr.a": 1}, "not a struct"),
        ({"s.zz": 1}, "no field named 'zz'"),
        ({"s.a": "not a number"}, "'s.a'"),
    ):
        with pytest.raises(ValidationError, match=refusal):
            table.update("id = 1", sets)
    assert catalog.load_table(ours).current_snapshot() == before


@pytest.mark.parametrize("mode", MODES)
def test_merge_update_clauses_assign_struct_fields_as_javas_merge_into(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """`WHEN MATCHED [AND ...] THEN UPDATE SET s.a = ...` and `WHEN NOT MATCHED BY SOURCE THEN
    UPDATE SET s.n.x = ...` beside a whole-struct insert, on twin tables: Java's MERGE INTO and
    icefloe's merge store the same rows (NULL structs included)."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_merge", mode)
    source = spark.createDataFrame(
        [(1, 50, "s1"), (2, 20, "s2"), (9, 90, "s9")], "id bigint, x int, y string"
    ).coalesce(1)
    source.createOrReplaceTempView("nested_merge_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING nested_merge_src src ON t.id = src.id "
        "WHEN MATCHED AND t.id = 1 THEN UPDATE SET t.s.a = src.x, s.n.y = src.y "
        "WHEN MATCHED THEN UPDATE SET s.b = src.y, s.N.x = src.x, p.`x.y` = src.x "
        "WHEN NOT MATCHED THEN INSERT (id, s) "
        "VALUES (src.id, named_struct('a', src.x, 'b', src.y, 'n', NULL)) "
        "WHEN NOT MATCHED BY SOURCE AND t.id = 3 THEN UPDATE SET s.n.x = -1 "
        "WHEN NOT MATCHED BY SOURCE THEN UPDATE SET s.a = s.a * 2"
    )
    (
        icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id")
        .when_matched_update({"s.a": "source.x", "s.n.y": "source.y"}, "target.id = 1")
        .when_matched_update({"s.b": "source.y", "s.N.x": "source.x", "p.`x.y`": "source.x"})
        .when_not_matched_by_source_update({"s.n.x": "-1"}, "target.id = 3")
        .when_not_matched_by_source_update({"s.a": "target.s.a * 2"})
        .when_not_matched_insert(
            {"id": "source.id", "s": "named_struct('a', source.x, 'b', source.y, 'n', NULL)"}
        )
        .execute()
    )
    expected = oracle.df(java)
    assert expected.where("id = 2").collect()[0]["s"].asDict(recursive=True) == {
        "a": None,
        "b": "s2",
        "n": {"x": 20, "y": None},
    }
    assert_same_rows(oracle.df(ours), expected, context=f"nested merge ({mode})")


# (assignments, Java's error, icefloe's error): every one refused by Java's UPDATE.
REFUSED = [
    ({"s": "NULL", "s.a": "5"}, "Conflicting assignments for 's'", "conflicting assignments to 's'"),
    ({"s.n.x": "1", "s.n": "NULL"}, "Conflicting assignments for 's.n'", "conflicting assignments to 's.n'"),
    ({"s.a": "5", "S.A": "6"}, "Multiple assignments for 's.a'", "multiple assignments to 's.a'"),
    ({"arr.a": "1"}, "only supported for StructType", "'arr' is array<struct<a:int>>"),
    ({"m.value.a": "1"}, "only supported for StructType", "'m' is map<string,struct<a:int>>"),
    ({"s.zz": "1"}, "FIELD_NOT_FOUND", "'s' has no field named 'zz'"),
    ({"s.a.q": "1"}, "INVALID_EXTRACT_BASE_FIELD_TYPE", "'s.a' is int"),
    ({"s.a": "'x'"}, "INCOMPATIBLE_DATA_FOR_TABLE", "string in column 's.a' of type int"),
    ({"s.n": "named_struct('x', 1)"}, "INCOMPATIBLE_DATA_FOR_TABLE", r"no field for 's\.n\.y'"),
]


@pytest.mark.parametrize(("sets", "java_error", "error"), REFUSED)
def test_nested_assignments_java_refuses_are_refused_naming_the_path(
    spark: Any, oracle: Oracle, catalog: Any, sets: dict[str, str], java_error: str, error: str
) -> None:
    """Java's UPDATE refuses these at analysis; icefloe's update and merge update clause
    refuse them with a ValidationError naming the path, before anything is written."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_bad", "merge-on-read")
    before = oracle.snapshot_ids(ours)
    assignments = ", ".join(f"{k} = {v}" for k, v in sets.items())
    with pytest.raises(Exception, match=java_error):
        oracle.sql(f"UPDATE {oracle.qualified(java)} SET {assignments} WHERE id = 1")
    with pytest.raises(ValidationError, match=error):
        icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", sets)
    source = spark.sql("SELECT 1L AS id")
    with pytest.raises(ValidationError, match=error):
        icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id").when_matched_update(
            sets
        ).execute()
    assert oracle.snapshot_ids(ours) == before


def test_nested_overflow_and_nested_insert_keys_fail_as_javas(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """A bigint beyond int into `s.a` fails Java's UPDATE at run time (CAST_OVERFLOW, ANSI
    store assignment) and icefloe's update and merge, nothing committed; a MERGE insert whose
    keys name a nested field is refused by Java ("INSERT assignment keys cannot be nested
    fields") and by icefloe's merge."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_fail", "copy-on-write")
    before = oracle.snapshot_ids(ours)
    overflow = r"CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE"
    with pytest.raises(Exception, match=overflow):
        oracle.sql(f"UPDATE {oracle.qualified(java)} SET s.a = 5000000000L WHERE id = 1")
    with pytest.raises(Exception, match=overflow):
        icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", {"s.a": "5000000000L"})
    source = spark.sql("SELECT 1L AS id, 5000000000L AS big")
    with pytest.raises(Exception, match=overflow):
        icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id").when_matched_update(
            {"s.a": "source.big"}
        ).execute()
    source.createOrReplaceTempView("nested_fail_src")
    with pytest.raises(Exception, match="INSERT assignment keys cannot be nested fields"):
        oracle.sql(
            f"MERGE INTO {oracle.qualified(java)} t USING nested_fail_src src ON t.id = src.id "
            "WHEN NOT MATCHED THEN INSERT (id, s.a) VALUES (src.id, 1)"
        )
    with pytest.raises(ValidationError, match=r"'s\.a'.*insert's keys cannot be nested fields"):
        icefloe.spark.merge(
            source, catalog.load_table(ours), "target.id = source.id"
        ).when_not_matched_insert({"id": "source.id", "s.a": "1"})
    assert oracle.snapshot_ids(ours) == before


@pytest.mark.usefixtures("case_sensitive")
def test_nested_names_match_case_as_spark_sql_case_sensitive_says(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Under `spark.sql.caseSensitive=true` Java's UPDATE refuses `S.a` and `s.A`, and so does
    icefloe's update, naming the key; `s.n.x` spelled as the table spells it is stored alike."""
    import icefloe.spark

    java, ours = _twins(oracle, "nested_case", "merge-on-read")
    before = oracle.snapshot_ids(ours)
    for key, java_error, error in [
        ("S.a", "UNRESOLVED_COLUMN", "no such column"),
        ("s.A", "FIELD_NOT_FOUND", "'s' has no field named 'A'"),
    ]:
        with pytest.raises(Exception, match=java_error):
            oracle.sql(f"UPDATE {oracle.qualified(java)} SET {key} = 5 WHERE id = 1")
        with pytest.raises(ValidationError, match=error):
            icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", {key: "5"})
    assert oracle.snapshot_ids(ours) == before
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET s.n.x = 7 WHERE id < 3")
    icefloe.spark.update(spark, catalog.load_table(ours), "id < 3", {"s.n.x": "7"})
    assert_same_rows(oracle.df(ours), oracle.df(java), context="case-sensitive nested update")
