"""Queries over icefloe tables: each icefloe table a query names becomes a temp view of an
icefloe read, and Spark runs the rewritten query.

For each table reference (`cat.db.t`, `t` after `USE`, `db.t.branch_x`, `db.t.snapshots`,
with `VERSION AS OF` / `TIMESTAMP AS OF`):

- a metadata table is `icefloe.spark.inspect` of it (at the snapshot of the time travel);
- a table is `icefloe.spark.read` at the snapshot, ref or time the name or the temporal
  clause names, selecting the columns the query may use (every column when the query has a
  `*` other than `count(*)` or a NATURAL join) and filtering by the WHERE conjuncts of the
  SELECT reading it that `filters.true_of` translates exactly and that name only its
  columns (never into the null-supplying side of an outer join). The filter only prunes:
  Spark still evaluates the whole WHERE.

The reference is replaced by the view, aliased with the name the query uses for it (its
alias, else the table's last name part), and columns qualified with the whole name
(`db.t.id`) are qualified with that alias. The rewritten tree goes back to Spark as
Spark SQL (sqlglot's Spark generator). Names that are not icefloe tables (temp views,
CTEs, Spark's tables) are left alone, so one query can join both.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.dialect import IcebergSpark
from icefloe.spark.sql.filters import Timestamps, conjuncts, session_timestamps, true_of

if TYPE_CHECKING:
    from icefloe.expressions import BooleanExpression
    from icefloe.spark.sql.names import Resolver, TableRef
    from icefloe.table import Table

__all__ = [
    "Context",
    "cte_names",
    "read_options",
    "requalify_columns",
    "rewrite_tables",
    "spark_major",
    "table_parts",
    "to_spark_sql",
]

VIEW_PREFIX = "__icefloe_sql_"


@dataclass
class Context:
    """One statement's Spark session, names and the temp views made for it."""

    spark: Any
    resolver: Resolver
    views: list[str] = field(default_factory=list)
    text: str = ""  # the statement as written
    # Tables as empty frames of their Spark schema (required columns not nullable, as Java's
    # runtime gives them): a query analysed for its schema only (CREATE VIEW).
    schema_only: bool = False
    _timestamps: Timestamps | None = None

    def timestamps(self) -> Timestamps:
        """How the session reads timestamp literals (its conf, read once a statement)."""
        if self._timestamps is None:
            self._timestamps = session_timestamps(self.spark)
        return self._timestamps

    def view(self, df: Any) -> str:
        name = f"{VIEW_PREFIX}{uuid.uuid4().hex[:12]}"
        df.createOrReplaceTempView(name)
        self.views.append(name)
        return name

    def drop_views(self) -> None:
        """Drops the statement's temp views. A DataFrame Spark analysed keeps the plans of
        the views it read; under Spark Connect a DataFrame is analysed again when it runs,
        so there the views stay for the session."""
        if getattr(self.spark, "_jsparkSession", None) is None:
            return
        for name in self.views:
            self.spark.catalog.dropTempView(name)
        self.views.clear()


def to_spark_sql(tree: exp.Expr) -> str:
    return tree.sql(dialect=IcebergSpark)


def cte_names(tree: exp.Expr) -> frozenset[str]:
    return frozenset(cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE))


def spark_major(spark: Any) -> int:
    """The session's Spark major version (3 or 4): statements whose Spark behaviour differs
    between the lines follow the session's."""
    return spark_version(spark)[0]


def spark_version(spark: Any) -> tuple[int, int]:
    """The session's Spark (major, minor) version, `(4, 1)` for 4.1.0."""
    parts = str(spark.version).split(".")
    return int(parts[0]), int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


def table_parts(table: exp.Table) -> list[str] | None:
    """The name parts of a table reference, or None when it is not a name (a table function)."""
    if not isinstance(table.this, (exp.Identifier, exp.Dot)):
        return None
    parts = table.parts
    if not all(isinstance(p, exp.Identifier) for p in parts):
        return None
    return [p.name for p in parts]


