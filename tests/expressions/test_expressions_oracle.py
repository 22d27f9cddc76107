"""InclusiveMetricsEvaluator parity with Apache Iceberg Java (the oracle).

An unpartitioned table written by Iceberg Java (Spark SQL) holds several files whose column
metrics differ (ranges on both sides of 1970, nulls-only and NaN columns, strings sharing
prefixes). For 45 filters (every predicate and connective, on every column), the files
icefloe's InclusiveMetricsEvaluator keeps must equal the files Java's
`table.newScan().filter(expr).planFiles()` returns — no partition pruning is involved, so the
metrics evaluator alone decides on both sides. The Java expression is built from the same
filter (the JSON `icefloe._native.parse_filter` returns) through py4j
`org.apache.iceberg.expressions.Expressions`.
"""

from __future__ import annotations

import decimal
import json
import math
from typing import Any

import pytest
from icefloe import _native
from icefloe import expressions as E
from support.expression_cases import COLUMNS, OPERATIONS, operations_and_terms
from support.oracle import java_plan
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

# One INSERT per file. Columns: id, ts (timestamp_ntz), name, amount (double), d (date),
# dec (decimal(9,2)), nul (int, all null in most files).
FILES = [
    "(1, timestamp_ntz'1969-12-30 10:00:00', 'apple', 1.5, DATE'1969-12-30', 1.10, NULL),"
    "(5, timestamp_ntz'1969-12-31 23:00:00', 'apricot', 2.5, DATE'1969-12-31', 2.20, NULL)",
    "(10, timestamp_ntz'1970-01-01 00:00:00', 'banana', double('NaN'), DATE'1970-01-01', 3.30, NULL),"
    "(20, timestamp_ntz'1970-01-02 00:00:00', 'blueberry', 7.0, DATE'1970-01-02', 4.40, NULL)",
    "(30, timestamp_ntz'2024-01-01 00:00:00', 'cherry', double('NaN'), DATE'2024-01-01', 5.50, 1),"
    "(40, timestamp_ntz'2024-01-01 12:00:00', NULL, double('NaN'), DATE'2024-01-01', NULL, 2)",
    "(50, timestamp_ntz'2024-06-01 00:00:00', NULL, NULL, NULL, NULL, NULL)",
    "(-100, timestamp_ntz'1900-01-01 00:00:00', 'aardvark', -1e10, DATE'1900-01-01', -99.99, NULL),"
    "(-50, timestamp_ntz'1950-06-15 00:00:00', 'ab', -0.0, DATE'1950-06-15', 0.00, NULL)",
    "(60, timestamp_ntz'2024-07-01 00:00:00', 'fig', double('Infinity'), DATE'2024-07-01', 6.60, NULL),"
    "(70, timestamp_ntz'2024-07-02 00:00:00', 'grape', 3.0, DATE'2024-07-02', 7.70, NULL)",
    "(80, timestamp_ntz'2024-08-01 00:00:00', 'kiwi', double('-Infinity'), DATE'2024-08-01', 8.80, NULL)",
]

FILTERS = [
    "id = 5",
    "id = 6",
    "id > 40",
    "id >= 50",
    "id < -100",
    "id <= -100",
    "id < 0",
    "id != 5",
    "id IN (2, 3, 4)",
    "id IN (-75, 45)",
    "id NOT IN (1, 5)",
    "id BETWEEN 11 AND 19",
    "NOT id < 30",
    "id > 100 OR id < -1000",
    "id > 0 AND id < 10",
    "ts >= '2024-01-01T00:00:00'",
    "ts < '1970-01-01T00:00:00'",
    "ts < '1969-12-31T00:00:00'",
    "ts > '2024-06-01T00:00:00'",
    "ts = '1970-01-01T00:00:00'",
    "d < '1970-01-01'",
    "d = '1969-12-31'",
    "d >= '2024-01-02'",
    "name LIKE 'a%'",
    "name LIKE 'ap%'",
    "name LIKE 'c%'",
    "name LIKE 'z%'",
    "name NOT LIKE 'a%'",
    "name = 'banana'",
    "name > 'blueberry'",
    "name IS NULL",
    "name IS NOT NULL",
    "amount > 5.0",
    "amount < 0.0",
    "amount = 2.5",
    "isnan(amount)",
    "NOT isnan(amount)",
    "amount IS NULL",
    "dec > 4.40",
    "dec = 0.00",
    "dec IN (1.10, 5.50)",
    "nul IS NULL",
    "nul IS NOT NULL",
    "nul = 1",
    "nul > 5",
]


# Java has no decimal -> double literal conversion (icefloe binds `amount > 5.0` leniently):
# give Java a double for the double columns.
DOUBLE_COLUMNS = {"amount"}


def _lit(v: Any, term: str = "") -> Any:
    if isinstance(v, dict) and "double" in v:  # an infinite double
        return math.inf if v["double"] == "Infinity" else -math.inf
    if isinstance(v, dict) and "decimal" in v:
        return float(v["decimal"]) if term in DOUBLE_COLUMNS else decimal.Decimal(v["decimal"])
    return v


