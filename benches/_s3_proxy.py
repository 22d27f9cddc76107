"""A counting HTTP proxy for the object-store benchmarks: put in front of the S3 server, it
forwards every request unchanged (Host header and signature included) and counts requests and
bytes per HTTP method, so a benchmark can say how many GETs and how many bytes a query cost.

It runs as its own process (`run_proxy(upstream)` starts it; `python _s3_proxy.py UPSTREAM`
is the process), so that a benchmark's in-process reads, which may hold the GIL in native
code, never wait on it; `ProxyClient` resets and reads its counters over HTTP
(`/__proxy__/reset`, `/__proxy__/counts`).

Response bodies are streamed through in 256 KiB pieces and counted as they are delivered: a
client that reads part of an open-ended `Range` and then drops the connection (Java's
S3InputStream on a seek) is charged for what it was sent, not for the object's tail.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_CHUNK = 256 * 1024
_FIELDS = ("requests", "bytes_out", "bytes_in", "errors", "micros", "payloads")
# Hop-by-hop headers are not forwarded; Expect is answered here (the handler sends 100-continue).
_HOP = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection", "te", "upgrade"}


@dataclass
class Counts:
    """Requests and bytes per HTTP method (`bytes_out`: response bodies delivered to the
    client; `bytes_in`: request bodies sent upstream; `micros`: time from forwarding a request
    to the end of its response, summed; `payloads`: how request bodies were signed, by the
    `x-amz-content-sha256` header: a hash, UNSIGNED-PAYLOAD or a STREAMING-* chunked upload)."""

    requests: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    bytes_out: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    bytes_in: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    micros: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    payloads: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def to_json(self) -> dict[str, dict[str, int]]:
        return {
            "requests": dict(self.requests),
            "bytes_out": dict(self.bytes_out),
            "bytes_in": dict(self.bytes_in),
            "errors": dict(self.errors),
            "micros": dict(self.micros),
            "payloads": dict(self.payloads),
        }

    @staticmethod
    def from_json(d: dict[str, dict[str, int]]) -> Counts:
        return Counts(*(defaultdict(int, d[k]) for k in _FIELDS))

    def total_requests(self) -> int:
        return sum(self.requests.values())

    def summary(self) -> str:
        parts = []
        for m in sorted(self.requests):
            s = f"{m} {self.requests[m]}"
            if self.bytes_out.get(m):
                s += f" ({self.bytes_out[m] / 1e6:.1f} MB down)"
            if self.bytes_in.get(m):
                s += f" ({self.bytes_in[m] / 1e6:.1f} MB up)"
            if self.micros.get(m):
                s += f" ({self.micros[m] / 1e6:.2f} s in the server)"
            if self.errors.get(m):
                s += f" [{self.errors[m]} 4xx/5xx]"
            parts.append(s)
        return ", ".join(parts) or "none"


class CountingProxy:
    """The proxy server (in the proxy's own process): forwards to `upstream`, counts."""

    def __init__(self, upstream: str) -> None:
        u = urllib.parse.urlsplit(upstream)
        self._host, self._port = u.hostname or "127.0.0.1", u.port or 80
        self._lock = threading.Lock()
        self._counts = Counts()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                self._upstream: http.client.HTTPConnection | None = None

            def finish(self) -> None:
                if self._upstream is not None:
                    self._upstream.close()
                super().finish()

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    out = bytearray()
                    while True:
                        size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                        if size == 0:
                            while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            return bytes(out)
                        out += self.rfile.read(size)
                        self.rfile.readline()
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n) if n else b""

            def _control(self) -> bool:
                if not self.path.startswith("/__proxy__/"):
                    return False
                self._body()
                if self.path == "/__proxy__/reset":
                    proxy.reset()
                out = json.dumps(proxy.counts().to_json()).encode()
                self.send_response_only(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)
                return True

            def _forward(self) -> None:
                method = self.command
                if self._control():
                    return
                body = self._body()
                if self._upstream is None:
                    self._upstream = http.client.HTTPConnection(proxy._host, proxy._port, timeout=300)
                up = self._upstream
                started = time.perf_counter()
                try:
                    up.putrequest(method, self.path, skip_host=True, skip_accept_encoding=True)
                    for k, v in self.headers.items():
                        if k.lower() not in _HOP and k.lower() != "content-length":
                            up.putheader(k, v)
                    if body or method in ("PUT", "POST"):
                        up.putheader("Content-Length", str(len(body)))
                    up.endheaders(body or None)
                    resp = up.getresponse()
                except (OSError, http.client.HTTPException):
                    up.close()
                    self._upstream = None
                    self.send_error(502)
                    return
                self.send_response_only(resp.status, resp.reason)
                length = resp.getheader("Content-Length")
                chunked = length is None and method != "HEAD" and resp.status not in (204, 304)
                payload = resp.read() if chunked else None
                for k, v in resp.getheaders():
                    if k.lower() not in _HOP and not (chunked and k.lower() == "content-length"):
                        self.send_header(k, v)
                if payload is not None:
                    self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                sent = 0
                try:
                    if payload is not None:
                        self.wfile.write(payload)
                        sent = len(payload)
                    elif method != "HEAD":
                        while piece := resp.read(_CHUNK):
                            self.wfile.write(piece)
                            sent += len(piece)
                    self.wfile.flush()
                except OSError:  # the client hung up part way (an aborted ranged read)
                    self.close_connection = True
                    up.close()
                    self._upstream = None
                finally:
                    with proxy._lock:
                        c = proxy._counts
                        c.requests[method] += 1
                        c.bytes_out[method] += sent
                        c.bytes_in[method] += len(body)
                        c.micros[method] += int((time.perf_counter() - started) * 1e6)
                        if body:
                            sha = self.headers.get("x-amz-content-sha256", "none")
                            kind = sha if not all(ch in "0123456789abcdef" for ch in sha) else "hash"
                            c.payloads[f"{method} {kind}"] += 1
                        if resp.status >= 400:
                            c.errors[method] += 1
                if resp.will_close:
                    up.close()
                    self._upstream = None

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self._server.server_address[1]}"

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def reset(self) -> None:
        with self._lock:
            self._counts = Counts()

    def counts(self) -> Counts:
        """The counts since the last reset (a copy)."""
        with self._lock:
            return Counts.from_json(self._counts.to_json())


class ProxyClient:
    """The benchmark's handle on a proxy process: its endpoint, reset, counts."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def _call(self, what: str) -> Counts:
        with urllib.request.urlopen(f"{self.endpoint}/__proxy__/{what}", timeout=30) as r:
            return Counts.from_json(json.loads(r.read()))

    def reset(self) -> None:
        self._call("reset")

    def counts(self) -> Counts:
        """The counts since the last reset."""
        return self._call("counts")


@contextmanager
def run_proxy(upstream: str, log_dir: Path) -> Iterator[ProxyClient]:
    """Starts a counting proxy process in front of `upstream`; yields its client; stops it."""
    log = open(log_dir / "s3-proxy.log", "wb")
    proc = subprocess.Popen(
        [sys.executable, __file__, upstream], stdout=subprocess.PIPE, stderr=log, env=dict(os.environ)
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("http://"):
            raise RuntimeError(f"the counting proxy did not start: {(log_dir / 's3-proxy.log').read_text()}")
        client = ProxyClient(line)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.counts()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield client
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


if __name__ == "__main__":
    server = CountingProxy(sys.argv[1])
    print(server.endpoint, flush=True)
    server.serve_forever()
