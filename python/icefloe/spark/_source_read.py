"""Batch reads of the `icefloe` data source: planning on the driver (Rust), one input
partition per combined task, each read in Rust on an executor and handed to Spark as Arrow.

With `FilteringBatchReader` (only on a Spark that keeps a pushdown's read with its own scan:
`datasource.pushdown_is_scan_scoped`), Spark's filters become the scan's row filter: they
prune manifests and files and the Rust reader applies their residuals. Filters whose Spark
semantics differ from Iceberg's on some values (floating point NaN ordering, timestamps
whose literal depends on the session time zone, string suffix/substring tests) still prune
but are also handed back to Spark, which evaluates them on the rows.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from icefloe import _native
from icefloe import expressions as ex
from icefloe._io import IoConfig
from icefloe.exceptions import IcefloeError, ValidationError
from icefloe.spark._arrow import spark_arrow_schema, to_spark_batch
from icefloe.spark._worker import prepare_worker
from icefloe.spark.read import read_combined_task

if TYPE_CHECKING:
    from icefloe.scan import DataScan
    from icefloe.spark.datasource import SourceOptions
    from icefloe.table import Table


def table_scan(table: Table, opts: SourceOptions, row_filter: Any = None) -> DataScan:
    """The scan the read options name: `snapshot-id`, `as-of-timestamp` (ms), `branch` /
    `tag`, or the incremental `start-snapshot-id` (exclusive) / `end-snapshot-id`; and the
    columns of `selected-fields` (comma-separated; Spark cannot prune the columns of a
    Python data source, so a query reading few columns of a wide table names them here)."""
    fields_opt = opts.options.get("selected-fields")
    fields = ("*",) if not fields_opt else tuple(f.strip() for f in fields_opt.split(",") if f.strip())
    snapshot_id = opts.int_option("snapshot-id")
    as_of = opts.int_option("as-of-timestamp")
    start = opts.int_option("start-snapshot-id")
    end = opts.int_option("end-snapshot-id")
    refs = [opts.options[k] for k in ("branch", "tag") if opts.options.get(k)]
    if len(refs) > 1:
        raise ValidationError("give either option 'branch' or option 'tag', not both")
    chosen = [k for k, v in (("snapshot-id", snapshot_id), ("as-of-timestamp", as_of)) if v is not None]
    if refs:
        chosen.append("branch/tag")
    if len(chosen) > 1:
        raise ValidationError(f"options {', '.join(chosen)} each pick a snapshot: give only one")
    if end is not None and start is None:
        raise ValidationError("option 'end-snapshot-id' needs 'start-snapshot-id'")
    if start is not None:
        if chosen:
            raise ValidationError(f"an incremental read (start-snapshot-id) cannot also name {chosen[0]}")
        return table.scan(
            row_filter=row_filter, selected_fields=fields, from_snapshot_id=start, to_snapshot_id=end
        )
    return table.scan(
        row_filter=row_filter,
        selected_fields=fields,
        snapshot_id=snapshot_id,
        as_of_timestamp=as_of,
        ref=refs[0] if refs else None,
    )


class TaskPartition(InputPartition):
    """One combined scan task (its bytes, as `scan.plan_tasks` makes them) and how to read
    it (Spark pickles the reader before `partitions()` runs, so the partition carries it)."""

    def __init__(self, task: bytes | None, reader: ScanReader) -> None:
        super().__init__(task)
        self.reader = reader


class ScanReader:
    """What an executor needs to read planned tasks: the read schema, the projection and
    the storage settings (small: it travels with every task)."""

    def __init__(self, scan: DataScan, name_mapping: str | None) -> None:
        self.projection = json.loads(scan.projection().to_json())
        self.read_schema_json = scan.read_schema().to_json()
        self.out_names = [f["name"] for f in self.projection["fields"]]
        self.name_mapping = name_mapping
        self.io_config = IoConfig.current()

    def read(self, task: bytes | None) -> Iterator[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(self.io_config)
        target = spark_arrow_schema(self.projection)
        if task is None:
            return
        for b in read_combined_task(native, task, self.read_schema_json, self.name_mapping):
            yield to_spark_batch(b.select(self.out_names), self.projection, target)


class BatchReader(DataSourceReader):
    def __init__(self, opts: SourceOptions, parallelism: int | None = None) -> None:
        self.opts = opts
        self.parallelism = parallelism
        self.row_filter: ex.BooleanExpression = ex.AlwaysTrue()
        self._table: Table | None = None

    def __getstate__(self) -> dict[str, Any]:
        # Spark pickles the reader for the executors: the loaded table (its catalog's
        # connections) stays on the driver.
        return {**self.__dict__, "_table": None}

    def table(self) -> Table:
        """The table, loaded once per reader (filter pushdown and planning share it)."""
        if self._table is None:
            self._table = self.opts.load_table()
        return self._table

    def partitions(self) -> list[InputPartition]:
        table = self.table()
        scan = table_scan(table, self.opts, self.row_filter)
        reader = ScanReader(scan, table.properties.get("schema.name-mapping.default"))
        split = self.opts.int_option("split-size")
        if split is not None and split <= 0:
            raise ValidationError(f"option 'split-size' must be a positive number of bytes, found {split}")
        # Without `split-size`, a small scan gets splits small enough for every slot.
        tasks = scan.plan_tasks(target_size=split, parallelism=self.parallelism)
        if not tasks:
            return [TaskPartition(None, reader)]
        return [TaskPartition(t.to_bytes(), reader) for t in tasks]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TaskPartition):
            raise ValidationError(f"not an icefloe scan partition: {partition!r}")
        yield from partition.reader.read(partition.value)


class FilteringBatchReader(BatchReader):
    """BatchReader with Spark's filters pushed into planning (PySpark >= 4.1). A filter the
    table's schema cannot bind (IS NULL on a struct, a map's or list's IS NOT NULL, a
    literal that does not fit its column) goes back to Spark, which evaluates it."""

    def pushFilters(self, filters: list[Any]) -> Iterable[Any]:
        schema = self.table().schema()
        schema_json = schema.to_json()
        for f in filters:
            converted, exact = spark_filter(f)
            if converted is not None:
                try:  # as planning binds it (Rust): names, column types, literals
                    _native.bind_filter(converted.bind(schema).to_json(), schema_json)
                except (IcefloeError, TypeError, ValueError):
                    converted = None
            if converted is None:
                yield f
                continue
            if exact and _is_uuid(schema, f):
                # Spark compares a uuid column as its string (a literal's case matters);
                # Iceberg compares uuid values: prune here, let Spark decide the rows.
                exact = False
            self.row_filter = (
                converted
                if isinstance(self.row_filter, ex.AlwaysTrue)
                else ex.And(self.row_filter, converted)
            )
            if not exact:
                yield f


def _is_uuid(schema: Any, f: Any) -> bool:
    name = ".".join(getattr(f, "attribute", ()) or ())
    try:
        field = schema.find_field(name)
    except (IcefloeError, KeyError, ValueError):
        return False
    return field is not None and field.field_type.to_json() == "uuid"


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


# Literal types whose comparison means the same in Spark and in Iceberg.
_EXACT_LITERALS = (bool, int, str, bytes, decimal.Decimal, dt.date)


def _exact(value: Any) -> bool:
    if isinstance(value, dt.datetime):  # a datetime is a date too: its zone is the session's
        return False
    if isinstance(value, (list, tuple)):
        return all(_exact(v) for v in value)
    return isinstance(value, _EXACT_LITERALS)


def spark_filter(f: Any) -> tuple[ex.BooleanExpression | None, bool]:
    """A PySpark data source Filter as an icefloe expression, and whether it is exact (the
    reader's residual evaluation gives Spark's answer on every row); (None, False) when it
    cannot be pushed."""
    from pyspark.sql import datasource as ds

    name = ".".join(getattr(f, "attribute", ()) or ())
    simple = {
        ds.EqualTo: ex.EqualTo,
        ds.GreaterThan: ex.GreaterThan,
        ds.GreaterThanOrEqual: ex.GreaterThanOrEqual,
        ds.LessThan: ex.LessThan,
        ds.LessThanOrEqual: ex.LessThanOrEqual,
    }
    try:
        for cls, pred in simple.items():
            if type(f) is cls:
                if f.value is None:
                    return None, False
                if _is_nan(f.value):  # Spark: NaN = NaN, and NaN sorts above every number
                    return (ex.IsNaN(name), True) if cls is ds.EqualTo else (None, False)
                return pred(name, f.value), _exact(f.value)
        if isinstance(f, ds.EqualNullSafe):
            if f.value is None:
                return ex.IsNull(name), True
            if _is_nan(f.value):
                return ex.IsNaN(name), True
            return ex.EqualTo(name, f.value), _exact(f.value)
        if isinstance(f, ds.In):
            values = [v for v in f.value if v is not None]
            if len(values) != len(f.value) or not values:
                return None, False
            numbers = [v for v in values if not _is_nan(v)]
            if len(numbers) == len(values):
                return ex.In(name, values), _exact(values)
            if not numbers:
                return ex.IsNaN(name), True
            return ex.Or(ex.In(name, numbers), ex.IsNaN(name)), _exact(numbers)
        if isinstance(f, ds.IsNull):
            return ex.IsNull(name), True
        if isinstance(f, ds.IsNotNull):
            return ex.NotNull(name), True
        if isinstance(f, ds.StringStartsWith):
            return ex.StartsWith(name, f.value), True
        if isinstance(f, ds.Not):
            inner, exact = spark_filter(f.child)
            # NOT under three-valued logic: only null-free predicates negate exactly.
            if inner is None or not isinstance(f.child, (ds.IsNull, ds.IsNotNull)):
                return None, False
            return ex.Not(inner), exact
    except (TypeError, ValueError, ValidationError):
        return None, False
    return None, False
