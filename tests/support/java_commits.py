"""Commits made through Iceberg Java's core API (tests/java/*.java, compiled by support.java):
equality deletes written as Flink's upsert writer does."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterable
from typing import Any

from support.java import java_core_helper


def eq_delete_helper() -> list[str]:
    """The `java` command running tests/java/EqDeleteWriter (compiled once into .cache/java)."""
    return java_core_helper("EqDeleteWriter")


def commit_eq_delete(
    warehouse: str,
    name: str,
    columns: list[str],
    keys: Iterable[tuple[Any, ...]],
    spec_id: int | None = None,
    partition: dict[str, Any] | None = None,
) -> None:
    """Commits one equality-delete file with `keys` on `columns` through the Java API
    (GenericFileWriterFactory.newEqualityDeleteWriter + newRowDelta, as Flink's upsert writer)."""
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        for key in keys:
            f.write("\t".join("\\N" if v is None else str(v) for v in key) + "\n")
    try:
        part = ",".join(f"{k}={v}" for k, v in (partition or {}).items())
        args = [
            f"file://{warehouse}",
            name,
            str(-1 if spec_id is None else spec_id),
            part,
            ",".join(columns),
            f.name,
        ]
        proc = subprocess.run([*eq_delete_helper(), *args], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        os.unlink(f.name)
