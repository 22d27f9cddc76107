"""The process expiring snapshots while a writer races it (`python -m support.workers.expirer
'<json args>'`, tests/maintenance/test_maintenance_expire.py): loads the table, writes its ready
file, waits for the go file (support.start_gate), then expires every snapshot but the last
(older than now) until the writer's `done` file exists, asserting no delete failed. Prints
[runs, snapshots expired, files deleted] as JSON last."""

from __future__ import annotations

import json
import os
import sys
import time

import icefloe

from support.start_gate import ready_then_wait


def main() -> None:
    props, ident, ready, go, done = json.loads(sys.argv[1])
    catalog = icefloe.load_catalog(**props)
    catalog.load_table(ident)
    ready_then_wait(ready, go)
    runs, expired, deleted = 0, 0, 0
    while not os.path.exists(done):
        table = catalog.load_table(ident)
        r = table.maintenance.expire_snapshots(older_than=time.time_ns() // 1_000_000, retain_last=1)
        assert not r.failed_deletes, r.failed_deletes
        runs += 1
        expired += len(r.expired_snapshot_ids)
        deleted += len(r.deleted_files)
    print(json.dumps([runs, expired, deleted]), flush=True)


if __name__ == "__main__":
    main()
