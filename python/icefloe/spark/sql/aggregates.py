"""Aggregate pushdown: `SELECT count(*), count(c), min(c), max(c) FROM t [WHERE ...]` over an
icefloe table answered from the manifests' metrics, as Iceberg Java's Spark runtime answers it
(`SparkScanBuilder.pushAggregation` with `AggregateEvaluator`), reading no data file.

A SELECT is answered from metrics only when Java's runtime would push its aggregation:

- it reads one icefloe table (no joins, GROUP BY, HAVING, DISTINCT, window, ORDER BY), its
  projections use the table's columns only inside `count(*)`, `count(c)`, `min(c)`, `max(c)`
  of top-level columns, and Spark's `spark.sql.iceberg.aggregate-push-down.enabled` is not
  `false`;
- its WHERE (if any) is evaluated completely by Iceberg: every conjunct translates exactly
  (`filters.true_of`), names only columns partitioned in every spec (by any transform), and
  leaves no residual on any planned file (its partition values imply it for all the file's
  rows: Iceberg's `ResidualEvaluator`). Java asks instead that the filter select whole
  partitions in every spec (`ExpressionUtil.selectsPartitions`: strict and inclusive
  projections agree), whether or not the table holds files there; both answer only when
  every planned file's rows all match, so the two give the same rows (a `months(dt)`
  partition and `dt >= DATE'2024-01-01'`, say; not `dt >= DATE'2024-01-15'` where a file of
  January holds later days, which keeps a residual, nor `bucket`, which has no strict
  projection); icefloe also answers where metrics prune the files a residual would stay on;
- the metrics mode allows it (Java's `metricsModeSupportsAggregatePushDown`): no `none` column,
  no min/max of a `counts` column, never min/max of a string or binary column (their bounds
  may be truncated), and min/max only of types whose bounds are exact values Spark shows
  (int, long, float, double, decimal, date, timestamp, timestamp_ntz, boolean);
- every planned file has no delete file, and each aggregate has its metric in every file
  (Java's `hasValue`: a record count; value and null counts; a bound, or only nulls; no NaN
  for min/max).

Otherwise the SELECT is left alone and reads as any query does. The answer replaces the
SELECT by a SELECT of literals (no FROM), each projection named as Spark names it (the
original SELECT analysed over an empty relation of the table's schema).
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from icefloe.spark.sql.dialect import IcebergSpark
from icefloe.spark.sql.filters import Timestamps, conjuncts, true_of
from icefloe.spark.sql.query import Context, cte_names, read_options, requalify_columns, table_parts
from icefloe.types import StructType

if TYPE_CHECKING:
    from icefloe.scan import DataFile
    from icefloe.schema import Schema
    from icefloe.table import Table

__all__ = ["ENABLED_CONF", "push_aggregates"]

ENABLED_CONF = "spark.sql.iceberg.aggregate-push-down.enabled"

# Types whose bounds are exact values and what Spark calls them.
_SPARK_TYPES = {
    "boolean": "BOOLEAN",
    "int": "INT",
    "long": "BIGINT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "date": "DATE",
    "timestamptz": "TIMESTAMP",
    "timestamp": "TIMESTAMP_NTZ",
}
_SELECT_ARGS = {"expressions", "from_", "where", "limit"}


@dataclass(frozen=True)
class _Aggregate:
    node: exp.Expr  # the aggregate call in the SELECT
    op: str  # count_star, count, min, max
    field_id: int = 0
    type_json: str = ""


def push_aggregates(ctx: Context, tree: exp.Expr) -> tuple[exp.Expr, bool]:
    """`tree` with each SELECT Java's runtime would answer from metrics replaced by its
    answer; whether any was."""
    if str(ctx.spark.conf.get(ENABLED_CONF, "true")).strip().lower() == "false":
        return tree, False
    ctes = cte_names(tree)
    pushed = False
    for select in list(tree.find_all(exp.Select)):
        answer = _answer(ctx, select, ctes)
        if answer is None:
            continue
        pushed = True
        if select is tree:
            tree = answer
        else:
            select.replace(answer)
    return tree, pushed


def _answer(ctx: Context, select: exp.Select, ctes: frozenset[str]) -> exp.Select | None:
    if any(v for k, v in select.args.items() if k not in _SELECT_ARGS):
        return None
    source = select.args.get("from_")
    table = source.this if isinstance(source, exp.From) else None
    if not isinstance(table, exp.Table) or table.args.get("joins"):
        return None
    parts = table_parts(table)
    ref = ctx.resolver.table(parts, ctes) if parts else None
    if ref is None or ref.metadata_table is not None or parts is None:
        return None
    nodes = [n for e in select.expressions for n in e.walk()]
    if any(isinstance(n, (exp.Window, exp.Subquery, exp.Select)) for n in nodes):
        return None
    # the shape first (no catalog call for a SELECT that is no aggregate of columns)
    if not any(isinstance(n, (exp.Count, exp.Max, exp.Min)) for n in nodes) or any(
        isinstance(n, exp.Column) and not isinstance(n.parent, (exp.Count, exp.Max, exp.Min)) for n in nodes
    ):
        return None
    visible = table.alias or parts[-1]
    loaded = ref.load()
    options = read_options(ctx, loaded, ref, table.args.get("version"))
    scan = loaded.scan(include_column_stats=True, **options)
    schema = scan.projection()
    out = select.copy()  # the aggregates are found, and replaced, in the copy
    aggregates = _aggregates(out, schema, parts, visible)
    if aggregates is None or not _metrics_allow(loaded, aggregates):
        return None
    where = select.args.get("where")
    if where is not None:
        row_filter = _partition_filter(loaded, schema, where.this, visible, ctx.timestamps())
        if row_filter is None:
            return None
        scan = loaded.scan(row_filter=row_filter, include_column_stats=True, **options)
    values = _evaluate(scan.plan_files(), aggregates)
    if values is None:
        return None
    names = _spark_names(ctx, select, loaded, parts, visible)
    if names is None:
        return None
    for a, value in zip(aggregates, values):
        a.node.replace(_literal(a, value))
    projections = [
        exp.alias_(e.this if isinstance(e, exp.Alias) else e, name, quoted=True)
        for e, name in zip(out.expressions, names)
    ]
    out.set("from_", None)
    out.set("where", None)
    out.set("expressions", projections)
    return out


def _aggregates(
    select: exp.Select, schema: Schema, parts: list[str], visible: str
) -> list[_Aggregate] | None:
    found: list[_Aggregate] = []
    for expression in select.expressions:
        for node in expression.walk():
            if isinstance(node, exp.Star) and not isinstance(node.parent, exp.Count):
                return None
            if isinstance(node, exp.Column) and not isinstance(node.parent, (exp.Count, exp.Max, exp.Min)):
                return None
            if not isinstance(node, exp.AggFunc):
                continue
            if isinstance(node, exp.Count) and (
                isinstance(node.this, exp.Star)
                or (isinstance(node.this, exp.Literal) and not node.this.is_string and node.this.this == "1")
            ):
                found.append(_Aggregate(node, "count_star"))
                continue
            if not isinstance(node, (exp.Count, exp.Max, exp.Min)) or node.expressions:
                return None
            column = node.this
            field = _column_field(column, schema, parts, visible) if isinstance(column, exp.Column) else None
            if field is None or not field.field_type.is_primitive:
                return None
            op = {exp.Count: "count", exp.Max: "max", exp.Min: "min"}[type(node)]
            found.append(_Aggregate(node, op, field.field_id, str(field.field_type.to_json())))
    return found or None


def _column_field(column: exp.Column, schema: Schema, parts: list[str], visible: str) -> Any:
    """The field a column reference names: a top-level column or a field of struct columns
    (`st.a`), after a qualifier naming the table (its alias, or the end of its name). The
    longest qualifier is tried first, as Spark resolves `t.c` as a table's column before a
    column's field. None when it names no such field."""
    names = [p.name.lower() for p in column.parts]
    for k in range(len(names) - 1, -1, -1):
        if k and not _qualifies(names[:k], parts, visible):
            continue
        node: Any = schema
        for name in names[k:]:
            fields = node.fields if node is schema else node.field_type.fields
            node = next((f for f in fields if f.name.lower() == name), None)
            if node is None or (name != names[-1] and not isinstance(node.field_type, StructType)):
                node = None
                break
        if node is not None:
            return node
    return None


