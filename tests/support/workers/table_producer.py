"""The source of the PySpark 4 streaming kill test (`python -m support.workers.table_producer
'[warehouse, ident, rows, interval, stop_file, max_commits]'`,
tests/spark4/test_spark4_streaming_kill.py): appends of `rows` rows each (ids counting up, val
`v<id>`) to the icefloe table `ident`, one every `interval` seconds, until `stop_file` exists
(or `max_commits` are in). Commits keep arriving for as long as the test's runs come and go,
however slow the machine, so every run has fresh batches to commit."""

from __future__ import annotations

import json
import os
import sys
import time

import icefloe
import pyarrow as pa


def main() -> None:
    warehouse, ident, rows, interval, stop_file, max_commits = json.loads(sys.argv[1])
    table = icefloe.load_catalog("local", type="filesystem", warehouse=warehouse).load_table(ident)
    k = 0
    while k < max_commits and not os.path.exists(stop_file):
        ids = list(range(k * rows, (k + 1) * rows))
        table.append(pa.table({"id": pa.array(ids, pa.int64()), "val": [f"v{i}" for i in ids]}))
        k += 1
        time.sleep(interval)
    print("produced", k, flush=True)


if __name__ == "__main__":
    main()
