"""Exactly-once commits of a streaming query's micro-batches (driver side).

Each commit of a micro-batch records the query's id and the batch's id in its snapshot
summary (`icefloe.streaming.query-id`, `icefloe.streaming.batch-id`), as Iceberg Flink's
files committer records `flink.job-id` + `flink.max-committed-checkpoint-id` and Delta's
idempotent writes record `txnAppId` + `txnVersion`. A batch replayed after a crash (Spark
re-runs every batch its checkpoint has planned but not marked done) is found in the history
of the target branch and is not committed again.

The check runs twice: once before any file is written (a replay then costs nothing), and
again inside the commit's build function on every attempt of the optimistic commit loop
(`icefloe.commit.retry`), so that a commit that lost the swap to someone else re-checks the
refreshed table: if the winner was the same batch (a zombie driver of the same query) the
commit turns into a skip, and the batch's files are deleted; if the winner was any other
writer the batch is committed on top of it.

Used by `icefloe.spark.batch_writer` (foreachBatch) and meant for a Python data source's
`DataSourceStreamWriter.commit(messages, batch_id)` too: `commit_batch` takes the data file
descriptors the executors wrote, `guarded` runs any icefloe write (an upsert) under the
same check.

Limits, as Flink's and Delta's: the history is the branch's ancestry, so expiring the
snapshot of the query's last batch, or rolling the branch back past it, forgets that batch.
Batch ids of one query must grow (Spark's do).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from icefloe import _native
from icefloe.commit.target import GuardedTarget
from icefloe.exceptions import ValidationError
from icefloe.write import pending as _pending_write
from icefloe.write.branch import on_branch

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

__all__ = [
    "BATCH_ID_KEY",
    "QUERY_ID_KEY",
    "BatchAlreadyCommitted",
    "commit_batch",
    "commit_batch_result",
    "guarded",
    "last_committed_batch",
]

QUERY_ID_KEY = "icefloe.streaming.query-id"
BATCH_ID_KEY = "icefloe.streaming.batch-id"

logger = logging.getLogger("icefloe")

T = TypeVar("T")


class BatchAlreadyCommitted(Exception):
    """Raised inside a commit attempt when the batch is already in the branch's history; the
    commit path then deletes the batch's files and `guarded` turns it into a skip."""

    def __init__(self, query_id: str, batch_id: int, last_batch_id: int, snapshot_id: int) -> None:
        super().__init__(
            f"batch {batch_id} of streaming query {query_id!r} is already committed "
            f"(snapshot {snapshot_id} holds batch {last_batch_id})"
        )
        self.query_id = query_id
        self.batch_id = batch_id
        self.last_batch_id = last_batch_id
        self.snapshot_id = snapshot_id


def check_ids(query_id: object, batch_id: object) -> tuple[str, int]:
    """The ids as the summary stores them; ValidationError for an empty query id or a batch
    id that is not a non-negative integer."""
    if not isinstance(query_id, str) or not query_id.strip():
        raise ValidationError(f"a streaming query id must be a non-empty string, found {query_id!r}")
    if isinstance(batch_id, bool) or not isinstance(batch_id, int) or batch_id < 0:
        raise ValidationError(f"a batch id must be a non-negative integer, found {batch_id!r}")
    return query_id, batch_id


def last_committed(metadata: _native.TableMetadata, query_id: str) -> tuple[int, int] | None:
    """(batch id, snapshot id) of the newest snapshot in the ancestry of `metadata`'s current
    snapshot that `query_id` committed, or None. Batch ids of a query only grow along the
    ancestry, so the newest is the highest and the walk stops there."""
    sid = metadata.current_snapshot_id
    seen: set[int] = set()
    while sid is not None and sid not in seen:
        seen.add(sid)
        snap = metadata.snapshot_by_id(sid)
        if snap is None:  # expired: the history ends here
            return None
        summary = snap.get("summary") or {}
        if isinstance(summary, dict) and summary.get(QUERY_ID_KEY) == query_id:
            raw = summary.get(BATCH_ID_KEY)
            try:
                return int(str(raw)), sid
            except ValueError:
                raise ValidationError(
                    f"snapshot {sid} of streaming query {query_id!r} has a malformed "
                    f"{BATCH_ID_KEY}: expected an integer, found {raw!r}"
                ) from None
        parent = snap.get("parent-snapshot-id")
        sid = None if parent is None else int(str(parent))
    return None


def last_committed_batch(table: Table, query_id: str, branch: str | None = None) -> int | None:
    """The highest batch id `query_id` committed to `branch` (default `main`) of the table as
    loaded (refresh it first for the catalog's current version), or None."""
    query_id, _ = check_ids(query_id, 0)
    found = last_committed(on_branch(table, branch).metadata, query_id)
    return None if found is None else found[0]


