"""Running the `icefloe` console script as a user does (its own environment, HOME and cwd), and
the small table the CLI tests read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("kind", pa.string())])


ICEFLOE = Path(sys.executable).parent / "icefloe"


def run(
    *args: str, home: Path | None = None, env: dict[str, str] | None = None, check: int | None = 0
) -> subprocess.CompletedProcess[str]:
    assert ICEFLOE.is_file(), f"the console script {ICEFLOE} is not installed (pyproject [project.scripts])"
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PYICEBERG_", "ICEFLOE_CATALOG"))}
    e.pop("COLUMNS", None)
    if home is not None:
        e["HOME"] = str(home)
    e.update(env or {})
    proc = subprocess.run(
        [str(ICEFLOE), *args], capture_output=True, text=True, env=e, timeout=120, cwd=home or None
    )
    if check is not None:
        assert proc.returncode == check, (
            f"icefloe {' '.join(args)}: exit {proc.returncode}, expected {check}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
        )
    return proc


def run_json(*args: str, **kw: Any) -> Any:
    return json.loads(run("--json", *args, **kw).stdout)


def rows(n: int, start: int = 0, kind: str = "a") -> pa.Table:
    return pa.table({"id": list(range(start, start + n)), "kind": [kind] * n}, schema=SCHEMA)
