"""DDL on icefloe catalogs and tables, as Iceberg Java's `SparkCatalog` and SQL extensions
carry it out:

- `CREATE TABLE [IF NOT EXISTS] t (cols) USING iceberg [PARTITIONED BY (transforms)]
  [LOCATION '...'] [COMMENT '...'] [TBLPROPERTIES (...)]`: `catalog.create_table` with the
  schema of `columns.schema_of`, the spec of the transforms (Java's default field names)
  and the properties (`comment` holds the table comment, `format-version` picks the format);
- `REPLACE TABLE t ...` and `CREATE OR REPLACE TABLE t ...` (with columns or `AS SELECT`):
  `catalog.replace_table_transaction` / `create_or_replace_table_transaction`, the query's
  rows written in it as Spark's replace does (an overwrite of everything), one commit;
- `DROP TABLE [IF EXISTS] t [PURGE]`;
- `ALTER TABLE t ADD COLUMN(S)` (nested paths, `FIRST` / `AFTER`, `COMMENT`), `DROP
  COLUMN(S)`, `RENAME COLUMN`, `SET TBLPROPERTIES` (`format-version` upgrades the table),
  `ADD / DROP / REPLACE PARTITION FIELD`: one schema, spec or properties update each;
- `CREATE NAMESPACE [IF NOT EXISTS]`, `DROP NAMESPACE [IF EXISTS]`, `SHOW TABLES [IN ns]
  [LIKE '...']` (columns `namespace`, `tableName`, `isTemporary`, as Spark's v2 catalogs).

Each handler returns None when the statement names no icefloe catalog (it is Spark's).
"""

from __future__ import annotations

import re
import weakref
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from icefloe.exceptions import (
    NoSuchNamespaceError,
    NoSuchTableError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
)
from icefloe.spark.sql import extensions, namespaces, views
from icefloe.spark.sql.columns import column_doc, column_required, iceberg_type, schema_of
from icefloe.spark.sql.dialect import (
    AddPartitionField,
    DropPartitionField,
    ReplacePartitionField,
    ShowNamespaces,
    ShowTables,
    Transform,
)
from icefloe.spark.sql.query import Context, table_parts, to_spark_sql

if TYPE_CHECKING:
    from icefloe.partitioning import PartitionSpec
    from icefloe.schema import Schema
    from icefloe.table import Table

__all__ = ["HANDLERS", "empty"]

# Iceberg's transform names in Spark DDL -> (icefloe transform, Java's default name suffix).
_TRANSFORMS = {
    "identity": ("identity", ""),
    "bucket": ("bucket", "_bucket"),
    "truncate": ("truncate", "_trunc"),
    "years": ("year", "_year"),
    "year": ("year", "_year"),
    "months": ("month", "_month"),
    "month": ("month", "_month"),
    "days": ("day", "_day"),
    "day": ("day", "_day"),
    "date": ("day", "_day"),
    "hours": ("hour", "_hour"),
    "hour": ("hour", "_hour"),
    "date_hour": ("hour", "_hour"),
}


_EMPTY: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def empty(spark: Any) -> Any:
    """The DataFrame of a statement without rows (one per session: it cannot change, and
    making it is a round trip to the JVM each time)."""
    from pyspark.sql.types import StructType

    try:
        return _EMPTY[spark]
    except KeyError:
        pass
    except TypeError:  # a session that cannot be weakly referenced
        return spark.createDataFrame([], StructType([]))
    df = _EMPTY[spark] = spark.createDataFrame([], StructType([]))
    return df


def _column_path(e: exp.Expression) -> str:
    if isinstance(e, exp.Identifier):
        return e.name
    if isinstance(e, exp.Dot):
        return f"{_column_path(e.this)}.{e.expression.name}"
    if isinstance(e, exp.Column):
        return ".".join(p.name for p in e.parts)
    raise ValidationError(f"expected a column, found {to_spark_sql(e)}")


def transform_of(e: exp.Expression) -> tuple[str, str, str]:
    """(source column path, icefloe transform string, Java's default field name) of a
    partition transform as written (`bucket(16, id)`, `days(ts)`, a column)."""
    if not isinstance(e, Transform):
        column = _column_path(e)
        return column, "identity", column
    name = e.this.name.lower()
    if name not in _TRANSFORMS:
        raise NotSupportedError(f"partition transform {name}(...)")
    kind, suffix = _TRANSFORMS[name]
    numbers = [int(a.this) for a in e.expressions if isinstance(a, exp.Literal)]
    columns = [_column_path(a) for a in e.expressions if not isinstance(a, exp.Literal)]
    if len(columns) != 1 or len(numbers) != (1 if kind in ("bucket", "truncate") else 0):
        raise ValidationError(
            f"partition transform {to_spark_sql(e)}: expected {name}(column) or {name}(n, column)"
        )
    transform = f"{kind}[{numbers[0]}]" if numbers else kind
    return columns[0], transform, columns[0] + suffix


