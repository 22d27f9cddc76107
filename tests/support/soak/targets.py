"""The snapshots the soak's rollback and cherry-pick steps act on (see `support.soak`), chosen
alike on the three tables. Snapshot ids differ from table to table, and so can the number of
snapshots (Java commits an empty `overwrite` for an UPDATE or DELETE that matches no row,
where icefloe commits nothing), so a target is named by history step: main (or the branch) as
it was after step j, in each table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from support.soak.history import BRANCH

MAIN = "main"
# Steps whose snapshot a "newest" cherry-pick may take: ones both engines commit with the same
# operation (not an upsert or a MERGE, whose operation is a writer's choice when only rows are
# inserted, nor the race, whose two commits land in either order).
CHERRYPICK_SOURCES = ("append", "append_java", "dynamic_overwrite", "delete", "update")


@dataclass
class StepHeads:
    """The heads of main and of the branch in each table after every step run so far."""

    names: tuple[str, ...]
    main: list[dict[str, int | None]] = field(default_factory=list)
    branch: list[dict[str, int | None]] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)

    def record(self, catalog: Any, kind: str) -> None:
        refs = {name: catalog.load_table(name).refs() for name in self.names}
        self.main.append({n: r[MAIN].snapshot_id if MAIN in r else None for n, r in refs.items()})
        self.branch.append({n: r[BRANCH].snapshot_id if BRANCH in r else None for n, r in refs.items()})
        self.kinds.append(kind)

    def rollback_targets(self, catalog: Any, depth: int) -> dict[str, int]:
        """Main as it was `depth` steps ago, or the state nearest to that (before it, else
        after it) which is still an older ancestor of main in every table; main's head itself
        (a rollback to the current snapshot, which changes nothing) when there is none; no
        target ({}) while a table has no snapshot on main."""
        lineages = {n: _ancestors(catalog.load_table(n)) for n in self.names}
        if not all(lineages.values()):
            return {}
        cut = max(len(self.main) - depth, 0)
        for heads in list(reversed(self.main[:cut])) + self.main[cut:]:
            if all(heads[n] is not None and heads[n] in lineages[n][1:] for n in self.names):
                return {n: int(heads[n]) for n in self.names}  # type: ignore[arg-type]
        return {n: lineages[n][0] for n in self.names}

    def cherrypick_targets(self, catalog: Any, pick: str) -> dict[str, int]:
        """For `pick` == BRANCH, the branch's head after its newest append; else main's head
        after the newest step that committed in every table; in both cases the newest one that
        every table still has and none has on main's lineage. Main's head when there is none:
        both engines must refuse it (an ancestor of main); no target ({}) when there is none
        and a table has no snapshot on main."""
        tables = {n: catalog.load_table(n) for n in self.names}
        lineages = {n: _ancestors(t) for n, t in tables.items()}
        if pick == BRANCH:
            states = [h for h, k in zip(self.branch, self.kinds) if k == "branch_append"]
        else:
            states = [
                h
                for i, (h, k) in enumerate(zip(self.main, self.kinds))
                if i > 0 and k in CHERRYPICK_SOURCES and _moved(self.main[i - 1], h)
            ]
        for heads in reversed(states):
            if all(
                heads[n] is not None
                and tables[n].snapshot_by_id(heads[n]) is not None
                and heads[n] not in lineages[n]
                for n in self.names
            ):
                return {n: int(heads[n]) for n in self.names}  # type: ignore[arg-type]
        if not all(lineages.values()):
            return {}
        return {n: lineages[n][0] for n in self.names}


def _moved(before: dict[str, int | None], after: dict[str, int | None]) -> bool:
    return all(after[n] is not None and after[n] != before[n] for n in after)


def _ancestors(table: Any) -> list[int]:
    """Main's lineage in `table`, its head first, down to the oldest ancestor it still has."""
    out: list[int] = []
    snap = table.current_snapshot()
    while snap is not None:
        out.append(snap.snapshot_id)
        parent = snap.parent_snapshot_id
        snap = None if parent is None else table.snapshot_by_id(parent)
    return out
