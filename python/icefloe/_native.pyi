# Stubs for icefloe._native, the Rust core (rust/python/). This file is the contract
# between the Rust bindings and the Python package; it is checked by mypy.stubtest.
# Metadata objects cross as JSON strings (small, rare); data crosses as Arrow (C Data
# Interface); file descriptors and scan tasks cross as JSON strings (one per file).

from typing import Any, final

import pyarrow as pa

__version__: str

# ---- exceptions (declared as icefloe.exceptions.*) ----
class IcefloeError(Exception): ...
class ValidationError(IcefloeError): ...  # bad user input: schema mismatch, bad argument
class InvalidDataError(IcefloeError): ...  # a corrupt or non-spec file (names the file)
class NotSupportedError(IcefloeError): ...  # valid Iceberg, not implemented yet
class NotFoundError(IcefloeError): ...  # a file that should exist does not
class CommitConflictError(IcefloeError): ...  # the table changed under a commit
class IcefloeIOError(IcefloeError): ...  # permissions, disk, network
class ResourceLimitError(IcefloeError): ...  # valid input past a stated budget (names it)

# ---- spec model ----
def schema_from_arrow(schema: pa.Schema, nanosecond_timestamps: bool = False) -> str:
    """Iceberg schema JSON for an Arrow schema: uses `PARQUET:field_id` metadata when every
    field has it, else assigns fresh ids 1..n (top-level fields first, then nested,
    as Iceberg Java's TypeUtil.assignFreshIds does). Non-nullable -> required."""

def schema_to_arrow(schema_json: str) -> pa.Schema:
    """The Arrow schema icefloe reads and writes for an Iceberg schema (field ids in
    `PARQUET:field_id` metadata; timestamptz -> timestamp[us, tz=UTC], timestamp ->
    timestamp[us], uuid -> fixed_size_binary(16), fixed[L] -> fixed_size_binary(L),
    decimal(P,S) -> decimal128(P,S), time -> time64[us])."""

@final
class TableMetadata:
    """Immutable table metadata (v1/v2 read, tolerant of v3 fields; written as v2)."""

    @staticmethod
    def from_json(text: str, metadata_location: str | None = None) -> TableMetadata: ...
    @staticmethod
    def new_table(
        schema_json: str,
        partition_spec_json: str | None,
        sort_order_json: str | None,
        location: str,
        properties: dict[str, str],
        format_version: int = 2,
    ) -> TableMetadata:
        """Metadata for a new table: fresh field ids are NOT reassigned (the caller's ids
        are kept), partition field ids from 1000, `write.parquet.compression-codec=zstd`
        added unless set, as Iceberg Java does."""
    def to_json(self) -> str: ...
    @property
    def metadata_location(self) -> str | None: ...
    def at_location(self, location: str) -> TableMetadata:
        """This metadata as the version a catalog just wrote (its `to_json()`) at `location`."""
    @property
    def format_version(self) -> int: ...
    @property
    def table_uuid(self) -> str | None: ...
    @property
    def location(self) -> str: ...
    @property
    def data_location(self) -> str: ...
    @property
    def metadata_root(self) -> str: ...
    def new_data_location(self, file_name: str, partition_path: str | None = None) -> str: ...
    @property
    def last_sequence_number(self) -> int: ...
    @property
    def last_updated_ms(self) -> int: ...
    @property
    def last_column_id(self) -> int: ...
    @property
    def current_schema_id(self) -> int: ...
    @property
    def default_spec_id(self) -> int: ...
    @property
    def default_sort_order_id(self) -> int: ...
    @property
    def properties(self) -> dict[str, str]: ...
    def metrics_modes(self) -> dict[int, str]: ...
    @property
    def current_snapshot_id(self) -> int | None: ...
    @property
    def next_row_id(self) -> int | None: ...
    def schema_json(self, schema_id: int | None = None) -> str:
        """The schema with this id (default: current); KeyError-like NotFoundError if unknown."""
    def schemas_json(self) -> list[str]: ...
    def spec_json(self, spec_id: int | None = None) -> str: ...
    def specs_json(self) -> list[str]: ...
    def sort_orders_json(self) -> list[str]: ...
    def sort_order_json(self, order_id: int | None = None) -> str: ...
    def snapshots(self) -> list[dict[str, object]]:
        """Each: snapshot-id, parent-snapshot-id (or None), sequence-number, timestamp-ms,
        manifest-list, summary (dict[str,str] incl. operation), schema-id (or None)."""
    def snapshot_by_id(self, snapshot_id: int) -> dict[str, object] | None: ...
    def refs(self) -> dict[str, dict[str, object]]: ...
    def snapshot_log(self) -> list[dict[str, int]]: ...
    def metadata_log(self) -> list[dict[str, object]]: ...
    def statistics(self) -> list[dict[str, Any]]: ...
    def partition_statistics(self) -> list[dict[str, Any]]: ...
    def with_properties(self, updates: dict[str, str], removals: list[str]) -> TableMetadata: ...
    def with_location(self, location: str) -> TableMetadata: ...
    def apply_updates(self, updates_json: str) -> TableMetadata: ...
    def branch_view(self, branch: str) -> TableMetadata: ...
    def commit_to_branch(self, produced: TableMetadata, branch: str | None) -> TableMetadata: ...

