"""Server-side scan planning of the REST catalog: the REST spec's `POST .../plan`,
`GET .../plan/{plan-id}`, `DELETE .../plan/{plan-id}` and `POST .../tasks`, as Iceberg Java
1.11's RESTTableScan uses them.

When: the table's `scan-planning-mode` is `server` (the loadTable answer's `config` wins over
the catalog property of the same name; the default is `client`, as Java's) and the server lists
`POST .../plan` among the `endpoints` of its /v1/config. A table scan then sends a
PlanTableScanRequest (snapshot id, selected columns, filter, case sensitivity, stats fields)
and takes the answer's `file-scan-tasks`:

- `completed`: the tasks, plus `plan-tasks` each fetched with `POST .../tasks` (whose answers may
  name further plan tasks) until none is left;
- `submitted`: the plan is polled with `GET .../plan/{plan-id}` (1 s, then doubling up to 60 s,
  at most 10 polls within `rest-scan-planning.poll-timeout-ms`, 5 minutes by default) until it
  is `completed`; `failed`, `cancelled` or a plan still unfinished raise ScanPlanningError;
- `failed`: ScanPlanningError with the server's error.

Once the tasks are in (or planning failed) the plan is cancelled with `DELETE .../plan/{id}` when
the server lists it, so it can drop the plan's state (Java cancels when the task iterable
closes). A plan id or plan task the server no longer knows is a NoSuchPlanError.

The answers' content files become the planner's own FileScanTasks in Rust
(`_native.scan_plan_from_rest`): the readers, splitting and Spark's two read paths treat them
as tasks planned from the manifests (a deletion vector reference an Iceberg 1.11.0 server
mis-indexes, apache/iceberg#17497, is repaired there). Differences from Java: the request always names the
snapshot the scan object resolved (Java names none for the current snapshot, so a stale table
object would read the server's newer snapshot); plan tasks are fetched one after another (Java
fetches them on a pool); a scan selecting `_last_updated_sequence_number` plans locally, since
content files carry no sequence numbers, and so does a transaction's read of its own staged
snapshot, which the server does not have.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.parse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from icefloe import _native
from icefloe.exceptions import (
    InvalidDataError,
    NotSupportedError,
    ScanPlanningError,
    ValidationError,
)
from icefloe.expressions import AlwaysFalse, AlwaysTrue

if TYPE_CHECKING:
    from icefloe.catalog._rest_client import RestClient
    from icefloe.scan import DataScan

__all__ = ["ServerScanPlanner", "planning_mode"]

logger = logging.getLogger("icefloe")

SUBMIT_PLAN = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan"
FETCH_PLAN = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
CANCEL_PLAN = "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}"
FETCH_TASKS = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks"

MODE = "scan-planning-mode"
POLL_TIMEOUT_MS = "rest-scan-planning.poll-timeout-ms"
_POLL_TIMEOUT_MS_DEFAULT = 5 * 60 * 1000
# Java's RESTTableScan: the first wait 1 s, doubling, at most 60 s, at most 10 polls.
_MIN_SLEEP_S = 1.0
_MAX_SLEEP_S = 60.0
_MAX_RETRIES = 10
_SCALE = 2.0
# A metadata column whose value needs the data file's sequence number, which content files lack.
_NEEDS_SEQUENCE_NUMBERS = "_last_updated_sequence_number"


def planning_mode(catalog_properties: Mapping[str, str], table_config: Mapping[str, str]) -> tuple[str, bool]:
    """(`client` or `server`, whether the server's table config chose it): the server's value
    wins over the client's (a warning when they differ), as Java's RESTSessionCatalog."""
    server = table_config.get(MODE)
    client = catalog_properties.get(MODE)
    if server and client and server.strip().lower() != client.strip().lower():
        logger.warning(
            "icefloe: scan planning mode of the catalog (%s) and of the table's server config (%s) "
            "differ; the server's applies",
            client,
            server,
        )
    chosen = server or client or "client"
    mode = chosen.strip().lower()
    if mode not in ("client", "server"):
        raise ValidationError(f"invalid scan planning mode {chosen!r}: valid values are client, server")
    return mode, bool(server)


def plan_request(scan: DataScan) -> dict[str, Any]:
    """The PlanTableScanRequest of a (non-incremental) scan."""
    body: dict[str, Any] = {"case-sensitive": scan.case_sensitive}
    snapshot = scan.snapshot()
    if snapshot is not None:
        body["snapshot-id"] = snapshot.snapshot_id
        # The schema of the snapshot for a time travel by id, time or tag; a branch and the
        # current table read with the table's schema (Java's RESTTableScan.useRef/useSnapshot).
        body["use-snapshot-schema"] = scan.snapshot_id is not None and not _is_branch(scan)
    body["select"] = [f.name for f in scan.read_schema().fields if f.field_id < _FIRST_RESERVED_ID]
    bound = scan.bound_row_filter
    if isinstance(bound, AlwaysFalse):
        body["filter"] = False
    elif not isinstance(bound, AlwaysTrue):
        body["filter"] = json.loads(bound.to_json())
    if scan.include_column_stats:
        body["stats-fields"] = list(_leaf_names(json.loads(scan.projection().to_json())["fields"]))
    return body


# Iceberg's reserved (metadata column) field ids start here (Integer.MAX_VALUE - 200 and up).
_FIRST_RESERVED_ID = 2147483447


def _is_branch(scan: DataScan) -> bool:
    if scan.ref is None:
        return False
    from icefloe.manage_snapshots import table_refs

    named = table_refs(scan.table.metadata).get(scan.ref)
    return named is not None and named.snapshot_ref_type == "branch"


def _leaf_names(fields: list[dict[str, Any]], prefix: str = "") -> list[str]:
    out: list[str] = []
    for f in fields:
        name = f"{prefix}{f['name']}"
        ty = f.get("type")
        if isinstance(ty, dict) and ty.get("type") == "struct":
            out += _leaf_names(ty.get("fields") or [], f"{name}.")
        elif int(f.get("id", 0)) < _FIRST_RESERVED_ID:
            out.append(name)
    return out


class ServerScanPlanner:
    """Plans one table's scans on the REST server (`table_path`: `v1/.../tables/{table}`)."""

    def __init__(
        self,
        client: RestClient,
        table_path: str,
        endpoints: frozenset[str],
        properties: Mapping[str, str],
    ) -> None:
        self._client = client
        self._path = table_path
        self._endpoints = endpoints
        raw = properties.get(POLL_TIMEOUT_MS, str(_POLL_TIMEOUT_MS_DEFAULT))
        try:
            self._timeout_ms = int(raw)
        except ValueError:
            self._timeout_ms = 0
        if self._timeout_ms <= 0:
            raise ValidationError(f"invalid value for {POLL_TIMEOUT_MS}: {raw} (must be a positive integer)")

    def plan(self, scan: DataScan) -> tuple[_native.ScanPlan, list[Any]]:
        """The scan's tasks as the server plans them, and the plan's `storage-credentials`."""
        started = time.monotonic_ns()
        md = scan.table.metadata
        schema_json = scan.read_schema().to_json()
        if scan.snapshot() is None:  # an empty table: nothing to ask
            return _native.scan_plan_from_rest(md, [], schema_json, scan.case_sensitive, None), []
        answers, credentials = self.answers(plan_request(scan))
        plan = _native.scan_plan_from_rest(
            md,
            [json.dumps(a) for a in answers],
            schema_json,
            scan.case_sensitive,
            scan.snapshot_id if scan.snapshot_id is not None else md.current_snapshot_id,
            time.monotonic_ns() - started,
        )
        return plan, credentials

    def answers(self, request: dict[str, Any]) -> tuple[list[dict[str, Any]], list[Any]]:
        """Every answer holding tasks of the plan (the plan's own, then each plan task's), and
        the plan's `storage-credentials`."""
        answer = self._client.request("POST", f"{self._path}/plan", request)
        plan_id = answer.get("plan-id")
        try:
            status = answer.get("status")
            if status == "submitted":
                if FETCH_PLAN not in self._endpoints:
                    raise NotSupportedError(
                        f"the server answered plan {plan_id} `submitted` but does not offer {FETCH_PLAN}"
                    )
                answer = self._poll(str(plan_id))
            elif status == "failed":
                raise ScanPlanningError(_failure(plan_id, answer.get("error")))
            elif status != "completed":
                raise InvalidDataError(f"invalid plan status {status!r} for plan {plan_id}")
            return self._collect(answer), list(answer.get("storage-credentials") or [])
        finally:
            self._cancel(plan_id)

    def _plan_path(self, plan_id: str) -> str:
        return f"{self._path}/plan/{urllib.parse.quote(plan_id, safe='')}"

    def _poll(self, plan_id: str) -> dict[str, Any]:
        deadline = time.monotonic() + self._timeout_ms / 1000
        polls = 0
        while True:
            got: dict[str, Any] = self._client.request("GET", self._plan_path(plan_id)) or {}
            status = got.get("status")
            if status == "completed":
                return got
            if status == "failed":
                raise ScanPlanningError(_failure(plan_id, got.get("error")))
            if status == "cancelled":
                raise ScanPlanningError(f"remote scan planning cancelled for plan {plan_id}")
            if status != "submitted":
                raise InvalidDataError(f"invalid plan status {status!r} for plan {plan_id}")
            polls += 1
            wait = min(_MIN_SLEEP_S * _SCALE ** (polls - 1), _MAX_SLEEP_S)
            if polls > _MAX_RETRIES or time.monotonic() + wait > deadline:
                raise ScanPlanningError(
                    f"remote scan planning for plan {plan_id} did not complete within configured limits "
                    f"(timeout={self._timeout_ms} ms, maxRetries={_MAX_RETRIES})"
                )
            time.sleep(wait)

    def _collect(self, answer: dict[str, Any]) -> list[dict[str, Any]]:
        answers = [answer]
        pending = list(answer.get("plan-tasks") or [])
        if pending and FETCH_TASKS not in self._endpoints:
            raise NotSupportedError(f"the server's plan has plan tasks but it does not offer {FETCH_TASKS}")
        while pending:
            got: dict[str, Any] = self._client.request(
                "POST", f"{self._path}/tasks", {"plan-task": pending.pop(0)}
            )
            answers.append(got or {})
            pending += (got or {}).get("plan-tasks") or []
        return answers

    def _cancel(self, plan_id: Any) -> None:
        """Lets the server drop the plan (when it offers cancelling); a failure is ignored: the
        plan may be gone already."""
        if not plan_id or CANCEL_PLAN not in self._endpoints:
            return
        try:
            self._client.request("DELETE", self._plan_path(str(plan_id)))
        except Exception as e:
            logger.debug("icefloe: cancelling scan plan %s failed: %s", plan_id, e)


def _failure(plan_id: Any, error: Any) -> str:
    err = error if isinstance(error, dict) else {}
    return (
        f"remote scan planning failed for plan {plan_id}: {err.get('type', 'unknown')} "
        f"(code={err.get('code', 0)}): {err.get('message', 'unknown')}"
    )
