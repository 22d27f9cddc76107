"""The source of the PySpark 4 streaming kill test (`python -m support.workers.table_producer
'[warehouse, ident, commits, rows, interval]'`, tests/spark4/test_spark4_streaming_kill.py):
`commits` appends of `rows` rows each (ids counting up, val `v<id>`) to the icefloe table
`ident`, one every `interval` seconds."""

from __future__ import annotations

import json
import sys
import time

import icefloe
import pyarrow as pa


def main() -> None:
    warehouse, ident, commits, rows, interval = json.loads(sys.argv[1])
    table = icefloe.load_catalog("local", type="filesystem", warehouse=warehouse).load_table(ident)
    for k in range(commits):
        ids = list(range(k * rows, (k + 1) * rows))
        table.append(pa.table({"id": pa.array(ids, pa.int64()), "val": [f"v{i}" for i in ids]}))
        time.sleep(interval)


if __name__ == "__main__":
    main()
