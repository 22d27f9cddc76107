"""Long maintenance work for the progress-bar test (`python -m support.workers.progress_script
<warehouse>`, tests/cli/test_progress.py): eight appends, an in-process rewrite_data_files and an
expire_snapshots deleting files; prints `done <deleted files>`."""

from __future__ import annotations

import sys
import time

import pyarrow as pa
from icefloe import load_catalog


def main() -> None:
    cat = load_catalog("p", type="filesystem", warehouse=sys.argv[1])
    cat.create_namespace("db")
    t = cat.create_table("db.t", pa.schema([("id", pa.int64())]))
    for i in range(8):
        t.append(pa.table({"id": pa.array([i] * 10, pa.int64())}))
    r = t.maintenance.rewrite_data_files(min_input_files=2)
    assert r.rewritten_data_files_count == 8, r
    t = cat.load_table("db.t")
    e = t.maintenance.expire_snapshots(retain_last=1, older_than=int(time.time() * 1000) + 60_000)
    assert e.deleted_data_files_count == 8, e
    print("done", e.deleted_files_count)


if __name__ == "__main__":
    main()
