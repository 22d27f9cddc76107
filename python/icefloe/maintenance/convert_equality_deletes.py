"""`convert_equality_deletes`: the equality deletes an upsert stream leaves behind (Flink's
upsert writer, icefloe's `upsert` on a merge-on-read table) turned into position deletes
(deletion vectors on format v3) by joining them once with the data they cover, so reads
stop hashing and probing them, without rewriting any data file. Iceberg Java declares the
action (`ConvertEqualityDeleteFiles`) but ships no implementation.

1. Plan (Rust, `rust/maintenance/convert_equality_deletes.rs`): the scan planner's delete
   index gives each data file the equality deletes that apply to it (the spec's rules:
   delete seq > data seq, same partition or global, bounds-pruned). An equality delete file
   is converted and removed only when every data file it applies to is selected by
   `filter` (all without one); the others stay, untouched.
2. Convert (Rust, in process on threads, with a rich progress bar when stderr is a
   terminal, or on Spark executors with `spark=`, Spark's own progress): the scan
   reader returns exactly the rows the equality deletes remove, with the same key maps as
   every read; their positions are written as position-delete files (v2) or deletion
   vectors merged with the data file's existing one (v3), as icefloe's row-level deletes do.
3. Commit: one row delta (operation `delete`, as Java's `BaseRowDelta` names a row delta
   adding delete files only) adding the position deletes and removing the converted
   equality deletes and the replaced position deletes. If the table moved meanwhile it is
   validated first: a converted data file removed concurrently, a data file added with a
   sequence number below a removed equality delete's (a compaction keeping an old one), or
   a deletion vector added concurrently for a data file this conversion writes one for is a
   CommitConflictError — nothing is committed, the written files are deleted, no row is
   resurrected. New data and new equality deletes committed meanwhile are not a conflict.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native, _progress
from icefloe._task_ids import CONVERT_EQUALITY_DELETES_DRIVER_TASK_BASE
from icefloe.expressions import AlwaysTrue, BooleanExpression, as_row_filter
from icefloe.write import pending as _pending_write
from icefloe.write.row_delta import removal_key

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

_THREADS = 4


@dataclass(frozen=True)
class ConvertEqualityDeletesResult:
    """What a `convert_equality_deletes` did. Bytes of a deletion vector are its blob's
    (`content_size_in_bytes`), as Java's snapshot summaries count them."""

    removed_equality_delete_files_count: int = 0
    removed_equality_delete_bytes: int = 0
    added_position_delete_files_count: int = 0  # position-delete files (v2) or deletion vectors (v3)
    added_position_delete_bytes: int = 0
    rewritten_position_delete_files_count: int = 0  # earlier position deletes / DVs merged in
    deleted_rows_count: int = 0  # rows the equality deletes removed, now position-deleted
    data_files_count: int = 0  # data files joined with the equality deletes that applied to them
    kept_equality_delete_files_count: int = 0  # not fully covered by the filter
    snapshot_id: int | None = None


@dataclass
class _Pending:
    """A planned and written conversion, not yet committed."""

    table: Table
    start: int | None
    state: str  # the plan's state JSON (removed equality deletes, covered data files)
    write_id: str
    kept: int
    delete_files: list[str]
    replaced: list[str]
    rows: int
    data_files: int

    def removed(self) -> list[dict[str, Any]]:
        return [r["file"] for r in json.loads(self.state)["removed"]]

    def commit(self, snapshot_properties: dict[str, str]) -> Snapshot | None:
        """Commits one row delta (validated when the table moved); on failure nothing is
        left behind."""

        def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
            return _native.commit_equality_delete_conversion(
                base, self.start, self.state, self.delete_files, self.replaced, snapshot_properties
            )

        return _pending_write.commit_write(self.table, build, self.delete_files, self.write_id)

    def abort(self) -> None:
        _pending_write.discard(self.table, self.write_id, self.delete_files)


def _content_size(d: dict[str, Any]) -> int:
    if str(d.get("file_format", "")).upper() == "PUFFIN" and d.get("content_size_in_bytes") is not None:
        return int(d["content_size_in_bytes"])
    return int(d["file_size_in_bytes"])


def convert_equality_deletes(
    table: Table,
    filter: BooleanExpression | str | None = None,
    spark: SparkSession | None = None,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
) -> ConvertEqualityDeletesResult:
    """Converts the equality deletes whose whole scope `filter` selects (see the module doc)."""
    pending = prepare(table, filter, spark, case_sensitive)
    if pending is None:
        return ConvertEqualityDeletesResult()
    removed = pending.removed()
    if not removed:
        pending.abort()
        return ConvertEqualityDeletesResult(kept_equality_delete_files_count=pending.kept)
    snap = pending.commit(_pending_write.snapshot_props(snapshot_properties))
    added = [json.loads(d) for d in pending.delete_files]
    return ConvertEqualityDeletesResult(
        removed_equality_delete_files_count=len(removed),
        removed_equality_delete_bytes=sum(int(f["file_size_in_bytes"]) for f in removed),
        added_position_delete_files_count=len(added),
        added_position_delete_bytes=sum(_content_size(d) for d in added),
        rewritten_position_delete_files_count=len(pending.replaced),
        deleted_rows_count=pending.rows,
        data_files_count=pending.data_files,
        kept_equality_delete_files_count=pending.kept,
        snapshot_id=None if snap is None else snap.snapshot_id,
    )


