"""The soak's shrinker and saved histories (support.soak.shrink), without Spark: a failing
history is cut to the steps its failure needs, never to one that fails another way, and a
saved history reads back as the one generated (edge values included)."""

from __future__ import annotations

import math
from pathlib import Path

from support.soak import History, generate
from support.soak.history import Step
from support.soak.shrink import StepFailed, from_json, save, shrink, signature, to_json


def _history(kinds: list[str]) -> History:
    return History(1, [], [], 2, {}, [Step(k, {"n": i}) for i, k in enumerate(kinds)])


def _fails(h: History) -> StepFailed | None:
    """A stand-in engine pair: a DELETE after a rename reads different rows; an upsert before
    that DELETE makes it fail another way (a refusal) instead."""
    kinds = [s.kind for s in h.steps]
    for i, k in enumerate(kinds):
        if k == "delete" and "rename_column" in kinds[:i]:
            where = f"seed 1, step {i}: {h.steps[i]}"
            if "upsert" in kinds[:i]:
                return StepFailed(f"{where}: one engine refused", i, k, where)
            return StepFailed(f"{where}: Java reads db.soak_java_{i:08x} differently (3 rows)", i, k, where)
    return None


KINDS = ["append", "append", "rename_column", "compact", "append", "upsert", "tag", "expire"]
KINDS += ["append", "merge", "delete", "append", "delete", "compact"]


def test_a_failing_history_shrinks_to_the_steps_its_failure_needs() -> None:
    history = _history(KINDS)
    first = _fails(history)
    assert first is not None and "differently" not in str(first)  # the upsert's way, first
    small, last, runs = shrink(history, _fails, first, budget=200)
    # the same failure (a refusal needs the upsert), in as few steps as it needs
    assert [s.kind for s in small.steps] == ["rename_column", "upsert", "delete"]
    assert signature(last) == signature(first) and "refused" in str(last)
    assert runs <= 200


def test_a_shrink_never_takes_a_cut_that_fails_another_way() -> None:
    history = _history([k for k in KINDS if k != "upsert"])
    first = _fails(history)
    assert first is not None
    small, last, _ = shrink(history, _fails, first, budget=200)
    assert [s.kind for s in small.steps] == ["rename_column", "delete"]
    assert "differently" in str(last)
    # table names and numbers are not part of the signature; the step's kind and message are
    where = "seed 9, step 4: delete {}"
    other = StepFailed(f"{where}: Java reads db.soak_java_ff differently (7 rows)", 4, "delete", where)
    assert signature(other) == signature(last)


def test_a_shrink_within_a_small_budget_returns_a_history_that_still_fails() -> None:
    history = _history(KINDS * 3)
    first = _fails(history)
    assert first is not None
    small, _, runs = shrink(history, _fails, first, budget=3)
    assert runs <= 3 and len(small.steps) <= len(history.steps)
    got = _fails(small)
    assert got is not None and signature(got) == signature(first)


def test_a_saved_history_reads_back_as_generated(tmp_path: Path) -> None:
    for seed in (160, 3171, 7, 994300727):
        history = generate(seed, 40)
        back = from_json(save(history, tmp_path).read_text())
        assert to_json(back) == to_json(history)
        for a, b in zip(history.steps, back.steps):
            assert a.kind == b.kind and a.columns == b.columns
            for ra, rb in zip(a.args.get("rows", []), b.args.get("rows", [])):
                for k, v in ra.items():  # types kept: Decimal, date, datetime (with its zone), bytes, NaN
                    w = rb[k]
                    assert type(v) is type(w), (k, v, w)
                    assert v == w or (isinstance(v, float) and math.isnan(v) and math.isnan(w)), (k, v, w)


def test_a_drop_of_the_sort_orders_column_keeps_it_in_later_steps() -> None:
    """Both engines refuse to drop the column of the table's sort order, so the generator keeps
    it: the rows of later steps still carry it (found by `make soak`, seed 440927347, where a
    branch append without the column was refused by Java's INSERT and taken by icefloe)."""
    history = generate(440927347, 13)
    kinds = [(s.kind, s.args.get("column") or s.args.get("name")) for s in history.steps[10:13]]
    assert kinds == [("sort_order", "c_int"), ("drop_column", "c_int"), ("branch_append", None)]
    assert all("c_int" in row for row in history.steps[12].args["rows"])
