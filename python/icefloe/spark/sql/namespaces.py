"""Namespace statements of `icefloe.spark.sql`, as Spark's v2 commands run them against
Iceberg Java's `SparkCatalog`:

- `CREATE NAMESPACE [IF NOT EXISTS] ns [COMMENT c] [LOCATION l] [WITH DBPROPERTIES (...)]`:
  the properties, `comment` and `location`, and Spark's `owner` (the session's user, as
  `CreateNamespaceExec` adds it). A catalog that stores no namespace properties (the filesystem
  one, as Java's HadoopCatalog) gets none when `owner` is all there is, and refuses the others.
- `ALTER NAMESPACE ns SET DBPROPERTIES|PROPERTIES (...)`, `ALTER NAMESPACE ns SET LOCATION l`.
- `DESCRIBE NAMESPACE [EXTENDED] ns`: Spark's `DescribeNamespaceExec` rows (`info_name`,
  `info_value`): catalog, namespace, `Comment` / `Location` / `Owner` where set, and with
  EXTENDED the other properties, sorted, secrets redacted as Spark's default
  `spark.redaction.regex` does.
- `DROP NAMESPACE [IF EXISTS] ns [CASCADE]`: Java's `SparkCatalog.dropNamespace` ignores
  CASCADE and its catalogs refuse a namespace that holds tables or views, so icefloe's does too.
"""

from __future__ import annotations

import os
import re
from typing import Any

from sqlglot import exp

from icefloe.exceptions import NamespaceAlreadyExistsError, NoSuchNamespaceError, NotSupportedError
from icefloe.spark.sql.dialect import UnsetProperties
from icefloe.spark.sql.query import Context, spark_major, table_parts

__all__ = ["alter", "create", "describe", "drop"]

_RESERVED = ("comment", "location", "owner")
_REDACTED = re.compile(r"(?i)secret|password|token|access[.]key")


def _target(ctx: Context, table: exp.Expr | None) -> tuple[str, Any, tuple[str, ...], str] | None:
    """(catalog name, catalog, namespace, shown name) of a namespace of an icefloe catalog,
    or None (Spark's)."""
    found = ctx.resolver.namespace(table_parts(table) or []) if isinstance(table, exp.Table) else None
    if found is None:
        return None
    return found[0], ctx.resolver.catalog(found[0]), found[1], ".".join((found[0], *found[1]))


def _existing(ctx: Context, table: exp.Expr | None) -> tuple[str, Any, tuple[str, ...], str] | None:
    """`_target` of a namespace that must exist (Spark's SCHEMA_NOT_FOUND otherwise)."""
    found = _target(ctx, table)
    if found is not None and not found[1].namespace_exists(found[2]):
        raise NoSuchNamespaceError(f"[SCHEMA_NOT_FOUND] The schema `{found[3]}` cannot be found.")
    return found


def _properties(given: exp.Properties | None) -> dict[str, str]:
    props: dict[str, str] = {}
    for prop in given.expressions if given is not None else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            props["comment"] = str(prop.this.this)
        elif isinstance(prop, exp.LocationProperty):
            props["location"] = qualified(str(prop.this.this))
        elif isinstance(prop, exp.Property):
            props[str(prop.this.this if isinstance(prop.this, exp.Literal) else prop.name)] = str(
                prop.args["value"].this
            )
        else:
            raise NotSupportedError(f"CREATE NAMESPACE: {prop.sql()}")
    return props


