"""icefloe.spark.delete / update / upsert: row-level changes with the reading and writing on
the executors.

The driver plans the files the condition may match (Rust planner, partition and metrics
pruning); each Spark task reads its files' matching row positions through the scan reader
and writes the position-delete files (Rust, inside mapInArrow); the driver commits one row
delta with Java's validations (`icefloe.write.row_delta`). Copy-on-write tables
(`write.delete.mode`, the default) are deleted as `Table.delete` does, the files the
condition partly matches read and rewritten in Spark tasks (`_row_delta.filter_rewriter`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native
from icefloe._io import IoConfig
from icefloe._task_ids import task_attempt_id
from icefloe.spark._distribution import distribute, row_level_mode
from icefloe.spark._names import quoted
from icefloe.spark._row_delta import (
    OUT_SCHEMA,
    collect_delete_files,
    delete_files_batch,
    filter_rewriter,
)
from icefloe.spark._session import default_parallelism
from icefloe.spark._wap import write_target
from icefloe.spark._worker import prepare_worker
from icefloe.spark.write import executor_error
from icefloe.write import pending as _pending_write
from icefloe.write.row_delta import isolation_level, write_mode

if TYPE_CHECKING:
    from icefloe.expressions import BooleanExpression
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

__all__ = ["delete", "update", "upsert"]


def delete(
    spark: Any,
    table: Table,
    condition: BooleanExpression | str,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
    branch: str | None = None,
) -> Snapshot | None:
    """Deletes the rows of `table` matching `condition` (a filter string or an
    `icefloe.expressions` expression) as one snapshot, Spark SQL's `DELETE FROM`. With
    `write.delete.mode=merge-on-read` the position-delete files are written by Spark tasks;
    returns the table's current snapshot afterwards."""
    from icefloe.write import row_level as _row_level

    table, snapshot_properties = write_target(spark, table, branch, snapshot_properties)
    if condition is None:  # refused here by the binding's message, in either mode
        _row_level.bind_condition(table, condition, case_sensitive)

    def run(md: _native.TableMetadata, tasks: list[str], write_id: str) -> tuple[list[str], list[str]]:
        return _run_on_executors(spark, md, tasks, write_id)

    return _row_level.delete(
        table,
        condition,
        snapshot_properties,
        case_sensitive,
        rewrite=filter_rewriter(spark),
        run_tasks=run,
    )


def _run_on_executors(
    spark: Any, md: _native.TableMetadata, tasks: list[str], write_id: str
) -> tuple[list[str], list[str]]:
    if not tasks:
        return [], []
    from icefloe.write.row_level import chunk_tasks

    chunks = chunk_tasks(tasks, default_parallelism(spark))
    n = len(chunks)
    metadata_json = md.to_json()
    # Partition i of spark.range(n) runs chunk i: the chunks ride in the closure (they are
    # the delete's planned files, small), so no shuffle stage is needed.
    df = spark.range(0, n, 1, n)

    io_config = IoConfig.current()  # storage settings, for the executors

    def delete_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        task_id = task_attempt_id()
        planned: list[str] = []
        for b in batches:
            for i in b.column(0).to_pylist():
                planned.extend(chunks[i])
        if not planned:
            return
        meta = native.TableMetadata.from_json(metadata_json)
        files, _rows, replaced = native.delete_rows(meta, planned, write_id, task_id)
        yield delete_files_batch(files, replaced)

    files, replaced, _referenced = collect_delete_files(df.mapInArrow(delete_task, OUT_SCHEMA))
    return files, replaced


