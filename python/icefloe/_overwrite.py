"""Row-level removal for overwrite-by-filter and copy-on-write delete (driver side).

For a bound filter and the table version an operation started from, every live data file
is classified: no row matches -> untouched; every row matches -> removed whole; some rows
match -> removed and its remaining rows (those for which the filter is not true: false or
unknown, SQL semantics) rewritten as new data files carrying the write's id. The rewrite
runs on the driver, one thread per file (the Rust reader and writer release the GIL).

Commit builders here re-validate against snapshots committed since the start (serializable
isolation, Iceberg Java's `validateNoConflictingData` / `validateNoConflictingDeletes`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _native
from icefloe.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression

if TYPE_CHECKING:
    from icefloe.table import Table

# Task ids of driver-side rewrites: far above Spark task attempt ids of one write.
_REWRITE_TASK_BASE = 3_000_000_000
_THREADS = 4

BuildFn = Callable[[_native.TableMetadata], "tuple[_native.TableMetadata, list[str]]"]


@dataclass
class RowRemoval:
    """What removing a filter's rows from one table version takes."""

    start_snapshot_id: int | None
    removed_paths: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)  # DataFile descriptors


def plan_row_removal(table: Table, bound_filter: BooleanExpression, write_id: str) -> RowRemoval:
    """Classifies the live files of `table`'s loaded version and rewrites partly matching
    ones (see module doc). The caller deletes the rewritten files if it does not commit."""
    md = table.metadata
    out = RowRemoval(md.current_snapshot_id)
    if isinstance(bound_filter, AlwaysFalse) or md.current_snapshot_id is None:
        return out
    tasks = list(table.scan().plan_files())
    if isinstance(bound_filter, AlwaysTrue):
        out.removed_paths = [t.file.file_path for t in tasks]
        return out
    read_json = table.schema().to_json()
    matches = bound_filter.to_pyarrow()
    keep = pc.invert(pc.coalesce(matches, pc.scalar(False)))

    def one(i: int) -> tuple[str, list[str]] | None:
        task = tasks[i]
        data = _native.read_task(task.to_json(), read_json).read_all()
        matched = data.filter(matches).num_rows
        if matched == 0:
            return None
        if matched == data.num_rows:
            return task.file.file_path, []
        rest = data.filter(keep)
        reader = pa.RecordBatchReader.from_batches(rest.schema, rest.to_batches())
        return task.file.file_path, _native.write_data_files(md, reader, write_id, _REWRITE_TASK_BASE + i)

    with ThreadPoolExecutor(max_workers=max(1, min(_THREADS, len(tasks)))) as pool:
        for result in pool.map(one, range(len(tasks))):
            if result is not None:
                out.removed_paths.append(result[0])
                out.rewritten.extend(result[1])
    return out


def overwrite_builder(removal: RowRemoval, added: list[str], snapshot_properties: dict[str, str]) -> BuildFn:
    """Build function for an overwrite / delete by filter: validate, then overwrite files."""
    files = added + removal.rewritten

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        if base.current_snapshot_id != removal.start_snapshot_id:
            # The filter is not evaluated against file metadata yet: any concurrent new data
            # or delete file is taken as possibly matching it (never a silent lost update).
            _native.validate_commit(
                base,
                removal.start_snapshot_id,
                conflicting_data=True,
                conflicting_deletes=True,
                removed_paths=removal.removed_paths,
            )
        return _native.overwrite_files(base, files, removal.removed_paths, snapshot_properties)

    return build


def replace_partitions_builder(
    start_snapshot_id: int | None,
    added: list[str],
    partitions: list[str],
    snapshot_properties: dict[str, str],
) -> BuildFn:
    """Build function for a dynamic partition overwrite: validate the replaced partitions,
    then replace them."""

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        if base.current_snapshot_id != start_snapshot_id:
            _native.validate_commit(
                base, start_snapshot_id, conflicting_data=partitions, conflicting_deletes=partitions
            )
        return _native.replace_partitions(base, added, snapshot_properties)

    return build
