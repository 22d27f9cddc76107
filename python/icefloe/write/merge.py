"""`Table.merge(source, on)` in process: Spark's `MERGE INTO` clauses over an Arrow source.

The join runs in pyarrow on the equality conjuncts of `on` (`"target.id = source.id AND
target.region = source.region"`); conjuncts over the target alone (`target.region = 'eu'`)
restrict the target rows that can match; other join conditions need `icefloe.spark.merge`.
The target is read with its `_file` / `_pos` metadata columns — without a `not matched by
source` clause, only the rows the target-only conjuncts select and, for a single-column
join, whose keys the source holds. The commit's conflict-detection filter is those
conjuncts (and, merge-on-read, the source's keys; see `icefloe.write.merge_condition`), so a concurrent
commit elsewhere in the table is no conflict. Float and double keys compare as Spark's join
keys: NaN matches NaN, -0.0 matches 0.0 (`join_key`, `matching_keys`). Clause conditions
are row-filter strings over the aliases (`"source.amount < 0 AND target.qty > 1"`) decided
by the reader's own Rust evaluator (one evaluator for every operation); the first clause
whose kind and condition hold takes a row, as in Spark. Set / insert values: a string
`"<alias>.<column>"` is that column, a pyarrow compute expression is evaluated over the
columns named `"<alias>.<column>"`, anything else is a literal.

Then, like the Spark path: merge-on-read (`write.merge.mode`) writes position deletes for
updated and deleted target rows plus data files of the new rows, one row delta; copy-on-write
rewrites the touched files. A target row matched by two source rows is refused (naming it)
before anything is written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _native
from icefloe._task_ids import MERGE_DRIVER_TASK_BASE
from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.expressions import And, BooleanExpression
from icefloe.write import lineage as _lineage
from icefloe.write import pending as _pending_write
from icefloe.write.data import as_reader, fitted
from icefloe.write.merge_condition import (
    CONFLICT_KEYS_MAX,
    conflict_filter_json,
    join_key,
    matching_keys,
    split_conjuncts,
    target_only_filter,
)
from icefloe.write.row_delta import RowDeltaWrite, isolation_level, removal_key, write_mode

if TYPE_CHECKING:
    from icefloe.table import Table
    from icefloe.write.data import ArrowData

# Above this many distinct source keys the target is read whole rather than by an IN filter.
_KEY_FILTER_MAX = 100_000


@dataclass
class MergeMetrics:
    """What one MERGE did (in process and on Spark)."""

    rows_inserted: int = 0
    rows_updated: int = 0
    rows_deleted: int = 0
    rows_copied: int = 0
    data_files_added: int = 0
    data_files_removed: int = 0
    delete_files_added: int = 0
    delete_files_removed: int = 0
    snapshot_id: int | None = None


MergeResult = MergeMetrics


@dataclass
class Clause:
    kind: str  # matched | not_matched | not_matched_by_source
    action: str  # update | delete | insert
    condition: str | None
    assignments: dict[str, Any] | None  # None: every column from the source (update_all / insert_all)


# As Spark's MERGE (and Iceberg Java's, with or without schema evolution) refuses a source
# struct without a field of the table's: its value would be lost, not kept.
_NO_NESTED_FIELD = (
    "MERGE {action}_all: the source's {col!r} has no field {missing!r} of the table's; Spark "
    "refuses it too (cannot find data for the output column {missing}). Nothing was written"
)


def missing_nested_field(target: pa.DataType, source: pa.DataType, path: str) -> str | None:
    """The dotted path of the first field nested in `target` (struct fields, list elements,
    map keys and values) that `source` has no field of that name for; None when none is
    missing or the types' shapes differ (casting reports those)."""
    if pa.types.is_struct(target) and pa.types.is_struct(source):
        found = {source.field(i).name: source.field(i).type for i in range(source.num_fields)}
        for i in range(target.num_fields):
            f = target.field(i)
            if f.name not in found:
                return f"{path}.{f.name}"
            deeper = missing_nested_field(f.type, found[f.name], f"{path}.{f.name}")
            if deeper is not None:
                return deeper
    elif pa.types.is_map(target) and pa.types.is_map(source):
        return missing_nested_field(target.key_type, source.key_type, f"{path}.key") or missing_nested_field(
            target.item_type, source.item_type, f"{path}.value"
        )
    elif _is_list(target) and _is_list(source):
        return missing_nested_field(target.value_type, source.value_type, f"{path}.element")
    return None


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


