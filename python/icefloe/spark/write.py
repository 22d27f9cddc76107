"""icefloe.spark.append: executors write Parquet (Rust) inside mapInArrow, the driver commits.

Written files come back as one descriptor (JSON) per file; if anything fails, every file
carrying the write's unique id is deleted, including those of task attempts the driver
never heard of.

`write_on_executors`, `executor_error` and `chain_batches` are the steps every icefloe.spark
write shares (row-level operations, MERGE, streaming, maintenance); they are not part of the
documented API (`__all__`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native
from icefloe._io import IoConfig
from icefloe._task_ids import task_attempt_id
from icefloe.exceptions import ValidationError
from icefloe.spark._names import (
    nested_spelling,
    positional,
    quoted,
    renamed,
    respelled,
    session_case_sensitive,
    table_arrow_schema,
    table_spelling,
)
from icefloe.spark._wap import write_target
from icefloe.spark._worker import prepare_worker
from icefloe.write import pending as _pending_write
from icefloe.write.options import write_kwargs

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.expressions import BooleanExpression
    from icefloe.table import Table

__all__ = ["append", "overwrite"]

_DESCRIPTOR_SCHEMA = "descriptor string"


def append(
    df: DataFrame,
    table: Table,
    snapshot_properties: dict[str, str] | None = None,
    write_options: Mapping[str, Any] | None = None,
    branch: str | None = None,
    distribution_mode: str | None = None,
) -> None:
    """Appends a DataFrame's rows to the table as one new `append` snapshot (a merge
    append, like Iceberg Java's `writeTo().append()`).

    Executors write Parquet files (Rust) and return one descriptor each; the driver
    commits them. If anything fails, every file this write produced is deleted,
    including files of Spark task attempts the driver never heard of (found by the
    write's unique id in their names); after a successful commit, files of attempts that
    did not make it into the commit (failed or speculative) are deleted the same way.
    `write_options` (checked before any task runs): `mode` "fanout" (default) or
    "clustered" (input sorted by partition, e.g. after `sortWithinPartitions`),
    `max_open_files`, `sort` (sort each file by the table's sort order; default: when the
    table has one, as Java orders a sorted table's rows).
    `distribution_mode` ("none", "hash", "range"; default the session conf
    `spark.sql.iceberg.distribution-mode`, else the table property `write.distribution-mode`,
    else Java's default: "range" for a sorted table, "hash" for a partitioned one, else
    "none"): "hash" shuffles rows by partition first so each partition is written by one
    task, as Iceberg Java's writes do (see `icefloe.spark._distribution`).
    """
    from icefloe.spark._distribution import distribute, resolve_mode

    table, snapshot_properties = write_target(df.sparkSession, table, branch, snapshot_properties)
    options = write_kwargs(write_options)
    clustered = options.get("mode") == "clustered"
    df = distribute(df, table, resolve_mode(df.sparkSession, table, distribution_mode), clustered)
    write_id = _pending_write.new_write_id()
    descriptors = write_on_executors(df, table, write_id, options)
    _pending_write.commit_append(table, descriptors, snapshot_properties, write_id=write_id)


def overwrite(
    df: DataFrame,
    table: Table,
    overwrite_filter: BooleanExpression | str | None = None,
    snapshot_properties: dict[str, str] | None = None,
    validate_added_files_match_filter: bool = False,
    branch: str | None = None,
    distribution_mode: str | None = None,
) -> None:
    """Replaces rows with the DataFrame's, as one snapshot.

    With `overwrite_filter`: the rows matching it are removed (files where every row matches
    dropped, files where some do rewritten without them, in Spark tasks) and the DataFrame's
    rows added (`df.writeTo(t).overwrite(expr)`). Without a filter: dynamic partition
    overwrite, replacing exactly the partitions the DataFrame's rows fall in
    (`df.writeTo(t).overwritePartitions()`). New data is written on the executors. Conflicts
    with concurrent commits raise CommitConflictError (for a filter, only concurrent files
    that may hold matching rows conflict). With
    `validate_added_files_match_filter` (off by default, as Java's Spark `overwrite(expr)`
    leaves `validateAddedFilesMatchOverwriteFilter` off), every new file must be proven by
    partition or column stats to match the filter, else ValidationError and nothing is
    committed. `branch` (every `icefloe.spark` write takes it): write to that branch instead
    of `main` (see `Table.append`). `distribution_mode`: as for `append`.
    """
    from icefloe.spark._distribution import distribute, resolve_mode
    from icefloe.spark._row_delta import filter_rewriter

    table, snapshot_properties = write_target(df.sparkSession, table, branch, snapshot_properties)
    df = distribute(df, table, resolve_mode(df.sparkSession, table, distribution_mode))
    write_id = _pending_write.new_write_id()
    start = table.metadata.current_snapshot_id
    descriptors = write_on_executors(df, table, write_id)
    _pending_write.commit_overwrite(
        table,
        descriptors,
        overwrite_filter,
        write_id,
        start,
        snapshot_properties,
        validate_added_files_match_filter=validate_added_files_match_filter,
        rewrite=filter_rewriter(df.sparkSession),
    )


def write_on_executors(
    df: DataFrame, table: Table, write_id: str, options: Mapping[str, Any] | None = None
) -> list[str]:
    """Writes the DataFrame's rows as data files on the executors; the descriptors of the
    files of the successful task attempts. On failure, every file carrying `write_id` is
    deleted and the error (an icefloe class when an executor raised one) propagates."""
    from pyspark.sql.pandas.types import to_arrow_schema

    # Spark resolves names ignoring case unless the session says otherwise (as Java's writes).
    case_sensitive = session_case_sensitive(df.sparkSession)
    spelled = (
        None if case_sensitive else table_spelling(list(df.columns), [f.name for f in table.schema().fields])
    )
    if spelled is not None:
        df = df.toDF(*spelled)
    df = _store_assigned(df, table)
    try:
        arrow_schema = to_arrow_schema(df.schema)
    except TypeError as e:  # a Spark type Arrow cannot carry
        raise ValidationError(f"DataFrame schema cannot be written to Iceberg: {e}") from e
    # Nested struct fields are matched ignoring case too (top-level ones were renamed above).
    nested = None if case_sensitive else nested_spelling(arrow_schema, table_arrow_schema(table))
    if nested is not None:
        arrow_schema = nested
    # Fail fast, before any task runs, when the DataFrame cannot fit the table.
    _native.check_arrow_schema(table.metadata, arrow_schema)

    metadata_json = table.metadata.to_json()
    write_opts = dict(options or {})
    df, names = positional(df)

    io_config = IoConfig.current()  # storage settings, for the executors

    def write_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        task_id = task_attempt_id()
        it = iter(batches)
        first = next(it, None)
        if first is None:
            return
        first = respelled(renamed(first, names), nested)
        rest = (respelled(renamed(b, names), nested) for b in it)
        reader = pa.RecordBatchReader.from_batches(first.schema, chain_batches(first, rest))
        md = native.TableMetadata.from_json(metadata_json)
        descriptors = native.write_data_files(md, reader, write_id, task_id, **write_opts)
        yield pa.RecordBatch.from_pydict({"descriptor": pa.array(descriptors, pa.string())})

    with _pending_write.abort_on_failure(table, write_id):
        try:
            rows = df.mapInArrow(write_task, _DESCRIPTOR_SCHEMA).collect()
        except Exception as e:
            raise executor_error(e) from e
    return [r["descriptor"] for r in rows]


def _store_assigned(df: DataFrame, table: Table) -> DataFrame:
    """Spark's ANSI store assignment for the numeric widenings Java's writes accept and an
    Iceberg promotion does not cover: a Spark decimal, integer or float column written to a
    `double` column, a byte or short to an `int` or `long` one, is cast by Spark first (as
    `writeTo().append()` does); other mismatches stay errors of the schema check."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    to_double = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.FloatType, T.DecimalType)
    widen: dict[str, tuple[type, ...]] = {
        "double": to_double,
        "long": (T.ByteType, T.ShortType, T.IntegerType),
        "int": (T.ByteType, T.ShortType),
    }
    spark_name = {"double": "double", "long": "bigint", "int": "int"}
    columns = {f.name: f.field_type.to_json() for f in table.schema().fields}
    casts = {}
    for field in df.schema.fields:
        target = columns.get(field.name)  # not a table column: the schema check names it
        if isinstance(target, str) and isinstance(field.dataType, widen.get(target, ())):
            casts[field.name] = spark_name[target]
    if not casts:
        return df
    return df.select(
        [F.col(quoted(n)).cast(casts[n]).alias(n) if n in casts else F.col(quoted(n)) for n in df.columns]
    )


_EXECUTOR_ERROR = re.compile(r"icefloe\.exceptions\.(\w+): (.*)")


def executor_error(e: Exception) -> Exception:
    """The icefloe exception an executor raised, re-raised as its own class on the driver.

    Spark wraps a Python worker's exception in a PythonException carrying its traceback
    text; callers should be able to catch ValidationError etc. whichever side raised it.
    """
    import icefloe.exceptions as exc

    m = _EXECUTOR_ERROR.search(str(e))
    if m is None:
        return e
    cls = getattr(exc, m.group(1), None)
    if not (isinstance(cls, type) and issubclass(cls, exc.IcefloeError)):
        return e
    return cls(f"{m.group(2).strip()} (raised in a Spark task)")


def chain_batches(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest
