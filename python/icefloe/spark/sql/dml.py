"""DML on icefloe tables, mapped onto the `icefloe.spark` writes:

- `INSERT INTO t [(cols)] query|VALUES` is `append` of the query's rows, matched to the
  table's columns by position (or to the listed columns, or with `BY NAME` to the query's
  column names; the others null where Spark fills them), each value
  stored as Spark's ANSI store assignment stores it (`_store_assign`), as Java's INSERT;
  `INSERT INTO t.branch_b` appends to branch `b`;
- `DELETE FROM t [WHERE p]` is `delete` when `filters.true_of` translates `p` exactly,
  else a MERGE of one source row `ON p WHEN MATCHED THEN DELETE`, where Spark evaluates `p`
  (its conjuncts with IN / EXISTS / scalar subqueries as a filter of the target rows, which
  Spark's join conditions cannot hold);
- `UPDATE t SET ... [WHERE p]` is `update`, or the same MERGE with `UPDATE SET`;
- `MERGE INTO t USING s ON ... WHEN ...` is `merge` with the statement's clauses in order.

Iceberg's functions (`system.bucket(16, id)`, `days(ts)`, ...) anywhere in a statement become
Spark SQL of Java's values (`functions.rewrite_functions`), their arguments typed over the
target's and the source's columns.

Each handler returns None when the target is not an icefloe table (the statement is
Spark's) and an empty DataFrame when done.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from icefloe import expressions as ice
from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.filters import conjuncts, true_of
from icefloe.spark.sql.query import (
    Context,
    cte_names,
    requalify_columns,
    rewrite_tables,
    spark_major,
    spark_version,
    table_parts,
    to_spark_sql,
)

if TYPE_CHECKING:
    from icefloe.spark.sql.names import TableRef
    from icefloe.table import Table

__all__ = ["HANDLERS"]

_SOURCE = "__icefloe_sql_source"


def _target(ctx: Context, tree: exp.Expression, table: exp.Table, what: str) -> tuple[TableRef, str] | None:
    """The icefloe table a DML statement writes (None: Spark's) and the name its columns are
    qualified with (its alias, else its last name part)."""
    parts = table_parts(table)
    if parts is None:
        return None
    ref = ctx.resolver.table(parts, cte_names(tree))
    if ref is None:
        return None
    if ref.metadata_table is not None:
        raise ValidationError(f"{what}: cannot write to metadata table {ref.name}.{ref.metadata_table}")
    if ref.snapshot_id is not None or ref.as_of_timestamp is not None or table.args.get("version"):
        raise ValidationError(f"{what}: cannot write to a snapshot of {ref.name} (time travel is read-only)")
    requalify_columns(tree, parts, table.alias or parts[-1])
    return ref, table.alias or parts[-1]


def _branch(ref: TableRef, table: Table, what: str) -> str | None:
    if ref.ref is None:
        return None
    found = table.refs().get(ref.ref)
    if found is not None and found.snapshot_ref_type != "branch":
        raise ValidationError(f"{what}: {ref.ref!r} of {ref.name} is a tag; only branches can be written")
    return ref.ref


def _iceberg_functions(ctx: Context, node: exp.Expression, frames: list[tuple[Any, str]]) -> None:
    """Iceberg's functions called in `node` (`system.bucket(16, id)`, ...) as Spark SQL
    (`functions.rewrite_functions`), their arguments typed in their SELECT, else over `frames`
    (a DataFrame, or a callable making one, under its alias: the statement's target and
    source). Nothing is made when `node` calls none."""
    from icefloe.spark.sql.functions import function_scope, has_functions, rewrite_functions

    if not has_functions(ctx, node):
        return
    if not frames:
        rewrite_functions(ctx, node)
        return
    made = [(frame() if callable(frame) else frame, alias) for frame, alias in frames]
    with function_scope(ctx, made) as scope:
        rewrite_functions(ctx, node, scope)


def _target_frame(ctx: Context, table: Table) -> Any:
    """A maker of an empty DataFrame of `table`'s columns (analysed only, never read)."""
    from icefloe.spark._nested_assign import table_spark_schema

    return lambda: ctx.spark.createDataFrame([], table_spark_schema(table))


def _done(ctx: Context) -> Any:
    from icefloe.spark.sql.ddl import empty

    return empty(ctx.spark)


# ---- INSERT ----
def insert(ctx: Context, tree: exp.Insert) -> Any:
    from icefloe.spark._nested_assign import table_spark_schema
    from icefloe.spark._store_assign import check_assignable, stored
    from icefloe.spark.write import append

    target = tree.this
    listed: list[str] | None = None
    if isinstance(target, exp.Schema):
        listed = [c.name for c in target.expressions]
        target = target.this
    found = _target(ctx, tree, target, "INSERT") if isinstance(target, exp.Table) else None
    if found is None:
        if isinstance(target, exp.Table) and rewrite_tables(ctx, tree, skip=target):
            _iceberg_functions(ctx, tree, [])
            return ctx.spark.sql(to_spark_sql(tree))
        return None
    ref, _alias = found
    overwrite = bool(tree.args.get("overwrite"))
    what = "INSERT OVERWRITE" if overwrite else "INSERT INTO"
    partition = next(
        (
            p
            for p in (target.args.get("partition"), tree.args.get("partition"))
            if isinstance(p, exp.Partition)
        ),
        None,
    )
    by_name = bool(tree.args.get("by_name"))
    if partition is not None and listed is not None:
        raise NotSupportedError(
            f"{what} ... PARTITION (...) with a column list: not supported by icefloe.spark.sql yet"
        )
    source = tree.expression.copy()
    if tree.args.get("with") is not None and isinstance(source, exp.Query):
        source.set("with", tree.args["with"].copy())
    rewrite_tables(ctx, source)
    _iceberg_functions(ctx, source, [])
    df = ctx.spark.sql(to_spark_sql(source))
    table = ref.load()
    schema = table_spark_schema(table)
    columns = [f.name for f in schema.fields]
    static = _static_partitions(table, partition, what) if partition is not None else {}
    if by_name:  # the query's column names are the column list (Spark's byName resolution)
        listed = list(df.columns)
        seen = [c.lower() for c in listed]
        twice = next((c for c in listed if seen.count(c.lower()) > 1), None)
        if twice is not None:
            raise ValidationError(f"{what} {ref.name} BY NAME: the query has the column {twice!r} twice")
    if listed is not None:
        by_lower = {c.lower(): c for c in columns}
        unknown = [c for c in listed if c.lower() not in by_lower]
        if unknown:
            raise ValidationError(f"INSERT INTO {ref.name}: no column {unknown[0]!r} (columns: {columns})")
        targets = [by_lower[c.lower()] for c in listed]
        both = next((c for c in targets if c in static), None)
        if both is not None:  # BY NAME with a static partition column also in the query
            raise ValidationError(
                f"{what} {ref.name}: the partition column {both!r} has a static value and is in the query"
            )
        missing = [c for c in columns if c not in targets and c not in static]
        unfilled = [c for c in missing if not _filled_with_null(ctx.spark, table, c)]
        if unfilled:
            raise ValidationError(
                f"INSERT INTO {ref.name}: cannot find data for the output column {unfilled[0]!r}"
            )
    else:
        targets = [c for c in columns if c not in static]
    if len(df.columns) != len(targets):
        raise ValidationError(
            f"INSERT INTO {ref.name}: the query has {len(df.columns)} columns, the table expects "
            f"{len(targets)} ({targets})"
        )
    from pyspark.sql import functions as F

    given = dict(zip(targets, df.columns))
    values = []
    for f in schema.fields:
        if f.name in given:
            found_type = df.schema[given[f.name]].dataType
            check_assignable(f.name, found_type, f.dataType)
            values.append(stored(f.name, F.col(f"`{given[f.name]}`"), found_type, f.dataType).alias(f.name))
        elif f.name in static:
            value = df.sparkSession.sql(f"SELECT {to_spark_sql(static[f.name])} AS v").schema["v"].dataType
            check_assignable(f.name, value, f.dataType)
            literal = F.expr(to_spark_sql(static[f.name]))
            values.append(stored(f.name, literal, value, f.dataType).alias(f.name))
        else:
            values.append(F.lit(None).cast(f.dataType).alias(f.name))
    rows = df.select(*values)
    branch = _branch(ref, table, what)
    if not overwrite:
        append(rows, table, branch=branch)
        return _done(ctx)
    from icefloe.spark.write import overwrite as overwrite_rows

    mode = str(ctx.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")).lower()
    if mode == "dynamic":  # Spark's OverwritePartitionsDynamic: Java's ReplacePartitions
        overwrite_rows(rows, table, None, branch=branch)
        return _done(ctx)
    # Spark's OverwriteByExpression: the static partition values (none: every row)
    condition: Any = None
    for name, value in static.items():
        eq = exp.EQ(this=exp.column(name, quoted=True), expression=value.copy())
        condition = eq if condition is None else exp.and_(condition, eq)
    row_filter = (
        ice.AlwaysTrue() if condition is None else true_of(condition, _lookup(table, ""), ctx.timestamps())
    )
    if row_filter is None:
        raise NotSupportedError(
            f"{what} ... PARTITION ({to_spark_sql(condition)}): not an exact icefloe filter"
        )
    overwrite_rows(rows, table, row_filter, branch=branch)
    return _done(ctx)


def _filled_with_null(spark: Any, table: Table, column: str) -> bool:
    """Whether an INSERT's column list may leave `column` out: Spark 4 fills an optional column
    without a write default with NULL, as Java's Spark 4 runtime does (Spark 3.5's refuses any
    column left out; a write default is not filled in here, so such a column is refused too)."""
    if spark_major(spark) < 4:
        return False
    field = next(f for f in table.schema().fields if f.name == column)
    return not field.required and field.write_default is None


def _static_partitions(table: Table, partition: exp.Expression, what: str) -> dict[str, exp.Expression]:
    """The static values of `PARTITION (c = v, d)`, by the table's column name (Spark matches
    names ignoring case); a column without a value is dynamic."""
    by_lower = {f.name.lower(): f.name for f in table.schema().fields}
    out: dict[str, exp.Expression] = {}
    for item in partition.expressions:
        column = item.this if isinstance(item, exp.EQ) else item
        name = by_lower.get(column.name.lower())
        if name is None:
            raise ValidationError(f"{what} ... PARTITION: no column {column.name!r}")
        if isinstance(item, exp.EQ):
            out[name] = item.expression
    return out


# ---- DELETE / UPDATE ----
def _lookup(table: Table, alias: str) -> Any:
    fields = {f.name.lower(): f for f in table.schema().fields}

    def lookup(qualifier: str | None, name: str) -> tuple[str, str] | None:
        if qualifier is not None and qualifier.lower() != alias.lower():
            return None
        f = fields.get(name.lower())
        if f is None or not f.field_type.is_primitive:
            return None
        return f.name, str(f.field_type.to_json())

    return lookup


@dataclass
class _Where:
    """A DELETE's or UPDATE's WHERE: `exact` is its icefloe filter when `filters.true_of`
    translates it whole (None: Spark evaluates it); `plain` its conjuncts without subqueries
    as Spark SQL ('true' when none), `nested` those with one (None when none)."""

    exact: Any
    plain: str
    nested: str | None


def _has_subquery(e: exp.Expression) -> bool:
    return any(True for _ in e.find_all(exp.Subquery, exp.Exists)) or any(
        isinstance(i, exp.In) and i.args.get("query") is not None for i in e.find_all(exp.In)
    )


def _condition(ctx: Context, tree: exp.Expression, table: Table, alias: str) -> _Where:
    """The statement's WHERE. Its subqueries' icefloe tables become icefloe reads (of the
    table as it is before the statement, the target included), as Spark's rewrite of a
    row-level command evaluates them."""
    where = tree.args.get("where")
    if where is None:
        return _Where(ice.AlwaysTrue(), "true", None)
    if not _has_subquery(where.this):
        _iceberg_functions(ctx, where, [(_target_frame(ctx, table), alias)])
        exact = true_of(where.this, _lookup(table, alias), ctx.timestamps())
        # (Spark SQL text only when Spark evaluates it: generating it is not free for a long IN list)
        return _Where(exact, "true" if exact is not None else to_spark_sql(where.this), None)
    rewrite_tables(ctx, where, skip=tree.this)
    _iceberg_functions(ctx, where, [(_target_frame(ctx, table), alias)])
    parts = conjuncts(where.this)
    plain = [f"({to_spark_sql(c)})" for c in parts if not _has_subquery(c)]
    nested = [f"({to_spark_sql(c)})" for c in parts if _has_subquery(c)]
    return _Where(None, " AND ".join(plain) or "true", " AND ".join(nested))


def _one_row_merge(ctx: Context, table: Table, alias: str, where: _Where, branch: str | None) -> Any:
    """`MERGE INTO t USING (one row) ON <where> WHEN MATCHED ...`: Spark evaluates the WHERE
    as the join condition, its conjuncts with subqueries as a filter of the target rows."""
    from pyspark.sql import functions as F

    from icefloe.spark.merge import merge

    source = ctx.spark.range(1).select(F.lit(1).alias(_SOURCE))
    builder = merge(source, table, on=where.plain, source_alias=_SOURCE, target_alias=alias, branch=branch)
    builder.target_condition = where.nested
    return builder


def delete(ctx: Context, tree: exp.Delete) -> Any:
    from icefloe.spark.row_level import delete as delete_rows

    found = _target(ctx, tree, tree.this, "DELETE FROM")
    if found is None:
        return None
    ref, alias = found
    if tree.args.get("using"):
        raise NotSupportedError("DELETE FROM ... USING: not supported by icefloe.spark.sql yet")
    table = ref.load()
    branch = _branch(ref, table, "DELETE FROM")
    where = _condition(ctx, tree, table, alias)
    if where.exact is not None:
        delete_rows(ctx.spark, table, where.exact, branch=branch)
    else:
        _one_row_merge(ctx, table, alias, where, branch).when_matched_delete().execute()
    return _done(ctx)


def _assignments(items: list[exp.Expression], table: Table, alias: str, what: str) -> dict[str, str]:
    """SET `col = expr` pairs as {column path: Spark SQL}; a leading qualifier that is the
    target's alias (not a column) is dropped."""
    columns = {f.name.lower() for f in table.schema().fields}
    out: dict[str, str] = {}
    for item in items:
        if not isinstance(item, exp.EQ) or not isinstance(item.this, exp.Column):
            raise NotSupportedError(f"{what}: assignment {to_spark_sql(item)}")
        parts = [p.name for p in item.this.parts]
        if len(parts) > 1 and parts[0].lower() == alias.lower() and parts[0].lower() not in columns:
            parts = parts[1:]
        key = ".".join(f"`{p}`" if "." in p else p for p in parts)
        out[key] = to_spark_sql(item.expression)
    return out


def _qualify(node: exp.Expression, scopes: list[tuple[str, set[str]]]) -> None:
    """Unqualified column names in `node` (a value or condition over the joined row, where
    each side's row is a struct under its alias) qualified with the one alias of `scopes`
    ((alias, lower-case column names)) whose columns hold them, as Spark resolves MERGE's
    names: `s.a` of a struct column `s` becomes `alias.s.a`. Names already qualified with an
    alias, lambda variables, names inside subqueries and names of none or several scopes
    (left to Spark, which refuses them) are kept."""
    aliases = {a.lower() for a, _ in scopes}
    for column in list(node.find_all(exp.Column)):
        parts = [p.name for p in column.parts]
        first = parts[0].lower()
        lambdas: set[str] = set()
        inside_query = False
        for up in _ancestors(column):
            if up is node:
                break
            if isinstance(up, exp.Lambda):
                lambdas |= {p.name.lower() for p in up.expressions if isinstance(p, exp.Identifier)}
            inside_query = inside_query or isinstance(up, (exp.Select, exp.Subquery))
        holders = [a for a, columns in scopes if first in columns]
        if inside_query or first in lambdas or len(holders) != 1:
            continue
        if first in aliases and len(parts) > 1 and first != holders[0].lower():
            continue
        column.replace(_dotted([holders[0], *parts]))


def _column_names(table: Table) -> set[str]:
    return {f.name.lower() for f in table.schema().fields}


def _ancestors(node: exp.Expr) -> Iterator[exp.Expr]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def _dotted(parts: list[str]) -> exp.Expression:
    """`a`.`b`.`c` as a column reference (a qualifier, then struct fields)."""
    node: exp.Expression = exp.Column(this=exp.to_identifier(parts[0], quoted=True))
    for part in parts[1:]:
        node = exp.Dot(this=node, expression=exp.to_identifier(part, quoted=True))
    return node


def update(ctx: Context, tree: exp.Update) -> Any:
    from icefloe.spark.row_level import update as update_rows

    found = _target(ctx, tree, tree.this, "UPDATE")
    if found is None:
        return None
    ref, alias = found
    if tree.args.get("from_"):
        raise NotSupportedError("UPDATE ... FROM: not supported by icefloe.spark.sql yet")
    table = ref.load()
    branch = _branch(ref, table, "UPDATE")
    # A SET value's subqueries read icefloe tables as they are before the statement (the
    # target included), as Spark evaluates them; one may read the target's row (correlated),
    # by the target's alias, under the session's Spark line's rules.
    with_subqueries = [item for item in tree.expressions if _has_subquery(item)]
    for item in with_subqueries:
        rewrite_tables(ctx, item, skip=tree.this)
    where = _condition(ctx, tree, table, alias)
    for item in tree.expressions:
        _iceberg_functions(ctx, item, [(_target_frame(ctx, table), alias)])
    for item in tree.expressions:
        if where.exact is not None:  # `update`: set values are Spark SQL over the row, unqualified
            for column in item.expression.find_all(exp.Column):
                inside_query = column.find_ancestor(exp.Select) is not None
                if column.table and column.table.lower() == alias.lower() and not inside_query:
                    column.set("table", None)
        else:  # the one-row MERGE: over the joined row, where the target's row is a struct
            _qualify(item.expression, [(alias, _column_names(table))])
    assignments = _assignments(list(tree.expressions), table, alias, "UPDATE")
    if where.exact is not None:
        row_alias = alias if with_subqueries else None
        update_rows(ctx.spark, table, where.exact, assignments, branch=branch, alias=row_alias)
    else:
        _one_row_merge(ctx, table, alias, where, branch).when_matched_update(assignments).execute()
    return _done(ctx)


# ---- MERGE ----
def merge(ctx: Context, tree: exp.Merge) -> Any:
    from icefloe.spark.merge import merge as merge_into

    target = tree.this
    found = _target(ctx, tree, target, "MERGE INTO")
    if found is None:
        return None
    ref, alias = found
    if tree.meta.get("schema_evolution") and spark_version(ctx.spark) < (4, 1):
        raise ValidationError(
            f"MERGE WITH SCHEMA EVOLUTION: Spark 4.1's statement, not in PySpark {ctx.spark.version}'s SQL"
        )
    table = ref.load()
    branch = _branch(ref, table, "MERGE INTO")
    rewrite_tables(ctx, tree, skip=target)
    using = tree.args["using"]
    source_alias = using.alias or (using.name if isinstance(using, exp.Table) else "")
    if not source_alias:
        raise ValidationError("MERGE INTO: the USING subquery needs an alias")
    _iceberg_functions(ctx, using, [])  # in the USING query, typed in its own SELECTs
    source = using.copy()
    source.set("alias", None)
    if isinstance(source, exp.Subquery):
        source_df = ctx.spark.sql(to_spark_sql(source.this))
    elif (
        isinstance(source, exp.Table)
        and table_parts(source)
        and not (source.args.get("version") or source.args.get("joins"))
    ):
        # by name, so that a temp view of a cached DataFrame is read from Spark's cache
        source_df = ctx.spark.table(to_spark_sql(source))
    else:
        source_df = ctx.spark.sql(f"SELECT * FROM {to_spark_sql(source)}")
    # ON, the clauses' conditions and values: over the target's and the source's columns
    _iceberg_functions(ctx, tree, [(_target_frame(ctx, table), alias), (source_df, source_alias)])
    builder = merge_into(
        source_df,
        table,
        on=to_spark_sql(tree.args["on"]),
        source_alias=source_alias,
        target_alias=alias,
        branch=branch,
        merge_schema=bool(tree.meta.get("schema_evolution")),
    )
    target_scope = (alias, _column_names(table))
    source_scope = (source_alias, {c.lower() for c in source_df.columns})
    for when in tree.args["whens"].expressions:
        # unqualified names as Spark's MERGE resolves them: a matched clause's over both
        # sides, NOT MATCHED's over the source, NOT MATCHED BY SOURCE's over the target
        if not when.args.get("matched"):
            scopes = [target_scope] if when.args.get("source") else [source_scope]
        else:
            scopes = [target_scope, source_scope]
        _qualify_clause(when, scopes)
        _clause(builder, when, table, alias)
    builder.execute()
    return _done(ctx)


def _qualify_clause(when: exp.When, scopes: list[tuple[str, set[str]]]) -> None:
    """A clause's condition and values (never its assignment targets) qualified (`_qualify`)."""
    condition = when.args.get("condition")
    if condition is not None:
        _qualify(condition, scopes)
    then = when.args.get("then")
    if isinstance(then, exp.Update):
        for item in then.expressions:
            if isinstance(item, exp.EQ):
                _qualify(item.expression, scopes)
    elif isinstance(then, exp.Insert) and isinstance(then.expression, exp.Tuple):
        _qualify(then.expression, scopes)


def _clause(builder: Any, when: exp.When, table: Table, alias: str) -> None:
    condition = when.args.get("condition")
    cond = None if condition is None else to_spark_sql(condition)
    then = when.args.get("then")
    matched, by_source = bool(when.args.get("matched")), bool(when.args.get("source"))
    kind = "WHEN MATCHED" if matched else ("WHEN NOT MATCHED BY SOURCE" if by_source else "WHEN NOT MATCHED")
    is_delete = isinstance(then, exp.Var) and then.name.upper() == "DELETE"
    if isinstance(then, exp.Update):
        items = list(then.expressions)
        if len(items) == 1 and isinstance(items[0], exp.Star):
            if not matched:
                raise NotSupportedError(f"MERGE INTO: {kind} THEN UPDATE SET *")
            builder.when_matched_update_all(cond)
            return
        assignments = _assignments(items, table, alias, "MERGE INTO")
        if matched:
            builder.when_matched_update(assignments, cond)
        elif by_source:
            builder.when_not_matched_by_source_update(assignments, cond)
        else:
            raise NotSupportedError(f"MERGE INTO: {kind} THEN UPDATE")
        return
    if is_delete:
        if matched:
            builder.when_matched_delete(cond)
        elif by_source:
            builder.when_not_matched_by_source_delete(cond)
        else:
            raise NotSupportedError(f"MERGE INTO: {kind} THEN DELETE")
        return
    if isinstance(then, exp.Insert) and not matched and not by_source:
        if isinstance(then.this, exp.Star):
            builder.when_not_matched_insert_all(cond)
            return
        columns = [c.name for c in then.this.expressions] if isinstance(then.this, exp.Tuple) else []
        values = then.expression.expressions if isinstance(then.expression, exp.Tuple) else []
        if not columns or len(columns) != len(values):
            raise ValidationError(f"MERGE INTO: {kind} THEN INSERT needs as many values as columns")
        builder.when_not_matched_insert({c: to_spark_sql(v) for c, v in zip(columns, values)}, cond)
        return
    raise NotSupportedError(f"MERGE INTO: {kind} THEN {to_spark_sql(then) if then else '?'}")


HANDLERS: dict[type, Any] = {exp.Insert: insert, exp.Delete: delete, exp.Update: update, exp.Merge: merge}
