"""The Spark worker set-up (icefloe.spark._worker): zipimport's invalidate_caches re-reads an
archive only when it changed, so PySpark's per-task `importlib.invalidate_caches()` stops
re-reading pyspark.zip on Python < 3.12, while a rewritten archive is still seen; the gc
freeze; TCP_NODELAY on the worker's connection, which after every task (the daemon's full
collection) leaves delayed-ACK ping-pong mode so the next task's header is acknowledged at
once. Each has its opt-out."""

from __future__ import annotations

import importlib
import socket
import sys
import zipfile
import zipimport
from pathlib import Path
from typing import Any

import pytest
from icefloe.spark import _worker

zipimport_fix_applies = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="the fix applies to Python < 3.12 only (3.12 invalidates lazily)"
)


def _write_zip(path: Path, modules: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as z:
        for name, source in modules.items():
            z.writestr(f"{name}.py", source)


@zipimport_fix_applies
def test_unchanged_archive_is_not_reread_and_changed_one_is(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    archive = tmp_path / "lib.zip"
    _write_zip(archive, {"icefloe_zip_a": "X = 1\n"})
    monkeypatch.syspath_prepend(str(archive))
    importer = zipimport.zipimporter(str(archive))
    _worker._install_zipimport_fix()
    importer.invalidate_caches()  # first call reads and records the archive's state
    files = importer._files
    importer.invalidate_caches()
    importlib.invalidate_caches()
    assert importer._files is files, "an unchanged archive was read again"
    assert importlib.import_module("icefloe_zip_a").X == 1

    # rewrite the archive (another size): the next invalidation must read it again
    _write_zip(archive, {"icefloe_zip_a": "X = 1\n", "icefloe_zip_b": "Y = 22\n"})
    importlib.invalidate_caches()
    importer.invalidate_caches()
    assert importer._files is not files
    assert "icefloe_zip_b.py" in importer._files
    assert importlib.import_module("icefloe_zip_b").Y == 22
    for m in ("icefloe_zip_a", "icefloe_zip_b"):
        sys.modules.pop(m, None)


@zipimport_fix_applies
def test_installing_twice_wraps_once(monkeypatch: Any) -> None:
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    _worker._install_zipimport_fix()
    first = zipimport.zipimporter.invalidate_caches
    _worker._install_zipimport_fix()
    assert zipimport.zipimporter.invalidate_caches is first
    assert getattr(first, "__icefloe__", False)


@zipimport_fix_applies
def test_opt_out_leaves_zipimport_alone(monkeypatch: Any) -> None:
    original = zipimport.zipimporter.invalidate_caches
    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", original)
    monkeypatch.setattr(_worker, "_prepared", False)
    monkeypatch.setenv("ICEFLOE_WORKER_ZIPIMPORT_FIX", "0")
    monkeypatch.setenv("ICEFLOE_WORKER_GC_FREEZE", "0")
    monkeypatch.setenv("ICEFLOE_WORKER_TCP_TUNING", "0")
    _worker.prepare_worker()
    assert zipimport.zipimporter.invalidate_caches is original


def test_gc_freeze_moves_existing_objects_out_of_collections(monkeypatch: Any) -> None:
    import gc

    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    monkeypatch.setattr(_worker, "_prepared", False)
    monkeypatch.setenv("ICEFLOE_WORKER_GC_FREEZE", "0")
    monkeypatch.setenv("ICEFLOE_WORKER_TCP_TUNING", "0")
    before = gc.get_freeze_count()
    _worker.prepare_worker()
    assert gc.get_freeze_count() == before, "the opt-out froze objects"

    monkeypatch.setattr(_worker, "_prepared", False)
    monkeypatch.delenv("ICEFLOE_WORKER_GC_FREEZE")
    try:
        _worker.prepare_worker()
        frozen = gc.get_freeze_count()
        assert frozen > before
        _worker.prepare_worker()  # once per process: no second freeze (the count may only
        # drop, when other threads free frozen objects)
        assert gc.get_freeze_count() <= frozen
    finally:
        gc.unfreeze()


def test_tcp_nodelay_on_the_workers_connections_keeps_no_duplicate() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    try:
        fds = _worker._loopback_tcp_fds()
        assert client.fileno() in fds and conn.fileno() in fds
        assert server.fileno() not in fds, "a listening socket is not a connection"
        assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0
        _worker._set_tcp("TCP_NODELAY", [client.fileno()])
        assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        client.sendall(b"x")
        assert conn.recv(1) == b"x"
        # no duplicate descriptor is kept: closing the connection reaches the peer
        client.close()
        conn.settimeout(5)
        assert conn.recv(1) == b""
    finally:
        for s in (client, conn, server):
            s.close()


def _ping_pong(jvm: socket.socket, worker: socket.socket) -> None:
    """One task's exchange: the "JVM" sends, the worker answers at once (which is what puts
    the worker's end into delayed-ACK ping-pong mode)."""
    jvm.sendall(b"task")
    assert worker.recv(4) == b"task"
    worker.sendall(b"done")
    assert jvm.recv(4) == b"done"


def _in_quickack_mode(s: socket.socket) -> bool:
    # Linux reports TCP_QUICKACK as "not in ping-pong mode": acknowledgements go out at once
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK) != 0


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux only")
def test_each_full_collection_takes_the_connection_out_of_delayed_ack_mode() -> None:
    import gc

    server = socket.create_server(("127.0.0.1", 0))
    jvm = socket.create_connection(server.getsockname())
    worker, _ = server.accept()
    quick = _worker._QuickAck([worker.fileno()])
    try:
        _ping_pong(jvm, worker)
        assert not _in_quickack_mode(worker), "an answered exchange should enter ping-pong mode"
        quick.start()
        gc.collect(0)  # a young collection is not the daemon's collection after a task
        assert not _in_quickack_mode(worker) and quick.forced == 0
        gc.collect()  # the daemon's full collection after the task's last write
        assert _in_quickack_mode(worker) and quick.forced == 1
        for _ in range(3):  # and again after every task
            _ping_pong(jvm, worker)
            assert not _in_quickack_mode(worker)
            gc.collect()
            assert _in_quickack_mode(worker)
        assert quick.forced == 4
        quick.stop()
        _ping_pong(jvm, worker)
        gc.collect()
        assert not _in_quickack_mode(worker) and quick.forced == 4, "stopped, yet still called"
    finally:
        quick.stop()
        for s in (jvm, worker, server):
            s.close()


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux only")
def test_prepare_worker_tunes_the_connection_unless_opted_out(monkeypatch: Any) -> None:
    import gc

    monkeypatch.setattr(zipimport.zipimporter, "invalidate_caches", zipimport.zipimporter.invalidate_caches)
    monkeypatch.setenv("ICEFLOE_WORKER_GC_FREEZE", "0")
    server = socket.create_server(("127.0.0.1", 0))
    jvm = socket.create_connection(server.getsockname())
    worker, _ = server.accept()
    before = list(gc.callbacks)
    try:
        monkeypatch.setattr(_worker, "_prepared", False)
        monkeypatch.setenv("ICEFLOE_WORKER_TCP_TUNING", "0")
        _worker.prepare_worker()
        assert gc.callbacks == before
        assert worker.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0

        monkeypatch.setattr(_worker, "_prepared", False)
        monkeypatch.delenv("ICEFLOE_WORKER_TCP_TUNING")
        _worker.prepare_worker()
        added = [cb for cb in gc.callbacks if cb not in before]
        assert len(added) == 1 and worker.fileno() in added[0].__self__.fds
        assert worker.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        _ping_pong(jvm, worker)
        gc.collect()
        assert _in_quickack_mode(worker)
    finally:
        for cb in [cb for cb in gc.callbacks if cb not in before]:
            gc.callbacks.remove(cb)
        for s in (jvm, worker, server):
            s.close()
