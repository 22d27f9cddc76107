# ruff: noqa: E501
"""Tables written by Apache Iceberg Java (Spark SQL, catalog ``oracle``) and read by icefloe.

Every expectation comes from Iceberg Java: icefloe's rows (in process with ``scan().to_arrow()``
and on Spark with ``icefloe.spark.read``) must equal exactly what Java returns for the same
snapshot, projection and filter.
"""

from __future__ import annotations

import decimal
from typing import Any

import pyarrow as pa
import pytest
from conftest import new_table_name
from oracle import Oracle, assert_same_rows, canonical_rows, canonical_rows_from_arrow

pytestmark = [pytest.mark.spark, pytest.mark.interop]

# Columns: every primitive Spark can write (timestamp = Iceberg timestamptz, timestamp_ntz = Iceberg
# timestamp) plus nested struct / list / map. `id` is required; everything else is optional.
COLUMNS_DDL = """
    id bigint NOT NULL, name string, b boolean, i int, l bigint, f float, d double,
    dec9 decimal(9,2), dec38 decimal(38,10), dt date, ts timestamp, ts_ntz timestamp_ntz, bin binary,
    st struct<a: int, b: string, inner: struct<x: double>>, arr array<int>, m map<string, int>,
    arr_st array<struct<x: int, y: string>>, m_arr map<int, array<string>>
"""
COLUMN_NAMES = [
    "id", "name", "b", "i", "l", "f", "d", "dec9", "dec38", "dt", "ts", "ts_ntz", "bin",
    "st", "arr", "m", "arr_st", "m_arr",
]  # fmt: skip

ALL_NULL_TAIL = ", ".join(["null"] * 17)

INSERT_1 = [
    "(1, 'alpha', true, 1, 1, CAST(1.5 AS float), 2.5, CAST(14.20 AS decimal(9,2)), "
    "CAST('12345678901234567890.0123456789' AS decimal(38,10)), DATE'2024-02-29', "
    "TIMESTAMP'2024-02-29 12:34:56.789012', TIMESTAMP_NTZ'2024-02-29 12:34:56.789012', X'00010203', "
    "named_struct('a', 1, 'b', 'x', 'inner', named_struct('x', 1.0D)), array(1, 2, 3), map('k1', 1, 'k2', 2), "
    "array(named_struct('x', 1, 'y', 'a')), map(1, array('a', 'b')))",
    "(2, 'héllo wörld 日本語', false, -2147483648, -9223372036854775808, CAST('NaN' AS float), "
    "CAST('NaN' AS double), CAST(-9999999.99 AS decimal(9,2)), "
    "CAST('-9999999999999999999999999999.9999999999' AS decimal(38,10)), DATE'1969-12-31', "
    "TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP_NTZ'1900-01-01 00:00:00', X'', "
    "named_struct('a', null, 'b', null, 'inner', null), array(), map(), "
    "array(named_struct('x', null, 'y', null), null), map(2, array(), 3, null))",
    "(3, '😀 emoji and a string longer than sixteen chars', null, 2147483647, 9223372036854775807, "
    "CAST('-0.0' AS float), CAST('-0.0' AS double), CAST(0 AS decimal(9,2)), CAST(0 AS decimal(38,10)), "
    "DATE'1900-01-01', TIMESTAMP'1900-01-01 00:00:00', TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', X'FF', "
    "null, array(null, 4), map('k', null), null, null)",
    f"(4, {ALL_NULL_TAIL})",
]
INSERT_2 = [
    "(5, 'epsilon', true, 0, 0, CAST(0.0 AS float), 0.0D, CAST(0.01 AS decimal(9,2)), CAST(1 AS decimal(38,10)), "
    "DATE'1970-01-01', TIMESTAMP'1970-01-01 00:00:00', TIMESTAMP_NTZ'1970-01-01 00:00:00', X'00', "
    "named_struct('a', 5, 'b', 'y', 'inner', named_struct('x', CAST('NaN' AS double))), array(5), map('z', 26), "
    "array(), map())",
    "(6, 'zeta', false, 6, 6, CAST('Infinity' AS float), CAST('-Infinity' AS double), CAST(-0.01 AS decimal(9,2)), "
    "CAST(-1 AS decimal(38,10)), DATE'1969-01-01', TIMESTAMP'1969-01-01 00:00:00.000001', "
    "TIMESTAMP_NTZ'1969-07-20 20:17:40', X'DEADBEEF', named_struct('a', 6, 'b', 'ñ', 'inner', null), "
    "array(6, null, 6), map('é', 6), array(named_struct('x', 6, 'y', 'six')), map(6, array('six', null)))",
    "(7, '', true, 7, 7, CAST(-1.5 AS float), 1.0E300D, CAST(1.28 AS decimal(9,2)), CAST(-1.28 AS decimal(38,10)), "
    "DATE'2000-02-29', TIMESTAMP'2000-02-29 00:00:00', TIMESTAMP_NTZ'2000-02-29 23:59:59', X'7F', "
    "named_struct('a', null, 'b', '', 'inner', named_struct('x', -0.0D)), array(null), map('', 0), "
    "array(null), map(0, array(''), 7, null))",
]
# After `ALTER TABLE ADD COLUMN extra string`: one more column at the end.
INSERT_3 = [
    "(8, 'theta', true, 8, 8, CAST(8.5 AS float), 8.5D, CAST(8.00 AS decimal(9,2)), CAST(8 AS decimal(38,10)), "
    "DATE'1999-12-31', TIMESTAMP'1999-12-31 23:59:59', TIMESTAMP_NTZ'1999-12-31 23:59:59', X'08', "
    "named_struct('a', 8, 'b', 'eight', 'inner', named_struct('x', 8.0D)), array(8), map('eight', 8), "
    "array(named_struct('x', 8, 'y', 'eight')), map(8, array('eight')), 'added later ✓')",
    f"(9, {ALL_NULL_TAIL}, null)",
]