def _qualifies(qualifier: list[str], parts: list[str], visible: str) -> bool:
    if len(qualifier) == 1 and qualifier[0] == visible.lower():
        return True
    return qualifier == [p.lower() for p in parts[len(parts) - len(qualifier) :]]


def _metrics_allow(table: Table, aggregates: list[_Aggregate]) -> bool:
    """Java's `metricsModeSupportsAggregatePushDown`: each column's mode as the writers keep
    metrics (Rust's `MetricsConfig::for_table`, Java's `MetricsConfig.forTable`: properties,
    the inferred limit, the sort order), by field id."""
    modes = table.metadata.metrics_modes()
    for a in aggregates:
        if a.op == "count_star":
            continue
        mode = modes.get(a.field_id, "none")  # a column the current schema lacks: read
        if mode == "none":
            return False
        if a.op in ("min", "max"):
            kind = _type_name(a.type_json)
            if mode == "counts" or (kind not in _SPARK_TYPES and kind != "decimal"):
                return False
    return True


def _type_name(type_json: str) -> str:
    text = type_json.strip().strip('"')
    return "decimal" if text.startswith("decimal") else text


def _partition_filter(
    table: Table, schema: Schema, where: exp.Expression, visible: str, timestamps: Timestamps
) -> Any:
    """The WHERE as an icefloe filter when Iceberg may evaluate it completely (every conjunct
    exact, over columns partitioned in every spec), else None; `_evaluate` then asks that it
    leave no residual on any planned file."""
    from icefloe import expressions as ice

    specs = list(table.specs().values())
    if not specs or any(not spec.fields for spec in specs):
        return None  # Java: an unpartitioned table (or spec) leaves every filter to Spark
    partitioned = set.intersection(*({f.source_id for f in spec.fields} for spec in specs))
    fields = {f.name.lower(): f for f in schema.fields}

    def lookup(qualifier: str | None, name: str) -> tuple[str, str] | None:
        if qualifier is not None and qualifier.lower() != visible.lower():
            return None
        f = fields.get(name.lower())
        if f is None or not f.field_type.is_primitive or f.field_id not in partitioned:
            return None
        return f.name, str(f.field_type.to_json())

    pushed = []
    for conjunct in conjuncts(where):
        found = true_of(conjunct, lookup, timestamps)
        if found is None:
            return None
        pushed.append(found)
    return pushed[0] if len(pushed) == 1 else ice.And(*pushed)