def _spec(schema: Schema, fields: list[exp.Expression]) -> PartitionSpec:
    from icefloe.partitioning import PartitionField, PartitionSpec

    out = []
    for i, e in enumerate(fields):
        column, transform, name = transform_of(e)
        source = schema.find_field(column, case_sensitive=False)
        out.append(PartitionField(source.field_id, 1000 + i, transform, name))
    return PartitionSpec(*out)


def _table_target(ctx: Context, table: exp.Expression) -> tuple[Any, tuple[str, ...], str] | None:
    """(catalog, identifier, shown name) of a table a DDL statement names, or None (Spark's)."""
    parts = table_parts(table) if isinstance(table, exp.Table) else None
    found = ctx.resolver.split(parts) if parts else None
    if found is None:
        return None
    name, rest = found
    return ctx.resolver.catalog(name), rest, ".".join((name, *rest))


# ---- CREATE / DROP ----
def create(ctx: Context, tree: exp.Create) -> Any:
    kind = str(tree.args.get("kind") or "").upper()
    if kind in ("SCHEMA", "DATABASE", "NAMESPACE"):
        return namespaces.create(ctx, tree)
    if kind == "VIEW":
        return views.create(ctx, tree)
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    found = _table_target(ctx, target) if kind == "TABLE" else None
    if found is None:
        if kind != "TABLE" and any(_table_target(ctx, t) for t in tree.find_all(exp.Table)):
            raise NotSupportedError(f"CREATE {kind}: not supported by icefloe.spark.sql yet")
        return None
    catalog, ident, shown = found
    replace = bool(tree.args.get("replace"))
    or_create = not tree.meta.get("replace_only")
    if replace and not or_create and not catalog.table_exists(ident):  # before the query runs, as Spark
        # Spark's error for it (its analyzer resolves the table first).
        raise NoSuchTableError(f"[TABLE_OR_VIEW_NOT_FOUND] The table or view {shown} cannot be found.")
    query = tree.args.get("expression")
    rows = None
    if query is not None:
        if isinstance(tree.this, exp.Schema):
            raise ValidationError(f"CREATE TABLE {shown} ... AS SELECT: the columns come from the query")
        if not replace and catalog.table_exists(ident):  # before the query runs, as Spark checks
            if tree.args.get("exists"):
                return empty(ctx.spark)
            raise TableAlreadyExistsError(f"Table {shown} already exists")
        rows, columns = _query_rows(ctx, query)
    else:
        if not isinstance(tree.this, exp.Schema) or not tree.this.expressions:
            raise ValidationError(f"CREATE TABLE {shown}: give the columns")
        columns = [c for c in tree.this.expressions if isinstance(c, exp.ColumnDef)]
        if len(columns) != len(tree.this.expressions):
            raise NotSupportedError(f"CREATE TABLE {shown}: constraints other than NOT NULL")
    schema = schema_of(columns)
    spec = None
    properties: dict[str, str] = {}
    location = None
    for prop in (tree.args.get("properties") or exp.Properties(expressions=[])).expressions:
        if isinstance(prop, exp.FileFormatProperty):
            if prop.name.lower() != "iceberg":
                raise NotSupportedError(f"CREATE TABLE {shown} USING {prop.name}: icefloe tables are iceberg")
        elif isinstance(prop, exp.PartitionedByProperty):
            spec = _spec(schema, list(prop.this.expressions))
        elif isinstance(prop, exp.LocationProperty):
            location = str(prop.this.this)
        elif isinstance(prop, exp.SchemaCommentProperty):
            properties["comment"] = str(prop.this.this)
        elif isinstance(prop, exp.Property):
            properties[str(prop.this.this if isinstance(prop.this, exp.Literal) else prop.name)] = str(
                prop.args["value"].this
            )
        else:
            raise NotSupportedError(f"CREATE TABLE {shown}: {to_spark_sql(prop)}")
    # Spark's CREATE [OR REPLACE] TABLE on a v2 catalog records the creating user (`owner`), as
    # Java's tables have it.
    context = getattr(ctx.spark, "_sc", None)  # none under Spark Connect
    if context is not None:
        properties.setdefault("owner", context.sparkUser())
    if replace:
        return _replace(ctx.spark, catalog, ident, schema, spec, properties, location, rows, or_create)
    if catalog.table_exists(ident):
        if tree.args.get("exists"):
            return empty(ctx.spark)
        raise TableAlreadyExistsError(f"Table {shown} already exists")
    table = catalog.create_table(ident, schema, partition_spec=spec, properties=properties, location=location)
    if rows is not None:
        _append_created(table, rows, catalog, ident)
    return empty(ctx.spark)