def java_expr(jvm: Any, obj: dict[str, Any]) -> Any:
    """The Java Expression of an unbound expression's JSON."""
    ex = jvm.org.apache.iceberg.expressions.Expressions
    t = obj["type"]
    if t == "true":
        return ex.alwaysTrue()
    if t == "false":
        return ex.alwaysFalse()
    if t in ("and", "or"):
        left, right = java_expr(jvm, obj["left"]), java_expr(jvm, obj["right"])
        return getattr(ex, t)(left, right)
    if t == "not":
        return getattr(ex, "not")(java_expr(jvm, obj["child"]))
    term = obj["term"]
    unary = {"is-null": ex.isNull, "not-null": ex.notNull, "is-nan": ex.isNaN, "not-nan": ex.notNaN}
    if t in unary:
        return unary[t](term)
    if t in ("in", "not-in"):
        values = jvm.java.util.ArrayList()
        for v in obj["values"]:
            values.add(_lit(v, term))
        return getattr(ex, "in")(term, values) if t == "in" else ex.notIn(term, values)
    binary = {
        "lt": ex.lessThan,
        "lt-eq": ex.lessThanOrEqual,
        "gt": ex.greaterThan,
        "gt-eq": ex.greaterThanOrEqual,
        "eq": ex.equal,
        "not-eq": ex.notEqual,
        "starts-with": ex.startsWith,
        "not-starts-with": ex.notStartsWith,
    }
    return binary[t](term, _lit(obj["value"], term))


@pytest.fixture(scope="module")
def metrics_table(spark: Any, oracle: Any, catalog: Any) -> dict[str, Any]:
    name = new_table_name("exprm")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, ts timestamp_ntz, name string, amount double, d date, "
        "dec decimal(9,2), nul int) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'write.metadata.metrics.default'='full')"
    )
    for rows in FILES:
        spark.sql(f"SELECT * FROM VALUES {rows}").coalesce(1).createOrReplaceTempView("expr_rows")
        oracle.sql(f"INSERT INTO {q} SELECT * FROM expr_rows")
    table = catalog.load_table(name)
    plan = _native.plan_scan(table.metadata, include_column_stats=True)
    files = [plan[i].file_json() for i in range(len(plan))]
    assert len(files) == len(FILES)
    return {"name": name, "table": table, "files": files, "schema": table.metadata.schema_json()}


def test_filters_cover_every_operation_on_every_column() -> None:
    assert len(FILTERS) == 45 and len(set(FILTERS)) == len(FILTERS), "45 distinct filters"
    ops: set[str] = set()
    terms: set[str] = set()
    for text in FILTERS:
        o, t = operations_and_terms(json.loads(_native.parse_filter(text)))
        ops, terms = ops | o, terms | t
    assert ops == OPERATIONS, (sorted(OPERATIONS - ops), sorted(ops - OPERATIONS))
    assert terms == COLUMNS, (sorted(COLUMNS - terms), sorted(terms - COLUMNS))


@pytest.mark.parametrize("text", FILTERS)
def test_inclusive_metrics_match_java_plan_files(
    oracle: Any, metrics_table: dict[str, Any], text: str
) -> None:
    unbound = _native.parse_filter(text)
    bound = _native.bind_filter(unbound, metrics_table["schema"])
    ours = sorted(_native.files_matching_metrics(metrics_table["files"], bound))

    jtable = oracle.java_table(metrics_table["name"])
    java = sorted(
        path
        for path, _deletes in java_plan(jtable.newScan().filter(java_expr(oracle.jvm, json.loads(unbound))))
    )

    def norm(paths: list[str]) -> list[str]:
        return sorted(p.removeprefix("file://").removeprefix("file:") for p in paths)

    assert norm(ours) == norm(java), f"{text}: icefloe kept {len(ours)}, Java {len(java)}"


# Infinite literals (Iceberg Java accepts them; a filter's text cannot spell them, the Python
# API can): the files kept and the rows read equal Java's, NaN and infinite values included.
INFINITE = [
    (E.GreaterThan("amount", math.inf), "amount > double('Infinity')"),
    (E.GreaterThanOrEqual("amount", math.inf), "amount >= double('Infinity')"),
    (E.LessThan("amount", math.inf), "amount < double('Infinity')"),
    (E.LessThanOrEqual("amount", -math.inf), "amount <= double('-Infinity')"),
    (E.GreaterThan("amount", -math.inf), "amount > double('-Infinity')"),
    (E.EqualTo("amount", math.inf), "amount = double('Infinity')"),
    (E.NotEqualTo("amount", -math.inf), "amount != double('-Infinity')"),
    (E.In("amount", [math.inf, 2.5]), "amount IN (double('Infinity'), 2.5)"),
]


@pytest.mark.parametrize(("expr", "sql"), INFINITE, ids=[sql for _, sql in INFINITE])
def test_infinite_literals_match_java(
    oracle: Any, metrics_table: dict[str, Any], expr: E.BooleanExpression, sql: str
) -> None:
    unbound = expr.to_json()
    assert "Infinity" in unbound and E.from_json(unbound) == expr  # tagged, and read back
    bound = _native.bind_filter(unbound, metrics_table["schema"])
    ours = sorted(_native.files_matching_metrics(metrics_table["files"], bound))
    jtable = oracle.java_table(metrics_table["name"])
    java = sorted(
        path
        for path, _deletes in java_plan(jtable.newScan().filter(java_expr(oracle.jvm, json.loads(unbound))))
    )
    strip = lambda ps: sorted(p.removeprefix("file://").removeprefix("file:") for p in ps)  # noqa: E731
    assert strip(ours) == strip(java), f"{sql}: icefloe kept {len(ours)} files, Java {len(java)}"

    rows = metrics_table["table"].scan(row_filter=expr, selected_fields=("id",)).to_arrow()
    q = oracle.qualified(metrics_table["name"])
    expected = sorted(r[0] for r in oracle.sql(f"SELECT id FROM {q} WHERE {sql}"))
    assert sorted(rows.column("id").to_pylist()) == expected, sql
    # `amount > Infinity` can only match NaN, and both engines' metrics rule out the files
    # whose only candidates are NaN values: nothing is read. Every other case reads rows.
    assert bool(expected) == (sql != "amount > double('Infinity')"), (sql, expected)
