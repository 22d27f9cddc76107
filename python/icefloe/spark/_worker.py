"""Set-up of the Python worker processes that run icefloe's Spark tasks.

Two per-task costs of PySpark's reused Python workers are larger than a small read task:

1. After every task the worker runs a full `gc.collect()` (pyspark/daemon.py) over every
   object of the process: pyspark, pyarrow, numpy, pandas and icefloe's modules, ~96,000
   objects, 16-110 ms measured (PySpark 3.5.9, Python 3.11.7), which delays the next task
   sent to that worker. `prepare_worker()` collects once and then `gc.freeze()`s what exists
   (modules and their objects), so later collections only walk what tasks create.
   `ICEFLOE_WORKER_GC_FREEZE=0` turns this off.

2. PySpark's worker calls `importlib.invalidate_caches()` before every task. On Python 3.10
   and 3.11 that makes every `zipimporter` on the worker's path re-read its whole archive
   directory at once (CPython gh-103200, fixed in 3.12; Spark SPARK-54744). A PySpark worker
   has one zipimporter per package directory of `pyspark.zip` and `py4j-*.zip` (13 of them),
   so each task pays about 60 ms before its function starts. `prepare_worker()` makes
   `zipimporter.invalidate_caches` (Python < 3.12 only) re-read an archive only when its size
   or mtime changed since it was last read: a rewritten archive is still re-read.
   `ICEFLOE_WORKER_ZIPIMPORT_FIX=0` leaves zipimport alone.

`prepare_worker()` runs at the start of each icefloe task and does its work once per process.

Both switches are read from the executors' environment
(`spark.executorEnv.ICEFLOE_WORKER_...`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["prepare_worker"]

_prepared = False


def prepare_worker() -> None:
    """Once per worker process: the zipimport fix (Python < 3.12) and the gc freeze above."""
    global _prepared
    if _prepared:
        return
    _prepared = True
    if sys.version_info < (3, 12) and os.environ.get("ICEFLOE_WORKER_ZIPIMPORT_FIX", "1") != "0":
        _install_zipimport_fix()
    if os.environ.get("ICEFLOE_WORKER_GC_FREEZE", "1") != "0":
        _freeze_gc()


def _freeze_gc() -> None:
    """Collect once, then move every surviving object to the permanent generation, which
    later collections skip (the objects stay alive, as modules' objects do anyway)."""
    import gc

    gc.collect()
    gc.freeze()


def _archive_state(archive: str) -> tuple[int, int] | None:
    try:
        st = os.stat(archive)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _install_zipimport_fix() -> None:
    import zipimport

    cls: Any = zipimport.zipimporter
    original = cls.invalidate_caches
    if getattr(original, "__icefloe__", False):
        return
    directory_cache: dict[str, Any] = getattr(zipimport, "_zip_directory_cache", {})
    read_at: dict[str, tuple[int, int]] = {}

    def invalidate_caches(self: Any) -> None:
        archive = self.archive
        state = _archive_state(archive)
        cached = directory_cache.get(archive)
        if state is not None and cached is not None and read_at.get(archive) == state:
            self._files = cached  # the archive did not change since it was last read
            return
        original(self)
        if state is not None:
            read_at[archive] = state

    invalidate_caches.__icefloe__ = True  # type: ignore[attr-defined]
    cls.invalidate_caches = invalidate_caches
