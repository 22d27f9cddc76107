"""Writes to a branch: `table.append(df, branch="audit")` and every other write with
`branch=`. The operation runs unchanged on a `BranchView` of the table, whose metadata shows
the branch's head as the current snapshot (what the operation reads, validates against and
builds on); its commit adds the new snapshot to the real metadata on that branch only
(`TableMetadata.commit_to_branch`), through the catalog with the real table as the base.
A branch that does not exist yet is created by its first write, as in Java; a tag is an
error."""

from __future__ import annotations

from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.table import Table

MAIN_BRANCH = "main"


def on_branch(table: Table, branch: str | None) -> Table:
    """`table` itself for `main` (or no branch), else a view of it on `branch`."""
    if branch is None or branch == MAIN_BRANCH:
        return table
    if not isinstance(branch, str) or not branch:
        raise ValidationError(f"branch must be a non-empty string, found {branch!r}")
    return BranchView(table, branch)


class BranchView(Table):
    """The table as a write to one branch sees it; its commits land on the branch and
    update the real table object too."""

    def __init__(self, real: Table, branch: str) -> None:  # shares the real table's identity
        self.__dict__.update(real.__dict__)
        self._real = real
        self._branch = branch
        self._metadata = real.metadata.branch_view(branch)

    def _commit_target(self) -> Table:
        return self._real

    def _to_commit(self, produced: _native.TableMetadata) -> _native.TableMetadata:
        # A write with a `wap.id` on a WAP-enabled table is staged, on a branch as on main.
        branch = None if self._stages(produced) else self._branch
        return self._real.metadata.commit_to_branch(produced, branch)

    def _set_metadata(self, metadata: _native.TableMetadata) -> None:
        self._real._set_metadata(metadata)
        self.__dict__.update({k: v for k, v in self._real.__dict__.items() if k != "_metadata"})
        self._metadata = metadata.branch_view(self._branch)

    def refresh(self) -> Table:
        self._real.refresh()
        self._set_metadata(self._real.metadata)
        return self

    def __repr__(self) -> str:
        return f"{self._real!r}@{self._branch}"
