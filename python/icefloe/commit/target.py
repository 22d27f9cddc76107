"""Commit targets: what a table object's operations see, and where their commits land.

Every `Table` holds one. The operations (append, overwrite, row-level changes, merges,
maintenance) are written once, against `table.metadata`; the target decides what that
metadata is and what the catalog swaps in for what they produce:

- `CommitTarget` (every table's own): the table's current version; a new snapshot lands on
  `main`, except a write-audit-publish write, which is staged (below).
- `BranchTarget`: a write to a branch (`table.append(df, branch="audit")`). The operation
  sees the branch's head as the current snapshot (what it reads, validates against and builds
  on); its snapshot goes onto that branch of the real metadata only
  (`TableMetadata.commit_to_branch`). A branch that does not exist yet is made by its first
  write, as in Java.
- `GuardedTarget`: another target whose every commit attempt first runs a check against the
  attempt's base (a streaming batch refusing to land twice, `icefloe.write.streaming_commit`).
- A staged create (`icefloe.create_transaction`) records the write ids and registered files of
  its writes through the `started_write` / `registering` hooks.
- A table transaction's writes (`icefloe.table_transaction`) see the transaction's staged
  metadata, and their commits are recorded in it (`commit`), to be committed as one version.

The table object and all its views share one `TableVersion`, so a commit through a view moves
the table too. The catalog swaps against a `CommitBase`: the table's identifier and its real
(not viewed) metadata and metadata location.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icefloe import _io, _native
from icefloe._table_properties import wap_enabled
from icefloe.commit.retry import BuildFn, commit_with_retry

if TYPE_CHECKING:
    from icefloe.table import Table


@dataclass(frozen=True)
class CommitBase:
    """What a catalog swaps against: the table's real metadata and where it was read from."""

    identifier: tuple[str, ...]
    metadata: _native.TableMetadata
    metadata_location: str


class TableVersion:
    """The version a table object stands on (shared by the table and its views): its
    metadata, the metadata file it came from, and its storage settings."""

    __slots__ = ("io_config", "io_properties", "location", "metadata")

    def __init__(
        self, metadata: _native.TableMetadata, location: str, io_properties: Mapping[str, str]
    ) -> None:
        self.metadata = metadata
        self.location = location
        self.io_properties = dict(io_properties)
        self.io_config = _io.IoConfig()
        self.register_io()

    def move_to(self, metadata: _native.TableMetadata, location: str) -> None:
        self.metadata = metadata
        self.location = location
        self.register_io()

    def register_io(self) -> None:
        """Registers the table's storage settings for its paths (see `_io.IoConfig.for_table`)."""
        self.io_config = _io.IoConfig.for_table(self.metadata, self.io_properties)
        self.io_config.apply()


def stages(base: _native.TableMetadata, produced: _native.TableMetadata) -> bool:
    """Whether the snapshot an operation produced is staged (write-audit-publish): a
    `wap.id` in its summary on a table with `write.wap.enabled=true`."""
    if not wap_enabled(base.properties):
        return False
    sid = produced.current_snapshot_id
    if sid is None or base.snapshot_by_id(sid) is not None:
        return False
    snapshot: dict[str, Any] = produced.snapshot_by_id(sid) or {}
    return "wap.id" in (snapshot.get("summary") or {})


class CommitTarget:
    """`main`: the table as it is; commits replace it. On a table with
    `write.wap.enabled=true`, a new snapshot whose summary has a `wap.id`
    (`snapshot_properties={"wap.id": ...}`, Spark's `spark.wap.id`) is staged: added without
    moving `main`, for `manage_snapshots().cherrypick_snapshot` to publish."""

    def view(self, metadata: _native.TableMetadata) -> _native.TableMetadata:
        """The metadata the table's operations see, for the table's real `metadata`."""
        return metadata

    def to_commit(
        self, base: _native.TableMetadata, produced: _native.TableMetadata
    ) -> _native.TableMetadata:
        """The metadata to swap in over the real `base` for what an operation produced."""
        if not stages(base, produced):
            return produced
        return base.commit_to_branch(produced, None)

    def check(self, seen: _native.TableMetadata) -> None:
        """Runs before every commit attempt, on the metadata the attempt builds on."""

    def commit(self, table: Table, build: BuildFn) -> _native.TableMetadata:
        """Commits what `build` makes of `table` (the table seen through this target): through
        the catalog, retrying on conflict. A transaction's staged writes record it instead."""
        return commit_with_retry(table, build)

    def started_write(self, write_id: str) -> None:
        """A write of the table took `write_id` for its files."""

    def registering(self, file_paths: Iterable[str]) -> None:
        """`add_files` is about to register these files (the caller's, never to delete)."""

    def label(self) -> str:
        """What `repr` adds to the table's name."""
        return ""


MAIN = CommitTarget()


class BranchTarget(CommitTarget):
    """A write to `branch` (see the module doc)."""

    def __init__(self, branch: str) -> None:
        self.branch = branch
        self._seen: tuple[_native.TableMetadata, _native.TableMetadata] | None = None

    def view(self, metadata: _native.TableMetadata) -> _native.TableMetadata:
        if self._seen is None or self._seen[0] is not metadata:
            self._seen = (metadata, metadata.branch_view(self.branch))
        return self._seen[1]

    def to_commit(
        self, base: _native.TableMetadata, produced: _native.TableMetadata
    ) -> _native.TableMetadata:
        # A write with a `wap.id` on a WAP-enabled table is staged, on a branch as on main.
        return base.commit_to_branch(produced, None if stages(base, produced) else self.branch)

    def label(self) -> str:
        return f"@{self.branch}"


class GuardedTarget(CommitTarget):
    """`inner`, with `check` run against the base of every commit attempt."""

    def __init__(self, inner: CommitTarget, check: Callable[[_native.TableMetadata], None]) -> None:
        self.inner = inner
        self._check = check

    def view(self, metadata: _native.TableMetadata) -> _native.TableMetadata:
        return self.inner.view(metadata)

    def to_commit(
        self, base: _native.TableMetadata, produced: _native.TableMetadata
    ) -> _native.TableMetadata:
        return self.inner.to_commit(base, produced)

    def check(self, seen: _native.TableMetadata) -> None:
        self.inner.check(seen)
        self._check(seen)

    def started_write(self, write_id: str) -> None:
        self.inner.started_write(write_id)

    def registering(self, file_paths: Iterable[str]) -> None:
        self.inner.registering(file_paths)

    def label(self) -> str:
        return self.inner.label()
