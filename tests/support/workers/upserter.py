"""The upserting process of the equality-delete conversion race (`python -m
support.workers.upserter '<json args>'`, tests/maintenance/test_maintenance_convert_eq.py):
loads the table, writes its ready file, waits for the go file (support.start_gate), then makes
`steps` upserts on `id` (retried on CommitConflictError), pausing 50 ms between them so the
test's conversions interleave. Prints a JSON list of [ids, value] last."""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, steps, ready, go = json.loads(sys.argv[1])
    table = icefloe.load_catalog(**props).load_table(ident)
    ready_then_wait(ready, go)
    schema = pa.schema(
        [pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("v", pa.int32())]
    )
    out: list[Any] = []
    for step in range(1, steps + 1):
        ids = [(step * 7 + j * 3) % 40 for j in range(4)]
        ids = sorted(set(ids))
        regions = ["eu" if i % 2 else "us" for i in ids]
        rows = pa.table({"id": ids, "region": regions, "v": [100 + step] * len(ids)}, schema=schema)
        while True:
            try:
                table.refresh().upsert(rows, join_cols=["id"])
                break
            except CommitConflictError:
                continue
        out.append([ids, 100 + step])
        time.sleep(0.05)  # let conversions interleave
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
