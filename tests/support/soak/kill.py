"""The soak's killed writer (see `support.soak`): an icefloe append in its own process, killed
with SIGKILL at a random moment of its write and commit. The table afterwards holds the write
whole or not at all, and an orphan removal leaves exactly the files the table references (as
Java's metadata tables list them), none missing."""

from __future__ import annotations

import datetime as dt
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from support.oracle import Oracle
from support.soak.files import local_path, referenced_files

# Runs in the writer's process: the rows from a Parquet file appended to the table through
# icefloe's filesystem catalog; "ready" once everything is loaded, so that the kill falls in the
# write or the commit rather than in the imports.
_WRITER = """
import sys
import pyarrow.parquet as pq
import icefloe
warehouse, name, rows = sys.argv[1:4]
table = icefloe.load_catalog("local", type="filesystem", warehouse=warehouse).load_table(name)
data = pq.read_table(rows)
print("ready", flush=True)
table.append(data)
print("done", flush=True)
"""


def killed_append(catalog: Any, name: str, rows: pa.Table, tmp: Path, delay: float) -> tuple[bool, str]:
    """Appends `rows` to `name` in a writer process killed `delay` seconds after it is ready to
    write. Returns whether the append committed (main moved) and what happened, for the log."""
    before = catalog.load_table(name).current_snapshot()
    path = tmp / f"killed-{time.monotonic_ns()}.parquet"
    pq.write_table(rows, path)
    warehouse = catalog.properties["warehouse"]
    proc = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(warehouse), name, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    line = proc.stdout.readline().strip() if ready else ""
    if line != "ready":
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"the writer of {name} did not start: {line!r} {err[-2000:]}")
    time.sleep(delay)
    finished_first = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    out, err = proc.communicate()
    if finished_first and proc.returncode != 0:
        raise AssertionError(f"the writer of {name} failed before the kill: {err[-2000:]}")
    after = catalog.load_table(name).current_snapshot()
    committed = after is not None and (before is None or after.snapshot_id != before.snapshot_id)
    how = "finished before the kill" if "done" in out else f"killed after {delay * 1000:.1f} ms"
    return committed, f"killed append: {how}, {'committed' if committed else 'not committed'}"


def assert_no_leftovers(oracle: Oracle, catalog: Any, name: str, where: str) -> None:
    """After icefloe's orphan removal (any age), the files under the table's location are
    exactly those Java's metadata tables reference, plus the filesystem catalog's version hint
    and hidden files."""
    table = catalog.load_table(name)
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1)
    table.maintenance.remove_orphan_files(older_than=later, allow_recent=True)
    root = local_path(table.location())
    on_disk = {str(Path(d) / f) for d, _, fs in os.walk(root) for f in fs}
    referenced = {str(local_path(f)) for f in referenced_files(oracle, name)}
    # Hidden files (Hadoop's `.crc` checksums of the files Java wrote) are not the table's: Java's
    # orphan removal skips names starting with "." or "_", and so does icefloe's
    extra = sorted(
        f for f in on_disk - referenced if not f.endswith("version-hint.text") and Path(f).name[0] not in "._"
    )
    missing = sorted(referenced - on_disk)
    assert not extra, f"{where}: {name} keeps files nothing references after the kill: {extra[:5]}"
    assert not missing, f"{where}: {name} references files no longer there: {missing[:5]}"
