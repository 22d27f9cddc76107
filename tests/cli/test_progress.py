"""Long maintenance work shows `rich` progress bars on a terminal and stays quiet otherwise:
the same script (expire_snapshots deleting files, an in-process rewrite_data_files) runs
once with stderr on a pseudo-terminal and once with stderr on a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from support.start_gate import worker_env

SCRIPT = "support.workers.progress_script"  # a rewrite and an expire of 8 data files


def _run(tmp_path: Path, terminal: bool) -> tuple[str, str]:
    env = worker_env(TERM="xterm", COLUMNS="120")
    env.pop("ICEFLOE_PROGRESS", None)
    args = [sys.executable, "-m", SCRIPT, str(tmp_path / ("tty" if terminal else "pipe"))]
    if not terminal:
        proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, proc.stderr
    master, slave = pty.openpty()
    proc2 = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    out, _ = proc2.communicate(timeout=300)
    os.close(master)
    err = b"".join(chunks).decode(errors="replace")
    assert proc2.returncode == 0, err
    return out.decode(), err


def test_bars_on_a_terminal_only(tmp_path: Path) -> None:
    out, err = _run(tmp_path, terminal=True)
    assert out.strip().startswith("done")
    # Both operations drew a bar that reached its total.
    assert "rewrite_data_files db.t" in err and "file groups" in err, err
    assert "expire_snapshots db.t: deleting files" in err, err
    deleted = int(out.split()[1])
    assert f"{deleted}/{deleted}" in err, err

    out, err = _run(tmp_path, terminal=False)
    assert out.strip().startswith("done")
    assert err == "", err
