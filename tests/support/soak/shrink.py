"""The soak's shrinker (see `support.soak`): a history that fails, cut down to a shortest one
that still fails the same way, and saved as JSON to be rerun (`ICEFLOE_SOAK_HISTORY=<file>`)
and turned into a named regression test.

"The same way" is the failure's signature: the kind of the step it failed at and its message
with the step's place, table names and numbers taken out, so that a cut that makes another
step fail (a column an earlier, removed step added) is not taken. Steps are removed in chunks
(halves, quarters, ... single steps: delta debugging), each candidate run afresh on new
tables, within a budget of runs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.soak.history import History, Step
from support.soak.values import Column


class StepFailed(AssertionError):
    """A history's failure at step `index` (of kind `kind`), its message prefixed with `where`."""

    def __init__(self, message: str, index: int, kind: str, where: str) -> None:
        super().__init__(message)
        self.index, self.kind, self.where = index, kind, where


def signature(error: StepFailed) -> str:
    """What makes two failures the same: the step's kind and the message after its place."""
    text = str(error)
    text = text[len(error.where) :] if text.startswith(error.where) else text
    text = re.sub(r"db\.\w+", "T", text.splitlines()[0] if text else "")
    return f"{error.kind}: {re.sub(r'-?[0-9]+', '#', text)[:160]}"


def shrink(
    history: History, fails: Callable[[History], StepFailed | None], first: StepFailed, budget: int = 60
) -> tuple[History, StepFailed, int]:
    """The shortest history found that fails as `first` did (`fails` runs one and returns its
    failure, or None), the failure, and the runs spent (at most `budget`)."""
    want = signature(first)
    steps, last, runs = list(history.steps[: first.index + 1]), first, 0

    def attempt(candidate: list[Step]) -> bool:
        nonlocal runs, last
        runs += 1
        got = fails(dataclasses.replace(history, steps=candidate))
        if got is not None and signature(got) == want:
            last = got
            return True
        return False

    if len(steps) < len(history.steps) and not attempt(steps):
        steps = list(history.steps)  # the steps after it mattered (a race, a killed writer)
    parts = 2
    while len(steps) > 1 and runs < budget:
        size = max(1, len(steps) // parts)
        for start in range(0, len(steps), size):
            candidate = steps[:start] + steps[start + size :]
            if candidate and attempt(candidate):
                steps, parts = candidate, max(parts - 1, 2)
                break
            if runs >= budget:
                break
        else:
            if size == 1:
                break
            parts = min(len(steps), parts * 2)
    return dataclasses.replace(history, steps=steps), last, runs


def _encode(v: Any) -> Any:
    """A step argument as JSON: the value types JSON lacks tagged (NaN and the infinities are
    Python's JSON extensions, which it reads back)."""
    if isinstance(v, dict):
        return {k: _encode(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return {"$decimal": str(v)}
    if isinstance(v, dt.datetime):
        return {"$datetime": v.isoformat()}
    if isinstance(v, dt.date):
        return {"$date": v.isoformat()}
    if isinstance(v, bytes):
        return {"$bytes": v.hex()}
    return v


def _decode(v: Any) -> Any:
    if isinstance(v, list):
        return [_decode(x) for x in v]
    if isinstance(v, dict):
        if len(v) == 1:
            ((tag, text),) = v.items()
            if tag == "$decimal":
                return decimal.Decimal(text)
            if tag == "$datetime":
                return dt.datetime.fromisoformat(text)
            if tag == "$date":
                return dt.date.fromisoformat(text)
            if tag == "$bytes":
                return bytes.fromhex(text)
        return {k: _decode(x) for k, x in v.items()}
    return v


def to_json(history: History) -> str:
    return json.dumps(_encode(dataclasses.asdict(history)), indent=1)


def from_json(text: str) -> History:
    d = _decode(json.loads(text))

    def columns(cs: list[dict[str, Any]]) -> list[Column]:
        return [Column(**c) for c in cs]

    return History(
        seed=d["seed"],
        ddl_columns=columns(d["ddl_columns"]),
        partition=[(p[0], p[1], p[2]) for p in d["partition"]],
        version=d["version"],
        props=d["props"],
        steps=[Step(s["kind"], s["args"], columns(s["columns"])) for s in d["steps"]],
        identifier=bool(d.get("identifier", False)),  # histories saved before it have none
    )


def save(history: History, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"history-{history.seed}-{len(history.steps)}-steps.json"
    path.write_text(to_json(history))
    return path