class MergeClauses:
    """Spark's seven MERGE clauses as builder methods, evaluated in the order added (the
    first whose kind and condition hold takes a row). Subclasses hold `table` and
    `_clauses` and say which values they take (`_check_value`)."""

    table: Table
    _clauses: list[Clause]
    # MERGE WITH SCHEMA EVOLUTION (`merge(..., merge_schema=True)`, see
    # `icefloe.table_transaction.merge_with_schema_evolution`): `table` is the table of a
    # transaction that added the source's columns; update_all / insert_all take the source's
    # columns, and a column the source lacks keeps the target's value (update) or takes its
    # default (insert). `_transaction` = (commit, abort) ends that transaction.
    evolve_schema: bool = False
    _transaction: tuple[Callable[[], int | None], Callable[[], None]] | None = None

    def _in_transaction(self, run: Callable[[], MergeMetrics]) -> MergeMetrics:
        """Runs the merge; inside a transaction (schema evolution), commits it after the
        merge's own commit was staged, or aborts it (deleting what the merge wrote)."""
        if self._transaction is None:
            return run()
        commit, abort = self._transaction
        self._transaction = None  # one execution ends the transaction
        try:
            result = run()
        except BaseException:
            abort()
            raise
        result.snapshot_id = commit()
        return result

    def when_matched_update(self, set: dict[str, Any], condition: str | None = None) -> Any:
        return self._add("matched", "update", condition, set)

    def when_matched_update_all(self, condition: str | None = None) -> Any:
        return self._add("matched", "update", condition, None)

    def when_matched_delete(self, condition: str | None = None) -> Any:
        return self._add("matched", "delete", condition, {})

    def when_not_matched_insert(self, values: dict[str, Any], condition: str | None = None) -> Any:
        return self._add("not_matched", "insert", condition, values)

    def when_not_matched_insert_all(self, condition: str | None = None) -> Any:
        return self._add("not_matched", "insert", condition, None)

    def when_not_matched_by_source_update(self, set: dict[str, Any], condition: str | None = None) -> Any:
        return self._add("not_matched_by_source", "update", condition, set)

    def when_not_matched_by_source_delete(self, condition: str | None = None) -> Any:
        return self._add("not_matched_by_source", "delete", condition, {})

    def _check_value(self, column: str, value: Any) -> Any:
        return value

    def _add(self, kind: str, action: str, condition: str | None, values: dict[str, Any] | None) -> Any:
        if values is not None and action != "delete":
            if not isinstance(values, dict) or not values:
                raise ValidationError(f"MERGE {action} needs a non-empty dict of column to value")
            columns = {f.name for f in self.table.schema().fields}
            for name in values:
                if name not in columns:
                    raise ValidationError(
                        f"MERGE {action} names column {name!r}, which the table does not have "
                        f"({sorted(columns)})"
                    )
            values = {str(k): self._check_value(str(k), v) for k, v in values.items()}
        self._clauses.append(Clause(kind, action, condition, values))
        return self


