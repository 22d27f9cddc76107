"""`table.update_spec()`: partition-spec evolution with the rules of Iceberg Java's
`BaseUpdatePartitionSpec`.

New partition fields take ids after the table's `last-partition-id`; on format v2+ a field
equal to one of an older spec (same source, transform and, when given, name) is reused with
its id, as Java does, so data written under both specs share partition values. Removing a
field drops it on v2+ and, on v1 (whose readers assign partition field ids by position),
replaces it with a `void` transform. Default names follow Java (`id_bucket_16`, `ts_day`,
`data_trunc_4`, identity: the column name). The new spec becomes the default through the REST
updates `add-spec` + `set-default-spec`; a spec or schema changed concurrently is a
CommitConflictError.

    with table.update_spec() as u:
        u.add_field("ts", "day")
        u.remove_field("id_bucket_16")
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icefloe.exceptions import ValidationError
from icefloe.partitioning import PartitionField, PartitionSpec
from icefloe.schema import Schema
from icefloe.table_transaction import StagedBuilder
from icefloe.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    UnknownTransform,
    VoidTransform,
    YearTransform,
    parse_transform,
)

if TYPE_CHECKING:
    from icefloe.table_transaction import Requirement, Transaction

__all__ = ["UpdateSpec"]

_TIME = (YearTransform, MonthTransform, DayTransform, HourTransform)


def default_partition_name(source_name: str, transform: Transform) -> str:
    """Java's `PartitionNameGenerator`."""
    if isinstance(transform, IdentityTransform):
        return source_name
    if isinstance(transform, BucketTransform):
        return f"{source_name}_bucket_{transform.num_buckets}"
    if isinstance(transform, TruncateTransform):
        return f"{source_name}_trunc_{transform.width}"
    if isinstance(transform, VoidTransform):
        return f"{source_name}_null"
    for cls, suffix in (
        (YearTransform, "year"),
        (MonthTransform, "month"),
        (DayTransform, "day"),
        (HourTransform, "hour"),
    ):
        if isinstance(transform, cls):
            return f"{source_name}_{suffix}"
    raise ValidationError(f"cannot name a partition field with unknown transform {transform}")


