"""Progress of long maintenance work: a `rich` progress bar on stderr when stderr is a
terminal, nothing otherwise (scripts, logs, Spark drivers under a scheduler stay quiet).

    with progress("deleting expired files", total=len(paths), unit="files") as advance:
        for chunk in chunks:
            ...
            advance(len(chunk))

`ICEFLOE_PROGRESS=0` turns the bars off on a terminal, `ICEFLOE_PROGRESS=1` forces them on
(for a terminal rich does not recognise). Work on Spark executors shows in Spark's own
progress (the console bar and the UI), under the job description set by
`icefloe.spark._session.spark_job`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from icefloe.table import Table

T = TypeVar("T")

# No bar for no work.
_MIN_TOTAL = 1


def table_label(table: Table) -> str:
    """How a bar names the table: its dotted identifier."""
    return ".".join(table.name())


def enabled() -> bool:
    """Whether progress bars are shown (see the module doc)."""
    forced = os.environ.get("ICEFLOE_PROGRESS", "").strip().lower()
    if forced in ("0", "false", "no", "off"):
        return False
    if forced in ("1", "true", "yes", "on"):
        return True
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())


@contextmanager
def progress(description: str, total: int, unit: str = "files") -> Iterator[Callable[[int], None]]:
    """Yields `advance(n)`; draws a bar of `total` steps when `enabled()`, else does nothing."""
    if total < _MIN_TOTAL or not enabled():
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(stderr=True, force_terminal=True if os.environ.get("ICEFLOE_PROGRESS") else None)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n: bar.advance(task, n)


def chunked(items: Sequence[T], advance: Callable[[int], None], size: int) -> Iterator[Sequence[T]]:
    """`items` in slices of `size`, advancing the bar by each slice once it was handled.
    With no bar (`size` is then the whole input) it is one slice: no per-chunk overhead."""
    for start in range(0, len(items), size):
        part = items[start : start + size]
        yield part
        advance(len(part))


def chunk_size(total: int) -> int:
    """Slices of about 1% (at least 100 items), or everything at once without a bar."""
    return max(100, total // 100) if enabled() and total >= _MIN_TOTAL else max(1, total)


def delete_files(
    locations: Sequence[str], description: str, checksums: Sequence[bool] | None = None
) -> list[tuple[str, str]]:
    """Deletes `locations` through the Rust FileIO (concurrently), showing progress; returns
    (location, error) of those that could not be deleted. Local files go with the Hadoop
    `.<name>.crc` beside them: probed for each file, or, given `checksums` (one flag per
    location, from a listing that saw the hidden names), only where one was seen."""
    from icefloe import _native

    failures: list[tuple[str, str]] = []
    flags = checksums if checksums is not None else [True] * len(locations)
    if len(flags) != len(locations):
        raise ValueError(f"expected {len(locations)} checksum flags, found {len(flags)}")
    pairs = list(zip(locations, flags))
    with progress(description, len(locations)) as advance:
        for part in chunked(pairs, advance, chunk_size(len(pairs))):
            for flag in (True, False):
                paths = [loc for loc, f in part if bool(f) == flag]
                if paths:
                    failures.extend(_native.delete_files_reporting(paths, checksums=flag))
    return failures