# ---- write (executors) ----
def write_default_array(metadata: TableMetadata, field_id: int, rows: int) -> pa.Array | None:
    """`rows` copies of the write-default of the current schema's top-level field
    `field_id`, or None when it has none."""

def check_arrow_schema(metadata: TableMetadata, schema: pa.Schema) -> None:
    """Raises ValidationError naming every column of `schema` that does not fit the
    table's current schema (missing required column, unknown column, wrong type)."""

def import_parquet_files(
    metadata: TableMetadata,
    paths: list[str],
    partitions: list[list[str | None]] | None = None,
    spec_id: int | None = None,
) -> list[str]:
    """DataFile descriptors for existing Parquet files (`table.add_files`)."""

def import_name_mapping(metadata: TableMetadata) -> str:
    """The name mapping JSON `add_files` reads files without field ids with."""

def write_data_files(
    metadata: TableMetadata,
    batches: pa.RecordBatchReader,
    write_id: str,
    task_id: int,
    *,
    mode: str | None = None,
    max_open_files: int | None = None,
    sort: bool | None = None,
    sort_buffer_bytes: int | None = None,
    target_file_size_bytes: int | None = None,
    spec_id: int | None = None,
    sort_order: str | None = None,
    zorder: str | None = None,
) -> list[str]:
    """Writes the batches as Parquet data files under the table's data location
    (`write.data.path`, default `<location>/data`), split by the default spec's (or
    `spec_id`'s) partition
    transforms (computed on Arrow arrays), rolling at `write.target-file-size-bytes`, file
    names `<task_id:05>-<write_id>-<n:05>.parquet` (every file of one write carries
    write_id). `mode`: "fanout" (default; any input order, at most `max_open_files` open
    files, default `write.fanout.max-open-files` or 1000, least recently used closed first)
    or "clustered" (input grouped by partition; a partition that comes back raises
    ValidationError). `sort`: sort each partition's rows by the table's default sort order
    (buffering up to `sort_buffer_bytes` of Arrow memory over all partitions, default
    256 MiB, then spilling the largest buffer as a sorted run to local disk and merging
    the runs at the end): each file is sorted and a partition's files hold disjoint key
    ranges one after the other. Default: sort when the table has a sort order (of primitive
    columns or struct fields), as Iceberg Java's Spark writes order a sorted table's rows;
    False keeps the input order. `sort_order` (JSON): sort by this order instead of the
    default one, its order id recorded on the files (0 allowed: an order the table lacks).
    `zorder` (JSON, see `check_zorder`): sort by Iceberg Java's z-values of its columns
    instead, the files recording order id 0 as Java's do.
    Returns one DataFile descriptor (JSON) per file. On error, deletes the files it wrote
    and raises (ValidationError for a null in a required field, naming the column)."""

def check_sort_order(metadata: TableMetadata, sort_order: str) -> None:
    """Checks a sort order (JSON) as `write_data_files(sort_order=...)` will: fields on
    primitive columns of the current schema, transforms that apply to them."""

def check_zorder(metadata: TableMetadata, zorder: str) -> None:
    """Checks a z-order (JSON `{"source-ids": [...], "var-length-contribution": n,
    "max-output-size": n}`) as `write_data_files(zorder=...)` will: top-level columns of the
    current schema of types Iceberg Java can z-order, options of at least 1."""

def z_values(
    arrays: list[pa.Array],
    types: list[str],
    var_length_contribution: int = 8,
    max_output_size: int = 2147483647,
) -> pa.Array:
    """The z-values (binary) of rows whose columns are `arrays` of Iceberg types `types`
    (`int`, `string`, `timestamptz`, ...), byte for byte as Iceberg Java's z-order rewrite
    computes them (its `var-length-contribution` and `max-output-size` options)."""

