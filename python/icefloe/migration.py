"""Existing Parquet data into Iceberg without rewriting it: Iceberg Java's `snapshot` and
`migrate` procedures (`SnapshotTableSparkAction`, `MigrateTableSparkAction`).

    from icefloe.migration import parquet_folder, snapshot_table, migrate_table

    source = parquet_folder("s3://bucket/events")           # Hive-style `day=2026-01-01/...`
    snapshot_table(catalog, "db.events_try", source)        # a new table over the same files
    migrate_table(catalog, "db.events", source)             # the folder becomes the table

A source is a folder of Parquet files, flat or Hive-partitioned (`p=1/q=a/*.parquet`, as
Spark and Hive write them), with its schema (partition columns last, as Spark puts them) and
partition columns. `parquet_folder` reads the schema from the first data file's footer and
infers the partition columns' types from the folder names as Spark does (int, bigint,
double, date, else string; `__HIVE_DEFAULT_PARTITION__` is null), or takes them given. The
SQL front end (`CALL system.snapshot` / `system.migrate` through `icefloe.spark.sql`) builds
the source from a table of Spark's session catalog instead: its schema, partition columns,
location, properties and registered partitions, as Java's `SparkTableUtil` reads them.

Both create the table in one catalog operation (a staged create: nothing is in the catalog
until every file is registered) with the source's schema, an identity partition spec on the
partition columns, the source's properties (less Spark's own: `path`, `provider`,
`transient_lastDdlTime`, ...), a `schema.name-mapping.default` made from the schema (the
files carry no field ids) and one `append` snapshot of every data file: its metrics from the
footer, its partition tuple from its folder (Java's `Conversions.fromPartitionString`). Files
and folders whose names start with `_` or `.` are not data (Spark's `_SUCCESS`, checksums), as
Java's `TableMigrationUtil` skips them; each partition folder's files are listed, not its
sub-folders.

- `snapshot_table`: the new table lives elsewhere (its `location`, default the catalog's) and
  only references the source's files; it is marked `snapshot=true` and `gc.enabled=false`, so
  neither expiry nor orphan removal ever deletes a file of the source. A location inside the
  source's (or the reverse) is refused, as Java refuses it. Result: `imported_files_count`.
- `migrate_table`: the table takes the source's place: its location is the source's folder
  (metadata in `<folder>/metadata`), it is marked `migrated=true` and owns the files from then
  on. Result: `migrated_files_count`.

A partition the source's catalog lists whose folder is gone fails the import unless
`ignore_missing_files=True` (Java's option). On any failure nothing is in the catalog, no
metadata is left behind, and no source file is touched (the staged create never deletes a
file it was given).
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from icefloe import _io
from icefloe.exceptions import ValidationError
from icefloe.partitioning import PartitionField, PartitionSpec
from icefloe.schema import Schema

if TYPE_CHECKING:
    from icefloe.catalog._base import Catalog, IdentifierLike

NAME_MAPPING = "schema.name-mapping.default"
HIVE_NULL = "__HIVE_DEFAULT_PARTITION__"

# Spark's and Hive's table properties that are not the data's (Java's
# `BaseTableCreationSparkAction.EXCLUDED_PROPERTIES`, plus the location ones it removes).
EXCLUDED_PROPERTIES = frozenset(
    {
        "path",
        "transient_lastDdlTime",
        "serialization.format",
        "provider",
        "format",
        "location",
        "write.metadata.path",
        "write.folder-storage.path",
        "write.object-storage.path",
        "write.data.path",
    }
)


@dataclass(frozen=True)
class SnapshotTableResult:
    """Java's `snapshot` procedure's row: how many data files the new table references."""

    imported_files_count: int


@dataclass(frozen=True)
class MigrateTableResult:
    """Java's `migrate` procedure's row: how many data files the migrated table holds."""

    migrated_files_count: int


@dataclass(frozen=True)
class ParquetSource:
    """Parquet files to bring into Iceberg: `location`, the Arrow `schema` of the rows
    (partition columns included), the `partition_columns` (Hive-style folders, in order),
    `properties` to carry over, and `partitions`: each partition's folder and its values as
    the folder names spell them, when a catalog lists them (None: found under `location`)."""

    location: str
    schema: pa.Schema
    partition_columns: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)
    partitions: Sequence[tuple[str, Sequence[str | None]]] | None = None


def parquet_folder(
    location: str, schema: pa.Schema | None = None, partition_columns: Sequence[str] | None = None
) -> ParquetSource:
    """The source of a folder of Parquet files: the schema given, else the first data file's
    (its footer) with the partition columns the folder names show appended (types inferred
    as Spark infers them, unless the given schema has them)."""
    location = location.rstrip("/")
    found = list(partition_folders(location, None))
    columns = tuple(partition_columns) if partition_columns is not None else partition_columns_of(found)
    if schema is None:
        first = next((f for folder, _ in found for f in data_files(folder)), None)
        if first is None:
            raise ValidationError(f"Cannot find any data file under {location}: give the schema")
        schema = _footer_schema(first)
        for i, name in enumerate(columns):
            if schema.get_field_index(name) < 0:
                schema = schema.append(pa.field(name, _infer([values[i] for _, values in found])))
    missing = [c for c in columns if schema.get_field_index(c) < 0]
    if missing:
        raise ValidationError(f"Partition columns {missing} are not in the schema {schema}")
    return ParquetSource(location, schema, columns)


def snapshot_table(
    catalog: Catalog,
    identifier: IdentifierLike,
    source: ParquetSource | str,
    location: str | None = None,
    properties: Mapping[str, str] | None = None,
    ignore_missing_files: bool = False,
) -> SnapshotTableResult:
    """A new table `identifier` referencing the source's files where they are (see the module
    doc); `location` is the new table's (default: the catalog's for it)."""
    src = parquet_folder(source) if isinstance(source, str) else source
    props = _properties(src, properties)
    props.update({"gc.enabled": "false", "snapshot": "true"})
    count = _import(catalog, identifier, src, location, props, False, ignore_missing_files)
    return SnapshotTableResult(count)


def migrate_table(
    catalog: Catalog,
    identifier: IdentifierLike,
    source: ParquetSource | str,
    properties: Mapping[str, str] | None = None,
    ignore_missing_files: bool = False,
) -> MigrateTableResult:
    """The source's folder becomes table `identifier` (see the module doc)."""
    src = parquet_folder(source) if isinstance(source, str) else source
    props = _properties(src, properties)
    props["migrated"] = "true"
    count = _import(catalog, identifier, src, src.location, props, True, ignore_missing_files)
    return MigrateTableResult(count)