def _replace(
    spark: Any,
    catalog: Any,
    ident: tuple[str, ...],
    schema: Schema,
    spec: PartitionSpec | None,
    properties: dict[str, str],
    location: str | None,
    rows: Any,
    or_create: bool,
) -> Any:
    """`[CREATE OR] REPLACE TABLE [AS SELECT]`: Spark's staged replace (Java's
    `stageReplace` / `stageCreateOrReplace`), the query's rows written in it as one `overwrite`
    snapshot as Spark's (Java's `overwriteByRowFilter(true)`; here a dynamic overwrite, the same
    on the replaced table, which has no rows, and named `overwrite` as Java's, where icefloe's
    filter overwrite that removes nothing is an `append`), committed together; nothing stays on
    an error."""
    from icefloe.spark.write import overwrite

    if or_create:
        txn = catalog.create_or_replace_table_transaction(ident, schema, spec, None, properties, location)
    else:
        txn = catalog.replace_table_transaction(ident, schema, spec, None, properties, location)
    if rows is not None:
        try:
            overwrite(_cast_to(rows, txn.table), txn.table)
        except BaseException:
            txn.abort()
            raise
    txn.commit_transaction()  # a failed commit deletes the transaction's files itself
    return empty(spark)


def _cast_to(df: Any, table: Table) -> Any:
    """A query's rows cast to the table's Spark schema, column by column (by position)."""
    from pyspark.sql import functions as F

    from icefloe.spark._nested_assign import table_spark_schema

    target = table_spark_schema(table)
    pairs = zip(df.schema.fields, target.fields)
    return df.select(*[F.col(f"`{s.name}`").cast(t.dataType).alias(t.name) for s, t in pairs])


def _query_rows(ctx: Context, query: exp.Expression) -> tuple[Any, list[exp.ColumnDef]]:
    """The rows of a CTAS query and the column definitions of their Spark schema, every column
    nullable (Spark's `CreateTableAsSelect` makes the query's schema nullable)."""
    from sqlglot import parse_one

    from icefloe.spark.sql.dialect import IcebergSpark
    from icefloe.spark.sql.query import rewrite_tables

    source = query.copy()
    rewrite_tables(ctx, source)
    df = ctx.spark.sql(to_spark_sql(source))
    names = [f.name for f in df.schema.fields]
    if len({n.lower() for n in names}) != len(names):
        raise ValidationError(f"CREATE TABLE ... AS SELECT: duplicate column names in {names}")
    body = ", ".join(f"`{f.name.replace('`', '``')}` {f.dataType.simpleString()}" for f in df.schema.fields)
    parsed = parse_one(f"CREATE TABLE x ({body})", dialect=IcebergSpark)
    return df, [c for c in parsed.this.expressions if isinstance(c, exp.ColumnDef)]


def _append_created(table: Table, df: Any, catalog: Any, ident: tuple[str, ...]) -> None:
    """Appends a CTAS query's rows to the table just created; drops it if the write fails (Java's
    staged create commits both together)."""
    from pyspark.sql import functions as F

    from icefloe.spark._nested_assign import table_spark_schema
    from icefloe.spark.write import append

    target = table_spark_schema(table)
    values = [
        F.col(f"`{s.name}`").cast(t.dataType).alias(t.name) for s, t in zip(df.schema.fields, target.fields)
    ]
    try:
        append(df.select(*values), table)
    except BaseException:
        catalog.purge_table(ident)
        raise


def drop(ctx: Context, tree: exp.Drop) -> Any:
    kind = str(tree.args.get("kind") or "").upper()
    tables = tree.args.get("tables") or [tree.this]
    if kind in ("SCHEMA", "DATABASE", "NAMESPACE"):
        return namespaces.drop(ctx, tree)
    if kind == "VIEW":
        return views.drop(ctx, tree)
    target = _table_target(ctx, tables[0])
    if target is None:
        return None
    if kind != "TABLE":
        raise NotSupportedError(f"DROP {kind}: not supported by icefloe.spark.sql yet")
    catalog, ident, shown = target
    if not catalog.table_exists(ident):
        if tree.args.get("exists"):
            return empty(ctx.spark)
        raise NoSuchTableError(f"Table or view not found: {shown}")
    if tree.args.get("purge"):
        catalog.purge_table(ident)
    else:
        catalog.drop_table(ident)
    return empty(ctx.spark)


