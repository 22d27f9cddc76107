"""A process of the streaming-commit race (`python -m support.workers.zombie_driver
'<json args>'`, tests/streaming/test_streaming_commit_processes.py): loads the table, writes its
ready file, waits for the go file (support.start_gate), then for batches 0..7 either, as role
`zombie`, writes the batch's 5 rows and commits them with `commit_batch` as query `q-zombies`
(the snapshot id, or None when the batch was already committed), or, as role `plain`, makes
one plain append. Prints a JSON list of outcomes last."""

from __future__ import annotations

import json
import sys
from typing import Any

import icefloe
import pyarrow as pa
from icefloe.write import pending as _pending_write
from icefloe.write.streaming_commit import commit_batch

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, role, ready, go = json.loads(sys.argv[1])
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("tag", pa.string())])
    table = icefloe.load_catalog(**props).load_table(ident)
    ready_then_wait(ready, go)
    out: list[Any] = []
    for b in range(8):
        if role == "plain":
            table.refresh().append(pa.table({"id": [-1 - b], "tag": ["plain"]}, schema=schema))
            out.append("plain")
            continue
        ids = list(range(b * 5, b * 5 + 5))
        write_id = _pending_write.new_write_id()
        rows = pa.table({"id": ids, "tag": [f"b{b}"] * 5}, schema=schema)
        files = _pending_write.write_local(table, rows.to_reader(), write_id)
        snap = commit_batch(table, "q-zombies", b, files, write_id)
        out.append(None if snap is None else snap.snapshot_id)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
