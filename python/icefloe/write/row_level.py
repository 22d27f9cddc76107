"""Row-level changes in process: merge-on-read DELETE, UPDATE (both modes) and upsert.

Which rows a condition matches is decided by one evaluator, the Rust reader's residual
filter (the same code that answers a filtered scan): the operation plans a scan with the
condition and reads the `_file` / `_pos` of the rows it returns, so a delete and a filtered
read agree row for row, and rows an older delete already removed are never deleted twice.

- merge-on-read delete: position-delete files for the matching rows (data files untouched);
  a delete that only removes whole files by metadata commits a plain file removal, as
  Java's Spark `DELETE` does (`deleteWhere`).
- update: matching rows are read, the `set` expressions applied, and the new rows written;
  merge-on-read adds position deletes for the old rows, copy-on-write rewrites their files.
- upsert: on a merge-on-read table (`write.merge.mode`), equality deletes on the join
  columns plus the new rows, without reading the table (Flink's upsert writer), or a
  rewrite of the files holding the keys where equality deletes cannot reach the rows; on a
  copy-on-write table, a MERGE (every row of a key updated, as PyIceberg's upsert).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _native
from icefloe._reserved_fields import FILE_PATH_FIELD_ID, ROW_POS_FIELD_ID
from icefloe._task_ids import ROW_LEVEL_DRIVER_TASK_BASE
from icefloe.exceptions import ValidationError
from icefloe.expressions import AlwaysFalse, And, BooleanExpression, IsNull, Or, as_row_filter
from icefloe.write import lineage as _lineage
from icefloe.write import pending as _pending_write
from icefloe.write.data import as_reader, fitted
from icefloe.write.merge_condition import join_key, matching_keys
from icefloe.write.row_delta import RowDeltaWrite, isolation_level, removal_key, write_mode

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table
    from icefloe.write.data import ArrowData
    from icefloe.write.overwrite import PartialRewriter

logger = logging.getLogger("icefloe")

_THREADS = 4
# Files per delete task: tasks run on threads (the Rust reader and writer release the GIL).
_FILES_PER_TASK = 64


@dataclass(frozen=True)
class UpsertResult:
    """What an upsert did. `rows_updated` / `rows_inserted` are None on a merge-on-read
    table: the equality-delete upsert never reads the table, so it cannot tell them apart."""

    rows_written: int
    rows_updated: int | None
    rows_inserted: int | None


def bind_condition(
    table: Table, condition: BooleanExpression | str, case_sensitive: bool = True
) -> BooleanExpression:
    """A row-level operation's condition bound to the table's schema (None is refused)."""
    if condition is None:
        raise ValidationError("a row-level operation needs a condition (AlwaysTrue() for every row)")
    return as_row_filter(condition).bind(table.schema(), case_sensitive=case_sensitive)


def _tasks_json(table: Table, bound: BooleanExpression, case_sensitive: bool) -> list[str]:
    return [t.to_json() for t in table.scan(row_filter=bound, case_sensitive=case_sensitive).plan_files()]


# Runs delete tasks (planned task JSONs) under a write id: (new delete files, replaced paths).
DeleteRunner = Callable[[_native.TableMetadata, list[str], str], "tuple[list[str], list[str]]"]


def delete(
    table: Table,
    condition: BooleanExpression | str,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
    new_write_id: Callable[[], str] = _pending_write.new_write_id,
    rewrite: PartialRewriter | None = None,
    run_tasks: DeleteRunner | None = None,
) -> Snapshot | None:
    """Deletes the rows matching `condition` as one snapshot, the way `write.delete.mode`
    says: `merge-on-read` writes position-delete files (`delete_merge_on_read`, its tasks
    through `run_tasks`); `copy-on-write` commits an overwrite by the bound condition
    (files every row of which matches are removed, partly matched ones rewritten through
    `rewrite`, default on the driver; the new files carry a write id from `new_write_id`),
    validated per `write.delete.isolation-level`. `Table.delete` and `icefloe.spark`'s
    delete both come here. A None condition is refused by the overwrite (copy-on-write) or
    the binding (merge-on-read)."""
    if write_mode(table, "delete") == "merge-on-read":
        return delete_merge_on_read(table, condition, snapshot_properties, case_sensitive, run_tasks)
    bound = None if condition is None else bind_condition(table, condition, case_sensitive)
    write_id = new_write_id()
    start = table.metadata.current_snapshot_id
    return _pending_write.commit_overwrite(
        table,
        [],
        bound,
        write_id,
        start,
        snapshot_properties,
        require_filter=True,
        rewrite=rewrite,
        isolation=isolation_level(table, "delete"),
    )


def delete_merge_on_read(
    table: Table,
    condition: BooleanExpression | str,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
    run_tasks: DeleteRunner | None = None,
) -> Snapshot | None:
    """Deletes the rows matching `condition` by writing position-delete files; the delete
    tasks run on driver threads, or through `run_tasks` (icefloe.spark: on executors)."""
    bound = bind_condition(table, condition, case_sensitive)
    md = table.metadata
    write = RowDeltaWrite.begin(
        table, "delete", md.current_snapshot_id, bound.to_json(), dict(snapshot_properties or {})
    )
    if isinstance(bound, AlwaysFalse) or md.current_snapshot_id is None:
        return table.current_snapshot()
    with write.aborting():
        whole, partial = _native.plan_row_removal(md, bound.to_json())
        if whole and not partial:
            # Every file the filter may match is proven, by its partition or its column stats,
            # to hold only matching rows: remove the files, as Java's metadata-only delete does
            # (SparkTable.canDeleteUsingMetadata), rather than delete every row by position.
            write.removed_paths = list(whole)
        elif planned := list(table.scan(row_filter=bound, case_sensitive=case_sensitive).plan_files()):
            tasks = [t.to_json() for t in planned]
            write.referenced_paths = [t.file_path for t in planned]
            runner = run_tasks or _delete_tasks
            write.delete_files, write.removed_delete_paths = runner(md, tasks, write.write_id)
    return write.commit()


def chunk_tasks(tasks: list[str], slots: int) -> list[list[str]]:
    """Planned delete tasks in chunks, one per thread or Spark task: at least `slots` chunks
    (when there are enough partitions), at most about _FILES_PER_TASK files each; the files
    of one partition stay in one chunk, so `write.delete.granularity=partition` makes one
    delete file per partition."""
    groups: dict[str, list[str]] = {}
    for t in tasks:
        f = json.loads(t)["file"]
        groups.setdefault(json.dumps([f.get("spec_id"), f.get("partition")]), []).append(t)
    n = max(1, min(len(groups), max(slots, -(-len(tasks) // _FILES_PER_TASK))))
    chunks: list[list[str]] = [[] for _ in range(n)]
    for group in sorted(groups.values(), key=len, reverse=True):
        min(chunks, key=len).extend(group)
    return [c for c in chunks if c]


def _delete_tasks(md: _native.TableMetadata, tasks: list[str], write_id: str) -> tuple[list[str], list[str]]:
    """Runs the delete tasks on threads: (new delete files, paths of replaced delete files)."""
    if not tasks:
        return [], []
    chunks = chunk_tasks(tasks, _THREADS)
    out: list[str] = []
    replaced: list[str] = []
    with ThreadPoolExecutor(max_workers=min(_THREADS, len(chunks))) as pool:
        futures = [
            pool.submit(_native.delete_rows, md, chunk, write_id, ROW_LEVEL_DRIVER_TASK_BASE + i)
            for i, chunk in enumerate(chunks)
        ]
        for f in futures:
            files, _rows, old = f.result()
            out.extend(files)
            replaced.extend(removal_key(d) for d in old)
    return out, sorted(set(replaced))


# ---- update ----
def _read_schema_json(table: Table) -> str:
    schema = json.loads(table.schema().to_json())
    schema["fields"] = [
        *schema["fields"],
        {"id": FILE_PATH_FIELD_ID, "name": "_file", "required": True, "type": "string"},
        {"id": ROW_POS_FIELD_ID, "name": "_pos", "required": True, "type": "long"},
    ]
    return json.dumps(schema)


def _resolve_keys(target: pa.Schema, assignments: Mapping[str, Any]) -> dict[tuple[str, ...], Any]:
    """The assignments by path (top-level column first): a key that is a column's name is that
    column; otherwise a dotted path of struct fields (`"s.a"`, "s.`x.y`"), as Spark's UPDATE
    resolves `SET s.a = ...`. ValidationError (naming the key) for a path that is no field, a
    field inside a list or map, one field assigned twice, or a field assigned together with
    a struct holding it (as Java refuses them)."""
    from icefloe._identifiers import display, multipart

    names = set(target.names)
    out: dict[tuple[str, ...], Any] = {}
    for key, value in assignments.items():
        key = str(key)
        if key in names:
            path: tuple[str, ...] = (key,)
        else:
            parts = multipart(key)
            if parts is None or len(parts) < 2 or parts[0] not in names:
                raise ValidationError(
                    f"cannot update column {key!r}: the table has no such column ({sorted(names)})"
                )
            t: pa.DataType = target.field(parts[0]).type
            for depth, part in enumerate(parts[1:], start=1):
                if not pa.types.is_struct(t):
                    raise ValidationError(
                        f"cannot update {key!r}: {display(parts[:depth])!r} is {t}, not a struct (a field "
                        "inside a list or map element cannot be assigned, as in Spark's UPDATE; assign "
                        "the whole column)"
                    )
                inner = [t.field(i).name for i in range(t.num_fields)]
                if part not in inner:
                    raise ValidationError(
                        f"cannot update {key!r}: the struct {display(parts[:depth])!r} has no field "
                        f"named {part!r} ({inner})"
                    )
                t = t.field(inner.index(part)).type
            path = tuple(parts)
        if path in out:
            raise ValidationError(f"cannot update {display(path)!r} twice in one update")
        out[path] = value
    for path in out:
        for other in out:
            if other != path and other[: len(path)] == path:
                raise ValidationError(
                    f"cannot update {display(path)!r} together with {display(other)!r}, a field inside it"
                )
    return out


def _rebuilt(
    old: pa.Array, field: pa.Field, path: tuple[str, ...], values: dict[tuple[str, ...], pa.Array]
) -> pa.Array:
    """`old` (the struct column or field at `path`) with its assigned fields (at any depth) set
    from `values` and its other fields kept; a NULL struct becomes a struct of NULLs holding
    the assigned fields, as Java's UPDATE stores it."""
    t = field.type
    children = []
    for i in range(t.num_fields):
        child_field = t.field(i)
        child_path = (*path, child_field.name)
        if child_path in values:
            child = _fitted(values[child_path], child_field, child_path)
        else:
            kept = pc.struct_field(old, [i])  # NULL where the struct is NULL
            if any(p[: len(child_path)] == child_path for p in values):
                child = _rebuilt(kept, child_field, child_path, values)
            else:
                child = kept
        children.append(child)
    return pa.StructArray.from_arrays(children, fields=[t.field(i) for i in range(t.num_fields)])