def _insert(oracle: Oracle, table: str, rows: list[str]) -> None:
    oracle.sql(f"INSERT INTO {oracle.qualified(table)} VALUES {', '.join(rows)}")


@pytest.fixture(scope="module", params=[1, 2], ids=["v1", "v2"])
def all_types_table(request: pytest.FixtureRequest, oracle: Oracle) -> str:
    """A table with every type, 3 snapshots (insert, insert, ADD COLUMN + insert), by Java."""
    name = new_table_name(f"all_types_v{request.param}")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} ({COLUMNS_DDL}) USING iceberg "
        f"TBLPROPERTIES ('format-version'='{request.param}')"
    )
    _insert(oracle, name, INSERT_1)
    _insert(oracle, name, INSERT_2)
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} ADD COLUMN extra string")
    _insert(oracle, name, INSERT_3)
    assert len(oracle.snapshot_ids(name)) == 3
    return name


@pytest.fixture(scope="module", params=[1, 2], ids=["v1", "v2"])
def partitioned_table(request: pytest.FixtureRequest, oracle: Oracle) -> str:
    """Identity-partitioned on a string (with a null and a value that needs path escaping), by Java."""
    name = new_table_name(f"part_v{request.param}")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id bigint, category string, dt date, value double) USING iceberg "
        f"PARTITIONED BY (category) TBLPROPERTIES ('format-version'='{request.param}')"
    )
    oracle.sql(
        f"INSERT INTO {oracle.qualified(name)} VALUES (1, 'a', DATE'2024-01-01', 1.0), (2, 'a', null, 2.0), "
        "(3, 'é/ü x=1%', DATE'1969-12-31', CAST('NaN' AS double)), (4, null, DATE'2000-01-01', null)"
    )
    oracle.sql(
        f"INSERT INTO {oracle.qualified(name)} VALUES (5, 'b', DATE'2024-01-02', -0.0), "
        "(6, 'é/ü x=1%', DATE'2024-01-03', 6.0)"
    )
    return name


