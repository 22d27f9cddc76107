"""Compaction: `rewrite_data_files` (Iceberg Java's `RewriteDataFilesSparkAction` with the
bin-pack planner).

1. Plan (Rust, `rust/maintenance/rewrite_plan.rs`): Java's `BinPackRewriteFilePlanner`
   rules pick the files and group them per partition; each group comes with the read tasks
   its output files are written from (split and packed to the group's split size).
2. Rewrite: each read task's rows, deletes applied by the Rust reader (position deletes,
   equality deletes, deletion vectors), are written as new data files rolling at the group's
   max output size, on driver threads or on Spark executors (`spark=`). On a format v3 table
   the rows keep their lineage (`_row_id`, `_last_updated_sequence_number`).
3. Commit (Rust, `rust/commit/rewrite_files.rs`): one `replace` snapshot; the new files keep
   the starting snapshot's data sequence number; a position delete committed meanwhile on a
   rewritten file fails the commit (CommitConflictError, nothing committed, new files
   deleted): never a resurrected row. Delete files that no longer apply are dropped.

With `partial_progress`, groups are committed in up to `partial_progress_max_commits`
batches; a batch that conflicts is dropped (its files deleted) and counted as failed while
the others commit, as Java's `partial-progress.enabled`.

Differences from Java, on purpose: `remove_dangling_deletes` (default True here, false in
Java) is done in the same `replace` snapshot rather than a second one; the delete files
"older than every live data file" are judged with the new files included (Java's minimum
omits them, which can drop an equality delete committed during the rewrite that still
applies to the rewritten rows). The `sort` strategy on Spark range-partitions the groups over
as many tasks as they expect output files, as Java does (`_sort_on_spark`); in process, or
for a table with a column Spark cannot carry losslessly, a group sorts in one writer (it
spills sorted runs and merges them) rolling files at the target size. Both give files with
disjoint key ranges.

`sort_order` sorts by another order than the table's (or sorts a table that has none), as
Java's `sort_order => '...'`: an icefloe `SortOrder` or Java's string form
(`sorting.parse_sort_order`). The new files record the id of the table's sort order with the
same fields, or 0 (unsorted) when it is none of the table's orders, as Java does.

`sort_order="zorder(a, b)"` is Java's z-order rewrite (`_zorder`): rows are sorted by their
z-values, Java's interleaving of the columns' order-preserving bytes (computed in Rust,
`rust/writer/zorder.rs`, byte for byte Java's, with its `var_length_contribution` and
`max_output_size` options); on Spark each group is range-partitioned by the z-value as Java
does. The new files record sort order id 0, as Java's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native, _progress
from icefloe._task_ids import REWRITE_DATA_FILES_DRIVER_TASK_BASE
from icefloe.exceptions import CommitConflictError, ValidationError
from icefloe.expressions import AlwaysTrue, BooleanExpression, as_row_filter
from icefloe.maintenance import _sort_on_spark
from icefloe.maintenance._zorder import ZOrder, parse_zorder
from icefloe.sorting import SortOrder, parse_sort_order
from icefloe.write import lineage as _lineage
from icefloe.write import pending as _pending_write

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.table import Table

_STRATEGIES = ("binpack", "sort")
_THREADS = 4


@dataclass(frozen=True)
class RewriteDataFilesResult:
    """What a `rewrite_data_files` did (Java's `RewriteDataFiles.Result` counts)."""

    rewritten_data_files_count: int = 0
    added_data_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0
    removed_delete_files_count: int = 0
    failed_data_files_count: int = 0  # partial progress: files of groups whose commit failed
    snapshot_ids: tuple[int, ...] = field(default_factory=tuple)


@dataclass
class _Group:
    """One planned file group (see `plan_rewrite_data_files`) and what it became."""

    index: int
    partition: str
    input_size: int
    expected_output_files: int
    max_output_file_size: int
    output_spec_id: int
    files: list[dict[str, Any]]  # the rewritten DataFiles (JSON objects)
    combined: list[str]  # per output file: a JSON list of FileScanTasks
    combined_bytes: list[int]  # per output file: the bytes its tasks read
    # (path, size, records) of the files Spark's own Parquet source may read (no deletes, ...)
    plain_files: list[tuple[str, int, int]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # descriptors of the new files

    @staticmethod
    def parse(index: int, text: str) -> _Group:
        g = json.loads(text)
        return _Group(
            index=index,
            partition=g["partition"],
            input_size=int(g["input_size"]),
            expected_output_files=int(g["expected_output_files"]),
            max_output_file_size=int(g["max_output_file_size"]),
            output_spec_id=int(g["output_spec_id"]),
            files=[t["file"] for t in g["tasks"]],
            combined=[json.dumps(c) for c in g["combined"]],
            combined_bytes=[sum(int(t.get("length", 0)) for t in c) for c in g["combined"]],
            plain_files=[(str(p), int(size), int(n)) for p, size, n in g.get("plain_files", [])],
        )


def rewrite_data_files(
    table: Table,
    filter: BooleanExpression | str | None = None,
    strategy: str = "binpack",
    sort_order: SortOrder | str | None = None,
    target_file_size_bytes: int | None = None,
    min_input_files: int = 5,
    delete_file_threshold: int | None = None,
    partial_progress: bool = False,
    spark: SparkSession | None = None,
    *,
    min_file_size_bytes: int | None = None,
    max_file_size_bytes: int | None = None,
    delete_ratio_threshold: float | None = None,
    max_file_group_size_bytes: int | None = None,
    max_file_group_input_files: int | None = None,
    rewrite_all: bool = False,
    remove_dangling_deletes: bool = True,
    use_starting_sequence_number: bool = True,
    partial_progress_max_commits: int = 10,
    max_files_to_rewrite: int | None = None,
    rewrite_job_order: str | None = None,
    output_spec_id: int | None = None,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
    var_length_contribution: int | None = None,
    max_output_size: int | None = None,
) -> RewriteDataFilesResult:
    """Compacts the table's data files (see the module doc); options as Java's procedure
    names them (`min-input-files`, `target-file-size-bytes`, ...).

    `strategy="sort"` sorts the rewritten rows by the table's sort order, or by `sort_order`
    when given: a `SortOrder` or Java's string form (`"id DESC NULLS LAST, bucket(4, name)"`,
    transforms identity, bucket, truncate, years, months, days, hours). The new files record
    the id of the table's order with the same fields, else 0, as Java. An unknown column or
    transform or a malformed string is a ValidationError before anything is written.

    `sort_order="zorder(a, b)"` sorts by Java's z-values of the columns (see the module
    doc), with Java's options `var_length_contribution` (bytes of a string or binary column,
    default 8) and `max_output_size` (bytes of the z-value, default all); a column of a type
    Java cannot z-order (decimal, ...), a nested field or a mix with other sort fields is a
    ValidationError."""
    if strategy not in _STRATEGIES:
        raise ValidationError(f"expected rewrite strategy 'binpack' or 'sort', found {strategy!r}")
    if partial_progress_max_commits < 1:
        raise ValidationError(
            f"partial_progress_max_commits must be positive, found {partial_progress_max_commits}"
        )
    sort = strategy == "sort"
    order: SortOrder | ZOrder | None = None
    if sort and isinstance(sort_order, str):
        order = parse_zorder(sort_order, table, case_sensitive, var_length_contribution, max_output_size)
    if sort and order is None:
        order = _resolve_sort_order(table, sort_order)
    elif not sort and sort_order is not None:
        raise ValidationError("sort_order applies to strategy='sort' only")
    if not isinstance(order, ZOrder) and (var_length_contribution, max_output_size) != (None, None):
        raise ValidationError(
            "var_length_contribution and max_output_size apply to a z-order rewrite only "
            "(strategy='sort', sort_order='zorder(...)')"
        )
    md = table.metadata
    start = md.current_snapshot_id
    if start is None:
        return RewriteDataFilesResult()
    bound = as_row_filter(filter).bind(table.schema(), case_sensitive=case_sensitive)
    planned_at, texts = _native.plan_rewrite_data_files(
        md,
        filter_json=None if isinstance(bound, AlwaysTrue) else bound.to_json(),
        case_sensitive=case_sensitive,
        target_file_size_bytes=target_file_size_bytes,
        min_file_size_bytes=min_file_size_bytes,
        max_file_size_bytes=max_file_size_bytes,
        min_input_files=min_input_files,
        delete_file_threshold=delete_file_threshold,
        delete_ratio_threshold=delete_ratio_threshold,
        max_file_group_size_bytes=max_file_group_size_bytes,
        max_file_group_input_files=max_file_group_input_files,
        rewrite_all=rewrite_all,
        max_files_to_rewrite=max_files_to_rewrite,
        rewrite_job_order=rewrite_job_order,
        output_spec_id=output_spec_id,
    )
    groups = [_Group.parse(i, t) for i, t in enumerate(texts)]
    if not groups:
        return RewriteDataFilesResult()
    props = _pending_write.snapshot_props(snapshot_properties)
    commit = _Committer(table, planned_at, use_starting_sequence_number, remove_dangling_deletes, props)
    batches = _batches(groups, partial_progress_max_commits) if partial_progress else [groups]
    for batch in batches:
        write_id = _pending_write.new_write_id()
        try:
            with _pending_write.abort_on_failure(table, write_id):
                _rewrite(table, batch, write_id, order, spark)
        except Exception:
            if partial_progress:  # Java's partial progress: a failed group does not stop the others
                commit.failed(batch)
                continue
            raise
        commit.commit(batch, write_id, tolerate_conflict=partial_progress)
    return commit.result()


def _resolve_sort_order(table: Table, sort_order: SortOrder | str | None) -> SortOrder:
    """The order a sort rewrite sorts by, with the id its files record: that of the table's
    order with the same fields, else 0 (Java's `sort_order_id` for an order the table does
    not have). Checked against the schema before anything is read."""
    if sort_order is None:
        order = table.sort_order()
        if order.is_unsorted:
            raise ValidationError(
                "strategy='sort' needs a sort order: the table has none "
                "(pass sort_order= or set one with replace_sort_order)"
            )
        return order
    if isinstance(sort_order, str):
        fields = parse_sort_order(sort_order, table.schema()).fields
    elif isinstance(sort_order, SortOrder):
        fields = sort_order.fields
    else:
        raise ValidationError(
            "expected sort_order as a SortOrder or a string such as 'id DESC NULLS LAST', "
            f"found {type(sort_order).__name__}"
        )
    if not fields:
        raise ValidationError("expected a sort_order with at least one field, found an unsorted order")
    same = [o.order_id for o in table.sort_orders().values() if o.fields == fields]
    order = SortOrder(*fields, order_id=same[0] if same else 0)
    _native.check_sort_order(table.metadata, order.to_json())
    return order


def _batches(groups: list[_Group], max_commits: int) -> list[list[_Group]]:
    """Java's partial progress: ceil(groups / max-commits) groups per commit."""
    per = -(-len(groups) // max_commits)
    return [groups[i : i + per] for i in range(0, len(groups), per)]


def _read_schema_json(table: Table) -> str:
    schema = json.loads(table.schema().to_json())
    if _lineage.tracked(table):  # copied rows keep their lineage
        schema = _lineage.with_read_fields(schema)
    return json.dumps(schema)


def _rewrite(
    table: Table,
    groups: list[_Group],
    write_id: str,
    order: SortOrder | ZOrder | None,
    spark: SparkSession | None,
) -> None:
    """Writes the new files of `groups` (sets each group's `added`), sorted by `order` (a
    sort order or a z-order) if any."""
    read_json = _read_schema_json(table)
    sort = order is not None
    order_json = order.to_json() if isinstance(order, SortOrder) else None
    zorder_json = order.to_json() if isinstance(order, ZOrder) else None
    mapping = table.properties.get("schema.name-mapping.default")
    if sort and spark is not None and _sort_on_spark.spark_carries(read_json):
        # Each group range-partitioned over its own tasks, all in one job; the batch commits
        # as a whole, so the new files are counted on its first group.
        ranged = _sort_on_spark.sort_rewrite_on_spark(
            spark,
            table,
            [(g.combined, g.expected_output_files, g.plain_files) for g in groups],
            max(g.max_output_file_size for g in groups),
            groups[0].output_spec_id,
            write_id,
            read_json,
            mapping,
            order,
        )
        if ranged is not None:
            groups[0].added.extend(ranged)
            return
    if sort:  # one writer per group, so the whole group goes through one sorter
        for g in groups:
            g.combined = [json.dumps([t for c in g.combined for t in json.loads(c)])]
            g.combined_bytes = [sum(g.combined_bytes)]
    work = [(g.index, c, g.max_output_file_size, g.output_spec_id) for g in groups for c in g.combined]
    weights = [b for g in groups for b in g.combined_bytes]
    by_index = {g.index: g for g in groups}
    if spark is None:
        md = table.metadata

        def one(i: int) -> tuple[int, list[str]]:
            index, tasks, size, spec_id = work[i]
            reader = task_reader(_native, tasks, read_json, mapping)
            files = _native.write_data_files(
                md,
                reader,
                write_id,
                REWRITE_DATA_FILES_DRIVER_TASK_BASE + i,
                sort=sort,
                target_file_size_bytes=size,
                spec_id=spec_id,
                sort_order=order_json,
                zorder=zorder_json,
            )
            return index, files

        label = f"rewrite_data_files {_progress.table_label(table)}"
        with (
            _progress.progress(label, len(work), unit="file groups") as advance,
            ThreadPoolExecutor(max_workers=max(1, min(_THREADS, len(work)))) as pool,
        ):
            for index, files in pool.map(one, range(len(work))):
                by_index[index].added.extend(files)
                advance(1)
        return
    written = _rewrite_on_spark(
        spark, table, work, weights, write_id, order_json, zorder_json, read_json, mapping
    )
    for index, descriptor in written:
        by_index[index].added.append(descriptor)


def task_reader(native: Any, tasks_json: str, read_json: str, mapping: str | None) -> pa.RecordBatchReader:
    """The rows of one output file: its read tasks, deletes applied, one after the other."""
    tasks = [json.dumps(t) for t in json.loads(tasks_json)]
    first = native.read_task(tasks[0], read_json, name_mapping=mapping)

    def batches() -> Iterator[pa.RecordBatch]:
        yield from first
        for t in tasks[1:]:
            yield from native.read_task(t, read_json, name_mapping=mapping)

    return pa.RecordBatchReader.from_batches(first.schema, batches())


def _rewrite_on_spark(
    spark: SparkSession,
    table: Table,
    work: list[tuple[int, str, int, int]],
    weights: list[int],
    write_id: str,
    order_json: str | None,
    zorder_json: str | None,
    read_json: str,
    mapping: str | None,
) -> list[tuple[int, str]]:
    """The output files written on the executors (read, deletes applied, and write), one
    after the other within a task, one task per slot."""
    from icefloe._io import IoConfig
    from icefloe.spark._session import packed_row_task_id, packed_rows_frame, spark_job
    from icefloe.spark._worker import prepare_worker
    from icefloe.spark.write import executor_error

    metadata_json = table.metadata.to_json()
    io_config = IoConfig.current()
    n_rows = len(work)

    def rewrite_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        md = native.TableMetadata.from_json(metadata_json)
        for batch in batches:
            for row, index, tasks, size, spec_id in zip(*(batch.column(i).to_pylist() for i in range(5))):
                reader = task_reader(native, tasks, read_json, mapping)
                task_id = packed_row_task_id(row, n_rows)
                files = native.write_data_files(
                    md,
                    reader,
                    write_id,
                    task_id,
                    sort=order_json is not None or zorder_json is not None,
                    target_file_size_bytes=size,
                    spec_id=spec_id,
                    sort_order=order_json,
                    zorder=zorder_json,
                )
                yield pa.RecordBatch.from_pydict(
                    {
                        "group": pa.array([index] * len(files), pa.int32()),
                        "descriptor": pa.array(files, pa.string()),
                    }
                )

    # One Spark task per slot, each writing its share of the output files in turn (packed by
    # input bytes): a task per output file pays PySpark's per-task cost once per file.
    rows_in = [(row, *w) for row, w in enumerate(work)]
    df = packed_rows_frame(spark, rows_in, weights, "row int, group int, tasks string, size long, spec int")
    try:
        with spark_job(
            spark, f"icefloe rewrite_data_files {_progress.table_label(table)}: {len(work)} file groups"
        ):
            rows = df.mapInArrow(rewrite_task, "group int, descriptor string").collect()
    except Exception as e:
        raise executor_error(e) from e
    return [(int(r["group"]), str(r["descriptor"])) for r in rows]


class _Committer:
    """Commits batches of rewritten groups as `replace` snapshots and sums the result."""

    def __init__(
        self,
        table: Table,
        start: int | None,
        use_starting_sequence_number: bool,
        remove_dangling_deletes: bool,
        props: dict[str, str],
    ) -> None:
        self.table = table
        self.start = start
        self.use_start_seq = use_starting_sequence_number
        self.remove_dangling = remove_dangling_deletes
        self.props = props
        self.rewritten = self.added = self.rewritten_bytes = self.added_bytes = 0
        self.removed_deletes = self.failed_files = 0
        self.snapshots: list[int] = []

    def failed(self, batch: list[_Group]) -> None:
        self.failed_files += sum(len(g.files) for g in batch)

    def commit(self, batch: list[_Group], write_id: str, tolerate_conflict: bool) -> None:
        rewritten = [json.dumps(f) for g in batch for f in g.files]
        added = [d for g in batch for d in g.added]

        def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
            return _native.rewrite_files(
                base,
                self.start,
                rewritten,
                added,
                use_starting_sequence_number=self.use_start_seq,
                remove_dangling_deletes=self.remove_dangling,
                snapshot_properties=self.props,
            )

        try:
            snap = _pending_write.commit_write(self.table, build, added, write_id)
        except CommitConflictError:
            if not tolerate_conflict:
                raise
            self.failed(batch)
            return
        if snap is None:
            return
        self.snapshots.append(snap.snapshot_id)
        summary = snap.summary
        self.rewritten += len(rewritten)
        self.added += len(added)
        self.rewritten_bytes += sum(int(f["file_size_in_bytes"]) for g in batch for f in g.files)
        self.added_bytes += sum(int(json.loads(d)["file_size_in_bytes"]) for d in added)
        self.removed_deletes += int(summary.get("removed-delete-files", 0) or 0)

    def result(self) -> RewriteDataFilesResult:
        return RewriteDataFilesResult(
            rewritten_data_files_count=self.rewritten,
            added_data_files_count=self.added,
            rewritten_bytes_count=self.rewritten_bytes,
            added_bytes_count=self.added_bytes,
            removed_delete_files_count=self.removed_deletes,
            failed_data_files_count=self.failed_files,
            snapshot_ids=tuple(self.snapshots),
        )