def apply_transform(transform: str, source_type: str, array: pa.Array) -> pa.Array:
    """A partition transform (`bucket[16]`, `truncate[4]`, `day`, ...) applied to an array
    of values of Iceberg type `source_type` (`long`, `decimal(9, 2)`, `timestamptz`, ...),
    vectorised; the same results as Iceberg Java."""

def delete_rows(
    metadata: TableMetadata, tasks: list[str], write_id: str, task_id: int
) -> tuple[list[str], int, list[str]]:
    """Merge-on-read delete task: reads the positions of the rows each planned task's
    residual matches (existing deletes applied) and writes them as position-delete files
    (`write.delete.granularity`). With file granularity the positions of file-scoped delete
    files already applying to a data file are merged in, as Java does. Returns (delete file
    descriptors, rows deleted, descriptors of the replaced delete files to remove)."""

def write_position_deletes(
    metadata: TableMetadata,
    tasks: list[str],
    rows: pa.RecordBatchReader,
    write_id: str,
    task_id: int,
) -> tuple[list[str], int, list[str]]:
    """Position-delete files from (file_path, pos) rows of the data files of these planned
    tasks (JSON). Returns (delete file descriptors, rows deleted, descriptors of the replaced
    file-scoped delete files to remove)."""

def write_equality_deletes(
    metadata: TableMetadata,
    equality_ids: list[int],
    keys: pa.RecordBatchReader,
    write_id: str,
    task_id: int,
    spec_ids: list[int] | None = None,
) -> list[str]:
    """Equality-delete files on `equality_ids` from key rows (the columns of
    `equality_delete_schema`), partitioned by the table's default spec or, with `spec_ids`,
    one copy per spec, each partitioned by it (`-s<spec id>` after the write id in the file
    names of all but the first)."""

def equality_delete_specs(
    metadata: TableMetadata, snapshot_id: int | None, equality_ids: list[int]
) -> list[int] | None:
    """The partition specs equality deletes on these field ids must be written under to
    reach every live row of `snapshot_id`: the default spec and every spec with live data
    files (or only an unpartitioned one of them). None when a live spec is partitioned by a
    column outside the keys: its rows can only be rewritten (copy-on-write)."""

def equality_delete_schema(metadata: TableMetadata, equality_ids: list[int]) -> pa.Schema:
    """The Arrow schema of equality-delete rows on these field ids; ValidationError naming
    the column when Iceberg refuses it (float, nested, a partition source not among them)."""

