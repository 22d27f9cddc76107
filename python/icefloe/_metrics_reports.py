"""Scan and commit reports, as Iceberg Java's `ScanReport` / `CommitReport` and the REST
spec's `ReportMetricsRequest` carry them (`POST .../tables/{table}/metrics`, sent by
`RestCatalog` after each scan plan and each commit; Java's `RESTMetricsReporter`).

A counter is `{"unit": "count" | "bytes", "value": n}`, a timer `{"count": 1, "time-unit":
"nanoseconds", "total-duration": ns}` (Java's `CounterResultParser` / `TimerResultParser`);
a commit's counters come from its snapshot's summary, as Java's `CommitMetricsResult.from`
takes them (a key the summary lacks is left out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Json = dict[str, Any]

# ScanMetrics name -> (icefloe's plan metric, unit).
_SCAN_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("result-data-files", "result_data_files", "count"),
    ("result-delete-files", "result_delete_files", "count"),
    ("scanned-data-manifests", "scanned_data_manifests", "count"),
    ("skipped-data-manifests", "skipped_data_manifests", "count"),
    ("total-file-size-in-bytes", "total_file_size_in_bytes", "bytes"),
    ("total-delete-file-size-in-bytes", "total_delete_file_size_in_bytes", "bytes"),
    ("skipped-data-files", "skipped_data_files", "count"),
    ("skipped-delete-files", "skipped_delete_files", "count"),
    ("scanned-delete-manifests", "scanned_delete_manifests", "count"),
    ("skipped-delete-manifests", "skipped_delete_manifests", "count"),
    ("indexed-delete-files", "indexed_delete_files", "count"),
)

# CommitMetricsResult name -> (snapshot summary key, unit).
_COMMIT_COUNTERS: tuple[tuple[str, str, str], ...] = (
    ("added-data-files", "added-data-files", "count"),
    ("removed-data-files", "deleted-data-files", "count"),
    ("total-data-files", "total-data-files", "count"),
    ("added-delete-files", "added-delete-files", "count"),
    ("added-equality-delete-files", "added-equality-delete-files", "count"),
    ("added-positional-delete-files", "added-position-delete-files", "count"),
    ("added-dvs", "added-dvs", "count"),
    ("removed-delete-files", "removed-delete-files", "count"),
    ("removed-equality-delete-files", "removed-equality-delete-files", "count"),
    ("removed-positional-delete-files", "removed-position-delete-files", "count"),
    ("removed-dvs", "removed-dvs", "count"),
    ("total-delete-files", "total-delete-files", "count"),
    ("added-records", "added-records", "count"),
    ("removed-records", "deleted-records", "count"),
    ("total-records", "total-records", "count"),
    ("added-files-size-bytes", "added-files-size", "bytes"),
    ("removed-files-size-bytes", "removed-files-size", "bytes"),
    ("total-files-size-bytes", "total-files-size", "bytes"),
    ("added-positional-deletes", "added-position-deletes", "count"),
    ("removed-positional-deletes", "removed-position-deletes", "count"),
    ("total-positional-deletes", "total-position-deletes", "count"),
    ("added-equality-deletes", "added-equality-deletes", "count"),
    ("removed-equality-deletes", "removed-equality-deletes", "count"),
    ("total-equality-deletes", "total-equality-deletes", "count"),
    ("manifests-created", "manifests-created", "count"),
    ("manifests-replaced", "manifests-replaced", "count"),
    ("manifests-kept", "manifests-kept", "count"),
    ("manifest-entries-processed", "entries-processed", "count"),
)

ENGINE = {"engine-name": "icefloe"}


def _counter(unit: str, value: int) -> Json:
    return {"unit": unit, "value": int(value)}


def _timer(ns: int) -> Json:
    return {"count": 1, "time-unit": "nanoseconds", "total-duration": int(ns)}


def scan_report(
    table_name: str,
    snapshot_id: int,
    filter_json: Any,
    schema_id: int,
    projected: Sequence[tuple[int, str]],
    metrics: Mapping[str, int],
) -> Json:
    """The `scan-report` of one planned scan: `filter_json` is the bound row filter as the
    REST spec's expression JSON (`true` for none), `projected` the (field id, name) pairs read."""
    counters: Json = {"total-planning-duration": _timer(metrics.get("planning_time_ns", 0))}
    for name, key, unit in _SCAN_COUNTERS:
        if key in metrics:
            counters[name] = _counter(unit, metrics[key])
    # The plan counts manifests scanned and skipped; their sums are Java's totals.
    for kind in ("data", "delete"):
        total = metrics.get(f"scanned_{kind}_manifests", 0) + metrics.get(f"skipped_{kind}_manifests", 0)
        counters[f"total-{kind}-manifests"] = _counter("count", total)
    return {
        "report-type": "scan-report",
        "table-name": table_name,
        "snapshot-id": snapshot_id,
        "filter": filter_json,
        "schema-id": schema_id,
        "projected-field-ids": [fid for fid, _ in projected],
        "projected-field-names": [name for _, name in projected],
        "metrics": counters,
        "metadata": dict(ENGINE),
    }


def commit_report(
    table_name: str,
    snapshot: Mapping[str, Any],
    attempts: int,
    duration_ns: int,
) -> Json:
    """The `commit-report` of the snapshot a commit added (its summary's counters)."""
    summary = {str(k): str(v) for k, v in (snapshot.get("summary") or {}).items()}
    counters: Json = {"total-duration": _timer(duration_ns), "attempts": _counter("count", attempts)}
    for name, key, unit in _COMMIT_COUNTERS:
        value = summary.get(key)
        if value is not None and value.lstrip("-").isdigit():
            counters[name] = _counter(unit, int(value))
    return {
        "report-type": "commit-report",
        "table-name": table_name,
        "snapshot-id": int(snapshot["snapshot-id"]),
        "sequence-number": int(snapshot.get("sequence-number", 0)),
        "operation": summary.get("operation", ""),
        "metrics": counters,
        "metadata": dict(ENGINE),
    }
