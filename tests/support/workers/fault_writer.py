"""The writer the kill tests SIGKILL at a fault point (tests/faults/test_faults_kill.py):
`python -m support.workers.fault_writer '[props, table, op]'` runs `support.fault_ops.OPS[op]`
on the table; its sitecustomize (support.kill_harness) kills it at ICEFLOE_FAULT_POINT, so
reaching the end is a failure it reports."""

from __future__ import annotations

import json
import sys

import icefloe

from support.fault_ops import OPS


def main(args: str) -> None:
    props, name, op = json.loads(args)
    OPS[op].run(icefloe.load_catalog(**props).load_table(name))
    print("finished: no fault point was reached", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
