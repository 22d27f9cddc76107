"""A racing writer process (`python -m support.workers.racing_writer '<json args>'`, started by
`support.racing_writers.spawn`): loads the table, writes its ready file, waits for the go file
(see support.start_gate), then runs its mode: `append` (n one-row appends), `replace` or
`filter` (one overwrite of its region, a CommitConflictError reported), or `forever` (10-row
appends until killed, printing each committed seq). Prints a JSON list of outcomes last."""

from __future__ import annotations

import json
import sys

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError
from icefloe.expressions import EqualTo

from support.racing_writers import SCHEMA
from support.start_gate import ready_then_wait


def main(args: str) -> None:
    props, ident, writer, n, ready, go, mode, region = json.loads(args)
    table = icefloe.load_catalog(**props).load_table(ident)

    def rows(seq: int, k: int) -> pa.Table:
        return pa.table(
            {
                "writer": pa.array([writer] * k, pa.int32()),
                "seq": pa.array([seq] * k, pa.int32()),
                "region": pa.array([region] * k),
            },
            schema=SCHEMA,
        )

    ready_then_wait(ready, go)
    out = []
    if mode == "append":
        for i in range(n):
            table.append(rows(i, 1))
            out.append("ok")
    elif mode in ("replace", "filter"):
        try:
            if mode == "replace":
                table.overwrite(rows(0, 3))
            else:
                table.overwrite(rows(0, 3), EqualTo("region", region))
            out.append("ok")
        except CommitConflictError as e:
            out.append("conflict: " + str(e))
    elif mode == "forever":  # appends of 10 rows until killed; seq = attempt number
        i = 0
        while True:
            table.append(rows(i, 10))
            print(i, flush=True)
            i += 1
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
