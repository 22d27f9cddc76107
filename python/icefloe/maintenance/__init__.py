"""Table maintenance, reached as `table.maintenance`:

    result = table.maintenance.expire_snapshots(older_than=datetime(2026, 1, 1, tzinfo=timezone.utc))
    orphans = table.maintenance.remove_orphan_files(dry_run=True)

Each method returns a result with counts and bytes. Times (`older_than`) are a `datetime`
with a time zone, or epoch milliseconds. The work is in `expire_snapshots.py` and
`orphan_files.py` (and the Rust room `rust/maintenance/`); this class only delegates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from icefloe.maintenance.expire_snapshots import ExpireSnapshotsResult
from icefloe.maintenance.orphan_files import RemoveOrphanFilesResult

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["ExpireSnapshotsResult", "Maintenance", "RemoveOrphanFilesResult"]


class Maintenance:
    """The maintenance operations of one table (`table.maintenance`)."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def expire_snapshots(
        self,
        older_than: datetime | int | None = None,
        retain_last: int | None = None,
        snapshot_ids: Iterable[int] | None = None,
        clean_expired_files: bool = True,
    ) -> ExpireSnapshotsResult:
        """Removes old snapshots and refs (Iceberg Java's `ExpireSnapshots`, with the
        `history.expire.*` table properties and each ref's retention), then deletes the
        files only they reached. See `icefloe.maintenance.expire_snapshots`."""
        from icefloe.maintenance import expire_snapshots

        return expire_snapshots.expire_snapshots(
            self._table, older_than, retain_last, snapshot_ids, clean_expired_files
        )

    def remove_orphan_files(
        self,
        older_than: datetime | int | None = None,
        location: str | None = None,
        dry_run: bool = False,
        prefix_mismatch_mode: str = "error",
        equal_schemes: Mapping[str, str] | None = None,
        equal_authorities: Mapping[str, str] | None = None,
        allow_recent: bool = False,
    ) -> RemoveOrphanFilesResult:
        """Deletes files under the table location (or `location`) that the table does not
        reference, last modified before `older_than` (default: 3 days ago), with Iceberg
        Java's rules. See `icefloe.maintenance.orphan_files`."""
        from icefloe.maintenance import orphan_files

        return orphan_files.remove_orphan_files(
            self._table,
            older_than,
            location,
            dry_run,
            prefix_mismatch_mode,
            equal_schemes,
            equal_authorities,
            allow_recent,
        )

    def __repr__(self) -> str:
        return f"Maintenance({self._table!r})"