@pytest.fixture(scope="module")
def mor_table(oracle: Oracle) -> str:
    """Format v2, merge-on-read: snapshot 1 appends 6 rows, snapshot 2 deletes 2 with position deletes."""
    name = new_table_name("mor")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id bigint, category string, payload string) USING iceberg "
        "PARTITIONED BY (category) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    oracle.sql(
        f"INSERT INTO {oracle.qualified(name)} VALUES (1, 'a', 'p1'), (2, 'a', 'p2'), (3, 'a', 'p3'), "
        "(4, 'b', 'p4'), (5, 'b', 'p5'), (6, 'b', 'p6')"
    )
    oracle.sql(f"DELETE FROM {oracle.qualified(name)} WHERE id IN (2, 5)")
    snaps = oracle.snapshots(name)
    assert [s["operation"] for s in snaps] == ["append", "delete"]
    assert int(snaps[1]["summary"]["added-position-deletes"]) == 2
    delete_files = [f for f in oracle.files(name) if f["content"] == 1]
    assert len(delete_files) == 2, delete_files
    return name


# ------------------------------------------------------------------------------------------------
# the comparison helper itself (pure Java side: Spark rows vs Spark's own Arrow batches)
# ------------------------------------------------------------------------------------------------


def test_row_comparison_helper_is_sound(oracle: Oracle, all_types_table: str) -> None:
    df = oracle.df(all_types_table)
    rows = canonical_rows(df)
    arrow = pa.Table.from_batches(df._collect_as_arrow())  # Java's rows through Spark's Arrow path
    assert_same_rows(arrow, rows)
    assert len(rows) == 9

    def one(values: list[Any], t: pa.DataType) -> Any:
        return canonical_rows_from_arrow(pa.table({"c": pa.array(values, t)}))

    assert_same_rows(one([float("nan")], pa.float64()), one([float("nan")], pa.float64()))
    with pytest.raises(AssertionError):
        assert_same_rows(one([-0.0], pa.float64()), one([0.0], pa.float64()))
    with pytest.raises(AssertionError):
        assert_same_rows(
            one([decimal.Decimal("14.2")], pa.decimal128(9, 1)),
            one([decimal.Decimal("14.20")], pa.decimal128(9, 2)),
        )
    with pytest.raises(AssertionError):
        assert_same_rows(one([1, 1], pa.int64()), one([1], pa.int64()))
    with pytest.raises(AssertionError):
        assert_same_rows(one([None], pa.int64()), one([0], pa.int64()))
    # timestamps: same instant with and without a zone compare equal (UTC)
    import datetime as dt

    naive = one([dt.datetime(1969, 12, 31, 23, 59, 59, 999999)], pa.timestamp("us"))
    aware = one(
        [dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc)], pa.timestamp("us", "UTC")
    )
    assert_same_rows(naive, aware)
    # maps are unordered, lists are ordered
    m = pa.map_(pa.string(), pa.int32())
    assert_same_rows(one([[("a", 1), ("b", 2)]], m), one([[("b", 2), ("a", 1)]], m))
    with pytest.raises(AssertionError):
        assert_same_rows(one([[1, 2]], pa.list_(pa.int32())), one([[2, 1]], pa.list_(pa.int32())))


# ------------------------------------------------------------------------------------------------
# icefloe reads what Java wrote
# ------------------------------------------------------------------------------------------------


def _load(catalog: Any, name: str) -> Any:
    return catalog.load_table(name)


def _check_arrow_types(schema: pa.Schema) -> None:
    def is_str(t: pa.DataType) -> bool:
        return pa.types.is_string(t) or pa.types.is_large_string(t)

    assert schema.field("id").type == pa.int64()
    assert is_str(schema.field("name").type)
    assert schema.field("b").type == pa.bool_()
    assert schema.field("i").type == pa.int32()
    assert schema.field("l").type == pa.int64()
    assert schema.field("f").type == pa.float32()
    assert schema.field("d").type == pa.float64()
    assert schema.field("dec9").type == pa.decimal128(9, 2)
    assert schema.field("dec38").type == pa.decimal128(38, 10)
    assert schema.field("dt").type == pa.date32()
    ts, ts_ntz = schema.field("ts").type, schema.field("ts_ntz").type
    assert pa.types.is_timestamp(ts) and ts.unit == "us" and ts.tz in ("UTC", "+00:00"), ts
    assert pa.types.is_timestamp(ts_ntz) and ts_ntz.unit == "us" and ts_ntz.tz is None, ts_ntz
    assert pa.types.is_binary(schema.field("bin").type) or pa.types.is_large_binary(schema.field("bin").type)
    assert pa.types.is_struct(schema.field("st").type)
    assert pa.types.is_map(schema.field("m").type)
    assert not schema.field("id").nullable