def update(
    spark: Any,
    table: Table,
    condition: BooleanExpression | str,
    set: dict[str, str],
    snapshot_properties: dict[str, str] | None = None,
    branch: str | None = None,
    alias: str | None = None,
) -> Snapshot | None:
    """Spark SQL's `UPDATE t SET ... WHERE condition`: `set` maps column names to Spark SQL
    expressions over the row (`{"amount": "amount * 2", "status": "'closed'"}`). A key may
    also be a field of a struct at any depth, `{"s.a": "5", "s.inner.x": "s.a + 1"}` (Spark's
    `SET s.a = 5`; a part holding a dot in backticks, "s.`x.y`"; a key that is a top-level
    column's name is that column): the struct's other fields keep their values, and a NULL
    struct becomes a struct of NULLs holding the assigned field, as Java's UPDATE stores it.
    Names match ignoring case unless `spark.sql.caseSensitive`; every value reads the row as
    it was. The matching rows are read and rewritten by Spark tasks; merge-on-read
    (`write.update.mode`) writes position deletes for the old rows, copy-on-write rewrites
    their files (in Spark tasks). ValidationError, before anything is written, for an unknown
    column or field, a field inside an array or map element, one field assigned twice or
    together with its struct (as Java's UPDATE refuses them), or a value of a type the column
    or field cannot hold.

    `alias` names the target's row in the values (`UPDATE t AS u`), which a value's subquery
    needs to read it: `{"amount": "(SELECT max(o.amount) FROM orders o WHERE o.id = u.id)"}`
    with `alias="u"` (a correlated subquery, run under the rules of the session's Spark line:
    3.5 takes one that aggregates, 4.x also one that returns at most one row a row)."""
    from pyspark.sql import functions as F

    import icefloe.spark
    from icefloe.exceptions import ValidationError
    from icefloe.expressions import as_row_filter
    from icefloe.spark._nested_assign import NestedValues, resolve, table_spark_schema
    from icefloe.spark._row_delta import planned_tasks_by_path, write_position_deletes_on_executors
    from icefloe.spark.write import write_on_executors
    from icefloe.write import lineage as _lineage
    from icefloe.write.row_delta import RowDeltaWrite

    table, snapshot_properties = write_target(spark, table, branch, snapshot_properties)
    if not isinstance(set, dict) or not set:
        raise ValidationError("update needs a non-empty dict of column name to Spark SQL expression")
    columns = [f.name for f in table.schema().fields]
    assigned = resolve(set, table_spark_schema(table), what="update")
    bound = as_row_filter(condition).bind(table.schema())
    md = table.metadata
    start = md.current_snapshot_id
    if start is None:
        return None
    # On v3 an updated row keeps its row id (see icefloe.write.lineage).
    lineage = [_lineage.ROW_ID] if _lineage.tracked(table) else []
    rows = icefloe.spark.read(
        spark, table, row_filter=bound, selected_fields=(*columns, *lineage, "_file", "_pos")
    )
    types = {f.name: f.dataType for f in rows.schema.fields}
    values = NestedValues(assigned, F.expr)
    probe = (rows.alias(alias) if alias else rows).select(
        [F.expr(values.top.get(c, quoted(c))).alias(c) for c in columns]
        + values.probe_columns()
        + [F.col(c) for c in lineage]
    )
    values.check(probe.schema, {c: types[c] for c in columns})
    new_rows = probe.select(
        [values.column(c, types[c]).alias(c) for c in columns] + [F.col(c) for c in lineage]
    )
    if lineage:
        new_rows = new_rows.withColumn(_lineage.LAST_UPDATED, F.lit(None).cast("long"))
    new_rows = distribute(new_rows, table, row_level_mode(spark, table, "update"))
    write_id = _pending_write.new_write_id()
    if write_mode(table, "update") != "merge-on-read":
        with _pending_write.abort_on_failure(table, write_id):
            descriptors = write_on_executors(new_rows, table, write_id)
        return _pending_write.commit_overwrite(
            table,
            descriptors,
            bound,
            write_id,
            start,
            snapshot_properties,
            require_filter=True,
            rewrite=filter_rewriter(spark),
            isolation=isolation_level(table, "update"),
        )
    write = RowDeltaWrite.begin(
        table, "update", start, bound.to_json(), dict(snapshot_properties or {}), write_id=write_id
    )
    try:
        with write.aborting():
            tasks = table.scan(row_filter=bound).plan_files()
            by_path = planned_tasks_by_path(t.to_json() for t in tasks)
            write.referenced_paths = list(by_path)
            rows = rows.persist()
            write.delete_files, write.removed_delete_paths, _ = write_position_deletes_on_executors(
                rows, md, by_path, write_id
            )
            if write.delete_files:
                write.data_files = write_on_executors(new_rows, table, write_id)
    finally:
        rows.unpersist()
    return write.commit()


