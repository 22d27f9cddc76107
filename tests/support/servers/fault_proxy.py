"""A fault-injecting HTTP proxy in front of the test S3 server (stdlib only).

It listens on a free loopback port and forwards each request to the upstream endpoint
(the moto server), except that, with a seeded RNG, a share `rate` of the requests (5% by
default) meet one fault, chosen uniformly:

- ``error``: an S3 error answer with an S3 XML body. Half are ``503 SlowDown`` /
  ``503 ServiceUnavailable``, answered without forwarding (throttling: nothing happened);
  half are ``500 InternalError`` answered *after* the request was forwarded and took effect
  (S3 documents that a 500 may or may not have been applied: a retried conditional PUT
  then meets its own object).
- ``delay``: the request is held 0.2-1 s, then forwarded normally.
- ``cut``: the request is forwarded (it takes effect) and the connection is closed part
  way through the response: inside the body when there is one, else inside the headers.

`fail_window(method, after)` makes every request of a method but the first `after` fail (503)
until the window ends, to force a write to fail for good; `inject(kind, method, ...)` puts a
fault on the next matching requests (the commit's conditional PUT, a list, a delete), to meet
one case for sure. `counts` says what was done (`requests`, `forwarded`, `error`, `error_503`,
`error_500`, `delay`, `cut`, `window`, `injected <kind>`), so a test can assert the faults
really happened; `faults_by_method` counts random faults per kind and HTTP method.

Bounds: it binds and accepts loopback only, forwards only to a loopback upstream, serves at
most `max_connections` connections at once, and stops itself after `max_lifetime_s` even if
the test forgets (`stop()` or the context manager end it normally, closing every connection).
"""

from __future__ import annotations

import http.client
import ipaddress
import random
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

KINDS = ("error", "delay", "cut")
# Hop-by-hop headers: never forwarded as they came.
_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade"}
_ERRORS = {
    503: (
        ("SlowDown", "Please reduce your request rate."),
        ("ServiceUnavailable", "Service is unable to handle request."),
    ),
    500: (("InternalError", "We encountered an internal error. Please try again."),),
}


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def s3_error_body(code: str, message: str, resource: str) -> bytes:
    request_id = uuid.uuid4().hex[:16].upper()
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message><Resource>{resource}</Resource>"
        f"<RequestId>{request_id}</RequestId><HostId>{request_id}</HostId></Error>"
    ).encode()