def _properties(src: ParquetSource, given: Mapping[str, str] | None) -> dict[str, str]:
    props = {k: v for k, v in src.properties.items() if k not in EXCLUDED_PROPERTIES}
    props.update(given or {})
    return props


def _import(
    catalog: Catalog,
    identifier: IdentifierLike,
    src: ParquetSource,
    location: str | None,
    properties: dict[str, str],
    overlap_ok: bool,
    ignore_missing_files: bool,
) -> int:
    schema = Schema.from_arrow(src.schema)
    spec = PartitionSpec(
        *(
            PartitionField(schema.find_field(name).field_id, 1000 + i, "identity", name)
            for i, name in enumerate(src.partition_columns)
        )
    )
    if src.partitions is not None:
        folders = [(folder, list(values)) for folder, values in src.partitions]
        # A partition the source's catalog lists but whose folder is gone: Java's import
        # fails on it unless told to ignore missing files (object stores have no folders).
        gone = [f for f, _ in folders if _io.is_local(f) and not _io.exists(f)]
        if gone and not ignore_missing_files:
            raise ValidationError(
                f"Cannot find the folders of {len(gone)} partitions of the source, e.g. {gone[0]}: "
                "pass ignore_missing_files to import the others"
            )
    else:
        folders = list(partition_folders(src.location, len(src.partition_columns)))
    files = [(path, values) for folder, values in folders for path in data_files(folder)]
    with catalog.create_table_transaction(
        identifier, schema, partition_spec=spec, properties=properties, location=location
    ) as txn:
        table = txn.table
        if not overlap_ok:
            _check_no_overlap(table.location(), src.location)
        if files:
            paths = [path for path, _ in files]
            table._add_files_from_folders(paths, [values for _, values in files] if spec.fields else None)
        else:
            table.append(src.schema.empty_table())  # an empty `append`, as Java commits one
    return len(files)


