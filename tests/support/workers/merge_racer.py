"""A process of the MERGE conflict tests (`python -m support.workers.merge_racer '<json args>'`,
tests/commit/test_merge_conflicts_processes.py): loads the table; with a go file, writes its
ready file and waits for go (support.start_gate); then runs its mode from the version it
loaded: `merge` (arg: {"rows", "on"}; update all matched, insert all not matched), `append`
(arg: rows) or `delete` (arg: a row filter). Prints a JSON list last: ["ok", ...] (a merge adds
rows updated and inserted) or ["conflict", message]."""

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
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("region", pa.string()),
            pa.field("amount", pa.float64()),
        ]
    )
    if go:
        ready_then_wait(ready, go)
    out: list[Any]
    try:
        if mode == "merge":  # from the version loaded above, whatever was committed since
            rows = pa.table(
                {k: [r[i] for r in arg["rows"]] for i, k in enumerate(schema.names)}, schema=schema
            )
            m = table.merge(rows, arg["on"]).when_matched_update_all().when_not_matched_insert_all().execute()
            out = ["ok", m.rows_updated, m.rows_inserted]
        elif mode == "append":
            table.append(
                pa.table({k: [r[i] for r in arg] for i, k in enumerate(schema.names)}, schema=schema)
            )
            out = ["ok"]
        else:
            table.delete(arg)
            out = ["ok"]
    except CommitConflictError as e:
        out = ["conflict", str(e)]
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
