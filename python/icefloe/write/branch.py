"""Writes to a branch: `table.append(df, branch="audit")` and every other write with
`branch=`. The operation runs unchanged on the table seen through a `BranchTarget`
(`icefloe.commit.target`): its metadata shows the branch's head as the current snapshot (what
the operation reads, validates against and builds on); its commit adds the new snapshot to
the real metadata on that branch only (`TableMetadata.commit_to_branch`), through the catalog
with the real table as the base. A branch that does not exist yet is created by its first
write, as in Java; a tag is an error."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icefloe.commit.target import BranchTarget
from icefloe.exceptions import ValidationError

if TYPE_CHECKING:
    from icefloe.table import Table

MAIN_BRANCH = "main"


def on_branch(table: Table, branch: str | None) -> Table:
    """`table` itself for `main` (or no branch), else the table as a write to `branch` sees
    it; its commits land on the branch and move `table` too."""
    if branch is None or branch == MAIN_BRANCH:
        return table
    if not isinstance(branch, str) or not branch:
        raise ValidationError(f"branch must be a non-empty string, found {branch!r}")
    target = BranchTarget(branch)
    target.view(table._commit_base().metadata)  # a tag fails here, before anything is written
    return table._through(target)