def rewrite_tables(ctx: Context, tree: exp.Expr, skip: exp.Table | None = None) -> bool:
    """Replaces each icefloe table reference of `tree` (but `skip`) by a temp view of its
    read, in place (the views of icefloe catalogs it reads first replaced by their queries:
    `views.expand_views`); whether any was replaced."""
    from icefloe.spark.sql.views import expand_views

    expanded = expand_views(ctx, tree)
    ctes = cte_names(tree)
    found: list[tuple[exp.Table, TableRef, list[str]]] = []
    for table in list(tree.find_all(exp.Table)):
        if table is skip:
            continue
        parts = table_parts(table)
        if parts is None:
            continue
        ref = ctx.resolver.table(parts, ctes)
        if ref is not None:
            found.append((table, ref, parts))
    if not found:
        return expanded
    referenced, everything = _used_names(tree)
    for table, ref, parts in found:
        visible = table.alias or parts[-1]
        requalify_columns(tree, parts, visible)
        df = _frame(ctx, table, ref, visible, None if everything else referenced)
        new = table.copy()
        new.set("this", exp.to_identifier(ctx.view(df)))
        for key in ("db", "catalog", "version"):
            new.set(key, None)
        new.set("alias", exp.TableAlias(this=exp.to_identifier(visible, quoted=True)))
        table.replace(new)
    return True


def _used_names(tree: exp.Expr) -> tuple[set[str], bool]:
    """Every identifier of the statement (lower case; a superset of the columns it uses),
    and whether it may use every column of a table (a `*` other than `count(*)`, a
    NATURAL join)."""
    names = {i.name.lower() for i in tree.find_all(exp.Identifier)}
    star = any(not isinstance(s.parent, exp.Count) for s in tree.find_all(exp.Star))
    natural = any(str(j.args.get("method") or "").upper() == "NATURAL" for j in tree.find_all(exp.Join))
    return names, star or natural


def requalify_columns(tree: exp.Expr, parts: list[str], visible: str) -> None:
    """`db.t.id` (a column qualified with the table's whole name) becomes `t.id`."""
    for column in tree.find_all(exp.Column):
        if column.args.get("db") is None:
            continue
        qualifier = [p.name for p in column.parts[:-1]]
        if len(qualifier) <= len(parts) and [q.lower() for q in qualifier] == [
            p.lower() for p in parts[len(parts) - len(qualifier) :]
        ]:
            column.set("db", None)
            column.set("catalog", None)
            column.set("table", exp.to_identifier(visible))


def _frame(ctx: Context, table: exp.Table, ref: TableRef, visible: str, referenced: set[str] | None) -> Any:
    from icefloe.spark.inspect import inspect
    from icefloe.spark.read import plan_read

    loaded = ref.load()
    options = read_options(ctx, loaded, ref, table.args.get("version"))
    from icefloe.spark.sql.names import CHANGES

    if ref.metadata_table == CHANGES:  # Java's SparkChangelogTable: every change, carry-overs kept
        from icefloe.spark.changelog import read_changelog

        if ref.has_selector or table.args.get("version") is not None:
            raise NotSupportedError(
                f"{ref.name}.changes with time travel: not supported by icefloe.spark.sql"
            )

        return read_changelog(ctx.spark, loaded, remove_carryovers=False)
    if ref.metadata_table is not None:
        return inspect(ctx.spark, loaded, ref.metadata_table, _snapshot_of(loaded, options))
    if ctx.schema_only:
        from icefloe.spark.sql.views import spark_struct

        return ctx.spark.createDataFrame([], spark_struct(loaded.schema()))
    selected = None
    if referenced is not None:
        selected = tuple(f.name for f in loaded.schema().fields if f.name.lower() in referenced)
    row_filter = _pushed_filter(table, loaded, visible, ctx.timestamps())
    # The query keeps its whole WHERE: the pushed part only prunes, so files it partly
    # selects still take Spark's Parquet source.
    plan = plan_read(
        ctx.spark,
        loaded,
        row_filter=row_filter,
        selected_fields=selected,
        rows_filtered_after=True,
        **options,
    )
    return plan.frame()


