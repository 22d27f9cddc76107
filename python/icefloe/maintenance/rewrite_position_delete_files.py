"""`rewrite_position_delete_files` (Iceberg Java's `RewritePositionDeleteFilesSparkAction`
with `BinPackRewritePositionDeletePlanner`, `CALL system.rewrite_position_delete_files`).

1. Plan (Rust, `rust/maintenance/rewrite_position_deletes.rs`): the live position delete
   files whose partition may match `filter`, grouped per partition, selected and bin-packed
   by Java's size rules (`target-file-size-bytes` default: the table's
   `write.delete.target-file-size-bytes`, 64 MiB; `min-input-files` 5; `rewrite-all`;
   `max-file-group-size-bytes`). On a format v3 table whose position deletes are all
   deletion vectors already, nothing is done (Java: "already rewritten to DVs").
2. Rewrite each group: its positions are read, the positions of data files no longer live
   (dangling: compacted or overwritten away) are dropped, the rest written sorted with the
   table's `write.delete.granularity` (Java's default `file`: one delete file per data
   file), or as deletion vectors on v3.
3. Commit (Rust, `rust/commit/rewrite_position_deletes.rs`): one `replace` snapshot; the new
   files keep the highest data sequence number of their group; a rewritten delete file that
   a concurrent commit removed fails the commit (CommitConflictError, new files deleted).

Groups are rewritten in this process, or one Spark task per group on the executors when
`spark` is given (the same Rust rewrite, run by `mapInArrow`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe import _native, _progress
from icefloe._task_ids import REWRITE_POSITION_DELETE_FILES_DRIVER_TASK_BASE
from icefloe.expressions import AlwaysTrue, BooleanExpression, as_row_filter
from icefloe.write import pending as _pending_write

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.table import Table


@dataclass(frozen=True)
class RewritePositionDeleteFilesResult:
    """What a `rewrite_position_delete_files` did (Java's `RewritePositionDeleteFiles.Result`)."""

    rewritten_delete_files_count: int = 0
    added_delete_files_count: int = 0
    rewritten_bytes_count: int = 0
    added_bytes_count: int = 0
    dangling_positions_dropped: int = 0
    snapshot_id: int | None = None
    rewritten_delete_files: tuple[str, ...] = field(default_factory=tuple)
    added_delete_files: tuple[str, ...] = field(default_factory=tuple)


def _content_size(f: dict[str, Any]) -> int:
    """Java's `ScanTaskUtil.contentSizeInBytes`: a DV's blob, else the whole file."""
    if str(f.get("file_format", "")).upper() == "PUFFIN" and f.get("content_size_in_bytes") is not None:
        return int(f["content_size_in_bytes"])
    return int(f["file_size_in_bytes"])


def rewrite_position_delete_files(
    table: Table,
    filter: BooleanExpression | str | None = None,
    target_file_size_bytes: int | None = None,
    min_input_files: int = 5,
    rewrite_all: bool = False,
    spark: SparkSession | None = None,
    *,
    min_file_size_bytes: int | None = None,
    max_file_size_bytes: int | None = None,
    max_file_group_size_bytes: int | None = None,
    max_file_group_input_files: int | None = None,
    snapshot_properties: dict[str, str] | None = None,
    case_sensitive: bool = True,
) -> RewritePositionDeleteFilesResult:
    """Rewrites small position delete files per partition (see the module doc)."""
    md = table.metadata
    if md.current_snapshot_id is None:
        return RewritePositionDeleteFilesResult()
    bound = as_row_filter(filter).bind(table.schema(), case_sensitive=case_sensitive)
    start, texts = _native.plan_rewrite_position_delete_files(
        md,
        filter_json=None if isinstance(bound, AlwaysTrue) else bound.to_json(),
        case_sensitive=case_sensitive,
        target_file_size_bytes=target_file_size_bytes,
        min_file_size_bytes=min_file_size_bytes,
        max_file_size_bytes=max_file_size_bytes,
        min_input_files=min_input_files,
        max_file_group_size_bytes=max_file_group_size_bytes,
        max_file_group_input_files=max_file_group_input_files,
        rewrite_all=rewrite_all,
    )
    if not texts:
        return RewritePositionDeleteFilesResult()
    groups = [json.loads(t) for t in texts]
    write_id = _pending_write.new_write_id()
    with _pending_write.abort_on_failure(table, write_id):
        if spark is None:
            rewritten_groups = []
            label = f"rewrite_position_delete_files {_progress.table_label(table)}"
            with _progress.progress(label, len(texts), unit="file groups") as advance:
                size = _progress.chunk_size(len(texts))
                for first in range(0, len(texts), size):
                    part = texts[first : first + size]
                    base = REWRITE_POSITION_DELETE_FILES_DRIVER_TASK_BASE + first
                    rewritten_groups.extend(_native.rewrite_position_delete_groups(md, part, write_id, base))
                    advance(len(part))
        else:
            from icefloe.spark._session import spark_job

            job = f"icefloe rewrite_position_delete_files: {len(texts)} file groups"
            with spark_job(spark, job):
                rewritten_groups = _rewrite_on_spark(spark, table, texts, write_id)
    rewritten = [json.dumps(f["file"]) for g in groups for f in g["files"]]
    added: list[tuple[str, int]] = [
        (d, int(g["max_data_sequence_number"]))
        for g, (descriptors, _, _) in zip(groups, rewritten_groups)
        for d in descriptors
    ]
    added_descriptors = [d for d, _ in added]
    props = _pending_write.snapshot_props(snapshot_properties)

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        return _native.rewrite_position_deletes(base, start, rewritten, added, snapshot_properties=props)

    snap = _pending_write.commit_write(table, build, added_descriptors, write_id)
    return RewritePositionDeleteFilesResult(
        rewritten_delete_files_count=len(rewritten),
        added_delete_files_count=len(added),
        rewritten_bytes_count=sum(_content_size(f["file"]) for g in groups for f in g["files"]),
        added_bytes_count=sum(_content_size(json.loads(d)) for d in added_descriptors),
        dangling_positions_dropped=sum(dropped for _, _, dropped in rewritten_groups),
        snapshot_id=None if snap is None else snap.snapshot_id,
        rewritten_delete_files=tuple(str(f["file"]["file_path"]) for g in groups for f in g["files"]),
        added_delete_files=tuple(str(json.loads(d)["file_path"]) for d in added_descriptors),
    )


def _rewrite_on_spark(
    spark: SparkSession, table: Table, texts: list[str], write_id: str
) -> list[tuple[list[str], int, int]]:
    """One Spark task per group: read its positions and write the new files on an executor."""
    from icefloe._io import IoConfig
    from icefloe.spark._session import packed_row_task_id, packed_rows_frame
    from icefloe.spark._worker import prepare_worker
    from icefloe.spark.write import executor_error

    metadata_json = table.metadata.to_json()
    io_config = IoConfig.current()
    n_groups = len(texts)

    def rewrite_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        from icefloe import _native as native

        prepare_worker(io_config)
        md = native.TableMetadata.from_json(metadata_json)
        for batch in batches:
            for index, text in zip(batch.column(0).to_pylist(), batch.column(1).to_pylist()):
                [(files, kept, dropped)] = native.rewrite_position_delete_groups(
                    md, [text], write_id, packed_row_task_id(index, n_groups)
                )
                yield pa.RecordBatch.from_pydict(
                    {
                        "group": pa.array([index], pa.int32()),
                        "files": pa.array([json.dumps(files)], pa.string()),
                        "kept": pa.array([kept], pa.int64()),
                        "dropped": pa.array([dropped], pa.int64()),
                    }
                )

    work = list(enumerate(texts))
    # One task per slot, its groups one after the other (weighed by their plan's size).
    df = packed_rows_frame(spark, work, [len(t) for t in texts], "group int, text string")
    try:
        rows = df.mapInArrow(rewrite_task, "group int, files string, kept long, dropped long").collect()
    except Exception as e:
        raise executor_error(e) from e
    by_group = {
        int(r["group"]): (list(json.loads(r["files"])), int(r["kept"]), int(r["dropped"])) for r in rows
    }
    if sorted(by_group) != list(range(len(texts))):
        raise RuntimeError(
            f"expected the results of {len(texts)} groups from Spark, found {sorted(by_group)}"
        )
    return [by_group[i] for i in range(len(texts))]
