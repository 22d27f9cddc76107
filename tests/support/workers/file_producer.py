"""The source of the streaming sink kill test (`python -m support.workers.file_producer
'[src, rows, interval, stop_file, max_files]'`, tests/streaming/test_streaming_sink_kill.py):
drops Parquet files of `rows` rows each (ids counting up, val `v<id>`) into `src`, one every
`interval` seconds, until `stop_file` exists (or `max_files` are in), each written under a dot
name (which Spark's file source skips) and renamed whole. Files keep arriving for as long as
the test's runs come and go, however slow the machine, so every run has fresh batches."""

from __future__ import annotations

import json
import os
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq


def main() -> None:
    src, rows, interval, stop_file, max_files = json.loads(sys.argv[1])
    schema = pa.schema([pa.field("id", pa.int64()), pa.field("val", pa.string())])
    k = 0
    while k < max_files and not os.path.exists(stop_file):
        ids = list(range(k * rows, (k + 1) * rows))
        tmp = os.path.join(src, f".tmp-{k:04d}.parquet")  # Spark's file source skips dot files
        pq.write_table(pa.table({"id": ids, "val": [f"v{i}" for i in ids]}, schema=schema), tmp)
        os.rename(tmp, os.path.join(src, f"part-{k:04d}.parquet"))
        k += 1
        time.sleep(interval)
    print("produced", k, flush=True)


if __name__ == "__main__":
    main()
