"""Table scans (PyIceberg's `DataScan`): plan the data files of a snapshot in the native
core, read each FileScanTask as Arrow, then apply the row filter and the projection."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from enum import IntEnum
from functools import cached_property
from typing import TYPE_CHECKING, Any, overload

import pyarrow as pa

from icefloe import _native
from icefloe._reserved_fields import (
    FILE_PATH_FIELD_ID,
    LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID,
    ROW_ID_FIELD_ID,
    ROW_POS_FIELD_ID,
)
from icefloe.exceptions import InvalidDataError, ValidationError
from icefloe.expressions import AlwaysFalse, AlwaysTrue, BooleanExpression, as_row_filter
from icefloe.schema import Schema
from icefloe.types import LongType, NestedField, StringType

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    from duckdb import DuckDBPyConnection

    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

__all__ = ["CombinedScanTask", "DataFile", "DataFileContent", "DataScan", "FileScanTask", "PlannedFiles"]

_READ_THREADS = 4


class DataFileContent(IntEnum):
    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


_CONTENT_NAMES = {
    "data": DataFileContent.DATA,
    "positiondeletes": DataFileContent.POSITION_DELETES,
    "equalitydeletes": DataFileContent.EQUALITY_DELETES,
}


def _literal(v: Any) -> Any:
    """A partition value from its serde form (`{"Int": 5}`) to Python: the spec's units
    (days for dates, microseconds for timestamps, unscaled decimals), bytes, UUID."""
    if isinstance(v, dict) and len(v) == 1:
        kind, inner = next(iter(v.items()))
        if kind in ("Fixed", "Binary") and isinstance(inner, list):
            return bytes(inner)
        if kind == "Uuid" and isinstance(inner, int):
            return uuid.UUID(int=inner)
        return inner
    return v


def _int_map(m: Any) -> dict[int, Any]:
    return {int(k): v for k, v in (m or {}).items()}


def _bytes_map(m: Any) -> dict[int, bytes]:
    return {int(k): bytes(v) for k, v in (m or {}).items()}


class DataFile:
    """A read-only view of a DataFile descriptor (the core's serde JSON)."""

    def __init__(self, obj: dict[str, Any]) -> None:
        self._obj = obj

    @property
    def content(self) -> DataFileContent:
        c = self._obj.get("content", 0)
        if isinstance(c, int):
            return DataFileContent(c)
        return _CONTENT_NAMES.get(str(c).replace("_", "").lower(), DataFileContent.DATA)

    @property
    def file_path(self) -> str:
        return str(self._obj["file_path"])

    @property
    def file_format(self) -> str:
        return str(self._obj.get("file_format", "PARQUET")).upper()

    @property
    def partition(self) -> list[Any]:
        return [_literal(v) for v in self._obj.get("partition") or []]

    @property
    def record_count(self) -> int:
        return int(self._obj["record_count"])

    @property
    def file_size_in_bytes(self) -> int:
        return int(self._obj["file_size_in_bytes"])

    @property
    def spec_id(self) -> int:
        return int(self._obj.get("spec_id", 0))

    @property
    def column_sizes(self) -> dict[int, int]:
        return _int_map(self._obj.get("column_sizes"))

    @property
    def value_counts(self) -> dict[int, int]:
        return _int_map(self._obj.get("value_counts"))

    @property
    def null_value_counts(self) -> dict[int, int]:
        return _int_map(self._obj.get("null_value_counts"))

    @property
    def nan_value_counts(self) -> dict[int, int]:
        return _int_map(self._obj.get("nan_value_counts"))

    @property
    def lower_bounds(self) -> dict[int, bytes]:
        return _bytes_map(self._obj.get("lower_bounds"))

    @property
    def upper_bounds(self) -> dict[int, bytes]:
        return _bytes_map(self._obj.get("upper_bounds"))

    @property
    def split_offsets(self) -> list[int] | None:
        s = self._obj.get("split_offsets")
        return None if s is None else [int(x) for x in s]

    @property
    def sort_order_id(self) -> int | None:
        s = self._obj.get("sort_order_id")
        return None if s is None else int(s)

    def __repr__(self) -> str:
        return f"DataFile(file_path={self.file_path!r}, record_count={self.record_count})"


class FileScanTask:
    """One planned read: a data file (or a byte range of it) with the delete files that
    apply to it and the residual filter. Backed either by a native task view (planned in
    Rust; attributes read on demand) or by the task JSON that crosses to the executors."""

    def __init__(self, task_json: str | None = None, *, view: _native.FileScanTaskView | None = None) -> None:
        if task_json is None and view is None:
            raise ValidationError("FileScanTask needs task JSON or a native task view")
        self._json_text = task_json
        self._view = view

    @cached_property
    def _obj(self) -> dict[str, Any]:
        text = self.to_json()
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise InvalidDataError(f"malformed FileScanTask JSON: {e}") from None
        if not isinstance(obj, dict) or "file" not in obj:
            raise InvalidDataError(f"FileScanTask JSON has no 'file': {text[:200]}")
        return obj

    @cached_property
    def file(self) -> DataFile:
        if self._view is not None:
            return DataFile(json.loads(self._view.file_json()))
        return DataFile(self._obj["file"])

    @property
    def file_path(self) -> str:
        return self._view.file_path if self._view is not None else self.file.file_path

    @property
    def record_count(self) -> int:
        return self._view.record_count if self._view is not None else self.file.record_count

    @property
    def start(self) -> int:
        return self._view.start if self._view is not None else int(self._obj.get("start", 0))

    @property
    def length(self) -> int:
        if self._view is not None:
            return self._view.length
        return int(self._obj.get("length", self.file.file_size_in_bytes))

    @property
    def data_sequence_number(self) -> int:
        if self._view is not None:
            return self._view.data_sequence_number
        return int(self._obj.get("data_sequence_number", 0))

    @cached_property
    def delete_files(self) -> list[DataFile]:
        """The delete files that apply to this data file (position and equality)."""
        if self._view is not None:
            return [DataFile(json.loads(d)) for d in self._view.delete_files_json()]
        return [DataFile(d["file"]) for d in self._obj.get("deletes") or []]

    @property
    def delete_paths(self) -> list[str]:
        if self._view is not None:
            return [p for p, _content, _seq in self._view.deletes]
        return [d.file_path for d in self.delete_files]

    @property
    def residual(self) -> str | None:
        """The residual filter (bound expression JSON); None when nothing is left."""
        if self._view is not None:
            return self._view.residual
        r = self._obj.get("residual")
        return None if r is None else json.dumps(r)

    def to_json(self) -> str:
        if self._json_text is None:
            assert self._view is not None
            self._json_text = self._view.to_json()
        return self._json_text

    def __repr__(self) -> str:
        return f"FileScanTask({self.file_path!r}, start={self.start}, length={self.length})"


class PlannedFiles(Sequence[FileScanTask]):
    """The file scan tasks of a plan, held in Rust: `len()` is free, a FileScanTask view is
    made only for the items touched."""

    def __init__(self, plan: _native.ScanPlan) -> None:
        self._plan = plan

    def __len__(self) -> int:
        return len(self._plan)

    @overload
    def __getitem__(self, i: int) -> FileScanTask: ...
    @overload
    def __getitem__(self, i: slice) -> list[FileScanTask]: ...
    def __getitem__(self, i: int | slice) -> FileScanTask | list[FileScanTask]:
        if isinstance(i, slice):
            return [FileScanTask(view=self._plan[j]) for j in range(*i.indices(len(self._plan)))]
        return FileScanTask(view=self._plan[i])

    def __iter__(self) -> Iterator[FileScanTask]:
        for j in range(len(self._plan)):
            yield FileScanTask(view=self._plan[j])

    @property
    def metrics(self) -> dict[str, int]:
        return self._plan.metrics

    @property
    def snapshot_id(self) -> int | None:
        return self._plan.snapshot_id

    def record_count(self) -> int:
        return self._plan.record_count()

    def to_json_list(self) -> list[str]:
        return self._plan.tasks_json()

    def __eq__(self, other: object) -> bool:
        """Equal to a list/tuple (or another plan) of the same tasks, so `plan == []` works."""
        if not isinstance(other, (list, tuple, PlannedFiles)):
            return NotImplemented
        if len(other) != len(self):
            return False
        return all(a.to_json() == b.to_json() for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PlannedFiles({len(self)} tasks)"


class CombinedScanTask:
    """File scan tasks packed into one unit of work (one Spark partition); crosses to the
    executors as JSON bytes."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    @cached_property
    def tasks(self) -> list[FileScanTask]:
        return [FileScanTask(t) for t in _native.split_combined_task(self._data)]

    def to_bytes(self) -> bytes:
        return self._data

    def __repr__(self) -> str:
        return f"CombinedScanTask({len(self.tasks)} tasks)"


_CACHE_ATTR = "_icefloe_manifest_cache"


def manifest_cache(table: Table) -> _native.ManifestCache:
    """The table object's manifest cache (decoded manifests, keyed by path + length, so
    reusing it across refreshes of the same table is safe)."""
    cache = getattr(table, _CACHE_ATTR, None)
    if cache is None:
        cache = _native.ManifestCache()
        try:
            setattr(table, _CACHE_ATTR, cache)
        except AttributeError:  # a table type that refuses attributes: plan without reuse
            pass
    return cache


# Iceberg's reserved metadata columns a scan can select (MetadataColumns.FILE_PATH /
# ROW_POSITION, and v3 row lineage's ROW_ID / LAST_UPDATED_SEQUENCE_NUMBER: null for rows of
# files that have no first row id).
METADATA_COLUMNS: dict[str, NestedField] = {
    "_file": NestedField(FILE_PATH_FIELD_ID, "_file", StringType(), required=True),
    "_pos": NestedField(ROW_POS_FIELD_ID, "_pos", LongType(), required=True),
    "_row_id": NestedField(ROW_ID_FIELD_ID, "_row_id", LongType(), required=False),
    "_last_updated_sequence_number": NestedField(
        LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, "_last_updated_sequence_number", LongType(), required=False
    ),
}


class DataScan:
    """A scan of one snapshot of a table: `plan_files()`, `to_arrow()`, `to_batches()`
    (alias `to_arrow_batch_reader()`), `to_pandas()`, `to_polars()`, `to_duckdb()`, `count()`;
    an Arrow stream for `pa.table(scan)`, `pl.DataFrame(scan)` and DuckDB."""

    def __init__(
        self,
        table: Table,
        row_filter: BooleanExpression | str | None = None,
        selected_fields: tuple[str, ...] = ("*",),
        snapshot_id: int | None = None,
        case_sensitive: bool = True,
        limit: int | None = None,
        *,
        as_of_timestamp: int | None = None,
        ref: str | None = None,
        from_snapshot_id: int | None = None,
        to_snapshot_id: int | None = None,
        include_column_stats: bool = False,
    ) -> None:
        self.table = table
        self.row_filter = as_row_filter(row_filter)
        if isinstance(selected_fields, str):
            selected_fields = (selected_fields,)
        self.selected_fields = tuple(selected_fields)
        self.snapshot_id = snapshot_id
        self.case_sensitive = case_sensitive
        if limit is not None and limit < 0:
            raise ValidationError(f"scan limit must be >= 0, found {limit}")
        self.limit = limit
        self._metadata = table.metadata
        self.as_of_timestamp = as_of_timestamp
        self.ref = ref
        self.from_snapshot_id = from_snapshot_id
        self.to_snapshot_id = to_snapshot_id
        self.include_column_stats = include_column_stats
        self._incremental = from_snapshot_id is not None or to_snapshot_id is not None
        if self._incremental and (snapshot_id is not None or ref is not None or as_of_timestamp is not None):
            raise ValidationError(
                "an incremental scan (from_snapshot_id/to_snapshot_id) cannot also name "
                "snapshot_id, ref or as_of_timestamp"
            )
        if not self._incremental:
            # Resolve id / ref / time to one snapshot id now (clear errors listing what
            # exists), so the filter binds to that snapshot's schema.
            resolved = _native.resolve_snapshot(
                self._metadata, snapshot_id=snapshot_id, ref_name=ref, as_of_timestamp=as_of_timestamp
            )
            if snapshot_id is not None or ref is not None or as_of_timestamp is not None:
                self.snapshot_id = resolved
        # Bind now so an unknown column fails where the scan is built. `row_filter` is the
        # bound form: exact column names and literals typed like their columns, so its
        # to_pyarrow() is what executors should apply.
        self._bound_filter = self.row_filter.bind(self._schema, case_sensitive)
        self.row_filter = self._bound_filter

    @property
    def bound_row_filter(self) -> BooleanExpression:
        """The row filter bound to the scan's schema: exact column names, typed literals."""
        return self._bound_filter

    def row_filter_is_always_true(self) -> bool:
        return isinstance(self._bound_filter, AlwaysTrue)

    # ---- builder-style updates (PyIceberg) ----
    def _update(self, **kw: Any) -> DataScan:
        args: dict[str, Any] = {
            "row_filter": self.row_filter,
            "selected_fields": self.selected_fields,
            "snapshot_id": self.snapshot_id,
            "case_sensitive": self.case_sensitive,
            "limit": self.limit,
            "from_snapshot_id": self.from_snapshot_id,
            "to_snapshot_id": self.to_snapshot_id,
            "include_column_stats": self.include_column_stats,
        }
        if self.ref is not None and not {"snapshot_id", "ref", "as_of_timestamp"} & kw.keys():
            # Still the ref (a branch reads with the table's schema, see `_schema`).
            args.update(snapshot_id=None, ref=self.ref)
        args.update(kw)
        return DataScan(self.table, **args)

    def select(self, *field_names: str) -> DataScan:
        return self._update(selected_fields=field_names)

    def filter(self, expr: BooleanExpression) -> DataScan:
        combined = expr if isinstance(self.row_filter, AlwaysTrue) else self.row_filter & expr
        return self._update(row_filter=combined)

    def use_snapshot(self, snapshot_id: int) -> DataScan:
        return self._update(snapshot_id=snapshot_id)

    def use_ref(self, ref: str) -> DataScan:
        return self._update(snapshot_id=None, ref=ref)

    def as_of(self, timestamp_ms: int) -> DataScan:
        return self._update(snapshot_id=None, as_of_timestamp=timestamp_ms)

    def with_case_sensitive(self, case_sensitive: bool = True) -> DataScan:
        return self._update(case_sensitive=case_sensitive)

    # ---- what is read ----
    def snapshot(self) -> Snapshot | None:
        if self.snapshot_id is not None:
            return self.table.snapshot_by_id(self.snapshot_id)
        return self.table.current_snapshot()

    @cached_property
    def _schema(self) -> Schema:
        """The schema the scan's snapshot was written with (current schema otherwise); a
        branch reads with the table's current schema, as Java's `SnapshotUtil.schemaFor`
        (a tag, a snapshot id or a time reads with its snapshot's schema)."""
        if self.ref is not None:
            from icefloe.manage_snapshots import table_refs

            named = table_refs(self._metadata).get(self.ref)
            if named is not None and named.snapshot_ref_type == "branch":
                return Schema.from_json(self._metadata.schema_json())
        snap = self._metadata.snapshot_by_id(self.snapshot_id) if self.snapshot_id is not None else None
        schema_id = snap.get("schema-id") if snap else None
        if isinstance(schema_id, int):
            try:
                return Schema.from_json(self._metadata.schema_json(schema_id))
            except Exception:  # an unknown schema id: fall back to the current schema
                pass
        return Schema.from_json(self._metadata.schema_json())

    def _data_fields(self) -> tuple[str, ...]:
        """The selected fields without the metadata columns `_file` / `_pos`."""
        return tuple(n for n in self.selected_fields if n not in METADATA_COLUMNS)

    def _with_metadata_columns(self, schema: Schema) -> Schema:
        meta = [n for n in self.selected_fields if n in METADATA_COLUMNS]
        if not meta:
            return schema
        return Schema(
            *schema.fields,
            *(METADATA_COLUMNS[n] for n in dict.fromkeys(meta)),
            schema_id=schema.schema_id,
            identifier_field_ids=schema.identifier_field_ids,
        )

    def projection(self) -> Schema:
        """The schema of the scan's output: the selected fields (ValidationError naming
        each unknown one), then the metadata columns `_file` (the data file's path) and
        `_pos` (the row's position in it) when selected, as Iceberg's Spark scans offer."""
        data_fields = self._data_fields()
        if "*" in data_fields:
            return self._with_metadata_columns(self._schema)
        if not data_fields:
            return self._with_metadata_columns(self._schema.select(case_sensitive=self.case_sensitive))
        selected = self._schema.select(*data_fields, case_sensitive=self.case_sensitive)
        # Top-level columns in the order asked for (as Spark's select does), nested
        # selections placed where their top-level column is first named.
        order: list[str] = []
        for name in data_fields:
            top = self._schema.find_column_path(name, self.case_sensitive)[0]
            if top not in order:
                order.append(top)
        by_name = {f.name: f for f in selected.fields}
        return self._with_metadata_columns(
            Schema(
                *(by_name[n] for n in order),
                schema_id=selected.schema_id,
                identifier_field_ids=selected.identifier_field_ids,
            )
        )

    def read_schema(self) -> Schema:
        """The projection plus the columns the row filter reads."""
        data_fields = self._data_fields()
        if "*" in data_fields:
            return self._with_metadata_columns(self._schema)
        names = set(data_fields) | self._bound_filter.referenced_columns()
        return self._with_metadata_columns(
            self._schema.select(*sorted(names), case_sensitive=self.case_sensitive)
        )

    @cached_property
    def _plan(self) -> PlannedFiles:
        if not self._incremental:
            on_server = self.table.catalog._plan_scan_on_server(self)
            if on_server is not None:
                # Planned by the catalog's server (Java sends no scan report for these).
                return PlannedFiles(on_server)
        plan = _native.plan_scan(
            self._metadata,
            # A ref by name: planning binds a branch's filter to the table's schema too.
            snapshot_id=None if self._incremental or self.ref is not None else self.snapshot_id,
            ref_name=None if self._incremental else self.ref,
            from_snapshot_id=self.from_snapshot_id,
            to_snapshot_id=self.to_snapshot_id,
            incremental=self._incremental,
            row_filter_json=None
            if isinstance(self._bound_filter, AlwaysTrue)
            else self._bound_filter.to_json(),
            case_sensitive=self.case_sensitive,
            include_column_stats=self.include_column_stats,
            cache=manifest_cache(self.table),
        )
        planned = PlannedFiles(plan)
        if self.table.catalog._metrics_reporting():
            self.table.catalog._report_metrics(self.table, self._scan_report(planned))
        return planned

    def _scan_report(self, planned: PlannedFiles) -> dict[str, Any]:
        """This scan's `scan-report` (see `icefloe._metrics_reports`)."""
        from icefloe._metrics_reports import scan_report

        snapshot = self.snapshot()
        bound = self._bound_filter
        filter_json: Any = True if isinstance(bound, AlwaysTrue) else json.loads(bound.to_json())
        projection = self.projection()
        return scan_report(
            ".".join((self.table.catalog.name, *self.table.identifier)),
            -1 if snapshot is None else snapshot.snapshot_id,
            filter_json,
            projection.schema_id,
            [(f.field_id, f.name) for f in projection.fields],
            planned.metrics,
        )

    def plan_files(self) -> PlannedFiles:
        """The file scan tasks (one per live data file that may match), planned in Rust
        once per scan object; a sequence whose items are materialised when touched."""
        return self._plan

    def plan_tasks(
        self,
        target_size: int | None = None,
        open_file_cost: int | None = None,
        lookback: int | None = None,
        parallelism: int | None = None,
    ) -> list[CombinedScanTask]:
        """The planned files split (split offsets) and bin-packed into combined tasks by the
        table's `read.split.target-size`, `read.split.open-file-cost` and
        `read.split.planning-lookback` (or the arguments).

        `parallelism` is the number of slots the tasks will run on: without an explicit
        `target_size`, a scan that would make fewer splits than that gets smaller splits
        (down to 16 MB), as Iceberg's Spark scans do; the table property
        `read.split.adaptive-size.enabled=false` turns this off."""
        combined = self._plan._plan.combined(target_size, open_file_cost, lookback, parallelism)
        return [CombinedScanTask(b) for b in combined.to_json_list()]

    @property
    def metrics(self) -> dict[str, int]:
        """Scan metrics of the plan: manifests scanned/skipped/read/from cache, data files
        matched/skipped, delete files indexed/attached, planning_time_ns."""
        return self._plan.metrics

    # ---- reading ----
    def _name_mapping(self) -> str | None:
        """The table's name mapping JSON, for data files without Parquet field ids."""
        return self.table.properties.get("schema.name-mapping.default")

    def _reader(self) -> tuple[Schema, pa.Schema, pa.Schema]:
        read_schema = self.read_schema()
        target = self.projection().as_arrow()
        return read_schema, read_schema.as_arrow(), target

    def _finish(self, data: pa.Table, target: pa.Schema) -> pa.Table:
        # Rows are already filtered: every planned task carries its residual, which the
        # Rust reader applies (with row-group pruning); only the projection is left.
        return _project(data, target)

    def to_arrow(self) -> pa.Table:
        read_schema, _read_arrow, target = self._reader()
        if isinstance(self._bound_filter, AlwaysFalse) or self.limit == 0:
            return target.empty_table()
        tasks = self.plan_files()
        if not tasks:
            return target.empty_table()
        read_json = read_schema.to_json()
        mapping = self._name_mapping()

        def read(task: FileScanTask) -> pa.Table:
            reader = _native.read_task(task.to_json(), read_json, name_mapping=mapping)
            return self._finish(reader.read_all(), target)

        parts: list[pa.Table] = []
        rows = 0
        with ThreadPoolExecutor(max_workers=min(_READ_THREADS, len(tasks))) as pool:
            futures = [pool.submit(read, t) for t in tasks]
            try:
                for fut in futures:
                    part = fut.result()
                    parts.append(part)
                    rows += part.num_rows
                    if self.limit is not None and rows >= self.limit:
                        break
            finally:
                for fut in futures:
                    fut.cancel()
        out = _concat(parts, target)
        if self.limit is not None and out.num_rows > self.limit:
            out = out.slice(0, self.limit)
        return out

    def to_batches(self) -> pa.RecordBatchReader:
        """The scan as a stream of record batches, one task after another."""
        read_schema, _read_arrow, target = self._reader()
        if isinstance(self._bound_filter, AlwaysFalse) or self.limit == 0:
            return pa.RecordBatchReader.from_batches(target, iter(()))
        tasks = self.plan_files()
        read_json = read_schema.to_json()
        mapping = self._name_mapping()

        def batches() -> Iterator[pa.RecordBatch]:
            remaining = self.limit
            for task in tasks:
                for batch in _native.read_task(task.to_json(), read_json, name_mapping=mapping):
                    part = self._finish(pa.Table.from_batches([batch]), target)
                    if remaining is not None:
                        part = part.slice(0, remaining)
                        remaining -= part.num_rows
                    yield from part.to_batches()
                    if remaining is not None and remaining <= 0:
                        return

        return pa.RecordBatchReader.from_batches(target, batches())

    def to_pandas(self, **kwargs: Any) -> pd.DataFrame:
        return self.to_arrow().to_pandas(**kwargs)

    # ---- PyIceberg's other outputs, and the Arrow PyCapsule stream ----
    def to_arrow_batch_reader(self) -> pa.RecordBatchReader:
        """PyIceberg's name for `to_batches()`: the scan as a stream of record batches, read
        one task after another (less memory than `to_arrow()`)."""
        return self.to_batches()

    def to_polars(self) -> pl.DataFrame:
        """The scan as a polars DataFrame (needs `polars`), as PyIceberg's `to_polars()`."""
        import polars as pl

        result = pl.from_arrow(self.to_arrow())
        if isinstance(result, pl.Series):
            result = result.to_frame()
        return result

    def to_duckdb(self, table_name: str, connection: DuckDBPyConnection | None = None) -> DuckDBPyConnection:
        """The scan's rows registered as `table_name` in a DuckDB connection (a new in-memory
        one unless `connection` is given), as PyIceberg's `to_duckdb()`; needs `duckdb`."""
        import duckdb

        con = connection or duckdb.connect(database=":memory:")
        con.register(table_name, self.to_arrow())
        return con

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        """The Arrow PyCapsule stream interface: polars (`pl.DataFrame(scan)`), DuckDB and
        pyarrow (`pa.table(scan)`, `pa.RecordBatchReader.from_stream(scan)`) take a scan
        directly and stream its batches (`to_batches()`)."""
        return self.to_batches().__arrow_c_stream__(requested_schema)

    def count(self) -> int:
        """Rows the scan returns: from file metadata when there is no filter and no planned
        file has deletes, else by reading with an empty projection (only the columns the
        filter and the equality deletes need are decoded, in Rust)."""
        if isinstance(self._bound_filter, AlwaysFalse):
            return 0
        plan = self.plan_files()
        if isinstance(self._bound_filter, AlwaysTrue) and not plan.metrics.get("result_delete_files"):
            total = plan.record_count()
        else:
            total = self._update(selected_fields=(), limit=None).to_arrow().num_rows
        return total if self.limit is None else min(total, self.limit)

    def __repr__(self) -> str:
        return (
            f"DataScan(table={'.'.join(self.table.identifier)!r}, row_filter={self.row_filter!r}, "
            f"selected_fields={self.selected_fields!r}, snapshot_id={self.snapshot_id}, limit={self.limit}"
            + (
                f", from_snapshot_id={self.from_snapshot_id}, to_snapshot_id={self.to_snapshot_id})"
                if self._incremental
                else ")"
            )
        )


def _concat(parts: list[pa.Table], target: pa.Schema) -> pa.Table:
    """The parts as one table. Without columns (an empty projection) the rows are still
    counted: pyarrow's concat_tables drops the row count of column-less tables."""
    if not parts:
        return target.empty_table()
    if len(target) == 0:
        return pa.Table.from_batches([b for p in parts for b in p.to_batches()], schema=target)
    return pa.concat_tables(parts)


def _project(data: pa.Table, target: pa.Schema) -> pa.Table:
    """`data` cut down to `target`'s columns (structs pruned to the target's children)."""
    if data.schema.equals(target, check_metadata=False):
        return data
    if len(target) == 0:
        return data.select([])  # keeps the row count, unlike a table built from no arrays
    columns = []
    for f in target:
        col = data.column(f.name)
        if not col.type.equals(f.type):
            col = pa.chunked_array([_prune_array(c, f.type) for c in col.chunks], type=f.type)
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=target)


def _prune_array(arr: pa.Array, target: pa.DataType) -> pa.Array:
    if arr.type.equals(target):
        return arr
    if pa.types.is_struct(target) and isinstance(arr, pa.StructArray):
        children = [_prune_array(arr.field(tf.name), tf.type) for tf in target]
        return pa.StructArray.from_arrays(
            children, fields=list(target), mask=arr.is_null() if arr.null_count else None
        )
    return arr.cast(target)
