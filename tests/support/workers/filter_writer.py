"""A writer of the overwrite-by-filter conflict tests (`python -m support.workers.filter_writer
'<json args>'`, tests/commit/test_concurrency_filter.py): loads the table (the version its
operation starts from), builds its rows (3 for `overwrite`, 1 for `append`), writes its ready
file and waits for its go file (support.start_gate), then appends or overwrites by `row_filter`.
Prints a JSON object last: `result` ok with `snapshot` and `parent`, or conflict with `message`."""

from __future__ import annotations

import json
import sys
from typing import Any

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, writer, mode, region, seq, row_filter, ready, wait_for = json.loads(sys.argv[1])
    catalog = icefloe.load_catalog(**props)
    table = catalog.load_table(ident)  # the version the operation starts from
    schema = pa.schema(
        [
            pa.field("writer", pa.int32(), nullable=False),
            pa.field("seq", pa.int32(), nullable=False),
            pa.field("region", pa.string(), nullable=False),
        ]
    )
    k = 3 if mode == "overwrite" else 1
    data = pa.table(
        {
            "writer": pa.array([writer] * k, pa.int32()),
            "seq": pa.array([seq + i for i in range(k)], pa.int32()),
            "region": pa.array([region] * k),
        },
        schema=schema,
    )
    ready_then_wait(ready, wait_for)
    out: dict[str, Any]
    try:
        if mode == "append":
            table.append(data)
        else:
            table.overwrite(data, row_filter)
        snap = table.current_snapshot()
        out = {"result": "ok", "snapshot": snap.snapshot_id, "parent": snap.parent_snapshot_id}
    except CommitConflictError as e:
        out = {"result": "conflict", "message": str(e)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