# ---- commit (driver; rust/python/commit.rs) ----
def fast_append(
    metadata: TableMetadata,
    data_files: list[str],
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """Builds the next metadata with a new `append` snapshot adding these files: writes a
    manifest and a manifest list under `<location>/metadata/` and returns the new metadata
    (not yet committed: the catalog swaps it in) and the paths of the files written, so a
    caller whose swap fails can delete them."""

def merge_append(
    metadata: TableMetadata,
    data_files: list[str],
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """Like fast_append, merging small data manifests per `commit.manifest-merge.enabled`,
    `commit.manifest.target-size-bytes` and `commit.manifest.min-count-to-merge` (Iceberg
    Java's MergeAppend)."""

def overwrite_files(
    metadata: TableMetadata,
    added_files: list[str],
    removed_paths: list[str],
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """A snapshot removing the live data files at `removed_paths` and adding `added_files`:
    `delete` (removals only), `append` (additions only) or `overwrite`. A removed path that
    is not live raises CommitConflictError."""

def replace_partitions(
    metadata: TableMetadata,
    added_files: list[str],
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """An `overwrite` snapshot (`replace-partitions=true`) removing every live data file in
    the partitions the added files write to."""

def partitions_of(metadata: TableMetadata, data_files: list[str]) -> list[str]:
    """The partition keys (`<spec id>:<partition path>`) of these files."""

def validate_commit(
    metadata: TableMetadata,
    start_snapshot_id: int | None,
    conflicting_data: bool | str | list[str] | None = None,
    conflicting_deletes: bool | str | list[str] | None = None,
    removed_paths: list[str] | None = None,
    case_sensitive: bool = True,
    required_paths: list[str] | None = None,
) -> None:
    """Raises CommitConflictError naming the first snapshot committed since
    `start_snapshot_id` that added data files (or delete files) in scope (True: any; a str:
    those that may match that row filter (unbound expression JSON, bound to the current
    schema) by partition and column stats; a list: those partition keys), removed a data
    file in the deletes scope, or removed one of `removed_paths` or `required_paths` (the
    data files a row delta's position deletes reference)."""

def cherrypick(metadata: TableMetadata, snapshot_id: int) -> tuple[TableMetadata, list[str]]:
    """Cherry-picks a snapshot onto main (Java's `CherryPickOperation`): fast-forward, or a
    new snapshot re-applying an append or dynamic partition overwrite."""

def row_delta(
    metadata: TableMetadata,
    data_files: list[str],
    delete_files: list[str],
    removed_paths: list[str] | None = None,
    snapshot_properties: dict[str, str] | None = None,
    removed_delete_paths: list[str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """A row delta (Java's `RowDelta`): adds data files and position / equality delete
    files (descriptors), removes whole live data files and replaced delete files, as one
    `delete` (only deletes added) or `overwrite` snapshot."""

def plan_rewrite_data_files(
    metadata: TableMetadata,
    *,
    filter_json: str | None = None,
    case_sensitive: bool = True,
    target_file_size_bytes: int | None = None,
    min_file_size_bytes: int | None = None,
    max_file_size_bytes: int | None = None,
    min_input_files: int | None = None,
    delete_file_threshold: int | None = None,
    delete_ratio_threshold: float | None = None,
    max_file_group_size_bytes: int | None = None,
    max_file_group_input_files: int | None = None,
    rewrite_all: bool = False,
    max_files_to_rewrite: int | None = None,
    rewrite_job_order: str | None = None,
    output_spec_id: int | None = None,
) -> tuple[int | None, list[str]]:
    """Plans a compaction of the current snapshot by Java's bin-pack rules: (snapshot id,
    groups as JSON objects with `partition`, `input_size`, `expected_output_files`,
    `split_size`, `max_output_file_size`, `output_spec_id`, `tasks` and `combined`)."""

def rewrite_files(
    metadata: TableMetadata,
    start_snapshot_id: int | None,
    rewritten_files: list[str],
    added_files: list[str],
    *,
    use_starting_sequence_number: bool = True,
    remove_dangling_deletes: bool = False,
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """A `replace` snapshot (Java's `RewriteFiles`) replacing the rewritten data files
    (descriptors) by the added ones, validated against the snapshots since
    `start_snapshot_id`; delete files that no longer apply are removed."""

def rewrite_manifests(
    metadata: TableMetadata,
    *,
    spec_id: int | None = None,
    snapshot_properties: dict[str, str] | None = None,
    sort_by: list[str] | None = None,
) -> tuple[TableMetadata, list[str], str] | None:
    """Rewrites the current snapshot's manifests of one spec clustered by partition (Java's
    `RewriteManifests`): None when there is nothing to rewrite, else (uncommitted metadata of
    the `replace` snapshot, files written, outcome JSON with `replaced`, `added` and
    `entries_processed`)."""

def plan_rewrite_position_delete_files(
    metadata: TableMetadata,
    *,
    filter_json: str | None = None,
    case_sensitive: bool = True,
    target_file_size_bytes: int | None = None,
    min_file_size_bytes: int | None = None,
    max_file_size_bytes: int | None = None,
    min_input_files: int | None = None,
    max_file_group_size_bytes: int | None = None,
    max_file_group_input_files: int | None = None,
    rewrite_all: bool = False,
) -> tuple[int | None, list[str]]:
    """Plans a rewrite of the current snapshot's position delete files by Java's bin-pack
    rules: (snapshot id, groups as JSON objects with `partition`, `files`, `input_size`,
    `max_output_file_size` and `max_data_sequence_number`)."""

def rewrite_position_delete_groups(
    metadata: TableMetadata, groups: list[str], write_id: str, task_id: int
) -> list[tuple[list[str], int, int]]:
    """Rewrites planned groups, dropping positions of data files no longer live: per group
    (new delete file descriptors, positions kept, positions dropped)."""

def rewrite_position_deletes(
    metadata: TableMetadata,
    start_snapshot_id: int | None,
    rewritten_files: list[str],
    added: list[tuple[str, int]],
    *,
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """A `replace` snapshot replacing position delete files (descriptors) by new ones, each
    with the data sequence number it keeps; a rewritten file no longer live is a conflict."""

def plan_row_removal(
    metadata: TableMetadata, filter_json: str, case_sensitive: bool = True
) -> tuple[list[str], list[str]]:
    """For removing the rows of a row filter (unbound expression JSON) from the current
    snapshot, from metadata alone: (paths of the live data files every row of which matches,
    FileScanTask JSON of those that must be read to know). Files that cannot match are left
    out."""

def files_not_matching(
    metadata: TableMetadata, filter_json: str, data_files: list[str], case_sensitive: bool = True
) -> list[str]:
    """Paths of the files (DataFile descriptors) not proven by partition or column stats to
    hold only rows matching the row filter (unbound expression JSON)."""

# ---- FileIO (rust/python/io.rs): every storage through one implementation ----
def register_file_io(prefix: str, properties: dict[str, str]) -> None:
    """FileIO properties (`s3.endpoint`, `s3.access-key-id`, ...) for every location under
    `prefix`; the longest registered prefix of a location wins."""

def file_io_properties(location: str) -> dict[str, str]:
    """The properties registered for a location, secret values shown as `***`."""

def is_secret_property(key: str) -> bool: ...
def parse_location(location: str) -> tuple[str, str, str]:
    """(kind, storage root, key): kind is local, s3, gcs, azure or memory."""

def io_read(location: str) -> bytes: ...
def io_write_new(location: str, data: bytes) -> bool:
    """Creates a file that must not exist, all or nothing; False if it already exists.
    NotSupportedError on a store without conditional writes."""

def io_write(location: str, data: bytes) -> None:
    """Writes a file, replacing it (hints, never commits)."""

def io_exists(location: str) -> bool: ...
def io_list_dir(location: str) -> tuple[list[str], list[tuple[str, int]]]:
    """(sub-folder names, [(file name, size)]); a missing folder is empty."""

def io_list(location: str) -> list[tuple[str, int]]:
    """Every file under a folder, recursively: [(location, size)]."""

def io_delete_prefix(location: str) -> None: ...
def delete_files(paths: list[str]) -> None:
    """Deletes files (missing ones are ignored; object stores in parallel)."""

@final
class InputFileHandle:
    """A file opened for ranged reads (table.io's input streams)."""

    def __new__(cls, location: str) -> InputFileHandle: ...
    def __len__(self) -> int: ...
    def read_at(self, start: int, length: int) -> bytes: ...

# ---- scan (driver plans, executors read) ----
def plan_files(metadata: TableMetadata, snapshot_id: int | None = None) -> list[str]:
    """One whole-file FileScanTask (JSON) per live data file of the snapshot (default:
    current; none -> []), no filter, the applicable delete files attached."""

# ---- scan planning (driver; rust/python/scan.rs) ----
@final
class ManifestCache:
    """Decoded manifests shared by the scans of one table object (path + length keys)."""

    def __new__(cls, max_entries: int = 250000) -> ManifestCache: ...
    def stats(self) -> tuple[int, int, int, int]:
        """(manifests cached, entries cached, hits, misses)"""
    def clear(self) -> None: ...

@final
class FileScanTaskView:
    """One planned task, read from the plan held in Rust."""

    @property
    def file_path(self) -> str: ...
    @property
    def record_count(self) -> int: ...
    @property
    def file_size_in_bytes(self) -> int: ...
    @property
    def start(self) -> int: ...
    @property
    def length(self) -> int: ...
    @property
    def data_sequence_number(self) -> int: ...
    @property
    def spec_id(self) -> int: ...
    def file_json(self) -> str: ...
    @property
    def deletes(self) -> list[tuple[str, int, int]]:
        """(path, content 1 = position / 2 = equality, data sequence number) per delete file."""
    def delete_files_json(self) -> list[str]: ...
    @property
    def residual(self) -> str | None: ...
    def to_json(self) -> str: ...

@final
class CombinedTasks:
    """Combined tasks (one Spark partition each), held in Rust."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> bytes:
        """Combined task `i` as JSON bytes: {"tasks": [FileScanTask, ...]}."""
    def task_count(self, i: int) -> int: ...
    def to_json_list(self) -> list[bytes]: ...

@final
class ScanPlan:
    """The planned file scan tasks of one scan, held in Rust."""

    def __len__(self) -> int: ...
    def __getitem__(self, i: int, /) -> FileScanTaskView: ...
    @property
    def snapshot_id(self) -> int | None: ...
    @property
    def metrics(self) -> dict[str, int]: ...
    def record_count(self) -> int: ...
    def tasks_json(self) -> list[str]: ...
    def split_plain_parquet(
        self, refused: set[str] | None = None, rows_filtered_after: bool = False
    ) -> tuple[list[tuple[str, int, int]], ScanPlan]:
        """(path, size, records) of each task a plain field-id Parquet reader reads as Iceberg
        does (no deletes, no residual unless `rows_filtered_after`, whole unencrypted Parquet
        file, identity partition columns in the file), and the other tasks (with the paths
        in `refused`) as a plan."""
    def plain_parquet_blockers(self, rows_filtered_after: bool = False) -> list[tuple[str, str]]:
        """(path, reason) of each task a plain Parquet reader would not read as Iceberg does."""
    def size_in_bytes(self) -> int:
        """The bytes the tasks read (the sum of their lengths)."""
    def combined(
        self,
        target_size: int | None = None,
        open_file_cost: int | None = None,
        lookback: int | None = None,
        parallelism: int | None = None,
    ) -> CombinedTasks:
        """Split at split offsets (else fixed target-size chunks) and bin-pack by the table's
        read.split.* settings unless overridden (Java TableScanUtil.planTasks). With
        `parallelism` and no `target_size`, a scan with fewer splits than slots gets smaller
        splits (Java TableScanUtil.adjustSplitSize; read.split.adaptive-size.enabled)."""

def plan_scan(
    metadata: TableMetadata,
    *,
    snapshot_id: int | None = None,
    ref_name: str | None = None,
    as_of_timestamp: int | None = None,
    from_snapshot_id: int | None = None,
    to_snapshot_id: int | None = None,
    incremental: bool = False,
    row_filter: str | None = None,
    row_filter_json: str | None = None,
    case_sensitive: bool = True,
    include_column_stats: bool = False,
    cache: ManifestCache | None = None,
    threads: int | None = None,
) -> ScanPlan:
    """Plans a scan in Rust (manifests pruned and read in parallel, delete index applied).
    At most one of snapshot_id / ref_name / as_of_timestamp / an incremental range
    (from exclusive, to inclusive, appends only)."""

def resolve_snapshot(
    metadata: TableMetadata,
    *,
    snapshot_id: int | None = None,
    ref_name: str | None = None,
    as_of_timestamp: int | None = None,
) -> int | None:
    """The snapshot id named (None: empty table); ValidationError listing what exists."""

def scan_plan_from_rest(
    metadata: TableMetadata,
    answers: list[str],
    schema_json: str,
    case_sensitive: bool = True,
    snapshot_id: int | None = None,
    planning_time_ns: int = 0,
) -> ScanPlan:
    """The plan of a REST server's scan planning answers (JSON, each with `file-scan-tasks`
    and the `delete-files` they refer to), residuals bound to `schema_json`."""

def row_keys(batch: pa.RecordBatch, columns: list[str]) -> pa.Array:
    """One binary key per row: equal exactly when the rows' `columns` hold equal values."""

def split_combined_task(data: bytes) -> list[str]:
    """The FileScanTask JSONs of a combined task's JSON bytes."""

def read_task(
    task: str,
    projected_schema_json: str,
    batch_size: int = 65536,
    limit: int | None = None,
    name_mapping: str | None = None,
) -> pa.RecordBatchReader:
    """Reads one FileScanTask: the row groups of its byte range, by field id, projecting the
    given schema's columns (a column missing from the file reads as null; `_file` and `_pos`
    by their reserved ids 2147483646 / 2147483645), with the task's position and equality
    deletes applied, as a stream of batches of at most `batch_size` rows with schema
    `schema_to_arrow(projected_schema_json)`, stopping after `limit` rows when given. Data
    files without Parquet field ids are read through `name_mapping` (the table's
    `schema.name-mapping.default` JSON) when given."""

@final
class KeySet:
    """The distinct non-null keys of `keys` (every column a key column; floats refused), for
    a semi-join: a MERGE's source keys probed by the target scan on the executors."""

    def __new__(cls, keys: pa.RecordBatch) -> KeySet: ...
    def __len__(self) -> int: ...
    def semi_join(self, batch: pa.RecordBatch, key_columns: list[str]) -> pa.RecordBatch:
        """The rows of `batch` whose columns `key_columns` (in the set's column order, cast
        to its types) hold a key of the set; a null key matches nothing."""

# ---- expressions (rust/python/expr.rs) ----
def parse_filter(text: str) -> str:
    """JSON of the unbound expression a row-filter string means (ValidationError naming the
    bad token; NotSupportedError for SQL outside the supported subset)."""

def parse_sort_order_terms(
    text: str,
) -> list[tuple[list[list[str]], str | None, list[int], str | None, str | None]]:
    """The terms of Iceberg Java's string form of a sort order, parsed by sqlparser as an
    ORDER BY list: (column paths, transform lower-cased or None for a bare column, integer
    args, "asc" / "desc" or None, "first" / "last" or None). Syntax only; anything but
    columns, calls on columns and integers, ASC / DESC and NULLS FIRST / LAST is a
    ValidationError "sort_order '<text>': expected ..., found ..."."""

def bind_filter(expr_json: str, schema_json: str, case_sensitive: bool = True) -> str:
    """JSON of the expression bound to the schema (field ids, types, converted literals)."""

def filter_mask(
    expr_json: str, schema_json: str, batch: pa.RecordBatch, case_sensitive: bool = True
) -> pa.Array:
    """The rows of `batch` (columns with their field ids, as `read_task` returns them) the
    filter (unbound JSON, bound to `schema_json`) selects, by the reader's own row evaluator;
    a null result is not selected."""

def eval_inclusive_metrics(data_file_json: str, bound_json: str) -> bool:
    """May a row of this data file match the bound filter? (InclusiveMetricsEvaluator)"""

def eval_strict_metrics(data_file_json: str, bound_json: str) -> bool:
    """Do all rows of this data file match the bound filter? (StrictMetricsEvaluator)"""

def files_matching_metrics(data_files_json: list[str], bound_json: str) -> list[str]:
    """Paths of the data files the InclusiveMetricsEvaluator keeps for the bound filter."""

# ---- single values (rust/python/single_value.rs) ----
def single_value_to_bytes(ty: str, json: str) -> bytes:
    """The spec's binary single value of the JSON single value `json` of type `ty`."""

def single_value_from_bytes(ty: str, data: bytes) -> str:
    """The spec's JSON single value of the binary single value `data` of type `ty`."""

# ---- partition pruning (rust/python/projection.rs) ----
def partitions_matching(
    expr_json: str, schema_json: str, spec_json: str, partitions: list[str], strict: bool = False
) -> list[bool]:
    """For each partition tuple (a JSON array of single values), whether the filter projected
    through the spec (inclusive, or strict) keeps it."""

# ---- metadata tables (rust/python/inspect.rs) ----
def inspect_table(metadata: TableMetadata, name: str, snapshot_id: int | None = None) -> list[pa.RecordBatch]:
    """The metadata table `name` (Java's names: snapshots, files, all_entries, ...) as record
    batches with Iceberg Java's columns and types (at least one; one per manifest for the
    tables of manifest entries); `snapshot_id` (default: current) only for the
    tables of one snapshot (ValidationError otherwise, or for an unknown name or snapshot)."""

def inspect_snapshot_own_entries(metadata: TableMetadata, snapshot_id: int) -> list[pa.RecordBatch]:
    """The `entries` rows of the manifests the snapshot wrote itself (every entry it added or
    deleted; older ones there as existing): an incremental computation's input."""

def metadata_table_names() -> list[str]:
    """The names `inspect_table` knows."""

# ---- maintenance (rust/python/maintenance.rs) ----
def expire_snapshots_apply(
    metadata: TableMetadata,
    now_ms: int,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: list[int] | None = None,
) -> tuple[TableMetadata | None, list[int], list[str]]:
    """The expiry of `metadata` at `now_ms` (Java's RemoveSnapshots): (next metadata or None
    when nothing expires, expired snapshot ids, removed ref names)."""

def clean_expired_metadata(metadata: TableMetadata, now_ms: int | None = None) -> TableMetadata | None:
    """`metadata` without the partition specs and schemas none of its snapshots uses (Java's
    `cleanExpiredMetadata`), as a new version at `now_ms` when given (else the same version,
    one an expiry just produced), or None when every one is used."""

def expired_snapshot_files(
    before: TableMetadata, expired_ids: list[int], retained: list[TableMetadata]
) -> list[tuple[str, str, int]]:
    """The files freed by expiring `expired_ids` from `before`, given the versions kept:
    [(kind, location, size)], kinds data / position_deletes / equality_deletes / manifest /
    manifest_list / statistics, content files first."""

def remove_orphan_files_overlapped(
    metadata: TableMetadata,
    older_than_ms: int,
    location: str | None = None,
    prefix_mismatch_mode: str = "error",
    equal_schemes: dict[str, str] | None = None,
    equal_authorities: dict[str, str] | None = None,
) -> tuple[list[tuple[str, int, bool]], list[tuple[str, str]]] | None:
    """Finds and deletes a local table's orphans at once, each folder's orphans deleted
    while the listing goes on: (the orphans as `find_orphan_files` gives them, [(location,
    error)] of those not deleted). None where that is not safe (a reference under another
    scheme or authority than the listed folder's) or not local: find first, delete after."""

def find_orphan_files(
    metadata: TableMetadata,
    older_than_ms: int,
    location: str | None = None,
    prefix_mismatch_mode: str = "error",
    equal_schemes: dict[str, str] | None = None,
    equal_authorities: dict[str, str] | None = None,
    file_list: list[tuple[str, int]] | None = None,
) -> list[tuple[str, int, bool]]:
    """Files under `location` (default: the table's) older than `older_than_ms` that the table
    does not reference: [(location, size, checksum)], sorted (Java's DeleteOrphanFiles rules;
    `checksum`: a hidden `.<name>.crc` was listed beside it). With `file_list` ([(location,
    last modified epoch ms)]) those files are compared instead of a listing (Java's
    `compareToFileList`; sizes 0)."""

def delete_files_reporting(paths: list[str], checksums: bool = True) -> list[tuple[str, str]]:
    """Deletes the files (locally with their `.<name>.crc` unless `checksums` is false);
    [(location, error)] of those that could not be deleted."""

# ---- convert_equality_deletes (rust/python/convert_deletes.rs) ----
def plan_equality_delete_conversion(
    metadata: TableMetadata, filter_json: str | None = None, case_sensitive: bool = True
) -> tuple[int | None, list[str], str, int]:
    """Plans converting the current snapshot's equality deletes whose whole scope the filter
    selects: (snapshot id, task JSONs, plan state JSON, equality delete files kept)."""

def convert_equality_delete_rows(
    metadata: TableMetadata, tasks: list[str], write_id: str, task_id: int
) -> tuple[list[str], int, list[str]]:
    """Position deletes (DVs on v3) for the rows the tasks' equality deletes remove:
    (delete file descriptors, rows deleted, descriptors of the merged earlier deletes)."""

def commit_equality_delete_conversion(
    metadata: TableMetadata,
    start_snapshot_id: int | None,
    plan_state: str,
    delete_files: list[str],
    replaced_delete_paths: list[str],
    snapshot_properties: dict[str, str] | None = None,
) -> tuple[TableMetadata, list[str]]:
    """The validated row delta committing a conversion."""

# ---- rewrite_table_path (rust/python/rewrite_table_path.rs) ----
def rewrite_table_path_files(
    metadata: TableMetadata,
    snapshot_ids: list[int],
    delta_snapshot_ids: list[int],
    incremental: bool,
    source_prefix: str,
    target_prefix: str,
    staging: str,
) -> tuple[list[tuple[str, str]], int, int]:
    """Rewrites the manifest lists of `snapshot_ids` (of `metadata`, the end version), their
    manifests (with `incremental`: those added by a snapshot of `delta_snapshot_ids`) and the
    position delete files of those, paths under `source_prefix` moved under `target_prefix`,
    into `staging` (ending with `/`) at their paths relative to the source prefix: (copy plan
    [(staged or source file, target file)], manifests rewritten, delete files rewritten).
    Deletes what it wrote on error."""

@final
class NdvSketches:
    """One Apache DataSketches theta sketch per column: `(Arrow column name, Iceberg type)`."""

    def __new__(cls, columns: list[tuple[str, str]]) -> NdvSketches: ...
    def update(self, batch: pa.RecordBatch) -> None: ...
    def finish(self) -> list[tuple[bytes, float]]: ...

def union_theta_sketches(sketches: list[bytes]) -> tuple[bytes, float]:
    """The union of compact theta sketches of one column: `(compact sketch bytes, estimate)`;
    of none, the empty sketch."""

def write_statistics_file(location: str, blobs: list[tuple[int, int, int, bytes, str]]) -> tuple[int, int]:
    """Writes a Puffin statistics file of theta-sketch blobs `(field id, snapshot id, sequence
    number, sketch, ndv)`; `(file size, footer size)`."""

def statistics_file_sketches(
    location: str, file_size: int | None = None
) -> list[tuple[list[int], bytes, float]]:
    """A statistics file's theta sketches: `[(fields, sketch bytes, estimate)]`."""
