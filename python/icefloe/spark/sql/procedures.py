"""`CALL [catalog.]system.<procedure>(args)` on icefloe catalogs, as Iceberg Java's Spark
procedures: positional or named (`name => value`) arguments in Java's order and with Java's
names, values as Spark evaluates them (`TIMESTAMP '...'`, `map(...)`, `array(...)`), the
table argument relative to the procedure's catalog, and a DataFrame of Java's result columns.

Each procedure is the Python API's call: `table.manage_snapshots()` (`rollback_to_snapshot`,
`rollback_to_timestamp`, `set_current_snapshot`, `cherrypick_snapshot`, `fast_forward`) and
`table.maintenance` (`expire_snapshots`, `remove_orphan_files`, `rewrite_data_files`,
`rewrite_manifests`, `rewrite_position_delete_files`, `rewrite_table_path`), the table's
snapshots (`ancestors_of`),
`catalog.register_table` (`register_table`), `table.add_files` (`add_files` of a Parquet
folder into an unpartitioned table) and `icefloe.spark.read_changelog` as a temp view
(`create_changelog_view`). Arguments that only tune Java's execution
(`max_concurrent_deletes`, `stream_results`, `use_caching`, `parallelism`) are accepted and
have no effect; any other argument icefloe does not carry out is a NotSupportedError naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql import migration_procedures
from icefloe.spark.sql.dialect import IcebergSpark
from icefloe.spark.sql.query import Context, to_spark_sql

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["call"]

_LONG, _INT, _STRING = "bigint", "int", "string"
_SNAPSHOT_CHANGE = [("previous_snapshot_id", _LONG), ("current_snapshot_id", _LONG)]
_IGNORED = {"max_concurrent_deletes", "stream_results", "use_caching", "parallelism"}


@dataclass(frozen=True)
class _Procedure:
    params: tuple[str, ...]  # Java's parameter names in order; the first is `table`
    required: int  # how many of them are required
    columns: list[tuple[str, str]]  # Java's result columns
    run: Callable[[Context, Any, dict[str, Any]], list[tuple[Any, ...]]]
    # False: the table is not loaded (`register_table`): `run` gets the catalog and the
    # identifier in `args` (`_catalog`, `_ident`) and None for the table
    loads: bool = True


def _current(table: Table) -> int | None:
    s = table.current_snapshot()
    return None if s is None else s.snapshot_id


def _snapshot_change(change: Callable[[Any, dict[str, Any]], None]) -> Any:
    def run(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
        before = _current(table)
        with table.manage_snapshots() as ms:
            change(ms, args)
        return [(before, _current(table.refresh()))]

    return run


def _set_current(ms: Any, args: dict[str, Any]) -> None:
    sid, ref = args.get("snapshot_id"), args.get("ref")
    if (sid is None) == (ref is None):
        raise ValidationError("Either snapshot_id or ref must be provided, not both")
    ms.set_current_snapshot(snapshot_id=None if sid is None else int(sid), ref_name=ref)


def _cherrypick(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    with table.manage_snapshots() as ms:
        ms.cherrypick_snapshot(int(args["snapshot_id"]))
    return [(int(args["snapshot_id"]), _current(table.refresh()))]


def _publish_changes(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `PublishChangesProcedure`: cherry-picks the one snapshot staged with the WAP id
    (its summary's `wap.id`) onto the current state."""
    wap_id = str(args["wap_id"])
    found = [s for s in table.snapshots() if s.summary.get("wap.id") == wap_id]
    if len(found) > 1:
        raise ValidationError(
            f"Cannot apply non-unique WAP ID. Found multiple snapshots with WAP ID '{wap_id}'"
        )
    if not found:
        raise ValidationError(f"Cannot apply unknown WAP ID '{wap_id}'")
    with table.manage_snapshots() as ms:
        ms.cherrypick_snapshot(found[0].snapshot_id)
    return [(found[0].snapshot_id, _current(table.refresh()))]


