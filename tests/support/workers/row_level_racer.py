"""A process of the row-level race tests (`python -m support.workers.row_level_racer
'<json args>'`, tests/commit/test_row_level_processes.py): loads the table, writes its ready
file, waits for the go file (support.start_gate), then runs its mode: `delete` (arg: a row
filter), `overwrite` (the whole table by one row 1000), or `mixed` (arg: [worker, steps]:
upserts of its own keys and deletes of them). Prints a JSON list of outcomes last."""

from __future__ import annotations

import json
import sys
from typing import Any

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, mode, arg, ready, go = json.loads(sys.argv[1])
    table = icefloe.load_catalog(**props).load_table(ident)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("tag", pa.string())])
    ready_then_wait(ready, go)
    out: list[Any] = []
    if mode == "delete":
        try:
            table.delete(arg)
            out.append("ok")
        except CommitConflictError as e:
            out.append("conflict: " + str(e))
    elif mode == "overwrite":
        try:
            table.overwrite(pa.table({"id": pa.array([1000], pa.int64()), "tag": ["new"]}, schema=schema))
            out.append("ok")
        except CommitConflictError as e:
            out.append("conflict: " + str(e))
    elif mode == "mixed":  # (worker number, steps): upserts of its own keys and deletes of them
        w, steps = arg
        for i in range(steps):
            keys = [w * 100 + (i * 7 + j) % 50 for j in range(3)]
            try:
                if i % 3 == 2:
                    table.refresh().delete(f"id >= {w * 100 + i % 50} and id < {w * 100 + i % 50 + 5}")
                    out.append(["delete", w * 100 + i % 50, w * 100 + i % 50 + 5])
                else:
                    rows = pa.table(
                        {"id": pa.array(keys, pa.int64()), "tag": [f"{w}-{i}"] * 3}, schema=schema
                    )
                    table.upsert(rows)
                    out.append(["upsert", keys, f"{w}-{i}"])
            except CommitConflictError as e:
                out.append(["conflict", str(e)])
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
