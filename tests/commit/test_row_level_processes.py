"""Row-level changes racing in real processes, on both catalogs: merge-on-read deletes racing
an overwrite that removes their files fail validation (nothing committed, no file left) or
land first; deletes of the same rows from several processes delete them exactly once; random
deletes and upserts from several processes never bring a deleted row back."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import NestedField, Schema
from icefloe.types import LongType, StringType
from support.catalogs import catalog_props
from support.start_gate import ready_path, release, worker_env

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "tag", StringType()),
    identifier_field_ids=[1],
)
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("tag", pa.string())])
MOR = {
    "write.delete.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
    "commit.retry.num-retries": "20",
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "200",
}

# The process: support/workers/row_level_racer.py (deletes, an overwrite, or mixed upserts).
WORKER = "support.workers.row_level_racer"


def run_all(props: dict[str, str], ident: str, jobs: list[tuple[str, Any]], tmp_path: Path) -> list[Any]:
    go = tmp_path / f"go-{time.monotonic_ns()}"
    readies = [ready_path(go, i) for i in range(len(jobs))]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", WORKER, json.dumps([props, ident, mode, arg, str(ready), str(go)])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=worker_env(),
        )
        for ready, (mode, arg) in zip(readies, jobs)
    ]
    release(procs, readies, go)  # every worker loaded the table before any change
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        outs.append(json.loads(out.strip().splitlines()[-1]))
    return outs


def files_under(path: Path) -> set[str]:
    return {str(p) for p in path.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind", ["filesystem", "sql"])
def test_delete_racing_an_overwrite_of_its_files(kind: str, tmp_path: Path) -> None:
    props = catalog_props(kind, tmp_path)
    cat = icefloe.load_catalog(**props)
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA, properties=MOR)
    t.append(pa.table({"id": pa.array(range(100), pa.int64()), "tag": ["a"] * 100}, schema=ARROW))
    outs = run_all(props, "db.t", [("delete", "id < 50"), ("overwrite", None)], tmp_path)
    delete_out, overwrite_out = outs[0][0], outs[1][0]
    # Both read the same version: whichever commits first wins, the other fails validation
    # (the overwrite sees new deletes in what it replaces; the delete sees its file removed).
    assert sorted([delete_out == "ok", overwrite_out == "ok"]) == [False, True], outs
    t.refresh()
    ids = sorted(t.scan().to_arrow().column("id").to_pylist())
    if overwrite_out == "ok":
        assert ids == [1000]
        assert "removed a data file" in delete_out, delete_out
    else:
        assert ids == list(range(50, 100))
        assert "delete files" in overwrite_out, overwrite_out
    # No live delete file references a data file that is gone, and a failed delete left no file.
    data_paths = {task.file.file_path for task in t.scan().plan_files()}
    for task in t.scan().plan_files():
        for d in task.delete_files:
            assert d._obj.get("referenced_data_file") in data_paths
    if delete_out != "ok":
        left = {p for p in files_under(Path(t.location()) / "data") if p.endswith("-deletes.parquet")}
        assert not left, f"the failed delete left {left}"


@pytest.mark.parametrize("kind", ["filesystem", "sql"])
def test_same_rows_deleted_by_three_processes_are_deleted_once(kind: str, tmp_path: Path) -> None:
    props = catalog_props(kind, tmp_path)
    cat = icefloe.load_catalog(**props)
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA, properties=MOR)
    t.append(pa.table({"id": pa.array(range(100), pa.int64()), "tag": ["a"] * 100}, schema=ARROW))
    outs = run_all(props, "db.t", [("delete", "id >= 10 and id < 30")] * 3, tmp_path)
    results = [o[0] for o in outs]
    assert results.count("ok") >= 1, results
    t.refresh()
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == list(range(10)) + list(range(30, 100))
    snap = t.current_snapshot()
    assert snap is not None
    assert snap.summary.additional_properties["total-position-deletes"] == "20", "deleted exactly once"


def test_random_upserts_and_deletes_from_processes_match_a_model(tmp_path: Path) -> None:
    props = catalog_props("sql", tmp_path)
    cat = icefloe.load_catalog(**props)
    cat.create_namespace("db")
    cat.create_table("db.t", schema=SCHEMA, properties=MOR)
    steps = 12
    outs = run_all(props, "db.t", [("mixed", [w, steps]) for w in range(3)], tmp_path)
    # Each worker owns its keys (w*100 ..), so its own sequence of operations decides them.
    model: dict[int, str] = {}
    for out in outs:
        for op in out:
            if op[0] == "upsert":
                for k in op[1]:
                    model[k] = op[2]
            elif op[0] == "delete":
                for k in list(model):
                    if op[1] <= k < op[2]:
                        del model[k]
    t = cat.load_table("db.t")
    got = {r["id"]: r["tag"] for r in t.scan().to_arrow().to_pylist()}
    assert got == model