def _fitted(value: pa.Array, field: pa.Field, path: tuple[str, ...]) -> pa.Array:
    """`value` stored in the column or field at `path` (`data.fitted`)."""
    from icefloe._identifiers import display

    name = display(path)
    return fitted(
        value,
        field,
        lambda e: f"cannot set column {name!r} of type {field.type} to a value of type {value.type}: {e}",
        f"cannot set required column {name!r} to null",
    )


def _apply_set(table: Table, rows: pa.Table, assignments: Mapping[str, Any]) -> pa.Table:
    """`rows` (the table's columns) with the assignments applied: each value a literal or a
    pyarrow compute expression over the row's columns (every value reads the row as it was),
    each key a column or a field of a struct (`_resolve_keys`). Errors name the column."""
    target = table.schema().as_arrow()
    by_path = _resolve_keys(target, assignments)
    if not by_path or rows.num_rows == 0:
        return rows.select(target.names)
    import pyarrow.dataset as ds

    base = rows.select(target.names)
    columns: dict[str, Any] = {f.name: pc.field(f.name) for f in target}
    slots: dict[tuple[str, ...], str] = {}
    for i, (path, value) in enumerate(by_path.items()):
        slots[path] = f"__icefloe_value_{i}"
        columns[slots[path]] = value if isinstance(value, pc.Expression) else pc.scalar(value)
    try:
        evaluated = ds.dataset(base).to_table(columns=columns)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        raise ValidationError(f"cannot evaluate the update's set expressions: {e}") from e
    values = {path: evaluated.column(slot).combine_chunks() for path, slot in slots.items()}
    out = []
    for f in target:
        if (f.name,) in values:
            col = _fitted(values[(f.name,)], f, (f.name,))
        elif any(p[0] == f.name for p in values):
            col = _rebuilt(evaluated.column(f.name).combine_chunks(), f, (f.name,), values)
        else:
            col = evaluated.column(f.name)
        out.append(col)
    return pa.Table.from_arrays(out, schema=target)


