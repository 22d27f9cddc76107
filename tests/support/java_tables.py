# ruff: noqa: E501
"""Tables Apache Iceberg Java writes through Spark SQL (catalog `oracle`), as module-scoped
fixtures: every type in format v1 and v2 (`all_types_table`), partitioned by every transform
(`partitioned_table`), and merge-on-read with position deletes (`mor_table`). Read by the
interop tests and by the PySpark 4 data source tests."""

from __future__ import annotations

import pytest

from support.oracle import Oracle
from support.session import new_table_name

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
