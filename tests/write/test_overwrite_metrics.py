"""Overwrite / delete by filter decide from metadata first (issue 5): files every row of which
provably matches (strict partition projection or StrictMetricsEvaluator) are dropped whole
without being opened, files that cannot match (inclusive evaluators) are never opened, and
only the rest are read and rewritten — so `added-data-files` counts only partial rewrites.
Proof that a file was not read: its bytes are replaced with garbage before the operation.

Also: `validate_added_files_match_filter` (Java's `validateAddedFilesMatchOverwriteFilter`),
`write.metadata.delete-after-commit.enabled` with `write.metadata.previous-versions-max`, and
the cleanup of files of task attempts that are not in a successful commit."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.catalog import Catalog
from icefloe.exceptions import ValidationError
from icefloe.partitioning import PartitionField, PartitionSpec

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())])
SPEC = PartitionSpec(PartitionField(2, 1000, "identity", "region"))


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    c = icefloe.load_catalog("m", type="filesystem", warehouse=str(tmp_path / "wh"))
    c.create_namespace("db")
    return c


def rows(ids: range, region: str) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "region": [region] * len(ids)}, schema=SCHEMA)


def files_by_first_id(table: Any) -> dict[tuple[str, int], str]:
    """Live data files keyed by (region, smallest id), read from their stats."""
    out = {}
    for t in table.scan(include_column_stats=True).plan_files():
        lo = int.from_bytes(t.file.lower_bounds[1], "little", signed=True)
        region = t.file.partition[0] if t.file.partition else "eu"  # unpartitioned tables: all eu
        out[(region, lo)] = t.file.file_path
    return out


def poison(path: str) -> None:
    """Replaces a file's bytes (same size) so any read of it fails."""
    size = os.path.getsize(path)
    Path(path).write_bytes(b"\0" * size)


def ids(table: Any) -> list[tuple[int, str]]:
    return sorted((r["id"], r["region"]) for r in table.scan().to_arrow().to_pylist())


def test_delete_drops_provably_matching_files_unread_and_rewrites_only_partial_ones(catalog: Catalog) -> None:
    t = catalog.create_table("db.d", schema=SCHEMA)  # unpartitioned: column stats decide
    for lo in (0, 10, 20):
        t.append(rows(range(lo, lo + 10), "eu"))
    files = files_by_first_id(t)
    before = t.current_snapshot()
    assert before is not None
    poison(files[("eu", 0)])  # every row < 15: dropped by the strict metrics, unread
    poison(files[("eu", 20)])  # no row < 15: the inclusive metrics skip it
    snap = t.delete("id < 15")
    assert snap is not None
    s = snap.summary
    assert s.operation == "overwrite"  # removed two, added the rewrite of one
    assert (s["deleted-data-files"], s["added-data-files"]) == ("2", "1")
    assert (s["deleted-records"], s["added-records"], s["total-records"]) == ("20", "5", "15")
    live = files_by_first_id(t)
    assert sorted(live) == [("eu", 15), ("eu", 20)]
    with pytest.raises(Exception):  # noqa: B017 - the poison works: reading such a file fails
        t.scan(snapshot_id=before.snapshot_id, row_filter="id < 10").to_arrow()


def test_overwrite_by_partition_drops_whole_partition_unread(catalog: Catalog) -> None:
    t = catalog.create_table("db.p", schema=SCHEMA, partition_spec=SPEC)
    t.append(pa.concat_tables([rows(range(0, 5), "eu"), rows(range(5, 9), "us")]))
    files = files_by_first_id(t)
    poison(files[("eu", 0)])  # strict partition projection: dropped unread
    poison(files[("us", 5)])  # inclusive partition projection: never opened
    snap = t.overwrite(rows(range(100, 102), "eu"), "region = 'eu'")
    assert snap is not None
    assert (snap.summary["deleted-data-files"], snap.summary["added-data-files"]) == ("1", "1")
    assert snap.summary["added-records"] == "2"
    # A filter over partition and column: the residual for partition `eu` is `id >= 100`,
    # which the file's stats prove; `us` cannot match.
    snap = t.delete("region = 'eu' and id >= 100")
    assert snap is not None and snap.summary.operation == "delete"
    assert (snap.summary["deleted-data-files"], snap.summary.get("added-data-files")) == ("1", None)
    assert snap.summary["total-records"] == "4"


