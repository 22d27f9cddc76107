"""The writer of the permission tests (tests/faults/test_faults_disk.py), run without the
capabilities that bypass file permissions: `python -m support.workers.denied_writer
'[warehouse, [[table, op], ...]]'` runs each `support.fault_ops.OPS[op]` on its table of the
filesystem catalog and prints one JSON object: table -> [error type, message] ("" and a note
when the write went through)."""

from __future__ import annotations

import json
import sys

import icefloe

from support.fault_ops import OPS


def main(args: str) -> None:
    warehouse, cases = json.loads(args)
    catalog = icefloe.load_catalog("w", type="filesystem", warehouse=warehouse)
    out = {}
    for name, op in cases:
        try:
            OPS[op].run(catalog.load_table(name))
        except Exception as e:
            out[name] = [type(e).__name__, str(e)]
        else:
            out[name] = ["", "the write went through"]
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
