"""icefloe.spark.merge: Spark's `MERGE INTO` as a builder (delta-rs' `TableMerger` shape),
with the join in Spark and the files written in Rust on the executors.

The target is read with its `_file` / `_pos` metadata columns and joined with the source on
the `on` condition (aliases `target` and `source` by default). Each joined row takes the
first clause, in the order given, whose kind (matched / not matched / not matched by source)
and condition hold — Spark's rule. Then:

- merge-on-read (`write.merge.mode`): the (`_file`, `_pos`) of updated and deleted target
  rows become position-delete files, updated and inserted rows new data files, one row delta;
- copy-on-write (the default): the files holding updated or deleted rows are rewritten
  (their other rows copied) together with the new rows, one overwrite.

A target row matched by two source rows is an error naming it, before anything is written
(Spark's MERGE cardinality rule). A commit that lost the race is validated, as Java's MERGE,
against the conjuncts of `on` over the target alone (`target.region = 'eu'`): only concurrent
files that may hold such rows conflict (see `icefloe.write.merge_condition`). Set expressions and
conditions are Spark SQL over the aliases (`{"amount": "source.amount + target.amount"}`);
a value whose type cannot be stored in its column is an error naming the column. An update
clause may assign a field of a struct at any depth (`{"s.a": "source.x"}`, Spark's `UPDATE
SET t.s.a = src.x`), as `icefloe.spark.update` does (`_nested_assign`); an insert's keys are
columns only, as in Spark's MERGE INTO.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icefloe import _native
from icefloe.exceptions import IcefloeError, ValidationError
from icefloe.spark import _keyed_upsert, _merge_coercion
from icefloe.spark._distribution import distribute, row_level_mode
from icefloe.spark._names import quoted
from icefloe.spark._nested_assign import NestedValues, resolve, table_spark_schema
from icefloe.spark._row_delta import (
    planned_tasks_by_path,
    rewrite_files_on_executors,
    write_position_deletes_on_executors,
)
from icefloe.spark._session import collect_arrow, default_parallelism
from icefloe.spark._store_assign import check_assignable
from icefloe.spark._wap import write_target
from icefloe.spark.read import SemiJoinKeys, read_rows
from icefloe.spark.write import write_on_executors
from icefloe.table_transaction import evolves_schema, merge_with_schema_evolution
from icefloe.write import lineage as _lineage
from icefloe.write import pending as _pending_write
from icefloe.write.merge import Clause, MergeClauses, MergeMetrics, commit_rewrite, commit_row_delta
from icefloe.write.merge_condition import conflict_filter_json, equi_key_pairs, keys_only_pairs, target_filter
from icefloe.write.row_delta import RowDeltaWrite, write_mode

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.table import Table

__all__ = ["MergeBuilder", "MergeMetrics", "merge"]

_T = "__icefloe_target_row"
_S = "__icefloe_source_row"
_ACTION = "__icefloe_action"
_SID = "__icefloe_source_id"


@dataclass
class MergeBuilder(MergeClauses):
    source: DataFrame
    table: Table
    on: str
    source_alias: str = "source"
    target_alias: str = "target"
    snapshot_properties: dict[str, str] = field(default_factory=dict)
    # Broadcast the source and stream the target (no shuffle of the table); off for a
    # source too large to broadcast (then both sides are shuffled for a sort-merge join).
    broadcast_source: bool = True
    # A source of at most this many rows has its join keys collected on the driver and sent
    # to the target scan, which then hands Spark only the target rows whose keys the source
    # holds (and skips files whose key bounds miss the source's); 0 turns this off.
    semi_join_max_keys: int = 5_000_000
    # Spark SQL over the target alias that a target row must meet before the join, evaluated
    # as a Spark filter on the target rows (IN / EXISTS / scalar subqueries allowed, which a
    # join condition cannot hold): `icefloe.spark.sql`'s DELETE and UPDATE with subqueries.
    target_condition: str | None = None
    _clauses: list[Clause] = field(default_factory=list)
    _target_struct: Any = None
    _source_struct: Any = None
    _persisted: list[Any] = field(default_factory=list)
    # The conflict-detection filter of the commit (unbound JSON; see icefloe.write.merge_condition).
    _conflict_json: str = ""
    # No two source rows share their join keys (known when the keys were collected): then
    # no target row can match two source rows, and the cardinality check has nothing to find.
    _source_keys_unique: bool = False
    # (target column, source column) of `on` when it is join keys and target-only conjuncts.
    _anti_join_keys: list[tuple[str, str]] = field(default_factory=list)
    # Reads the keys of the target rows that can match (set when the source keys were
    # collected and `on` is keys): what the unmatched source rows are anti-joined with.
    _target_keys: Callable[[], DataFrame] | None = None
    # The source's row count and the (target, source) column pairs of the semi-join keys
    # (set when the source keys were collected).
    _source_rows: int = 0
    _semi_key_pairs: list[tuple[str, str]] = field(default_factory=list)
    # The lineage columns the target is read with (`_row_id` on v3 tables).
    _lineage_read: tuple[str, ...] = ()

    def _check_value(self, column: str, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValidationError(
                f"MERGE value for column {column!r} must be a Spark SQL expression string, found {value!r}"
            )
        return value

    def _add(self, kind: str, action: str, condition: str | None, values: dict[str, Any] | None) -> Any:
        # Update keys may be nested fields ("s.a"), insert keys columns only, each resolved as
        # Spark's MERGE INTO resolves them (`_nested_assign`); checked here, resolved again
        # by `_new_rows` under the session's case rules then.
        if values is None or action == "delete" or not isinstance(values, dict) or not values:
            return super()._add(kind, action, condition, values)
        resolve(values, table_spark_schema(self.table), what=f"MERGE {action}", nested=action == "update")
        values = {str(k): self._check_value(str(k), v) for k, v in values.items()}
        self._clauses.append(Clause(kind, action, condition, values))
        return self

    # ---- execution ----
    def execute(self) -> MergeMetrics:
        """Runs the merge and commits one snapshot (none when nothing changes)."""
        if not self._clauses:
            raise ValidationError("MERGE needs at least one when_... clause")
        self._persisted = []
        try:
            return self._in_transaction(self._execute)
        finally:
            for df in self._persisted:
                df.unpersist()

    def _execute(self) -> MergeMetrics:
        from pyspark.sql import functions as F

        table = self.table
        spark = self.source.sparkSession
        md = table.metadata
        start = md.current_snapshot_id
        columns = [f.name for f in table.schema().fields]
        ta = self.target_alias
        mode = write_mode(table, "merge")
        kinds = {c.kind for c in self._clauses}
        self._lineage_read = (_lineage.ROW_ID,) if _lineage.tracked(table) else ()
        # As Java's MERGE: concurrent files that may match the target-only conjuncts of `on`
        # conflict (the whole table without them, or with a `not matched by source` clause).
        time_zone = self._session_time_zone()
        self._conflict_json = conflict_filter_json(
            self.on, table.schema(), ta, self.source_alias, kinds, time_zone=time_zone
        )
        src = self.source.withColumn(_S, F.lit(True))
        self._source_keys_unique = False
        self._semi_key_pairs = []
        self._anti_join_keys = keys_only_pairs(self.on, table.schema(), ta, self.source_alias, time_zone)
        if self.broadcast_source:
            if not self._anti_join_keys:
                # Stable ids for the anti-join of unmatched source rows (persisted).
                src = src.withColumn(_SID, F.monotonically_increasing_id())
            if not (self._anti_join_keys and _cached(self.source)):
                # Read several times (keys, join, anti-join): computed once, unless the
                # caller cached it already.
                src = src.persist()
                self._persisted.append(src)
        row_filter, semi_join = None, None
        if kinds <= {"matched", "not_matched"}:
            # Only target rows that can match a source row matter: those meeting the
            # target-only conjuncts of `on`, with join keys the source holds (collected from
            # the persisted source: a broadcast source only).
            row_filter, semi_join = self._target_pruning(src, collect_keys=self.broadcast_source)
            # (On v3 an updated row keeps its target row's id: that needs the join.)
            keyed = not _lineage.tracked(table) and not self.target_condition
            if semi_join is not None and keyed and self._is_keyed_upsert():
                return self._execute_keyed_upsert(md, start, mode, row_filter, semi_join, src)
        tgt = read_rows(
            spark,
            table,
            row_filter=row_filter,
            selected_fields=(*columns, *self._lineage_read, "_file", "_pos"),
            semi_join=semi_join,
        )
        if self.target_condition:
            tgt = tgt.alias(ta).where(F.expr(self.target_condition))
        self._target_keys = None
        if semi_join is not None and self._anti_join_keys and not self.target_condition:
            key_fields = tuple(t for t, _s in self._anti_join_keys)

            def read_keys() -> DataFrame:
                return read_rows(
                    spark, table, row_filter=row_filter, selected_fields=key_fields, semi_join=semi_join
                )

            self._target_keys = read_keys
        if self.broadcast_source:
            joined = self._join_broadcasting_source(tgt, src, kinds)
        else:
            joined = self._join_shuffling_both(tgt, src, kinds)
        matched = f"({_T} IS NOT NULL AND {_S} IS NOT NULL)"
        kind_sql = {
            "matched": matched,
            "not_matched": f"({_T} IS NULL AND {_S} IS NOT NULL)",
            "not_matched_by_source": f"({_T} IS NOT NULL AND {_S} IS NULL)",
        }
        whens = " ".join(
            f"WHEN {kind_sql[c.kind]} AND ({c.condition or 'TRUE'}) THEN {i}"
            for i, c in enumerate(self._clauses)
        )
        joined = joined.withColumn(_ACTION, F.expr(f"CASE {whens} END"))
        joined = joined.persist()
        self._persisted.append(joined)
        if "matched" in kinds and not self._source_keys_unique:
            self._check_cardinality(joined, matched, columns)
        acted = joined.where(f"{_ACTION} IS NOT NULL")
        counts = {int(r[_ACTION]): int(r["count"]) for r in acted.groupBy(_ACTION).count().collect()}
        metrics = MergeMetrics()
        for i, c in enumerate(self._clauses):
            n = counts.get(i, 0)
            if c.action == "insert":
                metrics.rows_inserted += n
            elif c.action == "update":
                metrics.rows_updated += n
            else:
                metrics.rows_deleted += n
        if not counts:
            metrics.snapshot_id = start
            return metrics
        removing = [i for i, c in enumerate(self._clauses) if c.action in ("update", "delete")]
        writing = [i for i, c in enumerate(self._clauses) if c.action in ("update", "insert")]
        types = {f.name: f.dataType for f in tgt.schema.fields}
        new_rows = self._new_rows(acted, writing, columns, types)
        removed = acted.where(F.col(_ACTION).isin(removing)).select(F.col(f"{ta}._file"), F.col(f"{ta}._pos"))
        if mode == "merge-on-read":
            self._commit_merge_on_read(md, start, new_rows, removed, metrics)
        else:
            self._commit_copy_on_write(md, start, new_rows, removed, columns, metrics)
        return metrics

    def _is_keyed_upsert(self) -> bool:
        if self._coerces_nested():
            return False  # its new rows are the source's alone: no target field to keep
        return _keyed_upsert.is_keyed_upsert(
            self._clauses,
            self._anti_join_keys,
            self._semi_key_pairs,
            self._source_keys_unique,
            list(self.source.columns),
            [f.name for f in self.table.schema().fields],
        )

    def _coerces_nested(self) -> bool:
        """Whether `spark.sql.mergeNestedTypeCoercion.enabled` fills a source struct's missing
        fields in some column (see `_merge_coercion`)."""
        if not _merge_coercion.enabled(self.source.sparkSession):
            return False
        table = {f.name.lower(): f.dataType for f in table_spark_schema(self.table).fields}
        return any(
            _merge_coercion.coerced("s", "t", table[f.name.lower()], f.dataType) is not None
            for f in self.source.schema.fields
            if f.name.lower() in table
        )

    def _execute_keyed_upsert(
        self,
        md: _native.TableMetadata,
        start: int | None,
        mode: str,
        row_filter: Any,
        semi: SemiJoinKeys,
        src: DataFrame,
    ) -> MergeMetrics:
        """update_all + insert_all on unique source keys without a join (see
        `icefloe.spark._keyed_upsert`): the new rows are the source's (plus a copy per further
        target row holding a key), the removed rows the target rows the keys match."""

        table = self.table
        spark = self.source.sparkSession
        columns = [f.name for f in table.schema().fields]
        keys = _keyed_upsert.matched_keys(spark, table, row_filter, semi)
        distinct, copies = _keyed_upsert.extra_copies(keys)
        metrics = MergeMetrics(rows_updated=keys.num_rows, rows_inserted=self._source_rows - distinct)
        if not (metrics.rows_updated or metrics.rows_inserted):
            metrics.snapshot_id = start
            return metrics
        spark_types = {f.name: f.dataType for f in table_spark_schema(table).fields}
        by_lower = {c.lower(): c for c in self.source.columns}
        source_types = {f.name: f.dataType for f in self.source.schema.fields}
        for c in columns:
            check_assignable(c, source_types[by_lower[c.lower()]], spark_types[c])
        rows = _keyed_upsert.new_rows(src, columns, spark_types, self._semi_key_pairs, copies)
        removed = _keyed_upsert.matched_positions(spark, table, row_filter, semi)
        if mode == "merge-on-read":
            self._commit_merge_on_read(md, start, rows, removed, metrics)
        else:
            self._commit_copy_on_write(md, start, rows, removed, columns, metrics)
        return metrics

    def _session_time_zone(self) -> str:
        """Spark reads `on`'s zone-less timestamp strings in the session's time zone: so do
        the target-only conjuncts icefloe takes from it (see `icefloe.write.merge_condition`)."""
        return str(self.source.sparkSession.conf.get("spark.sql.session.timeZone"))

    def _target_pruning(self, src: DataFrame, collect_keys: bool = True) -> tuple[Any, SemiJoinKeys | None]:
        """What the target read can skip: (row filter, source keys) for a merge whose clauses
        act on matched target rows only. The row filter is the target-only conjuncts of `on`
        AND, per integer or string join key, the source keys' [min, max] (planning prunes the
        files whose bounds miss it); the keys (at most `semi_join_max_keys` rows of source)
        go to the executors, whose reader keeps only rows with a key among them. Join keys
        are the `target.c = source.c` conjuncts of `on` over top-level primitive columns
        whose source type is the target's (or a narrower integer); floats are not keys."""
        from pyspark.sql import functions as F

        from icefloe.expressions import And, GreaterThanOrEqual, LessThanOrEqual

        schema = self.table.schema()
        row_filter = target_filter(
            self.on, schema, self.target_alias, self.source_alias, self._session_time_zone()
        )
        keys = self._join_keys(src) if collect_keys else []
        if not keys or self.semi_join_max_keys <= 0:
            return row_filter, None
        self._source_rows = src.count()
        if self._source_rows > self.semi_join_max_keys:
            return row_filter, None
        self._semi_key_pairs = [(t, s) for t, s, _ty in keys]
        import uuid

        import pyarrow as pa

        from icefloe.spark._arrow import ipc_bytes

        cols = [F.col(quoted(s)).cast(spark_type).alias(t) for t, s, spark_type in keys]
        not_null = " AND ".join(f"{quoted(t)} IS NOT NULL" for t, _s, _ty in keys)
        picked = src.select(cols).where(not_null)
        batches = collect_arrow(picked)
        arrow_schema = pa.schema([(t, _arrow_type(ty)) for t, _s, ty in keys])
        # (Spark's batches may mark a column not null; the set does not care.)
        table = pa.Table.from_batches(batches).cast(arrow_schema) if batches else arrow_schema.empty_table()
        semi = SemiJoinKeys(tuple(t for t, _s, _ty in keys), ipc_bytes(table), uuid.uuid4().hex)
        names = [t for t, _s, _ty in keys]
        self._source_keys_unique = table.group_by(names).aggregate([]).num_rows == table.num_rows
        if table.num_rows:
            import pyarrow.compute as pc
            from pyspark.sql import types as T

            for t, _s, ty in keys:
                if isinstance(ty, (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.StringType)):
                    lo_hi = pc.min_max(table.column(t))
                    bounds = And(
                        GreaterThanOrEqual(t, lo_hi["min"].as_py()), LessThanOrEqual(t, lo_hi["max"].as_py())
                    )
                    row_filter = bounds if row_filter is None else And(row_filter, bounds)
        return row_filter, semi

    def _join_keys(self, src: DataFrame) -> list[tuple[str, str, Any]]:
        """(target column, source column, the target's Spark type) of each join key of
        `on` that the semi-join can take (see `_target_pruning`); empty when none."""
        from pyspark.sql import types as T

        schema = self.table.schema()
        source_types = {f.name.lower(): (f.name, f.dataType) for f in src.schema.fields}
        integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
        out = []
        for t, s in equi_key_pairs(self.on, self.target_alias, self.source_alias):
            try:
                field = schema.find_field(t, case_sensitive=False)
            except IcefloeError:
                continue
            if "." in t or s.lower() not in source_types:
                continue
            target_type = _spark_key_type(field.field_type)
            name, source_type = source_types[s.lower()]
            if target_type is None:
                continue
            same = source_type == target_type
            widening = (
                isinstance(source_type, integral)
                and isinstance(target_type, integral)
                and (integral.index(type(source_type)) <= integral.index(type(target_type)))
            )
            if same or widening:
                out.append((field.name, name, target_type))
        return out

    def _sides(
        self, df: DataFrame, target_cols: list[str], source_cols: list[str], t: bool, s: bool
    ) -> DataFrame:
        """`df` as the two struct columns named after the aliases plus the presence flags, so
        `target.x` / `source.x` in conditions and values resolve after a union; an absent side
        is a null struct."""
        from pyspark.sql import functions as F

        ta, sa = self.target_alias, self.source_alias

        def side(alias: str, cols: list[str], present: bool, types: Any) -> Any:
            if present:
                return F.struct(*[F.col(f"{alias}.{quoted(c)}").alias(c) for c in cols]).alias(alias)
            return F.lit(None).cast(types).alias(alias)

        return df.select(
            side(ta, target_cols, t, self._target_struct),
            side(sa, source_cols, s, self._source_struct),
            (F.lit(True) if t else F.lit(None).cast("boolean")).alias(_T),
            (F.lit(True) if s else F.lit(None).cast("boolean")).alias(_S),
        )

    def _join_broadcasting_source(self, tgt: DataFrame, src: DataFrame, kinds: set[str]) -> DataFrame:
        """The join with the source broadcast and the target streamed (never shuffled): the
        matched rows by an inner join, the source rows without a match by an anti-join of the
        source against the matched rows' source ids, the target rows without a match by an
        anti-join against the broadcast source."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructField, StructType

        ta, sa = self.target_alias, self.source_alias
        target_cols = [c for c in tgt.columns]
        source_cols = [c for c in src.columns if c != _S]
        self._target_struct = StructType([StructField(f.name, f.dataType) for f in tgt.schema.fields])
        self._source_struct = StructType(
            [StructField(f.name, f.dataType) for f in src.schema.fields if f.name != _S]
        )
        t = tgt.alias(ta)
        b = F.broadcast(src.alias(sa))
        parts = []
        key_read = self._target_keys if "not_matched" in kinds else None
        matched = t.join(b, F.expr(self.on), "inner")
        if "not_matched" in kinds and key_read is None:
            # Persisted: the matched rows feed both the matched part and the anti-join, and
            # the target is read once for them.
            matched = matched.persist()
            self._persisted.append(matched)
        if kinds & {"matched", "not_matched"}:
            parts.append(self._sides(matched, target_cols, source_cols, True, True))
        if "not_matched" in kinds:
            # The source rows no target row matched: by their keys when `on` is keys (and
            # target-only conjuncts), else by their ids. What they are compared with is at
            # most the source's size, which is broadcast already: broadcast it too, so that
            # the anti-join keeps the source's few partitions (a shuffle would give `joined`
            # spark.sql.shuffle.partitions partitions, and every action on it as many tasks).
            if self._anti_join_keys:
                keys = [f"__icefloe_matched_key{i}" for i in range(len(self._anti_join_keys))]
                if key_read is not None:
                    # The keys of the target rows that can match (a read of the key columns
                    # alone, cheaper than persisting the matched rows for a second use).
                    ids = key_read().select(
                        [F.col(quoted(t)).alias(k) for (t, _s), k in zip(self._anti_join_keys, keys)]
                    )
                else:
                    ids = matched.select(
                        [
                            F.col(f"{ta}.{quoted(t)}").alias(k)
                            for (t, _s), k in zip(self._anti_join_keys, keys)
                        ]
                    )
                cond = [
                    F.col(f"{sa}.{quoted(s)}") == F.col(k) for (_t, s), k in zip(self._anti_join_keys, keys)
                ]
                on_ids = cond[0]
                for c in cond[1:]:
                    on_ids = on_ids & c
            else:
                ids = matched.select(F.col(f"{sa}.{_SID}").alias("__icefloe_matched_sid"))
                on_ids = F.col(f"{sa}.{_SID}") == F.col("__icefloe_matched_sid")
            only = src.alias(sa).join(F.broadcast(ids), on_ids, "left_anti")
            parts.append(self._sides(only.alias(sa), target_cols, source_cols, False, True))
        if "not_matched_by_source" in kinds:
            only_t = t.join(b, F.expr(self.on), "left_anti")
            parts.append(self._sides(only_t.alias(ta), target_cols, source_cols, True, False))
        joined = parts[0]
        for p in parts[1:]:
            joined = joined.unionByName(p)
        return joined

    def _join_shuffling_both(self, tgt: DataFrame, src: DataFrame, kinds: set[str]) -> DataFrame:
        """The join as one outer join shuffling both sides (for a source too large to
        broadcast). Spark sizes a mapInArrow read by its spark.range(n) source (a few bytes)
        and would broadcast the whole target, so a sort-merge join is pinned."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructField, StructType

        ta, sa = self.target_alias, self.source_alias
        self._target_struct = StructType([StructField(f.name, f.dataType) for f in tgt.schema.fields])
        self._source_struct = StructType(
            [StructField(f.name, f.dataType) for f in src.schema.fields if f.name != _S]
        )
        t = tgt.withColumn(_T, F.lit(True)).alias(ta).hint("merge")
        s = src.alias(sa)
        if "not_matched" in kinds and "not_matched_by_source" in kinds:
            joined = s.join(t, F.expr(self.on), "full_outer")
        elif "not_matched" in kinds:
            joined = s.join(t, F.expr(self.on), "left_outer")
        elif "not_matched_by_source" in kinds:
            joined = t.join(s, F.expr(self.on), "left_outer")
        else:
            joined = t.join(s, F.expr(self.on), "inner")
        target_cols = list(tgt.columns)
        source_cols = [c for c in src.columns if c != _S]
        return joined.select(
            F.struct(*[F.col(f"{ta}.{quoted(c)}").alias(c) for c in target_cols]).alias(ta),
            F.struct(*[F.col(f"{sa}.{quoted(c)}").alias(c) for c in source_cols]).alias(sa),
            F.col(f"{ta}.{_T}").alias(_T),
            F.col(f"{sa}.{_S}").alias(_S),
        )

    def _check_cardinality(self, joined: DataFrame, matched: str, columns: list[str]) -> None:
        from pyspark.sql import functions as F

        ta = self.target_alias
        dup = (
            joined.where(matched)
            .groupBy(F.col(f"{ta}._file"), F.col(f"{ta}._pos"))
            .agg(
                F.count(F.lit(1)).alias("n"),
                F.first(F.struct(*[F.col(f"{ta}.{quoted(c)}") for c in columns])).alias("row"),
            )
            .where("n > 1")
            .limit(1)
            .collect()
        )
        if dup:
            d = dup[0]
            raise ValidationError(
                f"MERGE matched the target row {d['row'].asDict()} ({d['_file']}, position {d['_pos']}) "
                f"with {d['n']} source rows; a target row may be matched by at most one source row "
                "(as Spark's MERGE INTO). Nothing was committed."
            )

    def _new_rows(
        self, acted: DataFrame, writing: list[int], columns: list[str], types: dict[str, Any]
    ) -> DataFrame:
        from pyspark.sql import functions as F

        ta, sa = self.target_alias, self.source_alias
        source_types = {f.name.lower(): f.dataType for f in self.source.schema.fields}
        source_columns = set(source_types)
        schema = table_spark_schema(self.table)
        coerce = _merge_coercion.enabled(self.source.sparkSession)
        parts = []
        for i in writing:
            c = self._clauses[i]
            assigned = (
                [] if c.assignments is None else resolve(c.assignments, schema, what=f"MERGE {c.action}")
            )
            values = NestedValues(assigned, F.expr)
            exprs: list[tuple[str, Any]] = []
            for col in columns:
                if c.assignments is None and (col.lower() in source_columns or not self.evolve_schema):
                    if col.lower() not in source_columns:
                        raise ValidationError(f"MERGE {c.action}_all: the source has no column {col!r}")
                    sql = f"{sa}.{quoted(col)}"
                    if coerce and (c.action == "update" or self.evolve_schema):
                        # a source struct without some fields of the table's (Spark 4.1's setting)
                        target = f"{ta}.{quoted(col)}" if c.action == "update" else None
                        sql = (
                            _merge_coercion.coerced(
                                sql, target, schema[col].dataType, source_types[col.lower()]
                            )
                            or sql
                        )
                elif c.assignments is not None and col in values.top:
                    sql = values.top[col]
                elif c.action == "update":
                    sql = f"{ta}.{quoted(col)}"
                else:  # an inserted row takes the column's write-default (format v3), else null
                    sql = _write_default(self.table, col)
                exprs.append((col, sql))
            rows = acted.where(F.col(_ACTION) == i)
            selected = [(F.expr(sql) if isinstance(sql, str) else sql).alias(col) for col, sql in exprs]
            selected += values.probe_columns()
            probe = rows.select(selected)
            values.check(probe.schema, {col: types[col] for col in columns})
            lineage = []
            if self._lineage_read:
                # v3: an updated row keeps its id, an inserted one gets one; both inherit
                # the commit's sequence number (see icefloe.write.lineage).
                row_id = f"{ta}.{quoted(_lineage.ROW_ID)}" if c.action == "update" else "CAST(NULL AS BIGINT)"
                lineage = [
                    F.expr(row_id).cast("long").alias(_lineage.ROW_ID),
                    F.lit(None).cast("long").alias(_lineage.LAST_UPDATED),
                ]
                probe = rows.select(selected + lineage)
                lineage = [F.col(_lineage.ROW_ID), F.col(_lineage.LAST_UPDATED)]
            parts.append(
                probe.select([values.column(col, types[col]).alias(col) for col in columns] + lineage)
            )
        if not parts:  # only delete clauses: no new rows, in the columns the writers expect
            lineage_cols = [_lineage.ROW_ID, _lineage.LAST_UPDATED] if self._lineage_read else []
            empty = [F.lit(None).cast(types[col]).alias(col) for col in columns]
            empty += [F.lit(None).cast("long").alias(c) for c in lineage_cols]
            return acted.where(F.lit(False)).select(empty)
        out = parts[0]
        for p in parts[1:]:
            out = out.unionByName(p)
        # One task per slot writes the new rows (each task writes a file per partition it
        # sees: a union of per-clause selects over many shuffle partitions would otherwise
        # make thousands of small files).
        slots = default_parallelism(acted.sparkSession)
        return out.coalesce(slots)

    def _tasks_by_path(self, md_table: Table) -> dict[str, str]:
        return planned_tasks_by_path(t.to_json() for t in md_table.scan().plan_files())

    def _commit_merge_on_read(
        self,
        md: _native.TableMetadata,
        start: int | None,
        new_rows: DataFrame,
        removed: DataFrame,
        m: MergeMetrics,
    ) -> None:
        table = self.table
        write = RowDeltaWrite.begin(
            table, "merge", start, self._conflict_json, dict(self.snapshot_properties)
        )
        with write.aborting():
            if m.rows_updated or m.rows_deleted:
                tasks = self._tasks_by_path(table)
                write.delete_files, write.removed_delete_paths, write.referenced_paths = (
                    write_position_deletes_on_executors(removed, md, tasks, write.write_id)
                )
            if m.rows_updated or m.rows_inserted:
                write.data_files = write_on_executors(self._distributed(new_rows), table, write.write_id)
        commit_row_delta(write, m)

    def _distributed(self, new_rows: DataFrame) -> DataFrame:
        """The merge's new rows distributed as Java distributes a MERGE's (see
        `_distribution.row_level_mode`)."""
        mode = row_level_mode(new_rows.sparkSession, self.table, "merge")
        return distribute(new_rows, self.table, mode)

    def _commit_copy_on_write(
        self,
        md: _native.TableMetadata,
        start: int | None,
        new_rows: DataFrame,
        removed: DataFrame,
        columns: list[str],
        m: MergeMetrics,
    ) -> None:
        table = self.table
        write_id = _pending_write.new_write_id()
        touched: list[str] = []
        copied: list[str] = []
        new_files: list[str] = []
        with _pending_write.abort_on_failure(table, write_id):
            if m.rows_updated or m.rows_inserted:
                new_files = write_on_executors(self._distributed(new_rows), table, write_id)
            if m.rows_updated or m.rows_deleted:
                # The files holding removed rows, rewritten without them on the executors
                # (their other rows never become Spark rows).
                tasks = self._tasks_by_path(table)
                copied, touched = rewrite_files_on_executors(removed, table, tasks, write_id)
        descriptors = new_files + copied
        commit_rewrite(
            table, start, self._conflict_json, self.snapshot_properties, descriptors, touched, write_id, m
        )
        m.rows_copied = sum(int(json.loads(d)["record_count"]) for d in copied)


