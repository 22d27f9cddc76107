"""Orphan-file removal: `table.maintenance.remove_orphan_files(...)`.

Lists the table location (or `location`) and deletes the files the table does not
reference, with Iceberg Java's `DeleteOrphanFilesSparkAction` rules (see
`rust/maintenance/orphan_files.rs`): referenced are every snapshot's manifest list,
manifests and live data and delete files, the current and logged metadata files,
`version-hint.text` and statistics files; hidden names (`.` or `_` first, unless a
partition field is named so) are never listed; only files last modified before
`older_than` (default: 3 days ago) count; a file whose path the table references under
another scheme or authority fails the run (`prefix_mismatch_mode="error"`, nothing
deleted), is kept (`"ignore"`) or deleted (`"delete"`), after mapping `equal_schemes` /
`equal_authorities` (`s3a` and `s3n` equal `s3` by default).

With `file_list` (`(location, last modified)` pairs, Java's `compareToFileList` and the
procedure's `file_list_view`) nothing is listed: the given files under the location (a plain
string prefix, as Java filters them) and older than `older_than` are compared with the table's
references, hidden names included; their sizes are not known (`orphan_files_bytes` is 0).

Without a progress bar (no terminal), a local table's orphans are deleted folder by folder
while the listing goes on, where no scheme/authority conflict can arise; with a bar, or on
an object store, all orphans are found first and then deleted.

As Java's procedure does, an `older_than` less than 24 hours ago is refused: a file that
young may belong to a write still in flight. `allow_recent=True` lifts that (Java's action
API has no such check); use it only when nothing writes to the table.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from icefloe import _native, _progress
from icefloe.exceptions import ValidationError
from icefloe.maintenance._times import epoch_ms, now_ms

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["RemoveOrphanFilesResult", "remove_orphan_files"]

logger = logging.getLogger("icefloe")

DAY_MS = 24 * 60 * 60 * 1000
DEFAULT_AGE_MS = 3 * DAY_MS


@dataclass(frozen=True)
class RemoveOrphanFilesResult:
    """The orphan files found (Java's `orphan_file_location` rows), their total size, and
    what deleting them did; with `dry_run` nothing was deleted."""

    orphan_file_locations: tuple[str, ...] = ()
    orphan_files_bytes: int = 0
    dry_run: bool = False
    #: (location, error) of orphans that could not be deleted.
    failed_deletes: tuple[tuple[str, str], ...] = ()

    @property
    def orphan_files_count(self) -> int:
        return len(self.orphan_file_locations)

    @property
    def deleted_files_count(self) -> int:
        return 0 if self.dry_run else len(self.orphan_file_locations) - len(self.failed_deletes)


def _file_list(files: Iterable[tuple[str, datetime | int]]) -> list[tuple[str, int]]:
    """`(location, last modified)` pairs as `(location, epoch ms)`, or a ValidationError
    naming the first bad pair."""
    out = []
    for i, pair in enumerate(files):
        if not (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)):
            raise ValidationError(
                f"file_list: expected (location, last modified) pairs, found {pair!r} at position {i}"
            )
        out.append((pair[0], epoch_ms(pair[1], f"file_list[{i}] last modified")))
    return out


def _string_map(value: Mapping[str, str] | None, name: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValidationError(f"{name} must map strings to strings, found {value!r}")
    return dict(value)


def remove_orphan_files(
    table: Table,
    older_than: datetime | int | None = None,
    location: str | None = None,
    dry_run: bool = False,
    prefix_mismatch_mode: str = "error",
    equal_schemes: Mapping[str, str] | None = None,
    equal_authorities: Mapping[str, str] | None = None,
    allow_recent: bool = False,
    file_list: Iterable[tuple[str, datetime | int]] | None = None,
) -> RemoveOrphanFilesResult:
    """Finds and (unless `dry_run`) deletes the orphan files of `table` (see the module
    docstring)."""
    now = now_ms()
    older_ms = now - DEFAULT_AGE_MS if older_than is None else epoch_ms(older_than, "older_than")
    if not allow_recent and now - older_ms < DAY_MS:
        raise ValidationError(
            f"cannot remove orphan files with older_than less than 24 hours ago ({older_ms}, now {now}): "
            "files that young may belong to writes still in flight, and deleting them would corrupt "
            "the table. Pass allow_recent=True (the command: --allow-recent) only if nothing writes to "
            "the table meanwhile"
        )
    if not isinstance(prefix_mismatch_mode, str):
        raise ValidationError(f"prefix_mismatch_mode must be a string, found {prefix_mismatch_mode!r}")
    schemes = _string_map(equal_schemes, "equal_schemes")
    authorities = _string_map(equal_authorities, "equal_authorities")
    given = None if file_list is None else _file_list(file_list)
    # What the table references now, not when this object was loaded.
    table.refresh()
    if given is None and not dry_run and not _progress.enabled():
        # No bar to draw: delete each folder's orphans while the listing goes on, where no
        # scheme/authority conflict can arise (None otherwise: find first, delete after).
        done = _native.remove_orphan_files_overlapped(
            table.metadata, older_ms, location, prefix_mismatch_mode, schemes, authorities
        )
        if done is not None:
            found, failures = done
            return _result(table, found, failures)
    found = _native.find_orphan_files(
        table.metadata, older_ms, location, prefix_mismatch_mode, schemes, authorities, given
    )
    locations = tuple(loc for loc, _, _ in found)
    size = sum(s for _, s, _ in found)
    if dry_run or not found:
        return RemoveOrphanFilesResult(locations, size, dry_run)
    label = f"remove_orphan_files {_progress.table_label(table)}: deleting orphans"
    failures = _progress.delete_files(list(locations), label, [crc for _, _, crc in found])
    return _result(table, found, failures)


def _result(
    table: Table, found: list[tuple[str, int, bool]], failures: list[tuple[str, str]]
) -> RemoveOrphanFilesResult:
    locations = tuple(loc for loc, _, _ in found)
    size = sum(s for _, s, _ in found)
    if failures:
        logger.warning(
            "icefloe: %d orphan file(s) of %s could not be deleted, e.g. %s",
            len(failures),
            table,
            failures[0],
        )
    logger.info("icefloe: deleted %d orphan file(s) of %s", len(found) - len(failures), table)
    return RemoveOrphanFilesResult(locations, size, False, tuple(sorted(failures)))
