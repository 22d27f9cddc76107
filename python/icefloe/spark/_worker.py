"""Set-up of the Python worker processes that run icefloe's Spark tasks.

Three per-task costs of PySpark's reused Python workers are larger than a small read task:

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

3. Each task starts with the executor JVM writing a header, flushing, then writing the rest
   of the task (command and input) and flushing again. The JVM's socket has Nagle's algorithm
   on, so the second write waits for the worker to acknowledge the first, and the worker's
   kernel delays that acknowledgement by 40 ms (delayed ACK): every task started 40 ms late
   (measured between the two reads in pyspark/worker.py; the same write-write-read stall
   as SPARK-51667 and py4j#516). The worker cannot change the JVM's socket, but it can make
   its own kernel acknowledge the header at once. Linux acknowledges a small segment as soon
   as the application reads it, unless the connection is in delayed-ACK "ping-pong" mode,
   which it enters whenever the worker answers soon after receiving (every task does).
   Setting TCP_QUICKACK leaves that mode. It has to happen after the task's last write and
   before the next header, where only PySpark's daemon runs: it calls a full `gc.collect()`
   there, so a gc callback (`_QuickAck`) sets TCP_QUICKACK on the worker's connection.
   Measured on `local[2]`: the header-to-command gap went from ~42 ms to ~1 ms per task.
   (Setting it at the end of icefloe's own task code does not work: the worker's last
   writes come after and re-enter ping-pong mode.) `prepare_worker()` also sets
   TCP_NODELAY on the worker's end, so its small writes (the end of a task's output) are
   not held either. `ICEFLOE_WORKER_TCP_TUNING=0` turns both off.

`prepare_worker()` runs at the start of each icefloe task and does its work once per process.

The switches are read from the executors' environment
(`spark.executorEnv.ICEFLOE_WORKER_...`).
"""

from __future__ import annotations

import os
import socket
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from icefloe._io import IoConfig

__all__ = ["prepare_worker"]

_prepared = False


def prepare_worker(io_config: IoConfig | None = None) -> None:
    """Registers the driver's FileIO settings (every task: cheap when unchanged), and once
    per worker process: the zipimport fix (Python < 3.12), the gc freeze and the TCP
    options above."""
    global _prepared
    if io_config is not None:
        io_config.apply()
    if _prepared:
        return
    _prepared = True
    if sys.version_info < (3, 12) and os.environ.get("ICEFLOE_WORKER_ZIPIMPORT_FIX", "1") != "0":
        _install_zipimport_fix()
    if os.environ.get("ICEFLOE_WORKER_GC_FREEZE", "1") != "0":
        _freeze_gc()
    if os.environ.get("ICEFLOE_WORKER_TCP_TUNING", "1") != "0":
        fds = _loopback_tcp_fds()
        _set_tcp("TCP_NODELAY", fds)
        if fds and hasattr(socket, "TCP_QUICKACK"):
            _QuickAck(fds).start()


class _QuickAck:
    """Takes the worker's connections out of delayed-ACK "ping-pong" mode after each task
    (module docs, item 3) from a gc callback: the daemon's full collection after a task
    comes after the task's last write, and nothing is sent before the next task's header.

    Any full collection calls it; one during a task only acknowledges some bytes early,
    which is harmless. `forced` counts the times it ran (tests, diagnosis)."""

    def __init__(self, fds: list[int]) -> None:
        self.fds = fds
        self.forced = 0

    def start(self) -> None:
        import gc

        if self._on_gc not in gc.callbacks:
            gc.callbacks.append(self._on_gc)

    def stop(self) -> None:
        import gc

        if self._on_gc in gc.callbacks:
            gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info.get("generation") != 2:
            return
        try:
            _set_tcp("TCP_QUICKACK", self.fds)
            self.forced += 1
        except Exception:  # a gc callback must never raise (e.g. at interpreter shutdown)
            pass


def _loopback_tcp_fds() -> list[int]:
    """The descriptors of the process's connected TCP sockets whose peer is on this host (a
    PySpark worker's connection to its executor JVM is one; Spark connects over loopback)."""
    import ipaddress

    found: list[int] = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        try:
            fd = int(name)
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            s = socket.socket(fileno=os.dup(fd))
        except (OSError, ValueError):
            continue
        try:
            if s.family in (socket.AF_INET, socket.AF_INET6) and s.type == socket.SOCK_STREAM:
                if ipaddress.ip_address(s.getpeername()[0]).is_loopback:
                    found.append(fd)
        except (OSError, ValueError):
            pass  # not connected (a listening socket) or no address
        finally:
            s.close()  # the duplicate only: the connection stays open through `fd`
    return found


def _set_tcp(socket_option: str, fds: list[int]) -> None:
    """Sets the TCP option on each of `fds`, through a duplicate descriptor that is closed at
    once (no reference to the connection is kept)."""
    opt = getattr(socket, socket_option, None)
    if opt is None:
        return
    for fd in fds:
        try:
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            s.setsockopt(socket.IPPROTO_TCP, opt, 1)
        except OSError:
            pass
        finally:
            s.close()


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