@dataclass
class TableMerger(MergeClauses):
    """A MERGE of an Arrow source into a table; add clauses, then `execute()`."""

    table: Table
    source: pa.Table
    on: str
    source_alias: str = "source"
    target_alias: str = "target"
    snapshot_properties: dict[str, str] = field(default_factory=dict)
    _clauses: list[Clause] = field(default_factory=list)
    # The conflict-detection filter of the commit (unbound JSON; see icefloe.write.merge_condition).
    _conflict_json: str = ""

    # ---- execution ----
    def execute(self) -> MergeMetrics:
        return self._in_transaction(self._execute)

    def _execute(self) -> MergeMetrics:
        if not self._clauses:
            raise ValidationError("MERGE needs at least one when_... clause")
        table, ta, sa = self.table, self.target_alias, self.source_alias
        md = table.metadata
        start = md.current_snapshot_id
        columns = [f.name for f in table.schema().fields]
        pairs, target_filter = self._join_condition()
        kinds = {c.kind for c in self._clauses}
        source_keys = {s: pc.unique(self.source.column(s)) for _, s in pairs}
        # Merge-on-read also narrows the conflict scope to the source's keys: it writes rows
        # of those keys only and position deletes of rows of those keys. Copy-on-write does
        # not: it rewrites whole files, other keys' rows included, and a concurrent equality
        # delete of one of those (outside the keys' scope) would not apply to the copy.
        by_key = write_mode(table, "merge") == "merge-on-read"
        self._conflict_json = conflict_filter_json(
            self.on,
            table.schema(),
            ta,
            sa,
            kinds,
            [
                (t, source_keys[s].to_pylist())
                for t, s in pairs
                if by_key and len(source_keys[s]) <= CONFLICT_KEYS_MAX + 1  # + a null
            ],
        )

        target = self._read_target(pairs, kinds, target_filter, source_keys)
        # Target rows the target-only conjuncts of `on` reject match no source row; only a
        # `not matched by source` clause sees them (the read drops them otherwise).
        unmatchable = None
        if target_filter is not None and "not_matched_by_source" in kinds and target.num_rows:
            mask = self._target_mask(target, target_filter, columns)
            unmatchable = target.filter(pc.invert(mask))
            target = target.filter(mask)
        how = (
            "full outer"
            if {"not_matched", "not_matched_by_source"} <= kinds
            else (
                "right outer"
                if "not_matched" in kinds
                else "left outer"
                if "not_matched_by_source" in kinds
                else "inner"
            )
        )
        joined = self._join(target, unmatchable, pairs, how)
        t_present = pc.is_valid(joined.column(f"{ta}.__present"))
        s_present = pc.is_valid(joined.column(f"{sa}.__present"))
        kind_mask = {
            "matched": pc.and_(t_present, s_present),
            "not_matched": pc.and_(pc.invert(t_present), s_present),
            "not_matched_by_source": pc.and_(t_present, pc.invert(s_present)),
        }
        if "matched" in kinds:
            self._check_cardinality(joined, kind_mask["matched"], columns)

        action = pa.nulls(joined.num_rows, pa.int32())
        structs = self._struct_batch(joined) if any(c.condition for c in self._clauses) else None
        for i, c in enumerate(self._clauses):
            mask = kind_mask[c.kind]
            if c.condition:
                assert structs is not None
                cond = _native.filter_mask(_native.parse_filter(c.condition), structs[1], structs[0])
                mask = pc.and_(mask, cond)
            mask = pc.and_(mask, pc.is_null(action))
            action = pc.if_else(mask, pa.scalar(i, pa.int32()), action)
        result = MergeMetrics()
        new_parts: list[pa.Table] = []
        removed: list[pa.Table] = []
        for i, c in enumerate(self._clauses):
            rows = joined.filter(pc.equal(action, i))
            if rows.num_rows == 0:
                continue
            if c.action == "insert":
                result.rows_inserted += rows.num_rows
            elif c.action == "update":
                result.rows_updated += rows.num_rows
            else:
                result.rows_deleted += rows.num_rows
            if c.action in ("update", "delete"):
                removed.append(
                    rows.select([f"{ta}._file", f"{ta}._pos"]).rename_columns(["file_path", "pos"])
                )
            if c.action in ("update", "insert"):
                new_parts.append(self._new_rows(rows, c, columns))
        if not new_parts and not removed:
            result.snapshot_id = start
            return result
        new_rows = (
            pa.concat_tables(new_parts)
            if new_parts
            else self._with_lineage(table.schema().as_arrow().empty_table(), None)
        )
        positions = pa.concat_tables(removed) if removed else None
        if write_mode(table, "merge") == "merge-on-read":
            self._commit_merge_on_read(md, start, new_rows, positions, result)
        else:
            self._commit_copy_on_write(start, target, new_rows, positions, result)
        return result

    def _join(
        self, target: pa.Table, unmatchable: pa.Table | None, pairs: list[tuple[str, str]], how: str
    ) -> pa.Table:
        """The joined rows: every target column as `<target alias>.<col>`, every source
        column as `<source alias>.<col>`, and `<alias>.__present` non-null where that side
        has a row. Arrow's hash join carries only the keys and row indices (it cannot carry
        nested non-key columns such as structs); the columns are then gathered by index.
        `unmatchable` target rows join no source row."""
        ta, sa = self.target_alias, self.source_alias
        left = pa.table(
            {
                **{f"k{i}": join_key(target.column(t)) for i, (t, _) in enumerate(pairs)},
                "__t": pa.array(range(target.num_rows), pa.int64()),
            }
        )
        right = pa.table(
            {
                **{f"k{i}": join_key(self._source_key(target, t, s)) for i, (t, s) in enumerate(pairs)},
                "__s": pa.array(range(self.source.num_rows), pa.int64()),
            }
        )
        keys = [f"k{i}" for i in range(len(pairs))]
        index = left.join(right, keys=keys, right_keys=keys, join_type=how, coalesce_keys=False)
        t_index, s_index = index.column("__t"), index.column("__s")
        if unmatchable is not None and unmatchable.num_rows:
            extra = pa.array(range(target.num_rows, target.num_rows + unmatchable.num_rows), pa.int64())
            t_index = pa.chunked_array([*t_index.chunks, extra], pa.int64())
            s_index = pa.chunked_array([*s_index.chunks, pa.nulls(len(extra), pa.int64())], pa.int64())
            target = pa.concat_tables([target, unmatchable])
        columns: dict[str, Any] = {f"{ta}.{c}": target.column(c).take(t_index) for c in target.column_names}
        columns[f"{ta}.__present"] = t_index
        columns.update({f"{sa}.{c}": self.source.column(c).take(s_index) for c in self.source.column_names})
        columns[f"{sa}.__present"] = s_index
        return pa.table(columns)

    def _source_key(self, target: pa.Table, t: str, s: str) -> pa.ChunkedArray:
        """The source's join column `s` in the type of the target's `t` (an int key against a
        long column, large_string against string, another timestamp unit or decimal scale),
        as Spark's MERGE compares them; Arrow's join needs equal types."""
        key, want = self.source.column(s), target.column(t).type
        if key.type == want:
            return key
        try:
            return key.cast(want)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise ValidationError(
                f"MERGE join column {self.source_alias}.{s} ({key.type}) cannot be compared with "
                f"{self.target_alias}.{t} ({want}): {e}"
            ) from None

    def _join_condition(self) -> tuple[list[tuple[str, str]], BooleanExpression | None]:
        """The (target column, source column) equalities of `on` and the AND of its
        conjuncts over the target alone (None: none)."""
        ta, sa = re.escape(self.target_alias), re.escape(self.source_alias)
        schema = self.table.schema()
        pairs: list[tuple[str, str]] = []
        target_only: list[BooleanExpression] = []
        for part in split_conjuncts(self.on):
            m = re.fullmatch(
                rf"\s*({ta}|{sa})\.`?(\w+)`?\s*=\s*({ta}|{sa})\.`?(\w+)`?\s*", part, flags=re.IGNORECASE
            )
            if m and m.group(1).lower() != m.group(3).lower():
                left_is_target = m.group(1).lower() == self.target_alias.lower()
                t, s = (m.group(2), m.group(4)) if left_is_target else (m.group(4), m.group(2))
                pairs.append((t, s))
                continue
            f = target_only_filter(part, schema, self.target_alias, self.source_alias)
            if f is None:
                raise NotSupportedError(
                    "in-process MERGE joins on equalities "
                    f"'{self.target_alias}.<col> = {self.source_alias}.<col>' and conditions on "
                    f"the target's columns alone, joined by AND; found {part!r} "
                    "(icefloe.spark.merge takes any Spark SQL condition)"
                )
            target_only.append(f)
        if not pairs:
            raise NotSupportedError(
                f"in-process MERGE needs at least one equality '{self.target_alias}.<col> = "
                f"{self.source_alias}.<col>' in {self.on!r} "
                "(icefloe.spark.merge takes any Spark SQL condition)"
            )
        columns = {f.name for f in schema.fields}
        for t, s in pairs:
            if t not in columns:
                raise ValidationError(
                    f"MERGE join column {self.target_alias}.{t} is not a column of the table"
                )
            if s not in self.source.column_names:
                raise ValidationError(
                    f"MERGE join column {self.source_alias}.{s} is not a column of the source"
                )
        target_filter = None
        for f in target_only:
            target_filter = f if target_filter is None else And(target_filter, f)
        return pairs, target_filter

    def _read_target(
        self,
        pairs: list[tuple[str, str]],
        kinds: set[str],
        target_filter: BooleanExpression | None,
        source_keys: dict[str, pa.Array],
    ) -> pa.Table:
        table = self.table

        def empty() -> pa.Table:
            return table.scan(selected_fields=self._target_fields()).projection().as_arrow().empty_table()

        if table.metadata.current_snapshot_id is None:
            return empty()
        row_filter: BooleanExpression | None = None
        if "not_matched_by_source" not in kinds:
            # Only target rows that can match a source row are read.
            row_filter = target_filter
            if len(pairs) == 1:
                keys = [k for k in source_keys[pairs[0][1]].to_pylist() if k is not None]
                if not keys:
                    return empty()
                if len(keys) <= _KEY_FILTER_MAX:
                    by_key = matching_keys(pairs[0][0], keys)
                    row_filter = by_key if row_filter is None else And(row_filter, by_key)
        return table.scan(row_filter=row_filter, selected_fields=self._target_fields()).to_arrow()

    def _target_fields(self) -> tuple[str, ...]:
        """What the target is read with: its columns, the row's file and position, and on
        v3 tables its lineage (updated rows keep `_row_id`, copied rows both columns)."""
        return ("*", "_file", "_pos", *_lineage.copied_columns(self.table))

    def _target_mask(
        self, target: pa.Table, target_filter: BooleanExpression, columns: list[str]
    ) -> pa.ChunkedArray:
        """Which target rows `target_filter` selects, by the reader's own evaluator."""
        data = target.select(columns)
        schema_json = _native.schema_from_arrow(data.schema)
        filter_json = target_filter.to_json()
        masks = [_native.filter_mask(filter_json, schema_json, b) for b in data.to_batches()]
        return pa.chunked_array(masks, pa.bool_())

    def _check_cardinality(self, joined: pa.Table, matched: pa.ChunkedArray, columns: list[str]) -> None:
        ta = self.target_alias
        m = joined.filter(matched).select([f"{ta}._file", f"{ta}._pos"])
        if m.num_rows == 0:
            return
        counts = m.group_by([f"{ta}._file", f"{ta}._pos"]).aggregate([([], "count_all")])
        dup = counts.filter(pc.greater(counts.column("count_all"), 1))
        if dup.num_rows:
            f, p, n = (dup.column(0)[0].as_py(), dup.column(1)[0].as_py(), dup.column("count_all")[0].as_py())
            row = joined.filter(
                pc.and_(pc.equal(joined.column(f"{ta}._file"), f), pc.equal(joined.column(f"{ta}._pos"), p))
            ).slice(0, 1)
            shown = {c: row.column(f"{ta}.{c}")[0].as_py() for c in columns}
            raise ValidationError(
                f"MERGE matched the target row {shown} ({f}, position {p}) with {n} source rows; "
                "a target row may be matched by at most one source row (as Spark's MERGE INTO). "
                "Nothing was committed."
            )

    def _struct_batch(self, joined: pa.Table) -> tuple[pa.RecordBatch, str]:
        """The joined rows as two struct columns named after the aliases (no field ids, so
        the evaluator resolves `alias.column` by name), and that batch's schema JSON."""
        arrays, names = [], []
        for alias in (self.target_alias, self.source_alias):
            prefix = f"{alias}."
            cols = [c for c in joined.column_names if c.startswith(prefix) and not c.endswith(".__present")]
            fields = [pa.field(c[len(prefix) :], joined.schema.field(c).type) for c in cols]
            children = [joined.column(c).combine_chunks() for c in cols]
            arrays.append(pa.StructArray.from_arrays(children, fields=fields))
            names.append(alias)
        batch = pa.RecordBatch.from_arrays(arrays, names=names)
        return batch, _native.schema_from_arrow(batch.schema)

    def _new_rows(self, rows: pa.Table, c: Clause, columns: list[str]) -> pa.Table:
        import pyarrow.dataset as ds

        ta, sa = self.target_alias, self.source_alias
        target = self.table.schema().as_arrow()
        exprs: dict[str, Any] = {}
        for col in columns:
            if c.assignments is None and (f"{sa}.{col}" in rows.column_names or not self.evolve_schema):
                if f"{sa}.{col}" not in rows.column_names:
                    raise ValidationError(f"MERGE {c.action}_all: the source has no column {col!r}")
                missing = missing_nested_field(
                    target.field(col).type, rows.schema.field(f"{sa}.{col}").type, col
                )
                if missing is not None:
                    raise ValidationError(_NO_NESTED_FIELD.format(action=c.action, col=col, missing=missing))
                exprs[col] = pc.field(f"{sa}.{col}")
            elif c.assignments is not None and col in c.assignments:
                v = c.assignments[col]
                if isinstance(v, pc.Expression):
                    exprs[col] = v
                elif isinstance(v, str) and v in rows.column_names and v.startswith((f"{ta}.", f"{sa}.")):
                    exprs[col] = pc.field(v)
                else:
                    exprs[col] = pc.scalar(v)
            elif c.action == "update":
                exprs[col] = pc.field(f"{ta}.{col}")
            else:  # an inserted row takes the column's write-default (format v3), else null
                exprs[col] = pc.scalar(None)
                field_id = self.table.schema().find_field(col).field_id
                default = _native.write_default_array(self.table.metadata, field_id, 1)
                if default is not None:
                    exprs[col] = pc.scalar(default[0])
        try:
            out = ds.dataset(rows).to_table(columns=exprs)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
            raise ValidationError(f"cannot evaluate the MERGE {c.action} values: {e}") from e
        cols = []
        for f in target:
            col = out.column(f.name)

            def cast_error(e: Exception, col: Any = col, f: pa.Field = f) -> str:
                return f"cannot store a value of type {col.type} in column {f.name!r} of type {f.type}: {e}"

            cols.append(fitted(col, f, cast_error, f"MERGE would store null in required column {f.name!r}"))
        out = pa.Table.from_arrays(cols, schema=target)
        return self._with_lineage(out, rows if c.action == "update" else None)

    def _with_lineage(self, new_rows: pa.Table, matched: pa.Table | None) -> pa.Table:
        """On v3 tables, `new_rows` with the lineage columns the writer stores: an updated
        row (from `matched`, the joined rows) keeps its `_row_id`; an inserted row has none;
        both inherit the commit's sequence number (see icefloe.write.lineage)."""
        if not _lineage.tracked(self.table):
            return new_rows
        n = new_rows.num_rows
        row_id = (
            matched.column(f"{self.target_alias}.{_lineage.ROW_ID}")
            if matched is not None
            else pa.nulls(n, pa.int64())
        )
        out = new_rows.append_column(pa.field(_lineage.ROW_ID, pa.int64()), row_id)
        return out.append_column(pa.field(_lineage.LAST_UPDATED, pa.int64()), pa.nulls(n, pa.int64()))

    def _commit_merge_on_read(
        self,
        md: _native.TableMetadata,
        start: int | None,
        new_rows: pa.Table,
        positions: pa.Table | None,
        result: MergeMetrics,
    ) -> None:
        table = self.table
        write = RowDeltaWrite.begin(
            table, "merge", start, self._conflict_json, dict(self.snapshot_properties)
        )
        with write.aborting():
            if positions is not None and positions.num_rows:
                paths = set(positions.column("file_path").unique().to_pylist())
                tasks = [t.to_json() for t in table.scan().plan_files() if t.file.file_path in paths]
                write.referenced_paths = sorted(paths)
                positions = positions.sort_by([("file_path", "ascending"), ("pos", "ascending")])
                write.delete_files, _, replaced = _native.write_position_deletes(
                    md, tasks, positions.to_reader(), write.write_id, MERGE_DRIVER_TASK_BASE
                )
                write.removed_delete_paths = [removal_key(d) for d in replaced]
            if new_rows.num_rows:
                write.data_files = _pending_write.write_local(table, new_rows.to_reader(), write.write_id)
        commit_row_delta(write, result)

    def _commit_copy_on_write(
        self,
        start: int | None,
        target: pa.Table,
        new_rows: pa.Table,
        positions: pa.Table | None,
        result: MergeMetrics,
    ) -> None:
        table = self.table
        write_id = _pending_write.new_write_id()
        touched: list[str] = []
        parts = [new_rows]
        if positions is not None and positions.num_rows:
            touched = sorted(set(positions.column("file_path").unique().to_pylist()))
            # Every row of the touched files (the target read may have been filtered by key).
            whole = table.scan(selected_fields=self._target_fields()).to_arrow()
            whole = whole.filter(pc.is_in(whole.column("_file"), pa.array(touched)))
            key = pc.binary_join_element_wise(
                whole.column("_file"), pc.cast(whole.column("_pos"), pa.string()), "#"
            )
            gone = pc.binary_join_element_wise(
                positions.column("file_path"), pc.cast(positions.column("pos"), pa.string()), "#"
            )
            kept = whole.filter(pc.invert(pc.is_in(key, gone))).select(new_rows.column_names)
            result.rows_copied = kept.num_rows
            parts.append(kept.cast(new_rows.schema))
        data = pa.concat_tables(parts)
        with _pending_write.abort_on_failure(table, write_id):
            descriptors = (
                _pending_write.write_local(table, data.to_reader(), write_id) if data.num_rows else []
            )
        commit_rewrite(
            table,
            start,
            self._conflict_json,
            self.snapshot_properties,
            descriptors,
            touched,
            write_id,
            result,
        )