def _like(like: exp.Expr | None) -> re.Pattern[str] | None:
    """Spark's `filterPattern`: `*` any characters, `|` alternatives, case-insensitive."""
    if like is None:
        return None
    alternatives = [re.escape(p.strip()).replace(r"\*", ".*") for p in str(like.this).split("|")]
    return re.compile("|".join(f"(?:{a})" for a in alternatives), re.IGNORECASE)


def _quoted(parts: tuple[str, ...]) -> str:
    """Spark's `MultipartIdentifierHelper.quoted`: a part other than letters, digits and `_`
    (or all digits) in backquotes."""
    return ".".join(
        p if re.fullmatch(r"[A-Za-z0-9_]+", p) and not p.isdigit() else "`" + p.replace("`", "``") + "`"
        for p in parts
    )


def show_namespaces(ctx: Context, tree: ShowNamespaces) -> Any:
    """Spark's `ShowNamespacesExec`: the namespaces in the named one (else the current
    catalog's top-level ones), each its whole name quoted, in one `namespace` column."""
    from pyspark.sql.types import StringType, StructField, StructType

    parts = table_parts(tree.this) if tree.this is not None else []
    found = ctx.resolver.namespace(parts or [])
    if found is None:
        return None
    name, namespace = found
    catalog = ctx.resolver.catalog(name)
    if namespace and not catalog.namespace_exists(namespace):
        shown = ".".join((name, *namespace))
        raise NoSuchNamespaceError(f"[SCHEMA_NOT_FOUND] The schema `{shown}` cannot be found")
    pattern = _like(tree.args.get("like"))
    names = [_quoted(tuple(ns)) for ns in catalog.list_namespaces(namespace)]
    rows = [(ns,) for ns in names if pattern is None or pattern.fullmatch(ns)]
    return ctx.spark.createDataFrame(rows, StructType([StructField("namespace", StringType(), False)]))


def show_tables(ctx: Context, tree: ShowTables) -> Any:
    from pyspark.sql.types import BooleanType, StringType, StructField, StructType

    parts = table_parts(tree.this) if tree.this is not None else []
    found = ctx.resolver.namespace(parts or [])
    if found is None:
        return None
    name, namespace = found
    if not namespace:
        namespace = ctx.resolver.state.namespace if name == ctx.resolver.current_catalog else ()
    catalog = ctx.resolver.catalog(name)
    pattern = _like(tree.args.get("like"))
    rows = [
        (".".join(namespace), ident[-1], False)
        for ident in catalog.list_tables(namespace)
        if pattern is None or pattern.fullmatch(ident[-1])
    ]
    schema = StructType(
        [
            StructField("namespace", StringType(), False),
            StructField("tableName", StringType(), False),
            StructField("isTemporary", BooleanType(), False),
        ]
    )
    return ctx.spark.createDataFrame(sorted(rows), schema)


# ---- ALTER TABLE ----
def alter(ctx: Context, tree: exp.Alter) -> Any:
    if str(tree.args.get("kind") or "").upper() == "VIEW":
        return views.alter(ctx, tree)
    if str(tree.args.get("kind") or "").upper() == "NAMESPACE":
        return namespaces.alter(ctx, tree)
    if str(tree.args.get("kind") or "").upper() != "TABLE":
        found = _table_target(ctx, tree.this)
        if found is None:
            return None
        raise NotSupportedError(f"ALTER {tree.args.get('kind')}: not supported by icefloe.spark.sql yet")
    target = _table_target(ctx, tree.this)
    if target is None:
        return None
    catalog, ident, _shown = target
    actions = tree.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        extensions.rename(catalog, ident, _shown.split(".")[0], actions[0].this)
        return empty(ctx.spark)
    table = catalog.load_table(ident)
    for action in actions:
        _alter_one(table, action)
        table = catalog.load_table(ident)
    return empty(ctx.spark)


