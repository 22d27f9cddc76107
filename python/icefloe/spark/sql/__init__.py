"""`icefloe.spark.sql(spark, text, catalogs=None)`: Spark SQL over icefloe tables, without
Iceberg's Spark runtime.

The statement is parsed (sqlglot, `dialect.py`), its names resolved (`names.py`), and it
becomes the Python API's calls: a query is Spark SQL over icefloe reads (`query.py`), its
aggregates answered from manifest metrics where Java's runtime does so (`aggregates.py`); DML
maps onto `icefloe.spark.append` / `delete` / `update` / `merge` (`dml.py`); DDL onto the
catalog's and the table's updates (`ddl.py`). A statement that names no icefloe table is
Spark's and runs as written. A statement naming an icefloe table that icefloe does not
carry out yet is a `NotSupportedError` naming the statement kind; it never reaches Spark.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError
from sqlglot.tokens import TokenType

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.dialect import IcebergSpark, command_kind
from icefloe.spark.sql.names import Resolver
from icefloe.spark.sql.query import Context, cte_names, rewrite_tables, table_parts, to_spark_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from icefloe.catalog import Catalog

__all__ = ["sql"]


def sql(spark: SparkSession, text: str, catalogs: Mapping[str, Catalog] | None = None) -> DataFrame:
    """Runs one Spark SQL statement; returns its DataFrame, as `spark.sql` does.

    Catalog names are those of `catalogs` (name -> icefloe `Catalog`), then the session's
    `icefloe.catalog.<name>.<property>` confs (as `format("icefloe")` reads them), then those
    of an earlier `USE`. `USE cat.ns` makes an icefloe catalog and namespace current for the
    session's later calls; names that are not icefloe tables stay Spark's."""
    ctx = Context(spark, Resolver(spark, catalogs), text=text)
    tree = _parse(ctx, text)
    if tree is None:
        return spark.sql(text)
    try:
        return _run(ctx, tree, text)
    finally:
        ctx.drop_views()


def _parse(ctx: Context, text: str) -> exp.Expr | None:
    """The statement's tree. A statement sqlglot cannot parse is Spark's when it names no
    icefloe catalog (and no icefloe catalog is current): None; else a ValidationError with
    the position."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)  # sqlglot warns when it keeps a statement as a Command
    try:
        trees = [t for t in sqlglot.parse(text, dialect=IcebergSpark) if t is not None]
    except ParseError as e:
        if _names_icefloe(ctx, text):
            raise ValidationError(f"cannot parse the statement: {e}") from None
        return None
    finally:
        logger.setLevel(level)
    if len(trees) != 1:
        raise ValidationError(f"expected one statement, found {len(trees)}")
    return trees[0]


def _names_icefloe(ctx: Context, text: str) -> bool:
    """Whether a statement's tokens may name an icefloe table (a catalog's name, or any name
    while an icefloe catalog is current)."""
    if ctx.resolver.current_catalog is not None:
        return True
    try:
        tokens = IcebergSpark().tokenize(text)
    except Exception:
        return True
    names = (TokenType.VAR, TokenType.IDENTIFIER)
    return any(t.token_type in names and ctx.resolver.is_catalog(t.text) for t in tokens)


def _run(ctx: Context, tree: exp.Expr, text: str) -> Any:
    from icefloe.spark.sql import ddl, dml

    spark = ctx.spark
    if isinstance(tree, exp.Query):
        from icefloe.spark.sql.aggregates import push_aggregates
        from icefloe.spark.sql.functions import rewrite_functions
        from icefloe.spark.sql.views import expand_views

        expand_views(ctx, tree)  # a view's query in its place, before its tables are answered
        tree, pushed = push_aggregates(ctx, tree)
        rewritten = rewrite_tables(ctx, tree)
        # Iceberg's functions after the tables: their arguments' types come from Spark.
        if not rewrite_functions(ctx, tree) and not rewritten and not pushed:
            return spark.sql(text)
        return spark.sql(to_spark_sql(tree))
    if isinstance(tree, exp.Use):
        if ctx.resolver.use(table_parts(tree.this) or []):
            return ddl.empty(spark)
        return spark.sql(text)
    if isinstance(tree, exp.Command) and str(tree.this).upper() == "CALL":
        from icefloe.spark.sql.procedures import call

        called = call(ctx, tree)
        if called is not None:
            return called
    if isinstance(tree, exp.Command) and str(tree.this).upper() == "SHOW":
        from icefloe.spark.sql.show import show_command, show_statement
        from icefloe.spark.sql.views import show_views

        body = tree.expression.name if isinstance(tree.expression, exp.Expr) else str(tree.expression or "")
        if body.strip().upper().split(None, 1)[:1] == ["VIEWS"]:
            views = show_views(ctx, body.strip()[len("VIEWS") :].strip())
            return views if views is not None else spark.sql(text)

        statement = show_command(tree)
        shown = show_statement(ctx, statement) if statement is not None else None
        if shown is not None:
            return shown
    if isinstance(tree, exp.Command):
        rest = tree.expression
        if _names_icefloe(ctx, rest.name if isinstance(rest, exp.Expr) else str(rest or "")):
            raise NotSupportedError(f"{command_kind(tree)}: not supported by icefloe.spark.sql yet")
        return spark.sql(text)
    from icefloe.spark.sql import show

    handler = dml.HANDLERS.get(type(tree)) or ddl.HANDLERS.get(type(tree)) or show.HANDLERS.get(type(tree))
    if handler is not None:
        result = handler(ctx, tree)
        if result is not None:
            return result
        return spark.sql(text)  # the statement names no icefloe table
    if any(ctx.resolver.split(p, cte_names(tree)) is not None for p in _names(tree)):
        raise NotSupportedError(f"{statement_kind(tree)}: not supported by icefloe.spark.sql yet")
    return spark.sql(text)


def _names(tree: exp.Expr) -> list[list[str]]:
    return [p for p in (table_parts(t) for t in tree.find_all(exp.Table)) if p is not None]


def statement_kind(tree: exp.Expr) -> str:
    """A statement's kind as Spark names it (`DESCRIBE`, `CREATE VIEW`, `INSERT OVERWRITE`)."""
    kind = tree.args.get("kind")
    words = [type(tree).__name__.upper()]
    if isinstance(kind, str) and kind:
        words.append(kind.upper())
    return " ".join(words)
