"""The writer racing snapshot expiry (`python -m support.workers.expire_writer '<json args>'`,
tests/maintenance/test_maintenance_expire.py): loads the table, writes its ready file, waits for
the go file (support.start_gate), then makes `n` appends of 5 rows (seq i), and from i = 2 on
deletes seq i-2 by a copy-on-write overwrite (every 4th) or a merge-on-read delete (which also
drops row k = 0 of seq i-1). Writes the `done` file, then prints a JSON log of its steps."""

from __future__ import annotations

import json
import sys
from typing import Any

import icefloe
import pyarrow as pa
from icefloe.exceptions import CommitConflictError

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, n, ready, go, done = json.loads(sys.argv[1])
    table = icefloe.load_catalog(**props).load_table(ident)
    schema = table.schema().as_arrow()
    ready_then_wait(ready, go)
    log: list[Any] = []
    for i in range(n):
        seq, k = pa.array([i] * 5, pa.int64()), pa.array(range(5), pa.int64())
        rows = pa.table({"seq": seq, "k": k}, schema=schema)
        table.append(rows)
        log.append(["append", i])
        if i >= 2:
            try:
                if i % 4 == 0:  # copy-on-write: the rows of seq i-2 rewritten away
                    table.overwrite(rows.slice(0, 0), f"seq = {i - 2}")
                else:  # merge-on-read: whole files dropped or position deletes
                    table.delete(f"seq = {i - 2} OR (seq = {i - 1} AND k = 0)")
                log.append(["delete", i - 2, i % 4 != 0])
            except CommitConflictError as e:
                log.append(["conflict", i - 2, str(e)])
    with open(done, "w") as f:
        f.write("done")
    print(json.dumps(log), flush=True)


if __name__ == "__main__":
    main()
