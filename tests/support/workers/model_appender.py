"""The stateful model test's second process (`python -m support.workers.model_appender
'<catalog props json>'`, tests/table/test_table_model_stateful.py): one for the whole test; for
each stdin line `[ident, path]` it appends the Arrow IPC file at `path` to table `ident` and
prints `"ok"`, or the error (type and message) for the model to fail the test with, as JSON."""

from __future__ import annotations

import json
import sys

import icefloe
import pyarrow as pa


def main() -> None:
    props = json.loads(sys.argv[1])
    catalog = icefloe.load_catalog(**props)
    for line in sys.stdin:
        ident, path = json.loads(line)
        try:
            with pa.memory_map(path) as f:
                data = pa.ipc.open_file(f).read_all()
            catalog.load_table(ident).append(data)
            print(json.dumps("ok"), flush=True)
        except Exception as e:  # reported to the machine, which fails the test with it
            print(json.dumps(f"{type(e).__name__}: {e}"), flush=True)


if __name__ == "__main__":
    main()
