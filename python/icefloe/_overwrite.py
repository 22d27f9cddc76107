"""Row-level removal for overwrite-by-filter and copy-on-write delete.

For a bound filter and the table version an operation started from, the live data files
are classified from metadata first (Rust, `plan_row_removal`: partition projections and
column stats, as Iceberg Java's `ManifestFilterManager`): files that cannot match are
untouched and never opened; files every row of which provably matches are removed whole,
unread. Only the rest are read: if no row matches they stay, if every row does they are
removed whole, otherwise they are removed and their remaining rows (those for which the
filter is not true: false or unknown, SQL semantics) rewritten as new data files carrying
the write's id. The reads and rewrites run on the driver, one thread per file (the Rust
reader and writer release the GIL), or, from `icefloe.spark`, in Spark tasks.

Commit builders here re-validate against snapshots committed since the start (serializable
isolation, Iceberg Java's `validateAddedDataFiles(conflictDetectionFilter)` /
`validateNoNewDeleteFiles` / `validateDeletedDataFiles`): only concurrent files the filter
may match (by partition and column stats) conflict.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _lineage, _native
from icefloe.exceptions import ValidationError
from icefloe.expressions import AlwaysFalse, BooleanExpression
from icefloe.scan import FileScanTask

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
    filter_json: str  # the bound filter (names resolved), validated against on retry
    removed_paths: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)  # DataFile descriptors
    files_read: int = 0  # files whose rows had to be read to decide


# How the files that may match are read and rewritten: (the table version, their planned
# task JSONs, the read schema JSON, the bound filter JSON, the write id) -> (paths of the
# files with matching rows: removed; descriptors of the files written with their other
# rows). `rewrite_on_driver` here; `icefloe.spark` runs it in Spark tasks.
PartialRewriter = Callable[[_native.TableMetadata, list[str], str, str, str], "tuple[list[str], list[str]]"]


def plan_row_removal(
    table: Table, bound_filter: BooleanExpression, write_id: str, rewrite: PartialRewriter | None = None
) -> RowRemoval:
    """Classifies the live files of `table`'s loaded version and rewrites partly matching
    ones (see module doc) with `rewrite` (default: on the driver). The caller deletes the
    rewritten files if it does not commit."""
    md = table.metadata
    out = RowRemoval(md.current_snapshot_id, bound_filter.to_json())
    if isinstance(bound_filter, AlwaysFalse) or md.current_snapshot_id is None:
        return out
    whole, partial = _native.plan_row_removal(md, out.filter_json)
    out.removed_paths.extend(whole)
    if not partial:
        return out
    read_json = table.schema().to_json()
    if _lineage.tracked(table):  # copied rows keep their lineage
        read_json = json.dumps(_lineage.with_read_fields(json.loads(read_json)))
    removed, rewritten = (rewrite or rewrite_on_driver)(md, partial, read_json, out.filter_json, write_id)
    out.files_read = len(partial)
    out.removed_paths.extend(removed)
    out.rewritten.extend(rewritten)
    return out


def kept_rows(task_json: str, read_json: str, filter_json: str) -> tuple[str, pa.Table | None] | None:
    """Reads one planned file that may match `filter_json`: None when no row matches, else
    its path and the rows to keep (None when every row matches). The reader's own evaluator
    decides which rows match (the one a filtered read uses), so a rewrite drops exactly the
    rows a scan with the filter returns."""
    data = _native.read_task(task_json, read_json).read_all()
    masks = [_native.filter_mask(filter_json, read_json, b) for b in data.to_batches()]
    mask = pa.chunked_array(masks, pa.bool_()) if masks else pa.chunked_array([], pa.bool_())
    matched = pc.sum(mask).as_py() or 0
    if matched == 0:
        return None
    path = FileScanTask(task_json).file.file_path
    return path, (None if matched == data.num_rows else data.filter(pc.invert(mask)))


def rewrite_on_driver(
    md: _native.TableMetadata, partial: list[str], read_json: str, filter_json: str, write_id: str
) -> tuple[list[str], list[str]]:
    """The `PartialRewriter` of in-process writes: one thread per file (the Rust reader and
    writer release the GIL)."""

    def one(i: int) -> tuple[str, list[str]] | None:
        found = kept_rows(partial[i], read_json, filter_json)
        if found is None:
            return None
        path, rest = found
        if rest is None:
            return path, []
        reader = pa.RecordBatchReader.from_batches(rest.schema, rest.to_batches())
        return path, _native.write_data_files(md, reader, write_id, _REWRITE_TASK_BASE + i)

    removed: list[str] = []
    rewritten: list[str] = []
    with ThreadPoolExecutor(max_workers=max(1, min(_THREADS, len(partial)))) as pool:
        for result in pool.map(one, range(len(partial))):
            if result is not None:
                removed.append(result[0])
                rewritten.extend(result[1])
    return removed, rewritten


def check_added_files_match(md: _native.TableMetadata, filter_json: str, added: list[str]) -> None:
    """Iceberg Java's `validateAddedFilesMatchOverwriteFilter`: every added file must be
    proven (by its partition or column stats) to hold only rows matching the overwrite
    filter; ValidationError naming the first that is not."""
    bad = _native.files_not_matching(md, filter_json, added)
    if bad:
        raise ValidationError(
            f"cannot add file with rows that do not match the overwrite filter {filter_json}: {bad[0]}"
            + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")
        )


def overwrite_builder(removal: RowRemoval, added: list[str], snapshot_properties: dict[str, str]) -> BuildFn:
    """Build function for an overwrite / delete by filter: validate, then overwrite files."""
    files = added + removal.rewritten

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        if base.current_snapshot_id != removal.start_snapshot_id:
            # Only concurrent files that may hold rows matching the filter conflict (their
            # partition and column stats decide); a concurrent removal of a file we remove,
            # or of a data file the filter may match, conflicts too.
            _native.validate_commit(
                base,
                removal.start_snapshot_id,
                conflicting_data=removal.filter_json,
                conflicting_deletes=removal.filter_json,
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
