"""icefloe.spark.read_changelog: a table's row changes as a Spark DataFrame.

The driver plans the changelog (`icefloe.changelog.plan_changelog`: one unit per changed data
file per snapshot); executors read the units in Rust inside mapInArrow, one Spark partition
per unit; then Spark itself removes carry-over rows and computes updates with window
functions, as the `create_changelog_view` procedure does with its repartition + iterators.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe._io import IoConfig
from icefloe.changelog import (
    CHANGE_COLUMNS,
    CHANGE_ORDINAL,
    CHANGE_TYPE,
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    ChangeUnit,
    plan_changelog,
    read_unit,
)
from icefloe.exceptions import ValidationError
from icefloe.spark._arrow import spark_arrow_schema, to_spark_batch
from icefloe.spark._arrow import spark_schema as arrow_to_spark_schema
from icefloe.spark._names import quoted
from icefloe.spark._session import rows_frame
from icefloe.spark._worker import prepare_worker

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from icefloe.table import Table

__all__ = ["read_changelog"]

# Units travel inside the mapInArrow closure while (their bytes) x (their count) stays under
# this (as `icefloe.spark.read`); larger plans travel as rows (`rows_frame`), one per unit.
INLINE_UNIT_BYTES = 16 << 20
_SEQ = "__icefloe_seq"


def read_changelog(
    spark: SparkSession,
    table: Table,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
    identifier_columns: Sequence[str] | None = None,
    net_changes: bool = False,
    remove_carryovers: bool = True,
) -> DataFrame:
    """The row changes of the snapshots after `from_snapshot_id` (exclusive) up to
    `to_snapshot_id` (inclusive; default current) as a DataFrame: the table's columns plus
    `_change_type`, `_change_ordinal`, `_commit_snapshot_id` (see `Table.changelog`).
    `net_changes=True`: only the net change of each row over the whole range (a row inserted
    and deleted again is gone, as Java's `create_changelog_view(net_changes => true)`); not
    with `identifier_columns` (update images), which Java refuses too.
    `remove_carryovers=False`: every change the snapshots record, a row a copy-on-write commit
    deleted and wrote again unchanged included (Java's `<table>.changes`)."""
    if net_changes and identifier_columns:
        raise ValidationError("Not support net changes with update images")
    plan = plan_changelog(table, from_snapshot_id, to_snapshot_id, identifier_columns)
    iceberg_schema = json.loads(plan.schema.to_json())
    data_target = spark_arrow_schema(iceberg_schema)
    target = pa.schema(list(data_target) + list(CHANGE_COLUMNS))
    spark_schema = arrow_to_spark_schema(target)
    if not plan.units:
        return spark.createDataFrame([], spark_schema)

    names = plan.data_names
    read_schema_json = plan.read_schema_json
    name_mapping = plan.name_mapping
    io_config = IoConfig.current()
    n_data = len(names)

    def read_one(native: Any, data: bytes) -> Iterable[pa.RecordBatch]:
        unit = ChangeUnit.from_bytes(data)
        for b in read_unit(native, unit, read_schema_json, names, name_mapping):
            data_part = pa.RecordBatch.from_arrays(b.columns[:n_data], names=names)
            converted = to_spark_batch(data_part, iceberg_schema, data_target)
            yield pa.RecordBatch.from_arrays(
                list(converted.columns) + list(b.columns[n_data:]), schema=target
            )

    def reader(units: list[bytes] | None) -> Any:
        def read_units(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
            from icefloe import _native as native

            prepare_worker(io_config)
            for batch in batches:
                for key in batch.column(0).to_pylist():
                    yield from read_one(native, key if units is None else units[key])

        return read_units

    encoded = [u.to_bytes() for u in plan.units]
    n = len(encoded)
    if sum(len(u) for u in encoded) * n <= INLINE_UNIT_BYTES:
        raw = spark.range(0, n, 1, n).mapInArrow(reader(encoded), spark_schema)
    else:
        units = rows_frame(spark, [(bytearray(u),) for u in encoded], "unit binary", n)
        raw = units.mapInArrow(reader(None), spark_schema)
    if net_changes:
        return _net_changes(raw, names)
    if not remove_carryovers:
        return raw if not plan.identifier_columns else _compute_updates(raw, plan.identifier_columns)
    out = _remove_carryovers(raw, names)
    if plan.identifier_columns:
        out = _compute_updates(out, plan.identifier_columns)
    return out


def _cols(df: DataFrame, names: Sequence[str]) -> list[Column]:
    return [df[quoted(n)] for n in names]


def _counts(df: DataFrame, keys: list[Column]) -> tuple[Column, Column, Column]:
    """Per row: the DELETE and INSERT counts of its key, and its rank among the rows of its key
    and change type."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    by_key = Window.partitionBy(*keys)
    by_key_type = Window.partitionBy(*keys, df[CHANGE_TYPE]).orderBy(df[_SEQ])
    deletes = F.sum((df[CHANGE_TYPE] == DELETE).cast("long")).over(by_key)
    inserts = F.sum((df[CHANGE_TYPE] == INSERT).cast("long")).over(by_key)
    rank = F.row_number().over(by_key_type) - 1
    return deletes, inserts, rank


def _orderable(t: Any) -> bool:
    """Whether Spark can partition (group, sort) by a column of type `t`: not a map or a
    variant, nor a struct or array holding one."""
    from pyspark.sql import types as T

    if isinstance(t, T.MapType) or type(t).__name__ == "VariantType":
        return False
    if isinstance(t, T.StructType):
        return all(_orderable(f.dataType) for f in t.fields)
    if isinstance(t, T.ArrayType):
        return _orderable(t.elementType)
    return True


def _carryover_keys(df: DataFrame, names: Sequence[str]) -> list[Column]:
    """The data columns as window keys: a column Spark cannot partition by (a map or a
    variant, or a struct or array holding one) by its JSON text instead, in a one-element
    array so a null differs from every value (`to_json` keeps a map's entries in their
    stored order; the DELETE and INSERT copies of a row that a copy-on-write rewrite carries
    over hold equal values in equal order)."""
    from pyspark.sql import functions as F

    keys: list[Column] = []
    for name in names:
        col = df[quoted(name)]
        keys.append(col if _orderable(df.schema[name].dataType) else F.to_json(F.array(col)))
    return keys


def _remove_carryovers(df: DataFrame, names: list[str]) -> DataFrame:
    """Identical DELETE and INSERT rows of one ordinal cancel out in pairs."""
    from pyspark.sql import functions as F

    df = df.withColumn(_SEQ, F.monotonically_increasing_id())
    deletes, inserts, rank = _counts(df, [*_carryover_keys(df, names), df[CHANGE_ORDINAL]])
    df = df.withColumn("__d", deletes).withColumn("__i", inserts).withColumn("__r", rank)
    keep = F.when(F.col(CHANGE_TYPE) == DELETE, F.col("__r") >= F.col("__i")).otherwise(
        F.col("__r") >= F.col("__d")
    )
    return df.where(keep).drop("__d", "__i", "__r", _SEQ)


def _net_changes(df: DataFrame, names: list[str]) -> DataFrame:
    """Java's `RemoveNetCarryoverIterator`, in closed form. The rows of one value (all data
    columns equal) in the iterator's order (change ordinal, then DELETE before INSERT) are +1
    for an INSERT and -1 for a DELETE; the iterator drops each run whose running sum returns to
    zero and starts a new run after it. What is left is the run after the last zero of the
    running sum: its first row, repeated |total| times (with that row's ordinal and snapshot
    id, as Java keeps them)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    columns = list(df.columns)
    df = df.withColumn(_SEQ, F.monotonically_increasing_id())
    keys = _carryover_keys(df, names)
    whole = Window.partitionBy(*keys)
    ordered = whole.orderBy(df[CHANGE_ORDINAL], df[CHANGE_TYPE], df[_SEQ])
    running = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    sign = F.when(df[CHANGE_TYPE] == INSERT, F.lit(1)).otherwise(F.lit(-1))
    df = (
        df.withColumn("__x", sign)
        .withColumn("__p", F.sum("__x").over(running))
        .withColumn("__n", F.row_number().over(ordered))
    )
    df = df.withColumn("__t", F.sum("__x").over(whole)).withColumn(
        "__z", F.coalesce(F.max(F.when(F.col("__p") == 0, F.col("__n"))).over(whole), F.lit(0))
    )
    kept = df.where((F.col("__n") == F.col("__z") + 1) & (F.col("__t") != 0))
    repeated = kept.withColumn("__k", F.explode(F.array_repeat(F.lit(0), F.abs(F.col("__t")).cast("int"))))
    return repeated.select(*[quoted(c) for c in columns])


def _compute_updates(df: DataFrame, identifier_columns: list[str]) -> DataFrame:
    """A DELETE and an INSERT of one identifier in one ordinal become UPDATE_BEFORE /
    UPDATE_AFTER; two DELETEs of one identifier in one ordinal fail the query, as in Java."""
    from pyspark.sql import functions as F

    df = df.withColumn(_SEQ, F.monotonically_increasing_id())
    deletes, inserts, rank = _counts(df, [*_cols(df, identifier_columns), df[CHANGE_ORDINAL]])
    df = df.withColumn("__d", deletes).withColumn("__i", inserts).withColumn("__r", rank)
    d, i, r, t = F.col("__d"), F.col("__i"), F.col("__r"), F.col(CHANGE_TYPE)
    message = (
        "Cannot compute updates because there are multiple rows with the same identifier "
        f"fields([{','.join(identifier_columns)}]). Please make sure the rows are unique."
    )
    paired = (d == 1) & (i >= 1)
    new_type = (
        F.when(d > 1, F.raise_error(F.lit(message)).cast("string"))
        .when(paired & (t == DELETE), F.lit(UPDATE_BEFORE))
        .when(paired & (t == INSERT) & (r == 0), F.lit(UPDATE_AFTER))
        .otherwise(t)
    )
    columns = [c for c in df.columns if c not in ("__d", "__i", "__r", _SEQ)]
    return df.withColumn(CHANGE_TYPE, new_type).select(*[quoted(c) for c in columns])
