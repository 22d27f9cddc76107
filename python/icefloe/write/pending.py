"""The commit path of every write: files written under one write id, then one commit (with
retries and validation, `icefloe.commit.retry`) or an abort that leaves nothing behind.

In-process writes, `icefloe.spark` and the row-level operations all go through these
functions; `Table` keeps thin private delegations for older callers.

- `write_local`: data files written on this process (aborted on failure).
- `commit_write(build)`: commits the metadata a producer builds; on failure deletes the
  write's files (all files carrying the write id, including those of Spark task attempts the
  driver never heard of); after success deletes the write's files the commit does not name.
- `commit_append` / `commit_overwrite`: the append and overwrite-by-filter / dynamic
  partition overwrite commits.
- `abort_write`: deletes every file under the table's data location whose name carries the
  write id; `discard` deletes a write's named files first, then those.
- `abort_on_failure`: the scope of one write (writing its files, or committing them): when
  its body raises, the write is discarded and the error propagates. Every write path aborts
  through it.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _io, _native
from icefloe.commit.retry import BuildFn, ProducerBuild
from icefloe.exceptions import CommitStateUnknownException, ValidationError
from icefloe.expressions import BooleanExpression

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table
    from icefloe.write.overwrite import PartialRewriter

logger = logging.getLogger("icefloe")


def new_write_id() -> str:
    """An id that names every file of one write (`<task>-<write_id>-<n>.parquet`)."""
    return uuid.uuid4().hex


@contextmanager
def abort_on_failure(
    table: Table,
    write_id: str | None,
    files: Iterable[str] | Callable[[], Iterable[str]] = (),
    *,
    committing: bool = False,
) -> Iterator[None]:
    """The scope of one write: when the body raises, the write is discarded (`discard`: the
    files of the descriptors `files` names, a callable read when the body failed, then every
    file carrying `write_id`) and the error propagates.

    While files are written (the default) every error aborts, interrupts (KeyboardInterrupt,
    SystemExit) too: nothing written is live yet. Around a commit (`committing=True`) only an
    `Exception` aborts, and not a CommitStateUnknownException: when the outcome is unknown,
    or an interrupt lands while the catalog swaps the metadata, the swap may have happened
    and the files may be live, so they stay."""
    try:
        yield
    except BaseException as e:
        failed = isinstance(e, Exception) and not isinstance(e, CommitStateUnknownException)
        if failed or not committing:
            discard(table, write_id, files() if callable(files) else files)
        raise


def discard(table: Table, write_id: str | None, descriptors: Iterable[str] = ()) -> None:
    """Deletes a write that will not be committed: the files its DataFile `descriptors` name,
    then every file carrying `write_id` (those of Spark task attempts the driver never heard
    of too; see `abort_write`)."""
    paths = descriptor_paths(list(descriptors))
    if paths:
        _native.delete_files(paths)
    if write_id:
        abort_write(table, write_id)


def write_local(
    table: Table, reader: pa.RecordBatchReader, write_id: str, options: Mapping[str, Any] | None = None
) -> list[str]:
    """Writes data files of `table` from `reader` on this process; their descriptors. On
    failure every file of the write is deleted."""
    with abort_on_failure(table, write_id):
        return list(_native.write_data_files(table.metadata, reader, write_id, 0, **(options or {})))


def commit_append(
    table: Table,
    descriptors: list[str],
    snapshot_properties: dict[str, str] | None = None,
    write_id: str | None = None,
) -> Snapshot | None:
    """Commits an `append` snapshot adding these DataFile descriptors (JSON, from
    `write_data_files`), merging manifests per the table's settings. On failure the data
    files are deleted too (unless the commit state is unknown); after success, files carrying
    `write_id` that are not in the commit (failed or speculative Spark task attempts) are
    deleted. With no descriptors nothing is committed (no empty snapshots) and the current
    snapshot is returned."""
    if not descriptors:
        if write_id:
            abort_write(table, write_id)
        return table.current_snapshot()
    props = snapshot_props(snapshot_properties)
    # An append conflicts with nothing: no validation.
    build = ProducerBuild(lambda base: _native.merge_append(base, descriptors, props))
    return commit_write(table, build, descriptors, write_id)


def commit_overwrite(
    table: Table,
    descriptors: list[str],
    overwrite_filter: BooleanExpression | str | None,
    write_id: str,
    start_snapshot_id: int | None,
    snapshot_properties: dict[str, str] | None = None,
    require_filter: bool = False,
    validate_added_files_match_filter: bool = False,
    rewrite: PartialRewriter | None = None,
    isolation: str = "serializable",
) -> Snapshot | None:
    """Commits `descriptors` (already written, carrying `write_id`) replacing the rows of
    `overwrite_filter`, or the partitions they fall in when there is no filter.
    `start_snapshot_id` is the version the operation started from (validation); `rewrite`
    reads and rewrites the files the filter partly matches (default: on the driver);
    `isolation`: a copy-on-write row-level operation's `write.<op>.isolation-level`."""
    from icefloe.expressions import as_row_filter
    from icefloe.write import overwrite as _overwrite

    props = snapshot_props(snapshot_properties)
    with abort_on_failure(table, write_id):
        if overwrite_filter is None and not require_filter:
            if not descriptors:
                abort_write(table, write_id)
                return table.current_snapshot()
            partitions = _native.partitions_of(table.metadata, descriptors)
            build = _overwrite.replace_partitions_builder(start_snapshot_id, descriptors, partitions, props)
            written = descriptors
        else:
            if overwrite_filter is None:
                raise ValidationError("delete needs a filter (use AlwaysTrue() to delete every row)")
            bound = as_row_filter(overwrite_filter).bind(table.schema())
            if validate_added_files_match_filter and descriptors:
                _overwrite.check_added_files_match(table.metadata, bound.to_json(), descriptors)
            removal = _overwrite.plan_row_removal(table, bound, write_id, rewrite)
            written = descriptors + removal.rewritten
            if not written and not removal.removed_paths:
                abort_write(table, write_id)
                return table.current_snapshot()
            build = _overwrite.overwrite_builder(removal, descriptors, props, isolation)
    return commit_write(table, build, written, write_id)


