"""`table.maintenance.compute_table_stats()`: distinct-value sketches of a snapshot's columns
in a Puffin statistics file, registered in the table metadata (`set-statistics`), as Iceberg
Java's `compute_table_stats` procedure (`ComputeTableStatsSparkAction`) does:

- the snapshot: the current one, or `snapshot_id`; a table without a snapshot has nothing to
  compute (None, as Java's empty result);
- the columns: the given names (nested fields by dotted name), else every top-level primitive
  column of the snapshot's schema; a missing or non-primitive column is a ValidationError;
- one `apache-datasketches-theta-v1` blob per column (Apache DataSketches' theta sketch of the
  values' Iceberg single-value bytes, `rust/puffin/theta.rs`) with its estimate as the `ndv`
  property, written to `metadata/<snapshot id>-<uuid>.stats`;
- the file replaces the snapshot's earlier statistics file in the metadata (the earlier file
  stays until orphan removal, as in Java); expiring the snapshot removes both.

The rows are read with the table's own scan at that snapshot (deletes applied): in process,
or with `spark=` on Spark's executors, as Java's procedure reads them on Spark. There each
task reads its share of the scan's file tasks with the Rust reader and sketches them in Rust
(the rows never become Spark rows), and the driver merges the tasks' sketches of each column
with a theta union (Java's `ThetaSketchAgg` merges its partitions' sketches so too). In exact
mode (below 4,096 distinct values) the merged sketch is byte for byte the in-process one.
On any failure nothing is registered and the file is deleted.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _io, _native, _progress
from icefloe.exceptions import ValidationError
from icefloe.statistics import THETA_V1, StatisticsFile
from icefloe.types import NestedField, StructType

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.scan import DataScan
    from icefloe.schema import Schema
    from icefloe.table import Table


def compute_table_stats(
    table: Table,
    columns: Sequence[str] | None = None,
    snapshot_id: int | None = None,
    spark: SparkSession | None = None,
) -> StatisticsFile | None:
    """See the module doc."""
    if snapshot_id is None:
        snapshot = table.current_snapshot()
        if snapshot is None:
            return None
    else:
        snapshot = table.snapshot_by_id(snapshot_id)
        if snapshot is None:
            raise ValidationError(f"Snapshot not found: {snapshot_id}")
    schema = table.schemas()[snapshot.schema_id] if snapshot.schema_id is not None else table.schema()
    names = _columns(schema, columns)
    fields = [schema.find_field(name) for name in names]
    columns_in = [(_key(i), str(f.field_type)) for i, f in enumerate(fields)]
    scan = table.scan(snapshot_id=snapshot.snapshot_id, selected_fields=tuple(names))
    if spark is None:
        sketches = _native.NdvSketches(columns_in)
        for batch in scan.to_arrow_batch_reader():
            sketches.update(_flattened(batch, names))
        sketched = [(bytes(data), estimate) for data, estimate in sketches.finish()]
    else:
        sketched = _sketch_on_spark(spark, table, scan, names, columns_in)
    sequence_number = snapshot.sequence_number or 0
    blobs = [
        (f.field_id, snapshot.snapshot_id, sequence_number, data, str(int(estimate)))
        for f, (data, estimate) in zip(fields, sketched)
    ]
    path = _io.join(table.metadata.metadata_root, f"{snapshot.snapshot_id}-{uuid.uuid4()}.stats")
    size, footer = _native.write_statistics_file(path, blobs)
    stats = {
        "snapshot-id": snapshot.snapshot_id,
        "statistics-path": path,
        "file-size-in-bytes": size,
        "file-footer-size-in-bytes": footer,
        "blob-metadata": [
            {
                "type": THETA_V1,
                "snapshot-id": sid,
                "sequence-number": seq,
                "fields": [fid],
                "properties": {"ndv": ndv},
            }
            for fid, sid, seq, _data, ndv in blobs
        ],
    }
    update = json.dumps(
        [{"action": "set-statistics", "snapshot-id": snapshot.snapshot_id, "statistics": stats}]
    )
    try:
        table._commit(lambda md: (md.apply_updates(update), []))
    except BaseException:
        _native.delete_files([path])
        raise
    return StatisticsFile.from_json(stats)


def _sketch_on_spark(
    spark: SparkSession, table: Table, scan: DataScan, names: list[str], columns: list[tuple[str, str]]
) -> list[tuple[bytes, float]]:
    """Each column's sketch of the scan's rows, sketched by Spark tasks (each over its share of
    the file tasks, packed by bytes: one Spark task per slot) and merged here by a union."""
    from icefloe._io import IoConfig
    from icefloe.spark._session import packed_rows_frame, spark_job
    from icefloe.spark._worker import prepare_worker
    from icefloe.spark.write import executor_error

    tasks = list(scan.plan_files())
    parts: list[list[bytes]] = [[] for _ in columns]
    if tasks:
        read_json = scan.read_schema().to_json()
        mapping = table.properties.get("schema.name-mapping.default")
        io_config = IoConfig.current()

        def sketch_task(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            from icefloe import _native as native

            prepare_worker(io_config)
            sketches = native.NdvSketches(columns)
            for batch in batches:
                for task in batch.column(1).to_pylist():
                    for part in native.read_task(task, read_json, name_mapping=mapping):
                        sketches.update(_flattened(part, names))
            done = sketches.finish()
            yield pa.RecordBatch.from_pydict(
                {
                    "column": pa.array(range(len(done)), pa.int32()),
                    "sketch": pa.array([bytes(data) for data, _ in done], pa.binary()),
                }
            )

        rows = [(i, task.to_json()) for i, task in enumerate(tasks)]
        df = packed_rows_frame(spark, rows, [max(1, task.length) for task in tasks], "row int, task string")
        label = f"icefloe compute_table_stats {_progress.table_label(table)}: {len(tasks)} file tasks"
        try:
            with spark_job(spark, label):
                out = df.mapInArrow(sketch_task, "column int, sketch binary").collect()
        except Exception as e:
            raise executor_error(e) from e
        for row in out:
            parts[int(row["column"])].append(bytes(row["sketch"]))
    return [(bytes(data), estimate) for data, estimate in map(_native.union_theta_sketches, parts)]


def sketch_estimates(table: Table, snapshot_id: int | None = None) -> dict[str, float]:
    """The distinct-value estimates of the statistics file of a snapshot (default current),
    read from its theta sketches (Java's files too), by column name; {} when it has none."""
    sid = snapshot_id if snapshot_id is not None else table.metadata.current_snapshot_id
    found = [f for f in table.statistics() if f.snapshot_id == sid]
    if not found:
        return {}
    stats = found[-1]
    names = {f.field_id: name for name, f in _all_fields(table.schema())}
    for schema in table.schemas().values():
        for name, f in _all_fields(schema):
            names.setdefault(f.field_id, name)
    out: dict[str, float] = {}
    for fields, _sketch, estimate in _native.statistics_file_sketches(
        stats.statistics_path, stats.file_size_in_bytes
    ):
        if len(fields) == 1:
            out[names.get(fields[0], str(fields[0]))] = estimate
    return out


def _columns(schema: Schema, columns: Sequence[str] | None) -> list[str]:
    if columns is None:
        names = [f.name for f in schema.fields if f.field_type.is_primitive]
    else:
        if isinstance(columns, str) or not columns:
            raise ValidationError("Columns cannot be null/empty: pass a list of column names")
        names = list(dict.fromkeys(str(c) for c in columns))
    if not names:
        raise ValidationError("No columns found to compute stats")
    for name in names:
        try:
            f = schema.find_field(name)
        except (ValueError, KeyError, ValidationError):
            raise ValidationError(f"Can't find column {name} in {schema}") from None
        if not f.field_type.is_primitive:
            raise ValidationError(
                f"Can't compute stats on non-primitive type column: {name} ({f.field_type})"
            )
    return names


def _key(i: int) -> str:
    return f"c{i}"


def _flattened(batch: pa.RecordBatch, names: list[str]) -> pa.RecordBatch:
    """The sketched columns of a scan batch as top-level columns `c0, c1, ...` (a nested field
    taken out of its structs; a null struct makes its fields null)."""
    arrays = []
    for name in names:
        parts = name.split(".")
        column = batch.column(batch.schema.get_field_index(parts[0]))
        for part in parts[1:]:
            column = pc.struct_field(column, part)
        arrays.append(column)
    return pa.RecordBatch.from_arrays(arrays, names=[_key(i) for i in range(len(names))])


def _all_fields(schema: Schema) -> list[tuple[str, NestedField]]:
    """Every field of `schema` with its dotted name, structs' fields included."""
    out: list[tuple[str, NestedField]] = []

    def walk(prefix: str, fields: Sequence[NestedField]) -> None:
        for f in fields:
            name = f"{prefix}{f.name}"
            out.append((name, f))
            if isinstance(f.field_type, StructType):
                walk(f"{name}.", f.field_type.fields)

    walk("", schema.fields)
    return out