def batch_properties(
    query_id: str, batch_id: int, snapshot_properties: dict[str, str] | None = None
) -> dict[str, str]:
    """The snapshot summary properties of a batch's commit: the caller's, plus the ids."""
    props = _pending_write.snapshot_props(snapshot_properties)
    clash = sorted(k for k in props if k in (QUERY_ID_KEY, BATCH_ID_KEY))
    if clash:
        raise ValidationError(f"snapshot_properties may not set {clash}: the streaming commit records them")
    props[QUERY_ID_KEY] = query_id
    props[BATCH_ID_KEY] = str(batch_id)
    return props


def guard(query_id: str, batch_id: int) -> Callable[[_native.TableMetadata], None]:
    """The check a commit attempt runs against its base metadata (the branch's view)."""

    def check(base: _native.TableMetadata) -> None:
        found = last_committed(base, query_id)
        if found is not None and batch_id <= found[0]:
            raise BatchAlreadyCommitted(query_id, batch_id, found[0], found[1])

    return check


def guarded(
    table: Table,
    query_id: str,
    batch_id: int,
    write: Callable[[Table, dict[str, str]], T],
    branch: str | None = None,
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[bool, T | None]:
    """Runs `write(view, properties)` as batch `batch_id` of `query_id`: `view` is the table on
    `branch` whose commits re-check the batch on every attempt, `properties` the snapshot
    properties to commit with (the ids included). (True, its result) when committed; (False,
    None) when the batch is already in the branch's history, before anything is written or
    found on a retry (the commit path has then deleted the batch's files)."""
    query_id, batch_id = check_ids(query_id, batch_id)
    props = batch_properties(query_id, batch_id, snapshot_properties)
    target = on_branch(table, branch)
    check = guard(query_id, batch_id)
    try:
        check(target.metadata)
        result = write(target._through(GuardedTarget(target._target, check)), props)
    except BatchAlreadyCommitted as e:
        logger.info("icefloe: %s; skipped", e)
        return False, None
    return True, result


def commit_batch(
    table: Table,
    query_id: str,
    batch_id: int,
    data_files: list[str],
    write_id: str | None = None,
    branch: str | None = None,
    snapshot_properties: dict[str, str] | None = None,
) -> Snapshot | None:
    """Commits the data files (descriptors from `write_data_files`) written for batch
    `batch_id` of `query_id` as one `append` snapshot (a fast append) on `branch`, unless the
    branch's history already holds that batch (or a later one): then nothing is committed,
    the files (and any other file carrying `write_id`) are deleted, and None is returned.
    Otherwise the new snapshot (or, for a batch without files, the current one: nothing is
    committed). Safe against concurrent commits: the check is re-run on every attempt of
    the commit loop. `commit_batch_result` tells a skip from a commit."""
    return commit_batch_result(table, query_id, batch_id, data_files, write_id, branch, snapshot_properties)[
        1
    ]


def commit_batch_result(
    table: Table,
    query_id: str,
    batch_id: int,
    data_files: list[str],
    write_id: str | None = None,
    branch: str | None = None,
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[bool, Snapshot | None]:
    """`commit_batch` as (committed: False when the batch was found already committed, the
    snapshot)."""

    def append(view: Table, props: dict[str, str]) -> Snapshot | None:
        if not data_files:
            if write_id:
                _pending_write.abort_write(view, write_id)  # files of failed task attempts
            return view.current_snapshot()  # no empty snapshots
        # A fast append, as Iceberg Java's streaming sink (one manifest per batch, no
        # manifest rewriting on the commit path; `rewrite_manifests` compacts them).
        return _pending_write.commit_write(
            view, lambda base: _native.fast_append(base, data_files, props), data_files, write_id
        )

    return commit_or_skip(
        table, query_id, batch_id, append, data_files, write_id, branch, snapshot_properties
    )


def commit_or_skip(
    table: Table,
    query_id: str,
    batch_id: int,
    write: Callable[[Table, dict[str, str]], T],
    files: list[str],
    write_id: str | None,
    branch: str | None = None,
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[bool, T | None]:
    """`guarded` for a batch whose files are written already (`files`: their descriptors,
    all carrying `write_id`), which it owns: a failed commit deletes them (those named, and
    every file carrying `write_id`, of task attempts the driver never heard of); not on an
    unknown outcome or an interrupt: the swap may have happened, the files may be live. A
    batch found already committed (a replay) deletes them too. Used by `commit_batch` and
    the data source's streaming upsert."""
    with _pending_write.abort_on_failure(table, write_id, files, committing=True):
        committed, result = guarded(table, query_id, batch_id, write, branch, snapshot_properties)
    if not committed:
        _pending_write.discard(table, write_id, files)
    return committed, result