def merge(
    source_df: DataFrame,
    table: Table,
    on: str,
    source_alias: str = "source",
    target_alias: str = "target",
    snapshot_properties: dict[str, str] | None = None,
    branch: str | None = None,
    merge_schema: bool = False,
) -> MergeBuilder:
    """A MERGE of `source_df` into `table` joined on `on` (Spark SQL over the aliases);
    add clauses, then `.execute()`. `branch`: merge into that branch instead of `main`.
    `merge_schema=True`: Spark 4.1's `MERGE WITH SCHEMA EVOLUTION` (see `Table.merge`): the
    source's new columns and wider types join the table's schema in the merge's commit.
    Update clauses (`when_matched_update`, `when_not_matched_by_source_update`) take keys
    that are columns or fields of structs at any depth (`{"s.a": "source.x"}`, the rest of
    `s` kept; a NULL `s` becomes a struct of NULLs holding `a`, as Java's MERGE INTO stores
    it), with the rules of `icefloe.spark.update`'s `set`; insert clauses take columns only."""
    table, snapshot_properties = write_target(source_df.sparkSession, table, branch, snapshot_properties)
    if not isinstance(on, str) or not on.strip():
        raise ValidationError("MERGE needs an `on` condition, e.g. 'target.id = source.id'")
    props = dict(snapshot_properties or {})
    if evolves_schema(table, merge_schema, branch):
        from pyspark.sql.pandas.types import to_arrow_schema

        return merge_with_schema_evolution(
            table,
            to_arrow_schema(source_df.schema),
            lambda t: MergeBuilder(source_df, t, on, source_alias, target_alias, props),
        )
    return MergeBuilder(source_df, table, on, source_alias, target_alias, props)


