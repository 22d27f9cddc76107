"""What the kill tests share (tests/faults/test_faults_kill.py, tests/streaming/test_streaming_sink_kill.py,
tests/spark4/test_spark4_streaming_kill.py): a process started in its own process group (its JVM
and Python workers die with it), killed with SIGKILL, and a `sitecustomize` put on its
PYTHONPATH that hooks icefloe's Python boundary functions. The hooks exist only in the
tests' processes: production code has no fault points and reads no fault variables. A hook
reports what it reached by appending a line to an events file (`ICEFLOE_KILL_EVENTS`)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

EVENTS_VAR = "ICEFLOE_KILL_EVENTS"
TESTS = Path(__file__).resolve().parents[1]  # on the workers' PYTHONPATH: `support` imports there


def install_sitecustomize(folder: Path, source: str) -> Path:
    """`folder/site/sitecustomize.py` holding `source`; the folder to put on PYTHONPATH."""
    site = folder / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(source)
    return site


def hooked_env(site: Path, events: Path, **extra: str) -> dict[str, str]:
    """This process's environment with `site` first on PYTHONPATH (inherited by the Python
    workers Spark starts), then tests/ (for `python -m support.workers.<name>`), and the
    events file named."""
    return {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "PYTHONPATH": os.pathsep.join([str(site), str(TESTS), os.environ.get("PYTHONPATH", "")]),
        EVENTS_VAR: str(events),
        **extra,
    }


def read_events(events: Path, offset: int = 0) -> list[list[str]]:
    """The events appended after byte `offset`, each split into words."""
    if not events.exists():
        return []
    with open(events) as f:
        f.seek(offset)
        return [line.split() for line in f.read().splitlines() if line.strip()]


class Killable:
    """A Python program (`python -c source json(args)`, or `python -m module json(args)`) in
    its own process group, its stderr (and stdout unless piped) in `log`."""

    def __init__(
        self,
        source: str | None,
        args: Any,
        log: Path,
        env: dict[str, str] | None = None,
        pipe_stdout: bool = False,
        module: str | None = None,
    ) -> None:
        import json

        assert (source is None) != (module is None), "a source or a module, not both"
        program = ["-m", module] if module is not None else ["-c", str(source)]
        self.log_path = log
        self.log: IO[str] = open(log, "w")  # closed in wait()
        self.proc = subprocess.Popen(
            [sys.executable, *program, json.dumps(args)],
            stdout=subprocess.PIPE if pipe_stdout else self.log,
            stderr=self.log if pipe_stdout else subprocess.STDOUT,
            text=True,
            env=env or {**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
        )

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.wait(60)

    def wait(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            if self.proc.returncode is not None and not self.log.closed:
                self.log.close()

    def tail(self, chars: int = 3000) -> str:
        return self.log_path.read_text()[-chars:] if self.log_path.exists() else ""
