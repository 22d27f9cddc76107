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
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _native
from icefloe._task_ids import OVERWRITE_REWRITE_DRIVER_TASK_BASE
from icefloe.commit.retry import ProducerBuild
from icefloe.exceptions import ValidationError
from icefloe.expressions import AlwaysFalse, BooleanExpression
from icefloe.scan import FileScanTask
from icefloe.write import lineage as _lineage

if TYPE_CHECKING:
    from icefloe.table import Table

_THREADS = 4


@dataclass
class RowRemoval:
    """What removing a filter's rows from one table version takes."""

    start_snapshot_id: int | None
    filter_json: str  # the bound filter (names resolved), validated against on retry
    removed_paths: list[str] = field(default_factory=list)
    rewritten: list[str] = field(default_factory=list)  # DataFile descriptors
    files_read: int = 0  # files whose rows had to be read to decide


@dataclass(frozen=True)
class RowMatch:
    """How the files a filter may partly match are read (plain strings: Spark tasks get it
    in their closure)."""

    read_json: str  # the schema of the rows kept (lineage fields too when tracked)
    match_json: str  # only the columns the filter reads: the first pass
    filter_json: str  # the bound filter
    name_mapping: str | None  # the table's, for data files without field ids

    @staticmethod
    def of(table: Table, bound_filter: BooleanExpression) -> RowMatch:
        schema = json.loads(table.schema().to_json())
        read = _lineage.with_read_fields(schema) if _lineage.tracked(table) else schema
        names = bound_filter.referenced_columns()
        fields = [
            f for f in schema["fields"] if any(n == f["name"] or n.startswith(f["name"] + ".") for n in names)
        ]
        match = {**schema, "fields": fields, "identifier-field-ids": []} if fields else read
        mapping = table.properties.get("schema.name-mapping.default")
        return RowMatch(json.dumps(read), json.dumps(match), bound_filter.to_json(), mapping)


# How the files that may match are read and rewritten: (the table version, their planned
# task JSONs, how to read them, the write id) -> (paths of the files with matching rows:
# removed; descriptors of the files written with their other rows). `rewrite_on_driver`
# here; `icefloe.spark` runs it in Spark tasks.
PartialRewriter = Callable[[_native.TableMetadata, list[str], RowMatch, str], "tuple[list[str], list[str]]"]


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
    match = RowMatch.of(table, bound_filter)
    removed, rewritten = (rewrite or rewrite_on_driver)(md, partial, match, write_id)
    out.files_read = len(partial)
    out.removed_paths.extend(removed)
    out.rewritten.extend(rewritten)
    return out


def kept_rows(task_json: str, match: RowMatch) -> tuple[str, pa.RecordBatchReader | None] | None:
    """Reads one planned file that may match the filter: None when no row matches, else its
    path and a stream of the rows to keep (None when every row matches). A first pass reads
    only the filter's columns and counts matches; only a file that partly matches is read
    whole, one batch at a time, so no file is ever held in memory. The reader's own
    evaluator decides which rows match (the one a filtered read uses), so a rewrite drops
    exactly the rows a scan with the filter returns."""
    matched = total = 0
    for batch in _native.read_task(task_json, match.match_json, name_mapping=match.name_mapping):
        matched += _matches(batch, match.match_json, match.filter_json)
        total += batch.num_rows
    if matched == 0:
        return None
    path = FileScanTask(task_json).file.file_path
    if matched == total:
        return path, None
    reader = _native.read_task(task_json, match.read_json, name_mapping=match.name_mapping)

    def kept() -> Iterator[pa.RecordBatch]:
        for batch in reader:
            mask = _native.filter_mask(match.filter_json, match.read_json, batch)
            rest = batch.filter(pc.invert(mask))
            if rest.num_rows:
                yield rest

    return path, pa.RecordBatchReader.from_batches(reader.schema, kept())


def _matches(batch: pa.RecordBatch, schema_json: str, filter_json: str) -> int:
    return int(pc.sum(_native.filter_mask(filter_json, schema_json, batch)).as_py() or 0)


def rewrite_on_driver(
    md: _native.TableMetadata, partial: list[str], match: RowMatch, write_id: str
) -> tuple[list[str], list[str]]:
    """The `PartialRewriter` of in-process writes: one thread per file (the Rust reader and
    writer release the GIL)."""

    def one(i: int) -> tuple[str, list[str]] | None:
        found = kept_rows(partial[i], match)
        if found is None:
            return None
        path, rest = found
        if rest is None:
            return path, []
        return path, _native.write_data_files(md, rest, write_id, OVERWRITE_REWRITE_DRIVER_TASK_BASE + i)

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


def overwrite_builder(
    removal: RowRemoval,
    added: list[str],
    snapshot_properties: dict[str, str],
    isolation: str = "serializable",
) -> ProducerBuild:
    """Build function for an overwrite / delete by filter: validate, then overwrite files.
    At `snapshot` isolation (a copy-on-write DELETE / UPDATE / MERGE whose
    `write.<op>.isolation-level` says so) concurrent data files do not conflict, only
    concurrent deletes, as Java's `commitWithSnapshotIsolation`."""
    files = added + removal.rewritten
    serializable = isolation != "snapshot"

    def produce(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        return _native.overwrite_files(base, files, removal.removed_paths, snapshot_properties)

    # Only concurrent files that may hold rows matching the filter conflict (their partition
    # and column stats decide); a concurrent removal of a file we remove, or of a data file the
    # filter may match, conflicts too.
    return ProducerBuild(
        produce,
        removal.start_snapshot_id,
        {
            "conflicting_data": removal.filter_json if serializable else None,
            "conflicting_deletes": removal.filter_json,
            "removed_paths": removal.removed_paths,
        },
    )


def replace_partitions_builder(
    start_snapshot_id: int | None,
    added: list[str],
    partitions: list[str],
    snapshot_properties: dict[str, str],
) -> ProducerBuild:
    """Build function for a dynamic partition overwrite: validate the replaced partitions,
    then replace them."""

    def produce(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        return _native.replace_partitions(base, added, snapshot_properties)

    return ProducerBuild(
        produce, start_snapshot_id, {"conflicting_data": partitions, "conflicting_deletes": partitions}
    )
