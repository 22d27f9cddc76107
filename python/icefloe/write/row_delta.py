"""The pending row-level write: files written under one write id, then committed as one row
delta (Iceberg Java's `RowDelta`) with its validations, or aborted leaving nothing behind.

Used by merge-on-read DELETE / UPDATE and upserts, in process and on Spark. The validations
follow Java's `SparkPositionDeltaWrite` / `BaseRowDelta` when the table moved since the
operation read it:

- `validateDataFilesExist`: a concurrent commit that removed a data file our position
  deletes reference (a compaction, a copy-on-write delete) is a conflict — never a dangling
  delete;
- `validateNoConflictingDeleteFiles`: concurrent delete files that may apply to the rows the
  condition selects are a conflict (two deletes of the same rows: the second fails);
- `validateNoConflictingDataFiles` at `serializable` isolation (the default of
  `write.delete.isolation-level` / `write.update.isolation-level` /
  `write.merge.isolation-level`): concurrent data files that may hold matching rows are a
  conflict; at `snapshot` isolation they are not.

A conflict raises CommitConflictError and deletes every file of the write; the caller may
run the operation again from the new table state.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icefloe import _native
from icefloe.commit.retry import ProducerBuild
from icefloe.exceptions import ValidationError
from icefloe.write import pending as _pending_write

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

_ISOLATION_LEVELS = ("serializable", "snapshot")


def isolation_level(table: Table, operation: str) -> str:
    """`write.<operation>.isolation-level` (serializable by default)."""
    key = f"write.{operation}.isolation-level"
    level = table.properties.get(key, "serializable").strip().lower()
    if level not in _ISOLATION_LEVELS:
        raise ValidationError(
            f"expected table property {key} to be serializable or snapshot, found {level!r}"
        )
    return level


def write_mode(table: Table, operation: str) -> str:
    """`write.<operation>.mode`: `copy-on-write` (the default, as Java's) or `merge-on-read`."""
    key = f"write.{operation}.mode"
    mode = table.properties.get(key, "copy-on-write").strip().lower()
    if mode not in ("copy-on-write", "merge-on-read"):
        raise ValidationError(
            f"expected table property {key} to be copy-on-write or merge-on-read, found {mode!r}"
        )
    return mode


@dataclass
class RowDeltaWrite:
    """Files of one row-level operation, committed together or not at all."""

    table: Table
    write_id: str
    start_snapshot_id: int | None
    data_files: list[str] = field(default_factory=list)
    delete_files: list[str] = field(default_factory=list)
    removed_paths: list[str] = field(default_factory=list)
    # Delete files replaced by this write's (their positions merged in).
    removed_delete_paths: list[str] = field(default_factory=list)
    # Data files whose rows the operation read and position-deleted (validateDataFilesExist).
    referenced_paths: list[str] = field(default_factory=list)
    # Unbound filter JSON of the rows the operation touches (conflict detection), or None
    # for an operation that conflicts with nothing concurrent (an equality-delete upsert).
    conflict_filter_json: str | None = None
    isolation: str = "serializable"
    snapshot_properties: dict[str, str] = field(default_factory=dict)

    @classmethod
    def begin(
        cls,
        table: Table,
        operation: str,
        start_snapshot_id: int | None,
        conflict_filter_json: str | None,
        snapshot_properties: dict[str, str] | None = None,
        write_id: str | None = None,
    ) -> RowDeltaWrite:
        """A write of `operation` (`delete`, `update`, `merge`: its isolation level comes from
        `write.<operation>.isolation-level`) that read the table at `start_snapshot_id`;
        concurrent files that may match `conflict_filter_json` conflict (None: nothing)."""
        from icefloe.write import pending as _pending_write

        return cls(
            table,
            write_id or _pending_write.new_write_id(),
            start_snapshot_id,
            conflict_filter_json=conflict_filter_json,
            isolation=isolation_level(table, operation),
            snapshot_properties=dict(snapshot_properties or {}),
        )

    def is_empty(self) -> bool:
        return not (self.data_files or self.delete_files or self.removed_paths)

    def written(self) -> list[str]:
        """The descriptors of the files written so far (data and delete files)."""
        return self.data_files + self.delete_files

    def abort(self) -> None:
        """Deletes every file this write produced (also those of failed tasks)."""
        _pending_write.discard(self.table, self.write_id, self.written())

    def aborting(self) -> AbstractContextManager[None]:
        """The scope in which this write's files are written: when it raises, `abort` (with
        the files written by then) and re-raise (`_pending_write.abort_on_failure`)."""
        return _pending_write.abort_on_failure(self.table, self.write_id, self.written)

    def commit(self) -> Snapshot | None:
        """Commits one row delta (retrying on a lost race per `commit.retry.*`, validating
        against what was committed since the start); on failure nothing is left behind.
        An empty write commits nothing and returns the current snapshot."""
        if self.is_empty():
            self.abort()
            return self.table.current_snapshot()

        def produce(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
            return _native.row_delta(
                base,
                self.data_files,
                self.delete_files,
                self.removed_paths,
                self.snapshot_properties,
                removed_delete_paths=self.removed_delete_paths,
            )

        f = self.conflict_filter_json
        build = ProducerBuild(
            produce,
            self.start_snapshot_id,
            {
                "conflicting_data": f if (f is not None and self.isolation == "serializable") else None,
                "conflicting_deletes": f,
                "removed_paths": self.removed_paths,
                "required_paths": self.referenced_paths,
            },
        )
        return _pending_write.commit_write(self.table, build, self.written(), self.write_id)


def removal_key(descriptor: str) -> str:
    """What names a delete file the commit removes (`DataFile::removal_key` in Rust): its
    path, or for a deletion vector, one of the blobs a Puffin file may hold, path NUL offset."""
    d = json.loads(descriptor)
    if str(d.get("file_format", "")).upper() == "PUFFIN" and d.get("content_offset") is not None:
        return f"{d['file_path']}\x00{int(d['content_offset'])}"
    return str(d["file_path"])
