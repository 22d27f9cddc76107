"""A stateful model test of one table (issue 13): Hypothesis draws sequences of appends,
overwrites (by filter and dynamic-partition), deletes and upserts in both write modes
(copy-on-write; merge-on-read with position deletes / deletion vectors and equality deletes),
schema evolution (add, rename, delete a column, widen int to long), partition evolution,
time travel and appends from a second process racing the machine's own commits.

The model is plain Python: the rows as dicts keyed by column name (under the evolved schema),
plus for each row the partition spec its data file was written with (a dynamic-partition
overwrite replaces partitions of the current spec only, as Java's `ReplacePartitions`).
After every step icefloe's read of the table equals the model; at the end of each run Iceberg
Java reads the same rows at the current snapshot and at older ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from icefloe import NestedField, PartitionField, PartitionSpec, Schema
from icefloe.exceptions import ValidationError
from icefloe.types import DoubleType, IntegerType, LongType, StringType
from pyiceberg import transforms as pyiceberg_transforms
from pyiceberg import types as pyiceberg_types
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

# Column kinds: Iceberg type, Arrow type, and a strategy for a (nullable) value.
KINDS: dict[str, tuple[Any, pa.DataType, st.SearchStrategy[Any]]] = {
    "long": (LongType(), pa.int64(), st.integers(-(2**40), 2**40)),
    "int": (IntegerType(), pa.int32(), st.integers(-100, 100)),
    "string": (StringType(), pa.string(), st.sampled_from(["a", "b", "zz", ""])),
    "double": (DoubleType(), pa.float64(), st.sampled_from([0.5, -1.0, 3.25, 1e10])),
}
REGIONS = ("eu", "us", "ap")
IDS = 60  # the machine's keys; the second process appends ids IDS..2*IDS-1
# Partition fields the machine may add: (source column key, transform, partition field name).
FIELDS = {
    "region": ("region", "identity", "region"),
    "id_trunc": ("id", "truncate[10]", "id_trunc"),
    "id_bucket": ("id", "bucket[4]", "id_bucket"),
}
PROPS = {
    "commit.retry.num-retries": "50",
    "commit.retry.min-wait-ms": "5",
    "commit.retry.max-wait-ms": "100",
}

# The second process (support/workers/model_appender.py): appends the Arrow IPC file named on
# each stdin line to the table.
WORKER = "support.workers.model_appender"

Row = dict[str, Any]
Pred = Callable[[Row], Optional[bool]]


def _partition_value(transform: str, v: Any) -> Any:
    """The partition value of `v` (a long for `id`, a string for `region`), by PyIceberg's
    transforms (an independent implementation of the spec's)."""
    if v is None or transform == "identity":
        return v
    t = pyiceberg_transforms.parse_transform(transform)
    return t.transform(pyiceberg_types.LongType())(v)


class TableModel(RuleBasedStateMachine):
    """One table per run. `catalog`, `oracle`, `worker` and `tmp` are set by the test."""

    catalog: Any
    oracle: Oracle
    worker: Worker
    tmp: Path
    ops: Counter[str] = Counter()  # the steps run, over all runs of the test

    def __init__(self) -> None:
        super().__init__()
        self.name = new_table_name("model")
        # Columns in schema order: stable key (the column's name at creation) -> name, kind.
        self.cols: list[list[str]] = []  # [key, name, kind]
        self.rows: list[Row] = []  # by column name, plus "_spec": the spec id of its file (None: unknown)
        self.spec: list[str] = []  # the current spec's FIELDS names
        self.spec_id = 0
        self.ever_partitioned: set[str] = {"id", "region"}  # column keys in some spec: never dropped
        self.saved: dict[int, tuple[list[tuple[str, str]], list[Row]]] = {}
        self.snapshot_id: int | None = None
        self.added = 0
        self.steps: list[str] = []

    # ---- helpers ------------------------------------------------------------------------
    def name_of(self, key: str) -> str:
        return next(c[1] for c in self.cols if c[0] == key)

    def kind_of(self, name: str) -> str:
        return next(c[2] for c in self.cols if c[1] == name)

    def arrow_schema(self) -> pa.Schema:
        return pa.schema(
            [pa.field(name, KINDS[kind][1], nullable=key != "id") for key, name, kind in self.cols]
        )

    def arrow(self, rows: list[Row]) -> pa.Table:
        schema = self.arrow_schema()
        return pa.table({f.name: pa.array([r[f.name] for r in rows], f.type) for f in schema}, schema=schema)

    def draw_rows(self, data: st.DataObject, lo: int, hi: int, min_rows: int = 0) -> list[Row]:
        out = []
        for _ in range(data.draw(st.integers(min_rows, 6), label="rows")):
            row: Row = {}
            for key, name, kind in self.cols:
                if key == "id":
                    row[name] = data.draw(st.integers(lo, hi - 1))
                elif key == "region":
                    row[name] = data.draw(st.sampled_from(REGIONS))
                else:
                    row[name] = data.draw(st.none() | KINDS[kind][2])
            out.append(row)
        return out

    def partition_key(self, row: Row) -> tuple[Any, ...]:
        out = []
        for field in self.spec:
            source, transform, _ = FIELDS[field]
            out.append(_partition_value(transform, row[self.name_of(source)]))
        return tuple(out)

    def draw_filter(self, data: st.DataObject) -> tuple[str, Pred]:
        """A row-filter string and its meaning in SQL's three-valued logic."""

        def atom() -> tuple[str, Pred]:
            key, name, kind = data.draw(st.sampled_from(self.cols), label="filter column")
            choice = data.draw(st.sampled_from(["cmp", "isnull"]))
            if choice == "isnull":
                return f"{name} IS NULL", lambda r: r[name] is None
            if kind == "string":
                v = data.draw(st.sampled_from(REGIONS if key == "region" else ("a", "zz")))
                return f"{name} = '{v}'", lambda r: None if r[name] is None else r[name] == v
            if kind == "double":
                return f"{name} > 0.0", lambda r: None if r[name] is None else r[name] > 0.0
            k = data.draw(st.integers(0, IDS) if key == "id" else st.integers(-50, 50))
            if data.draw(st.booleans()):
                return f"{name} < {k}", lambda r: None if r[name] is None else r[name] < k
            return f"{name} >= {k}", lambda r: None if r[name] is None else r[name] >= k

        a_text, a = atom()
        op = data.draw(st.sampled_from(["", "and", "or"]))
        if not op:
            return a_text, a
        b_text, b = atom()

        def both(r: Row) -> bool | None:
            x, y = a(r), b(r)
            if op == "and":
                return False if x is False or y is False else (None if x is None or y is None else True)
            return True if x is True or y is True else (None if x is None or y is None else False)

        return f"({a_text}) {op} ({b_text})", both

    def table(self) -> Any:
        return self.catalog.load_table(self.name)

    def mode(self, op: str) -> str:
        return self.table().properties.get(f"write.{op}.mode", "copy-on-write")

    def rewritten(self) -> None:
        """After a copy-on-write change: a rewritten file of an older spec may come back in
        either spec, so such rows' spec is no longer known (those of the current spec stay)."""
        for r in self.rows:
            if r["_spec"] != self.spec_id:
                r["_spec"] = None

    def log(self, text: str, mode: str = "") -> None:
        """Records a step for failure messages, and counts it (by rule, and mode) for the
        test's check that every kind of step ran."""
        self.steps.append(text)
        rule = sys._getframe(1).f_code.co_name
        TableModel.ops[f"{rule} {mode}".strip()] += 1

    # ---- create -------------------------------------------------------------------------
    @initialize(
        fmt=st.sampled_from([2, 3]),
        spec=st.sampled_from([(), ("region",), ("id_bucket",), ("region", "id_trunc")]),
        delete_mode=st.sampled_from(["copy-on-write", "merge-on-read"]),
        merge_mode=st.sampled_from(["copy-on-write", "merge-on-read"]),
    )
    def create(self, fmt: int, spec: tuple[str, ...], delete_mode: str, merge_mode: str) -> None:
        schema = Schema(
            NestedField(1, "id", LongType(), required=True),
            NestedField(2, "region", StringType()),
            NestedField(3, "n", IntegerType()),
        )
        ids = {"id": 1, "region": 2}
        pspec = PartitionSpec(
            *(
                PartitionField(ids[FIELDS[f][0]], 1000 + i, FIELDS[f][1], FIELDS[f][2])
                for i, f in enumerate(spec)
            )
        )
        props = {
            **PROPS,
            "format-version": str(fmt),
            "write.delete.mode": delete_mode,
            "write.merge.mode": merge_mode,
        }
        t = self.catalog.create_table(self.name, schema=schema, partition_spec=pspec, properties=props)
        self.cols = [["id", "id", "long"], ["region", "region", "string"], ["n", "n", "int"]]
        self.spec = list(spec)
        self.spec_id = t.spec().spec_id
        self.log(f"create v{fmt} {spec} delete={delete_mode} merge={merge_mode}")

    # ---- writes -------------------------------------------------------------------------
    @rule(data=st.data())
    def append(self, data: st.DataObject) -> None:
        rows = self.draw_rows(data, 0, IDS)
        self.log(f"append {rows}")
        if not rows:
            return
        self.table().append(self.arrow(rows))
        self.rows += [{**r, "_spec": self.spec_id} for r in rows]

    @rule(data=st.data())
    def overwrite_filter(self, data: st.DataObject) -> None:
        rows = self.draw_rows(data, 0, IDS)
        text, pred = self.draw_filter(data)
        self.log(f"overwrite {text!r} {rows}")
        self.table().overwrite(self.arrow(rows), overwrite_filter=text)
        self.rows = [r for r in self.rows if pred(r) is not True]
        self.rewritten()
        self.rows += [{**r, "_spec": self.spec_id} for r in rows]

    @rule(data=st.data())
    def dynamic_overwrite(self, data: st.DataObject) -> None:
        rows = self.draw_rows(data, 0, IDS)
        keys = {self.partition_key(r) for r in rows}
        if any(r["_spec"] is None and self.partition_key(r) in keys for r in self.rows):
            return  # which of those rows it replaces depends on a file's spec the model lost
        self.log(f"dynamic overwrite {rows}")
        self.table().dynamic_partition_overwrite(self.arrow(rows))
        self.rows = [
            r for r in self.rows if not (r["_spec"] == self.spec_id and self.partition_key(r) in keys)
        ]
        self.rows += [{**r, "_spec": self.spec_id} for r in rows]

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        text, pred = self.draw_filter(data)
        mode = self.mode("delete")
        self.log(f"delete ({mode}) {text!r}", mode)
        self.table().delete(text)
        self.rows = [r for r in self.rows if pred(r) is not True]
        if mode == "copy-on-write":
            self.rewritten()

    @rule(data=st.data())
    def upsert(self, data: st.DataObject) -> None:
        rows = self.draw_rows(data, 0, IDS)
        mode = self.mode("merge")
        id_name = self.name_of("id")
        self.log(f"upsert ({mode}) {rows}", mode)
        t = self.table()
        before = t.current_snapshot()
        try:
            t.upsert(self.arrow(rows), join_cols=[id_name])
        except ValidationError:
            # Merge-on-read: equality deletes on `id` cannot be scoped to a partition of
            # `region` (unless the keys are upserted copy-on-write for an older spec's files).
            assert mode == "merge-on-read" and any(FIELDS[f][0] != "id" for f in self.spec)
            after = self.table().current_snapshot()
            assert (before and before.snapshot_id) == (after and after.snapshot_id)
            return
        last = {r[id_name]: r for r in rows}
        # Copy-on-write is PyIceberg's upsert: every target row of a key takes the source row's
        # values, so a key the table holds k times stays k rows. Merge-on-read is Flink's: one
        # equality delete per key, then one row per key (docs/operations.md).
        held = Counter(r[id_name] for r in self.rows if r[id_name] in last) if mode == "copy-on-write" else {}
        self.rows = [r for r in self.rows if r[id_name] not in last]
        self.rewritten()  # merge-on-read falls back to copy-on-write for keys in older specs
        for key, r in last.items():
            self.rows += [{**r, "_spec": self.spec_id} for _ in range(max(1, held.get(key, 0)))]

    @rule(
        delete_mode=st.sampled_from(["copy-on-write", "merge-on-read"]),
        merge_mode=st.sampled_from(["copy-on-write", "merge-on-read"]),
    )
    def set_modes(self, delete_mode: str, merge_mode: str) -> None:
        self.log(f"modes delete={delete_mode} merge={merge_mode}")
        with self.table().transaction() as tx:
            tx.set_properties({"write.delete.mode": delete_mode, "write.merge.mode": merge_mode})

    # ---- schema evolution -----------------------------------------------------------------
    @rule(kind=st.sampled_from(sorted(KINDS)))
    def add_column(self, kind: str) -> None:
        self.added += 1
        name = f"c{self.added}"
        self.log(f"add column {name} {kind}")
        with self.table().update_schema() as u:
            u.add_column(name, KINDS[kind][0])
        self.cols.append([name, name, kind])
        for r in self.rows:
            r[name] = None

    @precondition(lambda self: len(self.cols) > 1)
    @rule(data=st.data())
    def rename_column(self, data: st.DataObject) -> None:
        col = data.draw(st.sampled_from([c for c in self.cols if c[0] != "id"]))
        self.added += 1
        new = f"r{self.added}"
        self.log(f"rename {col[1]} -> {new}")
        with self.table().update_schema() as u:
            u.rename_column(col[1], new)
        for r in self.rows:
            r[new] = r.pop(col[1])
        col[1] = new

    @precondition(lambda self: any(c[0] not in self.ever_partitioned for c in self.cols))
    @rule(data=st.data())
    def delete_column(self, data: st.DataObject) -> None:
        col = data.draw(st.sampled_from([c for c in self.cols if c[0] not in self.ever_partitioned]))
        self.log(f"delete column {col[1]}")
        with self.table().update_schema() as u:
            u.delete_column(col[1])
        self.cols.remove(col)
        for r in self.rows:
            del r[col[1]]

    @precondition(lambda self: any(c[2] == "int" for c in self.cols))
    @rule(data=st.data())
    def widen_int_to_long(self, data: st.DataObject) -> None:
        col = data.draw(st.sampled_from([c for c in self.cols if c[2] == "int"]))
        self.log(f"widen {col[1]} to long")
        with self.table().update_schema() as u:
            u.update_column(col[1], LongType())
        col[2] = "long"

    # ---- partition evolution --------------------------------------------------------------
    @rule(field=st.sampled_from(sorted(FIELDS)))
    def update_spec(self, field: str) -> None:
        source, transform, name = FIELDS[field]
        with self.table().update_spec() as u:
            if field in self.spec:
                self.log(f"spec: remove {name}")
                u.remove_field(name)
                self.spec.remove(field)
            else:
                self.log(f"spec: add {transform}({self.name_of(source)})")
                u.add_field(self.name_of(source), transform, name)
                self.spec.append(field)
        spec = self.table().spec()
        assert [f.name for f in spec.fields] == [FIELDS[f][2] for f in self.spec]
        self.spec_id = spec.spec_id

    # ---- a second process -----------------------------------------------------------------
    @rule(data=st.data(), delete=st.booleans())
    def concurrent_commits(self, data: st.DataObject, delete: bool) -> None:
        """The second process appends (ids IDS..) while this one appends or deletes (ids
        below IDS: no conflict, so both land, in either order)."""
        theirs = self.draw_rows(data, IDS, 2 * IDS, min_rows=1)
        ours = self.draw_rows(data, 0, IDS)
        k = data.draw(st.integers(0, IDS))
        self.log(f"concurrent: they append {theirs}; we {f'delete id < {k}' if delete else ours}")
        path = self.tmp / f"{self.name}-{len(self.steps)}.arrow"
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, self.arrow_schema()) as w:
            w.write_table(self.arrow(theirs))
        self.worker.send(self.name, path)
        t = self.table()
        mode = self.mode("delete")
        if delete:
            t.delete(f"{self.name_of('id')} < {k}")
        elif ours:
            t.append(self.arrow(ours))
        self.worker.wait()
        id_name = self.name_of("id")
        if delete:
            self.rows = [r for r in self.rows if r[id_name] >= k]
            if mode == "copy-on-write":
                self.rewritten()
        else:
            self.rows += [{**r, "_spec": self.spec_id} for r in ours]
        self.rows += [{**r, "_spec": self.spec_id} for r in theirs]
        self.snapshot_id = None  # the snapshot between the two commits is not saved

    # ---- reads ----------------------------------------------------------------------------
    @precondition(lambda self: len(self.saved) > 0)
    @rule(data=st.data())
    def time_travel(self, data: st.DataObject) -> None:
        sid = data.draw(st.sampled_from(sorted(self.saved)))
        cols, rows = self.saved[sid]
        TableModel.ops["time_travel"] += 1
        got = self.table().scan(snapshot_id=sid).to_arrow()
        assert_same_rows(got, self.expected(cols, rows), context=f"icefloe at snapshot {sid}: {self.trail()}")

    def expected(self, cols: list[tuple[str, str]], rows: list[Row]) -> pa.Table:
        schema = pa.schema([pa.field(n, KINDS[k][1]) for n, k in cols])
        return pa.table({n: pa.array([r[n] for r in rows], KINDS[k][1]) for n, k in cols}, schema=schema)

    def trail(self) -> str:
        return "\n  " + "\n  ".join(self.steps)

    @invariant()
    def table_equals_model(self) -> None:
        if not self.cols:
            return
        t = self.table()
        schema = [(f.name, str(f.field_type)) for f in t.schema().fields]
        assert schema == [(n, str(KINDS[k][0])) for _, n, k in self.cols], self.trail()
        cols = [(n, k) for _, n, k in self.cols]
        rows = [{n: r[n] for n, _ in cols} for r in self.rows]
        assert_same_rows(t.scan().to_arrow(), self.expected(cols, rows), context=f"icefloe: {self.trail()}")
        snap = t.current_snapshot()
        sid = None if snap is None else snap.snapshot_id
        if sid is not None and sid != self.snapshot_id and sid not in self.saved:
            if self.snapshot_id is not None or not self.steps[-1].startswith("concurrent"):
                self.saved[sid] = (cols, rows)
        self.snapshot_id = sid

    def teardown(self) -> None:
        """Iceberg Java reads the model's rows now and at the oldest and a middle saved snapshot."""
        if not self.cols:
            return
        cols = [(n, k) for _, n, k in self.cols]
        current = self.expected(cols, [{n: r[n] for n, _ in cols} for r in self.rows])
        if self.table().current_snapshot() is not None:
            assert_same_rows(self.oracle.df(self.name), current, context=f"Java, current: {self.trail()}")
        older = sorted(self.saved)
        for sid in {older[0], older[len(older) // 2]} if older else set():
            TableModel.ops["java time travel"] += 1
            old_cols, old_rows = self.saved[sid]
            assert_same_rows(
                self.oracle.df(self.name, snapshot_id=sid),
                self.expected(old_cols, old_rows),
                context=f"Java at snapshot {sid}: {self.trail()}",
            )


class Worker:
    """The second process: one for the whole test, appending to whichever table it is told."""

    def __init__(self, props: dict[str, str]) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", WORKER, json.dumps(props)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def send(self, ident: str, path: Path) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps([ident, str(path)]) + "\n")
        self.proc.stdin.flush()

    def wait(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"the second process died (exit code {self.proc.poll()})"
        assert json.loads(line) == "ok", f"the second process failed: {line}"

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


EXAMPLES = 12  # runs of 30 steps: about a minute here, plus the Spark session's start
STEPS = 30
# Every kind of step, each of which must have run (a generator gone wrong fails, not passes).
KINDS_OF_STEP = (
    "create",
    "append",
    "overwrite_filter",
    "dynamic_overwrite",
    "delete copy-on-write",
    "delete merge-on-read",
    "upsert copy-on-write",
    "upsert merge-on-read",
    "set_modes",
    "add_column",
    "rename_column",
    "delete_column",
    "widen_int_to_long",
    "update_spec",
    "concurrent_commits",
    "time_travel",
    "java time travel",
)


@pytest.mark.timeout(900)
def test_table_matches_a_python_model(oracle: Oracle, catalog: Any, warehouse: Path, tmp_path: Path) -> None:
    """ICEFLOE_MODEL_EXAMPLES / ICEFLOE_MODEL_STEPS run it longer (a search for bugs)."""
    worker = Worker({"name": "local", "type": "filesystem", "warehouse": str(warehouse)})
    TableModel.catalog, TableModel.oracle, TableModel.tmp = catalog, oracle, tmp_path
    TableModel.worker = worker
    TableModel.ops.clear()
    try:
        run_state_machine_as_test(
            TableModel,
            settings=settings(
                max_examples=int(os.environ.get("ICEFLOE_MODEL_EXAMPLES", EXAMPLES)),
                stateful_step_count=int(os.environ.get("ICEFLOE_MODEL_STEPS", STEPS)),
                database=None,
                derandomize=True,
                deadline=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
    finally:
        worker.close()
    missing = [k for k in KINDS_OF_STEP if not TableModel.ops[k]]
    assert not missing, f"steps that never ran: {missing} (ran: {dict(TableModel.ops)})"