class FaultProxy:
    def __init__(
        self,
        upstream: str,
        rate: float = 0.05,
        seed: int = 0,
        delay_s: tuple[float, float] = (0.2, 1.0),
        max_connections: int = 128,
        max_lifetime_s: float = 900.0,
    ) -> None:
        up = urlsplit(upstream)
        if up.scheme != "http" or not up.hostname or not _loopback(up.hostname):
            raise ValueError(f"the fault proxy only forwards to a loopback http endpoint, not {upstream!r}")
        self.upstream_host = up.hostname
        self.upstream_port = up.port or 80
        self.rate = rate
        self.delay_s = delay_s
        self.max_connections = max_connections
        self.max_lifetime_s = max_lifetime_s
        self.counts: Counter[str] = Counter()
        self.faults_by_method: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._window: tuple[str, int] | None = None
        self._targeted: list[list[Any]] = []
        self._connections: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ---- life cycle ----
    @property
    def endpoint(self) -> str:
        if self._server is None:
            raise RuntimeError("the fault proxy is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FaultProxy:
        proxy = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def verify_request(self, request: Any, client_address: Any) -> bool:
                if not ipaddress.ip_address(client_address[0]).is_loopback:
                    return False
                with proxy._lock:
                    if len(proxy._connections) >= proxy.max_connections:
                        proxy.counts["refused"] += 1
                        return False
                    proxy._connections.add(request)
                return True

            def shutdown_request(self, request: Any) -> None:
                with proxy._lock:
                    proxy._connections.discard(request)
                super().shutdown_request(request)

        self._server = Server(("127.0.0.1", 0), _Handler)
        self._server.proxy = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.max_lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.cancel()
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            conns, self._connections = list(self._connections), set()
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            c.close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- faults ----
    @contextmanager
    def fail_window(self, method: str = "PUT", after: int = 0) -> Iterator[None]:
        """Inside the block, every `method` request but the first `after` fails with 503
        SlowDown (without reaching the server)."""
        with self._lock:
            self._window = (method.upper(), after)
        try:
            yield
        finally:
            with self._lock:
                self._window = None

    @contextmanager
    def faults_off(self) -> Iterator[None]:
        rate, self.rate = self.rate, 0.0
        try:
            yield
        finally:
            self.rate = rate

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def faults(self) -> dict[str, int]:
        with self._lock:
            return {k: self.counts[k] for k in KINDS}

    def inject(
        self, kind: str, method: str, path_contains: str = "", header: str = "", count: int = 1
    ) -> None:
        """The next `count` `method` requests whose path (with query) contains `path_contains`
        and that carry `header` (when given) meet fault `kind`: "cut", "delay", "error_500"
        (after the fact) or "error_503" (before)."""
        if kind not in ("cut", "delay", "error_500", "error_503"):
            raise ValueError(f"unknown fault {kind!r}")
        with self._lock:
            self._targeted.append([kind, method.upper(), path_contains, header.lower(), count])

    def _targeted_fault(self, method: str, path: str, headers: Any) -> str | None:
        for t in self._targeted:
            kind, m, part, header, left = t
            if left > 0 and m == method and part in path and (not header or header in headers):
                t[4] -= 1
                self.counts[f"injected {kind}"] += 1
                return str(kind)
        return None

    def _decide(self, method: str, path: str, headers: Any) -> tuple[str | None, int, float, float]:
        """(fault kind or None, status for errors, delay, cut fraction)."""
        with self._lock:
            self.counts["requests"] += 1
            injected = self._targeted_fault(method, path, headers)
            if injected is not None:
                kind, _, code = injected.partition("_")
                return kind, int(code or 0), self.delay_s[0], 0.5
            if self._window is not None and self._window[0] == method:
                if self._window[1] > 0:
                    self._window = (method, self._window[1] - 1)
                else:
                    self.counts["window"] += 1
                    return "window", 503, 0.0, 0.0
            if self._rng.random() >= self.rate:
                return None, 0, 0.0, 0.0
            kind = self._rng.choice(KINDS)
            status = self._rng.choice((503, 500))
            delay = self._rng.uniform(*self.delay_s)
            frac = self._rng.random()
            self.counts[kind] += 1
            if kind == "error":
                self.counts[f"error_{status}"] += 1
            self.faults_by_method[f"{kind} {method}"] += 1
            return kind, status, delay, frac

    def _error(self, status: int, resource: str) -> tuple[str, bytes]:
        with self._lock:
            code, message = self._rng.choice(_ERRORS[status])
        return code, s3_error_body(code, message, resource)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Idle keep-alive connections are kept longer than the client's pool keeps them (90 s),
    # so the proxy never closes a connection the client is about to reuse.
    timeout = 300

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    @property
    def proxy(self) -> FaultProxy:
        proxy: FaultProxy = self.server.proxy  # type: ignore[attr-defined]
        return proxy

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _forward(self, body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
        p = self.proxy
        conn = http.client.HTTPConnection(p.upstream_host, p.upstream_port, timeout=120)
        try:
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in self.headers.items():
                if k.lower() not in _HOP and k.lower() != "content-length":
                    conn.putheader(k, v)
            if body or self.command in ("PUT", "POST") or "Content-Length" in self.headers:
                conn.putheader("Content-Length", str(len(body)))
            conn.putheader("Connection", "close")
            conn.endheaders(body or None)
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, resp.reason, resp.getheaders(), data
        finally:
            conn.close()

    def _response(
        self, status: int, reason: str, headers: list[tuple[str, str]], data: bytes
    ) -> tuple[bytes, bytes]:
        """(status line + headers, body), framed by Content-Length for the keep-alive client."""
        bodyless = self.command == "HEAD" or status in (204, 304) or 100 <= status < 200
        lines = [f"HTTP/1.1 {status} {reason}"]
        for k, v in headers:
            if k.lower() in _HOP or (k.lower() == "content-length" and not bodyless):
                continue
            lines.append(f"{k}: {v}")
        if not bodyless:
            lines.append(f"Content-Length: {len(data)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        return head, (b"" if bodyless else data)

    def _send_error(self, status: int) -> None:
        code, body = self.proxy._error(status, self.path.split("?", 1)[0])
        headers = [("Content-Type", "application/xml"), ("x-amz-request-id", code)]
        head, data = self._response(status, HTTPStatus(status).phrase, headers, body)
        self.wfile.write(head + data)

    def _handle(self) -> None:
        body = self._body()
        names = {k.lower() for k in self.headers}
        kind, status, delay, frac = self.proxy._decide(self.command, self.path, names)
        if kind == "window" or (kind == "error" and status == 503):
            self._send_error(status)
            return
        if kind == "delay":
            time.sleep(delay)
        try:
            st, reason, headers, data = self._forward(body)
        except OSError:  # the upstream is gone (stopping): answer as a busy S3 would
            self._send_error(503)
            return
        self.proxy._count("forwarded")
        if kind == "error":  # 500 after the request took effect
            self._send_error(500)
            return
        head, data = self._response(st, reason, headers, data)
        if kind == "cut":
            if data:  # the headers and part of the body
                raw = head + data[: int(frac * len(data))]
            else:  # part of the headers
                raw = head[: max(1, int(frac * (len(head) - 1)))]
            self.wfile.write(raw)
            self.wfile.flush()
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.wfile.write(head + data)

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle
