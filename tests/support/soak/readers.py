"""The soak's other readers (issue 44): PyIceberg, DuckDB's `iceberg` extension and Sail read
the icefloe twin and the shared table, and each must return the rows Iceberg Java reads from
the Java twin, wherever the reader supports the table's features.

What a reader does not support is decided from the table's metadata before it reads
(`unsupported`), each rule a limitation the reader has (docs/reliability.md, "Other readers");
every other failure or difference fails the step. A reader skipped for a table is logged with
its reason, so a history's log shows what each reader covered."""

from __future__ import annotations

import atexit
import functools
import json
import os
from typing import Any

from support import duckdb_reader
from support.oracle import assert_same_rows

READERS = ("pyiceberg", "duckdb", "sail")

# ICEFLOE_SOAK_READERS: `end` (make test: after a history's last step), `each` (make soak:
# after every step) or `off`.
WHEN = os.environ.get("ICEFLOE_SOAK_READERS", "end")


def _metadata(table: Any) -> dict[str, Any]:
    path = table.metadata_location.removeprefix("file://").removeprefix("file:")
    with open(path, encoding="utf-8") as f:
        return dict(json.load(f))


def _has_equality_deletes(table: Any) -> bool:
    """Whether the current snapshot holds a live equality delete file, whether or not any
    data file is old enough for it to apply (PyIceberg refuses either)."""
    contents = table.inspect.delete_files().column("content").to_pylist()
    return 2 in contents


def unsupported(reader: str, table: Any) -> str | None:
    """Why `reader` cannot be expected to read `table` as Java does, or None. Each reason is a
    limitation the soak found, checked on Java's own tables (docs/reliability.md)."""
    if reader == "pyiceberg" and _has_equality_deletes(table):
        return "equality deletes"  # "PyIceberg does not yet support equality deletes" (0.12)
    if reader == "duckdb":
        md = _metadata(table)
        current = next(
            (s for s in md.get("snapshots", []) if s["snapshot-id"] == md.get("current-snapshot-id")), None
        )
        if md["format-version"] >= 2 and current is not None and "sequence-number" not in current:
            # a v1 table upgraded, no snapshot since: its manifest list has no sequence numbers,
            # which DuckDB 1.5.5 requires ("required field 'sequence_number' is NULL!")
            return "a v1 manifest list under v2 metadata"
    return None


def _read(reader: str, table: Any, javas_writes: bool) -> Any:
    if reader == "pyiceberg":
        from pyiceberg.table import StaticTable

        return StaticTable.from_metadata(table.metadata_location).scan().to_arrow()
    if reader == "duckdb":
        # DuckDB 1.5.5 misreads deletion vectors of Java's Puffin files through its file cache
        # (seed 87382409; tests/interop/test_dv_layout.py): off for a table Java writes to, on
        # (DuckDB's default) for icefloe's twin, whose Puffin files are laid out for it.
        return duckdb_reader.read_iceberg(table.metadata_location, file_cache=not javas_writes)
    return _sail().read_iceberg(table.location())


@functools.cache
def _sail() -> Any:
    """One Sail server per process, started on first use and stopped at exit."""
    from support.sail_reader import SailReader

    server = SailReader()
    atexit.register(server.close)
    return server


def check(
    catalog: Any,
    names: list[str],
    expected: Any,
    where: str,
    log: list[str],
    javas: frozenset[str] = frozenset(),
) -> None:
    """Each reader reads each table of `names` (icefloe's filesystem catalog) where it supports
    the table's features; its rows must be `expected` (Java's read of the Java twin). `javas`:
    the tables of `names` Java writes to too."""
    for name in names:
        table = catalog.load_table(name)
        if table.current_snapshot() is None:
            continue
        for reader in READERS:
            reason = unsupported(reader, table)
            if reason is not None:
                log.append(f"    {reader} skips {name}: {reason}")
                continue
            got = _read(reader, table, name in javas)
            if reader == "sail" and got.column_names != expected.columns:
                # Sail 0.7.2 puts identity partition columns last: compared in Java's order
                if sorted(got.column_names) == sorted(expected.columns):
                    got = got.select(expected.columns)
            assert_same_rows(got, expected, context=f"{where}: {reader} reads {name}")
