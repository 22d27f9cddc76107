"""Snapshots as PyIceberg shows them: `Snapshot`, its `Summary`, and `Operation`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = ["Operation", "Snapshot", "SnapshotLogEntry", "Summary"]


class Operation(str, Enum):
    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"

    def __str__(self) -> str:
        return self.value


class Summary(Mapping[str, str]):
    """A snapshot summary: string properties (`added-records`, ...) plus `.operation`."""

    def __init__(self, properties: Mapping[str, str]) -> None:
        self._props = {str(k): str(v) for k, v in properties.items()}

    @property
    def operation(self) -> Operation | str:
        op = self._props.get("operation", "")
        try:
            return Operation(op)
        except ValueError:
            return op

    @property
    def additional_properties(self) -> dict[str, str]:
        return {k: v for k, v in self._props.items() if k != "operation"}

    def __getitem__(self, key: str) -> str:
        return self._props[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._props)

    def __len__(self) -> int:
        return len(self._props)

    def __repr__(self) -> str:
        return f"Summary({self._props!r})"


def _get(d: Mapping[str, Any], key: str) -> Any:
    # The native side names keys as the spec does (`snapshot-id`); accept snake_case too.
    if key in d:
        return d[key]
    return d.get(key.replace("-", "_"))


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: int
    parent_snapshot_id: int | None
    sequence_number: int
    timestamp_ms: int
    manifest_list: str | None
    summary: Summary
    schema_id: int | None

    @staticmethod
    def from_native(d: Mapping[str, Any]) -> Snapshot:
        return Snapshot(
            snapshot_id=int(_get(d, "snapshot-id")),
            parent_snapshot_id=_opt_int(_get(d, "parent-snapshot-id")),
            sequence_number=int(_get(d, "sequence-number") or 0),
            timestamp_ms=int(_get(d, "timestamp-ms")),
            manifest_list=_get(d, "manifest-list"),
            summary=Summary(_get(d, "summary") or {}),
            schema_id=_opt_int(_get(d, "schema-id")),
        )

    def __repr__(self) -> str:
        return (
            f"Snapshot(snapshot_id={self.snapshot_id}, parent_snapshot_id={self.parent_snapshot_id}, "
            f"sequence_number={self.sequence_number}, timestamp_ms={self.timestamp_ms}, "
            f"operation={self.summary.operation!s}, schema_id={self.schema_id})"
        )


@dataclass(frozen=True)
class SnapshotLogEntry:
    snapshot_id: int
    timestamp_ms: int
