"""REST commits whose outcome the client cannot see, against the real RESTCatalogServer with a
small HTTP proxy in front of it that fails table commits (`POST .../tables/<name>`) on demand:

- the server applies the commit but the response is lost (a 502 from the proxy, or the
  connection cut with no response): icefloe checks the table, finds its snapshot there and
  returns it — one snapshot, the rows once, never a blind retry that commits twice;
- the commit never reaches the server (503 from the proxy): the outcome is unknown to the
  client, so it raises CommitStateUnknownException and keeps the written files (they may be
  live); the table is unchanged and the next append works.
"""

from __future__ import annotations

import http.server
import threading
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import icefloe
import pytest
from icefloe import _io
from icefloe.catalog import RestCatalog
from icefloe.exceptions import CommitStateUnknownException
from support.catalogs import ARROW, rows
from support.servers.s3 import S3Server


class CommitFaultProxy:
    """Forwards every request to `upstream`; the next `arm(mode)`d table commit is failed:
    `lose` (forwarded, then 502), `cut` (forwarded, then the connection closed with no
    response) or `refuse` (503, not forwarded)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.mode: str | None = None
        self.faults: list[str] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                is_commit = (
                    self.command == "POST"
                    and "/tables/" in self.path
                    and not self.path.endswith(("/metrics", "/rename"))
                )
                mode = proxy.mode if is_commit else None
                if mode == "refuse":
                    proxy.mode = None
                    proxy.faults.append(mode)
                    self._reply(
                        503, b'{"error": {"message": "injected", "type": "ServiceUnavailable", "code": 503}}'
                    )
                    return
                headers = {
                    k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")
                }
                req = urllib.request.Request(
                    proxy.upstream + self.path, data=body, method=self.command, headers=headers
                )
                try:
                    with urllib.request.urlopen(req, timeout=60) as r:
                        status, payload, ctype = r.status, r.read(), r.headers.get("Content-Type")
                except urllib.error.HTTPError as e:
                    status, payload, ctype = e.code, e.read(), e.headers.get("Content-Type")
                if mode in ("lose", "cut"):
                    proxy.mode = None
                    proxy.faults.append(mode)
                    if mode == "cut":
                        self.close_connection = True
                        self.connection.shutdown(2)
                        return
                    self._reply(502, b"bad gateway (injected)")
                    return
                self._reply(status, payload, ctype)

            def _reply(self, status: int, payload: bytes, ctype: str | None = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype or "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            do_GET = do_POST = do_DELETE = do_HEAD = do_PUT = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def arm(self, mode: str) -> None:
        self.mode = mode

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def proxy(rest_uri: str) -> Iterator[CommitFaultProxy]:
    p = CommitFaultProxy(rest_uri)
    yield p
    p.close()


@pytest.fixture
def cat(proxy: CommitFaultProxy, s3: S3Server) -> RestCatalog:
    c = icefloe.load_catalog("rest-faults", type="rest", uri=proxy.uri, **s3.properties())
    assert isinstance(c, RestCatalog)
    c.create_namespace(f"f_{uuid.uuid4().hex[:8]}")
    return c


def _table(cat: RestCatalog) -> Any:
    ns = cat.list_namespaces()[-1][0]
    return cat.create_table(f"{ns}.t_{uuid.uuid4().hex[:6]}", schema=ARROW)


@pytest.mark.parametrize("mode", ["lose", "cut"])
def test_a_lost_commit_response_finds_the_commit_landed(
    cat: RestCatalog, proxy: CommitFaultProxy, mode: str
) -> None:
    t = _table(cat)
    t.append(rows(range(10)))
    proxy.faults.clear()
    proxy.arm(mode)
    t.append(rows(range(10, 20)))  # landed on the server; the response was lost
    assert proxy.faults == [mode]
    fresh = cat.load_table(t.identifier)
    assert [s.snapshot_id for s in fresh.snapshots()][-1] == t.current_snapshot().snapshot_id
    assert len(fresh.snapshots()) == 2, "the commit was applied twice"
    assert sorted(fresh.scan().to_arrow().column("id").to_pylist()) == list(range(20))


def test_a_refused_commit_is_unknown_and_keeps_its_files(cat: RestCatalog, proxy: CommitFaultProxy) -> None:
    t = _table(cat)
    t.append(rows(range(5)))
    before = cat.load_table(t.identifier)
    objects_before = {p for p, _ in _io.list_files(t.location())}
    proxy.faults.clear()
    proxy.arm("refuse")
    with pytest.raises(CommitStateUnknownException) as info:
        t.append(rows(range(5, 9)))
    assert proxy.faults == ["refuse"]
    assert "503" in str(info.value)
    after = cat.load_table(t.identifier)
    assert after.metadata_location == before.metadata_location  # nothing committed
    kept = {p for p, _ in _io.list_files(t.location())} - objects_before
    assert any(p.endswith(".parquet") for p in kept), "the written data file was deleted"
    # The next write works and sees only committed rows.
    t2 = cat.load_table(t.identifier)
    t2.append(rows(range(100, 102)))
    assert sorted(cat.load_table(t.identifier).scan().to_arrow().column("id").to_pylist()) == [
        0,
        1,
        2,
        3,
        4,
        100,
        101,
    ]


def test_an_answer_cut_part_way_is_a_lost_answer(rest_uri: str, s3: S3Server) -> None:
    """The headers and half of the body arrive, then the connection closes (found by the
    faulted soak: `http.client.IncompleteRead` escaped a commit). A read is asked again; a
    commit's answer is lost, so the client finds out whether it landed: the rows once."""
    from support.servers.fault_proxy import FaultProxy

    with FaultProxy(rest_uri, rate=0.0) as faults:
        c = icefloe.load_catalog("rest-cut", type="rest", uri=faults.endpoint, **s3.properties())
        ns = f"f_{uuid.uuid4().hex[:8]}"
        c.create_namespace(ns)
        t = c.create_table(f"{ns}.cut", schema=ARROW)
        t.append(rows(range(5)))
        faults.inject("cut", "GET", f"/namespaces/{ns}/tables/cut")
        assert sorted(c.load_table(t.identifier).scan().to_arrow().column("id").to_pylist()) == list(range(5))
        faults.inject("cut", "POST", f"/namespaces/{ns}/tables/cut")
        try:
            t.append(rows(range(5, 9)))
        except CommitStateUnknownException:
            pass
        assert faults.counts["injected cut"] == 2
        fresh = c.load_table(t.identifier)
        assert sorted(fresh.scan().to_arrow().column("id").to_pylist()) == list(range(9))
        assert len(fresh.snapshots()) == 2, "the commit was applied twice"