def _fast_forward(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    branch, to = str(args["branch"]), str(args["to"])
    before = table.refs().get(branch)
    with table.manage_snapshots() as ms:
        ms.fast_forward(branch, to)
    after = table.refresh().refs()[branch]
    return [(branch, None if before is None else before.snapshot_id, after.snapshot_id)]


def _expire(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    ids = args.get("snapshot_ids")
    r = table.maintenance.expire_snapshots(
        older_than=args.get("older_than"),
        retain_last=args.get("retain_last"),
        snapshot_ids=None if ids is None else [int(i) for i in ids],
        clean_expired_metadata=bool(args.get("clean_expired_metadata")),
    )
    return [
        (
            r.deleted_data_files_count,
            r.deleted_position_delete_files_count,
            r.deleted_equality_delete_files_count,
            r.deleted_manifests_count,
            r.deleted_manifest_lists_count,
            r.deleted_statistics_files_count,
        )
    ]


def _orphans(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    view = args.get("file_list_view")
    # `prefix_listing` (Java: list through the FileIO's `SupportsPrefixOperations` instead of
    # Hadoop's file system): icefloe always lists through its FileIO by prefix, either way.
    r = table.maintenance.remove_orphan_files(
        older_than=args.get("older_than"),
        location=args.get("location"),
        dry_run=bool(args.get("dry_run") or False),
        prefix_mismatch_mode=str(args.get("prefix_mismatch_mode") or "error").lower(),
        equal_schemes=args.get("equal_schemes"),
        equal_authorities=args.get("equal_authorities"),
        file_list=None if view is None else _file_list_view(ctx.spark, str(view)),
    )
    return [(location,) for location in r.orphan_file_locations]


_FILE_PATH, _LAST_MODIFIED = "file_path", "last_modified"


def _file_list_view(spark: Any, view: str) -> list[tuple[str, int]]:
    """The rows of `file_list_view` (`file_path` string, `last_modified` timestamp, as Java's
    `compareToFileList` requires, with its messages) as (location, epoch ms); rows with a
    null in either are left out, as Java's filters leave them."""
    import pyarrow as pa

    from icefloe.spark._session import collect_arrow

    df = spark.table(view)
    fields = {f.name: f for f in df.schema.fields}
    for name, kind, wanted in (
        (_FILE_PATH, "StringType", "string"),
        (_LAST_MODIFIED, "TimestampType", "timestamp"),
    ):
        if name not in fields:
            raise ValidationError(f"{name} does not exist. Available: {', '.join(fields)}")
        found = type(fields[name].dataType).__name__
        if found != kind:
            raise ValidationError(f"Invalid {name} column: {found} is not a {wanted}")
    batches = collect_arrow(
        df.select(_FILE_PATH, _LAST_MODIFIED).where(
            f"{_FILE_PATH} IS NOT NULL AND {_LAST_MODIFIED} IS NOT NULL"
        )
    )
    out: list[tuple[str, int]] = []
    for batch in batches:
        micros = batch.column(1).cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()
        out.extend((path, m // 1000) for path, m in zip(batch.column(0).to_pylist(), micros))
    return out


# Java's rewrite options (kebab-case) -> icefloe's keyword arguments.
_REWRITE_OPTIONS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "min-input-files": ("min_input_files", int),
    "target-file-size-bytes": ("target_file_size_bytes", int),
    "delete-file-threshold": ("delete_file_threshold", int),
    "partial-progress.enabled": ("partial_progress", lambda v: str(v).lower() == "true"),
    "partial-progress.max-commits": ("partial_progress_max_commits", int),
    "min-file-size-bytes": ("min_file_size_bytes", int),
    "max-file-size-bytes": ("max_file_size_bytes", int),
    "max-file-group-size-bytes": ("max_file_group_size_bytes", int),
    "max-file-group-input-files": ("max_file_group_input_files", int),
    "delete-ratio-threshold": ("delete_ratio_threshold", float),
    "rewrite-all": ("rewrite_all", lambda v: str(v).lower() == "true"),
    "remove-dangling-deletes": ("remove_dangling_deletes", lambda v: str(v).lower() == "true"),
    "use-starting-sequence-number": ("use_starting_sequence_number", lambda v: str(v).lower() == "true"),
    "rewrite-job-order": ("rewrite_job_order", str),
    "output-spec-id": ("output_spec_id", int),
    "max-files-to-rewrite": ("max_files_to_rewrite", int),
    # Java's z-order options (`sort_order => 'zorder(a, b)'`)
    "var-length-contribution": ("var_length_contribution", int),
    "max-output-size": ("max_output_size", int),
}
_EXECUTION_OPTIONS = {"max-concurrent-file-group-rewrites"}


def _options(what: str, options: dict[str, Any] | None, allowed: set[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in (options or {}).items():
        if key in _EXECUTION_OPTIONS:
            continue
        if key not in _REWRITE_OPTIONS or (allowed is not None and key not in allowed):
            raise NotSupportedError(f"{what} option {key!r}: not supported by icefloe")
        name, convert = _REWRITE_OPTIONS[key]
        out[name] = convert(value)
    return out


def _where(ctx: Context, table: Table, where: str | None) -> Any:
    if where is None:
        return None
    from icefloe.spark.sql.filters import true_of

    fields = {f.name.lower(): f for f in table.schema().fields}

    def lookup(qualifier: str | None, name: str) -> tuple[str, str] | None:
        f = fields.get(name.lower())
        if qualifier is not None or f is None or not f.field_type.is_primitive:
            return None
        return f.name, str(f.field_type.to_json())

    predicate = sqlglot.parse_one(f"SELECT 1 WHERE {where}", dialect=IcebergSpark).args["where"].this
    found = true_of(predicate, lookup, ctx.timestamps())
    if found is None:
        raise NotSupportedError(f"where => {where!r}: not an exact icefloe filter")
    return found


def _rewrite_data_files(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    options = _options("rewrite_data_files", args.get("options"))
    options.setdefault("remove_dangling_deletes", False)  # Java's default (the Python API's is True)
    strategy = str(args.get("strategy") or "binpack").lower()
    r = table.maintenance.rewrite_data_files(
        filter=_where(ctx, table, args.get("where")),
        strategy=strategy,
        sort_order=args.get("sort_order"),
        spark=ctx.spark,
        **options,
    )
    return [
        (
            r.rewritten_data_files_count,
            r.added_data_files_count,
            r.rewritten_bytes_count,
            r.failed_data_files_count,
            r.removed_delete_files_count,
        )
    ]


def _rewrite_manifests(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    spec_id, sort_by = args.get("spec_id"), args.get("sort_by")
    r = table.maintenance.rewrite_manifests(
        spec_id=None if spec_id is None else int(spec_id),
        sort_by=None if sort_by is None else [str(n) for n in sort_by],
    )
    return [(r.rewritten_manifests_count, r.added_manifests_count)]


def _rewrite_position_deletes(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    allowed = {
        "min-input-files",
        "target-file-size-bytes",
        "rewrite-all",
        "min-file-size-bytes",
        "max-file-size-bytes",
        "max-file-group-size-bytes",
        "max-file-group-input-files",
    }
    options = _options("rewrite_position_delete_files", args.get("options"), allowed)
    r = table.maintenance.rewrite_position_delete_files(
        filter=_where(ctx, table, args.get("where")), spark=ctx.spark, **options
    )
    return [
        (
            r.rewritten_delete_files_count,
            r.added_delete_files_count,
            r.rewritten_bytes_count,
            r.added_bytes_count,
        )
    ]


def _compute_table_stats(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's ComputeTableStatsProcedure: the statistics file's path, or no row when the table
    has no snapshot. Sketched on the session's executors, as Java's procedure."""
    columns = args.get("columns")
    sid = args.get("snapshot_id")
    stats = table.maintenance.compute_table_stats(
        columns=None if columns is None else [str(c) for c in columns],
        snapshot_id=None if sid is None else int(sid),
        spark=ctx.spark,
    )
    return [] if stats is None else [(stats.statistics_path,)]


def _compute_partition_stats(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's ComputePartitionStatsProcedure: the partition statistics file's path, or no row
    when there is nothing to compute (no snapshot, an empty one)."""
    sid = args.get("snapshot_id")
    stats = table.maintenance.compute_partition_stats(snapshot_id=None if sid is None else int(sid))
    return [] if stats is None else [(stats.statistics_path,)]


def _rewrite_table_path(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    create = args.get("create_file_list")
    r = table.maintenance.rewrite_table_path(
        str(args["source_prefix"]),
        str(args["target_prefix"]),
        start_version=args.get("start_version"),
        end_version=args.get("end_version"),
        staging_location=args.get("staging_location"),
        create_file_list=True if create is None else bool(create),
    )
    return [
        (
            r.latest_version,
            r.file_list_location,
            r.rewritten_manifest_file_paths_count,
            r.rewritten_delete_file_paths_count,
        )
    ]


def _ancestors_of(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `AncestorsOfProcedure`: the snapshot (default the current one) and its
    ancestors, newest first, each with its commit time in milliseconds."""
    sid = args.get("snapshot_id")
    if sid is None:
        current = table.current_snapshot()
        if current is None:
            return []
        sid = current.snapshot_id
    times = {s.snapshot_id: s.timestamp_ms for s in table.snapshots()}
    parents = {s.snapshot_id: s.parent_snapshot_id for s in table.snapshots()}
    rows: list[tuple[Any, ...]] = []
    at: int | None = int(sid)
    while at is not None and at in times:
        rows.append((at, times[at]))
        at = parents[at]
    return rows


def _register_table(ctx: Context, table: Table | None, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `RegisterTableProcedure`: the catalog's `register_table`, then the current
    snapshot's id and its summary's total records and data files."""
    location = args.get("metadata_file")
    if not location:
        raise ValidationError("Cannot handle an empty argument metadata_file")
    registered = args["_catalog"].register_table(args["_ident"], str(location))
    current = registered.current_snapshot()
    if current is None:
        return [(None, None, None)]
    summary = current.summary
    return [
        (
            current.snapshot_id,
            _summary_long(summary, "total-records"),
            _summary_long(summary, "total-data-files"),
        )
    ]


def _summary_long(summary: Any, key: str) -> int | None:
    value = summary.get(key)
    return None if value is None else int(value)


def _changelog_range(table: Table, options: dict[str, Any]) -> tuple[Any, Any, bool]:
    """(start snapshot id, exclusive; end snapshot id; whether the scan is empty) from the
    changelog options, as Java's `SparkScanBuilder.buildChangelogScan`: `start-timestamp` is
    the oldest current ancestor at or after it (itself when committed at that very millisecond,
    else its parent: the range then holds it), `end-timestamp` the newest ancestor at or
    before it."""
    start, end = options.get("start-snapshot-id"), options.get("end-snapshot-id")
    start_ts, end_ts = options.get("start-timestamp"), options.get("end-timestamp")
    for key, a, b in (("start", start, start_ts), ("end", end, end_ts)):
        if a is not None and b is not None:
            raise ValidationError(f"Cannot set both {key}-snapshot-id and {key}-timestamp for changelogs")
    if start_ts is not None and end_ts is not None and int(start_ts) >= int(end_ts):
        raise ValidationError("Cannot set start-timestamp to be greater than end-timestamp for changelogs")
    ancestors = []  # newest first
    snapshot = table.current_snapshot()
    while snapshot is not None:
        ancestors.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = None if parent is None else table.snapshot_by_id(parent)
    empty = False
    if start_ts is not None:
        millis = int(start_ts)
        if not ancestors or millis > ancestors[0].timestamp_ms:
            empty = True
        start = _oldest_ancestor_at_or_after(ancestors, millis)
    if end_ts is not None:
        end = next((s.snapshot_id for s in ancestors if s.timestamp_ms <= int(end_ts)), None)
        if (start is None and end is None) or (start is not None and int(start) == end):
            empty = True
    return (None if start is None else int(start)), (None if end is None else int(end)), empty


def _oldest_ancestor_at_or_after(ancestors: list[Any], millis: int) -> int | None:
    """Java's `getStartSnapshotId` over `SnapshotUtil.oldestAncestorAfter` (`ancestors`
    newest first)."""
    last = None
    for snapshot in ancestors:
        if snapshot.timestamp_ms < millis:
            return None if last is None or last.parent_snapshot_id is None else int(last.parent_snapshot_id)
        if snapshot.timestamp_ms == millis:
            return int(snapshot.snapshot_id)
        last = snapshot
    if last is None or last.parent_snapshot_id is None:
        return None  # no snapshot, or every one at or after `millis`: from the first
    raise ValidationError(f"Cannot find snapshot older than {millis} (the older ones have expired)")


def _create_changelog_view(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `CreateChangelogViewProcedure`: `icefloe.spark.read_changelog` (carry-over rows
    removed, or only the net changes with `net_changes`; update images when `compute_updates`
    or `identifier_columns` ask for them) as a
    temp view named `changelog_view` (default `<table>_changes`)."""
    from icefloe.spark.changelog import read_changelog

    options = {str(k).lower(): v for k, v in (args.get("options") or {}).items()}
    known = {"start-snapshot-id", "end-snapshot-id", "start-timestamp", "end-timestamp"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise NotSupportedError(f"create_changelog_view option {unknown[0]!r}: not supported by icefloe")
    start, end, empty = _changelog_range(table, options)
    columns = args.get("identifier_columns")
    compute = args.get("compute_updates")
    if compute is None:
        compute = columns is not None
    net = bool(args.get("net_changes"))
    if compute and net:  # Java's CreateChangelogViewProcedure
        raise ValidationError("Not support net changes with update images")
    if compute and not columns:
        schema = table.schema()
        columns = [schema.find_column_name(i) for i in schema.identifier_field_ids]
        if not columns:
            raise ValidationError("Cannot compute the update images because of lack of identifier columns")
    df = read_changelog(
        ctx.spark,
        table,
        None if start is None else int(start),
        None if end is None else int(end),
        [str(c) for c in columns] if compute and columns else None,
        net_changes=net,
    )
    if empty:  # Java's empty changelog scan: the schema, no rows (Spark plans no job for it)
        df = df.limit(0)
    name = args.get("changelog_view") or f"`{args['_ident'][-1]}_changes`"
    df.createOrReplaceTempView(str(name).strip("`") if str(name).startswith("`") else str(name))
    return [(str(name),)]


_PROCEDURES = {
    "rollback_to_snapshot": _Procedure(
        ("table", "snapshot_id"),
        2,
        _SNAPSHOT_CHANGE,
        _snapshot_change(lambda ms, a: ms.rollback_to_snapshot(int(a["snapshot_id"]))),
    ),
    "rollback_to_timestamp": _Procedure(
        ("table", "timestamp"),
        2,
        _SNAPSHOT_CHANGE,
        _snapshot_change(lambda ms, a: ms.rollback_to_timestamp(int(a["timestamp"]))),
    ),
    "set_current_snapshot": _Procedure(
        ("table", "snapshot_id", "ref"), 1, _SNAPSHOT_CHANGE, _snapshot_change(_set_current)
    ),
    "cherrypick_snapshot": _Procedure(
        ("table", "snapshot_id"),
        2,
        [("source_snapshot_id", _LONG), ("current_snapshot_id", _LONG)],
        _cherrypick,
    ),
    "publish_changes": _Procedure(
        ("table", "wap_id"),
        2,
        [("source_snapshot_id", f"{_LONG} NOT NULL"), ("current_snapshot_id", f"{_LONG} NOT NULL")],
        _publish_changes,
    ),
    "fast_forward": _Procedure(
        ("table", "branch", "to"),
        3,
        [("branch_updated", _STRING), ("previous_ref", _LONG), ("updated_ref", _LONG)],
        _fast_forward,
    ),
    "expire_snapshots": _Procedure(
        (
            "table",
            "older_than",
            "retain_last",
            "max_concurrent_deletes",
            "stream_results",
            "snapshot_ids",
            "clean_expired_metadata",
        ),
        1,
        [
            ("deleted_data_files_count", _LONG),
            ("deleted_position_delete_files_count", _LONG),
            ("deleted_equality_delete_files_count", _LONG),
            ("deleted_manifest_files_count", _LONG),
            ("deleted_manifest_lists_count", _LONG),
            ("deleted_statistics_files_count", _LONG),
        ],
        _expire,
    ),
    "compute_table_stats": _Procedure(
        ("table", "snapshot_id", "columns"), 1, [("statistics_file", _STRING)], _compute_table_stats
    ),
    "compute_partition_stats": _Procedure(
        ("table", "snapshot_id"), 1, [("partition_statistics_file", _STRING)], _compute_partition_stats
    ),
    "remove_orphan_files": _Procedure(
        (
            "table",
            "older_than",
            "location",
            "dry_run",
            "max_concurrent_deletes",
            "file_list_view",
            "equal_schemes",
            "equal_authorities",
            "prefix_mismatch_mode",
            "stream_results",
            "prefix_listing",
        ),
        1,
        [("orphan_file_location", _STRING)],
        _orphans,
    ),
    "rewrite_data_files": _Procedure(
        ("table", "strategy", "sort_order", "options", "where"),
        1,
        [
            ("rewritten_data_files_count", _INT),
            ("added_data_files_count", _INT),
            ("rewritten_bytes_count", _LONG),
            ("failed_data_files_count", _INT),
            ("removed_delete_files_count", _INT),
        ],
        _rewrite_data_files,
    ),
    "rewrite_manifests": _Procedure(
        ("table", "use_caching", "spec_id", "sort_by"),
        1,
        [("rewritten_manifests_count", _INT), ("added_manifests_count", _INT)],
        _rewrite_manifests,
    ),
    "rewrite_position_delete_files": _Procedure(
        ("table", "options", "where"),
        1,
        [
            ("rewritten_delete_files_count", _INT),
            ("added_delete_files_count", _INT),
            ("rewritten_bytes_count", _LONG),
            ("added_bytes_count", _LONG),
        ],
        _rewrite_position_deletes,
    ),
    "rewrite_table_path": _Procedure(
        (
            "table",
            "source_prefix",
            "target_prefix",
            "start_version",
            "end_version",
            "staging_location",
            "create_file_list",
        ),
        3,
        [
            ("latest_version", _STRING),
            ("file_list_location", _STRING),
            ("rewritten_manifest_file_paths_count", _INT),
            ("rewritten_delete_file_paths_count", _INT),
        ],
        _rewrite_table_path,
    ),
    "ancestors_of": _Procedure(
        ("table", "snapshot_id"), 1, [("snapshot_id", _LONG), ("timestamp", _LONG)], _ancestors_of
    ),
    "register_table": _Procedure(
        ("table", "metadata_file"),
        2,
        [("current_snapshot_id", _LONG), ("total_records_count", _LONG), ("total_data_files_count", _LONG)],
        _register_table,
        loads=False,
    ),
    "add_files": _Procedure(
        ("table", "source_table", "partition_filter", "check_duplicate_files", "parallelism"),
        2,
        [("added_files_count", f"{_LONG} NOT NULL"), ("changed_partition_count", _LONG)],
        migration_procedures.add_files,
    ),
    "snapshot": _Procedure(
        ("source_table", "table", "location", "properties", "parallelism", "ignore_missing_files"),
        2,
        [("imported_files_count", f"{_LONG} NOT NULL")],
        migration_procedures.snapshot,
        loads=False,
    ),
    "migrate": _Procedure(
        ("table", "properties", "drop_backup", "backup_table_name", "parallelism", "ignore_missing_files"),
        1,
        [("migrated_files_count", f"{_LONG} NOT NULL")],
        migration_procedures.migrate,
        loads=False,
    ),
    "create_changelog_view": _Procedure(
        ("table", "changelog_view", "options", "compute_updates", "identifier_columns", "net_changes"),
        1,
        [("changelog_view", f"{_STRING} NOT NULL")],
        _create_changelog_view,
    ),
}
# Arguments Java takes as timestamps: icefloe takes them as epoch milliseconds.
_TIMESTAMPS = {"older_than", "timestamp"}


def call(ctx: Context, command: exp.Command) -> Any:
    """Runs a `CALL` statement naming an icefloe catalog (or, with none named, while an icefloe
    catalog is current); None when it is Spark's."""
    rest = command.expression
    text = rest.name if isinstance(rest, exp.Expr) else str(rest or "")
    try:
        tree = sqlglot.parse_one(text, dialect=IcebergSpark)
    except sqlglot.errors.ParseError as e:
        raise ValidationError(f"cannot parse CALL {text}: {e}") from None
    parts: list[str] = []
    node: exp.Expr | None = tree
    while isinstance(node, exp.Dot):
        parts.insert(0, node.expression.name if not isinstance(node.expression, exp.Anonymous) else "")
        node = node.this
    if not isinstance(tree, exp.Dot) or not isinstance(tree.expression, exp.Anonymous):
        return None
    if isinstance(node, exp.Expr):
        parts.insert(0, node.name)
    function = tree.expression
    names = [*parts[:-1], str(function.this)]
    if len(names) == 3 and ctx.resolver.is_catalog(names[0]):
        catalog_name = names[0]
    elif len(names) == 2 and ctx.resolver.current_catalog is not None:
        catalog_name = ctx.resolver.current_catalog
    else:
        return None
    if names[-2].lower() != "system":
        raise NotSupportedError(f"CALL {'.'.join(names)}: icefloe procedures are in `system`")
    procedure = _PROCEDURES.get(names[-1].lower())
    if procedure is None:
        raise NotSupportedError(
            f"CALL {catalog_name}.system.{names[-1]}: not supported by icefloe.spark.sql yet"
        )
    args = _arguments(ctx, names[-1], procedure, list(function.expressions))
    args["_catalog"] = ctx.resolver.catalog(catalog_name)
    args["_ident"] = _ident(ctx, catalog_name, str(args["table"]))
    table = args["_catalog"].load_table(args["_ident"]) if procedure.loads else None
    rows = procedure.run(ctx, table, args)
    schema = ", ".join(f"{name} {kind}" for name, kind in procedure.columns)
    return ctx.spark.createDataFrame(rows, schema)


# The numeric arguments of Java's procedures and their Spark types: a quoted value is refused
# with Java's error (`snapshot_id => '123'`), not read as the number.
_NUMBER_ARGS = {
    "snapshot_id": "LongType",
    "spec_id": "IntegerType",
    "retain_last": "IntegerType",
    "max_concurrent_deletes": "IntegerType",
    "parallelism": "IntegerType",
}


def _arguments(ctx: Context, name: str, procedure: _Procedure, given: list[exp.Expr]) -> dict[str, Any]:
    named = [a for a in given if isinstance(a, exp.Kwarg)]
    if named and len(named) != len(given):
        raise ValidationError(f"CALL {name}: named and positional arguments cannot be mixed")
    pairs: list[tuple[str, exp.Expr]] = []
    if named:
        for a in named:
            key = a.this.name.lower()
            if key not in procedure.params:
                raise ValidationError(f"CALL {name}: unknown argument {key!r}")
            pairs.append((key, a.expression))
    else:
        if len(given) > len(procedure.params):
            raise ValidationError(
                f"CALL {name}: too many arguments, expected at most {len(procedure.params)}"
            )
        pairs = list(zip(procedure.params, given))
    args = {key: _value(ctx, key, e) for key, e in pairs}
    for key, spark_type in _NUMBER_ARGS.items():
        if isinstance(args.get(key), str):  # Java's procedures refuse a string for a number
            raise ValidationError(f"Wrong arg type for {key}: cannot cast StringType to {spark_type}")
    for key in procedure.params[: procedure.required]:
        if args.get(key) is None:
            raise ValidationError(f"CALL {name}: missing required argument {key!r}")
    for key in list(args):
        if key in _IGNORED:
            del args[key]
    return args


def _value(ctx: Context, key: str, e: exp.Expr) -> Any:
    if key in _TIMESTAMPS:
        if isinstance(e, exp.Literal) and not e.is_string:
            return int(e.this)  # Java takes a long here as milliseconds
        sql = f"SELECT unix_millis(CAST({to_spark_sql(e)} AS TIMESTAMP))"
        return ctx.spark.sql(sql).first()[0]
    if isinstance(e, exp.Literal):
        return str(e.this) if e.is_string else int(e.this) if e.is_int else float(e.this)
    if isinstance(e, exp.Boolean):
        return bool(e.this)
    if isinstance(e, exp.Null):
        return None
    value = ctx.spark.sql(f"SELECT {to_spark_sql(e)}").first()[0]
    return dict(value) if isinstance(value, dict) else value


def _ident(ctx: Context, catalog_name: str, name: str) -> tuple[str, ...]:
    """The procedure's table argument as an identifier in the procedure's catalog."""
    parts = [p.name for p in exp.to_table(name, dialect=IcebergSpark).parts]
    if len(parts) >= 3 and parts[0] == catalog_name:
        parts = parts[1:]
    if len(parts) == 1:
        parts = [*ctx.resolver.state.namespace, parts[0]]
    return tuple(parts)