def _cached(df: DataFrame) -> bool:
    """Whether Spark's cache holds `df`'s rows: persisted by the caller, or a plan Spark's
    cache manager has (`spark.table` of a temp view over a cached DataFrame, as
    `icefloe.spark.sql`'s MERGE reads its USING view)."""
    if df.is_cached:
        return True
    level = df.storageLevel  # Spark's cache manager's answer for the plan
    return bool(level.useMemory or level.useDisk or level.useOffHeap)


def _spark_key_type(t: Any) -> Any:
    """The Spark type of a column of Iceberg type `t` that can be a semi-join key; None for
    nested types, floats (SQL `=` is not bitwise there), and uuid / fixed / time (read
    as other Arrow types than Spark's)."""
    from icefloe.spark._arrow import spark_type

    if not t.is_primitive:
        return None
    j = t.to_json()
    if j in ("uuid", "time", "float", "double") or j.startswith("fixed"):
        return None
    return spark_type(j, "")


def _arrow_type(spark_type: Any) -> Any:
    from pyspark.sql.pandas.types import to_arrow_type

    return to_arrow_type(spark_type)


def _write_default(table: Table, column: str) -> Any:
    """The value an inserted row stores in `column` when MERGE assigns none: the column's
    write-default (format v3) as a Spark literal, else SQL NULL."""
    from pyspark.sql import functions as F

    field_id = table.schema().find_field(column).field_id
    default = _native.write_default_array(table.metadata, field_id, 1)
    return "NULL" if default is None else F.lit(default[0].as_py())
