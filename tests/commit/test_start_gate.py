"""The start gate (tests/support/start_gate.py) the process tests race their workers with: no worker
passes it before every worker is ready; a worker that dies before it is ready, or one that is
never ready, fails the release at once with what went wrong, and no go file is written."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.start_gate import ready_path, ready_then_wait, release, worker_env

# The worker (support/workers/gate_worker.py) sleeps `delay` s, then is ready and waits for go,
# printing when it was ready, when it passed the gate and whether go existed before it was ready.
WORKER = "support.workers.gate_worker"


def _spawn(ready: Path, go: Path, delay: float, fail: str = "") -> Any:
    return subprocess.Popen(
        [sys.executable, "-m", WORKER, json.dumps([str(ready), str(go), delay, fail])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=worker_env(),
    )


def test_no_worker_passes_before_every_worker_is_ready(tmp_path: Path) -> None:
    go = tmp_path / "go"
    delays = [0.0, 0.0, 1.5]  # the last one is slow to load
    readies = [ready_path(go, i) for i in range(len(delays))]
    procs = [_spawn(r, go, d) for r, d in zip(readies, delays)]
    release(procs, readies, go)
    assert all(r.exists() for r in readies) and go.exists()
    runs = []
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        runs.append(json.loads(out))
    assert [saw_go for _, _, saw_go in runs] == [False] * len(delays)
    last_ready = max(ready_at for ready_at, _, _ in runs)
    first_start = min(started_at for _, started_at, _ in runs)
    assert first_start >= last_ready, runs  # the fast workers waited for the slow one


def test_a_worker_dying_before_it_is_ready_fails_the_release_with_its_stderr(tmp_path: Path) -> None:
    go = tmp_path / "go"
    readies = [ready_path(go, i) for i in range(2)]
    waiting = _spawn(readies[0], go, 0.0)
    dying = _spawn(readies[1], go, 0.2, fail="no such table db.missing")
    started = time.monotonic()
    with pytest.raises(AssertionError) as e:
        release([waiting, dying], readies, go, timeout=120)
    assert time.monotonic() - started < 60, "the release failed at once, not at its timeout"
    message = str(e.value)
    assert "worker 1" in message and "exited with 1 before it was ready" in message, message
    assert "RuntimeError: the table could not be loaded: no such table db.missing" in message, message
    assert not go.exists()
    assert waiting.poll() is not None, "the other worker was killed"


def test_a_worker_never_ready_fails_the_release_at_its_timeout(tmp_path: Path) -> None:
    go = tmp_path / "go"
    readies = [ready_path(go, i) for i in range(2)]
    procs = [_spawn(readies[0], go, 0.0), _spawn(readies[1], go, 120.0)]
    with pytest.raises(AssertionError, match=r"not ready within 3\.0 s: .*worker 1 \(pid \d+\)"):
        release(procs, readies, go, timeout=3.0)
    assert not go.exists()
    assert all(p.poll() is not None for p in procs), "every worker was killed"


def test_a_worker_gives_up_when_no_go_comes(tmp_path: Path) -> None:
    ready, go = tmp_path / "ready", tmp_path / "go"
    with pytest.raises(SystemExit, match="no go file"):
        ready_then_wait(ready, go, timeout=0.05)
    assert ready.read_text() == str(__import__("os").getpid())
    assert [p.name for p in tmp_path.iterdir()] == ["ready"], "no temporary file left"
