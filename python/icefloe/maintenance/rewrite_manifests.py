"""`rewrite_manifests` (Iceberg Java's `RewriteManifestsSparkAction` / `CALL
system.rewrite_manifests`): the current snapshot's data and delete manifests of one
partition spec (default: the table's current spec) are replaced by manifests clustered by
partition and sized to `commit.manifest.target-size-bytes`, as one `replace` snapshot that
changes no data. Every entry keeps its snapshot id and sequence numbers (it becomes
EXISTING). Nothing is committed when the spec's manifests are a single one that fits the
target.

The work is in Rust (`rust/maintenance/rewrite_manifests.rs` clusters,
`rust/commit/rewrite_manifests.rs` commits). If another commit wins the race, the rewrite is
planned again on the new snapshot (so a file it removed is never carried back) and the
manifests written for the lost attempt are deleted.

Differences from Java, on purpose: the range boundaries between the new manifests are exact
(Spark samples them); an unpartitioned spec's entries keep manifest order (Spark spreads
them round-robin); `entries-processed` in the summary is the number of entries rewritten
(Java's Spark action leaves it 0).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.write import pending as _pending_write

if TYPE_CHECKING:
    from icefloe.table import Table


@dataclass(frozen=True)
class RewriteManifestsResult:
    """What a `rewrite_manifests` did (Java's `RewriteManifests.Result`, with counts and bytes)."""

    rewritten_manifests_count: int = 0
    added_manifests_count: int = 0
    rewritten_manifests_bytes: int = 0
    added_manifests_bytes: int = 0
    entries_processed_count: int = 0
    rewritten_manifests: tuple[str, ...] = field(default_factory=tuple)
    added_manifests: tuple[str, ...] = field(default_factory=tuple)
    snapshot_id: int | None = None


class _NothingToRewrite(Exception):
    """Raised inside the build function when the base has nothing to rewrite."""


def rewrite_manifests(
    table: Table,
    spec_id: int | None = None,
    snapshot_properties: dict[str, str] | None = None,
    sort_by: Sequence[str] | None = None,
) -> RewriteManifestsResult:
    """Rewrites the manifests of `spec_id` (default: the current spec); see the module doc.
    `sort_by`: partition field names of that spec to cluster the entries by, in order
    (Iceberg 1.12's `sort_by`), instead of the whole partition tuple."""
    if spec_id is not None and spec_id not in table.specs():
        raise ValidationError(f"invalid spec id {spec_id}: the table has specs {sorted(table.specs())}")
    props = _pending_write.snapshot_props(snapshot_properties)
    outcome: dict[str, Any] = {}

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        got = _native.rewrite_manifests(
            base,
            spec_id=spec_id,
            snapshot_properties=props,
            sort_by=None if sort_by is None else [str(n) for n in sort_by],
        )
        if got is None:
            raise _NothingToRewrite()
        md, written, text = got
        outcome.clear()
        outcome.update(json.loads(text))
        return md, written

    try:
        committed = table._commit(build)
    except _NothingToRewrite:
        return RewriteManifestsResult()
    replaced, added = outcome["replaced"], outcome["added"]
    return RewriteManifestsResult(
        rewritten_manifests_count=len(replaced),
        added_manifests_count=len(added),
        rewritten_manifests_bytes=sum(int(m["length"]) for m in replaced),
        added_manifests_bytes=sum(int(m["length"]) for m in added),
        entries_processed_count=int(outcome["entries_processed"]),
        rewritten_manifests=tuple(str(m["path"]) for m in replaced),
        added_manifests=tuple(str(m["path"]) for m in added),
        snapshot_id=committed.current_snapshot_id,
    )