def test_partial_file_that_turns_out_to_match_wholly_is_dropped_without_rewrite(catalog: Catalog) -> None:
    t = catalog.create_table("db.w", schema=SCHEMA)
    t.append(rows(range(0, 10, 2), "eu"))  # even ids 0..8: stats cannot prove `id % 2 == 0`
    snap = t.delete("id in (0, 2, 4, 6, 8)")
    assert snap is not None and snap.summary.operation == "delete"
    assert snap.summary.get("added-data-files") is None
    assert ids(t) == []


def test_validate_added_files_match_filter(catalog: Catalog, tmp_path: Path) -> None:
    t = catalog.create_table("db.v", schema=SCHEMA, partition_spec=SPEC)
    t.append(pa.concat_tables([rows(range(0, 3), "eu"), rows(range(3, 6), "us")]))
    before = t.current_snapshot()
    data_dir = Path(t.location()) / "data"
    on_disk = sorted(str(p) for p in data_dir.rglob("*") if p.is_file())
    with pytest.raises(ValidationError, match="do not match the overwrite filter"):
        t.overwrite(rows(range(10, 12), "us"), "region = 'eu'", validate_added_files_match_filter=True)
    t.refresh()
    assert t.current_snapshot() == before
    assert sorted(str(p) for p in data_dir.rglob("*") if p.is_file()) == on_disk, "its files were deleted"
    # Files proven to match (by partition) pass; without the option nothing is checked (Java's
    # Spark overwrite(expr) default).
    t.overwrite(rows(range(10, 12), "eu"), "region = 'eu'", validate_added_files_match_filter=True)
    t.overwrite(rows(range(20, 22), "us"), "region = 'eu'")
    assert ids(t) == [(3, "us"), (4, "us"), (5, "us"), (20, "us"), (21, "us")]


def test_delete_after_commit_keeps_previous_versions_max(catalog: Catalog) -> None:
    t = catalog.create_table(
        "db.m",
        schema=SCHEMA,
        properties={
            "write.metadata.delete-after-commit.enabled": "true",
            "write.metadata.previous-versions-max": "2",
        },
    )
    meta_dir = Path(t.location()) / "metadata"
    first = t.metadata_location
    for i in range(5):
        t.append(rows(range(i, i + 1), "eu"))
    on_disk = sorted(str(p) for p in meta_dir.glob("*.metadata.json"))
    log = [str(e["metadata-file"]) for e in t.metadata.metadata_log()]
    assert len(log) == 2
    assert on_disk == sorted([*(_local(p) for p in log), _local(t.metadata_location)])
    assert not Path(_local(first)).exists()
    assert len(ids(catalog.load_table("db.m"))) == 5

    # Off (the default): every metadata file stays.
    t2 = catalog.create_table(
        "db.keep", schema=SCHEMA, properties={"write.metadata.previous-versions-max": "2"}
    )
    for i in range(4):
        t2.append(rows(range(i, i + 1), "eu"))
    assert len(list((Path(t2.location()) / "metadata").glob("*.metadata.json"))) == 5


def _local(p: str) -> str:
    return p[len("file:") :] if p.startswith("file:") else p


def test_files_of_attempts_not_in_a_successful_commit_are_deleted(catalog: Catalog) -> None:
    """The hook Spark writes use (`_commit_data_files(..., write_id=...)`), with a file planted
    where a failed task attempt would leave it (same write id, another task id)."""
    from icefloe import _native

    t = catalog.create_table("db.g", schema=SCHEMA, partition_spec=SPEC)
    write_id = t._new_write_id()
    committed = _native.write_data_files(t.metadata, rows(range(0, 4), "eu").to_reader(), write_id, 1)
    failed_attempt = _native.write_data_files(t.metadata, rows(range(0, 2), "eu").to_reader(), write_id, 2)
    other_write = _native.write_data_files(
        t.metadata, rows(range(9, 10), "us").to_reader(), t._new_write_id(), 3
    )
    snap = t._commit_data_files(list(committed), write_id=write_id)
    assert snap is not None and snap.summary["added-records"] == "4"

    def path(descriptor: str) -> str:
        return _local(json.loads(descriptor)["file_path"])

    assert all(os.path.exists(path(d)) for d in committed)
    assert not any(os.path.exists(path(d)) for d in failed_attempt), "the failed attempt's file is gone"
    assert all(os.path.exists(path(d)) for d in other_write), "another write's files are untouched"
    assert ids(t) == [(i, "eu") for i in range(4)]