@pytest.mark.parametrize("snap_index", [0, 1, 2])
def test_scan_each_snapshot_matches_java(
    oracle: Oracle, catalog: Any, all_types_table: str, snap_index: int
) -> None:
    snapshot_id = oracle.snapshot_ids(all_types_table)[snap_index]
    table = _load(catalog, all_types_table)
    got = table.scan(snapshot_id=snapshot_id).to_arrow()
    assert isinstance(got, pa.Table)
    assert_same_rows(got, oracle.df(all_types_table, snapshot_id), context=f"snapshot {snapshot_id}")
    _check_arrow_types(got.schema)
    # planning returns exactly the data files Java plans
    paths = sorted(task.file.file_path for task in table.scan(snapshot_id=snapshot_id).plan_files())
    assert paths == oracle.plan_file_paths(all_types_table, snapshot_id)
    counts = sum(task.file.record_count for task in table.scan(snapshot_id=snapshot_id).plan_files())
    assert counts == got.num_rows


def test_scan_current_snapshot_matches_java(oracle: Oracle, catalog: Any, all_types_table: str) -> None:
    table = _load(catalog, all_types_table)
    assert table.current_snapshot().snapshot_id == oracle.current_snapshot_id(all_types_table)
    assert [s.snapshot_id for s in table.snapshots()] == oracle.snapshot_ids(all_types_table)
    assert (
        table.metadata.format_version
        == oracle.java_table(all_types_table).operations().current().formatVersion()
    )
    got = table.scan().to_arrow()
    assert_same_rows(got, oracle.df(all_types_table))
    assert got.column_names == [*COLUMN_NAMES, "extra"]
    # files written before ADD COLUMN read the new column as null
    by_id = dict(zip(got.column("id").to_pylist(), got.column("extra").to_pylist()))
    assert by_id == {**{i: None for i in range(1, 8)}, 8: "added later ✓", 9: None}


@pytest.mark.parametrize("snap_index", [0, 2])
def test_spark_read_matches_java(
    spark: Any, oracle: Oracle, catalog: Any, all_types_table: str, snap_index: int
) -> None:
    import icefloe.spark

    snapshot_id = oracle.snapshot_ids(all_types_table)[snap_index]
    table = _load(catalog, all_types_table)
    df = icefloe.spark.read(spark, table, snapshot_id=snapshot_id)
    assert_same_rows(df, oracle.df(all_types_table, snapshot_id), context=f"snapshot {snapshot_id}")
    current = icefloe.spark.read(spark, table)
    assert_same_rows(current, oracle.df(all_types_table))


def test_projection_matches_java(spark: Any, oracle: Oracle, catalog: Any, all_types_table: str) -> None:
    import icefloe.spark

    table = _load(catalog, all_types_table)
    expected = oracle.df(all_types_table, columns=["id", "name"])
    got = table.scan(selected_fields=("id", "name")).to_arrow()
    assert got.column_names == ["id", "name"]
    assert_same_rows(got, expected)
    assert_same_rows(icefloe.spark.read(spark, table, selected_fields=("id", "name")), expected)
    # nested and reordered projection, on an old snapshot
    first = oracle.snapshot_ids(all_types_table)[0]
    # icefloe returns selected columns in schema order (as PyIceberg does); compare by name
    got = table.scan(selected_fields=("st", "dec38", "m"), snapshot_id=first).to_arrow()
    assert sorted(got.column_names) == ["dec38", "m", "st"]
    assert_same_rows(
        got.select(["st", "dec38", "m"]), oracle.df(all_types_table, first, columns=["st", "dec38", "m"])
    )


