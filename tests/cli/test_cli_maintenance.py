"""The `icefloe` subcommands built on the metadata tables and maintenance actions
(`table.inspect.*`, `table.maintenance.*`, `table.manage_snapshots()`): files, partitions,
expire-snapshots, remove-orphans, compact, rewrite-manifests, rollback. Run as the installed
console script against real tables; files and partitions are compared with Iceberg Java's
metadata tables of the same table (shared warehouse)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.partitioning import PartitionField, PartitionSpec
from support.cli import SCHEMA, rows, run, run_json

SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform="identity", name="kind"))


def _sorted(t: pa.Table) -> list[dict[str, Any]]:
    return sorted(t.to_pylist(), key=lambda r: r["id"])


@pytest.mark.spark
@pytest.mark.interop
def test_files_and_partitions_match_java(
    catalog: icefloe.Catalog, warehouse: Path, oracle: Any, table_name: str
) -> None:
    t = catalog.create_table(table_name, schema=SCHEMA, partition_spec=SPEC)
    t.append(rows(3, 0, "a"))
    t.append(rows(2, 3, "b"))
    w = ("--warehouse", str(warehouse))
    ours = run_json(*w, "files", table_name)
    java = oracle.files(table_name)
    assert sorted(f["file_path"] for f in ours) == [f["file_path"] for f in java]
    by_path = {f["file_path"]: f for f in ours}
    for j in java:
        o = by_path[j["file_path"]]
        for col in ("content", "file_format", "spec_id", "record_count", "file_size_in_bytes"):
            assert o[col] == j[col], (col, o[col], j[col])
    text = run(*w, "files", table_name).stdout
    for j in java:
        assert j["file_path"] in text

    parts = run_json(*w, "partitions", table_name)
    java_parts = [
        r.asDict(recursive=True)
        for r in oracle.sql(f"SELECT * FROM {oracle.qualified(table_name)}.partitions")
    ]
    assert sorted((p["partition"]["kind"], p["record_count"], p["file_count"]) for p in parts) == sorted(
        (p["partition"]["kind"], p["record_count"], p["file_count"]) for p in java_parts
    )
    assert "record_count" in run(*w, "partitions", table_name).stdout


def test_expire_snapshots(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA)
    for i in range(3):
        t.append(rows(1, i))
    expected = _sorted(t.scan().to_arrow())
    time.sleep(0.01)
    result = run_json(
        "--warehouse", str(warehouse), "expire-snapshots", "db.t", "--older-than", "0s", "--retain-last", "1"
    )
    assert isinstance(result, dict) and result
    t = cat.load_table("db.t")
    assert len(t.snapshots()) == 1
    assert _sorted(t.scan().to_arrow()) == expected
    text = run(
        "--warehouse", str(warehouse), "expire-snapshots", "db.t", "--older-than", "2000-01-01T00:00:00Z"
    ).stdout
    assert text.strip()
    assert len(cat.load_table("db.t").snapshots()) == 1


def test_remove_orphans_dry_run_then_for_real(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA)
    t.append(rows(3))
    orphan = Path(t.location().removeprefix("file:")) / "data" / "orphan-00000.parquet"
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"not referenced")
    old = time.time() - 10 * 86400
    os.utime(orphan, (old, old))
    w = ("--warehouse", str(warehouse))
    dry = run_json(*w, "remove-orphans", "db.t", "--older-than", "3d", "--dry-run")
    assert "orphan-00000.parquet" in json.dumps(dry)
    assert orphan.exists()
    real = run_json(*w, "remove-orphans", "db.t", "--older-than", "3d")
    assert "orphan-00000.parquet" in json.dumps(real)
    assert not orphan.exists()
    assert cat.load_table("db.t").scan().count() == 3

    # Under 24 hours only with --allow-recent, which the refusal names.
    young = orphan.with_name("orphan-00001.parquet")
    young.write_bytes(b"not referenced")
    old = time.time() - 7200
    os.utime(young, (old, old))
    refused = run(*w, "remove-orphans", "db.t", "--older-than", "1h", check=1)
    assert "--allow-recent" in refused.stderr and young.exists()
    recent = run_json(*w, "remove-orphans", "db.t", "--older-than", "1h", "--allow-recent")
    assert "orphan-00001.parquet" in json.dumps(recent) and not young.exists()


def test_compact(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA, partition_spec=SPEC)
    for i in range(6):  # one partition, six files: above the default min-input-files (5)
        t.append(rows(2, 10 * i, "a"))
    expected = _sorted(t.scan().to_arrow())
    before_files = len(t.scan().plan_files())
    w = ("--warehouse", str(warehouse))
    result = run_json(*w, "compact", "db.t")
    assert isinstance(result, dict) and result
    t = cat.load_table("db.t")
    assert before_files == 6 and len(t.scan().plan_files()) == 1
    assert _sorted(t.scan().to_arrow()) == expected
    assert "compact" in run("--help").stdout


def test_rewrite_manifests(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    t = cat.create_table(
        "db.t", schema=SCHEMA, partition_spec=SPEC, properties={"commit.manifest.min-count-to-merge": "1000"}
    )
    for i, kind in enumerate(["b", "a", "b", "c"]):
        t.append(rows(2, 10 * i, kind))
    expected = _sorted(t.scan().to_arrow())
    manifests_before = len(t.inspect.manifests())
    w = ("--warehouse", str(warehouse))
    result = run_json(*w, "rewrite-manifests", "db.t")
    assert result["rewritten_manifests_count"] == manifests_before == 4
    assert result["added_manifests_count"] == 1
    assert result["entries_processed_count"] == 4
    t = cat.load_table("db.t")
    assert len(t.inspect.manifests()) == 1
    assert t.current_snapshot().summary.operation == "replace"
    assert _sorted(t.scan().to_arrow()) == expected
    # Nothing left to rewrite: a zero result, no new snapshot; text output names the counts.
    snap = t.metadata.current_snapshot_id
    text = run(*w, "rewrite-manifests", "db.t").stdout
    assert "rewritten_manifests_count" in text
    assert cat.load_table("db.t").metadata.current_snapshot_id == snap
    bad = run(*w, "rewrite-manifests", "db.t", "--spec-id", "7", check=1)
    assert "spec id 7" in bad.stderr and "Traceback" not in bad.stderr
    # --sort-by: a partition field of the spec clusters by it; another name is refused.
    t.append(rows(2, 90, "a"))
    assert run_json(*w, "rewrite-manifests", "db.t", "--sort-by", "kind")["added_manifests_count"] == 1
    unknown = run(*w, "rewrite-manifests", "db.t", "--sort-by", "nope", check=1)
    assert (
        "[nope] were not found in current partition spec" in unknown.stderr
        and "Traceback" not in unknown.stderr
    )
    assert "rewrite-manifests" in run("--help").stdout


def test_rollback(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA)
    t.append(rows(2))
    first = t.metadata.current_snapshot_id
    assert first is not None
    first_rows = _sorted(t.scan().to_arrow())
    t.append(rows(3, 10))
    second = t.metadata.current_snapshot_id
    w = ("--warehouse", str(warehouse))
    out = run_json(*w, "rollback", "db.t", str(first))
    assert out == {"table": "db.t", "previous_snapshot_id": second, "current_snapshot_id": first}
    t = cat.load_table("db.t")
    assert t.metadata.current_snapshot_id == first
    assert _sorted(t.scan().to_arrow()) == first_rows
    bad = run(*w, "rollback", "db.t", "12345", check=1)
    assert "12345" in bad.stderr and "Traceback" not in bad.stderr