def _evaluate(tasks: Any, aggregates: list[_Aggregate]) -> list[Any] | None:
    """Java's `AggregateEvaluator` over the planned files: each aggregate's value, or None
    when a file has deletes, a residual filter (rows of it that may not match) or lacks a
    metric an aggregate needs."""
    values: list[Any] = [0 if a.op in ("count_star", "count") else None for a in aggregates]
    for task in tasks:
        if task.delete_paths or task.residual is not None:
            return None
        file = task.file
        for i, a in enumerate(aggregates):
            value = _file_value(file, a)
            if value is _INVALID:
                return None
            if a.op in ("count_star", "count"):
                values[i] += value
            elif value is not None and (
                values[i] is None or (value > values[i] if a.op == "max" else value < values[i])
            ):
                values[i] = value
    return values


_INVALID = object()


def _file_value(file: DataFile, a: _Aggregate) -> Any:
    if a.op == "count_star":
        return file.record_count if file.record_count >= 0 else _INVALID
    value_count = file.value_counts.get(a.field_id)
    null_count = file.null_value_counts.get(a.field_id)
    if a.op == "count":
        if value_count is None or null_count is None:
            return _INVALID
        return value_count - null_count
    if (file.nan_value_counts.get(a.field_id) or 0) > 0:
        return _INVALID  # a NaN: the bound does not say where it sorts
    bounds = file.upper_bounds if a.op == "max" else file.lower_bounds
    bound = bounds.get(a.field_id)
    if bound is not None:
        return _decode(a.type_json, bound)
    if value_count is not None and value_count > 0 and null_count == value_count:
        return None  # only nulls
    return _INVALID


