"""Metadata tables (Iceberg Java's `MetadataTableType`), computed in Rust from the table's
metadata, manifest lists and manifests: `table.inspect.files()` returns a `pyarrow.Table`
with the columns, types and nesting Java's `SELECT * FROM db.t.files` has, `readable_metrics`
included.

Tables of one snapshot take `snapshot_id` (default: the current snapshot): `manifests`,
`files`, `data_files`, `delete_files`, `entries`, `partitions`, `position_deletes`. The others
show the whole metadata (`snapshots`, `history`, `refs`, `metadata_log_entries`) or every
snapshot (`all_manifests`, `all_files`, `all_data_files`, `all_delete_files`, `all_entries`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from icefloe import _native, _partition_stats_file

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["METADATA_TABLES", "InspectTable"]

METADATA_TABLES: tuple[str, ...] = tuple(_native.metadata_table_names())


class InspectTable:
    """The metadata tables of one table, as of the table object's metadata."""

    def __init__(self, table: Table) -> None:
        self._table = table

    def table(self, name: str, snapshot_id: int | None = None) -> pa.Table:
        """The metadata table `name` (see `METADATA_TABLES`); `partitions` as `partitions()`."""
        if name == "partitions":
            return self.partitions(snapshot_id)
        return self._from_manifests(name, snapshot_id)

    def _from_manifests(self, name: str, snapshot_id: int | None) -> pa.Table:
        return pa.Table.from_batches(_native.inspect_table(self._table.metadata, name, snapshot_id))

    # -- metadata only --
    def snapshots(self) -> pa.Table:
        return self.table("snapshots")

    def history(self) -> pa.Table:
        return self.table("history")

    def refs(self) -> pa.Table:
        return self.table("refs")

    def metadata_log_entries(self) -> pa.Table:
        return self.table("metadata_log_entries")

    # -- one snapshot --
    def manifests(self, snapshot_id: int | None = None) -> pa.Table:
        return self.table("manifests", snapshot_id)

    def files(self, snapshot_id: int | None = None) -> pa.Table:
        return self.table("files", snapshot_id)

    def data_files(self, snapshot_id: int | None = None) -> pa.Table:
        return self.table("data_files", snapshot_id)

    def delete_files(self, snapshot_id: int | None = None) -> pa.Table:
        return self.table("delete_files", snapshot_id)

    def entries(self, snapshot_id: int | None = None) -> pa.Table:
        return self.table("entries", snapshot_id)

    def partitions(self, snapshot_id: int | None = None, use_partition_stats: bool = True) -> pa.Table:
        """Java's `partitions` table. When the snapshot has a partition statistics file
        (`table.maintenance.compute_partition_stats()`, or Java's) and no snapshot behind it
        removed a file, it is read from that file instead of the manifests: the same rows
        (see `icefloe._partition_stats_file.partitions_from_stats`)."""
        sid = self._table.metadata.current_snapshot_id if snapshot_id is None else snapshot_id
        if use_partition_stats and sid is not None:
            from_stats = _partition_stats_file.partitions_from_stats(self._table.metadata, sid)
            if from_stats is not None:
                return from_stats
        return self._from_manifests("partitions", snapshot_id)

    def position_deletes(self, snapshot_id: int | None = None) -> pa.Table:
        return self.table("position_deletes", snapshot_id)

    # -- every snapshot --
    def all_manifests(self) -> pa.Table:
        return self.table("all_manifests")

    def all_files(self) -> pa.Table:
        return self.table("all_files")

    def all_data_files(self) -> pa.Table:
        return self.table("all_data_files")

    def all_delete_files(self) -> pa.Table:
        return self.table("all_delete_files")

    def all_entries(self) -> pa.Table:
        return self.table("all_entries")
