"""HTTP for the REST catalog: JSON requests with auth (OAuth2 client credentials with token
refresh, a static bearer token, `header.*` properties), TLS options, and the spec's error
responses mapped to icefloe's exceptions. Standard library only (http.client through
urllib), one connection per request; catalog calls are few and small next to data I/O.

Credentials never appear in messages: errors name the method and path, not headers.

On a server whose /v1/config advertises `idempotency-key-lifetime`, every mutation (POST,
DELETE) carries an `Idempotency-Key` (a UUIDv7), the same on each attempt, and a lost response
or a gateway's 429 / 502 / 503 / 504 is retried up to 3 times: the server applies the request
once and answers a retry with the first attempt's result, so a create or a commit whose answer
was lost is not an unknown outcome.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Mapping
from typing import Any

from icefloe.exceptions import (
    CommitConflictError,
    CommitStateUnknownException,
    IcefloeError,
    IcefloeIOError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchPlanError,
    NoSuchTableError,
    NoSuchViewError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
    ViewAlreadyExistsError,
)

# Server-side exception types (ErrorModel.type) -> icefloe exceptions.
_BY_TYPE: dict[str, type[IcefloeError]] = {
    "NoSuchNamespaceException": NoSuchNamespaceError,
    "NoSuchTableException": NoSuchTableError,
    "NoSuchIcebergTableException": NoSuchTableError,
    "NoSuchViewException": NoSuchViewError,
    "NoSuchPlanIdException": NoSuchPlanError,
    "NoSuchPlanTaskException": NoSuchPlanError,
    "AlreadyExistsException": TableAlreadyExistsError,
    "NamespaceNotEmptyException": NamespaceNotEmptyError,
    "CommitFailedException": CommitConflictError,
    "CommitStateUnknownException": CommitStateUnknownException,
    "UnsupportedOperationException": NotSupportedError,
    "BadRequestException": ValidationError,
    "IllegalArgumentException": ValidationError,
    "ValidationException": ValidationError,
}


IDEMPOTENCY_KEY = "Idempotency-Key"
# The requests that change something (the REST spec's mutation endpoints).
_MUTATIONS = frozenset({"POST", "DELETE"})
# With an idempotency key: attempts after the first, on a lost response or these statuses
# (Java's retry strategy: 429 and the gateway's 502 / 503 / 504), waiting 0.2 s, doubling.
# Reads (GET, HEAD) are retried the same way: repeating one changes nothing.
_IDEMPOTENT_RETRIES = 3
_READS = frozenset({"GET", "HEAD"})
_RETRIED_STATUS = frozenset({429, 502, 503, 504})
_RETRY_WAIT_S = 0.2


def new_idempotency_key() -> str:
    """A UUIDv7 (RFC 9562: 48 bits of Unix milliseconds, then random bits), as Java's
    `RESTUtil.idempotencyHeaders` makes them."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | 0x7 << 76 | (rand >> 68 & 0xFFF) << 64 | 0b10 << 62
    value |= rand & ((1 << 62) - 1)
    return str(uuid.UUID(int=value))


class RestError(IcefloeIOError):
    """An HTTP failure of the REST catalog (status, method, path in the message)."""

    def __init__(self, message: str, status: int | None) -> None:
        super().__init__(message)
        self.status = status