def update(
    table: Table,
    condition: BooleanExpression | str,
    assignments: Mapping[str, Any],
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
) -> Snapshot | None:
    """Sets columns of the rows matching `condition` (see `Table.update`)."""
    if not isinstance(assignments, Mapping) or not assignments:
        raise ValidationError("update needs a non-empty mapping of column name to new value")
    bound = bind_condition(table, condition, case_sensitive)
    md = table.metadata
    if isinstance(bound, AlwaysFalse) or md.current_snapshot_id is None:
        return table.current_snapshot()
    mode = write_mode(table, "update")
    # Checked before anything is read or written.
    _apply_set(table, table.schema().as_arrow().empty_table(), assignments)
    tasks = _tasks_json(table, bound, case_sensitive)
    read_json = _read_schema_json(table)
    if _lineage.tracked(table):
        read_json = json.dumps(_lineage.with_read_fields(json.loads(read_json)))
    mapping = table.properties.get("schema.name-mapping.default")

    def read(task: str) -> pa.Table:
        return _native.read_task(task, read_json, name_mapping=mapping).read_all()

    with ThreadPoolExecutor(max_workers=max(1, min(_THREADS, len(tasks)))) as pool:
        parts = list(pool.map(read, tasks))
    matched = pa.concat_tables(parts) if parts else None
    if matched is None or matched.num_rows == 0:
        return table.current_snapshot()
    new_rows = _apply_set(table, matched, assignments)
    if _lineage.tracked(table):
        new_rows = _lineage.updated(new_rows, matched)
    write_id = _pending_write.new_write_id()
    if mode == "copy-on-write":
        with _pending_write.abort_on_failure(table, write_id):
            data = _pending_write.write_local(table, new_rows.to_reader(), write_id)
        return _pending_write.commit_overwrite(
            table,
            data,
            bound,
            write_id,
            md.current_snapshot_id,
            snapshot_properties,
            require_filter=True,
            isolation=isolation_level(table, "update"),
        )
    write = RowDeltaWrite.begin(
        table,
        "update",
        md.current_snapshot_id,
        bound.to_json(),
        dict(snapshot_properties or {}),
        write_id=write_id,
    )
    with write.aborting():
        write.data_files = _pending_write.write_local(table, new_rows.to_reader(), write_id)
        positions = matched.select(["_file", "_pos"]).rename_columns(["file_path", "pos"])
        write.referenced_paths = [json.loads(t)["file"]["file_path"] for t in tasks]
        write.delete_files, _, replaced = _native.write_position_deletes(
            md, tasks, positions.to_reader(), write_id, ROW_LEVEL_DRIVER_TASK_BASE
        )
        write.removed_delete_paths = [removal_key(d) for d in replaced]
    return write.commit()