def _alter_one(table: Table, action: exp.Expression) -> None:
    if isinstance(action, exp.ColumnDef):
        return _add_columns(table, [action])
    if isinstance(action, exp.Schema):
        return _add_columns(table, [c for c in action.expressions if isinstance(c, exp.ColumnDef)])
    if isinstance(action, exp.Drop) and str(action.args.get("kind") or "COLUMN").upper() in (
        "COLUMN",
        "COLUMNS",
    ):
        names: list[str] = []
        for item in action.args.get("tables") or []:
            items = item.expressions if isinstance(item, exp.Schema) else [item]
            names += [_column_path(i) for i in items]
        with table.update_schema() as update:
            for name in names:
                update.delete_column(_exact(table, name))
        return None
    if isinstance(action, exp.RenameColumn):
        with table.update_schema() as update:
            update.rename_column(_exact(table, _column_path(action.this)), _column_path(action.args["to"]))
        return None
    if isinstance(action, exp.AlterSet):
        return _set_properties(table, action)
    if isinstance(action, (AddPartitionField, DropPartitionField, ReplacePartitionField)):
        return _partition_field(table, action)
    if isinstance(action, extensions.ACTIONS):
        return extensions.apply(table, action, _column_path, lambda path: _exact(table, path))
    raise NotSupportedError(f"ALTER TABLE ... {to_spark_sql(action)}: not supported by icefloe.spark.sql yet")


def _exact(table: Table, path: str) -> str:
    """An existing column's path as the schema spells it (Spark matches names ignoring case)."""
    try:
        return ".".join(table.schema().find_column_path(path, case_sensitive=False))
    except Exception:
        return path  # not a column: the update names it in its error


def _new_path(table: Table, path: str) -> str:
    parent, _, leaf = path.rpartition(".")
    return f"{_exact(table, parent)}.{leaf}" if parent else leaf


def _add_columns(table: Table, columns: list[exp.ColumnDef]) -> None:
    with table.update_schema() as update:
        for column in columns:
            path = _new_path(table, _column_path(column.this))
            update.add_column(
                path,
                iceberg_type(column.kind),
                doc=column_doc(column),
                required=column_required(column),
            )
            position = column.args.get("position")
            if position is not None:
                where = str(position.args.get("position") or "").upper()
                if where == "FIRST":
                    update.move_first(path)
                elif where == "AFTER":
                    parent = path.rpartition(".")[0]
                    after = _column_path(position.this)
                    update.move_after(path, _exact(table, f"{parent}.{after}" if parent else after))


def _set_properties(table: Table, action: exp.AlterSet) -> None:
    props = action.args.get("expressions") or []
    values: dict[str, str] = {}
    for p in props:
        found = p.expressions if isinstance(p, exp.Properties) else [p]
        for prop in found:
            if not isinstance(prop, exp.Property):
                raise NotSupportedError(f"ALTER TABLE ... SET {to_spark_sql(action)}")
            key = str(prop.this.this if isinstance(prop.this, exp.Literal) else prop.name)
            values[key] = str(prop.args["value"].this)
    if not values:
        raise NotSupportedError(
            f"ALTER TABLE ... {to_spark_sql(action)}: not supported by icefloe.spark.sql yet"
        )
    for reserved in (
        "sort-order",
        "identifier-fields",
        "location",
        "current-snapshot-id",
        "cherry-pick-snapshot-id",
    ):
        if reserved in {k.lower() for k in values}:
            raise NotSupportedError(f"ALTER TABLE ... SET TBLPROPERTIES ('{reserved}'): not supported")
    version = values.pop("format-version", None)
    with table.transaction() as tx:
        if values:
            tx.set_properties(values)
        if version is not None:
            tx.upgrade_table_version(int(version))


def _partition_field(table: Table, action: exp.Expression) -> None:
    alias = action.args.get("alias")
    with table.update_spec(case_sensitive=False) as update:
        if isinstance(action, (DropPartitionField, ReplacePartitionField)):
            old = action.this
            names = {f.name for f in table.spec().fields}
            if isinstance(old, exp.Column) and not old.table and old.name in names:
                update.remove_field(old.name)  # a partition field's name, as Java reads it first
            else:
                column, transform, _default = transform_of(old)
                update.remove_field(column, transform)
        new = action.expression if isinstance(action, ReplacePartitionField) else action.this
        if isinstance(action, (AddPartitionField, ReplacePartitionField)):
            column, transform, _default = transform_of(new)
            update.add_field(column, transform, alias.name if alias is not None else None)


HANDLERS: dict[type, Any] = {
    exp.Create: create,
    exp.Drop: drop,
    exp.Alter: alter,
    ShowTables: show_tables,
    ShowNamespaces: show_namespaces,
}
