"""Iceberg schemas (PyIceberg-style `Schema`), their spec JSON, and their Arrow form."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from icefloe import _native
from icefloe.exceptions import InvalidDataError, ValidationError
from icefloe.types import IcebergType, ListType, MapType, NestedField, StructType

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["Schema"]


class Schema:
    """A table schema: top-level fields with ids, a schema id, and identifier field ids.

    Field names resolve in Java's dotted style: `a.b` for struct children, `l.element`,
    `m.key`, `m.value` for list/map members.
    """

    def __init__(
        self,
        *fields: NestedField,
        schema_id: int = 0,
        identifier_field_ids: Iterable[int] = (),
    ) -> None:
        self._struct = StructType(*fields)
        self.schema_id = schema_id
        self.identifier_field_ids: list[int] = list(identifier_field_ids)
        self._by_id: dict[int, NestedField] = {}
        self._by_name: dict[str, int] = {}
        self._parent: dict[int, int] = {}
        for f in fields:
            self._index(f, "", None)
        self._by_lower_name: dict[str, int] = {}
        for name, fid in self._by_name.items():
            self._by_lower_name.setdefault(name.lower(), fid)
        for fid in self.identifier_field_ids:
            if fid not in self._by_id:
                raise ValidationError(f"identifier field id {fid} is not in the schema")

    def _index(self, f: NestedField, prefix: str, parent: int | None) -> None:
        if f.field_id in self._by_id:
            raise ValidationError(f"field id {f.field_id} is used twice in the schema ({f.name!r})")
        full = f"{prefix}{f.name}"
        if full in self._by_name:
            raise ValidationError(f"field name {full!r} is used twice in the schema")
        self._by_id[f.field_id] = f
        self._by_name[full] = f.field_id
        if parent is not None:
            self._parent[f.field_id] = parent
        for child in child_fields(f.field_type):
            self._index(child, f"{full}.", f.field_id)

    # ---- accessors ----
    @property
    def fields(self) -> tuple[NestedField, ...]:
        return self._struct.fields

    @property
    def columns(self) -> tuple[NestedField, ...]:
        return self._struct.fields

    def as_struct(self) -> StructType:
        return self._struct

    @property
    def highest_field_id(self) -> int:
        return max(self._by_id, default=0)

    @property
    def field_ids(self) -> set[int]:
        return set(self._by_id)

    @property
    def column_names(self) -> list[str]:
        """Full dotted names of every field, nested ones included."""
        return list(self._by_name)

    def find_field(self, name_or_id: str | int, case_sensitive: bool = True) -> NestedField:
        """The field with this id or full dotted name; ValidationError naming it otherwise."""
        if isinstance(name_or_id, int):
            f = self._by_id.get(name_or_id)
            if f is None:
                raise ValidationError(f"no field with id {name_or_id} in the schema")
            return f
        fid = self._by_name.get(name_or_id) if case_sensitive else self._by_lower_name.get(name_or_id.lower())
        if fid is None:
            raise ValidationError(
                f"no column named {name_or_id!r} in the schema (columns: {', '.join(self._by_name)})"
            )
        return self._by_id[fid]

    def find_type(self, name_or_id: str | int, case_sensitive: bool = True) -> IcebergType:
        return self.find_field(name_or_id, case_sensitive).field_type

    def find_column_name(self, field_id: int) -> str | None:
        for name, fid in self._by_name.items():
            if fid == field_id:
                return name
        return None

    def find_column_path(self, name_or_id: str | int, case_sensitive: bool = True) -> tuple[str, ...]:
        """The names from the top-level field down to this one (exact case)."""
        fid = self.find_field(name_or_id, case_sensitive).field_id
        path = [self._by_id[fid].name]
        while fid in self._parent:
            fid = self._parent[fid]
            path.append(self._by_id[fid].name)
        return tuple(reversed(path))

    def select(self, *names: str, case_sensitive: bool = True) -> Schema:
        """A schema of just these columns (nested names keep their parents, pruned to the
        selected children); ValidationError naming each unknown column."""
        missing = []
        ids: set[int] = set()
        for n in names:
            try:
                ids.add(self.find_field(n, case_sensitive).field_id)
            except ValidationError:
                missing.append(n)
        if missing:
            raise ValidationError(
                f"cannot select unknown column(s) {', '.join(repr(m) for m in missing)}; "
                f"the schema has: {', '.join(self._by_name)}"
            )
        pruned = _prune(self._struct, ids)
        fields = pruned.fields if isinstance(pruned, StructType) else ()
        kept = [i for i in self.identifier_field_ids if i in ids]
        return Schema(*fields, schema_id=self.schema_id, identifier_field_ids=kept)

    # ---- conversions ----
    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "struct", "schema-id": self.schema_id}
        if self.identifier_field_ids:
            out["identifier-field-ids"] = list(self.identifier_field_ids)
        out["fields"] = [f.to_json() for f in self.fields]
        return out

    def to_json(self) -> str:
        """The spec's schema JSON (what the native core parses)."""
        return json.dumps(self.to_dict())

    # PyIceberg's pydantic name for the same thing.
    model_dump_json = to_json

    @staticmethod
    def from_dict(obj: dict[str, Any]) -> Schema:
        if obj.get("type", "struct") != "struct" or not isinstance(obj.get("fields"), list):
            raise InvalidDataError(f"expected a schema object with 'fields', found {str(obj)[:200]}")
        return Schema(
            *(NestedField.from_json(f) for f in obj["fields"]),
            schema_id=int(obj.get("schema-id", 0)),
            identifier_field_ids=[int(i) for i in obj.get("identifier-field-ids", [])],
        )

    @staticmethod
    def from_json(text: str | dict[str, Any]) -> Schema:
        if isinstance(text, dict):
            return Schema.from_dict(text)
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidDataError(f"malformed schema JSON: {e}") from None
        return Schema.from_dict(obj)

    @staticmethod
    def from_arrow(schema: pa.Schema) -> Schema:
        """The Iceberg schema for an Arrow schema (field ids from `PARQUET:field_id` when
        every field has one, else fresh ids as Iceberg Java assigns them)."""
        return Schema.from_json(_native.schema_from_arrow(schema))

    def as_arrow(self) -> pa.Schema:
        """The Arrow schema icefloe reads and writes for this schema (field ids in metadata)."""
        return _native.schema_to_arrow(self.to_json())

    # ---- value semantics ----
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Schema)
            and self.schema_id == other.schema_id
            and self.identifier_field_ids == other.identifier_field_ids
            and self._struct == other._struct
        )

    def __hash__(self) -> int:
        return hash((self.schema_id, tuple(self.identifier_field_ids), self._struct))

    def __len__(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        inner = ", ".join(repr(f) for f in self.fields)
        ids = f", identifier_field_ids={self.identifier_field_ids}" if self.identifier_field_ids else ""
        return f"Schema({inner}, schema_id={self.schema_id}{ids})"

    def __str__(self) -> str:
        body = "\n".join(f"  {f}" for f in self.fields)
        return f"table {{\n{body}\n}}"


def child_fields(t: IcebergType) -> tuple[NestedField, ...]:
    """The fields directly nested in `t`: a struct's fields, a list's element, a map's key
    and value; none for a primitive."""
    if isinstance(t, StructType):
        return t.fields
    if isinstance(t, ListType):
        return (t.element_field,)
    if isinstance(t, MapType):
        return (t.key_field, t.value_field)
    return ()


def _prune(t: IcebergType, ids: set[int]) -> IcebergType | None:
    """`t` cut down to the selected field ids (a selected field keeps its whole subtree),
    or None when nothing below `t` is selected."""
    if isinstance(t, StructType):
        kept = []
        for f in t.fields:
            if f.field_id in ids:
                kept.append(f)
                continue
            sub = _prune(f.field_type, ids)
            if sub is not None:
                kept.append(
                    NestedField(
                        f.field_id, f.name, sub, f.required, f.doc, f.initial_default, f.write_default
                    )
                )
        return StructType(*kept) if kept else None
    if isinstance(t, ListType):
        if t.element_id in ids:
            return t
        sub = _prune(t.element_type, ids)
        return None if sub is None else ListType(t.element_id, sub, t.element_required)
    if isinstance(t, MapType):
        if t.key_id in ids or t.value_id in ids:
            return t
        sub = _prune(t.value_type, ids)
        return None if sub is None else MapType(t.key_id, t.key_type, t.value_id, sub, t.value_required)
    return None