# ---- upsert ----
# Values of a string delete column that mark a deletion (upper-cased): Flink's and Debezium's
# row kinds.
DELETE_MARKS = ("D", "DELETE", "-D", "U-")


def join_columns(table: Table, join_cols: list[str] | None) -> list[str]:
    """An upsert's join columns: `join_cols` checked against the table, or its identifier
    fields when None."""
    schema = table.schema()
    if join_cols is None:
        ids = list(schema.identifier_field_ids or [])
        if not ids:
            raise ValidationError(
                "upsert needs join columns: pass join_cols=[...] or set the table's identifier fields"
            )
        names = [schema.find_column_name(i) for i in ids]
        return [n for n in names if n is not None]
    if isinstance(join_cols, str) or not join_cols:
        raise ValidationError(
            f"expected join_cols to be a non-empty list of column names, found {join_cols!r}"
        )
    for c in join_cols:
        try:
            schema.find_field(c)
        except Exception as e:
            raise ValidationError(f"upsert join column {c!r} is not a column of the table") from e
    return list(join_cols)


def last_per_key(data: pa.Table, keys: list[str]) -> pa.Table:
    """One row per key, the last one given (documented: the last duplicate wins). Float keys
    group as Spark compares them: -0.0 with 0.0, NaN with NaN (see `_merge_condition.join_key`)."""
    idx = "__icefloe_row__"
    numbered = pa.table(
        {
            **{f"k{i}": join_key(data.column(k)) for i, k in enumerate(keys)},
            idx: pa.array(range(data.num_rows), pa.int64()),
        }
    )
    groups = [f"k{i}" for i in range(len(keys))]
    last = numbered.group_by(groups, use_threads=False).aggregate([(idx, "max")])
    keep = pc.sort_indices(last.column(f"{idx}_max"))
    rows = pc.take(last.column(f"{idx}_max"), keep)
    return data.take(rows)