def upsert(
    df: Any,
    table: Table,
    join_cols: list[str] | None = None,
    delete_column: str | None = None,
    snapshot_properties: dict[str, str] | None = None,
    branch: str | None = None,
) -> Snapshot | None:
    """The CDC path: each row of `df` replaces the table's row with the same `join_cols`
    values (default: the schema's identifier fields) or is inserted; with `delete_column`
    (a boolean column, or a string column where 'D'/'delete'/'-D'/'U-' mark deletions), a
    marked row deletes its key instead. Rows with the same key: the last in the DataFrame's
    order wins. Merge-on-read tables (`write.merge.mode`) get equality deletes on the join
    columns plus the new rows, written by Spark tasks without reading the table (Flink's
    upsert writer); copy-on-write tables run the equivalent MERGE."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from icefloe.exceptions import ValidationError
    from icefloe.spark.write import write_on_executors
    from icefloe.write import row_level as _row_level
    from icefloe.write.row_delta import RowDeltaWrite

    table, snapshot_properties = write_target(df.sparkSession, table, branch, snapshot_properties)
    names = _row_level.join_columns(table, join_cols)
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise ValidationError(f"the upsert's rows lack join column(s) {missing}")
    # An upserted row replaces the whole row of its key, so it gives every column. PyIceberg's
    # upsert takes rows lacking an optional column only while none matches a table row (it
    # fails on the first that does); here they are refused whatever they match.
    lacking = [f.name for f in table.schema().fields if f.name not in df.columns]
    if lacking:
        raise ValidationError(
            f"the upsert's rows lack the table's column(s) {lacking}: an upserted row replaces the "
            "whole row with its key, so every column must be given (a null one as a typed null, "
            "e.g. F.lit(None).cast(...))"
        )
    if delete_column is not None and delete_column not in df.columns:
        raise ValidationError(f"delete_column {delete_column!r} is not a column of the DataFrame")
    order = "__icefloe_order"
    ranked = df.withColumn(order, F.monotonically_increasing_id())
    w = Window.partitionBy(*[F.col(quoted(n)) for n in names]).orderBy(F.col(order).desc())
    last = ranked.withColumn("__icefloe_rank", F.row_number().over(w)).where("__icefloe_rank = 1")
    if delete_column is not None:
        c = F.col(quoted(delete_column))
        is_delete = (
            c
            if dict(df.dtypes)[delete_column] == "boolean"
            else F.upper(c.cast("string")).isin(*_row_level.DELETE_MARKS)
        )
        last = last.withColumn("__icefloe_delete", F.coalesce(is_delete, F.lit(False)))
    else:
        last = last.withColumn("__icefloe_delete", F.lit(False))
    data_columns = [f.name for f in table.schema().fields]
    from icefloe.spark._nested_assign import table_spark_schema
    from icefloe.spark._store_assign import check_assignable, stored

    # As MERGE stores them (and the copy-on-write path below): checked, then cast to the
    # columns' types (a decimal literal into a double column, an int into a long).
    types = {f.name: f.dataType for f in table_spark_schema(table).fields}
    given = {f.name: f.dataType for f in df.schema.fields}
    for name in data_columns:
        check_assignable(name, given[name], types[name])
    inserts = last.where(~F.col("__icefloe_delete")).select(
        [stored(c, F.col(quoted(c)), given[c], types[c]).alias(c) for c in data_columns]
    )

    specs = key_schema = None
    if write_mode(table, "merge") == "merge-on-read":
        ids, key_schema, specs = _row_level.equality_delete_plan(table, names)
        if specs is None:
            _row_level.log_merge_instead(table, names, "runs as a MERGE (position deletes)")
    if specs is None or key_schema is None:  # copy-on-write, or rows no equality delete reaches
        from icefloe.spark.merge import merge

        keys = last.select(*[F.col(quoted(c)) for c in data_columns], "__icefloe_delete")
        on = " AND ".join(f"target.{quoted(n)} <=> source.{quoted(n)}" for n in names)
        b = merge(keys, table, on, snapshot_properties=snapshot_properties)
        b.when_matched_delete("source.__icefloe_delete")
        b.when_matched_update({c: f"source.{quoted(c)}" for c in data_columns})
        inserted = {c: f"source.{quoted(c)}" for c in data_columns}
        b.when_not_matched_insert(inserted, "NOT source.__icefloe_delete")
        b.execute()
        return table.current_snapshot()

    md = table.metadata
    metadata_json = md.to_json()
    write = RowDeltaWrite(
        table,
        _pending_write.new_write_id(),
        md.current_snapshot_id,
        snapshot_properties=dict(snapshot_properties or {}),
    )
    write_id = write.write_id

    io_config = IoConfig.current()  # storage settings, for the executors

    def eq_delete_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        task_id = task_attempt_id()
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        keys = pa.Table.from_batches(parts).rename_columns(key_schema.names).cast(key_schema)
        meta = native.TableMetadata.from_json(metadata_json)
        files = native.write_equality_deletes(meta, ids, keys.to_reader(), write_id, task_id, spec_ids=specs)
        yield pa.RecordBatch.from_pydict({"descriptor": pa.array(files, pa.string())})

    with write.aborting():
        # Positional names: mapInArrow looks its input columns up by name, a dot in one fails.
        keys_df = last.select(*[F.col(quoted(n)) for n in key_schema.names])
        keys_df = keys_df.toDF(*[f"_k{i}" for i in range(len(key_schema.names))])
        try:
            out = keys_df.mapInArrow(eq_delete_task, "descriptor string").collect()
        except Exception as e:
            raise executor_error(e) from e
        write.delete_files = [r["descriptor"] for r in out]
        inserts = distribute(inserts, table, row_level_mode(inserts.sparkSession, table, "merge"))
        write.data_files = write_on_executors(inserts, table, write_id)
    return write.commit()
