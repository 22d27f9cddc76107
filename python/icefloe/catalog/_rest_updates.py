"""A commit as the REST spec sends it: the `requirements` the base must still meet and the
`updates` that turn it into the new metadata, derived from the two metadata versions (the
operations build whole new metadata, as for the other catalogs). The requirements are
those Iceberg Java's `UpdateRequirements.forUpdateTable` derives for the same updates."""

from __future__ import annotations

import json
from typing import Any

from icefloe import _native


def _md(metadata: _native.TableMetadata) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(metadata.to_json())
    return out


def requirements_and_updates(
    base: _native.TableMetadata, new: _native.TableMetadata
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    b, n = _md(base), _md(new)
    reqs: list[dict[str, Any]] = [{"type": "assert-table-uuid", "uuid": b["table-uuid"]}]
    ups: list[dict[str, Any]] = []

    if n.get("format-version") != b.get("format-version"):
        ups.append({"action": "upgrade-format-version", "format-version": n["format-version"]})

    # Schemas, specs, sort orders: new ones added, then the current one set.
    old_schemas = {s["schema-id"] for s in b.get("schemas", [])}
    for s in n.get("schemas", []):
        if s["schema-id"] not in old_schemas:
            ups.append({"action": "add-schema", "schema": s, "last-column-id": n["last-column-id"]})
    if n.get("current-schema-id") != b.get("current-schema-id") or n.get("last-column-id") != b.get(
        "last-column-id"
    ):
        reqs.append({"type": "assert-last-assigned-field-id", "last-assigned-field-id": b["last-column-id"]})
        reqs.append({"type": "assert-current-schema-id", "current-schema-id": b["current-schema-id"]})
        if n.get("current-schema-id") != b.get("current-schema-id"):
            ups.append({"action": "set-current-schema", "schema-id": n["current-schema-id"]})
    old_specs = {s["spec-id"] for s in b.get("partition-specs", [])}
    for s in n.get("partition-specs", []):
        if s["spec-id"] not in old_specs:
            ups.append({"action": "add-spec", "spec": s})
    if n.get("default-spec-id") != b.get("default-spec-id") or len(old_specs) != len(
        n.get("partition-specs", [])
    ):
        reqs.append(
            {
                "type": "assert-last-assigned-partition-id",
                "last-assigned-partition-id": b.get("last-partition-id"),
            }
        )
        reqs.append({"type": "assert-default-spec-id", "default-spec-id": b["default-spec-id"]})
        if n.get("default-spec-id") != b.get("default-spec-id"):
            ups.append({"action": "set-default-spec", "spec-id": n["default-spec-id"]})
    old_orders = {o["order-id"] for o in b.get("sort-orders", [])}
    for o in n.get("sort-orders", []):
        if o["order-id"] not in old_orders:
            ups.append({"action": "add-sort-order", "sort-order": o})
    if n.get("default-sort-order-id") != b.get("default-sort-order-id"):
        reqs.append(
            {"type": "assert-default-sort-order-id", "default-sort-order-id": b["default-sort-order-id"]}
        )
        ups.append({"action": "set-default-sort-order", "sort-order-id": n["default-sort-order-id"]})

    # Specs and schemas no longer listed (expiry's clean_expired_metadata): Java's
    # UpdateRequirements asserts the default spec / current schema and every branch unchanged.
    gone_specs = sorted(old_specs - {s["spec-id"] for s in n.get("partition-specs", [])})
    gone_schemas = sorted(old_schemas - {s["schema-id"] for s in n.get("schemas", [])})
    if gone_specs:
        ups.append({"action": "remove-partition-specs", "spec-ids": gone_specs})
    if gone_schemas:
        ups.append({"action": "remove-schemas", "schema-ids": gone_schemas})
    removes_metadata = bool(gone_specs or gone_schemas)

    if n.get("location") != b.get("location"):
        ups.append({"action": "set-location", "location": n["location"]})

    # Properties.
    bp, np_ = b.get("properties", {}), n.get("properties", {})
    changed = {k: v for k, v in np_.items() if bp.get(k) != v}
    removed = sorted(k for k in bp if k not in np_)
    if changed:
        ups.append({"action": "set-properties", "updates": changed})
    if removed:
        ups.append({"action": "remove-properties", "removals": removed})

    # Snapshots: added in order, removed by id.
    old_snaps = {s["snapshot-id"] for s in b.get("snapshots", [])}
    new_snaps = {s["snapshot-id"] for s in n.get("snapshots", [])}
    for s in n.get("snapshots", []):
        if s["snapshot-id"] not in old_snaps:
            ups.append({"action": "add-snapshot", "snapshot": s})
    gone = sorted(old_snaps - new_snaps)
    if gone:
        ups.append({"action": "remove-snapshots", "snapshot-ids": gone})

    # Statistics files, by snapshot: set when new or changed, removed when gone.
    for kind, action in (("statistics", "statistics"), ("partition-statistics", "partition-statistics")):
        before = {e["snapshot-id"]: e for e in b.get(kind) or []}
        after = {e["snapshot-id"]: e for e in n.get(kind) or []}
        for sid, entry in after.items():
            if before.get(sid) != entry:
                ups.append({"action": f"set-{action}", "snapshot-id": sid, kind: entry})
        for sid in sorted(set(before) - set(after)):
            ups.append({"action": f"remove-{action}", "snapshot-id": sid})

    # Refs: each changed one asserted at its base value, as Java does.
    brefs, nrefs = _refs(b), _refs(n)
    for name, ref in nrefs.items():
        if brefs.get(name) != ref:
            old = brefs.get(name)
            reqs.append(
                {
                    "type": "assert-ref-snapshot-id",
                    "ref": name,
                    "snapshot-id": old["snapshot-id"] if old else None,
                }
            )
            ups.append({"action": "set-snapshot-ref", "ref-name": name, **ref})
    for name in brefs:
        if name not in nrefs:
            reqs.append(
                {"type": "assert-ref-snapshot-id", "ref": name, "snapshot-id": brefs[name]["snapshot-id"]}
            )
            ups.append({"action": "remove-snapshot-ref", "ref-name": name})
    if removes_metadata:
        if gone_schemas and not any(r["type"] == "assert-current-schema-id" for r in reqs):
            reqs.append({"type": "assert-current-schema-id", "current-schema-id": b["current-schema-id"]})
        asserted = {r["ref"] for r in reqs if r["type"] == "assert-ref-snapshot-id"}
        for name, ref in brefs.items():
            if name not in asserted:
                reqs.append(
                    {"type": "assert-ref-snapshot-id", "ref": name, "snapshot-id": ref["snapshot-id"]}
                )
    return reqs, ups


def _refs(md: dict[str, Any]) -> dict[str, dict[str, Any]]:
    refs = {k: dict(v) for k, v in (md.get("refs") or {}).items()}
    sid = md.get("current-snapshot-id")
    if "main" not in refs and sid is not None and sid != -1:
        refs["main"] = {"snapshot-id": sid, "type": "branch"}
    return refs


def create_updates(metadata: _native.TableMetadata) -> list[dict[str, Any]]:
    """The updates that build `metadata` from nothing, for a create transaction's commit
    (with the requirement `assert-create`): Java's RESTSessionCatalog sends the staged
    table's `assign-uuid`, `upgrade-format-version`, schema, spec, sort order, location and
    properties, then the transaction's own changes; here every schema, spec and order of the
    final metadata in id order (ids are assigned from 0 in order, so they come out the same),
    its current ones by id, then its snapshots and refs."""
    md = _md(metadata)
    ups: list[dict[str, Any]] = [
        {"action": "assign-uuid", "uuid": md["table-uuid"]},
        {"action": "upgrade-format-version", "format-version": md["format-version"]},
    ]
    for s in sorted(md.get("schemas", []), key=lambda s: s["schema-id"]):
        ups.append({"action": "add-schema", "schema": s, "last-column-id": md["last-column-id"]})
    ups.append({"action": "set-current-schema", "schema-id": md["current-schema-id"]})
    for spec in sorted(md.get("partition-specs", []), key=lambda s: s["spec-id"]):
        ups.append({"action": "add-spec", "spec": spec})
    ups.append({"action": "set-default-spec", "spec-id": md["default-spec-id"]})
    for order in sorted(md.get("sort-orders", []), key=lambda o: o["order-id"]):
        ups.append({"action": "add-sort-order", "sort-order": order})
    ups.append({"action": "set-default-sort-order", "sort-order-id": md["default-sort-order-id"]})
    ups.append({"action": "set-location", "location": md["location"]})
    if md.get("properties"):
        ups.append({"action": "set-properties", "updates": md["properties"]})
    for snap in md.get("snapshots", []):
        ups.append({"action": "add-snapshot", "snapshot": snap})
    for name, ref in _refs(md).items():
        ups.append({"action": "set-snapshot-ref", "ref-name": name, **ref})
    return ups