def _merge_matches_keys(keys: pa.Table, names: list[str]) -> bool:
    """Whether a MERGE on `names` matches exactly the rows this upsert replaces: plain
    top-level key columns without nulls (a MERGE's `=` never matches a null key, which the
    upsert replaces like any other; those upserts rewrite the files instead)."""
    return all(re.fullmatch(r"\w+", n) for n in names) and all(keys.column(n).null_count == 0 for n in names)


def _key_filter(keys: pa.Table, names: list[str]) -> BooleanExpression:
    """A row filter matching exactly the rows with these keys (null keys match null; float
    keys as Spark's MERGE compares them: NaN matches NaN, -0.0 matches 0.0)."""
    if len(names) == 1:
        col = keys.column(0)
        values = [v for v in pc.unique(col).to_pylist() if v is not None]
        expr = matching_keys(names[0], values)
        if col.null_count:
            expr = IsNull(names[0]) if isinstance(expr, AlwaysFalse) else Or(expr, IsNull(names[0]))
        return expr
    parts: list[BooleanExpression] = []
    for row in keys.to_pylist():
        conj: BooleanExpression | None = None
        for n in names:
            p: BooleanExpression = IsNull(n) if row[n] is None else matching_keys(n, [row[n]])
            conj = p if conj is None else And(conj, p)
        assert conj is not None
        parts.append(conj)
    out: BooleanExpression = AlwaysFalse()
    for p in parts:
        out = p if isinstance(out, AlwaysFalse) else Or(out, p)
    return out


def _matched_counts(table: Table, condition: BooleanExpression, names: list[str]) -> tuple[int, int]:
    """How many rows of the table `condition` (`_key_filter` of the upsert's keys) selects,
    and how many distinct keys they hold: the upsert's rows that update rather than insert
    (one key may match several rows, e.g. -0.0 and 0.0, or keys appended twice)."""
    if table.metadata.current_snapshot_id is None:
        return 0, 0
    found = table.scan(row_filter=condition, selected_fields=tuple(names)).to_arrow()
    if found.num_rows == 0:
        return 0, 0
    keys = pa.table({f"k{i}": join_key(found.column(n)) for i, n in enumerate(names)})
    distinct = keys.group_by(keys.column_names, use_threads=False).aggregate([]).num_rows
    return found.num_rows, distinct


def equality_delete_plan(
    table: Table, names: list[str]
) -> tuple[list[int], pa.Schema | None, list[int] | None]:
    """How a merge-on-read upsert writes its equality deletes on `names`: the field ids, the
    key rows' schema and the specs the keys go under (the default spec and each spec with
    live files, see `_native.equality_delete_specs`). The schema and specs are None when some
    of those specs (the current one included) is partitioned by a column outside the keys:
    an equality delete reaches only rows of its own partition, so no equality delete can
    name those rows by key (Flink refuses such an upsert; icefloe's rewrites those files in
    process and runs a MERGE on Spark, see `log_merge_instead`). Keys equality deletes
    cannot hold (floating-point, nested) raise
    ValidationError."""
    schema = table.schema()
    ids = [schema.find_field(n).field_id for n in names]
    md = table.metadata
    specs = _native.equality_delete_specs(md, md.current_snapshot_id, ids)
    if specs is None:
        return ids, None, None
    return ids, _native.equality_delete_schema(md, ids), specs