def commit_write(
    table: Table, build: BuildFn, descriptors: list[str], write_id: str | None
) -> Snapshot | None:
    """Commits; on failure deletes the write's files (all carrying `write_id`, or the
    descriptors' files); after success deletes the write's files not committed."""
    # Not on an unknown outcome or an interrupt: the swap may have happened (see transaction).
    with abort_on_failure(table, write_id, descriptors, committing=True):
        table._commit(build)
    if write_id:
        abort_write(table, write_id, keep=set(descriptor_paths(descriptors)))
    # The head the write moved: the table's (a branch view's is its branch's, which exists
    # even where `main` does not yet), not the committed metadata's `main`.
    # None when the write was staged on a table (or branch) without a head yet: the commit
    # succeeded, so this must not raise (a caller's retry would write the rows twice).
    sid = table.metadata.current_snapshot_id
    return None if sid is None else table.snapshot_by_id(sid)


def data_location(table: Table) -> str:
    """The folder under which the table's new data and delete files go (decided in Rust, by
    the same location provider as the writers: `write.data.path`, the object-storage layout)."""
    return table.metadata.data_location


def abort_write(table: Table, write_id: str, keep: set[str] | None = None) -> list[str]:
    """Deletes every file under the table's data location whose name contains `write_id`
    (catches files of failed Spark tasks the driver never heard of), except the paths in
    `keep` (the committed ones, after a successful commit). Best effort; returns the paths
    deleted."""
    if not write_id or len(write_id) < 8:
        raise ValidationError(f"refusing to abort a write with id {write_id!r} (too short to be unique)")
    location = data_location(table)
    found = [p for p, _size in _io.list_files(location) if write_id in p.rsplit("/", 1)[-1]]
    if keep:
        kept = {_io.parse(p)[1:] for p in keep}
        found = [p for p in found if _io.parse(p)[1:] not in kept]
    _io.delete(found)
    return found


def snapshot_props(snapshot_properties: dict[str, str] | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in (snapshot_properties or {}).items()}


def descriptor_paths(descriptors: list[str]) -> list[str]:
    paths = []
    for d in descriptors:
        try:
            paths.append(str(json.loads(d)["file_path"]))
        except (ValueError, KeyError, TypeError):
            logger.warning("icefloe: malformed DataFile descriptor %.200s", d)
    return paths
