"""Write distribution for Spark writes (`write.distribution-mode`), as Iceberg Java's Spark
writes resolve and apply it.

Without a distribution every task writes a file for every partition its rows fall in: on a
cluster of many tasks, many small files. `hash` shuffles rows by their partition tuple first,
so the rows of a partition meet in one task; `range` range-partitions by the partition tuple
and then the table's sort order.

The mode comes from, in order: the write's own `distribution_mode`, the session conf
`spark.sql.iceberg.distribution-mode`, the table property `write.distribution-mode`; then
Java's default: `range` for a sorted table, `hash` for a partitioned one, else `none`. As in
Java, `hash` on an unpartitioned table and `range` on an unpartitioned, unsorted table mean
`none`. The new rows of `update`, `merge` and `upsert` follow `row_level_mode`
(`write.update.distribution-mode`, `write.merge.distribution-mode`, default `hash`).
(`range` distributes only: sorting each task's rows is the `sort` write option, on by
default for a sorted table.)
Measured by `make bench-write` (README): the shuffle costs the 5,000,000-row write next to
nothing and halves its files.

The partition tuple is computed with Spark's own functions, equal to Iceberg's transforms
for grouping: identity, year/month/day/hour (in UTC for timestamps with time zone, on the
wall clock without), truncate of integers, strings and binary, and bucket of int, long,
date and timestamp columns (Iceberg's bucket hash is Murmur3 x86_32 with seed 0 over the
value as a long; Spark's `hash` is the same function with seed 42 chained over its
arguments, so a first argument whose seed-42 hash is 0 turns it into Iceberg's). A
partition field Spark cannot compute that way (bucket of a string or decimal, truncate of a
decimal) is left out of the shuffle key: its partitions are split over tasks as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icefloe.exceptions import ValidationError
from icefloe.sorting import NullOrder, SortDirection, SortOrder
from icefloe.spark._names import quoted_path
from icefloe.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from icefloe.write.row_delta import write_mode

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

    from icefloe.table import Table

MODES = ("none", "hash", "range")
SESSION_CONF = "spark.sql.iceberg.distribution-mode"
TABLE_PROPERTY = "write.distribution-mode"

# An int whose Murmur3 x86_32 hash with Spark's seed 42 is 0: `hash(SEED_ZERO, v)` is then
# Murmur3 of `v` with seed 0, Iceberg's bucket hash (checked in tests against the Rust
# transform).
SEED_ZERO = -1693959553
_MICROS_PER_DAY = 86_400_000_000
_MICROS_PER_HOUR = 3_600_000_000


def resolve_mode(spark: Any, table: Table, mode: str | None, source: str = "distribution_mode") -> str:
    """The distribution mode of a write (see the module's documentation); `source` names
    where an explicit `mode` came from, for the error."""
    if mode is None:
        conf = spark.conf.get(SESSION_CONF, None)
        mode, source = (conf, SESSION_CONF) if conf else (None, "")
    if mode is None:
        mode, source = table.properties.get(TABLE_PROPERTY), TABLE_PROPERTY
    partitioned = not table.spec().is_unpartitioned()
    sorted_table = bool(table.sort_order().fields)
    if mode is None:
        return "range" if sorted_table else "hash" if partitioned else "none"
    value = str(mode).strip().lower()
    if value not in MODES:
        raise ValidationError(f"{source} must be one of {list(MODES)}, found {mode!r}")
    if value == "hash" and not partitioned:
        return "none"
    if value == "range" and not partitioned and not sorted_table:
        return "none"
    return value


ROW_LEVEL_COMMANDS = ("delete", "update", "merge")


def row_level_mode(spark: Any, table: Table, command: str) -> str:
    """The distribution of the new data rows of a row-level `command` (`update`, `merge`; an
    upsert is a merge), as Java's `SparkWriteConf` resolves it for both write modes: the
    session conf, then `write.<command>.distribution-mode`, then `hash` (for a copy-on-write
    merge of an unpartitioned table without the property, the table's write mode). Hash on
    an unpartitioned table and range on an unpartitioned, unsorted one mean `none`."""
    if command not in ROW_LEVEL_COMMANDS:
        raise ValueError(f"unknown row-level command {command!r}")
    prop = f"write.{command}.distribution-mode"
    conf = spark.conf.get(SESSION_CONF, None)
    mode, source = (conf, SESSION_CONF) if conf else (table.properties.get(prop), prop)
    if mode is None:
        partitioned = not table.spec().is_unpartitioned()
        copy_on_write_merge = command == "merge" and write_mode(table, "merge") == "copy-on-write"
        if copy_on_write_merge and not partitioned:
            return resolve_mode(spark, table, None)
        mode, source = "hash", prop
    return resolve_mode(spark, table, mode, source)


def distribute(df: DataFrame, table: Table, mode: str, clustered: bool = False) -> DataFrame:
    """`df` distributed for writing into `table` by `mode` (a resolved mode). For the
    clustered writer (`clustered`), each task's rows are then sorted by the same keys, as
    Java orders them for its clustered writer: a shuffle would undo the input's clustering."""
    if mode == "none":
        return df
    types = {f.name: f.dataType for f in df.schema.fields}
    keys = partition_keys(table, types)
    if mode == "range":
        keys += sort_keys(table, types)
    if not keys:
        return df
    out = df.repartitionByRange(*keys) if mode == "range" else df.repartition(*keys)
    return out.sortWithinPartitions(*keys) if clustered else out


def partition_keys(table: Table, types: dict[str, Any]) -> list[Column]:
    """Spark expressions grouping rows as the table's current spec partitions them."""
    schema = table.schema()
    keys = []
    for field in table.spec().fields:
        path = _path(schema, field.source_id)
        key = None if path is None else transform_key(field.transform, path, types)
        if key is not None:
            keys.append(key)
    return keys


def sort_keys(
    table: Table, types: dict[str, Any], prefix: bool = False, order: SortOrder | None = None
) -> list[Column]:
    """The table's sort order (or `order`) as Spark sort expressions. A term with a transform
    sorts by `transform_key`, which orders as Iceberg's transform does (time units and
    truncation are monotone; a bucket sorts by its number); a term Spark cannot compute is left out,
    or with `prefix` ends the keys (ranges by later terms alone would not follow the order)."""
    schema = table.schema()
    out = []
    for f in (table.sort_order() if order is None else order).fields:
        path = _path(schema, f.source_id)
        col = None if path is None else transform_key(f.transform, path, types)
        if col is None:
            if prefix:
                break
            continue
        asc = f.direction == SortDirection.ASC
        nulls_first = f.null_order == NullOrder.NULLS_FIRST
        if asc:
            out.append(col.asc_nulls_first() if nulls_first else col.asc_nulls_last())
        else:
            out.append(col.desc_nulls_first() if nulls_first else col.desc_nulls_last())
    return out


def transform_key(transform: Transform, path: tuple[str, ...], types: dict[str, Any]) -> Column | None:
    """A Spark expression equal to `transform(field)` for grouping, or None; `path` names
    the field from its top-level column down."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if path[0] not in types:
        return None
    q = quoted_path(path)
    col = F.col(q)
    kind = _leaf_type(path, types)
    if isinstance(transform, IdentityTransform):
        return col
    if isinstance(transform, (YearTransform, MonthTransform, DayTransform, HourTransform)):
        return _time_key(str(transform), col, kind)
    if isinstance(transform, BucketTransform):
        n = transform.num_buckets
        if isinstance(kind, (T.IntegerType, T.LongType, T.ShortType, T.ByteType)):
            value = col.cast("bigint")
        elif isinstance(kind, T.DateType):
            value = F.unix_date(col).cast("bigint")
        elif isinstance(kind, T.TimestampType):
            value = F.unix_micros(col)
        else:
            return None
        return F.pmod(F.hash(F.lit(SEED_ZERO), value).bitwiseAND(0x7FFFFFFF), F.lit(n))
    if isinstance(transform, TruncateTransform):
        w = transform.width
        if isinstance(kind, (T.IntegerType, T.LongType, T.ShortType, T.ByteType)):
            # floor(v / w), Iceberg's classes (v - ((v % w) + w) % w), without the
            # subtraction that overflows (an error in ANSI mode) near the type's minimum.
            return F.expr(f"({q} div {w}) - CASE WHEN {q} % {w} < 0 THEN 1 ELSE 0 END")
        if isinstance(kind, (T.StringType, T.BinaryType)):
            return F.substring(col, 1, w)
    return None


def _time_key(transform: str, col: Column, kind: Any) -> Column | None:
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(kind, T.TimestampType):  # with time zone: Iceberg's transforms are in UTC
        micros = F.unix_micros(col)
        if transform == "hour":
            return F.floor(micros / F.lit(_MICROS_PER_HOUR))
        day = F.floor(micros / F.lit(_MICROS_PER_DAY))
        if transform == "day":
            return day
        date = F.date_from_unix_date(day.cast("int"))
    elif isinstance(kind, T.TimestampNTZType):  # wall clock
        if transform == "hour":
            return F.date_trunc("hour", col)
        date = F.to_date(col)
        if transform == "day":
            return date
    elif isinstance(kind, T.DateType):
        if transform == "hour":
            return None
        date = col
        if transform == "day":
            return date
    else:
        return None
    if transform == "month":
        return F.year(date) * F.lit(12) + F.month(date)
    return F.year(date)


def _path(schema: Any, field_id: int) -> tuple[str, ...] | None:
    """The names from the top-level column down to field `field_id`; None when it is gone."""
    try:
        return tuple(schema.find_column_path(field_id))
    except ValidationError:
        return None


def _leaf_type(path: tuple[str, ...], types: dict[str, Any]) -> Any:
    """The Spark type of a (possibly nested) column."""
    from pyspark.sql import types as T

    kind = types[path[0]]
    for part in path[1:]:
        if not isinstance(kind, T.StructType) or part not in kind.names:
            return None
        kind = kind[part].dataType
    return kind
