"""A process of tests/maintenance/test_maintenance_rewrite.py's race between a writer and a
compactor: `python -m support.workers.compaction_race '[props, table, role, steps, ready, go]'
[done]`. It loads the table, waits at the start gate, then as `writer` appends 10 rows per
step and deletes two earlier rows every second step, or as `compact` runs rewrite_data_files
until the `done` file exists. Prints what it did as one JSON list."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError

from support.start_gate import ready_then_wait

SCHEMA = pa.schema(
    [pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("amount", pa.float64())]
)


def main(args: str, done: str = "") -> None:
    props, ident, role, steps, ready, go = json.loads(args)
    table = icefloe.load_catalog(**props).load_table(ident)
    ready_then_wait(ready, go)
    out: list[Any] = []
    if role == "writer":  # appends 10 rows per step and deletes some of the earlier ones
        for i in range(steps):
            ids = list(range(100_000 + i * 10, 100_000 + i * 10 + 10))
            regions = ["eu" if j % 2 else "us" for j in ids]
            rows = pa.table({"id": ids, "region": regions, "amount": [1.0] * 10}, schema=SCHEMA)
            table.refresh().append(rows)
            out.append(["append", ids])
            if i % 2 == 1:
                gone = [100_000 + (i - 1) * 10 + 3, 5 + i]
                while True:
                    try:
                        table.refresh().delete(f"id IN ({gone[0]}, {gone[1]})")
                        out.append(["delete", gone])
                        break
                    except CommitConflictError:
                        continue
    else:  # compacts until the writer is done
        while True:
            last = os.path.exists(done)
            try:
                r = table.refresh().maintenance.rewrite_data_files(min_input_files=2)
                out.append(["compacted", r.rewritten_data_files_count])
            except CommitConflictError as e:
                out.append(["conflict", str(e)[:200]])
            if last:
                break
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