def _filters() -> list[tuple[str, Any, str]]:
    from icefloe.expressions import And, EqualTo, GreaterThan, IsNull

    return [
        ("gt", GreaterThan("id", 5), "id > 5"),
        ("eq_str", EqualTo("name", "héllo wörld 日本語"), "name = 'héllo wörld 日本語'"),
        ("eq_int", EqualTo("i", 7), "i = 7"),
        ("is_null", IsNull("name"), "name IS NULL"),
        ("and", And(GreaterThan("id", 1), IsNull("b")), "id > 1 AND b IS NULL"),
        ("gt_double", GreaterThan("d", 0.0), "d > 0.0"),
        ("eq_date", EqualTo("dt", "1969-12-31"), "dt = DATE'1969-12-31'"),
    ]


@pytest.mark.parametrize("which", ["gt", "eq_str", "eq_int", "is_null", "and", "gt_double", "eq_date"])
def test_row_filter_matches_java(
    spark: Any, oracle: Oracle, catalog: Any, all_types_table: str, which: str
) -> None:
    import icefloe.spark

    _, expr, where = next(f for f in _filters() if f[0] == which)
    table = _load(catalog, all_types_table)
    expected = canonical_rows(oracle.df(all_types_table, where=where))
    assert len(expected) > 0, f"filter {where} selects nothing: the test data needs a matching row"
    assert_same_rows(table.scan(row_filter=expr).to_arrow(), expected, context=where)
    assert_same_rows(icefloe.spark.read(spark, table, row_filter=expr), expected, context=where)
    # on an earlier snapshot, together with a projection
    first = oracle.snapshot_ids(all_types_table)[0]
    got = table.scan(row_filter=expr, selected_fields=("id", "name"), snapshot_id=first).to_arrow()
    assert_same_rows(
        got, oracle.df(all_types_table, first, columns=["id", "name"], where=where), context=where
    )


def test_partitioned_table_matches_java(
    spark: Any, oracle: Oracle, catalog: Any, partitioned_table: str
) -> None:
    import icefloe.spark
    from icefloe.expressions import EqualTo, IsNull

    table = _load(catalog, partitioned_table)
    for snapshot_id in oracle.snapshot_ids(partitioned_table):
        assert_same_rows(
            table.scan(snapshot_id=snapshot_id).to_arrow(),
            oracle.df(partitioned_table, snapshot_id),
            context=f"snapshot {snapshot_id}",
        )
        paths = sorted(t.file.file_path for t in table.scan(snapshot_id=snapshot_id).plan_files())
        assert paths == oracle.plan_file_paths(partitioned_table, snapshot_id)
    assert_same_rows(icefloe.spark.read(spark, table), oracle.df(partitioned_table))

    # A filter on the partition column (applied row-wise until the scan planner prunes;
    # planning parity with Java under filters is the scan planner issue's proof).
    expr = EqualTo("category", "é/ü x=1%")
    assert_same_rows(
        table.scan(row_filter=expr).to_arrow(), oracle.df(partitioned_table, where="category = 'é/ü x=1%'")
    )
    assert_same_rows(
        table.scan(row_filter=IsNull("category")).to_arrow(),
        oracle.df(partitioned_table, where="category IS NULL"),
    )


def test_merge_on_read_deletes_are_applied(spark: Any, oracle: Oracle, catalog: Any, mor_table: str) -> None:
    import icefloe.spark

    before, after = oracle.snapshot_ids(mor_table)
    table = _load(catalog, mor_table)
    # Java hides the deleted rows; so does icefloe (tests/test_merge_on_read.py covers the rest)
    assert sorted(r[0] for r in oracle.rows(mor_table)) == [1, 3, 4, 6]
    for snap in (before, after):
        assert_same_rows(table.scan(snapshot_id=snap).to_arrow(), oracle.df(mor_table, snap))
        assert_same_rows(icefloe.spark.read(spark, table, snapshot_id=snap), oracle.df(mor_table, snap))
