"""The MERGE most change-data pipelines run — `ON target.k = source.k WHEN MATCHED THEN
UPDATE SET * WHEN NOT MATCHED THEN INSERT *` with unique source keys — without joining rows.

Every source row then becomes exactly one new row per target row it matches (an update), or
one new row when it matches none (an insert): the new rows are the source itself, plus one
more copy of a source row for each further target row holding its key. What is left to find
is which target rows match, and the semi-joined read of the target's key columns finds them
(the executors' Rust reader keeps only rows whose keys the source holds): their keys, counted
on the driver, give the metrics and the extra copies; their (`_file`, `_pos`) the rows to
remove. No target row beyond its key columns becomes a Spark row, and nothing is broadcast
or joined but the (normally empty) extra copies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe.spark._names import quoted
from icefloe.spark._session import collect_arrow, default_parallelism
from icefloe.spark.read import SemiJoinKeys, read_rows
from icefloe.write.merge import Clause

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.table import Table

_COPIES = "__icefloe_copies"


def is_keyed_upsert(
    clauses: list[Clause],
    on_keys: list[tuple[str, str]],
    semi_keys: list[tuple[str, str]],
    source_keys_unique: bool,
    source_columns: list[str],
    table_columns: list[str],
) -> bool:
    """Whether a merge is this shape: an unconditional update_all and an unconditional
    insert_all (in either order), `on` is the equi-key pairs `on_keys` (and target-only
    conjuncts), all of them semi-join keys (`semi_keys`), no target column twice, the
    source's non-null keys unique, and every table column in the source."""
    shapes = sorted((c.kind, c.action, bool(c.condition), c.assignments is None) for c in clauses)
    if shapes != [("matched", "update", False, True), ("not_matched", "insert", False, True)]:
        return False
    if not source_keys_unique or not on_keys:
        return False
    targets = [t.lower() for t, _s in semi_keys]
    if len(set(targets)) != len(targets):
        return False
    pairs = {(t.lower(), s.lower()) for t, s in on_keys}
    if pairs != {(t.lower(), s.lower()) for t, s in semi_keys}:
        return False
    have = {c.lower() for c in source_columns}
    return all(c.lower() in have for c in table_columns)


def matched_keys(spark: Any, table: Table, row_filter: Any, semi: SemiJoinKeys) -> pa.Table:
    """The key columns of every target row the source's keys match (one row per target row),
    collected on the driver."""
    keys = list(semi.key_columns)
    df = read_rows(spark, table, row_filter=row_filter, selected_fields=tuple(keys), semi_join=semi)
    batches = collect_arrow(df)
    if batches:
        return pa.Table.from_batches(batches).select(keys)
    with pa.ipc.open_stream(semi.keys_ipc) as r:
        return r.schema.empty_table().select(keys)


def matched_positions(spark: Any, table: Table, row_filter: Any, semi: SemiJoinKeys) -> DataFrame:
    """(`_file`, `_pos`) of every target row the source's keys match."""
    fields = (*semi.key_columns, "_file", "_pos")
    return read_rows(spark, table, row_filter=row_filter, selected_fields=fields, semi_join=semi).select(
        "_file", "_pos"
    )


def extra_copies(keys: pa.Table) -> tuple[int, pa.Table]:
    """(distinct keys, the keys held by more than one target row with how many more copies
    of their source row to write, column `__icefloe_copies`)."""
    names = keys.column_names
    counts = keys.group_by(names).aggregate([([], "count_all")])
    import pyarrow.compute as pc

    more = counts.filter(pc.greater(counts.column("count_all"), 1))
    copies = pc.subtract(more.column("count_all"), 1)
    return counts.num_rows, more.select(names).append_column(_COPIES, copies)


def new_rows(
    src: DataFrame,
    columns: list[str],
    types: dict[str, Any],
    semi_keys: list[tuple[str, str]],
    copies: pa.Table,
) -> DataFrame:
    """The source's rows as the table's columns (cast to their types), plus the extra
    copies of the rows whose key more than one target row holds."""
    from pyspark.sql import functions as F

    from icefloe.spark._arrow import spark_schema
    from icefloe.spark._store_assign import stored

    # Stored as MERGE stores them (values that do not fit fail the write), not plainly cast.
    found = {f.name.lower(): f.dataType for f in src.schema.fields}
    values = [stored(c, F.col(quoted(c)), found[c.lower()], types[c]).alias(c) for c in columns]
    out = src.select(values)
    if copies.num_rows:
        spark = src.sparkSession
        aliases = [f"__icefloe_key{i}" for i in range(len(semi_keys))]
        renamed = copies.rename_columns([*aliases, _COPIES])
        extra = spark.createDataFrame(renamed.to_pylist(), spark_schema(renamed.schema))
        cond = None
        for (_t, s), a in zip(semi_keys, aliases):
            c = F.col(quoted(s)) == F.col(a)
            cond = c if cond is None else cond & c
        more = (
            src.join(F.broadcast(extra), cond, "inner")
            .withColumn("__icefloe_copy", F.explode(F.array_repeat(F.lit(1), F.col(_COPIES).cast("int"))))
            .select(values)
        )
        out = out.unionByName(more)
    slots = default_parallelism(src.sparkSession)
    return out.coalesce(slots)
