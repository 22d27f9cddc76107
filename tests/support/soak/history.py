"""The soak's history generator (see `support.soak`): a seed draws a schema, a partition spec,
a format version and write modes, then the steps, each with JSON-able arguments and the
table's columns before it."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from support.soak.values import NESTED, PRIMITIVES, PROMOTIONS, STRINGS, TRANSFORMS, Column, draw_value

BRANCH = "audit"
# The share of histories whose table has `id` as its identifier field.
IDENTIFIER_SHARE = 0.5


@dataclass
class TableState:
    """What the generator knows of the table: its columns, format version and modes."""

    columns: list[Column]
    version: int
    props: dict[str, str]
    next_id: int = 0
    counter: int = 0
    spec_fields: list[str] = field(default_factory=list)
    branch: bool = False  # the branch BRANCH exists
    # The names of the columns at the branch's last append: Java binds a branch DELETE's filter
    # to the branch head's schema and refuses a column it lacks (tests/soak/test_soak_findings.py)
    branch_names: set[str] = field(default_factory=set)
    detached: bool = False  # a rollback left snapshots off main's lineage (cherry-pick sources)
    tags: int = 0
    queued: list[Step] = field(default_factory=list)  # steps that must come next
    later: random.Random = field(default_factory=lambda: random.Random(0))  # draws LATER_WEIGHTS' steps
    kills: random.Random = field(default_factory=lambda: random.Random(0))  # draws the killed writes
    nested: random.Random = field(default_factory=lambda: random.Random(0))  # draws the nested columns
    # draws which updates assign a struct's field instead (a stream of their own: histories
    # drawn before keep their steps)
    field_updates: random.Random = field(default_factory=lambda: random.Random(0))
    killed: int = 0  # killed writes drawn so far
    # The column of the table's sort order (WRITE ORDERED BY): dropping it is refused by both
    # engines (Java's `Cannot find source column for sort field`), so such a drop keeps it.
    sort_column: Column | None = None

    def snapshot(self) -> list[Column]:
        """The columns as they are now (names and kinds; later steps rename and promote)."""
        return [Column(c.name, c.kind) for c in self.columns]

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def fresh_name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


@dataclass
class Step:
    """One step of a history: its kind, JSON-able arguments, and the table's columns before
    it (set by `generate`)."""

    kind: str
    args: dict[str, Any]
    columns: list[Column] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.kind} {json.dumps(self.args, default=str)[:300]}"


@dataclass
class History:
    seed: int
    ddl_columns: list[Column]
    partition: list[tuple[str, str, str]]  # (column, Spark SQL transform, icefloe transform)
    version: int
    props: dict[str, str]
    steps: list[Step]
    # `id` is the table's identifier field (NOT NULL, `SET IDENTIFIER FIELDS id`): upserts then
    # take their key from the table. Drawn from a stream of its own (seeds keep their steps).
    identifier: bool = False


def _rows(
    rng: random.Random, state: TableState, count: int, ids: list[int] | None = None
) -> list[dict[str, Any]]:
    out = []
    for i in range(count):
        row: dict[str, Any] = {}
        for c in state.columns:
            if c.name == "id":
                if ids is not None:
                    row["id"] = ids[i]
                else:
                    row["id"] = state.next_id
                    state.next_id += 1
            else:  # a nested column's values from its own stream: the others' draws stay the same
                source = state.nested if c.kind in NESTED else rng
                row[c.name] = draw_value(source, c.kind, c.truncate_source)
        out.append(row)
    return out


def _predicate(rng: random.Random, state: TableState, among: set[str] | None = None) -> str:
    """A filter both engines parse alike: over `id` mostly, sometimes a null test or a
    comparison on an int / long / string column (one named in `among`, when given)."""
    hi = max(state.next_id, 1)
    lo = rng.randrange(0, hi)
    choices = [
        f"id >= {lo} and id < {lo + rng.randrange(1, 12)}",
        f"id < {rng.randrange(0, hi)}",
        f"id = {lo}",
    ]
    others = [
        c
        for c in state.columns
        if c.name != "id" and c.kind in ("int", "long", "string") and (among is None or c.name in among)
    ]
    if others and rng.random() < 0.4:
        c = rng.choice(others)
        if rng.random() < 0.3:
            return f"{c.name} is null"
        if c.kind == "string":
            return f"{c.name} = '{rng.choice([s for s in STRINGS if s])}'"
        return f"{c.name} > {rng.choice([-1, 0, 7, 99])}"
    return rng.choice(choices)


def generate(seed: int, steps: int) -> History:
    rng = random.Random(seed)
    kinds = rng.sample(PRIMITIVES, rng.randrange(3, 7))
    columns = [Column("id", "long")] + [Column(f"c_{k}", k) for k in kinds]
    version = rng.choice([1, 2, 2, 3])
    props = {"format-version": str(version)}
    if version >= 2:
        for op in ("delete", "update", "merge"):
            props[f"write.{op}.mode"] = rng.choice(["copy-on-write", "merge-on-read"])
    state = TableState([Column(c.name, c.kind) for c in columns], version, props)
    state.later = random.Random(seed ^ 0x1A7E5)
    state.kills = random.Random(seed ^ 0x6B111)
    state.nested = random.Random(seed ^ 0x4E57)
    state.field_updates = random.Random(seed ^ 0xF1E1D)
    partition: list[tuple[str, str, str]] = []
    candidates = [c for c in columns if c.kind in TRANSFORMS or c.name == "id"]
    for c in rng.sample(candidates, min(len(candidates), rng.randrange(0, 3))):
        kind = "long" if c.name == "id" else c.kind
        spark_t, ice_t = rng.choice(TRANSFORMS[kind])
        if any(p[0] == c.name for p in partition):
            continue
        partition.append((c.name, spark_t.format(c=c.name), ice_t))
        state.column(c.name).partition_source = True
        state.column(c.name).truncate_source = ice_t.startswith("truncate")
    history = History(seed, columns, partition, version, props, [])
    history.identifier = random.Random(seed ^ 0x1DE47).random() < IDENTIFIER_SHARE
    if version == 1:
        # icefloe writes v2 and v3 only: a v1 history is written by Java, upgraded to v2 by the
        # step's engine, and goes on from there (icefloe reading v1 manifests and files).
        for _ in range(rng.randrange(1, 3)):
            history.steps.append(Step("append_java", {"rows": _rows(rng, state, rng.randrange(1, 25))}))
        history.steps.append(Step("upgrade", {"version": 2}))
        state.version = 2
        for op in ("delete", "update", "merge"):
            history.steps.append(
                Step(
                    "set_property",
                    {"key": f"write.{op}.mode", "value": rng.choice(["copy-on-write", "merge-on-read"])},
                )
            )
    for step in history.steps:  # the steps above change no column
        step.columns = state.snapshot()
    while len(history.steps) < steps:
        before = state.snapshot()
        step = _next_step(rng, state)
        step.columns = before
        history.steps.append(step)
    return history


# Steps added after the `make test` slice's seeds were chosen (for the steps they cover): they
# are drawn from a second stream (TableState.later, seeded from the history's seed), so that a
# seed's history keeps every step it drew before, in order, with these between them.
LATER_WEIGHTS = {"rollback": 1, "cherrypick": 1, "remove_orphans": 1}
LATER_SHARE = 0.08  # about the share their weights would have among the steps above


def _later_step(rng: random.Random, state: TableState) -> Step:
    kind = rng.choices(list(LATER_WEIGHTS), list(LATER_WEIGHTS.values()))[0]
    if kind == "cherrypick" and not (state.branch or state.detached):
        kind = "rollback"  # nothing off main's lineage to pick yet: this makes some
    if kind == "rollback":
        # main back to its `depth`-th ancestor (the oldest one it still has when shorter);
        # the snapshots after it leave main's lineage
        state.detached = True
        return Step("rollback", {"depth": rng.randrange(1, 4)})
    if kind == "cherrypick":
        # The branch's head, or the newest snapshot off main's lineage (see Lineage.cherrypick_target):
        # an append is re-applied on main, a snapshot whose parent is main's head fast-forwards;
        # both engines refuse the rest (an ancestor of main, one already picked, a delete).
        pick = BRANCH if state.branch and rng.random() < 0.6 else "newest"
        return Step("cherrypick", {"pick": pick})
    assert kind == "remove_orphans", kind
    return Step("remove_orphans", {"count": rng.randrange(1, 4)})


# A killed writer (support.soak.kill): drawn from a third stream (TableState.kills), so that a
# seed's history keeps every other step it drew before. Its rows take ids from KILLED_IDS on,
# apart from the others': whether they land is known only when the step has run.
KILL_SHARE = 0.06
NESTED_SHARE = 0.04
KILLED_IDS = 1 << 40


def _killed_append(state: TableState) -> Step:
    rng = state.kills
    count = rng.randrange(1, 12)
    ids = [KILLED_IDS + 100 * state.killed + i for i in range(count)]
    state.killed += 1
    # the kill lands this long after the writer is ready: an append of a few rows takes 10-20 ms
    # here, so before, inside or after its write and commit
    delay = round(rng.uniform(0, 0.04), 4)
    return Step("killed_append", {"rows": _rows(rng, state, count, ids), "delay": delay})


def _next_step(rng: random.Random, state: TableState) -> Step:
    weights = {
        "append": 6,
        "delete": 3,
        "update": 3,
        "merge": 3,
        "upsert": 2,
        "dynamic_overwrite": 1,
        "add_column": 1,
        "rename_column": 1,
        "drop_column": 1,
        "promote": 1,
        "add_partition_field": 1,
        "compact": 1,
        "rewrite_manifests": 1,
        "expire": 1,
        "upgrade_v3": 1,
        "branch_append": 2,
        "branch_delete": 1,
        "fast_forward": 1,
        "tag": 1,
        "rewrite_position_deletes": 1,
        "sort_order": 1,
        "sort_compact": 1,
        "concurrent": 1,
    }
    if state.queued:
        return state.queued.pop(0)
    if state.next_id and state.kills.random() < KILL_SHARE:
        return _killed_append(state)
    if state.next_id and state.nested.random() < NESTED_SHARE:
        # a struct, list or map column (a stream of its own, as the killed writes): appends,
        # MERGE, upserts and overwrites write it, renames and drops change it; UPDATE does
        # not set it (the soak's UPDATE assigns primitive literals)
        k = state.nested.choice(sorted(NESTED))
        name = state.fresh_name(f"n_{k}_")
        state.columns.append(Column(name, k))
        return Step("add_column", {"name": name, "kind": k})
    if state.next_id and state.later.random() < LATER_SHARE:
        return _later_step(state.later, state)
    if state.next_id == 0:
        kind = "append"
    else:
        kind = rng.choices(list(weights), list(weights.values()))[0]
    if kind == "append":
        return Step("append", {"rows": _rows(rng, state, rng.randrange(1, 25))})
    if kind == "delete":
        return Step("delete", {"where": _predicate(rng, state)})
    if kind == "update":
        targets = [
            c for c in state.columns if c.name != "id" and not c.partition_source and c.kind not in NESTED
        ]
        if not targets:
            return Step("delete", {"where": _predicate(rng, state)})
        c = rng.choice(targets)
        args = {
            "where": _predicate(rng, state),
            "column": c.name,
            "value": draw_value(rng, c.kind, c.truncate_source),
            "kind": c.kind,
        }
        structs = [s for s in state.columns if s.kind == "struct"]
        if structs and state.field_updates.random() < 0.5:  # `SET s.a = ...`: a field of a struct
            s = state.field_updates.choice(structs)
            name, kind = state.field_updates.choice([("a", "int"), ("b", "string")])
            value = draw_value(state.field_updates, kind)
            args.update({"column": f"{s.name}.{name}", "value": value, "kind": kind})
        return Step("update", args)
    if kind == "merge":
        existing = rng.sample(range(state.next_id), min(state.next_id, rng.randrange(0, 8)))
        new = list(range(state.next_id, state.next_id + rng.randrange(0, 6)))
        state.next_id += len(new)
        ids = existing + new
        rng.shuffle(ids)
        if not ids:
            ids = [state.next_id]
            state.next_id += 1
        return Step(
            "merge",
            {"rows": _rows(rng, state, len(ids), ids), "delete_below": rng.randrange(0, state.next_id)},
        )
    if kind == "upsert":
        existing = rng.sample(range(state.next_id), min(state.next_id, rng.randrange(0, 6)))
        new = list(range(state.next_id, state.next_id + rng.randrange(1, 5)))
        state.next_id += len(new)
        return Step("upsert", {"rows": _rows(rng, state, len(existing) + len(new), existing + new)})
    if kind == "dynamic_overwrite":
        return Step("dynamic_overwrite", {"rows": _rows(rng, state, rng.randrange(1, 10))})
    if kind == "add_column":
        k = rng.choice(PRIMITIVES)
        name = state.fresh_name(f"n_{k}_")
        state.columns.append(Column(name, k))
        return Step("add_column", {"name": name, "kind": k})
    if kind == "rename_column":
        renamable: list[Column | None] = [c for c in state.columns if c.name != "id"]
        renamed = rng.choice(renamable or [None])
        if renamed is None:
            return Step("expire", {"retain_last": 2})
        old = renamed.name
        renamed.name = state.fresh_name("r_")
        return Step("rename_column", {"old": old, "new": renamed.name})
    if kind == "drop_column":
        droppable = [c for c in state.columns if c.name != "id" and not c.partition_source]
        if len(droppable) < 2:
            return Step("rewrite_manifests", {})
        c = rng.choice(droppable)
        if c is not state.sort_column:  # (a drop of the sort order's column: refused by both)
            state.columns.remove(c)
        return Step("drop_column", {"name": c.name})
    if kind == "promote":
        promotable = [c for c in state.columns if c.kind in PROMOTIONS and not c.partition_source]
        if not promotable:
            return Step("compact", {})
        c = rng.choice(promotable)
        c.kind = PROMOTIONS[c.kind]
        return Step("promote", {"name": c.name, "kind": c.kind})
    if kind == "add_partition_field":
        free = [
            c for c in state.columns if not c.partition_source and (c.kind in TRANSFORMS or c.name == "id")
        ]
        if not free or len(state.spec_fields) >= 2:
            return Step("compact", {})
        c = rng.choice(free)
        options = TRANSFORMS["long" if c.name == "id" else c.kind]
        if c.kind in ("int", "long") and c.name != "id":  # rows so far may hold the minimum (see _value)
            options = [t for t in options if not t[1].startswith("truncate")] or options[:1]
        spark_t, ice_t = rng.choice(options)
        c.partition_source = True
        c.truncate_source = ice_t.startswith("truncate")
        state.spec_fields.append(c.name)
        return Step(
            "add_partition_field", {"column": c.name, "spark": spark_t.format(c=c.name), "icefloe": ice_t}
        )
    if kind == "upgrade_v3":
        if state.version != 2:
            return Step("compact", {})
        state.version = 3
        return Step("upgrade", {"version": 3})
    if kind == "branch_append":
        state.branch = True
        state.branch_names = {c.name for c in state.columns}
        if rng.random() < 0.4:  # main has not moved on: the fast-forward lands
            state.queued.append(Step("fast_forward", {}))
        elif state.later.random() < 0.3:  # publish the branch's head (a fast-forward if main has not moved)
            state.queued.append(Step("cherrypick", {"pick": BRANCH}))
        return Step("branch_append", {"rows": _rows(rng, state, rng.randrange(1, 12))})
    if kind == "branch_delete" and state.branch:
        return Step("branch_delete", {"where": _predicate(rng, state, state.branch_names)})
    if kind == "fast_forward" and state.branch:
        return Step("fast_forward", {})  # refused by both when main moved on since the branch forked
    if kind == "tag" and state.tags < 3:
        state.tags += 1
        return Step("tag", {"name": f"tag_{state.tags}"})
    if kind == "rewrite_position_deletes":
        return Step("rewrite_position_deletes", {})
    if kind == "concurrent":
        # A DELETE of old ids and an append of new ones, by two writers at once: both land
        # (neither conflicts with the other under serializable isolation), in either order.
        where = f"id < {rng.randrange(0, max(state.next_id, 1))}"
        return Step("concurrent", {"where": where, "rows": _rows(rng, state, rng.randrange(1, 10))})
    if kind == "sort_order":
        sortable = [c for c in state.columns if c.kind in ("int", "long", "string", "date", "ts", "double")]
        c = rng.choice(sortable)
        direction = rng.choice(["ASC", "DESC"])
        nulls = rng.choice(["NULLS FIRST", "NULLS LAST"])
        state.sort_column = c
        return Step("sort_order", {"column": c.name, "direction": direction, "nulls": nulls})
    if kind == "sort_compact":
        c = rng.choice([c for c in state.columns if c.kind in ("int", "long", "string", "date")])
        return Step("sort_compact", {"order": f"{c.name} {rng.choice(['ASC', 'DESC'])} NULLS LAST"})
    if kind == "compact" or kind in ("branch_delete", "fast_forward", "tag"):
        return Step("compact", {})
    if kind == "rewrite_manifests":
        return Step("rewrite_manifests", {})
    return Step("expire", {"retain_last": rng.randrange(1, 4)})
