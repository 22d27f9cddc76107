"""Iceberg views through `icefloe.spark.sql`, as Iceberg's Spark runtime (its SQL extensions
and `SparkCatalog`'s `ViewCatalog`) runs them:

- `CREATE [OR REPLACE] VIEW [IF NOT EXISTS] cat.ns.v [(col [COMMENT c], ...)] [COMMENT c]
  [TBLPROPERTIES (...)] AS query` stores the query's text as written (dialect `spark`), the
  schema Spark gives the query (column names from the list, nullability and types from the
  query; ids as Java's `SparkSchemaUtil.convert` numbers them: top-level columns from 0), the
  session's current catalog (None when it is the view's own) and namespace, and Java's
  properties (`create_engine_version`, `engine_version`, `spark.query-column-names`,
  `comment`). A query naming a temporary view is refused, as Spark refuses it.
- A query naming a view reads the view's `spark` SQL in its place: its one-part names in the
  view's default catalog and namespace, names whose first part is not a catalog in its default
  catalog (Java's `ResolveViews`), its columns renamed by position to the view's schema.
  Views may read views (up to 32 levels). The icefloe tables they read are icefloe reads.
- `DROP VIEW [IF EXISTS]`, `ALTER VIEW ... SET / UNSET TBLPROPERTIES`, `ALTER VIEW ... RENAME
  TO`, `SHOW VIEWS [IN ns] [LIKE pattern]` (the catalog's views, then the session's temporary
  views, as Java's `ShowV2ViewsExec`), `DESCRIBE v` (name, Spark type, comment).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from icefloe.exceptions import (
    NoSuchNamespaceError,
    NoSuchViewError,
    NotSupportedError,
    ValidationError,
    ViewAlreadyExistsError,
)
from icefloe.schema import Schema
from icefloe.spark.sql.columns import iceberg_type
from icefloe.spark.sql.dialect import IcebergSpark, UnsetProperties
from icefloe.spark.sql.query import Context, cte_names, requalify_columns, table_parts, to_spark_sql
from icefloe.types import IcebergType, ListType, MapType, NestedField, StructType

if TYPE_CHECKING:
    from icefloe.catalog import Catalog
    from icefloe.view import View

__all__ = ["alter", "create", "describe", "drop", "expand_views", "find_view", "show_views", "view_target"]

MAX_DEPTH = 32
QUERY_COLUMN_NAMES = "spark.query-column-names"


# ---- names ----
class ViewTarget(NamedTuple):
    """A view name in an icefloe catalog: the catalog's name and object, the identifier in
    it, and the whole name as statements show it."""

    catalog_name: str
    catalog: Catalog
    ident: tuple[str, ...]
    shown: str


def view_target(ctx: Context, table: exp.Expression) -> ViewTarget | None:
    """The view name `table` in an icefloe catalog, or None (the name is Spark's)."""
    parts = table_parts(table) if isinstance(table, exp.Table) else None
    found = ctx.resolver.split(parts) if parts else None
    if found is None:
        return None
    name, rest = found
    if len(rest) < 2:
        raise ValidationError(f"{'.'.join(parts or [])}: a view name needs a namespace")
    return ViewTarget(name, ctx.resolver.catalog(name), rest, ".".join((name, *rest)))


def _load(ctx: Context, catalog_name: str, ident: tuple[str, ...]) -> View | None:
    """The view `ident` of an icefloe catalog, or None (a table, nothing, or a catalog
    without views)."""
    if ctx.resolver.table_exists(catalog_name, ident):
        return None
    try:
        return ctx.resolver.catalog(catalog_name)._load_view_record(ident)
    except NotSupportedError:
        return None


def find_view(ctx: Context, table: exp.Expression) -> tuple[ViewTarget, View] | None:
    """The view `table` names in an icefloe catalog (its target and the loaded view), or None."""
    target = view_target(ctx, table)
    view = _load(ctx, target.catalog_name, target.ident) if target is not None else None
    return (target, view) if target is not None and view is not None else None


# ---- queries over views ----
def expand_views(ctx: Context, tree: exp.Expr) -> bool:
    """Replaces each view of an icefloe catalog that `tree` reads by its query, in place (and
    the views those read); whether any was."""
    expanded = False
    for _ in range(MAX_DEPTH):
        ctes = cte_names(tree)
        found = []
        for table in list(tree.find_all(exp.Table)):
            parts = table_parts(table)
            split = ctx.resolver.split(parts, ctes) if parts else None
            if split is None or len(split[1]) < 2:
                continue
            view = _load(ctx, split[0], split[1])
            if view is not None and parts is not None:
                found.append((table, parts, split[0], view))
        if not found:
            return expanded
        for table, parts, catalog_name, view in found:
            if table.args.get("version") is not None:
                raise ValidationError(f"Cannot time travel in views: {catalog_name}.{view.name}")
            visible = table.alias or parts[-1]
            requalify_columns(tree, parts, visible)
            table.replace(_view_query(ctx, catalog_name, view, visible))
        expanded = True
    raise ValidationError(f"views nest more than {MAX_DEPTH} levels deep (a view that reads itself?)")


def _view_query(ctx: Context, catalog_name: str, view: View, visible: str) -> exp.Subquery:
    version = view.current_version()
    shown = f"{catalog_name}.{view.name}"
    rep = version.sql_for("spark")
    if rep is None:
        raise NotSupportedError(
            f"view {shown} has no query in the spark dialect (it has {sorted(version.dialects())})"
        )
    try:
        parsed = sqlglot.parse_one(rep.sql, dialect=IcebergSpark)
    except sqlglot.errors.ParseError as e:
        raise ValidationError(f"view {shown}: cannot parse its query: {e}") from None
    home = [version.default_catalog or catalog_name, *version.default_namespace]
    own_ctes = cte_names(parsed)
    for table in list(parsed.find_all(exp.Table)):
        parts = table_parts(table)
        if parts is None:
            continue
        if len(parts) == 1 and parts[0].lower() in own_ctes:
            continue
        if len(parts) == 1:
            full = [*home, parts[0]]
        elif ctx.resolver.is_catalog(parts[0]) or ctx.resolver.is_spark_catalog(parts[0]):
            continue
        else:
            full = [home[0], *parts]
        named = exp.to_table(".".join(_quote(p) for p in full), dialect=IcebergSpark)
        for key in ("alias", "version", "joins", "laterals", "pivots", "hints"):
            if table.args.get(key) is not None:
                named.set(key, table.args[key])
        if table.alias is None:  # columns qualified with the short name still find it
            named.set("alias", exp.TableAlias(this=exp.to_identifier(parts[-1], quoted=True)))
        table.replace(named)
    alias = exp.TableAlias(this=exp.to_identifier(visible, quoted=True))
    return exp.Subquery(this=_up_cast(ctx, parsed, view, shown), alias=alias)


def _up_cast(ctx: Context, parsed: exp.Expr, view: View, shown: str) -> exp.Expr:
    """The view's query with its columns named by the view's schema, each up-cast to the type
    the schema records where the query's differs (Java's `ResolveViews`: `UpCast` of each
    column by position; a type that does not up-cast is refused, as Spark's
    `CANNOT_UP_CAST_DATATYPE`). The query's types come from Spark's analysis of it over
    empty frames of its tables."""
    from icefloe.spark._up_cast import can_up_cast
    from icefloe.spark.sql.query import rewrite_tables

    expected = spark_struct(view.schema()).fields
    probe = parsed.copy()
    was = ctx.schema_only
    ctx.schema_only = True
    try:
        rewrite_tables(ctx, probe)
        found = ctx.spark.sql(to_spark_sql(probe)).schema.fields  # analysis only: no job runs
    finally:
        ctx.schema_only = was
    if len(found) < len(expected):
        raise ValidationError(
            f"view {shown}: its query gives {len(found)} columns, its schema has {len(expected)}"
        )
    inner = [f"__icefloe_c{i}" for i in range(len(found))]
    columns: list[exp.Expr] = []
    for i, want in enumerate(expected):
        have = found[i].dataType
        column: exp.Expr = exp.column(inner[i], quoted=True)
        # (Equal but for nullability: no cast. Java's nested nullability of the query may differ
        # from that of icefloe's empty frames, so it is not checked.)
        if have.simpleString() != want.dataType.simpleString():
            if not can_up_cast(have, want.dataType):
                raise ValidationError(
                    f"[CANNOT_UP_CAST_DATATYPE] Cannot up cast {found[i].name} from "
                    f'"{have.simpleString().upper()}" to "{want.dataType.simpleString().upper()}" '
                    f"(column {want.name} of view {shown})"
                )
            to = exp.DataType.build(want.dataType.simpleString(), dialect=IcebergSpark)
            column = exp.Cast(this=column, to=to)
        columns.append(exp.alias_(column, exp.to_identifier(want.name, quoted=True)))
    source = exp.Subquery(
        this=parsed,
        alias=exp.TableAlias(
            this=exp.to_identifier("__icefloe_view", quoted=True),
            columns=[exp.to_identifier(c, quoted=True) for c in inner],
        ),
    )
    return exp.select(*columns).from_(source)


def _quote(part: str) -> str:
    return "`" + part.replace("`", "``") + "`"


# ---- CREATE VIEW ----
def _query_text(text: str) -> str:
    """The query of a CREATE VIEW as written: what follows the first `AS` outside parentheses."""
    depth, seen_view = 0, False
    tokens = IcebergSpark().tokenize(text)
    for i, token in enumerate(tokens):
        if token.token_type == TokenType.VIEW:
            seen_view = True
        elif token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif seen_view and depth == 0 and token.token_type == TokenType.ALIAS and i + 1 < len(tokens):
            return text[tokens[i + 1].start :].strip().rstrip(";").rstrip()
    raise ValidationError("CREATE VIEW: expected AS followed by the view's query")


def _user_columns(tree: exp.Create) -> list[tuple[str, str | None]] | None:
    if not isinstance(tree.this, exp.Schema):
        return None
    out: list[tuple[str, str | None]] = []
    for e in tree.this.expressions:
        if isinstance(e, exp.Identifier):
            out.append((e.name, None))
        elif isinstance(e, exp.ColumnDef):
            comment = None
            for c in e.constraints:
                if isinstance(c.kind, exp.CommentColumnConstraint):
                    comment = str(c.kind.this.this)
                else:
                    raise NotSupportedError(f"CREATE VIEW: column {e.name} may have only a COMMENT")
            out.append((e.name, comment))
        else:
            raise NotSupportedError(f"CREATE VIEW: {to_spark_sql(e)} in the column list")
    return out


def _properties(tree: exp.Create, shown: str) -> tuple[dict[str, str], str | None]:
    props: dict[str, str] = {}
    comment = None
    for prop in (tree.args.get("properties") or exp.Properties(expressions=[])).expressions:
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = str(prop.this.this)
        elif isinstance(prop, exp.Property) and not isinstance(prop, exp.FileFormatProperty):
            key = str(prop.this.this if isinstance(prop.this, exp.Literal) else prop.name)
            props[key] = str(prop.args["value"].this)
        else:
            raise NotSupportedError(f"CREATE VIEW {shown}: {to_spark_sql(prop)}")
    return props, comment


def create(ctx: Context, tree: exp.Create) -> Any:
    from icefloe.spark.sql.ddl import empty
    from icefloe.spark.sql.query import rewrite_tables

    props_given = (tree.args.get("properties") or exp.Properties(expressions=[])).expressions
    if any(isinstance(p, exp.TemporaryProperty) for p in props_given):
        return None  # a temporary view is Spark's
    target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    found = view_target(ctx, target)
    if found is None:
        return None
    _name, catalog, ident, shown = found
    if tree.args.get("exists") and tree.args.get("replace"):
        raise ValidationError("CREATE OR REPLACE VIEW ... IF NOT EXISTS: choose one")
    try:  # a catalog without views refuses here, before the query is analysed
        exists = catalog.view_exists(ident)
    except NotSupportedError as e:
        raise NotSupportedError(f"CREATE VIEW {shown}: {e}") from None
    if exists and tree.args.get("exists"):
        return empty(ctx.spark)
    if exists and not tree.args.get("replace"):
        raise ViewAlreadyExistsError(
            f"[VIEW_ALREADY_EXISTS] Cannot create view {shown} because it already exists."
        )
    query = tree.args.get("expression")
    if not isinstance(query, exp.Query):
        raise ValidationError(f"CREATE VIEW {shown}: expected AS and a query")
    sql = _query_text(ctx.text)
    _refuse_temporary(ctx, query, shown)
    props, comment = _properties(tree, shown)
    source = query.copy()
    ctx.schema_only = True  # the query's schema, with the nullability Java's tables give it
    try:
        rewrite_tables(ctx, source)
        analysed = ctx.spark.sql(to_spark_sql(source)).schema  # analysis only: no job runs
    finally:
        ctx.schema_only = False
    query_columns = [f.name for f in analysed.fields]
    struct = _aliased(analysed, _user_columns(tree), shown)
    schema = spark_to_view_schema(struct)
    state = ctx.resolver.state
    if state.catalog is not None and ctx.resolver.is_catalog(state.catalog):
        current, namespace = state.catalog, state.namespace
    else:
        current, namespace = ctx.spark.catalog.currentCatalog(), (ctx.spark.catalog.currentDatabase(),)
    engine = f"Spark {ctx.spark.version}"
    properties = {
        **props,
        **({"comment": comment} if comment is not None else {}),
        "create_engine_version": engine,
        "engine_version": engine,
        QUERY_COLUMN_NAMES: ",".join(query_columns),
    }
    from icefloe import __version__
    from icefloe.view import new_version

    version = new_version(
        sql,
        namespace,
        default_catalog=None if current == found.catalog_name else current,
        summary={
            "engine-name": "spark",
            "engine-version": str(ctx.spark.version),
            "icefloe-version": __version__,
        },
    )
    if exists:
        catalog.replace_view(ident, schema, version, properties=properties)
    else:
        catalog.create_view(ident, schema, version, properties=properties)
    return empty(ctx.spark)


def _refuse_temporary(ctx: Context, query: exp.Expr, shown: str) -> None:
    """Java's runtime refuses a persistent view over a temporary one."""
    ctes = cte_names(query)
    for table in query.find_all(exp.Table):
        parts = table_parts(table)
        if parts and len(parts) == 1 and parts[0].lower() not in ctes and ctx.resolver.is_temp_view(parts[0]):
            # Java's CheckViews
            raise ValidationError(f"Cannot create view {shown} that references temporary view: [{parts[0]}]")


def _aliased(struct: Any, columns: list[tuple[str, str | None]] | None, shown: str) -> Any:
    """The query's schema with the view's column names and comments (Spark's `aliasPlan`)."""
    from pyspark.sql.types import StructField, StructType

    if columns is None:
        return struct
    if len(columns) != len(struct.fields):
        reason = "not enough data columns" if len(columns) > len(struct.fields) else "too many data columns"
        raise ValidationError(
            f"[CREATE_VIEW_COLUMN_ARITY_MISMATCH.{reason.upper().replace(' ', '_')}] "
            f"Cannot create view {shown}, "
            f"the reason is {reason}: View columns: {[c for c, _ in columns]}. "
            f"Data columns: {[f.name for f in struct.fields]}."
        )
    out = []
    for f, (name, comment) in zip(struct.fields, columns):
        metadata = dict(f.metadata or {})
        if comment is not None:
            metadata["comment"] = comment
        out.append(StructField(name, f.dataType, f.nullable, metadata))
    return StructType(out)


def spark_to_view_schema(struct: Any) -> Schema:
    """A Spark schema as Iceberg Java's `SparkSchemaUtil.convert` makes it: top-level ids
    0..n-1, nested ids from n in the order its visitor assigns them (children first)."""
    counter = [len(struct.fields)]

    def next_id() -> int:
        counter[0] += 1
        return counter[0] - 1

    def convert(t: Any) -> IcebergType:
        from pyspark.sql import types as T

        if isinstance(t, T.StructType):
            types = [convert(f.dataType) for f in t.fields]
            return StructType(*[_field(next_id(), f, ty) for f, ty in zip(t.fields, types)])
        if isinstance(t, T.ArrayType):
            element = convert(t.elementType)
            return ListType(next_id(), element, element_required=not t.containsNull)
        if isinstance(t, T.MapType):
            key, value = convert(t.keyType), convert(t.valueType)
            return MapType(next_id(), key, next_id(), value, value_required=not t.valueContainsNull)
        return _primitive(t)

    types = [convert(f.dataType) for f in struct.fields]
    return Schema(*[_field(i, f, ty) for i, (f, ty) in enumerate(zip(struct.fields, types))])


def spark_struct(schema: Schema) -> Any:
    """The Spark schema Java's runtime gives a table of `schema`: required fields, list
    elements and map values not nullable (Java's `SparkSchemaUtil.convert` the other way)."""
    from pyspark.sql import types as T

    from icefloe.spark._arrow import spark_type

    def convert(t: Any, name: str) -> Any:
        if isinstance(t, dict) and t.get("type") == "struct":
            return T.StructType([field(f, f"{name}.{f['name']}") for f in t["fields"]])
        if isinstance(t, dict) and t.get("type") == "list":
            return T.ArrayType(convert(t["element"], f"{name}.element"), not t.get("element-required"))
        if isinstance(t, dict) and t.get("type") == "map":
            key, value = convert(t["key"], f"{name}.key"), convert(t["value"], f"{name}.value")
            return T.MapType(key, value, not t.get("value-required"))
        return spark_type(t, name)

    def field(f: dict[str, Any], name: str) -> Any:
        meta = {"comment": f["doc"]} if f.get("doc") else {}
        return T.StructField(f["name"], convert(f["type"], name), not f.get("required"), meta)

    return T.StructType([field(f, f["name"]) for f in schema.to_dict()["fields"]])


def _field(field_id: int, f: Any, t: IcebergType) -> NestedField:
    comment = (f.metadata or {}).get("comment")
    return NestedField(field_id, f.name, t, required=not f.nullable, doc=comment)


def _primitive(t: Any) -> IcebergType:
    """A Spark primitive type as Iceberg's, by the mapping CREATE TABLE's columns use."""
    try:
        kind = exp.DataType.build(t.simpleString(), dialect=IcebergSpark)
    except Exception:
        raise NotSupportedError(
            f"a view column of Spark type {t.simpleString()} has no Iceberg type"
        ) from None
    return iceberg_type(kind)


# ---- DROP / ALTER / SHOW / DESCRIBE ----
def drop(ctx: Context, tree: exp.Drop) -> Any:
    from icefloe.spark.sql.ddl import empty

    tables = tree.args.get("tables") or [tree.this]
    found = view_target(ctx, tables[0])
    if found is None:
        return None
    name, catalog, ident, shown = found
    if _load(ctx, name, ident) is None:
        if tree.args.get("exists"):
            return empty(ctx.spark)
        raise NoSuchViewError(f"[VIEW_NOT_FOUND] The view {shown} cannot be found.")
    catalog.drop_view(ident)
    return empty(ctx.spark)


def alter(ctx: Context, tree: exp.Alter) -> Any:
    from icefloe.spark.sql.ddl import empty

    found = view_target(ctx, tree.this)
    if found is None:
        return None
    name, catalog, ident, shown = found
    if _load(ctx, name, ident) is None:
        raise NoSuchViewError(f"[VIEW_NOT_FOUND] The view {shown} cannot be found.")
    actions = tree.args.get("actions") or []
    if len(actions) != 1:
        raise NotSupportedError(f"ALTER VIEW {shown}: one change per statement")
    action = actions[0]
    if isinstance(action, exp.AlterSet):
        updates: dict[str, str] = {}
        for props in action.expressions:
            for prop in props.expressions if isinstance(props, exp.Properties) else [props]:
                key = str(prop.this.this if isinstance(prop.this, exp.Literal) else prop.name)
                updates[key] = str(prop.args["value"].this)
        catalog.update_view_properties(ident, updates)
    elif isinstance(action, UnsetProperties):
        keys = [str(e.this if isinstance(e, exp.Literal) else e.name) for e in action.expressions]
        current = catalog.load_view(ident).properties
        missing = [k for k in keys if k not in current]
        if missing and not action.args.get("exists"):  # Java's AlterV2ViewUnsetPropertiesExec
            raise ValidationError(f"Cannot remove property that is not set: '{missing[0]}'")
        catalog.update_view_properties(ident, removals=[k for k in keys if k in current])
    elif isinstance(action, exp.Query) or tree.args.get("expression") is not None:
        # Java's CheckViews refuses it on an Iceberg view
        raise NotSupportedError(
            "ALTER VIEW <viewName> AS is not supported. Use CREATE OR REPLACE VIEW instead"
        )
    elif isinstance(action, exp.AlterRename):
        new = table_parts(action.this) or []
        target = ctx.resolver.split(new)
        if target is None or target[0] != name:
            raise NotSupportedError(
                f"ALTER VIEW {shown} RENAME TO {'.'.join(new)}: only within the view's catalog"
            )
        catalog.rename_view(ident, target[1] if len(target[1]) >= 2 else (*ident[:-1], *target[1]))
    else:
        raise NotSupportedError(
            f"ALTER VIEW {shown} {to_spark_sql(action)}: not supported by icefloe.spark.sql"
        )
    return empty(ctx.spark)


def show_views(ctx: Context, body: str) -> Any:
    """`SHOW VIEWS [IN | FROM ns] [LIKE 'pattern']` (`body`: what follows SHOW VIEWS), or None
    when the namespace is Spark's."""
    from icefloe.spark.sql.ddl import _like

    words = body.split(None, 1)
    ns_text, pattern = "", None
    rest = body
    if words and words[0].upper() in ("IN", "FROM"):
        rest = words[1] if len(words) > 1 else ""
        upper = rest.upper()
        cut = upper.find(" LIKE ")
        ns_text, rest = (rest[:cut], rest[cut:]) if cut >= 0 else (rest, "")
    rest = rest.strip()
    if rest.upper().startswith("LIKE"):
        pattern = rest[4:].strip()
    elif rest:
        pattern = rest
    parts = table_parts(exp.to_table(ns_text.strip(), dialect=IcebergSpark)) if ns_text.strip() else []
    if parts:
        found = ctx.resolver.namespace(parts)
    elif ctx.resolver.current_catalog is not None:
        found = (ctx.resolver.current_catalog, ctx.resolver.state.namespace)
    else:
        found = None
    if found is None:
        return None
    catalog = ctx.resolver.catalog(found[0])
    if not catalog.namespace_exists(found[1]):
        raise NoSuchNamespaceError(f"[SCHEMA_NOT_FOUND] The schema `{'.'.join(found[1])}` cannot be found.")
    like = _like(exp.Literal.string(pattern.strip("'\"")) if pattern else None)
    rows: list[tuple[Any, ...]] = []
    for ident in catalog.list_views(found[1]):
        if like is None or like.fullmatch(ident[-1]):
            rows.append((".".join(ident[:-1]), ident[-1], False))
    for t in ctx.spark.catalog.listTables():
        if getattr(t, "isTemporary", False) and (like is None or like.fullmatch(t.name)):
            rows.append(("", t.name, True))
    return ctx.spark.createDataFrame(rows, "namespace string, viewName string, isTemporary boolean")


def describe(ctx: Context, tree: exp.Describe, found: tuple[ViewTarget, View]) -> Any:
    """`DESCRIBE [EXTENDED] v` of the view `find_view` found, as Java's `DescribeV2ViewExec`
    (PySpark 3.5 and 4.1): (name, Spark type, comment) of each column; with EXTENDED, the
    view's details below an empty row."""
    from icefloe.spark._arrow import spark_arrow_schema, spark_schema

    (_name, _catalog, _ident, shown), view = found
    style = str(tree.args.get("style") or "").upper()
    column_or_partition = tree.meta.get("column") is not None or tree.args.get("partition")
    if (style and style != "EXTENDED") or tree.args.get("expressions") or column_or_partition:
        raise NotSupportedError(f"DESCRIBE {style} of a view column / partition ({shown}): not supported")
    schema = view.schema()
    struct = spark_schema(spark_arrow_schema(schema.to_dict()))
    docs = {f.name: f.doc or "" for f in schema.fields}
    rows = [(f.name, f.dataType.simpleString(), docs.get(f.name, "")) for f in struct.fields]
    if style == "EXTENDED":
        rows += [("", "", ""), *_detailed(view, shown)]
    return ctx.spark.createDataFrame(rows, "col_name string, data_type string, comment string")


# Spark's `ViewCatalog.RESERVED_PROPERTIES`, and what Java's `SparkView.properties()` leaves out.
_SPARK_RESERVED = ("comment", "owner", "create_engine_version", "engine_version")
_VIEW_RESERVED = ("provider", "location", "format-version", QUERY_COLUMN_NAMES)


def _shown_properties(view: View) -> dict[str, str]:
    """The properties Spark shows of a view: Java's `SparkView.properties()` without Spark's
    reserved ones."""
    spark_props = {"provider": "iceberg", "location": view.location(), "format-version": "1"}
    spark_props.update({k: v for k, v in view.properties.items() if k not in _VIEW_RESERVED})
    return {k: v for k, v in spark_props.items() if k not in _SPARK_RESERVED}


def show(ctx: Context, tree: Any, found: tuple[ViewTarget, View]) -> Any:
    """`SHOW TBLPROPERTIES v [('key')]` (Java's `ShowV2ViewPropertiesExec`) and `SHOW CREATE
    TABLE v` (`ShowCreateV2ViewExec`) of a view; `tree` is show's `ShowTableCommand`."""
    target, view = found
    name = f"{target.catalog_name}.{'.'.join(target.ident)}"  # Java's view name
    props = _shown_properties(view)
    if tree.args["kind"] == "TBLPROPERTIES":
        from icefloe.spark.sql.show import property_rows

        return property_rows(ctx, props, tree.args.get("key"), f"View {name}")
    if tree.args.get("serde"):
        raise NotSupportedError(f"SHOW CREATE TABLE {name} AS SERDE: not supported for Iceberg views")
    rep = view.current_version().sql_for("spark")
    if rep is None:
        raise NotSupportedError(f"view {name} has no query in the spark dialect")
    columns = [f.name + (f" COMMENT '{f.doc}'" if f.doc else "") for f in view.schema().fields]
    text = f"CREATE VIEW {name} (\n  " + ",\n  ".join(columns) + ")\n"
    if "comment" in view.properties:
        text += f"COMMENT '{_escape(view.properties['comment'])}'\n"
    if props:
        listed = [f"'{_escape(k)}' = '{_escape(v)}'" for k, v in sorted(props.items())]
        text += "TBLPROPERTIES (\n  " + ",\n  ".join(listed) + ")\n"
    text += f"AS\n{rep.sql}\n"
    return ctx.spark.createDataFrame([(text,)], "createtab_stmt string")


def _detailed(view: View, shown: str) -> list[tuple[str, str, str]]:
    props = view.properties
    listed = sorted(_shown_properties(view).items())
    escaped = ", ".join(f"'{_escape(k)}' = '{_escape(v)}'" for k, v in listed)
    columns = props[QUERY_COLUMN_NAMES].split(",") if QUERY_COLUMN_NAMES in props else []
    catalog_and_namespace = ".".join(_quote_if_needed(p) for p in shown.split(".")[:2])
    return [
        ("# Detailed View Information", "", ""),
        ("Comment", props.get("comment", ""), ""),
        ("View Catalog and Namespace", catalog_and_namespace, ""),
        ("View Query Output Columns", f"[{', '.join(columns)}]", ""),
        ("View Properties", f"[{escaped}]", ""),
        ("Created By", props.get("create_engine_version", ""), ""),
    ]


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _quote_if_needed(part: str) -> str:
    """Spark's `quoteIfNeeded`: backticks unless the part is letters, digits and `_`."""
    return part if re.fullmatch(r"[A-Za-z0-9_]+", part) else _quote(part)
