"""icefloe.spark.batch_writer: an exactly-once Structured Streaming sink through foreachBatch.

    query = (
        df.writeStream.foreachBatch(icefloe.spark.batch_writer(table))
        .option("checkpointLocation", "/checkpoints/events")
        .start()
    )

Executors write each micro-batch's Parquet files (the `icefloe.spark.append` path), the driver
commits one snapshot per batch recording the query id and the batch id in its summary
(`icefloe.streaming.query-id`, `icefloe.streaming.batch-id`, see `icefloe.write.streaming_commit`).
A batch Spark replays after a crash is found in the target branch's history and skipped, so
every row lands exactly once as long as the source replays the same rows for the same batch
id (Spark's replayable sources do: files, Kafka, rate, Delta, Iceberg).

The query id. Spark's streaming query id is stable across restarts from the same checkpoint
and new for a new checkpoint; Spark hands it to the driver's thread that runs the batch as the
local property `sql.streaming.queryId` (with PySpark's default pinned threads), and that is
the default. Pass `query_id` explicitly when that is not available (PYSPARK_PIN_THREAD=false)
or to keep deduplicating across a change of checkpoint (Delta's `txnAppId`); two queries
writing the same table must never share an explicit id.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from icefloe.exceptions import ValidationError
from icefloe.write import pending as _pending_write
from icefloe.write import streaming_commit as _streaming_commit
from icefloe.write.branch import on_branch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

__all__ = ["BatchWriter", "batch_writer"]

MODES = ("append", "upsert")
# Set by Spark's StreamExecution on the thread running the micro-batch (StreamExecution.QUERY_ID_KEY).
SPARK_QUERY_ID_PROPERTY = "sql.streaming.queryId"

logger = logging.getLogger("icefloe")


def batch_writer(
    table: Table,
    query_id: str | None = None,
    mode: str = "append",
    key_columns: list[str] | None = None,
    branch: str | None = None,
    snapshot_properties: dict[str, str] | None = None,
) -> BatchWriter:
    """The function for `df.writeStream.foreachBatch(...)` that writes each micro-batch to
    `table` exactly once: one snapshot per non-empty batch, none for a batch the table's
    history already holds (a replay after a restart: its files are never committed, and any
    written are deleted).

    `mode`: "append" (Iceberg's streaming `append` output mode) or "upsert" (each batch is an
    `icefloe.spark.upsert` by `key_columns`, default the table's identifier fields: a row
    replaces the table's row with the same key; within a batch the last row of a key wins).
    `query_id`: default Spark's streaming query id (stable across restarts from the same
    checkpoint); see the module's documentation. `branch`: write to that branch (created by
    the first batch). `snapshot_properties`: more summary properties for every batch's
    snapshot. Every argument is checked here, before any batch runs (ValidationError)."""
    return BatchWriter(table, query_id, mode, key_columns, branch, snapshot_properties)


class BatchWriter:
    """A foreachBatch function writing micro-batches to an icefloe table exactly once (see
    `batch_writer`). `last_snapshot` is the snapshot of the last committed batch, `skipped` the
    ids of the batches found already committed."""

    def __init__(
        self,
        table: Table,
        query_id: str | None,
        mode: str,
        key_columns: list[str] | None,
        branch: str | None,
        snapshot_properties: dict[str, str] | None,
    ) -> None:
        from icefloe.table import Table

        if not isinstance(table, Table):
            raise ValidationError(f"batch_writer needs an icefloe Table, found {type(table).__name__}")
        if mode not in MODES:
            raise ValidationError(f"batch_writer mode must be one of {list(MODES)}, found {mode!r}")
        if query_id is not None:
            _streaming_commit.check_ids(query_id, 0)
        view = on_branch(table, branch)  # a tag or an empty name fails here
        if mode == "upsert":
            from icefloe.write.row_level import join_columns

            key_columns = join_columns(view, key_columns)
        elif key_columns is not None:
            raise ValidationError(
                f"key_columns {key_columns!r} apply to mode='upsert' only; mode is {mode!r}"
            )
        _streaming_commit.batch_properties("q", 0, snapshot_properties)  # a clash fails here
        self._table: Table | None = table
        # What loads the table again where the writer is unpickled (Spark Connect pickles the
        # foreachBatch function for the server's Python process; the loaded table does not
        # pickle): its catalog's class, name and properties, and its identifier.
        catalog = table.catalog
        self._catalog_class = type(catalog)
        self._catalog_name = catalog.name
        self._catalog_properties = dict(catalog.properties)
        self._identifier = tuple(table.identifier)
        self.query_id = query_id
        self.mode = mode
        self.key_columns = key_columns
        self.branch = branch
        self.snapshot_properties = dict(snapshot_properties or {})
        self.last_snapshot: Snapshot | None = None
        self.skipped: list[int] = []

    @property
    def table(self) -> Table:
        """The target table (loaded from its catalog once where the writer was unpickled)."""
        if self._table is None:
            catalog = self._catalog_class(self._catalog_name, **self._catalog_properties)
            self._table = catalog.load_table(self._identifier)
        return self._table

    def __getstate__(self) -> dict[str, Any]:
        # The loaded table (native metadata, the catalog's connections) and the last batch's
        # snapshot stay behind; the table is loaded again on first use.
        return {**self.__dict__, "_table": None, "last_snapshot": None}

    def __call__(self, batch_df: DataFrame, batch_id: int) -> None:
        query_id = self.query_id or spark_query_id(batch_df)
        query_id, batch_id = _streaming_commit.check_ids(query_id, int(batch_id))
        table = self.table.refresh()
        last = _streaming_commit.last_committed_batch(table, query_id, self.branch)
        if last is not None and batch_id <= last:
            logger.info(
                "icefloe: batch %d of streaming query %r is already committed (last batch %d); skipped",
                batch_id,
                query_id,
                last,
            )
            self.skipped.append(batch_id)
            return
        if self.mode == "append":
            committed, snap = self._append(table, query_id, batch_id, batch_df)
        else:
            committed, snap = self._upsert(table, query_id, batch_id, batch_df)
        if committed:
            self.last_snapshot = snap
        else:
            self.skipped.append(batch_id)

    def _append(
        self, table: Table, query_id: str, batch_id: int, batch_df: DataFrame
    ) -> tuple[bool, Snapshot | None]:
        from icefloe.spark.write import write_on_executors

        write_id = _pending_write.new_write_id()
        descriptors = write_on_executors(batch_df, on_branch(table, self.branch), write_id)
        return _streaming_commit.commit_batch_result(
            table, query_id, batch_id, descriptors, write_id, self.branch, self.snapshot_properties
        )

    def _upsert(
        self, table: Table, query_id: str, batch_id: int, batch_df: DataFrame
    ) -> tuple[bool, Snapshot | None]:
        from icefloe.spark.row_level import upsert

        def write(view: Table, props: dict[str, str]) -> Snapshot | None:
            return upsert(batch_df, view, join_cols=self.key_columns, snapshot_properties=props)

        return _streaming_commit.guarded(
            table, query_id, batch_id, write, self.branch, self.snapshot_properties
        )


def spark_query_id(batch_df: Any) -> str:
    """Spark's id of the streaming query running this micro-batch (see the module's docs)."""
    qid = None
    try:
        qid = batch_df.sparkSession.sparkContext.getLocalProperty(SPARK_QUERY_ID_PROPERTY)
    except Exception as e:  # Spark Connect has no SparkContext
        logger.debug("icefloe: no Spark local properties here: %s", e)
    if not qid:
        raise ValidationError(
            "batch_writer could not find the streaming query's id (Spark's local property "
            f"{SPARK_QUERY_ID_PROPERTY!r} is not visible from this thread, e.g. with "
            "PYSPARK_PIN_THREAD=false or Spark Connect): pass query_id=... explicitly, a stable "
            "id unique to this query"
        )
    return str(qid)
