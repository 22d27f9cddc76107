"""Snapshot expiry: `table.maintenance.expire_snapshots(...)`.

Which snapshots and refs go follows Iceberg Java's `ExpireSnapshots` (see
`rust/maintenance/expire_snapshots.rs`): `older_than` (default: now minus
`history.expire.max-snapshot-age-ms`, 5 days), `retain_last` (default
`history.expire.min-snapshots-to-keep`, 1) per branch, each ref's own
`min-snapshots-to-keep` / `max-snapshot-age-ms` / `max-ref-age-ms` (default
`history.expire.max-ref-age-ms`), and `snapshot_ids` expired in any case.

The change is committed through the commit loop (`icefloe.commit.retry.commit_with_retry`):
on a conflict the selection is made again on the refreshed table. Only after the commit
succeeded are files deleted, and only those an expired snapshot reached that no snapshot
of the committed version, nor of the table as reloaded after the commit, reaches: data and
delete files, manifests, manifest lists, statistics files. A file that fails to delete is
reported in `failed_deletes` (it is an orphan then; `remove_orphan_files` finds it).

`clean_expired_metadata=True` (Java's option of the same name) also drops, in the same
commit, the partition specs no retained snapshot's manifests use and the schemas no retained
snapshot names (never the default spec or the current schema); it cleans them even when no
snapshot expires, as Java's does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from icefloe import _native, _progress
from icefloe.commit.retry import commit_with_retry
from icefloe.exceptions import ValidationError
from icefloe.maintenance._times import epoch_ms, now_ms

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["ExpireSnapshotsResult", "expire_snapshots"]

logger = logging.getLogger("icefloe")

# The kinds the native planner reports, in the order files are deleted.
KINDS = ("data", "position_deletes", "equality_deletes", "manifest", "manifest_list", "statistics")


@dataclass(frozen=True)
class ExpireSnapshotsResult:
    """What an expiry removed. The counts are those of Java's `expire_snapshots` procedure;
    `*_bytes` are the sizes the metadata records for the deleted files (manifest lists:
    their size as read)."""

    expired_snapshot_ids: tuple[int, ...] = ()
    removed_refs: tuple[str, ...] = ()
    deleted_data_files_count: int = 0
    deleted_position_delete_files_count: int = 0
    deleted_equality_delete_files_count: int = 0
    deleted_manifests_count: int = 0
    deleted_manifest_lists_count: int = 0
    deleted_statistics_files_count: int = 0
    deleted_data_files_bytes: int = 0
    deleted_position_delete_files_bytes: int = 0
    deleted_equality_delete_files_bytes: int = 0
    deleted_manifests_bytes: int = 0
    deleted_manifest_lists_bytes: int = 0
    deleted_statistics_files_bytes: int = 0
    #: Every file deleted (content files first).
    deleted_files: tuple[str, ...] = ()
    #: (location, error) of files that could not be deleted.
    failed_deletes: tuple[tuple[str, str], ...] = ()

    @property
    def deleted_files_count(self) -> int:
        return len(self.deleted_files)

    @property
    def deleted_bytes(self) -> int:
        return (
            self.deleted_data_files_bytes
            + self.deleted_position_delete_files_bytes
            + self.deleted_equality_delete_files_bytes
            + self.deleted_manifests_bytes
            + self.deleted_manifest_lists_bytes
            + self.deleted_statistics_files_bytes
        )


class _NothingToExpire(Exception):
    """Raised inside the commit loop's build step when a refreshed table has nothing left to
    expire (another expiry got there first): nothing is committed."""


def _snapshot_ids(snapshot_ids: Iterable[int] | None) -> list[int] | None:
    if snapshot_ids is None:
        return None
    if isinstance(snapshot_ids, (str, bytes)):
        raise ValidationError(f"snapshot_ids must be integers, found {snapshot_ids!r}")
    out = list(snapshot_ids)
    for s in out:
        if isinstance(s, bool) or not isinstance(s, int):
            raise ValidationError(f"snapshot_ids must be integers, found {s!r}")
    return out


def expire_snapshots(
    table: Table,
    older_than: datetime | int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Iterable[int] | None = None,
    clean_expired_files: bool = True,
    clean_expired_metadata: bool = False,
) -> ExpireSnapshotsResult:
    """Expires snapshots of `table` (see the module docstring) and returns what was removed.
    Nothing is committed when nothing expires (and, with `clean_expired_metadata`, every
    spec and schema is still used)."""
    older_ms = None if older_than is None else epoch_ms(older_than, "older_than")
    if retain_last is not None and (isinstance(retain_last, bool) or not isinstance(retain_last, int)):
        raise ValidationError(f"retain_last must be an integer >= 1, found {retain_last!r}")
    ids = _snapshot_ids(snapshot_ids)
    now = now_ms()
    attempt: dict[str, Any] = {}

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        new, expired, refs = _native.expire_snapshots_apply(base, now, older_ms, retain_last, ids)
        if clean_expired_metadata:
            # On the expired version in place, or as a new version of the base.
            cleaned = _native.clean_expired_metadata(
                base if new is None else new, now if new is None else None
            )
            new = cleaned if cleaned is not None else new
        if new is None:
            raise _NothingToExpire
        attempt.update(base=base, expired=expired, refs=refs)
        return new, []

    table.refresh()  # select against the current version, as Java's expiry does
    try:
        committed = commit_with_retry(table, build)
    except _NothingToExpire:
        return ExpireSnapshotsResult()
    expired, refs = list(attempt["expired"]), list(attempt["refs"])
    logger.info("icefloe: expired %d snapshot(s) and ref(s) %s of %s", len(expired), refs, table)
    result = ExpireSnapshotsResult(expired_snapshot_ids=tuple(expired), removed_refs=tuple(refs))
    if not clean_expired_files or not expired:
        return result
    return _delete_expired_files(table, attempt["base"], expired, committed, result)


def _delete_expired_files(
    table: Table,
    base: _native.TableMetadata,
    expired: list[int],
    committed: _native.TableMetadata,
    result: ExpireSnapshotsResult,
) -> ExpireSnapshotsResult:
    retained = [committed]
    try:
        # Whatever was committed since ours keeps its files too.
        retained.append(table._catalog.load_table(table.identifier).metadata)
    except Exception as e:  # the committed version alone is enough to be safe
        logger.debug("icefloe: could not reload %s after expiry: %s", table, e)
    try:
        files = _native.expired_snapshot_files(base, expired, retained)
    except Exception as e:
        raise type(e)(
            f"snapshots {expired[:10]}{'...' if len(expired) > 10 else ''} of {table} were expired "
            f"(committed as {committed.metadata_location}) but the files they freed could not be "
            f"determined, so none was deleted (remove_orphan_files can clean them up later): {e}"
        ) from e
    paths = [path for _, path, _ in files]
    failures = dict(
        _progress.delete_files(paths, f"expire_snapshots {_progress.table_label(table)}: deleting files")
    )
    if failures:
        logger.warning(
            "icefloe: %d file(s) freed by expiring snapshots of %s could not be deleted, e.g. %s",
            len(failures),
            table,
            next(iter(failures.items())),
        )
    counts = dict.fromkeys(KINDS, 0)
    sizes = dict.fromkeys(KINDS, 0)
    deleted = []
    for kind, path, size in files:
        if path in failures:
            continue
        counts[kind] += 1
        sizes[kind] += size
        deleted.append(path)
    return ExpireSnapshotsResult(
        expired_snapshot_ids=result.expired_snapshot_ids,
        removed_refs=result.removed_refs,
        deleted_data_files_count=counts["data"],
        deleted_position_delete_files_count=counts["position_deletes"],
        deleted_equality_delete_files_count=counts["equality_deletes"],
        deleted_manifests_count=counts["manifest"],
        deleted_manifest_lists_count=counts["manifest_list"],
        deleted_statistics_files_count=counts["statistics"],
        deleted_data_files_bytes=sizes["data"],
        deleted_position_delete_files_bytes=sizes["position_deletes"],
        deleted_equality_delete_files_bytes=sizes["equality_deletes"],
        deleted_manifests_bytes=sizes["manifest"],
        deleted_manifest_lists_bytes=sizes["manifest_list"],
        deleted_statistics_files_bytes=sizes["statistics"],
        deleted_files=tuple(deleted),
        failed_deletes=tuple(sorted(failures.items())),
    )
