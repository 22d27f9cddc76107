"""Streaming reads of the `icefloe` data source (`spark.readStream.format("icefloe")`).

Like Iceberg's Spark source: the stream is the data files added by the table's snapshots,
oldest first, along the current snapshot's ancestry (from the oldest ancestor, or from the
first snapshot at or after `stream-from-timestamp`, in ms: when the query starts before any
such snapshot, its offset keeps the timestamp until one is committed, so earlier commits are
never streamed). Every batch is read with the schema the query started with (the one
`schema()` gave Spark), by field id, as Java does: a column added later is not shown, one
dropped later reads as null. An offset is a snapshot and a position among the data files
that snapshot added (the files before the position are consumed), so one huge commit is
split into micro-batches of at most `max-files-per-trigger` files and
`max-records-per-trigger` rows (at least one file per batch). `replace` snapshots
(compaction) add no new rows and are passed over; `overwrite` and `delete` snapshots are an
error unless `streaming-skip-overwrite-snapshots` / `streaming-skip-delete-snapshots` is
true, as in Java.

Spark keeps one reader object per query on the driver and tells it where a restarted query
stands (an empty `partitions(offset, offset)` call for the newest offset of the checkpoint,
then the batch to redo, if any), so the reader bounds each batch from the last offset it
planned. Newer PySpark passes the start offset to `latestOffset` itself.

Read limits (PySpark >= 4.2, Spark's admission control for Python sources): the options are
the source's default read limit (`getDefaultReadLimit`), and `latestOffset(start, limit)`
obeys the limit Spark passes. `ReadAllAvailable` (`trigger(once=True)`) reads everything in
one batch, whatever the options say. `trigger(availableNow=True)` records the table's current
snapshot when the query starts (`prepareForTriggerAvailableNow`) and reads up to it in
batches within the options' limits, then stops, as Iceberg's Java source does. PySpark 4.0
and 4.1 have neither: there Spark asks for the latest offset without a limit, the options
bound every batch, and an `availableNow` or `once` query runs one such batch per start.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from icefloe import _native
from icefloe.exceptions import ValidationError
from icefloe.spark._source_read import ScanReader, TaskPartition, table_scan

_limits: Any
try:  # PySpark >= 4.2: read limits and Trigger.AvailableNow for Python streaming sources
    _limits = importlib.import_module("pyspark.sql.streaming.datasource")
except ImportError:  # PySpark 4.0 / 4.1
    _limits = None

if TYPE_CHECKING:
    _AvailableNow = object
else:
    _AvailableNow = object if _limits is None else _limits.SupportsTriggerAvailableNow

if TYPE_CHECKING:
    from icefloe.scan import DataScan
    from icefloe.snapshots import Snapshot
    from icefloe.spark.datasource import SourceOptions
    from icefloe.table import Table

# An offset before any snapshot (an empty table).
_NO_SNAPSHOT = -1
# Planned snapshots kept by a reader (their added files).
_PLANS_KEPT = 64


@dataclass(frozen=True)
class StreamOffset:
    """Everything before `position` among the data files `snapshot_id` added is consumed
    (and every earlier snapshot of the stream). Before any snapshot (`_NO_SNAPSHOT`),
    `from_timestamp` (ms) is where the stream will start: at the first ancestor committed at
    or after it (`stream-from-timestamp` later than every snapshot when the query started);
    the offsets of other streams have none (their dicts are those of earlier versions)."""

    snapshot_id: int
    position: int
    from_timestamp: int | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"version": 1, "snapshot_id": self.snapshot_id, "position": self.position}
        if self.from_timestamp is not None:
            d["from_timestamp"] = self.from_timestamp
        return d

    @staticmethod
    def from_dict(d: dict[str, Any] | str | None) -> StreamOffset:
        if isinstance(d, str):
            d = json.loads(d)
        if not isinstance(d, dict) or d.get("version") != 1:
            raise ValidationError(f"not an icefloe stream offset: {d!r}")
        try:
            ts = d.get("from_timestamp")
            return StreamOffset(int(d["snapshot_id"]), int(d["position"]), None if ts is None else int(ts))
        except (KeyError, TypeError, ValueError):
            raise ValidationError(f"not an icefloe stream offset: {d!r}") from None


@dataclass(frozen=True)
class AddedFile:
    task_json: str
    records: int
    size: int


@dataclass(frozen=True)
class BatchBounds:
    """How much one micro-batch may take (None: no bound); at least one file is always taken."""

    files: int | None = None
    records: int | None = None
    bytes: int | None = None

    def full(self, files: int, records: int, size: int, nxt: AddedFile) -> bool:
        """Whether a batch holding `files` files, `records` rows and `size` bytes is full
        before `nxt`."""
        return files > 0 and (
            (self.files is not None and files + 1 > self.files)
            or (self.records is not None and records + nxt.records > self.records)
            or (self.bytes is not None and size + nxt.size > self.bytes)
        )


class StreamReader(DataSourceStreamReader, _AvailableNow):
    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self.max_files, self.max_records, self.from_timestamp, self.skip_overwrite, self.skip_delete = (
            stream_options(opts)
        )
        # Trigger.AvailableNow: the snapshot the query reads up to (recorded at its start).
        self._available_now_end: int | None = None
        self._last: StreamOffset | None = None
        self._plans: dict[int, list[AddedFile]] = {}
        self._table: Table | None = None
        # The query's read schema (field ids), fixed when the reader first loads the table.
        self._scan: DataScan | None = None

    def __getstate__(self) -> dict[str, Any]:
        # The loaded table (its catalog's connections) stays on the driver.
        return {**self.__dict__, "_table": None, "_scan": None}

    # ---- the table, its snapshots, their added files ----
    def _refresh(self) -> Table:
        self._table = self.opts.load_table() if self._table is None else self._table.refresh()
        if self._scan is None:
            # What `schema()` gave Spark (the reader starts with the query): every batch is
            # read with it, whatever the table's schema becomes.
            self._scan = table_scan(self._table, self.opts)
        return self._table

    def _ancestry(self, table: Table) -> list[Snapshot]:
        """The current snapshot's ancestors, oldest first."""
        chain: list[Snapshot] = []
        snap = table.current_snapshot()
        while snap is not None:
            chain.append(snap)
            parent = snap.parent_snapshot_id
            snap = None if parent is None else table.snapshot_by_id(parent)
        chain.reverse()
        return chain

    def _should_read(self, snap: Snapshot) -> bool:
        op = str(snap.summary.get("operation", ""))
        if op == "append":
            return True
        if op == "replace":
            return False
        if op == "overwrite":
            if self.skip_overwrite:
                return False
            raise ValidationError(
                f"cannot process overwrite snapshot {snap.snapshot_id}; to ignore overwrites, "
                "set option streaming-skip-overwrite-snapshots=true"
            )
        if op == "delete":
            if self.skip_delete:
                return False
            raise ValidationError(
                f"cannot process delete snapshot {snap.snapshot_id}; to ignore deletes, "
                "set option streaming-skip-delete-snapshots=true"
            )
        raise ValidationError(f"cannot process snapshot {snap.snapshot_id} with operation {op!r}")

    def _added(self, table: Table, snap: Snapshot) -> list[AddedFile]:
        found = self._plans.get(snap.snapshot_id)
        if found is not None:
            return found
        # The range (parent, snap]: the files `snap` added. A parent that was expired (the
        # oldest snapshot left) cannot bound the range; without it the range runs back along
        # `snap`'s ancestry, which ends at `snap` itself then.
        parent = snap.parent_snapshot_id
        if parent is not None and table.snapshot_by_id(parent) is None:
            parent = None
        plan = _native.plan_scan(
            table.metadata,
            from_snapshot_id=parent,
            to_snapshot_id=snap.snapshot_id,
            incremental=True,
        )
        found = [AddedFile(plan[i].to_json(), plan[i].record_count, plan[i].length) for i in range(len(plan))]
        while len(self._plans) >= _PLANS_KEPT:
            self._plans.pop(next(iter(self._plans)))
        self._plans[snap.snapshot_id] = found
        return found

    def _after(self, table: Table, start: StreamOffset) -> list[Snapshot]:
        """The stream's snapshots from `start`'s snapshot on (before any: all of them, or
        from the first committed at or after `start.from_timestamp`)."""
        chain = self._ancestry(table)
        if start.snapshot_id == _NO_SNAPSHOT:
            if start.from_timestamp is None:
                return chain
            later = [i for i, s in enumerate(chain) if s.timestamp_ms >= start.from_timestamp]
            return chain[later[0] :] if later else []
        ids = [s.snapshot_id for s in chain]
        if start.snapshot_id not in ids:
            raise ValidationError(
                f"the stream's offset names snapshot {start.snapshot_id}, which is no longer an "
                f"ancestor of table {self.opts.identifier}'s current snapshot (expired or rolled back)"
            )
        return chain[ids.index(start.snapshot_id) :]

    # ---- offsets ----
    def initialOffset(self) -> dict[str, Any]:
        table = self._refresh()
        chain = self._ancestry(table)
        offset = StreamOffset(_NO_SNAPSHOT, 0)
        if chain and self.from_timestamp is None:
            offset = StreamOffset(chain[0].snapshot_id, 0)
        elif self.from_timestamp is not None:
            later = [s for s in chain if s.timestamp_ms >= self.from_timestamp]
            if later:
                offset = StreamOffset(later[0].snapshot_id, 0)
            else:  # nothing yet (as Java): start at the first snapshot committed at or after it
                offset = StreamOffset(_NO_SNAPSHOT, 0, self.from_timestamp)
        self._last = offset
        return offset.to_dict()

    def getDefaultReadLimit(self) -> Any:
        """The options as Spark's read limit (PySpark >= 4.2). Spark's Python API has no
        composite limit: with both options set this is the file limit, and `latestOffset`
        applies the row limit of the options too."""
        if _limits is None:
            raise ValidationError("read limits need PySpark >= 4.2")
        if self.max_files is not None:
            return _limits.ReadMaxFiles(self.max_files)
        if self.max_records is not None:
            return _limits.ReadMaxRows(self.max_records)
        return _limits.ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow (PySpark >= 4.2): read up to the table's current snapshot,
        in batches within the read limits, and no further."""
        snap = self._refresh().current_snapshot()
        self._available_now_end = _NO_SNAPSHOT if snap is None else snap.snapshot_id

    def _bounds(self, limit: Any) -> BatchBounds:
        """One batch's bounds under Spark's read limit (None: PySpark < 4.2, no limit given)."""
        options = BatchBounds(self.max_files, self.max_records)
        if limit is None:
            return options
        if _limits is not None:
            if isinstance(limit, _limits.ReadAllAvailable):
                return BatchBounds()
            if isinstance(limit, _limits.ReadMaxFiles):
                return BatchBounds(_smaller(limit.max_files, options.files), options.records)
            if isinstance(limit, _limits.ReadMaxRows):
                return BatchBounds(options.files, _smaller(limit.max_rows, options.records))
            if isinstance(limit, _limits.ReadMaxBytes):
                return BatchBounds(options.files, options.records, limit.max_bytes)
        raise ValidationError(
            f"unsupported read limit {limit!r}: the icefloe source takes all available data, "
            "ReadMaxFiles, ReadMaxRows or ReadMaxBytes"
        )

    def latestOffset(self, start: dict[str, Any] | None = None, limit: Any = None) -> dict[str, Any]:
        begin = StreamOffset.from_dict(start) if start is not None else self._last
        if begin is None:
            begin = StreamOffset.from_dict(self.initialOffset())
        bounds = self._bounds(limit)
        stop_at = self._available_now_end
        if stop_at == _NO_SNAPSHOT:
            return begin.to_dict()
        table = self._refresh()
        files = records = size = 0
        end = begin
        after = self._after(table, begin)
        if stop_at is not None and begin.from_timestamp is not None:
            if stop_at not in [s.snapshot_id for s in after]:  # the end precedes the start
                return begin.to_dict()
        for snap in after:
            if self._should_read(snap):
                added = self._added(table, snap)
                first = begin.position if snap.snapshot_id == begin.snapshot_id else 0
                for i in range(first, len(added)):
                    if bounds.full(files, records, size, added[i]):
                        return end.to_dict()
                    files += 1
                    records += added[i].records
                    size += added[i].size
                    end = StreamOffset(snap.snapshot_id, i + 1)
            if snap.snapshot_id == stop_at:
                break
        return end.to_dict()

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        begin, stop = StreamOffset.from_dict(start), StreamOffset.from_dict(end)
        self._last = stop
        if begin == stop:
            return []
        table = self._refresh()
        picked: list[AddedFile] = []
        for snap in self._after(table, begin):
            if not self._should_read(snap):
                if snap.snapshot_id == stop.snapshot_id:
                    break
                continue
            added = self._added(table, snap)
            first = begin.position if snap.snapshot_id == begin.snapshot_id else 0
            last = stop.position if snap.snapshot_id == stop.snapshot_id else len(added)
            picked.extend(added[first:last])
            if snap.snapshot_id == stop.snapshot_id:
                break
        assert self._scan is not None  # set by `_refresh`
        reader = ScanReader(self._scan, table.properties.get("schema.name-mapping.default"))
        target = int(table.properties.get("read.split.target-size", str(128 << 20)))
        return [TaskPartition(task, reader) for task in _pack(picked, target)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, TaskPartition):
            raise ValidationError(f"not an icefloe stream partition: {partition!r}")
        yield from partition.reader.read(partition.value)

    def commit(self, end: dict[str, Any]) -> None:
        """Spark is done with everything up to `end`: plans of earlier snapshots can go."""
        done = StreamOffset.from_dict(end)
        for sid in [s for s in self._plans if s != done.snapshot_id]:
            del self._plans[sid]


def _pack(files: list[AddedFile], target_size: int) -> Iterator[bytes]:
    """Consecutive files packed into combined tasks of about `target_size` bytes."""
    group: list[str] = []
    size = 0
    for f in files:
        if group and size + f.size > target_size:
            yield ('{"tasks":[' + ",".join(group) + "]}").encode()
            group, size = [], 0
        group.append(f.task_json)
        size += f.size
    if group:
        yield ('{"tasks":[' + ",".join(group) + "]}").encode()


def stream_options(opts: SourceOptions) -> tuple[int | None, int | None, int | None, bool, bool]:
    """The streaming options, checked: max files and rows per trigger, the start timestamp
    and the two skip flags. The data source's `schema()` checks them too, so that a bad value
    reaches the user as icefloe's error (PySpark 4.1 reports an error raised while its stream
    reader starts as an UnboundLocalError of its own)."""
    return (
        _limit(opts, "max-files-per-trigger", "streaming-max-files-per-micro-batch"),
        _limit(opts, "max-records-per-trigger", "streaming-max-rows-per-micro-batch"),
        opts.int_option("stream-from-timestamp"),
        opts.bool_option("streaming-skip-overwrite-snapshots"),
        opts.bool_option("streaming-skip-delete-snapshots"),
    )


def _smaller(a: int, b: int | None) -> int:
    return a if b is None else min(a, b)


def _limit(opts: SourceOptions, key: str, java_key: str) -> int | None:
    """A per-batch limit under icefloe's name or Iceberg Java's (a query moved from Java's
    source keeps its limits); the two names must not disagree."""
    ours, java = _positive(opts, key), _positive(opts, java_key)
    if ours is not None and java is not None and ours != java:
        raise ValidationError(f"options {key!r} ({ours}) and {java_key!r} ({java}) set one limit twice")
    return ours if ours is not None else java


def _positive(opts: SourceOptions, key: str) -> int | None:
    value = opts.int_option(key)
    if value is not None and value <= 0:
        raise ValidationError(f"option {key!r} must be a positive integer, found {value}")
    return value