def qualified(location: str) -> str:
    """A namespace location as Spark's commands qualify it (`makeQualifiedNamespacePath`): a
    path without a scheme is on the local file system, `file:/absolute/path`."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", location):
        return location
    return "file:" + os.path.abspath(location)


def _owner(ctx: Context) -> str | None:
    context = getattr(ctx.spark, "_sc", None)  # none under Spark Connect
    return str(context.sparkUser()) if context is not None else None


def create(ctx: Context, tree: exp.Create) -> Any:
    from icefloe.catalog.filesystem import FilesystemCatalog
    from icefloe.spark.sql.ddl import empty

    found = _target(ctx, tree.this)
    if found is None:
        return None
    _name, catalog, namespace, shown = found
    props = _properties(tree.args.get("properties"))
    if catalog.namespace_exists(namespace):
        if tree.args.get("exists"):
            return empty(ctx.spark)
        raise NamespaceAlreadyExistsError(f"Namespace {shown} already exists")
    owner = _owner(ctx)
    if owner is not None:
        props.setdefault("owner", owner)
    if isinstance(catalog, FilesystemCatalog) and set(props) <= {"owner"}:
        props = {}  # Java's SparkCatalog: HadoopCatalog gets no properties when Spark's are all
    catalog.create_namespace(namespace, props or None)
    return empty(ctx.spark)


def alter(ctx: Context, tree: exp.Alter) -> Any:
    from icefloe.spark.sql.ddl import empty

    found = _existing(ctx, tree.this)
    if found is None:
        return None
    _name, catalog, namespace, shown = found
    (action,) = tree.args.get("actions") or [None]
    if isinstance(action, UnsetProperties):
        return _unset(ctx, catalog, namespace, shown, [str(k.this) for k in action.expressions])
    if not isinstance(action, exp.AlterSet):
        raise NotSupportedError(f"ALTER NAMESPACE {shown}: only SET / UNSET DBPROPERTIES and SET LOCATION")
    location = action.args.get("location")
    if location is not None:
        updates = {"location": qualified(str(location.this))}
    else:
        updates = {}
        for props in action.expressions:
            updates.update(_properties(props if isinstance(props, exp.Properties) else None))
    catalog.update_namespace_properties(namespace, updates=updates)
    return empty(ctx.spark)


def describe(ctx: Context, tree: exp.Describe) -> Any:
    found = _existing(ctx, tree.this)
    if found is None:
        return None
    name, catalog, namespace, _shown = found
    metadata = catalog.load_namespace_properties(namespace)
    rows = [("Catalog Name", name), ("Namespace Name", namespace[-1])]
    rows += [(key.capitalize(), metadata[key]) for key in _RESERVED if key in metadata]
    if str(tree.args.get("style") or "").upper() == "EXTENDED":
        others = sorted((k, v) for k, v in metadata.items() if k not in _RESERVED)
        shown_props = [f"({k},{'*********(redacted)' if _REDACTED.search(k) else v})" for k, v in others]
        rows.append(("Properties", f"({', '.join(shown_props)})" if shown_props else ""))
    return ctx.spark.createDataFrame(rows, "info_name string, info_value string")


def drop(ctx: Context, tree: exp.Drop) -> Any:
    from icefloe.spark.sql.ddl import empty

    tables = tree.args.get("tables") or [tree.this]
    found = _target(ctx, tables[0])
    if found is None:
        return None
    _name, catalog, namespace, shown = found
    if not catalog.namespace_exists(namespace):
        if tree.args.get("exists"):
            return empty(ctx.spark)
        raise NoSuchNamespaceError(f"Namespace not found: {shown}")
    catalog.drop_namespace(namespace)  # NamespaceNotEmptyError with or without CASCADE, as Java
    return empty(ctx.spark)


def _unset(ctx: Context, catalog: Any, namespace: tuple[str, ...], shown: str, keys: list[str]) -> Any:
    """`ALTER NAMESPACE ns UNSET DBPROPERTIES|PROPERTIES (k, ...)`, as Spark 4's
    `UnsetNamespacePropertiesExec` runs it against Java's catalogs: each key removed (a key the
    namespace does not have is no error), Spark's reserved keys (`comment`, `location`,
    `owner`) refused as Spark's parser refuses them. PySpark 3.5's parser has no such
    statement, and icefloe refuses it there as Spark does."""
    from icefloe.exceptions import ValidationError
    from icefloe.spark.sql.ddl import empty

    if spark_major(ctx.spark) < 4:
        raise ValidationError(
            f"ALTER NAMESPACE {shown} UNSET PROPERTIES: Spark 4's statement, not in PySpark "
            f"{ctx.spark.version}'s SQL"
        )
    reserved = [k for k in keys if k.lower() in _RESERVED]
    if reserved:
        raise ValidationError(
            f"[UNSUPPORTED_FEATURE.SET_NAMESPACE_PROPERTY] {reserved[0]} is a reserved namespace "
            "property: it cannot be unset"
        )
    catalog.update_namespace_properties(namespace, removals=set(keys))
    return empty(ctx.spark)