def _decode(type_json: str, data: bytes) -> Any:
    """A bound (the spec's binary single value) as a Python value ordered as Iceberg orders
    it: numbers, days, microseconds, an unscaled decimal, a boolean."""
    kind = _type_name(type_json)
    if kind == "boolean":
        return data[0] != 0
    if kind in ("int", "date"):
        return int(struct.unpack("<i", data)[0])
    if kind in ("long", "timestamp", "timestamptz"):
        return int(struct.unpack("<q", data)[0])
    if kind == "float":
        return float(struct.unpack("<f", data)[0])
    if kind == "double":
        return float(struct.unpack("<d", data)[0])
    return int.from_bytes(data, "big", signed=True)  # decimal: the unscaled value


def _spark_type(type_json: str) -> str:
    text = type_json.strip().strip('"')
    if text.startswith("decimal"):
        return text.upper().replace(" ", "")
    return _SPARK_TYPES[text]


def _literal(a: _Aggregate, value: Any) -> exp.Expr:
    """The Spark SQL literal of an aggregate's value, typed (nullability included) as Spark
    types the aggregate."""
    if a.op in ("count_star", "count"):
        text = f"CAST({int(value)} AS BIGINT)"
    elif value is None:
        text = f"CAST(NULL AS {_spark_type(a.type_json)})"
    else:
        text = _value_text(a.type_json, value)
    if a.op in ("min", "max"):
        text = f"NULLIF({text}, NULL)"  # the value, typed nullable as Spark types min and max
    return sqlglot.parse_one(f"SELECT {text}", dialect=IcebergSpark).expressions[0]


def _value_text(type_json: str, value: Any) -> str:
    kind = _type_name(type_json)
    if kind == "boolean":
        return "TRUE" if value else "FALSE"
    if kind in ("int", "long"):
        return f"CAST({value} AS {_SPARK_TYPES[kind]})"
    if kind in ("float", "double"):
        text = "Infinity" if value == float("inf") else "-Infinity" if value == float("-inf") else repr(value)
        return f"CAST('{text}' AS {_SPARK_TYPES[kind]})"
    if kind == "decimal":
        scale = int(type_json.strip().strip('"').rstrip(")").split(",")[1])
        text = format(decimal.Decimal(value).scaleb(-scale), "f")
        return f"CAST('{text}' AS {_spark_type(type_json)})"
    if kind == "date":
        return f"DATE_FROM_UNIX_DATE({value})"
    if kind == "timestamptz":
        return f"TIMESTAMP_MICROS({value})"
    ntz = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=value)
    return f"CAST('{ntz.isoformat(sep=' ')}' AS TIMESTAMP_NTZ)"


def _spark_names(
    ctx: Context, select: exp.Select, table: Table, parts: list[str], visible: str
) -> list[str] | None:
    """The names Spark gives the SELECT's columns: the SELECT analysed (not run) over an empty
    relation of the table's columns."""
    from icefloe.spark._nested_assign import table_spark_schema

    probe = select.copy()
    requalify_columns(probe, parts, visible)
    empty = ctx.spark.createDataFrame([], table_spark_schema(table))
    name = ctx.view(empty)
    holder = probe.args["from_"].this
    new = exp.Table(
        this=exp.to_identifier(name), alias=exp.TableAlias(this=exp.to_identifier(visible, quoted=True))
    )
    holder.replace(new)
    try:
        return list(ctx.spark.sql(probe.sql(dialect=IcebergSpark)).columns)
    except Exception:
        return None