def _check_no_overlap(table_location: str, source_location: str) -> None:
    a, b = table_location.rstrip("/"), source_location.rstrip("/")
    if a == b or a.startswith(b + "/") or b.startswith(a + "/"):
        raise ValidationError(
            f"Cannot create a snapshot at location {a} because it would overlap with source table "
            f"location {b}. Overlapping snapshot and source would mix table files."
        )


def _hidden(name: str) -> bool:
    return name.startswith(("_", "."))


def data_files(folder: str) -> list[str]:
    """The data files directly in `folder` (not its sub-folders), hidden names skipped."""
    _dirs, files = _io.list_dir(folder)
    return [_io.join(folder, name) for name, _size in files if not _hidden(name)]


_KEY_VALUE = re.compile(r"^([^=]+)=(.*)$")


def partition_folders(location: str, depth: int | None) -> Iterator[tuple[str, list[str | None]]]:
    """(folder, values) of each leaf partition folder under `location`: `depth` levels of
    `name=value` folders (None: as deep as they go), the values unescaped as Spark escapes
    them (`%XX`), Hive's null spelled as such."""

    def walk(folder: str, values: list[str | None]) -> Iterator[tuple[str, list[str | None]]]:
        dirs, _files = _io.list_dir(folder)
        keyed = [(d, m) for d in dirs if not _hidden(d) and (m := _KEY_VALUE.match(d)) is not None]
        if (depth is None and not keyed) or (depth is not None and len(values) == depth):
            yield folder, values
            return
        for d, m in keyed:
            value = urllib.parse.unquote(m.group(2))
            yield from walk(_io.join(folder, d), [*values, None if value == HIVE_NULL else value])

    yield from walk(location, [])


def partition_columns_of(found: list[tuple[str, list[str | None]]]) -> tuple[str, ...]:
    if not found or not found[0][1]:
        return ()
    first = found[0][0]
    names = []
    for part in first.rstrip("/").split("/")[-len(found[0][1]) :]:
        m = _KEY_VALUE.match(part)
        if m is None:
            raise ValidationError(f"Expected a name=value folder under the source, found {part!r} in {first}")
        names.append(urllib.parse.unquote(m.group(1)))
    return tuple(names)


def _infer(values: list[str | None]) -> pa.DataType:
    """A partition column's type from its folder values, as Spark's partition type inference
    (int, bigint, double, date, else string; nulls say nothing)."""
    seen = [v for v in values if v is not None]
    if not seen:
        return pa.string()
    if all(_is_int(v, 32) for v in seen):
        return pa.int32()
    if all(_is_int(v, 64) for v in seen):
        return pa.int64()
    if all(_is_float(v) for v in seen):
        return pa.float64()
    if all(re.fullmatch(r"\d{4}-\d{2}-\d{2}", v) for v in seen):
        return pa.date32()
    return pa.string()


def _is_int(text: str, bits: int) -> bool:
    if re.fullmatch(r"[+-]?\d+", text) is None:
        return False
    return -(2 ** (bits - 1)) <= int(text) < 2 ** (bits - 1)


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _footer_schema(path: str) -> pa.Schema:
    """The Arrow schema of a Parquet file's footer (the whole file is read: one file)."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(pa.BufferReader(_io.read_bytes(path)))
    return pa.schema([f.remove_metadata() for f in schema])
