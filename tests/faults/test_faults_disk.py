"""Disk full and permission denied in the middle of a write (append, overwrite, copy-on-write
and merge-on-read delete; filesystem catalog, local warehouse), at each of its writes: the
data (or delete) files, the manifests, the new table metadata file. Each time the write
fails with IcefloeIOError naming the file and the OS's reason, nothing is committed (same
snapshot, same rows), nothing is left behind (the files under the table location, hidden
ones included, are those before the write), and once the fault is gone the same write goes
through.

Disk full: the warehouse lives on a small tmpfs (this needs root or CAP_SYS_ADMIN, as the
test machines and CI have: a failed mount fails the tests, it never skips them) filled up to
leave exactly the room the writes before the one that must fail need, in pages: what they
take is measured on a twin table that runs the same write on the same tmpfs first.

Permission denied: root ignores file modes (CAP_DAC_OVERRIDE), so the writer runs in a
subprocess without that capability (`setpriv --bounding-set`: the tests' Python lives in
root's home, which `nobody` cannot reach), with the folder of the write that must fail made
read-only (the table metadata file alone: manifests go elsewhere by `write.metadata.path`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import icefloe
import pytest
from icefloe.exceptions import IcefloeIOError
from support.fault_ops import OPS, create, ids_of
from support.start_gate import worker_env

PAGE = os.sysconf("SC_PAGE_SIZE")
TMPFS_SIZE = 32 * 1024 * 1024
# Where each write leaves its files, and how the failing one's path looks in the error.
PHASES = {
    "data": r"/db/\w+/data/[^ ]+\.parquet",
    "manifest": r"/db/\w+/metadata/[0-9a-f-]+-m\d+\.avro",
    "metadata": r"/db/\w+/metadata/v3\.metadata\.json",
}


def files_under(root: Path) -> dict[str, int]:
    """Every file (hidden ones too) under `root`, with its size."""
    return {str(p): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def pages(size: int) -> int:
    return -(-size // PAGE)


@pytest.fixture(scope="module")
def tmpfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    mnt = tmp_path_factory.mktemp("tmpfs")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.fail(
            f"cannot mount a tmpfs at {mnt} ({done.stderr.strip()}): the disk-full tests need root or "
            "CAP_SYS_ADMIN (as the test machines and CI have)",
            pytrace=False,
        )
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def free_bytes(path: Path) -> int:
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def leave_free(mnt: Path, room: int) -> Path:
    """Fills the tmpfs so that exactly `room` pages stay free."""
    filler = mnt / "filler"
    want = free_bytes(mnt) - room * PAGE
    assert want >= 0, f"the tmpfs is too small: {free_bytes(mnt)} bytes free, {room} pages wanted"
    with open(filler, "wb") as f:
        chunk = b"\0" * (1 << 20)
        while want > 0:
            want -= f.write(chunk[: min(len(chunk), want)])
    assert free_bytes(mnt) == room * PAGE, (free_bytes(mnt), room * PAGE)
    return filler


def room_before(phase: str, new_files: dict[str, int]) -> int:
    """Pages the writes before `phase` take, from the twin's new files; a manifest or
    manifest list close to a page boundary (their snapshot ids differ in length by a byte or
    two) would make that count uncertain, and fails the test instead of letting it guess."""
    data = [s for p, s in new_files.items() if "/data/" in p]
    avro = [s for p, s in new_files.items() if p.endswith(".avro")]
    assert data, f"the twin's write made no data file: {sorted(new_files)}"
    assert avro, f"the twin's write made no manifest: {sorted(new_files)}"
    if phase == "data":
        return 0
    if phase == "manifest":
        return sum(pages(s) for s in data)
    for s in avro:
        assert 32 <= s % PAGE <= PAGE - 32, f"a manifest of {s} bytes is too close to a page boundary"
    return sum(pages(s) for s in data + avro)


@pytest.mark.parametrize("phase", list(PHASES))
@pytest.mark.parametrize("op", list(OPS))
def test_disk_full_fails_cleanly(tmpfs: Path, op: str, phase: str) -> None:
    for child in tmpfs.iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    catalog = icefloe.load_catalog("full", type="filesystem", warehouse=str(tmpfs / "wh"))
    catalog.create_namespace("db")
    table, twin = create(catalog, "db.ta", op), create(catalog, "db.tb", op)
    twin_dir = tmpfs / "wh" / "db" / "tb"
    before_twin = files_under(twin_dir)
    OPS[op].run(twin)
    new_files = {p: s for p, s in files_under(twin_dir).items() if p not in before_twin}
    shutil.rmtree(twin_dir)

    table_dir = tmpfs / "wh" / "db" / "ta"
    before = files_under(table_dir)
    snapshot, ids = table.metadata.current_snapshot_id, ids_of(table)
    filler = leave_free(tmpfs, room_before(phase, new_files))
    with pytest.raises(IcefloeIOError) as failed:
        OPS[op].run(table)
    message = str(failed.value)
    assert "No space left on device" in message, message
    assert re.search(PHASES[phase], message), f"expected the {phase} file's path in: {message}"

    assert files_under(table_dir) == before, "the failed write left files behind"
    reloaded = catalog.load_table("db.ta")
    assert reloaded.metadata.current_snapshot_id == snapshot
    assert ids_of(reloaded) == ids

    filler.unlink()
    OPS[op].run(reloaded)
    assert ids_of(catalog.load_table("db.ta")) == OPS[op].after(ids)


PERM_OPS = ["append", "overwrite", "delete_mor"]


@dataclass
class Denied:
    """A table whose write was denied: its files and state before, and what the writer got."""

    catalog: Any
    name: str
    table_dir: Path
    files: dict[str, int]
    snapshot: int | None
    ids: set[int]
    error: tuple[str, str] = ("", "")


@pytest.fixture(scope="module")
def denied(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Denied]:
    """Every (operation, phase) run on a table of its own, in one writer process that file
    modes bind (without CAP_DAC_OVERRIDE: `setpriv --bounding-set`; `nobody` cannot run the
    tests' Python, which lives in root's home)."""
    if shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run a writer without CAP_DAC_OVERRIDE", pytrace=False)
    warehouse = tmp_path_factory.mktemp("perm") / "wh"
    catalog = icefloe.load_catalog("perm", type="filesystem", warehouse=str(warehouse))
    catalog.create_namespace("db")
    cases: dict[tuple[str, str], Denied] = {}
    read_only = []
    for op in PERM_OPS:
        for phase in PHASES:
            name = f"db.{op}_{phase}"
            table_dir = warehouse / "db" / f"{op}_{phase}"
            # The table metadata file alone denied: the manifests go to a folder of their own.
            props = {"write.metadata.path": str(table_dir / "manifests")} if phase == "metadata" else {}
            table = create(catalog, name, op, props)
            cases[(op, phase)] = Denied(
                catalog,
                name,
                table_dir,
                files_under(table_dir),
                table.metadata.current_snapshot_id,
                ids_of(table),
            )
            read_only.append(table_dir / ("data" if phase == "data" else "metadata"))
    for d in read_only:
        d.chmod(0o555)
    try:
        done = subprocess.run(
            [
                "setpriv",
                "--bounding-set=-dac_override,-dac_read_search,-fowner",
                sys.executable,
                "-m",
                "support.workers.denied_writer",
                json.dumps([str(warehouse), [[c.name, op] for (op, _), c in cases.items()]]),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env=worker_env(),
        )
    finally:
        for d in read_only:
            d.chmod(0o755)
    assert done.returncode == 0, done.stderr[-3000:]
    errors = json.loads(done.stdout.strip().splitlines()[-1])
    for c in cases.values():
        c.error = tuple(errors[c.name])
    return cases


@pytest.mark.parametrize("phase", list(PHASES))
@pytest.mark.parametrize("op", PERM_OPS)
def test_permission_denied_fails_cleanly(denied: dict[tuple[str, str], Denied], op: str, phase: str) -> None:
    case = denied[(op, phase)]
    kind, message = case.error
    assert kind == "IcefloeIOError", (kind, message)
    assert "Permission denied" in message, message
    assert re.search(PHASES[phase], message), f"expected the {phase} file's path in: {message}"
    assert files_under(case.table_dir) == case.files, "the failed write left files behind"
    reloaded = case.catalog.load_table(case.name)
    assert reloaded.metadata.current_snapshot_id == case.snapshot
    assert ids_of(reloaded) == case.ids
    # The folder writable again: the same write goes through.
    OPS[op].run(reloaded)
    assert ids_of(case.catalog.load_table(case.name)) == OPS[op].after(case.ids)