def read_options(ctx: Context, table: Table, ref: TableRef, version: exp.Version | None) -> dict[str, Any]:
    """The snapshot a reference reads: `snapshot_id`, `ref` or `as_of_timestamp` (millis),
    from its name's selector or its temporal clause, as Java's `SparkCatalog.loadTable`."""
    options: dict[str, Any] = {}
    if ref.snapshot_id is not None:
        options["snapshot_id"] = ref.snapshot_id
    if ref.ref is not None:
        options["ref"] = ref.ref
    if ref.as_of_timestamp is not None:
        options["as_of_timestamp"] = ref.as_of_timestamp
    if version is None:
        return options
    if ref.has_selector:
        raise ValidationError(f"Cannot do time-travel based on both table identifier and AS OF ({ref.name})")
    value = version.expression
    if str(version.this).upper() == "TIMESTAMP":
        micros = ctx.spark.sql(f"SELECT unix_micros(CAST({to_spark_sql(value)} AS TIMESTAMP))").first()[0]
        if micros is None:
            raise ValidationError(f"TIMESTAMP AS OF {to_spark_sql(value)} is not a timestamp")
        return {"as_of_timestamp": int(micros) // 1000}
    if not isinstance(value, exp.Literal):
        raise NotSupportedError(f"VERSION AS OF {to_spark_sql(value)}: a version is a number or a string")
    text = value.this
    try:
        return {"snapshot_id": int(text)}
    except ValueError:
        pass
    found = table.refs().get(text)
    if found is None:
        raise ValidationError(f"Cannot find matching snapshot ID or reference name for version {text}")
    if found.snapshot_ref_type == "branch":
        return {"ref": text}
    return {"snapshot_id": found.snapshot_id}


def _snapshot_of(table: Table, options: dict[str, Any]) -> int | None:
    """The snapshot id a metadata table is read at (None: the current one)."""
    if "snapshot_id" in options:
        return int(options["snapshot_id"])
    if "ref" in options:
        found = table.refs().get(options["ref"])
        if found is None:
            raise ValidationError(
                f"Cannot find matching snapshot ID or reference name for version {options['ref']}"
            )
        return found.snapshot_id
    if "as_of_timestamp" in options:
        millis = int(options["as_of_timestamp"])
        older = [e for e in table.history() if e.timestamp_ms <= millis]
        if not older:
            raise ValidationError(f"Cannot find a snapshot older than {millis}")
        return older[-1].snapshot_id
    return None


def _pushed_filter(
    table: exp.Table, loaded: Table, visible: str, timestamps: Timestamps
) -> BooleanExpression | None:
    """The WHERE conjuncts of the SELECT reading `table` that filter its rows exactly."""
    holder = table.parent
    select = holder.parent if isinstance(holder, (exp.From, exp.Join)) else None
    if not isinstance(select, exp.Select) or _null_supplying(select, table):
        return None
    where = select.args.get("where")
    if where is None:
        return None
    single = not select.args.get("joins")
    fields = {f.name.lower(): f for f in loaded.schema().fields}

    def lookup(qualifier: str | None, name: str) -> tuple[str, str] | None:
        if qualifier is None and not single:
            return None
        if qualifier is not None and qualifier.lower() != visible.lower():
            return None
        f = fields.get(name.lower())
        if f is None or not f.field_type.is_primitive:
            return None
        return f.name, str(f.field_type.to_json())

    from icefloe import expressions as ice

    pushed = [p for p in (true_of(c, lookup, timestamps) for c in conjuncts(where.this)) if p is not None]
    if not pushed:
        return None
    return pushed[0] if len(pushed) == 1 else ice.And(*pushed)


def _null_supplying(select: exp.Select, table: exp.Table) -> bool:
    """Whether an outer join of `select` may pad `table`'s side with nulls (a filter pushed
    there would turn matched rows into padded ones), or `table` is a semi / anti join's."""
    joins = list(select.args.get("joins") or [])
    position = 0
    for i, join in enumerate(joins, start=1):
        if join.this is table:
            position = i
    for i, join in enumerate(joins, start=1):
        side = str(join.args.get("side") or "").upper()
        kind = str(join.args.get("kind") or "").upper()
        if i == position and (side in ("LEFT", "FULL") or kind in ("SEMI", "ANTI")):
            return True
        if i > position and side in ("RIGHT", "FULL"):
            return True
    return False