def log_merge_instead(table: Table, names: list[str], how: str) -> None:
    """The log line of a merge-on-read upsert that cannot write equality deletes."""
    logger.warning(
        "icefloe: %s is (or has live files) partitioned by a column outside the upsert keys %s; "
        "an equality delete only reaches rows of its own partition, so this upsert %s. "
        "Upserting by keys that include the partition source columns writes equality deletes",
        table,
        names,
        how,
    )


def upsert(
    table: Table,
    df: ArrowData,
    join_cols: list[str] | None = None,
    snapshot_properties: dict[str, str] | None = None,
) -> UpsertResult:
    """Replaces the rows whose join-column values appear in `df` by `df`'s rows and inserts
    the others, as one snapshot (see `Table.upsert`)."""
    reader = as_reader(df)
    _native.check_arrow_schema(table.metadata, reader.schema)
    # An upsert replaces whole rows: a source without an optional column would store nulls
    # over the matched rows' values. PyIceberg's upsert fails on such a source as soon as
    # one of its rows matches (it casts the source to the table's schema), so refuse it in
    # every mode, before anything is read, rather than null the column out.
    absent = [f.name for f in table.schema().fields if f.name not in reader.schema.names]
    if absent:
        raise ValidationError(
            f"the upsert's rows lack column(s) {absent} of the table; an upsert replaces whole "
            "rows, so give every column (null where there is no value)"
        )
    data = reader.read_all()
    names = join_columns(table, join_cols)
    missing = [n for n in names if n not in data.column_names]
    if missing:
        raise ValidationError(f"the upsert's rows lack join column(s) {missing}")
    if data.num_rows == 0:
        return UpsertResult(0, 0, 0)
    data = last_per_key(data, names)
    md = table.metadata
    specs = key_schema = None
    merge_on_read = write_mode(table, "merge") != "copy-on-write"
    if merge_on_read:
        ids, key_schema, specs = equality_delete_plan(table, names)
    if specs is None or key_schema is None:
        keys = data.select(names)
        # Copy-on-write is PyIceberg's upsert: a MERGE gives every target row of a key the
        # source row's values (a key held k times stays k rows, where an overwrite would leave
        # one), and on v3 the rows keep their `_row_id` (row lineage, as Java's MERGE). A
        # merge-on-read table equality deletes cannot reach is upserted with Flink's meaning
        # kept (one row per key): its files holding the keys are rewritten.
        by_merge = (table.format_version >= 3 or not merge_on_read) and _merge_matches_keys(keys, names)
        if merge_on_read:
            how = "runs as a MERGE" if by_merge else "rewrites the files holding its keys (copy-on-write)"
            log_merge_instead(table, names, how)
        if by_merge:
            from icefloe.write import merge as _merge

            on = " and ".join(f"target.{n} = source.{n}" for n in names)
            merger = _merge.merge(table, data, on, snapshot_properties=snapshot_properties)
            m = merger.when_matched_update_all().when_not_matched_insert_all().execute()
            return UpsertResult(data.num_rows, m.rows_updated, m.rows_inserted)
        condition = _key_filter(keys, names)
        matched, found = _matched_counts(table, condition, names)
        table.overwrite(data, overwrite_filter=condition, snapshot_properties=snapshot_properties)
        return UpsertResult(data.num_rows, matched, data.num_rows - found)
    keys = data.select(key_schema.names)
    write = RowDeltaWrite(
        table,
        _pending_write.new_write_id(),
        md.current_snapshot_id,
        snapshot_properties=dict(snapshot_properties or {}),
    )
    with write.aborting():
        write.delete_files = _native.write_equality_deletes(
            md, ids, keys.to_reader(), write.write_id, ROW_LEVEL_DRIVER_TASK_BASE, spec_ids=specs
        )
        write.data_files = _pending_write.write_local(table, data.to_reader(), write.write_id)
    write.commit()
    return UpsertResult(data.num_rows, None, None)
