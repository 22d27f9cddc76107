"""A writer killed with SIGKILL at random points of its appends and commits, with the table on
the S3 server (filesystem catalog: conditional-create commits; SQL catalog: conditional UPDATE
with the warehouse on S3): after every kill the table is readable, each write is there whole
or not at all, the writer's committed writes have no hole, and every file any snapshot
references exists on the store with the size its manifest records.

Objects of the killed, uncommitted writes remain: nothing is left to delete them but
orphan-file removal, which is table maintenance. Run last with `older_than` in the future,
it leaves exactly the objects the table references, and the same rows."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from icefloe import _io
from support.catalogs import new_catalog
from support.racing_writers import SCHEMA, SPEC, kill_writers_at_random_points
from support.servers.s3 import BUCKET, S3Server


@pytest.fixture(params=["filesystem", "sql"])
def setup(request: pytest.FixtureRequest, s3: S3Server, tmp_path: Path) -> tuple[dict[str, str], Any]:
    warehouse = f"s3://{BUCKET}/kill-{uuid.uuid4().hex[:8]}/wh"
    return new_catalog(request, request.param, tmp_path, namespace="db", s3=s3, warehouse=warehouse)


def referenced_files(table: Any) -> dict[str, int]:
    """Every data and delete file of every snapshot, with its recorded size."""
    out: dict[str, int] = {}
    for s in table.snapshots():
        for task in table.scan(snapshot_id=s.snapshot_id).plan_files():
            out[task.file_path] = task.file.file_size_in_bytes
            for d in task.delete_files:
                out[d.file_path] = d.file_size_in_bytes
    return out


@pytest.mark.timeout(600)
def test_sigkilled_writer_on_s3_leaves_whole_writes_or_none(
    setup: tuple[dict[str, str], Any], tmp_path: Path
) -> None:
    props, catalog = setup
    catalog.create_table("db.kill", schema=SCHEMA, partition_spec=SPEC)

    def every_referenced_object_is_whole(table: Any) -> None:
        on_store = dict(_io.list_files(table.location()))
        for path, size in referenced_files(table).items():
            assert on_store.get(path) == size, (
                f"{path}: recorded {size} bytes, store has {on_store.get(path)}"
            )

    kill_writers_at_random_points(props, catalog, tmp_path, seed=11, check=every_referenced_object_is_whole)

    table = catalog.load_table("db.kill")
    rows = sorted(table.scan().to_arrow().to_pylist(), key=lambda r: sorted(r.items()))
    result = table.maintenance.remove_orphan_files(
        older_than=datetime.now(timezone.utc) + timedelta(hours=1), allow_recent=True
    )
    assert result.failed_deletes == ()
    table = catalog.load_table("db.kill")
    on_store = {p for p, _size in _io.list_files(table.location())}
    referenced = referenced_objects(table)
    assert on_store == referenced, (
        f"after orphan removal: not referenced {sorted(on_store - referenced)}, "
        f"missing {sorted(referenced - on_store)}"
    )
    assert sorted(table.scan().to_arrow().to_pylist(), key=lambda r: sorted(r.items())) == rows
    every_referenced_object_is_whole(table)


def referenced_objects(table: Any) -> set[str]:
    """Every object the table references: metadata files (current and logged), the version
    hint of a filesystem-catalog table, manifest lists, manifests, data and delete files."""
    inspect = table.inspect
    out = set(referenced_files(table))
    out |= set(inspect.all_manifests().column("path").to_pylist())
    out |= {s.manifest_list for s in table.snapshots() if s.manifest_list}
    out |= set(inspect.metadata_log_entries().column("file").to_pylist())
    out.add(table.metadata_location)
    hint = _io.join(table.location(), "metadata", "version-hint.text")
    if _io.exists(hint):
        out.add(hint)
    return out
