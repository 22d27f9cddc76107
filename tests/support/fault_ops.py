"""The writes the fault tests break (tests/faults/test_faults_disk.py, test_faults_kill.py): one
table shape, its first rows, and per operation what it does and the ids it leaves, so a test
knows what "the whole write" and "none of it" look like. The writer processes
(support/workers/fault_writer.py, denied_writer.py) run them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("val", pa.string())])
FIRST_IDS = range(0, 2000)


def rows(ids: range | list[int]) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "val": [f"value-{i:06d}" for i in ids]}, schema=SCHEMA)


@dataclass(frozen=True)
class Op:
    """A write: `run(table)` does it; `after(ids)` are the ids it leaves of `ids`."""

    run: Callable[[Any], Any]
    after: Callable[[set[int]], set[int]]
    properties: dict[str, str] = field(default_factory=dict)


OPS: dict[str, Op] = {
    "append": Op(lambda t: t.append(rows(range(5000, 5500))), lambda ids: ids | set(range(5000, 5500))),
    # A filter matching part of the one data file: the file is rewritten without those rows.
    "overwrite": Op(
        lambda t: t.overwrite(rows(range(7000, 7300)), overwrite_filter="id < 300"),
        lambda ids: {i for i in ids if i >= 300} | set(range(7000, 7300)),
    ),
    "delete_cow": Op(lambda t: t.delete("id < 700"), lambda ids: {i for i in ids if i >= 700}),
    # A row-level delete: position-delete files, data files untouched.
    "delete_mor": Op(
        lambda t: t.delete("id >= 1500"),
        lambda ids: {i for i in ids if i < 1500},
        {"write.delete.mode": "merge-on-read"},
    ),
}


def create(catalog: Any, name: str, op: str, properties: dict[str, str] | None = None) -> Any:
    """The table `op` runs on: FIRST_IDS appended in one data file."""
    props = {**OPS[op].properties, **(properties or {})}
    table = catalog.create_table(name, schema=SCHEMA, properties=props)
    table.append(rows(FIRST_IDS))
    return catalog.load_table(name)


def ids_of(table: Any) -> set[int]:
    ids = table.scan().to_arrow().column("id").to_pylist()
    assert len(ids) == len(set(ids)), f"{table}: duplicate rows"
    return set(ids)
