"""`CALL system.snapshot(...)`, `CALL system.migrate(...)` and `CALL system.add_files(...)`
through `icefloe.spark.sql`: existing Parquet files (a table of Spark's session catalog,
`spark_catalog`, or a folder) into a table of the procedure's icefloe catalog, as Iceberg
Java's `SnapshotTableProcedure` / `MigrateTableProcedure` / `AddFilesProcedure` (whose work
`icefloe.migration` and `table.add_files` do).

The source is read as Java's `SparkTableUtil` reads it, through Spark's session catalog: its
schema (partition columns last), its partition columns, location, provider and properties
(`DESCRIBE TABLE EXTENDED`, `SHOW TBLPROPERTIES`), and its registered partitions
(`SHOW PARTITIONS`, each at its default folder under the location). Only Parquet tables:
Java's ORC and Avro imports are a NotSupportedError.

- `snapshot(source_table, table [, location] [, properties])`: a new icefloe table `table`
  over the source's files; the source is untouched. Java's row: `imported_files_count`.
- `migrate(table [, properties] [, drop_backup] [, backup_table_name])`: the Spark table
  `table` is renamed to its backup (`<name>_BACKUP_`, or `backup_table_name`), then the
  icefloe table of the same namespace and name is created over its files at its location;
  on failure the backup is renamed back. `drop_backup => true` drops the backup (its files
  stay: only an EXTERNAL table, one created with a `LOCATION`, can be migrated, since Spark
  moves a managed table's folder when it renames it). Java's row: `migrated_files_count`.
- `add_files(table, source_table [, partition_filter] [, check_duplicate_files])`: the files
  of a Parquet folder (`` `parquet`.`/path` ``, its `name=value` folders found as Spark's
  partition discovery finds them) or of a session-catalog Parquet table (its registered
  partitions) appended to an existing icefloe table, each file's partition from its folder.
  As Java: a partitioned source needs a partitioned table whose spec is identity on the same
  columns in the same order, `partition_filter` (a map of partition column to value) picks
  partitions and is refused for an unpartitioned table or columns the spec lacks, and no
  matching partition is an error. The spec is the first of the table's specs that matches
  (Java's `findCompatibleSpec`), an earlier one too: the files are added under it. Java's row:
  `added_files_count`, `changed_partition_count` (icefloe's summary's count, where Java's
  manifest append leaves it null).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.dialect import IcebergSpark

if TYPE_CHECKING:
    from icefloe.migration import ParquetSource
    from icefloe.spark.sql.query import Context
    from icefloe.table import Table

BACKUP_SUFFIX = "_BACKUP_"
SESSION_CATALOG = "spark_catalog"


def _parts(name: str) -> list[str]:
    return [p.name for p in exp.to_table(name, dialect=IcebergSpark).parts]


def _session_table(ctx: Context, name: str) -> tuple[str, str]:
    """(namespace, name) of a table of Spark's session catalog, named with or without
    `spark_catalog.` (without a namespace: Spark's current database)."""
    parts = _parts(name)
    if parts and parts[0].lower() == SESSION_CATALOG:
        parts = parts[1:]
    if len(parts) == 1:
        parts = [str(ctx.spark.catalog.currentDatabase()), parts[0]]
    if len(parts) != 2:
        raise ValidationError(f"Expected a table of the session catalog (spark_catalog), found {name!r}")
    return parts[0], parts[1]


def _quoted(namespace: str, name: str) -> str:
    return f"{SESSION_CATALOG}.`{namespace}`.`{name}`"


def _details(ctx: Context, qualified: str) -> dict[str, str]:
    rows = ctx.spark.sql(f"DESCRIBE TABLE EXTENDED {qualified}").collect()
    out: dict[str, str] = {}
    section = False
    for row in rows:
        key, value = str(row[0] or "").strip(), str(row[1] or "").strip()
        if key.startswith("# Detailed Table Information"):
            section = True
        elif section and key:
            out[key] = value
    return out


def source_of(ctx: Context, namespace: str, name: str) -> tuple[ParquetSource, str]:
    """The Parquet source a Spark session-catalog table describes, and its table type
    (`MANAGED` / `EXTERNAL`)."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from icefloe.migration import ParquetSource

    qualified = _quoted(namespace, name)
    if not ctx.spark.catalog.tableExists(f"{namespace}.{name}"):
        raise ValidationError(f"Table {SESSION_CATALOG}.{namespace}.{name} does not exist")
    details = _details(ctx, qualified)
    provider = details.get("Provider", "").lower()
    shown = f"{SESSION_CATALOG}.{namespace}.{name}"
    parquet = provider == "parquet" or (provider == "hive" and "Parquet" in details.get("InputFormat", ""))
    if not parquet or details.get("Type", "").upper() == "VIEW":
        raise NotSupportedError(
            f"{shown} (provider {provider or 'none'}): icefloe imports Parquet tables only"
        )
    location = details.get("Location")
    if not location:
        raise ValidationError(f"Cannot find the location of {SESSION_CATALOG}.{namespace}.{name}")
    columns = ctx.spark.catalog.listColumns(f"{namespace}.{name}")
    partition_columns = tuple(c.name for c in columns if c.isPartition)
    schema = to_arrow_schema(ctx.spark.table(qualified).schema)
    properties = {str(r[0]): str(r[1]) for r in ctx.spark.sql(f"SHOW TBLPROPERTIES {qualified}").collect()}
    partitions = None
    if partition_columns:
        partitions = [
            (f"{location.rstrip('/')}/{row[0]}", _partition_values(str(row[0])))
            for row in ctx.spark.sql(f"SHOW PARTITIONS {qualified}").collect()
        ]
    source = ParquetSource(location.rstrip("/"), schema, partition_columns, properties, partitions)
    return source, details.get("Type", "").upper()


def _partition_values(path: str) -> list[str | None]:
    import urllib.parse

    from icefloe.migration import HIVE_NULL

    values: list[str | None] = []
    for part in path.split("/"):
        _key, _, value = part.partition("=")
        text = urllib.parse.unquote(value)
        values.append(None if text == HIVE_NULL else text)
    return values


def _string_map(value: Any, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValidationError(f"{name} must be a map, found {value!r}")
    return {str(k): str(v) for k, v in value.items()}


def snapshot(ctx: Context, _table: Any, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `SnapshotTableProcedure` (see the module doc)."""
    from icefloe.migration import snapshot_table

    source_name = str(args.get("source_table") or "")
    if not source_name:
        raise ValidationError("Cannot handle an empty identifier for argument source_table")
    if source_name == str(args["table"]):
        raise ValidationError("Cannot create a snapshot with the same name as the source of the snapshot.")
    namespace, name = _session_table(ctx, source_name)
    source, _kind = source_of(ctx, namespace, name)
    location = args.get("location")
    result = snapshot_table(
        args["_catalog"],
        args["_ident"],
        source,
        location=None if location is None else str(location),
        properties=_string_map(args.get("properties"), "properties"),
        ignore_missing_files=bool(args.get("ignore_missing_files")),
    )
    return [(result.imported_files_count,)]


def migrate(ctx: Context, _table: Any, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `MigrateTableProcedure` (see the module doc)."""
    from icefloe.migration import migrate_table

    namespace, name = _session_table(ctx, str(args["table"]))
    source, kind = source_of(ctx, namespace, name)
    if kind != "EXTERNAL":
        raise NotSupportedError(
            f"migrate of {SESSION_CATALOG}.{namespace}.{name}, a {kind or 'MANAGED'} table: icefloe migrates "
            "EXTERNAL tables (created with a LOCATION) only, since Spark moves a managed table's files "
            "when it renames it to the backup"
        )
    backup = str(args.get("backup_table_name") or name + BACKUP_SUFFIX)
    if ctx.spark.catalog.tableExists(f"{namespace}.{backup}"):
        raise ValidationError(
            f"Cannot rename {SESSION_CATALOG}.{namespace}.{name} as {SESSION_CATALOG}.{namespace}.{backup} "
            "for backup. The backup table already exists."
        )
    ctx.spark.sql(f"ALTER TABLE {_quoted(namespace, name)} RENAME TO `{namespace}`.`{backup}`")
    try:
        result = migrate_table(
            args["_catalog"],
            (namespace, name),
            source,
            properties=_string_map(args.get("properties"), "properties"),
            ignore_missing_files=bool(args.get("ignore_missing_files")),
        )
    except BaseException:
        ctx.spark.sql(f"ALTER TABLE {_quoted(namespace, backup)} RENAME TO `{namespace}`.`{name}`")
        raise
    if args.get("drop_backup"):
        ctx.spark.sql(f"DROP TABLE {_quoted(namespace, backup)}")
    return [(result.migrated_files_count,)]


def add_files(ctx: Context, table: Table, args: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Java's `AddFilesProcedure` (see the module doc)."""
    from icefloe import migration

    source_name = str(args["source_table"])
    parts = _parts(source_name)
    if len(parts) == 2 and parts[0].lower() in ("parquet", "orc", "avro"):
        if parts[0].lower() != "parquet":
            raise NotSupportedError(f"add_files of {parts[0]} files: icefloe adds Parquet files only")
        folder = parts[1].rstrip("/")
        found = list(migration.partition_folders(folder, None))
        columns = migration.partition_columns_of(found)
        partitions: list[tuple[str, list[str | None]]] = found if columns else [(folder, [])]
    else:
        source, _kind = source_of(ctx, *_session_table(ctx, source_name))
        columns = source.partition_columns
        partitions = (
            [(f, list(v)) for f, v in source.partitions]
            if source.partitions is not None
            else [(source.location, [])]
        )
    name = ".".join(args["_ident"])
    given = args.get("partition_filter") or {}
    if not isinstance(given, dict):
        raise ValidationError(f"partition_filter must be a map, found {given!r}")
    wanted = {str(k): None if v is None else str(v) for k, v in given.items()}
    lowered = [c.lower() for c in columns]
    # Java's order: a spec of the table matching the source's partition columns, then the filter.
    compatible = [
        spec
        for spec in table.specs().values()
        if all(str(f.transform) == "identity" for f in spec.fields)
        and [f.name.lower() for f in spec.fields] == lowered
    ]
    if not compatible:
        raise ValidationError(
            f"Cannot find a partition spec in Iceberg table {name} that matches the partition "
            f"columns ([{', '.join(columns)}]) in input table"
        )
    spec = compatible[0]
    spec_names = [f.name for f in spec.fields]
    if spec.fields and wanted:
        if len(wanted) > len(spec_names):
            raise ValidationError(
                f"Cannot add data files to target table {name} because that table is partitioned, but the "
                f"number of columns in the provided partition filter ({len(wanted)}) is greater than the "
                f"number of partitioned columns in table ({len(spec_names)})"
            )
        unknown = [k for k in wanted if k not in spec_names]
        if unknown:
            raise ValidationError(
                f"Cannot add files to target table {name}. {name} is partitioned but the specified "
                f"partition filter refers to columns that are not partitioned: [{', '.join(unknown)}] . "
                f"Valid partition columns: [{','.join(spec_names)}]"
            )
    elif wanted:
        raise ValidationError(f"Cannot use partition filter with an unpartitioned table {name}")
    if spec.fields:
        position = {c: i for i, c in enumerate(lowered)}
        partitions = [
            (f, v) for f, v in partitions if all(v[position[k.lower()]] == x for k, x in wanted.items())
        ]
        if not partitions:
            raise ValidationError(f"Cannot find any matching partitions in table {name}")
    files = [(path, values) for folder, values in partitions for path in migration.data_files(folder)]
    check = args.get("check_duplicate_files")
    before = table.current_snapshot()
    table._add_files_from_folders(
        sorted(p for p, _ in files) if not columns else [p for p, _ in files],
        [v for _, v in files] if columns else None,
        check_duplicate_files=True if check is None else bool(check),
        spec_id=spec.spec_id,  # the first matching spec, as Java's: an earlier one too
    )
    after = table.refresh().current_snapshot()
    if after is None or (before is not None and after.snapshot_id == before.snapshot_id):
        return [(0, None)]
    summary = after.summary
    changed = summary.get("changed-partition-count")
    return [(int(summary.get("added-data-files") or 0), None if changed is None else int(changed))]