def commit_row_delta(write: RowDeltaWrite, metrics: MergeMetrics) -> None:
    """A merge-on-read MERGE's commit, in process and on Spark: the row delta `write`
    holds (its files written already), and what it added and removed into `metrics`."""
    snap = write.commit()
    metrics.snapshot_id = None if snap is None else snap.snapshot_id
    metrics.data_files_added = len(write.data_files)
    metrics.delete_files_added = len(write.delete_files)
    metrics.delete_files_removed = len(write.removed_delete_paths)


def commit_rewrite(
    table: Table,
    start: int | None,
    conflict_json: str,
    snapshot_properties: dict[str, str],
    descriptors: list[str],
    touched: list[str],
    write_id: str,
    metrics: MergeMetrics,
) -> None:
    """A copy-on-write MERGE's commit, in process and on Spark: the data files of
    `descriptors` (written already, carrying `write_id`) replace the `touched` files, as an
    overwrite validated from `start` per `write.merge.isolation-level`; what it added and
    removed goes into `metrics`."""
    from icefloe.write.overwrite import RowRemoval, overwrite_builder

    removal = RowRemoval(start, conflict_json, removed_paths=touched)
    build = overwrite_builder(
        removal, descriptors, dict(snapshot_properties), isolation_level(table, "merge")
    )
    snap = _pending_write.commit_write(table, build, descriptors, write_id)
    metrics.snapshot_id = None if snap is None else snap.snapshot_id
    metrics.data_files_added = len(descriptors)
    metrics.data_files_removed = len(touched)


def merge(
    table: Table,
    source: ArrowData,
    on: str,
    source_alias: str = "source",
    target_alias: str = "target",
    snapshot_properties: dict[str, str] | None = None,
) -> TableMerger:
    if not isinstance(on, str) or not on.strip():
        raise ValidationError("MERGE needs an `on` condition, e.g. 'target.id = source.id'")
    data = as_reader(source).read_all()
    return TableMerger(table, data, on, source_alias, target_alias, dict(snapshot_properties or {}))
