"""Changelog reads: the row changes a range of snapshots made, as Iceberg's changelog scan
(`BaseIncrementalChangelogScan`) and Spark's `create_changelog_view` procedure give them.

Each snapshot after `from_snapshot_id` (exclusive) up to `to_snapshot_id` (inclusive) that is
not a `replace` (compaction changes no rows) gets an ordinal, oldest first. A snapshot's
changes are found by comparing the plan of its parent with its own plan, data file by data
file (by path):

- a data file only in the snapshot's plan: its live rows are INSERTs;
- a data file only in the parent's plan: its rows live at the parent are DELETEs;
- a data file in both whose attached delete files differ (position deletes, deletion
  vectors, equality deletes added or replaced): the rows live at the parent but not at the
  snapshot are DELETEs (and the reverse, rows that came back, INSERTs), matched by position.

Java's changelog scan refuses snapshots with delete files; this reads them, so a row removed
by a delete file added in snapshot S is a DELETE at S's ordinal, with the values it had.

Then, as the procedure does: carry-over rows (a copy-on-write rewrite deletes a file and
re-inserts its unchanged rows) cancel out, DELETE against INSERT of identical rows within
one ordinal; and with `identifier_columns`, a DELETE and an INSERT of the same identifier in
one ordinal become UPDATE_BEFORE / UPDATE_AFTER.

The work is cut into units, one per changed data file per snapshot, that are read in Rust
(`read_task`, deletes applied) either here or on Spark executors (`icefloe.spark`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.scan import METADATA_COLUMNS, manifest_cache
from icefloe.schema import Schema

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

__all__ = ["CHANGE_COLUMNS", "ChangeUnit", "ChangelogPlan", "plan_changelog"]

CHANGE_TYPE = "_change_type"
CHANGE_ORDINAL = "_change_ordinal"
COMMIT_SNAPSHOT_ID = "_commit_snapshot_id"
# Iceberg's MetadataColumns.CHANGE_TYPE / CHANGE_ORDINAL / COMMIT_SNAPSHOT_ID, in its order.
CHANGE_COLUMNS = pa.schema(
    [
        pa.field(CHANGE_TYPE, pa.string()),
        pa.field(CHANGE_ORDINAL, pa.int32()),
        pa.field(COMMIT_SNAPSHOT_ID, pa.int64()),
    ]
)
DELETE, INSERT, UPDATE_BEFORE, UPDATE_AFTER = "DELETE", "INSERT", "UPDATE_BEFORE", "UPDATE_AFTER"

_READ_THREADS = 4
_POS = "_pos"


@dataclass(frozen=True)
class ChangeUnit:
    """One data file's changes in one snapshot: the file's scan task at the parent snapshot
    (`before`, None when the snapshot added the file) and at the snapshot (`after`, None when
    the snapshot removed it), as task JSON."""

    ordinal: int
    snapshot_id: int
    before: str | None
    after: str | None

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @staticmethod
    def from_bytes(data: bytes) -> ChangeUnit:
        return ChangeUnit(**json.loads(bytes(data)))


def _snapshot_ids(table: Table) -> str:
    return "[" + ", ".join(str(s.snapshot_id) for s in table.snapshots()) + "]"


def _require_snapshot(table: Table, snapshot_id: int, role: str) -> Snapshot:
    snap = table.snapshot_by_id(snapshot_id)
    if snap is None:
        raise ValidationError(
            f"changelog {role} snapshot id {snapshot_id} is not in table "
            f"{'.'.join(table.identifier)} (known snapshot ids: {_snapshot_ids(table)})"
        )
    return snap


def changelog_snapshots(
    table: Table, from_snapshot_id: int | None, to_snapshot_id: int | None
) -> list[Snapshot]:
    """The snapshots of the range, oldest first: the ancestors of `to` (inclusive; default the
    current snapshot) after `from` (exclusive; default the start of history), without the
    `replace` snapshots (as Java's changelog scan). `from` must be an ancestor of `to`."""
    if from_snapshot_id is not None:
        _require_snapshot(table, from_snapshot_id, "from")
    if to_snapshot_id is not None:
        to = _require_snapshot(table, to_snapshot_id, "to")
    else:
        current = table.current_snapshot()
        if current is None:
            return []
        to = current
    chain: list[Snapshot] = []
    cursor: Snapshot | None = to
    found = from_snapshot_id is None
    seen: set[int] = set()
    while cursor is not None:
        if cursor.snapshot_id == from_snapshot_id:
            found = True
            break
        if cursor.snapshot_id in seen:
            raise ValidationError(f"the parent chain of snapshot {to.snapshot_id} has a cycle")
        seen.add(cursor.snapshot_id)
        chain.append(cursor)
        parent = cursor.parent_snapshot_id
        cursor = None if parent is None else table.snapshot_by_id(parent)
    if not found:
        raise ValidationError(
            f"changelog from snapshot {from_snapshot_id} (exclusive) is not an ancestor of to snapshot "
            f"{to.snapshot_id} (ancestors of {to.snapshot_id}: "
            f"[{', '.join(str(s.snapshot_id) for s in chain)}])"
        )
    chain.reverse()
    return [s for s in chain if str(s.summary.operation) != "replace"]


@dataclass(frozen=True)
class _PlannedFile:
    task_json: str
    deletes: tuple[tuple[str, int, int], ...]


def _plan_files(table: Table, snapshot_id: int | None) -> dict[str, _PlannedFile]:
    """The live data files of a snapshot (none before the first), with their deletes."""
    if snapshot_id is None:
        return {}
    plan = _native.plan_scan(table.metadata, snapshot_id=snapshot_id, cache=manifest_cache(table))
    out: dict[str, _PlannedFile] = {}
    for j in range(len(plan)):
        view = plan[j]
        out[view.file_path] = _PlannedFile(view.to_json(), tuple(sorted(view.deletes)))
    return out


def _data_fields_json(table: Table) -> dict[str, Any]:
    return dict(json.loads(table.schema().to_json()))


def _validate_identifier_columns(table: Table, identifier_columns: Sequence[str] | None) -> list[str] | None:
    if identifier_columns is None:
        return None
    if isinstance(identifier_columns, str):
        identifier_columns = [identifier_columns]
    names = [f.name for f in table.schema().fields]
    cols = list(identifier_columns)
    if not cols:
        raise ValidationError("changelog identifier_columns is empty: name at least one column, or pass None")
    for c in cols:
        if c not in names:
            raise ValidationError(
                f"changelog identifier column '{c}' is not a column of table "
                f"{'.'.join(table.identifier)} (columns: [{', '.join(names)}])"
            )
    return cols


@dataclass
class ChangelogPlan:
    """What a changelog read reads: the units (one changed data file in one snapshot each),
    the read schema (the table's current schema plus `_pos`) and the output schema."""

    units: list[ChangeUnit]
    schema: Schema
    read_schema_json: str
    name_mapping: str | None
    identifier_columns: list[str] | None

    @property
    def data_names(self) -> list[str]:
        return [f.name for f in self.schema.fields]

    def output_schema(self) -> pa.Schema:
        return pa.schema(list(self.schema.as_arrow()) + list(CHANGE_COLUMNS))


def plan_changelog(
    table: Table,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
    identifier_columns: Sequence[str] | None = None,
) -> ChangelogPlan:
    """Plans a changelog read on the driver: one plan per snapshot of the range (and the
    parent of the first), compared file by file."""
    ids = _validate_identifier_columns(table, identifier_columns)
    snapshots = changelog_snapshots(table, from_snapshot_id, to_snapshot_id)
    plans: dict[int | None, dict[str, _PlannedFile]] = {}

    def plan_of(snapshot_id: int | None) -> dict[str, _PlannedFile]:
        if snapshot_id not in plans:
            plans[snapshot_id] = _plan_files(table, snapshot_id)
        return plans[snapshot_id]

    units: list[ChangeUnit] = []
    for ordinal, snap in enumerate(snapshots):
        before = plan_of(snap.parent_snapshot_id)
        after = plan_of(snap.snapshot_id)
        for path, a in after.items():
            b = before.get(path)
            if b is None:
                units.append(ChangeUnit(ordinal, snap.snapshot_id, None, a.task_json))
            elif b.deletes != a.deletes:
                units.append(ChangeUnit(ordinal, snap.snapshot_id, b.task_json, a.task_json))
        for path, b in before.items():
            if path not in after:
                units.append(ChangeUnit(ordinal, snap.snapshot_id, b.task_json, None))
        # Plans older than the parent of the next snapshot are no longer needed.
        for old in [k for k in plans if k not in (snap.snapshot_id,)]:
            del plans[old]
    schema = table.schema()
    read_schema = Schema(
        *schema.fields,
        METADATA_COLUMNS[_POS],
        schema_id=schema.schema_id,
        identifier_field_ids=schema.identifier_field_ids,
    )
    return ChangelogPlan(
        units=units,
        schema=schema,
        read_schema_json=read_schema.to_json(),
        name_mapping=table.properties.get("schema.name-mapping.default"),
        identifier_columns=ids,
    )


# ---- reading one unit (driver or executor) ----


def _read(native: Any, task_json: str, read_schema_json: str, name_mapping: str | None) -> pa.Table:
    return native.read_task(task_json, read_schema_json, name_mapping=name_mapping).read_all()


def _pos_only_schema_json(read_schema_json: str) -> str:
    obj = json.loads(read_schema_json)
    obj["fields"] = [f for f in obj["fields"] if f["name"] == _POS]
    obj.pop("identifier-field-ids", None)
    return json.dumps(obj)


def _tag(
    rows: pa.Table, data_names: list[str], change_type: str, unit: ChangeUnit
) -> Iterator[pa.RecordBatch]:
    if rows.num_rows == 0:
        return
    n = rows.num_rows
    out = rows.select(data_names)
    out = out.append_column(CHANGE_COLUMNS.field(0), pa.array([change_type] * n, pa.string()))
    out = out.append_column(CHANGE_COLUMNS.field(1), pa.array(np.full(n, unit.ordinal, np.int32)))
    out = out.append_column(CHANGE_COLUMNS.field(2), pa.array(np.full(n, unit.snapshot_id, np.int64)))
    yield from out.combine_chunks().to_batches()


def read_unit(
    native: Any, unit: ChangeUnit, read_schema_json: str, data_names: list[str], name_mapping: str | None
) -> Iterator[pa.RecordBatch]:
    """The changelog rows of one unit (data columns + the change columns), not yet cleared of
    carry-overs. Rows are matched by their position in the data file."""
    if unit.before is None:
        assert unit.after is not None
        yield from _tag(_read(native, unit.after, read_schema_json, name_mapping), data_names, INSERT, unit)
        return
    before = _read(native, unit.before, read_schema_json, name_mapping)
    if unit.after is None:
        yield from _tag(before, data_names, DELETE, unit)
        return
    after_pos = _read(native, unit.after, _pos_only_schema_json(read_schema_json), name_mapping).column(_POS)
    before_pos = before.column(_POS)
    gone = pc.invert(pc.is_in(before_pos, value_set=after_pos.combine_chunks()))
    yield from _tag(before.filter(gone), data_names, DELETE, unit)
    back = pc.invert(pc.is_in(after_pos, value_set=before_pos.combine_chunks()))
    if pc.any(back).as_py():  # rows whose delete went away (rare): read them in full
        after = _read(native, unit.after, read_schema_json, name_mapping)
        returned = pc.invert(pc.is_in(after.column(_POS), value_set=before_pos.combine_chunks()))
        yield from _tag(after.filter(returned), data_names, INSERT, unit)


# ---- carry-overs and updates (Arrow) ----


def _row_keys(table: pa.Table, columns: list[str]) -> pa.Array:
    batch = table.select(columns).combine_chunks()
    batches = batch.to_batches()
    if len(batches) != 1:
        batches = [pa.RecordBatch.from_arrays([c.combine_chunks() for c in batch.columns], names=columns)]
    return _native.row_keys(batches[0], columns)


def _grouped(
    table: pa.Table, key_columns: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows sorted by (key, change type): the sort order, each sorted row's group id (by
    key), whether it is a DELETE, and its rank among the rows of its key and change type."""
    keys = _row_keys(table, key_columns)
    types = table.column(CHANGE_TYPE).combine_chunks()
    both = pa.table({"k": keys, "t": types})
    order = pc.sort_indices(both, sort_keys=[("k", "ascending"), ("t", "ascending")]).to_numpy()
    ks = keys.take(pa.array(order))
    is_delete = pc.equal(types.take(pa.array(order)), DELETE).to_numpy(zero_copy_only=False)
    n = len(order)
    new_key = np.ones(n, dtype=bool)
    if n > 1:
        new_key[1:] = pc.not_equal(ks.slice(1), ks.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    group = np.cumsum(new_key) - 1
    new_run = new_key.copy()
    if n > 1:
        new_run[1:] |= is_delete[1:] != is_delete[:-1]
    idx = np.arange(n)
    rank = idx - np.maximum.accumulate(np.where(new_run, idx, 0))
    return order, group, is_delete, rank


def remove_carryovers(table: pa.Table, data_names: list[str]) -> pa.Table:
    """Within each ordinal, identical DELETE and INSERT rows cancel out in pairs (Spark's
    RemoveCarryoverIterator over rows partitioned by every column but the change type)."""
    if table.num_rows == 0:
        return table
    order, group, is_delete, rank = _grouped(table, [*data_names, CHANGE_ORDINAL])
    deletes = np.bincount(group, weights=is_delete)
    inserts = np.bincount(group, weights=~is_delete)
    keep = np.where(is_delete, rank >= inserts[group], rank >= deletes[group])
    return table.take(pa.array(order[keep]))


def compute_updates(table: pa.Table, identifier_columns: list[str]) -> pa.Table:
    """Within each ordinal, a DELETE and an INSERT of one identifier become UPDATE_BEFORE and
    UPDATE_AFTER (Spark's ComputeUpdateIterator, after carry-over removal); two DELETEs of one
    identifier in one ordinal are an error, as there."""
    if table.num_rows == 0:
        return table
    order, group, is_delete, rank = _grouped(table, [*identifier_columns, CHANGE_ORDINAL])
    deletes = np.bincount(group, weights=is_delete).astype(np.int64)
    inserts = np.bincount(group, weights=~is_delete).astype(np.int64)
    if (deletes > 1).any():
        raise ValidationError(
            "Cannot compute updates because there are multiple rows with the same identifier "
            f"fields([{','.join(identifier_columns)}]). Please make sure the rows are unique."
        )
    paired = (deletes[group] == 1) & (inserts[group] >= 1)
    before = paired & is_delete
    after = paired & ~is_delete & (rank == 0)
    sorted_table = table.take(pa.array(order))
    i = sorted_table.schema.get_field_index(CHANGE_TYPE)
    types = pc.if_else(
        pa.array(before),
        pa.scalar(UPDATE_BEFORE),
        pc.if_else(pa.array(after), pa.scalar(UPDATE_AFTER), sorted_table.column(i).combine_chunks()),
    )
    return sorted_table.set_column(i, CHANGE_COLUMNS.field(0), types)


def finish(table: pa.Table, data_names: list[str], identifier_columns: list[str] | None) -> pa.Table:
    """Carry-overs removed, then updates computed (when identifier columns are given); rows
    ordered by ordinal."""
    out = remove_carryovers(table, data_names)
    if identifier_columns:
        out = compute_updates(out, identifier_columns)
    if out.num_rows:
        out = out.take(pc.sort_indices(out, sort_keys=[(CHANGE_ORDINAL, "ascending")]))
    return out


def changelog_arrow(
    table: Table,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
    identifier_columns: Sequence[str] | None = None,
) -> pa.Table:
    """`Table.changelog`: the changes as one Arrow table, read here (threads)."""
    plan = plan_changelog(table, from_snapshot_id, to_snapshot_id, identifier_columns)
    schema = plan.output_schema()
    names = plan.data_names

    def read(unit: ChangeUnit) -> list[pa.RecordBatch]:
        return list(read_unit(_native, unit, plan.read_schema_json, names, plan.name_mapping))

    batches: list[pa.RecordBatch] = []
    if plan.units:
        with ThreadPoolExecutor(max_workers=min(_READ_THREADS, len(plan.units))) as pool:
            for part in pool.map(read, plan.units):
                batches.extend(part)
    raw = _concat(batches, schema)
    return finish(raw, names, plan.identifier_columns)


def _concat(batches: Iterable[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    parts = [pa.Table.from_batches([b]).cast(schema) for b in batches]
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)
