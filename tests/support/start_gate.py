"""Start gates for tests that race real processes.

A test that means to provoke a race starts its worker processes, and every worker first
imports icefloe and loads its catalog and table, which takes long and varies on a loaded
machine. Each worker then writes its READY file and waits for the GO file; the test writes
the go file only once every worker's ready file exists. So the race the test means happens
however slow the machine: no sleep decides the start order.

Worker side (run with `worker_env()`, whose PYTHONPATH holds `tests/`):

    from support.start_gate import ready_then_wait
    table = catalog.load_table(ident)
    ready_then_wait(ready, go)

Test side:

    release(procs, ready_paths, go)       # or wait_ready(...) then open_gate(go) in steps
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from subprocess import Popen, TimeoutExpired
from typing import Any

POLL_S = 0.002
READY_TIMEOUT_S = 180.0  # every worker imports pyarrow + icefloe and loads a table
WORKER_GO_TIMEOUT_S = 900.0  # a backstop: the test failed without killing its workers


def worker_env(**extra: str) -> dict[str, str]:
    """This process's environment with PYTHONPATH = its `sys.path` (which holds `tests/`),
    so a worker started with it imports `start_gate` and the tests' helper modules."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), **extra}


def ready_path(go: str | os.PathLike[str], worker: int) -> Path:
    """The ready file of worker number `worker` of the workers waiting for `go`."""
    go = Path(go)
    return go.with_name(f"{go.name}.ready-{worker}")


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """`path` appears whole or not at all: written under a temporary name, then renamed."""
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def ready_then_wait(
    ready: str | os.PathLike[str], go: str | os.PathLike[str], timeout: float = WORKER_GO_TIMEOUT_S
) -> None:
    """Worker side: say this process is ready (its ready file holds its pid), then wait until
    the go file exists. Exits if the test process died or no go came within `timeout`."""
    parent = os.getppid()
    write_atomically(ready, str(os.getpid()))
    deadline = time.monotonic() + timeout
    while not os.path.exists(go):
        if os.getppid() != parent:
            sys.exit(f"start gate: the test process died before writing {go}")
        if time.monotonic() > deadline:
            sys.exit(f"start gate: no go file {go} within {timeout} s of {ready}")
        time.sleep(POLL_S)


def _stderr_of(proc: Popen[Any]) -> str:
    """What an exited worker wrote to its stderr, if the test piped it."""
    if proc.stderr is None:
        return "(stderr not piped)"
    try:
        _out, err = proc.communicate(timeout=10)
    except (TimeoutExpired, ValueError):
        return "(stderr unreadable)"
    text = err.decode(errors="replace") if isinstance(err, bytes) else (err or "")
    return text[-4000:]


def _kill_all(procs: Sequence[Popen[Any]]) -> None:
    """Kill the workers still running and close every worker's pipes."""
    for p in procs:
        if p.poll() is None:
            p.kill()
        try:
            p.communicate(timeout=30)
        except (TimeoutExpired, ValueError):
            pass


def wait_ready(
    procs: Sequence[Popen[Any]],
    ready_paths: Sequence[str | os.PathLike[str]],
    timeout: float = READY_TIMEOUT_S,
) -> None:
    """Test side: return once every worker's ready file exists. A worker that exits before it
    is ready fails at once with its stderr; no readiness within `timeout` fails naming who
    is late. On failure every worker still running is killed."""
    assert len(procs) == len(ready_paths), (len(procs), len(ready_paths))
    pending = list(range(len(procs)))
    deadline = time.monotonic() + timeout
    while pending:
        for i in list(pending):
            if os.path.exists(ready_paths[i]):
                pending.remove(i)
            elif procs[i].poll() is not None:
                rc = procs[i].returncode
                err = _stderr_of(procs[i])
                _kill_all(procs)
                raise AssertionError(
                    f"worker {i} (pid {procs[i].pid}) exited with {rc} before it was ready "
                    f"({os.fspath(ready_paths[i])} not written); its stderr:\n{err}"
                )
        if pending and time.monotonic() > deadline:
            late = [f"worker {i} (pid {procs[i].pid}): {os.fspath(ready_paths[i])}" for i in pending]
            _kill_all(procs)
            raise AssertionError(f"not ready within {timeout} s: " + "; ".join(late))
        if pending:
            time.sleep(POLL_S)


def open_gate(go: str | os.PathLike[str]) -> None:
    """Test side: let every worker waiting for `go` start."""
    write_atomically(go, "go")


def release(
    procs: Sequence[Popen[Any]],
    ready_paths: Sequence[str | os.PathLike[str]],
    go: str | os.PathLike[str],
    timeout: float = READY_TIMEOUT_S,
) -> None:
    """Test side: wait until every worker is ready (see `wait_ready`), then open the gate."""
    wait_ready(procs, ready_paths, timeout)
    open_gate(go)
