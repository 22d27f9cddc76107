"""Table statistics files, as table metadata lists them (the spec's `statistics`): a Puffin
file per snapshot whose blobs describe columns, such as the `apache-datasketches-theta-v1`
distinct-value sketches `table.maintenance.compute_table_stats()` and Iceberg Java's
`compute_table_stats` write (each with its estimate as the `ndv` property).
`table.statistics()` lists them. Partition statistics files (the spec's
`partition-statistics`: one Parquet file of per-partition counts per snapshot, written by
`table.maintenance.compute_partition_stats()` and Java's `compute_partition_stats`) are listed
by `table.partition_statistics()`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

THETA_V1 = "apache-datasketches-theta-v1"


@dataclass(frozen=True)
class BlobMetadata:
    """One blob of a statistics file: its type, the snapshot it describes, the field ids it
    is about and its properties (a theta sketch's `ndv`)."""

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def from_json(d: dict[str, Any]) -> BlobMetadata:
        return BlobMetadata(
            type=str(d["type"]),
            snapshot_id=int(d["snapshot-id"]),
            sequence_number=int(d["sequence-number"]),
            fields=tuple(int(f) for f in d.get("fields") or ()),
            properties={str(k): str(v) for k, v in (d.get("properties") or {}).items()},
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": self.type,
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.sequence_number,
            "fields": list(self.fields),
        }
        if self.properties:
            out["properties"] = dict(self.properties)
        return out


@dataclass(frozen=True)
class StatisticsFile:
    """A statistics file of a snapshot (the table metadata's `statistics` entry)."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    blob_metadata: tuple[BlobMetadata, ...] = ()

    @staticmethod
    def from_json(d: dict[str, Any]) -> StatisticsFile:
        return StatisticsFile(
            snapshot_id=int(d["snapshot-id"]),
            statistics_path=str(d["statistics-path"]),
            file_size_in_bytes=int(d.get("file-size-in-bytes", 0)),
            file_footer_size_in_bytes=int(d.get("file-footer-size-in-bytes", 0)),
            blob_metadata=tuple(BlobMetadata.from_json(b) for b in d.get("blob-metadata") or ()),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
            "file-footer-size-in-bytes": self.file_footer_size_in_bytes,
            "blob-metadata": [b.to_json() for b in self.blob_metadata],
        }

    @property
    def ndv(self) -> dict[int, int]:
        """The distinct-value estimate of each field a theta sketch of this file describes,
        as its blob's `ndv` property records it (by field id)."""
        out: dict[int, int] = {}
        for b in self.blob_metadata:
            value = b.properties.get("ndv")
            if b.type == THETA_V1 and len(b.fields) == 1 and value is not None and value.isdigit():
                out[b.fields[0]] = int(value)
        return out


@dataclass(frozen=True)
class PartitionStatisticsFile:
    """A partition statistics file of a snapshot (the table metadata's `partition-statistics`
    entry, Java's `PartitionStatisticsFile`)."""

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int

    @staticmethod
    def from_json(d: dict[str, Any]) -> PartitionStatisticsFile:
        return PartitionStatisticsFile(
            snapshot_id=int(d["snapshot-id"]),
            statistics_path=str(d["statistics-path"]),
            file_size_in_bytes=int(d.get("file-size-in-bytes", 0)),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot-id": self.snapshot_id,
            "statistics-path": self.statistics_path,
            "file-size-in-bytes": self.file_size_in_bytes,
        }
