"""A table's default name mapping (`schema.name-mapping.default`) kept in step with a schema
change, as Java's `MappingUtil.update` does on `UpdateSchema.commit`: reassigned names move,
added fields get entries."""

from __future__ import annotations

import json
from typing import Any

from icefloe.schema import child_fields
from icefloe.types import IcebergType, NestedField

_TABLE_ROOT_ID = -1  # the parent id of top-level fields, as in update_schema


def _create_mapping(t: IcebergType) -> list[dict[str, Any]]:
    out = []
    for f in child_fields(t):
        entry: dict[str, Any] = {"field-id": f.field_id, "names": [f.name]}
        nested = _create_mapping(f.field_type)
        if nested:
            entry["fields"] = nested
        out.append(entry)
    return out


def update_name_mapping(
    mapping_json: str, updates: dict[int, NestedField], adds: dict[int, list[int]]
) -> str:
    def remove_reassigned(field: dict[str, Any], assignments: dict[str, int]) -> dict[str, Any]:
        names = [
            n
            for n in field.get("names", [])
            if assignments.get(n, field.get("field-id")) == field.get("field-id")
        ]
        return {**field, "names": names}

    def add_new(fields: list[dict[str, Any]] | None, parent_id: int) -> list[dict[str, Any]] | None:
        to_add = [updates[i] for i in adds.get(parent_id, [])]
        if not to_add:
            return fields
        new = []
        for a in to_add:
            entry: dict[str, Any] = {"field-id": a.field_id, "names": [a.name]}
            nested = _create_mapping(a.field_type)
            if nested:
                entry["fields"] = nested
            new.append(entry)
        if not fields:
            return new
        assignments = {a.name: a.field_id for a in to_add}
        return [remove_reassigned(f, assignments) for f in fields] + new

    def visit_fields(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = [visit_field(f) for f in fields]
        assignments = {
            updates[f["field-id"]].name: f["field-id"] for f in results if f.get("field-id") in updates
        }
        return [remove_reassigned(f, assignments) for f in results]

    def visit_field(field: dict[str, Any]) -> dict[str, Any]:
        names = list(field.get("names", []))
        fid = field.get("field-id")
        if fid in updates and updates[fid].name not in names:
            names.append(updates[fid].name)
        nested = visit_fields(field["fields"]) if field.get("fields") else None
        nested = add_new(nested, fid) if fid is not None else nested
        out = {k: v for k, v in field.items() if k != "fields"}
        out["names"] = names
        if nested:
            out["fields"] = nested
        return out

    mapping = json.loads(mapping_json)
    result = add_new(visit_fields(mapping), _TABLE_ROOT_ID) or []
    return json.dumps(result)
