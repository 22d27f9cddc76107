"""A writer of the concurrent-commit tests (`python -m support.workers.append_writer
'<json args>'`, tests/commit/test_concurrent_commits.py): loads the catalog and table, writes
its ready file, waits for the go file (support.start_gate), then makes `appends` one-row
appends, in mode `retry` (commit retries) or `once` (each CommitConflictError reported).
Prints a JSON list of outcomes last."""

from __future__ import annotations

import json
import sys

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, writer, appends, ready, go, mode = json.loads(sys.argv[1])
    catalog = icefloe.load_catalog(**props)
    table = catalog.load_table(ident)
    schema = pa.schema(
        [pa.field("writer", pa.int32(), nullable=False), pa.field("seq", pa.int32(), nullable=False)]
    )
    ready_then_wait(ready, go)
    results = []
    for i in range(appends):
        data = pa.table(
            {"writer": pa.array([writer], pa.int32()), "seq": pa.array([i], pa.int32())}, schema=schema
        )
        if mode == "retry":
            table.append(data)
            results.append("ok")
        else:  # "once": commit from the base loaded before the start signal, no retries
            try:
                table.append(data)
                results.append("ok")
            except CommitConflictError as e:
                results.append("conflict: " + str(e))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