def prepare(
    table: Table,
    filter: BooleanExpression | str | None,
    spark: SparkSession | None,
    case_sensitive: bool = True,
) -> _Pending | None:
    """Plans and writes the conversion of the table as it is now (None: no snapshot). The
    caller commits or aborts the result."""
    md = table.metadata
    if md.current_snapshot_id is None:
        return None
    bound = as_row_filter(filter).bind(table.schema(), case_sensitive=case_sensitive)
    filter_json = None if isinstance(bound, AlwaysTrue) else bound.to_json()
    start, tasks, state, kept = _native.plan_equality_delete_conversion(
        md, filter_json=filter_json, case_sensitive=case_sensitive
    )
    write_id = _pending_write.new_write_id()
    with _pending_write.abort_on_failure(table, write_id):
        if spark is None:
            files, replaced, rows = _convert_local(md, tasks, write_id)
        else:
            files, replaced, rows = _convert_on_spark(spark, md, tasks, write_id)
    return _Pending(table, start, state, write_id, kept, files, sorted(set(replaced)), rows, len(tasks))


def _chunks(tasks: list[str], slots: int) -> list[list[str]]:
    from icefloe.write.row_level import chunk_tasks

    return chunk_tasks(tasks, slots) if tasks else []


def _convert_local(
    md: _native.TableMetadata, tasks: list[str], write_id: str
) -> tuple[list[str], list[str], int]:
    chunks = _chunks(tasks, _THREADS)
    files: list[str] = []
    replaced: list[str] = []
    rows = 0
    if not chunks:
        return files, replaced, rows
    with (
        _progress.progress("converting equality deletes", len(tasks), unit="data files") as advance,
        ThreadPoolExecutor(max_workers=min(_THREADS, len(chunks))) as pool,
    ):
        futures = {
            pool.submit(
                _native.convert_equality_delete_rows,
                md,
                chunk,
                write_id,
                CONVERT_EQUALITY_DELETES_DRIVER_TASK_BASE + i,
            ): len(chunk)
            for i, chunk in enumerate(chunks)
        }
        for f in as_completed(futures):
            new, n, old = f.result()
            files.extend(new)
            rows += n
            replaced.extend(removal_key(d) for d in old)
            advance(futures[f])
    return files, replaced, rows


_OUT_SCHEMA = "kind string, descriptor string, rows long"


def _convert_on_spark(
    spark: SparkSession, md: _native.TableMetadata, tasks: list[str], write_id: str
) -> tuple[list[str], list[str], int]:
    """One Spark task per chunk of data files (a partition's files stay together), the
    chunks riding in the closure as `icefloe.spark.delete` does."""
    from icefloe._io import IoConfig
    from icefloe._task_ids import task_attempt_id
    from icefloe.spark._session import default_parallelism, spark_job
    from icefloe.spark._worker import prepare_worker
    from icefloe.spark.write import executor_error

    chunks = _chunks(tasks, default_parallelism(spark))
    if not chunks:
        return [], [], 0
    metadata_json = md.to_json()
    io_config = IoConfig.current()

    def convert_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        planned = [t for b in batches for i in b.column(0).to_pylist() for t in chunks[i]]
        if not planned:
            return
        meta = native.TableMetadata.from_json(metadata_json)
        new, n, old = native.convert_equality_delete_rows(meta, planned, write_id, task_attempt_id())
        kinds = ["delete"] * len(new) + ["replaced"] * len(old) + ["rows"]
        yield pa.RecordBatch.from_pydict(
            {
                "kind": pa.array(kinds, pa.string()),
                "descriptor": pa.array([*new, *old, ""], pa.string()),
                "rows": pa.array([0] * (len(new) + len(old)) + [n], pa.int64()),
            }
        )

    df = spark.range(0, len(chunks), 1, len(chunks))
    try:
        with spark_job(spark, f"icefloe convert_equality_deletes: {len(tasks)} data files"):
            out = df.mapInArrow(convert_task, _OUT_SCHEMA).collect()
    except Exception as e:
        raise executor_error(e) from e
    files = [r["descriptor"] for r in out if r["kind"] == "delete"]
    replaced = [removal_key(r["descriptor"]) for r in out if r["kind"] == "replaced"]
    rows = sum(int(r["rows"]) for r in out if r["kind"] == "rows")
    return files, replaced, rows
