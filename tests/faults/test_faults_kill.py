"""A writer (append, overwrite, copy-on-write and merge-on-read delete) SIGKILLed at each
phase of its write and commit. The fault points are hooks a test-only `sitecustomize`
(tests/support/kill_harness.py) puts on icefloe's Python boundary functions in the writer process:

- `data`: the write's data (or position-delete) files are written (`_native.write_data_files`
  / `_native.delete_rows` returned);
- `manifests`: its manifests are written, the manifest list is not. One native call (the
  snapshot producer: `merge_append`, `overwrite_files`, `row_delta`) writes both, so the hook
  kills after it returns and first removes the manifest list it wrote: the files on disk are
  then those a kill between the two writes leaves;
- `manifest_list`: the producer returned (manifests and manifest list written);
- `metadata_file`: the new table metadata file is written (`_io.write_new` of the
  `*.metadata.json` returned). In the filesystem catalog that file *is* the pointer (created
  by a hard link, all or nothing), with `version-hint.text` not yet updated; in the SQL
  catalog the pointer (its row) has not moved yet;
- `pointer`: the catalog's commit returned (pointer moved), before the writer's
  after-commit clean-up.

After each kill the table is readable by icefloe and Iceberg Java, holds the whole write
(the pointer moved) or none of it, and `remove_orphan_files` with `older_than` in the
future deletes exactly the files of a write that did not commit (every file under the table
location, hidden ones included, is then as before it) and nothing of one that did."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import icefloe
import pytest
import support.workers
from icefloe import _io
from support.fault_ops import OPS, create, ids_of
from support.kill_harness import Killable, hooked_env, install_sitecustomize, read_events
from support.oracle import Oracle, java_plan

pytestmark = pytest.mark.interop

# The kill tests' sitecustomize: hooks icefloe's boundary functions and SIGKILLs the writer at
# ICEFLOE_FAULT_POINT (copied into the writer's PYTHONPATH, never imported by the tests).
FAULT_POINTS = Path(support.workers.__file__).parent / "fault_points_site.py"


PHASES = ["data", "manifests", "manifest_list", "metadata_file", "pointer"]


def files_under(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("*") if p.is_file()}


def kill_at(point: str, props: dict[str, str], name: str, op: str, tmp_path: Path) -> None:
    """Runs `op` on table `name` in a writer that is SIGKILLed at `point`."""
    site = install_sitecustomize(tmp_path, FAULT_POINTS.read_text())
    events = tmp_path / f"events-{uuid.uuid4().hex[:8]}"
    writer = Killable(
        None,
        [props, name, op],
        tmp_path / f"{name}.log",
        hooked_env(site, events, ICEFLOE_FAULT_POINT=point),
        module="support.workers.fault_writer",
    )
    rc = writer.wait(120)
    assert read_events(events) == [["reached", point]], f"{op} at {point}: rc {rc}\n{writer.tail()}"
    assert rc == -9, f"{op} at {point}: rc {rc}\n{writer.tail()}"


@dataclass
class Case:
    """A table about to be written by a writer that gets killed: its state before."""

    name: str
    op: str
    table_dir: Path
    ids: set[int]
    snapshot: int | None
    files: set[str]


def prepare(catalog: Any, name: str, op: str) -> Case:
    table = create(catalog, name, op)
    table_dir = Path(_io.local_path(table.location()))
    return Case(
        name, op, table_dir, ids_of(table), table.metadata.current_snapshot_id, files_under(table_dir)
    )


def check_after_kill(catalog: Any, case: Case, point: str, committed: bool) -> set[int]:
    """Everything or nothing of the write is in the table; orphan-file removal deletes the
    write's files if it did not commit, nothing if it did. The table's ids."""
    op, table = case.op, catalog.load_table(case.name)
    want = OPS[op].after(case.ids) if committed else case.ids
    got = ids_of(table)
    assert got == want, f"{op} killed at {point}: {len(got)} rows, expected {len(want)} ({committed=})"
    assert (table.metadata.current_snapshot_id != case.snapshot) == committed, (op, point)
    left = files_under(case.table_dir) - case.files
    assert left, f"{op} killed at {point} left no file: the fault point was not inside the write"
    result = table.maintenance.remove_orphan_files(
        older_than=datetime.now(timezone.utc) + timedelta(hours=1), allow_recent=True
    )
    assert result.failed_deletes == ()
    orphans = {_io.local_path(p) for p in result.orphan_file_locations}
    if committed:
        assert orphans == set(), f"{op} at {point}: live files taken for orphans: {orphans}"
        assert files_under(case.table_dir) == case.files | left
    else:
        assert orphans == left, f"{op} at {point}: orphans {orphans}, the write's files {left}"
        assert files_under(case.table_dir) == case.files, f"{op} at {point}: files left after clean-up"
    assert ids_of(catalog.load_table(case.name)) == want
    return want


@pytest.mark.timeout(600)
@pytest.mark.parametrize("op", list(OPS))
def test_filesystem_catalog_writer_killed_at_each_phase(
    op: str, catalog: Any, warehouse: Path, oracle: Oracle, tmp_path: Path
) -> None:
    props = {"name": "local", "type": "filesystem", "warehouse": str(warehouse)}
    expected = {}
    for point in PHASES:
        case = prepare(catalog, f"db.kill_{op}_{point}_{uuid.uuid4().hex[:6]}", op)
        kill_at(point, props, case.name, op, tmp_path)
        # The metadata file is the filesystem catalog's pointer.
        committed = point in ("metadata_file", "pointer")
        expected[case.name] = check_after_kill(catalog, case, point, committed)
    # Iceberg Java reads every one of them (past the stale version hint, too) the same.
    for name, ids in expected.items():
        java = {r["id"] for r in oracle.sql(f"SELECT id FROM {oracle.qualified(name)}")}
        assert java == ids, f"{name}: Java reads {len(java)} rows, expected {len(ids)}"


@pytest.mark.timeout(600)
@pytest.mark.parametrize("op", ["append", "delete_mor"])
def test_sql_catalog_writer_killed_between_metadata_file_and_pointer(
    op: str, oracle: Oracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "wh"
    props = {"name": "k", "type": "sql", "uri": f"sqlite:///{tmp_path}/c.db", "warehouse": str(warehouse)}
    catalog = icefloe.load_catalog(**props)
    catalog.create_namespace("db")
    for point, committed in [("metadata_file", False), ("pointer", True)]:
        case = prepare(catalog, f"db.kill_{point}", op)
        kill_at(point, props, case.name, op, tmp_path)
        check_after_kill(catalog, case, point, committed)
        # Iceberg Java plans the same files from the metadata the catalog points at.
        table = catalog.load_table(case.name)
        java_scan = oracle.java_table_at(table.metadata_location).newScan()
        java_files = {path for path, _deletes in java_plan(java_scan)}
        ours = {t.file_path for t in table.scan().plan_files()}
        assert java_files == ours, (point, java_files, ours)
