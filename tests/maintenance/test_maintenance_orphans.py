"""Orphan-file removal (`table.maintenance.remove_orphan_files`) against Apache Iceberg Java's
`CALL oracle.system.remove_orphan_files(...)` (the oracle).

Twins in time, as in test_maintenance_expire: one table (Java and icefloe writes, a
partition column named `_r` so its folders look hidden, statistics files, a short metadata
log, snapshots expired without cleaning their files) plus planted orphans (in data
folders, the metadata folder and a new folder; hidden ones; a young one) is aged four days
and copied. Each case restores it and runs icefloe, then restores it and runs Java; the
orphan locations reported, the files deleted and the rows both engines read after must
agree.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe import _native
from icefloe.exceptions import ValidationError
from support.maintenance_helpers import relative, ts_literal, visible_files
from support.oracle import Oracle, assert_same_rows, canonical_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

DAY_MS = 24 * 60 * 60 * 1000


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class Planted:
    def __init__(self, name: str, root: Path, backup: Path, rows: dict[int, Any]) -> None:
        self.name, self.root, self.backup, self.rows = name, root, backup, rows

    def restore(self) -> None:
        shutil.rmtree(self.root)
        shutil.copytree(self.backup, self.root)


def age_tree(root: Path, days: float) -> None:
    t = time.time() - days * 86400
    for d, _, files in os.walk(root):
        for f in files:
            os.utime(os.path.join(d, f), (t, t))


@pytest.fixture(scope="module")
def planted(spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, tmp_path_factory: Any) -> Planted:
    name = new_table_name("orphans")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, _r STRING) USING iceberg PARTITIONED BY (_r) TBLPROPERTIES ("
        "'format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.metadata.previous-versions-max'='3')"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1,'a'),(2,'b'),(3,'c')")
    t = catalog.load_table(name)
    t.append(pa.table({"id": [4, 5], "_r": ["a", "d"]}, schema=t.schema().as_arrow()))
    oracle.sql(f"DELETE FROM {q} WHERE id = 2")
    oracle.sql(f"DELETE FROM {q} WHERE _r = 'c'")
    oracle.sql(f"INSERT INTO {q} VALUES (6,'a')")
    oracle.sql(f"CALL oracle.system.compute_table_stats(table => '{name}')")
    # Two old snapshots expired without deleting their files: those are orphans now.
    t = catalog.load_table(name)
    first = t.snapshots()[1].snapshot_id
    t.maintenance.expire_snapshots(
        older_than=t.snapshot_by_id(first).timestamp_ms + 1, clean_expired_files=False
    )
    t = catalog.load_table(name)
    rows = {
        s.snapshot_id: canonical_rows(t.scan(snapshot_id=s.snapshot_id).to_arrow()) for s in t.snapshots()
    }

    root = warehouse / "db" / name.split(".")[1]
    for rel in [
        "data/_r=a/orphan-1.parquet",
        "data/_r=zz/orphan-2.parquet",
        "metadata/orphan.avro",
        "stray/x.bin",
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"orphan!")
    for rel in ["data/.hidden.parquet", "_tmp/y.parquet", "data/_r=a/_SUCCESS"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"hidden")
    age_tree(root, 4)
    (root / "data" / "_r=a" / "young.parquet").write_bytes(b"young")
    backup = tmp_path_factory.mktemp("orphans_backup") / "t"
    shutil.copytree(root, backup)
    return Planted(name, root, backup, rows)


def check_reads(p: Planted, oracle: Oracle, catalog: Any) -> None:
    t = catalog.load_table(p.name)
    assert_same_rows(oracle.df(p.name), t.scan().to_arrow(), context="current rows, Java vs icefloe")
    for s in t.snapshots():
        assert_same_rows(t.scan(snapshot_id=s.snapshot_id).to_arrow(), p.rows[s.snapshot_id])


def java_call(p: Planted, oracle: Oracle, older_than: int, **args: Any) -> list[str]:
    parts = [f"table => '{p.name}'", f"older_than => {ts_literal(older_than)}"]
    if args.get("location"):
        parts.append(f"location => '{args['location']}'")
    if args.get("dry_run"):
        parts.append("dry_run => true")
    if args.get("prefix_mismatch_mode"):
        parts.append(f"prefix_mismatch_mode => '{args['prefix_mismatch_mode'].upper()}'")
    rows = oracle.sql(f"CALL oracle.system.remove_orphan_files({', '.join(parts)})")
    return [r["orphan_file_location"] for r in rows]


def run_twins(
    p: Planted, oracle: Oracle, catalog: Any, setup: Any = None, reads: bool = True, **args: Any
) -> set[str]:
    """Both engines on the restored table; returns the orphans (relative paths). `reads`:
    check after each that both read the rows they read before (off for a table that
    references a file on a store this test cannot reach)."""
    older_than = now_ms() - 2 * DAY_MS
    p.restore()
    if setup:
        setup()
    before = visible_files(p.root)
    crc_before = checksum_files(p.root)
    ours = catalog.load_table(p.name).maintenance.remove_orphan_files(older_than=older_than, **args)
    deleted_ours = before - visible_files(p.root)
    crc_deleted_ours = crc_before - checksum_files(p.root)
    found_ours = {relative(x, p.root) for x in ours.orphan_file_locations}
    assert all(x.startswith("file:/") for x in ours.orphan_file_locations)
    assert ours.orphan_files_count == len(found_ours)
    assert not ours.failed_deletes
    if reads:
        check_reads(p, oracle, catalog)

    p.restore()
    if setup:
        setup()
    before_java = visible_files(p.root)
    crc_before_java = checksum_files(p.root)
    found_java = {relative(x, p.root) for x in java_call(p, oracle, older_than, **args)}
    deleted_java = before_java - visible_files(p.root)
    crc_deleted_java = crc_before_java - checksum_files(p.root)
    if reads:
        check_reads(p, oracle, catalog)

    assert found_ours == found_java
    assert deleted_ours == deleted_java
    assert deleted_ours == (set() if args.get("dry_run") else found_ours)
    # Hadoop's `.<name>.crc` beside a deleted file goes with it, as Java's delete takes it.
    assert crc_deleted_ours == (set() if args.get("dry_run") else checksums_of(found_ours) & crc_before)
    assert crc_deleted_ours == crc_deleted_java
    return found_ours


def checksum_files(root: Path) -> set[str]:
    """The hidden Hadoop checksums under `root` (relative)."""
    return {os.path.relpath(c, root) for c in root.rglob(".*.crc")}


def checksums_of(files: set[str]) -> set[str]:
    """Where the checksums of `files` (relative) would be."""
    return {os.path.join(os.path.dirname(f), f".{os.path.basename(f)}.crc") for f in files}


def test_table_location(planted: Planted, oracle: Oracle, catalog: Any) -> None:
    found = run_twins(planted, oracle, catalog)
    planted_orphans = {
        "data/_r=a/orphan-1.parquet",
        "data/_r=zz/orphan-2.parquet",
        "metadata/orphan.avro",
        "stray/x.bin",
    }
    assert planted_orphans <= found
    assert "data/_r=a/young.parquet" not in found
    # Files of the expired snapshots and metadata files out of the short log are orphans too.
    assert any(f.startswith("metadata/snap-") for f in found)
    assert any(f.endswith(".metadata.json") for f in found)
    assert not any(Path(f).name.startswith((".", "_")) for f in found)
    # Java wrote the expired snapshots' files with checksums beside them (run_twins checked
    # that both engines delete them with their files).
    planted.restore()
    assert checksums_of(found) & checksum_files(planted.root)


def test_dry_run_and_location(planted: Planted, oracle: Oracle, catalog: Any) -> None:
    found = run_twins(planted, oracle, catalog, dry_run=True)
    assert len(found) > 4
    data = run_twins(planted, oracle, catalog, location=f"file:{planted.root}/data")
    assert data and all(f.startswith("data/") for f in data)


def test_prefix_mismatch_modes(planted: Planted, oracle: Oracle, catalog: Any) -> None:
    """A file referenced under another scheme and authority (`s3://bkt/<same path>`):
    `error` fails both and deletes nothing, `ignore` keeps it, `delete` deletes it."""
    p = planted
    target = p.root / "data" / "_r=a" / "elsewhere.parquet"

    def setup() -> None:
        target.write_bytes(b"12345")
        t = time.time() - 4 * 86400
        os.utime(target, (t, t))
        t = catalog.load_table(p.name)
        spec_id = t.metadata.default_spec_id
        desc = {
            "content": "Data", "file_path": f"s3://bkt{target}", "file_format": "Parquet",
            "partition": [{"String": "a"}], "record_count": 1, "file_size_in_bytes": 5,
            "column_sizes": {}, "value_counts": {}, "null_value_counts": {}, "nan_value_counts": {},
            "lower_bounds": {}, "upper_bounds": {}, "key_metadata": None, "split_offsets": None,
            "equality_ids": None, "sort_order_id": None, "referenced_data_file": None, "spec_id": spec_id,
        }  # fmt: skip
        t._commit(lambda base: _native.fast_append(base, [json.dumps(desc)]))

    p.restore()
    setup()
    before = visible_files(p.root)
    with pytest.raises(ValidationError, match=r"\(s3, file\).*\(bkt, null\)|\(bkt, null\).*\(s3, file\)"):
        catalog.load_table(p.name).maintenance.remove_orphan_files(older_than=now_ms() - 2 * DAY_MS)
    assert visible_files(p.root) == before
    with pytest.raises(Exception, match="Unable to determine whether certain files are orphan"):
        java_call(p, oracle, now_ms() - 2 * DAY_MS)
    assert visible_files(p.root) == before

    rel = relative(str(target), p.root)
    assert rel not in run_twins(p, oracle, catalog, setup=setup, reads=False, prefix_mismatch_mode="ignore")
    assert rel in run_twins(p, oracle, catalog, setup=setup, reads=False, prefix_mismatch_mode="delete")
    p.restore()


def test_recent_older_than_is_refused(planted: Planted, catalog: Any) -> None:
    p = planted
    p.restore()
    t = catalog.load_table(p.name)
    before = visible_files(p.root)
    with pytest.raises(ValidationError, match="24 hours"):
        t.maintenance.remove_orphan_files(older_than=dt.datetime.now(dt.timezone.utc))
    with pytest.raises(ValidationError, match="prefix_mismatch_mode"):
        t.maintenance.remove_orphan_files(prefix_mismatch_mode="sometimes")
    assert visible_files(p.root) == before
    # Allowed explicitly: the young planted file goes too.
    result = t.maintenance.remove_orphan_files(older_than=now_ms() + 1000, allow_recent=True, dry_run=True)
    assert "data/_r=a/young.parquet" in {relative(x, p.root) for x in result.orphan_file_locations}
    assert result.orphan_files_bytes >= len(b"young") and result.deleted_files_count == 0
    # A file list that is not (location, last modified) pairs is refused, nothing deleted.
    with pytest.raises(ValidationError, match=r"file_list: expected \(location, last modified\) pairs"):
        t.maintenance.remove_orphan_files(file_list=["x"])  # type: ignore[list-item]
    with pytest.raises(ValidationError, match=r"file_list\[0\] last modified must be a datetime with"):
        t.maintenance.remove_orphan_files(file_list=[(f"{t.location}/data/x", dt.datetime(2020, 1, 1))])
    assert visible_files(p.root) == before
