"""The start gate's self-test worker (`python -m support.workers.gate_worker '<json args>'`,
tests/commit/test_start_gate.py): sleeps `delay` s (a slow import or table load), raises if
`fail` is set, else is ready and waits for go. Prints when it was ready, when it passed the gate
(CLOCK_MONOTONIC, the same for every process) and whether the go file existed before it was
ready."""

from __future__ import annotations

import json
import os
import sys
import time

from support.start_gate import ready_then_wait


def main() -> None:
    ready, go, delay, fail = json.loads(sys.argv[1])
    time.sleep(delay)
    if fail:
        raise RuntimeError("the table could not be loaded: " + fail)
    saw_go = os.path.exists(go)
    ready_at = time.monotonic()
    ready_then_wait(ready, go)
    print(json.dumps([ready_at, time.monotonic(), saw_go]), flush=True)


if __name__ == "__main__":
    main()
