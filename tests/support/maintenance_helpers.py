"""Helpers shared by the maintenance tests (expiry and orphan removal against Java)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path


def visible_files(root: Path) -> set[str]:
    """Files under `root` (relative), none of whose path components is hidden (`.`, `_`):
    Hadoop's `.crc` side files and temp files are not what either engine decides about."""
    out = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "_")) or "=" in x]
        for f in files:
            if not f.startswith((".", "_")):
                out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def relative(location: str, root: Path) -> str:
    """A location (`file:/abs`, `file:///abs` or `/abs`) relative to `root`."""
    path = location
    if path.startswith("file://"):
        path = path[len("file://") :]
    elif path.startswith("file:"):
        path = path[len("file:") :]
    return os.path.relpath(path, root)


def ts_literal(ms: int) -> str:
    """A Spark SQL TIMESTAMP literal (session time zone UTC) for epoch milliseconds."""
    t = dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc)
    return "TIMESTAMP '" + t.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "'"