class UpdateSpec(StagedBuilder):
    """Pending partition-spec changes (see the module doc)."""

    _WHAT = "this partition spec update"

    def __init__(self, transaction: Transaction, case_sensitive: bool = True) -> None:
        from icefloe.table_transaction import last_partition_id

        self._transaction = transaction
        md = transaction._staged
        self._format_version = md.format_version
        self._schema = Schema.from_json(md.schema_json())
        self._spec = PartitionSpec.from_json(md.spec_json())
        self._specs = [PartitionSpec.from_json(s) for s in md.specs_json()]
        self._base_spec_id = md.default_spec_id
        self._base_schema_id = md.current_schema_id
        self._base_last_partition_id = last_partition_id(md)
        self._last_partition_id = self._base_last_partition_id
        self._case_sensitive = case_sensitive
        for f in self._spec.fields:
            if isinstance(f.transform, UnknownTransform):
                raise ValidationError(f"cannot update partition spec with unknown transform: {f}")
        self._name_to_field = {f.name: f for f in self._spec.fields}
        self._transform_to_field = {(f.source_id, str(f.transform)): f for f in self._spec.fields}
        self._adds: list[PartitionField] = []
        self._added_time_fields: dict[int, PartitionField] = {}
        self._transform_to_added: dict[tuple[int, str], PartitionField] = {}
        self._name_to_added: dict[str, PartitionField] = {}
        self._deletes: set[int] = set()
        self._renames: dict[str, str] = {}
        self._committed = False

    def _resolve(self, source_column_name: str, transform: Transform | str) -> tuple[int, Transform]:
        source = self._schema.find_field(source_column_name, self._case_sensitive)
        return source.field_id, parse_transform(transform)

    def _next_id(self) -> int:
        self._last_partition_id += 1
        return self._last_partition_id

    def _recycle_or_create(self, source_id: int, transform: Transform, name: str | None) -> PartitionField:
        if self._format_version >= 2:
            for spec in self._specs:
                for f in spec.fields:
                    if (
                        f.source_id == source_id
                        and f.transform == transform
                        and (name is None or f.name == name)
                    ):
                        return f
        return PartitionField(source_id, self._next_id(), transform, name or "")

    def add_identity(self, source_column_name: str) -> UpdateSpec:
        return self.add_field(source_column_name, IdentityTransform())

    def add_field(
        self,
        source_column_name: str,
        transform: Transform | str = "identity",
        partition_field_name: str | None = None,
    ) -> UpdateSpec:
        """Partitions by `transform(source column)`, named `partition_field_name` or Java's
        default name."""
        name = partition_field_name
        if name is not None and name in self._name_to_added:
            raise ValidationError(f"cannot add duplicate partition field: {self._name_to_added[name]}")
        source_id, tr = self._resolve(source_column_name, transform)
        key = (source_id, str(tr))
        term = f"{tr}({source_column_name})"
        existing = self._transform_to_field.get(key)
        if existing is not None and existing.field_id in self._deletes and existing.transform == tr:
            # re-adding a field removed in this update: undo the removal
            self._deletes.discard(existing.field_id)
            if name is not None and existing.name != name:
                self.rename_field(existing.name, name)
            return self
        if existing is not None:
            raise ValidationError(
                f"cannot add duplicate partition field {name}={term}, conflicts with {existing}"
            )
        added = self._transform_to_added.get(key)
        if added is not None:
            raise ValidationError(
                f"cannot add duplicate partition field {name}={term}, already added: {added}"
            )
        new_field = self._recycle_or_create(source_id, tr, name)
        if not new_field.name:
            source_name = self._schema.find_column_name(source_id) or source_column_name
            new_field = PartitionField(
                source_id, new_field.field_id, tr, default_partition_name(source_name, tr)
            )
        if isinstance(new_field.transform, _TIME):
            clash = self._added_time_fields.get(source_id)
            if clash is not None:
                raise ValidationError(
                    f"cannot add redundant partition field: {clash} conflicts with {new_field}"
                )
            self._added_time_fields[source_id] = new_field
        self._transform_to_added[key] = new_field
        existing_by_name = self._name_to_field.get(new_field.name)
        if existing_by_name is not None and existing_by_name.field_id not in self._deletes:
            if isinstance(existing_by_name.transform, VoidTransform):
                # rename the old removed (void) field that the new one replaces
                self.rename_field(
                    existing_by_name.name, f"{existing_by_name.name}_{existing_by_name.field_id}"
                )
            else:
                raise ValidationError(f"cannot add duplicate partition field name: {new_field.name}")
        elif existing_by_name is not None:
            self._renames[existing_by_name.name] = f"{existing_by_name.name}_{existing_by_name.field_id}"
        self._name_to_added[new_field.name] = new_field
        self._adds.append(new_field)
        return self

    def remove_field(self, name: str, transform: Transform | str | None = None) -> UpdateSpec:
        """Removes the partition field called `name`, or, with `transform`, the field of
        `transform(column name)`."""
        if transform is not None:
            source_id, tr = self._resolve(name, transform)
            key = (source_id, str(tr))
            added = self._transform_to_added.get(key)
            if added is not None:
                raise ValidationError(f"cannot delete newly added field: {added}")
            field = self._transform_to_field.get(key)
            if field is None:
                raise ValidationError(f"cannot find partition field to remove: {tr}({name})")
        else:
            if name in self._name_to_added:
                raise ValidationError(f"cannot delete newly added field: {self._name_to_added[name]}")
            field = self._name_to_field.get(name)
            if field is None:
                raise ValidationError(
                    f"cannot find partition field to remove: {name} (fields: "
                    f"{', '.join(f.name for f in self._spec.fields) or 'none'})"
                )
        if field.name in self._renames:
            raise ValidationError(f"cannot rename and delete partition field: {field.name}")
        self._deletes.add(field.field_id)
        return self

    def rename_field(self, name: str, new_name: str) -> UpdateSpec:
        existing = self._name_to_field.get(new_name)
        if existing is not None and isinstance(existing.transform, VoidTransform):
            self.rename_field(existing.name, f"{existing.name}_{existing.field_id}")
        if name in self._name_to_added:
            raise ValidationError(f"cannot rename newly added partition field: {name}")
        field = self._name_to_field.get(name)
        if field is None:
            raise ValidationError(f"cannot find partition field to rename: {name}")
        if field.field_id in self._deletes:
            raise ValidationError(f"cannot delete and rename partition field: {name}")
        self._renames[name] = new_name
        return self

    def apply(self) -> PartitionSpec:
        """The spec these changes produce (Java's `apply()`), validated."""
        fields: list[PartitionField] = []
        for f in self._spec.fields:
            new_name = self._renames.get(f.name, f.name)
            if f.field_id not in self._deletes:
                fields.append(PartitionField(f.source_id, f.field_id, f.transform, new_name))
            elif self._format_version < 2:
                # v1: ids are positional, so a removed field stays as an always-null field
                fields.append(PartitionField(f.source_id, f.field_id, VoidTransform(), new_name))
        fields.extend(self._adds)
        names: set[str] = set()
        for f in fields:
            if not f.name:
                raise ValidationError(f"cannot use empty partition name: {f}")
            try:
                column = self._schema.find_field(f.name)
            except ValidationError:
                column = None
            if column is not None and column.field_id != f.source_id:
                raise ValidationError(
                    f"cannot create partition field {f.name!r} sourced from a different column than "
                    f"the schema's column of that name (id {column.field_id})"
                )
            if f.name in names:
                raise ValidationError(f"cannot use partition name more than once: {f.name}")
            names.add(f.name)
        return PartitionSpec(*fields, spec_id=self._spec.spec_id)

    def _metadata_updates(self) -> list[dict[str, Any]]:
        spec = self.apply()
        if spec.fields == self._spec.fields:
            return []
        return [
            {"action": "add-spec", "spec": spec.to_dict()},
            {"action": "set-default-spec", "spec-id": -1},
        ]

    def _requirements(self) -> list[Requirement]:
        return [
            ("current-schema-id", self._base_schema_id),
            ("default-spec-id", self._base_spec_id),
            ("last-assigned-partition-id", self._base_last_partition_id),
        ]
