"""`table.update_schema()`: schema evolution with the rules of Iceberg Java's `SchemaUpdate`.

Changes are recorded against the schema the update started from (adds, deletes, renames,
type promotions, requirement and doc changes, moves, identifier fields) and applied together:
new field ids continue from `last-column-id` in the order Java assigns them (the added column,
then its nested fields level by level), an incompatible change (a required column added, an
optional column made required, a type change other than int->long, float->double or a wider
decimal) is a ValidationError unless `allow_incompatible_changes=True`, and an identifier field
cannot be deleted without replacing the identifier fields. The result is committed as the REST
updates `add-schema` + `set-current-schema`; as in Java, a schema changed concurrently between
the start of the update and its commit is a CommitConflictError, never a silent re-apply.
Like Java, the commit also keeps `schema.name-mapping.default` and the per-column metrics /
bloom-filter properties in step with added, renamed and deleted columns.

    with table.update_schema() as u:
        u.add_column(("point", "z"), DoubleType(), doc="height")
        u.rename_column("data", "payload")
        u.update_column("count", LongType())
        u.move_first("id")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from icefloe._name_mapping_update import update_name_mapping
from icefloe.exceptions import ValidationError
from icefloe.schema import Schema, child_fields
from icefloe.table_transaction import StagedBuilder
from icefloe.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PrimitiveType,
    StructType,
    type_from_json,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.table_transaction import Transaction

__all__ = ["UpdateSchema", "is_promotion_allowed"]

Path = Union[str, tuple[str, ...]]
TABLE_ROOT_ID = -1

NAME_MAPPING_PROPERTY = "schema.name-mapping.default"
# Table properties keyed by column name that Java renames and drops with the column.
COLUMN_PROPERTY_PREFIXES = (
    "write.metadata.metrics.column.",
    "write.parquet.bloom-filter-enabled.column.",
    "write.parquet.stats-enabled.column.",
)


def is_promotion_allowed(source: IcebergType, target: IcebergType) -> bool:
    """Java's `TypeUtil.isPromotionAllowed`: int->long, float->double, decimal(P, S) ->
    decimal(P', S) with P' >= P, and no change."""
    if source == target:
        return True
    if isinstance(source, IntegerType):
        return isinstance(target, LongType)
    if isinstance(source, FloatType):
        return isinstance(target, DoubleType)
    if isinstance(source, DecimalType) and isinstance(target, DecimalType):
        return source.scale == target.scale and source.precision <= target.precision
    return False


@dataclass(frozen=True)
class _Move:
    field_id: int
    kind: str  # "first", "before", "after"
    reference_id: int = -1


def _as_type(t: IcebergType | str) -> IcebergType:
    return type_from_json(t) if isinstance(t, str) else t


def _dotted(path: Path) -> str:
    if isinstance(path, tuple):
        if not path or not all(isinstance(p, str) and p for p in path):
            raise ValidationError(f"expected a column path of non-empty names, found {path!r}")
        return ".".join(path)
    if not isinstance(path, str) or not path:
        raise ValidationError(f"expected a column name or a tuple of names, found {path!r}")
    return path


def _index_parents(struct: StructType) -> dict[int, int]:
    parents: dict[int, int] = {}

    def walk(t: IcebergType, parent: int | None) -> None:
        for f in child_fields(t):
            if parent is not None:
                parents[f.field_id] = parent
            walk(f.field_type, f.field_id)

    walk(struct, None)
    return parents


def _index_by_id(struct: StructType) -> dict[int, NestedField]:
    out: dict[int, NestedField] = {}

    def walk(t: IcebergType) -> None:
        for f in child_fields(t):
            out[f.field_id] = f
            walk(f.field_type)

    walk(struct)
    return out


def assign_fresh_ids(t: IcebergType, next_id: Callable[[], int]) -> IcebergType:
    """Java's `TypeUtil.assignFreshIds`: a struct's fields get ids first, in order, then their
    types are visited; a list's element and a map's key and value likewise."""
    if isinstance(t, StructType):
        ids = [next_id() for _ in t.fields]
        return StructType(
            *(
                NestedField(i, f.name, assign_fresh_ids(f.field_type, next_id), f.required, f.doc)
                for i, f in zip(ids, t.fields)
            )
        )
    if isinstance(t, ListType):
        element_id = next_id()
        return ListType(element_id, assign_fresh_ids(t.element_type, next_id), t.element_required)
    if isinstance(t, MapType):
        key_id, value_id = next_id(), next_id()
        key = assign_fresh_ids(t.key_type, next_id)
        value = assign_fresh_ids(t.value_type, next_id)
        return MapType(key_id, key, value_id, value, t.value_required)
    return t


def _with(
    f: NestedField,
    *,
    name: str | None = None,
    field_type: IcebergType | None = None,
    required: bool | None = None,
    doc: Any = ...,
) -> NestedField:
    return NestedField(
        f.field_id,
        f.name if name is None else name,
        f.field_type if field_type is None else field_type,
        f.required if required is None else required,
        f.doc if doc is ... else doc,
        f.initial_default,
        f.write_default,
    )


class UpdateSchema(StagedBuilder):
    """Pending schema changes (see the module doc). Use as a context manager, or call
    `commit()`; `apply()` shows the resulting schema without committing."""

    _WHAT = "this schema update"

    def __init__(
        self,
        transaction: Transaction,
        allow_incompatible_changes: bool = False,
        case_sensitive: bool = True,
    ) -> None:
        self._transaction = transaction
        md = transaction._staged
        self._base_schema_id = md.current_schema_id
        self._base_last_column_id = md.last_column_id
        self._schema = Schema.from_json(md.schema_json())
        self._properties = dict(md.properties)
        self._last_column_id = md.last_column_id
        self._allow_incompatible = allow_incompatible_changes
        self._case_sensitive = case_sensitive
        self._id_to_parent = _index_parents(self._schema.as_struct())
        self._deletes: list[int] = []
        self._updates: dict[int, NestedField] = {}
        self._parent_to_added: dict[int, list[int]] = {}
        self._added_name_to_id: dict[str, int] = {}
        self._moves: dict[int, list[_Move]] = {}
        self._identifier_names: set[str] = {
            n
            for i in self._schema.identifier_field_ids
            if (n := self._schema.find_column_name(i)) is not None
        }
        self._committed = False

    # ---- lookups (Java's findField / findForUpdate / findForMove) ----
    def _find(self, name: str) -> NestedField | None:
        try:
            return self._schema.find_field(name, self._case_sensitive)
        except ValidationError:
            return None

    def _aware(self, name: str) -> str:
        return name if self._case_sensitive else name.lower()

    def _find_for_update(self, name: str) -> NestedField | None:
        existing = self._find(name)
        if existing is not None:
            return self._updates.get(existing.field_id, existing)
        added = self._added_name_to_id.get(self._aware(name))
        return None if added is None else self._updates[added]

    def _find_for_move(self, name: str) -> int | None:
        added = self._added_name_to_id.get(self._aware(name))
        if added is not None:
            return added
        f = self._find(name)
        return None if f is None else f.field_id

    def _next_id(self) -> int:
        self._last_column_id += 1
        return self._last_column_id

    # ---- changes ----
    def add_column(
        self, path: Path, field_type: IcebergType | str, doc: str | None = None, required: bool = False
    ) -> UpdateSchema:
        """Adds a column; `path` is a name, a tuple `(parent, ..., name)` or a dotted
        `parent.name` (the parent is a struct, or a list / map whose element / value is one)."""
        if isinstance(path, tuple):
            full = _dotted(path)
            parent, name = (".".join(path[:-1]) or None), path[-1]
        else:
            full = _dotted(path)
            parent, _, name = full.rpartition(".")
            parent = parent or None
        return self._add(parent, name, _as_type(field_type), doc, required, full)

    def _add(
        self,
        parent: str | None,
        name: str,
        field_type: IcebergType,
        doc: str | None,
        required: bool,
        shown: str,
    ) -> UpdateSchema:
        parent_id = TABLE_ROOT_ID
        if parent is not None:
            parent_field = self._find(parent)
            if parent_field is None:
                raise ValidationError(f"cannot add column {shown!r}: cannot find parent struct {parent!r}")
            if isinstance(parent_field.field_type, MapType):
                parent_field = parent_field.field_type.value_field
            elif isinstance(parent_field.field_type, ListType):
                parent_field = parent_field.field_type.element_field
            if not isinstance(parent_field.field_type, StructType):
                raise ValidationError(
                    f"cannot add column {shown!r} to non-struct column {parent!r} "
                    f"of type {parent_field.field_type}"
                )
            parent_id = parent_field.field_id
            if parent_id in self._deletes:
                raise ValidationError(f"cannot add to a column that will be deleted: {parent!r}")
            current = self._find(f"{parent}.{name}")
            if current is not None and current.field_id not in self._deletes:
                raise ValidationError(f"cannot add column, name already exists: {parent}.{name}")
            full_name = f"{self._schema.find_column_name(parent_id)}.{name}"
        else:
            current = self._find(name)
            if current is not None and current.field_id not in self._deletes:
                raise ValidationError(f"cannot add column, name already exists: {name}")
            full_name = name
        if self._aware(full_name) in self._added_name_to_id:
            raise ValidationError(f"cannot add column, name already exists: {full_name}")
        if required and not self._allow_incompatible:
            raise ValidationError(
                f"incompatible change: cannot add required column without a default value: {full_name}"
            )
        new_id = self._next_id()
        self._added_name_to_id[self._aware(full_name)] = new_id
        if parent_id != TABLE_ROOT_ID:
            self._id_to_parent[new_id] = parent_id
        fresh = assign_fresh_ids(field_type, self._next_id)
        self._updates[new_id] = NestedField(new_id, name, fresh, required, doc)
        self._parent_to_added.setdefault(parent_id, []).append(new_id)
        return self

    def delete_column(self, path: Path) -> UpdateSchema:
        name = _dotted(path)
        f = self._find(name)
        if f is None:
            raise ValidationError(f"cannot delete missing column: {name}")
        if f.field_id in self._parent_to_added:
            raise ValidationError(f"cannot delete a column that has additions: {name}")
        if f.field_id in self._updates:
            raise ValidationError(f"cannot delete a column that has updates: {name}")
        self._deletes.append(f.field_id)
        return self

    def rename_column(self, path: Path, new_name: str) -> UpdateSchema:
        name = _dotted(path)
        f = self._find(name)
        if f is None:
            raise ValidationError(f"cannot rename missing column: {name}")
        if not isinstance(new_name, str) or not new_name:
            raise ValidationError(f"cannot rename column {name} to {new_name!r}")
        if f.field_id in self._deletes:
            raise ValidationError(f"cannot rename a column that will be deleted: {f.name}")
        self._updates[f.field_id] = _with(self._updates.get(f.field_id, f), name=new_name)
        if name in self._identifier_names:
            self._identifier_names.discard(name)
            self._identifier_names.add(new_name)
        return self

    def update_column(
        self,
        path: Path,
        field_type: IcebergType | str | None = None,
        required: bool | None = None,
        doc: str | None = None,
    ) -> UpdateSchema:
        """Promotes the type (int->long, float->double, decimal precision), changes whether
        the column is required (optional->required is incompatible) and/or its doc."""
        name = _dotted(path)
        if field_type is not None:
            self._update_type(name, _as_type(field_type))
        if required is not None:
            self._update_requirement(name, optional=not required)
        if doc is not None:
            self._update_doc(name, doc)
        return self

    def make_column_optional(self, path: Path) -> UpdateSchema:
        self._update_requirement(_dotted(path), optional=True)
        return self

    def _for_update(self, name: str) -> NestedField:
        f = self._find_for_update(name)
        if f is None:
            raise ValidationError(f"cannot update missing column: {name}")
        if f.field_id in self._deletes:
            raise ValidationError(f"cannot update a column that will be deleted: {f.name}")
        return f

    def _update_type(self, name: str, new_type: IcebergType) -> None:
        f = self._for_update(name)
        if not isinstance(new_type, PrimitiveType):
            raise ValidationError(f"cannot change column {name} to non-primitive type {new_type}")
        if f.field_type == new_type:
            return
        if not is_promotion_allowed(f.field_type, new_type):
            raise ValidationError(f"cannot change column type: {name}: {f.field_type} -> {new_type}")
        self._updates[f.field_id] = _with(f, field_type=new_type)

    def _update_requirement(self, name: str, optional: bool) -> None:
        f = self._find_for_update(name)
        if f is None:
            raise ValidationError(f"cannot update missing column: {name}")
        if f.required != optional:
            return  # already as asked: a no-op is allowed even when incompatible
        if not optional and not self._allow_incompatible:
            raise ValidationError(f"cannot change column nullability: {name}: optional -> required")
        if f.field_id in self._deletes:
            raise ValidationError(f"cannot update a column that will be deleted: {f.name}")
        self._updates[f.field_id] = _with(f, required=not optional)

    def _update_doc(self, name: str, doc: str) -> None:
        f = self._for_update(name)
        if f.doc == doc:
            return
        self._updates[f.field_id] = _with(f, doc=doc)

    def move_first(self, path: Path) -> UpdateSchema:
        name = _dotted(path)
        fid = self._find_for_move(name)
        if fid is None:
            raise ValidationError(f"cannot move missing column: {name}")
        self._move(name, _Move(fid, "first"))
        return self

    def move_before(self, path: Path, before_path: Path) -> UpdateSchema:
        return self._move_relative(path, before_path, "before")

    def move_after(self, path: Path, after_path: Path) -> UpdateSchema:
        return self._move_relative(path, after_path, "after")

    def _move_relative(self, path: Path, ref_path: Path, kind: str) -> UpdateSchema:
        name, ref = _dotted(path), _dotted(ref_path)
        fid = self._find_for_move(name)
        if fid is None:
            raise ValidationError(f"cannot move missing column: {name}")
        ref_id = self._find_for_move(ref)
        if ref_id is None:
            raise ValidationError(f"cannot move {name} {kind} missing column: {ref}")
        if fid == ref_id:
            raise ValidationError(f"cannot move {name} {kind} itself")
        self._move(name, _Move(fid, kind, ref_id))
        return self

    def _move(self, name: str, move: _Move) -> None:
        parent_id = self._id_to_parent.get(move.field_id)
        if parent_id is not None:
            parent = self._schema.find_field(parent_id)
            if not isinstance(parent.field_type, StructType):
                raise ValidationError(f"cannot move fields in non-struct type: {parent.field_type}")
            if move.kind != "first" and self._id_to_parent.get(move.reference_id) != parent_id:
                raise ValidationError(f"cannot move field {name} to a different struct")
            self._moves.setdefault(parent_id, []).append(move)
        else:
            if move.kind != "first" and self._id_to_parent.get(move.reference_id) is not None:
                raise ValidationError(f"cannot move field {name} to a different struct")
            self._moves.setdefault(TABLE_ROOT_ID, []).append(move)

    def set_identifier_fields(self, *names: str) -> UpdateSchema:
        """Replaces the identifier fields (full column names); none clears them."""
        if len(names) == 1 and isinstance(names[0], (list, tuple, set)):
            names = tuple(names[0])
        self._identifier_names = {_dotted(n) for n in names}
        return self

    def union_by_name(self, new_schema: Schema | pa.Schema) -> UpdateSchema:
        """Java's `unionByNameWith`: adds the columns of `new_schema` missing here (matched by
        name, nested ones too), widens types, makes columns optional and takes docs where
        `new_schema` says so; never deletes or narrows."""
        from icefloe.schema import Schema as _Schema

        other = new_schema if isinstance(new_schema, _Schema) else _Schema.from_arrow(new_schema)
        _union_struct(self, other.as_struct(), TABLE_ROOT_ID)
        return self

    # ---- result ----
    def apply(self) -> Schema:
        """The schema these changes produce (Java's `apply()`), validated."""
        schema, deletes = self._schema, self._deletes
        for name in self._identifier_names:
            f = self._find(name)
            if f is None:
                continue
            if f.field_id in deletes:
                raise ValidationError(
                    f"cannot delete identifier field {f.field_id}: {name}. To force deletion, "
                    "also call set_identifier_fields to update identifier fields."
                )
            parents = _index_parents(schema.as_struct())
            p = parents.get(f.field_id)
            while p is not None:
                if p in deletes:
                    raise ValidationError(
                        f"cannot delete field {schema.find_column_name(p)} as it will delete nested "
                        f"identifier field {name}"
                    )
                p = parents.get(p)
        struct = _ApplyChanges(self).struct(schema.as_struct(), TABLE_ROOT_ID)
        new_schema = Schema(*struct.fields)
        ids = []
        for name in sorted(self._identifier_names):
            try:
                ids.append(new_schema.find_field(name, self._case_sensitive).field_id)
            except ValidationError:
                raise ValidationError(
                    f"cannot add field {name} as an identifier field: "
                    "not found in current schema or added columns"
                ) from None
        by_id = _index_by_id(struct)
        parents = _index_parents(struct)
        for fid in ids:
            _validate_identifier_field(fid, by_id, parents)
        return Schema(*struct.fields, schema_id=schema.schema_id, identifier_field_ids=sorted(set(ids)))

    def _metadata_updates(self) -> list[dict[str, Any]]:
        new_schema = self.apply()
        if (
            new_schema.as_struct() == self._schema.as_struct()
            and sorted(new_schema.identifier_field_ids) == sorted(self._schema.identifier_field_ids)
            and not self._deletes
        ):
            return []
        last_column_id = max(self._base_last_column_id, new_schema.highest_field_id)
        updates: list[dict[str, Any]] = [
            {"action": "add-schema", "schema": new_schema.to_dict(), "last-column-id": last_column_id},
            {"action": "set-current-schema", "schema-id": -1},
        ]
        updates.extend(self._property_updates(new_schema))
        return updates

    def _property_updates(self, new_schema: Schema) -> list[dict[str, Any]]:
        """Java's `applyChangesToMetadata`: the name mapping learns added and renamed columns;
        per-column properties follow renames and go with deleted columns."""
        sets: dict[str, str] = {}
        removals: list[str] = []
        mapping = self._properties.get(NAME_MAPPING_PROPERTY)
        if mapping is not None:
            try:
                sets[NAME_MAPPING_PROPERTY] = update_name_mapping(
                    mapping, self._updates, self._parent_to_added
                )
            except (ValueError, KeyError, TypeError):
                pass  # Java logs and keeps the old mapping
        deleted = {n for i in self._deletes if (n := self._schema.find_column_name(i)) is not None}
        added_ids = set(self._added_name_to_id.values())
        renamed = {}
        for fid in self._updates:
            if fid in added_ids:
                continue
            old, new = self._schema.find_column_name(fid), new_schema.find_column_name(fid)
            if old is not None and new is not None and old != new:
                renamed[old] = new
        if deleted or renamed:
            for key, value in self._properties.items():
                prefix = next((p for p in COLUMN_PROPERTY_PREFIXES if key.startswith(p)), None)
                if prefix is None:
                    continue
                column = key[len(prefix) :]
                if column in deleted:
                    removals.append(key)
                elif column in renamed:
                    removals.append(key)
                    sets[prefix + renamed[column]] = value
        out: list[dict[str, Any]] = []
        if removals:
            out.append({"action": "remove-properties", "removals": removals})
        if sets:
            out.append({"action": "set-properties", "updates": sets})
        return out

    def _requirements(self) -> list[tuple[str, int]]:
        return [
            ("current-schema-id", self._base_schema_id),
            ("last-assigned-field-id", self._base_last_column_id),
        ]


def _validate_identifier_field(fid: int, by_id: dict[int, NestedField], parents: dict[int, int]) -> None:
    """Java's `Schema.validateIdentifierField`."""
    f = by_id.get(fid)
    if f is None:
        raise ValidationError(f"cannot add field id {fid} as an identifier field: field does not exist")
    if not isinstance(f.field_type, PrimitiveType):
        raise ValidationError(f"cannot add field {f.name} as an identifier field: not a primitive type field")
    if not f.required:
        raise ValidationError(f"cannot add field {f.name} as an identifier field: not a required field")
    if isinstance(f.field_type, (FloatType, DoubleType)):
        raise ValidationError(
            f"cannot add field {f.name} as an identifier field: must not be float or double field"
        )
    chain = []
    p = parents.get(fid)
    while p is not None:
        chain.append(p)
        p = parents.get(p)
    for pid in reversed(chain):
        parent = by_id[pid]
        if not isinstance(parent.field_type, StructType):
            raise ValidationError(
                f"cannot add field {f.name} as an identifier field: must not be nested in {parent}"
            )
        if not parent.required:
            raise ValidationError(
                f"cannot add field {f.name} as an identifier field: "
                f"must not be nested in an optional field {parent}"
            )


class _ApplyChanges:
    """Java's `SchemaUpdate.ApplyChanges` visitor."""

    def __init__(self, u: UpdateSchema) -> None:
        self.deletes = set(u._deletes)
        self.updates = u._updates
        self.adds = u._parent_to_added
        self.moves = u._moves

    def struct(self, struct: StructType, owner_id: int) -> StructType:
        fields = []
        for f in struct.fields:
            if f.field_id in self.deletes:
                continue
            base = self.updates.get(f.field_id, f)
            fields.append(_with(base, field_type=self.field_type(f)))
        added = [self.updates[i] for i in self.adds.get(owner_id, [])]
        fields.extend(added)
        for move in self.moves.get(owner_id, []):
            fields = _move_fields(fields, move)
        return StructType(*fields)

    def field_type(self, f: NestedField) -> IcebergType:
        """The new type of field `f` (not deleted): a promotion, or its nested changes."""
        update = self.updates.get(f.field_id)
        if (
            update is not None
            and update.field_type != f.field_type
            and isinstance(f.field_type, PrimitiveType)
        ):
            return update.field_type
        t = f.field_type
        if isinstance(t, StructType):
            return self.struct(t, f.field_id)
        if isinstance(t, ListType):
            element = t.element_field
            if element.field_id in self.deletes:
                raise ValidationError(f"cannot delete element type from list: {t}")
            upd = self.updates.get(element.field_id)
            required = upd.required if upd is not None else t.element_required
            return ListType(t.element_id, self.field_type(element), required)
        if isinstance(t, MapType):
            key, value = t.key_field, t.value_field
            if key.field_id in self.deletes:
                raise ValidationError(f"cannot delete map keys: {t}")
            if key.field_id in self.updates:
                raise ValidationError(f"cannot update map keys: {t}")
            if key.field_id in self.adds:
                raise ValidationError(f"cannot add fields to map keys: {t}")
            if self.field_type(key) != t.key_type:
                raise ValidationError(f"cannot alter map keys: {t}")
            if value.field_id in self.deletes:
                raise ValidationError(f"cannot delete value type from map: {t}")
            upd = self.updates.get(value.field_id)
            required = upd.required if upd is not None else t.value_required
            return MapType(t.key_id, t.key_type, t.value_id, self.field_type(value), required)
        return t


def _move_fields(fields: list[NestedField], move: _Move) -> list[NestedField]:
    out = [f for f in fields if f.field_id != move.field_id]
    moving = next(f for f in fields if f.field_id == move.field_id)
    if move.kind == "first":
        return [moving, *out]
    ref = next(i for i, f in enumerate(out) if f.field_id == move.reference_id)
    at = ref if move.kind == "before" else ref + 1
    return [*out[:at], moving, *out[at:]]


# ---- union by name (Java's UnionByNameVisitor) ----


def _visit_type(u: UpdateSchema, t: IcebergType, partner_id: int | None) -> bool:
    """Post-order walk of the new schema's type `t` beside the existing field `partner_id`;
    True when `t` has no partner (its field must be added whole)."""
    if isinstance(t, StructType):
        return _union_struct(u, t, partner_id)
    if partner_id is None:
        return True
    partner = u._schema.find_field(partner_id).field_type
    if isinstance(t, (ListType, MapType)) and type(partner) is not type(t):
        raise ValidationError(
            f"cannot change column {u._schema.find_column_name(partner_id)} from {partner} to {t}"
        )
    if isinstance(t, ListType):
        assert isinstance(partner, ListType)
        _visit_type(u, t.element_type, partner.element_id)
        _union_update(u, t.element_field, partner.element_field)
        return False
    if isinstance(t, MapType):
        assert isinstance(partner, MapType)
        _visit_type(u, t.key_type, partner.key_id)
        _visit_type(u, t.value_type, partner.value_id)
        _union_update(u, t.key_field, partner.key_field)
        _union_update(u, t.value_field, partner.value_field)
        return False
    return False


def _union_struct(u: UpdateSchema, struct: StructType, partner_id: int | None) -> bool:
    partner: StructType | None = None
    if partner_id is not None:
        if partner_id == TABLE_ROOT_ID:
            partner = u._schema.as_struct()
        else:
            existing = u._schema.find_field(partner_id)
            if not isinstance(existing.field_type, StructType):
                raise ValidationError(
                    f"cannot change column {u._schema.find_column_name(partner_id)} from "
                    f"{existing.field_type} to {struct}"
                )
            partner = existing.field_type
    matches = []
    for f in struct.fields:
        match = None if partner is None else partner.field_by_name(f.name, u._case_sensitive)
        _visit_type(u, f.field_type, None if match is None else match.field_id)
        matches.append(match)
    if partner_id is None:
        return True
    for f, match in zip(struct.fields, matches):
        if match is None:
            # Java's visitor adds every missing column as optional.
            parent_name = None if partner_id == TABLE_ROOT_ID else u._schema.find_column_name(partner_id)
            full = f"{parent_name}.{f.name}" if parent_name else f.name
            u._add(parent_name, f.name, f.field_type, f.doc, False, full)
        else:
            _union_update(u, f, match)
    return False


def _union_update(u: UpdateSchema, f: NestedField, existing: NestedField) -> None:
    full = u._schema.find_column_name(existing.field_id)
    assert full is not None
    if not f.required and existing.required:
        u.make_column_optional(full)
    if isinstance(existing.field_type, PrimitiveType):
        ignorable = isinstance(f.field_type, PrimitiveType) and is_promotion_allowed(
            f.field_type, existing.field_type
        )
    else:
        ignorable = not isinstance(f.field_type, PrimitiveType)
    if not ignorable:
        if not isinstance(f.field_type, PrimitiveType):
            raise ValidationError(f"cannot change column {full} from {existing.field_type} to {f.field_type}")
        u._update_type(full, f.field_type)
    if f.doc is not None and f.doc != existing.doc:
        u._update_doc(full, f.doc)
