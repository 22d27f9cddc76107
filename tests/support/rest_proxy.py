"""A rewriting proxy in front of the real REST server that plays a server of another shape
(see tests/catalog/test_catalog_rest_server_config.py) and records every request: the
`prefix`, the namespace separator and the `endpoints` of its /v1/config, vended credentials,
idempotency keys, lost answers, and any JSON answer rewritten or observed by `answer`."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
import urllib.parse
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]

# The REST spec's scan planning endpoints (a server of the "no-plan" shape lists none of them).
PLAN_ENDPOINTS = ("/plan", "/tasks")


class ServerShapeProxy:
    """Forwards to the real REST server `upstream`, answering like a server with the given
    `prefix`, `separator` (URL-encoded, as /v1/config carries it), `endpoints` ("as-is": the
    real server's list; "no-head": listed without HEAD; "no-plan": listed without the scan
    planning endpoints; "absent": no list) and vended credentials (`vend(result)` rewrites
    each loadTable / createTable answer). `answer(request, result)` sees every other JSON
    answer of the real server (`request`: `METHOD path`) and returns what to send."""

    def __init__(
        self,
        upstream: str,
        *,
        prefix: str | None = None,
        separator: str | None = None,
        endpoints: str = "as-is",
        vend: Callable[[Json], Json] | None = None,
        idempotency: bool = False,
        lose_first: Callable[[str], bool] | None = None,
        answer: Callable[[str, Json], Json] | None = None,
    ) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.seen: list[str] = []
        # (`METHOD path`, its Idempotency-Key header or None) of every request after /v1/config.
        self.keys: list[tuple[str, str | None]] = []
        # (`METHOD path`, the real server's status) of every request after /v1/config.
        self.statuses: list[tuple[str, int]] = []
        # The bodies of the metrics reports sent (POST .../tables/{table}/metrics).
        self.reports: list[Json] = []
        lost: set[str] = set()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _reply(
                self, status: int, payload: bytes, ctype: str = "application/json", etag: str | None = None
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                if etag:
                    self.send_header("ETag", etag)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

            def _not_found(self, kind: str, message: str) -> None:
                err = {"error": {"message": message, "type": kind, "code": 404}}
                self._reply(404, json.dumps(err).encode())

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.seen.append(f"{self.command} {self.path}")
                if body is not None and self.path.endswith("/metrics"):
                    proxy.reports.append(json.loads(body))
                request = f"{self.command} {self.path}"
                if not self.path.startswith("/v1/config"):
                    proxy.keys.append((request, self.headers.get("Idempotency-Key")))
                if endpoints not in ("as-is", "no-plan") and self.command == "HEAD":
                    self._reply(405, b"")
                    return
                head, _, query = self.path.partition("?")
                is_config = head == "/v1/config"
                if prefix and not is_config:
                    if not head.startswith(f"/v1/{prefix}/"):
                        self._not_found("NotFoundException", f"no route for {head}")
                        return
                    head = "/v1/" + head[len(f"/v1/{prefix}/") :]
                parts = head.split("/")
                # The real server's own separator (Iceberg 1.11's: %2E), which a server of
                # the shape played would not understand.
                up = proxy.upstream_separator()
                if separator and len(parts) > 3 and parts[2] == "namespaces":
                    if up.upper() in parts[3].upper():
                        self._not_found("NoSuchNamespaceException", f"Namespace does not exist: {parts[3]}")
                        return
                    parts[3] = parts[3].replace(separator, up)
                if separator and query:
                    q = urllib.parse.parse_qsl(query, keep_blank_values=True)
                    up_sep = urllib.parse.unquote(up)
                    if any(k == "parent" and up_sep in v for k, v in q):
                        self._not_found("NoSuchNamespaceException", "Namespace does not exist")
                        return
                    sep = urllib.parse.unquote(separator)
                    q = [(k, v.replace(sep, up_sep) if k == "parent" else v) for k, v in q]
                    query = urllib.parse.urlencode(q)
                path = "/".join(parts) + (f"?{query}" if query else "")
                conn = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=60)
                skip = ("host", "connection", "accept-encoding", "content-length")
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                conn.request(self.command, path, body=body, headers=headers)
                r = conn.getresponse()
                status, payload, ctype = r.status, r.read(), r.getheader("Content-Type") or "application/json"
                etag = r.getheader("ETag")
                conn.close()
                if not self.path.startswith("/v1/config"):
                    proxy.statuses.append((request, status))
                if status == 200 and is_config:
                    payload = json.dumps(proxy._config(json.loads(payload))).encode()
                elif status == 200 and vend is not None and payload and self.command in ("GET", "POST"):
                    result = json.loads(payload)
                    tables = len(parts) == 5 and parts[4] == "tables" and self.command == "POST"
                    load = len(parts) == 6 and parts[4] == "tables" and self.command == "GET"
                    if (tables or load) and isinstance(result, dict) and "metadata" in result:
                        payload = json.dumps(vend(result)).encode()
                elif status == 200 and answer is not None and payload and not is_config:
                    payload = json.dumps(answer(request, json.loads(payload))).encode()
                if lose_first is not None and lose_first(request) and request not in lost:
                    # Applied by the server, its answer lost: the connection closes unanswered.
                    lost.add(request)
                    self.close_connection = True
                    return
                self._reply(status, payload, ctype, etag)

            do_GET = do_POST = do_DELETE = do_HEAD = _handle

        self._prefix, self._separator, self._endpoints = prefix, separator, endpoints
        self._upstream_separator: str | None = None
        self._idempotency = idempotency
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def _config(self, config: Json) -> Json:
        overrides = config.setdefault("overrides", {})
        if self._prefix:
            overrides["prefix"] = self._prefix
        if self._separator:
            overrides["namespace-separator"] = self._separator
        if self._idempotency:
            config["idempotency-key-lifetime"] = "PT30M"
        if self._endpoints == "absent":
            config.pop("endpoints", None)
        elif self._endpoints == "no-head":
            config["endpoints"] = [e for e in config.get("endpoints", []) if not e.startswith("HEAD ")]
        elif self._endpoints == "no-plan":
            listed = config.get("endpoints", [])
            config["endpoints"] = [e for e in listed if not e.split("{table}")[-1].startswith(PLAN_ENDPOINTS)]
        return config

    def upstream_separator(self) -> str:
        """The real server's namespace separator, URL-encoded (its /v1/config; %1F by default)."""
        if self._upstream_separator is None:
            conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=60)
            conn.request("GET", "/v1/config")
            config = json.loads(conn.getresponse().read())
            conn.close()
            found = (config.get("overrides") or {}).get("namespace-separator") or (
                config.get("defaults") or {}
            ).get("namespace-separator")
            self._upstream_separator = str(found or "%1F")
        return self._upstream_separator

    def paths(self) -> list[str]:
        """The requests after /v1/config, as `METHOD path`."""
        return [s for s in self.seen if not s.split(" ", 1)[1].startswith("/v1/config")]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
