"""Partition specs (PyIceberg-style `PartitionSpec` / `PartitionField`) and their JSON."""

from __future__ import annotations

import json
from typing import Any

from icefloe.exceptions import InvalidDataError
from icefloe.transforms import Transform, parse_transform

__all__ = ["UNPARTITIONED_PARTITION_SPEC", "PartitionField", "PartitionSpec"]

# Partition field ids start above every schema field id, as Iceberg Java does.
PARTITION_FIELD_ID_START = 1000


class PartitionField:
    """One partition field: `transform` applied to source column `source_id`."""

    def __init__(self, source_id: int, field_id: int, transform: Transform | str, name: str) -> None:
        self.source_id = source_id
        self.field_id = field_id
        self.transform = parse_transform(transform)
        self.name = name

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transform": str(self.transform),
            "source-id": self.source_id,
            "field-id": self.field_id,
        }

    def _key(self) -> tuple[Any, ...]:
        return (self.source_id, self.field_id, self.transform, self.name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PartitionField) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"PartitionField(source_id={self.source_id}, field_id={self.field_id}, "
            f"transform={self.transform!r}, name={self.name!r})"
        )

    def __str__(self) -> str:
        return f"{self.field_id}: {self.name}: {self.transform}({self.source_id})"


class PartitionSpec:
    def __init__(self, *fields: PartitionField, spec_id: int = 0) -> None:
        self.fields: tuple[PartitionField, ...] = tuple(fields)
        self.spec_id = spec_id

    def is_unpartitioned(self) -> bool:
        return not self.fields

    @property
    def last_assigned_field_id(self) -> int:
        return max((f.field_id for f in self.fields), default=PARTITION_FIELD_ID_START - 1)

    def fields_by_source_id(self, source_id: int) -> list[PartitionField]:
        return [f for f in self.fields if f.source_id == source_id]

    def to_dict(self) -> dict[str, Any]:
        return {"spec-id": self.spec_id, "fields": [f.to_dict() for f in self.fields]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @staticmethod
    def from_json(text: str | dict[str, Any]) -> PartitionSpec:
        obj = json.loads(text) if isinstance(text, str) else text
        try:
            fields = [
                PartitionField(
                    source_id=int(f["source-id"]),
                    # Legacy v1 specs may lack field ids: 1000 + position.
                    field_id=int(f.get("field-id", PARTITION_FIELD_ID_START + i)),
                    transform=f["transform"],
                    name=str(f["name"]),
                )
                for i, f in enumerate(obj["fields"])
            ]
            return PartitionSpec(*fields, spec_id=int(obj.get("spec-id", 0)))
        except (KeyError, TypeError) as e:
            raise InvalidDataError(f"malformed partition spec {str(obj)[:200]}: {e}") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PartitionSpec) and (self.spec_id, self.fields) == (
            other.spec_id,
            other.fields,
        )

    def __hash__(self) -> int:
        return hash((self.spec_id, self.fields))

    def __len__(self) -> int:
        return len(self.fields)

    def __repr__(self) -> str:
        inner = "".join(f"{f!r}, " for f in self.fields)
        return f"PartitionSpec({inner}spec_id={self.spec_id})"

    def __str__(self) -> str:
        body = "\n".join(f"  {f}" for f in self.fields)
        return f"[\n{body}\n]" if self.fields else "[]"


UNPARTITIONED_PARTITION_SPEC = PartitionSpec(spec_id=0)