class RestClient:
    """Requests against `<uri>/v1/...` with the catalog's auth and TLS settings."""

    def __init__(self, uri: str, properties: Mapping[str, str]) -> None:
        self.uri = uri.rstrip("/")
        self._props = dict(properties)
        self._lock = threading.Lock()
        self._token: str | None = properties.get("token")
        self._token_expires: float | None = None
        self._headers = {
            k[len("header.") :]: v for k, v in properties.items() if k.startswith("header.") and v is not None
        }
        self._ssl = _ssl_context(properties)
        self._timeout = float(properties.get("rest.request-timeout-seconds", "60"))
        # Idempotency keys on mutations: set by the catalog when the server's /v1/config
        # advertises an `idempotency-key-lifetime` (as Java's RESTSessionCatalog).
        self.idempotency = False

    # ---- auth ----
    def _oauth_token(self) -> str | None:
        credential = self._props.get("credential")
        if not credential:
            return self._token
        with self._lock:
            if self._token and (self._token_expires is None or time.time() < self._token_expires - 30):
                return self._token
            client_id, _, secret = credential.partition(":")
            if not secret:
                client_id, secret = "", client_id
            form = {"grant_type": "client_credentials", "client_secret": secret}
            if client_id:
                form["client_id"] = client_id
            form["scope"] = self._props.get("scope", "catalog")
            server = self._props.get("oauth2-server-uri") or f"{self.uri}/v1/oauth/tokens"
            body = urllib.parse.urlencode(form).encode()
            req = urllib.request.Request(
                server,
                data=body,
                method="POST",
                headers={"Content-Type": "application/x-www-form-urlencoded"},
            )
            try:
                with urllib.request.urlopen(req, timeout=self._timeout, context=self._ssl) as r:
                    got = json.loads(r.read() or b"{}")
            except urllib.error.HTTPError as e:
                raise RestError(f"OAuth2 token request to {server} failed: HTTP {e.code}", e.code) from None
            except (urllib.error.URLError, OSError) as e:
                raise RestError(f"OAuth2 token request to {server} failed: {e}", None) from None
            token = got.get("access_token")
            if not isinstance(token, str):
                raise RestError(f"OAuth2 server {server} returned no access_token", None)
            self._token = token
            expires = got.get("expires_in")
            self._token_expires = time.time() + float(expires) if isinstance(expires, (int, float)) else None
            return token

    def _request_headers(self, has_body: bool) -> dict[str, str]:
        h = {"Accept": "application/json", "X-Client-Version": "icefloe", **self._headers}
        if has_body:
            h["Content-Type"] = "application/json"
        token = self._oauth_token()
        if token:
            h["Authorization"] = f"Bearer {token}"
        return h

    # ---- requests ----
    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Mapping[str, str] | None = None,
        *,
        commit: bool = False,
    ) -> Any:
        """Sends a request; returns the decoded JSON body (None when empty). On a commit
        (`commit=True`), 5xx and lost responses raise CommitStateUnknownException: the
        caller must check whether the commit landed before doing anything else."""
        return self._send(method, path, body, query, commit=commit)[0]

    def get_fresh(self, path: str, etag: str | None) -> tuple[Any, str | None, bool]:
        """A GET that sends `If-None-Match: etag` when given (the REST spec's freshness-aware
        loadTable): `(body, the answer's ETag, False)`, or `(None, etag, True)` when the server
        answers 304 Not Modified (what the caller holds for that ETag is current)."""
        extra = {"If-None-Match": etag} if etag else None
        body, headers, status = self._send("GET", path, None, None, commit=False, extra=extra)
        if status == 304:
            return None, etag, True
        return body, headers.get("ETag"), False

    def _send(
        self,
        method: str,
        path: str,
        body: Any,
        query: Mapping[str, str] | None,
        *,
        commit: bool,
        extra: Mapping[str, str] | None = None,
    ) -> tuple[Any, Mapping[str, str], int]:
        """`request`'s work: `(decoded body, response headers, status)`; a 304 answer to a
        request with `If-None-Match` returns status 304 with no body."""
        url = f"{self.uri}/{path.lstrip('/')}"
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None if body is None else json.dumps(body).encode("utf-8")
        # A mutation on a server that takes idempotency keys carries one key for all its
        # attempts, so a retry after a lost response is applied once (the server answers it
        # with the first attempt's result).
        key = new_idempotency_key() if self.idempotency and method in _MUTATIONS else None
        retries = _IDEMPOTENT_RETRIES if key or method in _READS else 0
        refreshed = False
        attempt = 0
        while True:
            headers = {**self._request_headers(data is not None), **(extra or {})}
            if key:
                headers[IDEMPOTENCY_KEY] = key
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self._timeout, context=self._ssl) as r:
                    raw = r.read()
                    return (json.loads(raw) if raw else None), dict(r.headers.items()), r.status
            except urllib.error.HTTPError as e:
                if e.code == 304 and extra and "If-None-Match" in extra:
                    return None, dict(e.headers.items()), 304
                if e.code == 401 and not refreshed and self._props.get("credential"):
                    refreshed = True
                    with self._lock:
                        self._token = None  # expired: fetch a new one once
                    continue
                if e.code in _RETRIED_STATUS and attempt < retries:
                    attempt += 1
                    time.sleep(_RETRY_WAIT_S * 2 ** (attempt - 1))
                    continue
                raise self._error(method, path, e, commit) from None
            except (urllib.error.URLError, OSError, TimeoutError, http.client.HTTPException, ValueError) as e:
                # no answer, or one cut short (`IncompleteRead`, a body that is not whole JSON)
                if attempt < retries:
                    attempt += 1
                    time.sleep(_RETRY_WAIT_S * 2 ** (attempt - 1))
                    continue
                if commit:
                    raise CommitStateUnknownException(
                        f"REST commit {method} {path}: no response ({e}); the commit may or may not "
                        "have been applied"
                    ) from None
                raise RestError(f"REST request {method} {path} to {self.uri} failed: {e}", None) from None

    def _error(self, method: str, path: str, e: urllib.error.HTTPError, commit: bool) -> IcefloeError:
        try:
            payload = json.loads(e.read() or b"{}")
        except ValueError:
            payload = {}
        err = payload.get("error", {}) if isinstance(payload, dict) else {}
        kind = str(err.get("type", ""))
        message = str(err.get("message", e.reason))
        text = f"REST {method} {path}: HTTP {e.code} {kind}: {message}"
        if commit and (e.code >= 500 or kind == "CommitStateUnknownException"):
            return CommitStateUnknownException(text)
        if commit and e.code == 409:
            return CommitConflictError(text)
        cls = _BY_TYPE.get(kind)
        if cls is TableAlreadyExistsError and "namespace" in message.lower():
            cls = NamespaceAlreadyExistsError
        if cls is TableAlreadyExistsError and message.lower().startswith("view"):
            cls = ViewAlreadyExistsError
        if cls is not None:
            return cls(text)
        if e.code == 404 and ("/plan/" in path or path.endswith("/tasks")):
            return NoSuchPlanError(text)  # Java's plan and plan-task error handlers
        if e.code == 404 and "/views/" in path:
            return NoSuchViewError(text)
        if e.code == 404:
            return NoSuchTableError(text) if "/tables/" in path else NoSuchNamespaceError(text)
        if e.code == 409:
            return TableAlreadyExistsError(text)
        if e.code in (400, 422):
            return ValidationError(text)
        if e.code == 501:
            return NotSupportedError(text)
        return RestError(text, e.code)

    def exists(self, path: str, method: str = "HEAD") -> bool:
        """Whether `path` names a table or namespace: HEAD (when the server lists it), or a
        GET of the resource (its body is dropped); a 404 is False."""
        try:
            self.request(method, path)
            return True
        except (NoSuchTableError, NoSuchNamespaceError, NoSuchViewError):
            return False


def _ssl_context(props: Mapping[str, str]) -> ssl.SSLContext | None:
    cafile = props.get("ssl.cabundle")
    cert, key = props.get("ssl.client.cert"), props.get("ssl.client.key")
    if not (cafile or cert) and props.get("ssl.verify", "true").lower() != "false":
        return None
    ctx = ssl.create_default_context(cafile=cafile)
    if cert:
        ctx.load_cert_chain(cert, key)
    if props.get("ssl.verify", "true").lower() == "false":
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx
