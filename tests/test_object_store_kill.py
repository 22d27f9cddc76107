"""A writer killed with SIGKILL at random points of its appends and commits, with the table on
the S3 server (filesystem catalog: conditional-create commits; SQL catalog: conditional UPDATE
with the warehouse on S3): after every kill the table is readable, each write is there whole
or not at all, the writer's committed writes have no hole, and every file any snapshot
references exists on the store with the size its manifest records.

(Objects of the killed, uncommitted write may remain: nothing is left to delete them but
orphan-file removal, which is table maintenance.)"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import icefloe
import pytest
from icefloe import _io
from servers.s3 import BUCKET, S3Server
from test_concurrency_processes import SCHEMA, SPEC, kill_writers_at_random_points


@pytest.fixture(params=["filesystem", "sql"])
def setup(request: pytest.FixtureRequest, s3: S3Server, tmp_path: Path) -> tuple[dict[str, str], Any]:
    warehouse = f"s3://{BUCKET}/kill-{uuid.uuid4().hex[:8]}/wh"
    props: dict[str, str] = {"name": "k", "type": request.param, "warehouse": warehouse, **s3.properties()}
    if request.param == "sql":
        props["uri"] = f"sqlite:///{tmp_path}/c.db"
    catalog = icefloe.load_catalog(**props)
    catalog.create_namespace("db")
    return props, catalog


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
