"""`ALTER TABLE` actions beyond columns and partition fields, as Iceberg Java's SQL extensions
and `SparkCatalog.alterTable` carry them out:

- `WRITE [DISTRIBUTED BY PARTITION] [[LOCALLY] ORDERED BY f [ASC|DESC] [NULLS FIRST|LAST], ...
  | UNORDERED]` (Java's `SetWriteDistributionAndOrderingExec`): the sort order is replaced by
  the fields (unsorted when none are given) and `write.distribution-mode` set to `hash` for
  `DISTRIBUTED BY PARTITION`, `none` for `UNORDERED`, `range` for `ORDERED BY`, left alone for
  `LOCALLY ORDERED BY`; one commit;
- `SET IDENTIFIER FIELDS a, b` (replaces them) and `DROP IDENTIFIER FIELDS a` (each must be one);
- `CREATE [OR REPLACE] | REPLACE  BRANCH | TAG [IF NOT EXISTS] n [AS OF VERSION id] [RETAIN n
  unit] [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n unit]]` and `DROP BRANCH | TAG [IF EXISTS] n`
  (Java's `CreateOrReplaceBranchExec` / `...TagExec` / `DropBranchExec` / `DropTagExec`): one
  `manage_snapshots` commit each, at the current snapshot unless `AS OF VERSION`;
- `ALTER COLUMN c TYPE t | COMMENT '...' | FIRST | AFTER d | DROP NOT NULL`: one schema update;
  `SET NOT NULL` as Spark's analyzer has it: nothing on a required column, else refused;
- `UNSET TBLPROPERTIES [IF EXISTS] (...)`: a properties removal;
- `RENAME TO [cat.]ns.t`: `catalog.rename_table` (the filesystem catalog refuses, as Java's
  HadoopCatalog does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.columns import iceberg_type
from icefloe.spark.sql.dialect import (
    AlterColumnPosition,
    IdentifierFields,
    RefChange,
    UnsetProperties,
    WriteSpec,
)

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["ACTIONS", "rename"]

ACTIONS = (WriteSpec, IdentifierFields, RefChange, AlterColumnPosition, UnsetProperties, exp.AlterColumn)


def apply(table: Table, action: exp.Expression, column_path: Any, exact: Any) -> None:
    """Carries out one action of `ACTIONS` on `table` (`column_path` and `exact` are ddl's
    helpers: the dotted path of a column expression; a path as the schema spells it)."""
    if isinstance(action, WriteSpec):
        return _write_spec(table, action)
    if isinstance(action, IdentifierFields):
        return _identifier_fields(table, action, exact)
    if isinstance(action, RefChange):
        return _ref_change(table, action)
    if isinstance(action, UnsetProperties):
        keys = [str(k.this) for k in action.expressions]
        with table.transaction() as tx:
            tx.remove_properties(*keys)
        return None
    if isinstance(action, AlterColumnPosition):
        path = exact(column_path(action.this))
        with table.update_schema() as update:
            after = action.args.get("after")
            if after is None:
                update.move_first(path)
            else:
                parent = path.rpartition(".")[0]
                sibling = column_path(after)
                update.move_after(path, exact(f"{parent}.{sibling}" if parent else sibling))
        return None
    assert isinstance(action, exp.AlterColumn)
    return _alter_column(table, action, column_path, exact)


def _alter_column(table: Table, action: exp.AlterColumn, column_path: Any, exact: Any) -> None:
    path = exact(column_path(action.this))
    dtype = action.args.get("dtype")
    comment = action.args.get("comment")
    if action.args.get("allow_null") is False and not action.args.get("drop"):
        # SET NOT NULL: Spark's analyzer refuses it on a nullable column (CheckAnalysis), and it
        # changes nothing on a required one.
        if not table.schema().find_field(path).required:
            raise ValidationError(f"Cannot change nullable column to non-nullable: {path}.")
        return
    with table.update_schema() as update:
        if dtype is not None:
            update.update_column(path, field_type=iceberg_type(dtype))
        elif comment is not None:
            update.update_column(path, doc=str(comment.this))
        elif action.args.get("drop") and action.args.get("allow_null"):
            update.make_column_optional(path)
        else:
            raise NotSupportedError(
                f"ALTER TABLE ... ALTER COLUMN {action.sql(dialect='spark')}: not supported"
            )


def _write_spec(table: Table, spec: WriteSpec) -> None:
    from icefloe.spark.sql.ddl import transform_of

    if spec.args.get("distributed") and spec.args.get("unordered"):
        raise ValidationError("WRITE DISTRIBUTED BY PARTITION cannot be UNORDERED")
    if spec.args.get("distributed"):
        mode: str | None = "hash"
    elif spec.args.get("unordered"):
        mode = "none"
    elif spec.args.get("locally"):
        mode = None
    else:
        mode = "range"
    with table.transaction() as tx:
        order = tx.replace_sort_order(case_sensitive=False)
        for ordered in spec.expressions:
            column, transform, _name = transform_of(ordered.this)
            nulls = "nulls-first" if ordered.args.get("nulls_first") else "nulls-last"
            if ordered.args.get("desc"):
                order.desc(column, transform, nulls)
            else:
                order.asc(column, transform, nulls)
        order.commit()
        if mode is not None:
            tx.set_properties({"write.distribution-mode": mode})


def _identifier_fields(table: Table, action: IdentifierFields, exact: Any) -> None:
    names = [exact(str(f.this)) for f in action.expressions]
    if action.args.get("drop"):
        schema = table.schema()
        current = [schema.find_column_name(i) or "" for i in schema.identifier_field_ids]
        for name in names:
            if name not in current:
                raise ValidationError(
                    f"Cannot complete drop identifier fields operation: field {name} not found"
                )
            current.remove(name)
        names = current
    with table.update_schema() as update:
        update.set_identifier_fields(*names)


def _ref_change(table: Table, ref: RefChange) -> None:
    name = ref.this.name
    kind = str(ref.args["kind"])
    action = str(ref.args["action"])
    refs = table.refs()
    existing = refs.get(name)
    if action == "DROP":
        if existing is None and ref.args.get("exists"):
            return
        with table.manage_snapshots() as ms:
            if kind == "BRANCH":
                ms.remove_branch(name)
            else:
                ms.remove_tag(name)
        return
    version = ref.args.get("version")
    current = table.current_snapshot()
    snapshot_id = int(version) if version is not None else (current.snapshot_id if current else None)
    if snapshot_id is None:
        what = "branch" if kind == "BRANCH" else "tag"
        raise NotSupportedError(
            f"CREATE {kind} on a table without snapshots: icefloe cannot create an empty {what} snapshot"
        )
    retain = ref.args.get("retain")
    min_snapshots = ref.args.get("min_snapshots")
    max_age = ref.args.get("max_snapshot_age")
    if action == "CREATE" and existing is not None and ref.args.get("exists"):
        return
    replace = action != "CREATE" and (existing is not None or action == "REPLACE")
    with table.manage_snapshots() as ms:
        if kind == "TAG":
            if replace:
                ms.replace_tag(name, snapshot_id)
            else:
                ms.create_tag(snapshot_id, name)
            if retain is not None:
                ms.set_max_ref_age_ms(name, int(retain))
            return
        if replace:
            ms.replace_branch(name, snapshot_id)
        else:
            ms.create_branch(snapshot_id, name)
        if min_snapshots is not None:
            ms.set_min_snapshots_to_keep(name, int(min_snapshots))
        if max_age is not None:
            ms.set_max_snapshot_age_ms(name, int(max_age))
        if retain is not None:
            ms.set_max_ref_age_ms(name, int(retain))


def rename(catalog: Any, ident: tuple[str, ...], catalog_name: str, to: exp.Table) -> None:
    """`RENAME TO`: the new name in the same catalog (its catalog part, when it names it, dropped)."""
    parts = [p.name for p in to.parts]
    if len(parts) >= 3 and parts[0] == catalog_name:
        parts = parts[1:]
    if len(parts) == 1:
        parts = [*ident[:-1], parts[0]]
    catalog.rename_table(ident, tuple(parts))
