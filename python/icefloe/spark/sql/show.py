"""`DESCRIBE [TABLE] [EXTENDED] t`, `SHOW TBLPROPERTIES t [('key')]` and `SHOW CREATE TABLE t`
on icefloe tables, with the rows Spark gives for Iceberg Java's `SparkTable`:

- the table's Spark properties are Java's `SparkTable.properties()`: `format`
  (`iceberg/<write.format.default>`), `provider`, `current-snapshot-id` (or `none`),
  `location`, `format-version`, `sort-order` (when sorted, Java's `Spark3Util.describe`),
  `identifier-fields` (when any), then the stored properties; Spark hides its reserved ones
  (`comment`, `location`, `owner`, `provider`, `external`, `is_managed_location`) from the
  property lists and shows them as rows of `DESCRIBE EXTENDED`;
- `DESCRIBE` is Spark's `DescribeTableExec`: the columns, then `# Partition Information` when
  every partition field is an identity, else `# Partitioning` with `Part n` and each
  transform as Spark describes it; `EXTENDED` adds Iceberg's metadata columns and the table
  details; `DESCRIBE t column` is Spark's `DescribeColumnExec` (name, type, comment);
- `SHOW CREATE TABLE` is Spark's `ShowCreateTableExec` for a v2 table (bucket transforms
  shown as `CLUSTERED BY ... INTO n BUCKETS`, as Spark does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from sqlglot import exp

from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.spark.sql.query import Context, spark_major, spark_version, table_parts, to_spark_sql

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["HANDLERS", "ShowTableCommand", "show_command", "show_statement"]

_RESERVED = ("comment", "location", "provider", "owner", "external", "is_managed_location")


class ShowTableCommand(exp.Expression):
    """`SHOW TBLPROPERTIES t [('key')]` (`kind` TBLPROPERTIES) or `SHOW CREATE TABLE t [AS SERDE]`
    (`kind` CREATE TABLE), read from the text sqlglot keeps as a Command."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "kind": True, "key": False, "serde": False}


def show_command(command: exp.Command) -> ShowTableCommand | None:
    """The SHOW statement a `SHOW ...` Command holds, or None when it is another one."""
    import sqlglot

    from icefloe.spark.sql.dialect import IcebergSpark

    rest = command.expression
    text = (rest.name if isinstance(rest, exp.Expr) else str(rest or "")).strip()
    upper = text.upper()
    for kind in ("TBLPROPERTIES", "CREATE TABLE"):
        if upper.startswith(kind + " "):
            body = text[len(kind) :].strip()
            serde = body.upper().endswith(" AS SERDE")
            if serde:
                body = body[: -len(" AS SERDE")]
            key = None
            if kind == "TBLPROPERTIES" and body.endswith(")") and "(" in body:
                body, _, inner = body.partition("(")
                key = str(sqlglot.parse_one(inner.rstrip(")").strip(), dialect=IcebergSpark).this)
            table = exp.to_table(body.strip(), dialect=IcebergSpark)
            return ShowTableCommand(this=table, kind=kind, key=key, serde=serde)
    return None


def _load(ctx: Context, table: exp.Expression) -> tuple[Table, str] | None:
    parts = table_parts(table) if isinstance(table, exp.Table) else None
    ref = ctx.resolver.table(parts) if parts else None
    if ref is None:
        return None
    if ref.metadata_table is not None or ref.has_selector:
        raise NotSupportedError(f"DESCRIBE / SHOW of {'.'.join(parts or [])}: only tables")
    return ref.load(), ref.name


def _describe_order(table: Table) -> str | None:
    order = table.sort_order()
    if not order.fields:
        return None
    schema = table.schema()
    terms = []
    for f in order.fields:
        column = schema.find_column_name(f.source_id) or str(f.source_id)
        nulls = f.null_order.name.replace("_", " ")
        terms.append(f"{_transform_text(str(f.transform), column)} {f.direction.name} {nulls}")
    return ", ".join(terms)


def _transform_text(transform: str, column: str) -> str:
    """A transform as Spark describes Iceberg's (Java's `Spark3Util.toTransforms`)."""
    if transform == "identity":
        return column
    if transform.startswith("bucket["):
        return f"bucket({transform[7:-1]}, {column})"
    if transform.startswith("truncate["):
        return f"truncate({column}, {transform[9:-1]})"
    return f"{transform}s({column})"


def spark_properties(table: Table) -> dict[str, str]:
    """Java's `SparkTable.properties()` of `table`."""
    stored = table.properties
    current = table.current_snapshot()
    out = {
        "format": "iceberg/" + stored.get("write.format.default", "parquet"),
        "provider": "iceberg",
        "current-snapshot-id": "none" if current is None else str(current.snapshot_id),
        "location": table.location(),
        "format-version": str(table.format_version),
    }
    order = _describe_order(table)
    if order is not None:
        out["sort-order"] = order
    schema = table.schema()
    ids = schema.identifier_field_ids
    if ids:
        out["identifier-fields"] = "[" + ",".join(schema.find_column_name(i) or "" for i in ids) + "]"
    reserved = {
        "provider",
        "format",
        "current-snapshot-id",
        "location",
        "format-version",
        "sort-order",
        "identifier-fields",
    }
    out.update({k: v for k, v in stored.items() if k not in reserved})
    return out


def show_properties(ctx: Context, tree: ShowTableCommand) -> Any:
    found = _load(ctx, tree.this)
    if found is None:
        return None
    table, name = found
    props = {k: v for k, v in spark_properties(table).items() if k not in _RESERVED}
    return property_rows(ctx, props, tree.args.get("key"), f"Table {name}")


def property_rows(ctx: Context, props: dict[str, str], key: str | None, shown: str) -> Any:
    """SHOW TBLPROPERTIES' rows: every property, sorted, or the one `key` (Spark's message in
    its value when `shown`, the table or view, has no such property)."""
    if key is not None:
        rows = [(key, props.get(key, f"{shown} does not have property: {key}"))]
    else:
        rows = sorted(props.items())
    return ctx.spark.createDataFrame(rows, "key string, value string")


def _partition_rows(table: Table, spark_schema: Any) -> list[tuple[Any, ...]]:
    spec = table.spec()
    schema = table.schema()
    fields = [f for f in spec.fields if str(f.transform) != "void"]
    if not fields:
        return []
    if all(str(f.transform) == "identity" for f in fields):
        rows: list[tuple[Any, ...]] = [
            ("# Partition Information", "", ""),
            ("# col_name", "data_type", "comment"),
        ]
        for f in fields:
            source = schema.find_field(f.source_id)
            path = schema.find_column_name(f.source_id) or source.name
            data_type = (
                spark_schema[path].dataType.simpleString()
                if "." not in path
                else _nested_type(spark_schema, path)
            )
            rows.append((path, data_type, source.doc))
        return rows
    rows = [("", "", ""), ("# Partitioning", "", "")]
    for i, f in enumerate(fields):
        column = schema.find_column_name(f.source_id) or str(f.source_id)
        rows.append((f"Part {i}", _transform_text(str(f.transform), column), ""))
    return rows


def _nested_type(spark_schema: Any, path: str) -> str:
    data_type = spark_schema
    for part in path.split("."):
        data_type = data_type[part].dataType
    return str(data_type.simpleString())


def _partition_struct(table: Table, spark_schema: Any) -> str:
    """The Spark type of `_partition`: every spec's fields by field id (Java's
    `Partitioning.partitionType`)."""
    fields: dict[int, tuple[str, str]] = {}
    schema = table.schema()
    for spec in table.specs().values():
        for f in spec.fields:
            transform = str(f.transform)
            if transform == "void" or f.field_id in fields:
                continue
            path = schema.find_column_name(f.source_id)
            if transform in ("identity",) or transform.startswith("truncate"):
                kind = _nested_type(spark_schema, path) if path else "string"
            elif transform == "day":
                kind = "date"
            else:
                kind = "int"
            fields[f.field_id] = (f.name, kind)
    return "struct<" + ",".join(f"{n}:{k}" for _, (n, k) in sorted(fields.items())) + ">"


def describe(ctx: Context, tree: exp.Describe) -> Any:
    from icefloe.spark._nested_assign import table_spark_schema
    from icefloe.spark.sql import views

    if str(tree.args.get("kind") or "").upper() in ("NAMESPACE", "DATABASE", "SCHEMA"):
        from icefloe.spark.sql import namespaces

        return namespaces.describe(ctx, tree)
    view = views.find_view(ctx, tree.this)
    if view is not None:
        return views.describe(ctx, tree, view)
    found = _load(ctx, tree.this)
    if found is None:
        return None
    table, name = found
    if tree.args.get("partition"):
        raise ValidationError("DESCRIBE does not support partition for v2 tables.")  # Spark's words
    if tree.args.get("expressions") or tree.args.get("as_json"):
        raise NotSupportedError(f"{to_spark_sql(tree)}: not supported by icefloe.spark.sql yet")
    style = str(tree.args.get("style") or "").upper()
    if style and style != "EXTENDED":
        raise NotSupportedError(f"DESCRIBE {style}: not supported by icefloe.spark.sql yet")
    column = tree.meta.get("column")
    if column is not None:
        return _describe_column(ctx, table, column, extended=style == "EXTENDED")
    line = spark_version(ctx.spark)
    spark_schema = table_spark_schema(table)
    docs = {f.name: f.doc for f in table.schema().fields}
    rows: list[tuple[Any, ...]] = [
        (f.name, f.dataType.simpleString(), docs.get(f.name)) for f in spark_schema.fields
    ]
    rows += _partition_rows(table, spark_schema)
    if style == "EXTENDED":
        rows += [("", "", ""), ("# Metadata Columns", "", "")]
        rows += [
            ("_spec_id", "int", ""),
            ("_partition", _partition_struct(table, spark_schema), ""),
            ("_file", "string", ""),
            ("_pos", "bigint", ""),
            ("_deleted", "boolean", ""),
        ]
        if _row_lineage_columns(ctx.spark, table):
            rows += [("_row_id", "bigint", ""), ("_last_updated_sequence_number", "bigint", "")]
        props = spark_properties(table)
        rows += [("", "", ""), ("# Detailed Table Information", "", ""), ("Name", name, "")]
        rows.append(("Type", "EXTERNAL" if "external" in props else "MANAGED", ""))
        for key in _RESERVED:
            if key != "external" and key in props:
                rows.append((key.capitalize(), props[key], ""))
        if line >= (4, 1):  # Java's SparkTable on Spark 4.1 reports table_type, a reserved property
            rows.append(("Table_type", "EXTERNAL", ""))
        listed = ",".join(f"{k}={v}" for k, v in sorted(props.items()) if k not in _RESERVED)
        rows.append(("Table Properties", f"[{listed}]", ""))
        if line >= (4, 0):  # Spark 4 asks the table's scan for its estimate
            rows.append(("Statistics", _statistics(ctx, table, spark_schema), None))
    return ctx.spark.createDataFrame(rows, "col_name string, data_type string, comment string")


_LONG_MAX = (1 << 63) - 1


def _default_size(t: Any) -> int:
    """Spark's `DataType.defaultSize` (the row-size guess behind its size estimates)."""
    from pyspark.sql import types as T

    if isinstance(t, T.StructType):
        return sum(_default_size(f.dataType) for f in t.fields)
    if isinstance(t, T.ArrayType):
        return _default_size(t.elementType)
    if isinstance(t, T.MapType):
        return _default_size(t.keyType) + _default_size(t.valueType)
    if isinstance(t, T.DecimalType):
        return 8 if t.precision <= 18 else 16
    if isinstance(t, (T.CharType, T.VarcharType)):
        return int(t.length)
    sizes = {
        "boolean": 1, "tinyint": 1, "smallint": 2, "int": 4, "bigint": 8, "float": 4,
        "double": 8, "date": 4, "timestamp": 8, "timestamp_ntz": 8, "string": 20,
        "binary": 100, "void": 1, "variant": 2048,
    }  # fmt: skip
    name = t.simpleString()
    if name not in sizes and not name.startswith("time"):
        raise NotSupportedError(f"DESCRIBE EXTENDED: Spark's size estimate of a {name} column")
    return sizes.get(name, 8)  # `time(p)`: 8, as Spark's TimeType


def _statistics(ctx: Context, table: Table, spark_schema: Any) -> str:
    """Spark 4.1's `Statistics` row of `DESCRIBE EXTENDED`: Java's `SparkScan` estimate for an
    unfiltered scan of the current snapshot. No snapshot: 0 rows. A partitioned spec: the
    snapshot's `total-records` (Long.MAX_VALUE when missing). Unpartitioned: the planned
    splits' `estimatedRowsCount` (each split's share of its file's record count, deletes not
    subtracted). Bytes: the rows times Spark's default size of the schema's columns,
    Long.MAX_VALUE on overflow, as Java's `SparkSchemaUtil.estimateSize`."""
    current = table.current_snapshot()
    if current is None:
        rows = 0
    elif not table.spec().is_unpartitioned():
        rows = int(current.summary.get("total-records", _LONG_MAX))
    else:
        parallelism = int(ctx.spark.sparkContext.defaultParallelism)
        rows = sum(
            int(t.length / t.file.file_size_in_bytes * t.record_count) if t.file.file_size_in_bytes else 0
            for task in table.scan().plan_tasks(parallelism=parallelism)
            for t in task.tasks
        )
    size = _default_size(spark_schema) * rows if rows != _LONG_MAX else _LONG_MAX
    return f"{min(size, _LONG_MAX)} bytes, {rows} rows"


def _describe_column(ctx: Context, table: Table, column: exp.Expression, extended: bool) -> Any:
    """`DESCRIBE [EXTENDED] t column`, as Spark's `DescribeColumnExec` describes a column of
    Java's `SparkTable`: `col_name` as the statement spells it, `data_type` Spark's type,
    `comment` the column's doc or `NULL`. A nested path is refused as Spark refuses it, an
    unknown column as Spark's analyzer does. EXTENDED adds the column statistics Java's scan
    reports (`_column_statistics_rows`)."""
    from icefloe.spark._names import session_case_sensitive
    from icefloe.spark._nested_assign import table_spark_schema

    parts = [p.name for p in column.parts] if isinstance(column, exp.Column) else [column.name]
    if isinstance(column, exp.Dot) or len(parts) > 1:
        path = to_spark_sql(column)
        raise ValidationError(f"DESC TABLE COLUMN does not support nested column: {path}.")
    name = parts[0]
    spark_schema = table_spark_schema(table)
    fold = (lambda n: n) if session_case_sensitive(ctx.spark) else str.lower
    matches = [f for f in spark_schema.fields if fold(f.name) == fold(name)]
    if not matches:
        names = ", ".join(f"`{f.name}`" for f in spark_schema.fields)
        raise ValidationError(
            f"[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name `{name}` "
            f"cannot be resolved. Did you mean one of the following? [{names}]."
        )
    field = matches[0]
    doc = next((f.doc for f in table.schema().fields if f.name == field.name), None)
    rows = [("col_name", name), ("data_type", field.dataType.simpleString()), ("comment", doc or "NULL")]
    if extended:
        rows += _column_statistics_rows(ctx, table, name)
    return ctx.spark.createDataFrame(rows, "info_name string, info_value string")


def _column_statistics_rows(ctx: Context, table: Table, column: str) -> list[tuple[str, str]]:
    """The rows Spark's `DescribeColumnExec` adds for the column statistics of Java's
    `SparkScan.estimateStatistics`: reported only with `spark.sql.cbo.enabled` on and
    `spark.sql.iceberg.report-column-stats` not off, from the first statistics file of the
    current snapshot, one entry per blob keyed by the name of its first field id (a later
    blob of the same column replacing an earlier one) and looked up by `column` as the
    statement spells it, case and all (Spark's lookup); `distinct_count` is a theta sketch's
    `ndv` property, every other statistic NULL. A column without a blob: no rows."""
    conf = ctx.spark.conf
    cbo = str(conf.get("spark.sql.cbo.enabled", "false")).strip().lower() == "true"
    report = str(conf.get("spark.sql.iceberg.report-column-stats", "true")).strip().lower() == "true"
    current = table.metadata.current_snapshot_id
    if not (cbo and report) or current is None:
        return []
    files = [f for f in table.statistics() if f.snapshot_id == current]
    if not files:
        return []
    by_id = {f.field_id: f.name for f in table.schema().fields}
    found, ndv = False, None
    for blob in files[0].blob_metadata:
        if not blob.fields or by_id.get(blob.fields[0]) != column:
            continue
        found, ndv = True, None
        if blob.type == "apache-datasketches-theta-v1" and blob.properties.get("ndv"):
            ndv = int(blob.properties["ndv"])
    if not found:
        return []
    return [
        ("min", "NULL"),
        ("max", "NULL"),
        ("num_nulls", "NULL"),
        ("distinct_count", "NULL" if ndv is None else str(ndv)),
        ("avg_col_len", "NULL"),
        ("max_col_len", "NULL"),
    ]


def _row_lineage_columns(spark: Any, table: Table) -> bool:
    """Whether Java lists the row-lineage metadata columns: its Spark 3.5 runtime always, its
    Spark 4 runtimes for format v3 tables only."""
    return table.format_version >= 3 or spark_major(spark) < 4


def _quote(name: str) -> str:
    return (
        name if name.replace("_", "a").isalnum() and not name[0].isdigit() else f"`{name.replace('`', '``')}`"
    )


def show_create(ctx: Context, tree: ShowTableCommand) -> Any:
    from icefloe.spark._nested_assign import table_spark_schema

    found = _load(ctx, tree.this)
    if found is None:
        return None
    table, name = found
    if tree.args.get("serde"):
        raise NotSupportedError("SHOW CREATE TABLE ... AS SERDE: not supported for Iceberg tables")
    spark_schema = table_spark_schema(table)
    docs = {f.name: f.doc for f in table.schema().fields}
    iceberg = {f.name: f for f in table.schema().fields}
    columns = []
    for f in spark_schema.fields:
        field = iceberg[f.name]
        text = f"{_quote(f.name)} {_spark_sql_type(f.dataType, field.field_type)}"
        if field.required:
            text += " NOT NULL"
        if docs.get(f.name):
            text += f" COMMENT '{_escape(docs[f.name] or '')}'"
        columns.append(text)
    out = f"CREATE TABLE {name} (\n  " + ",\n  ".join(columns) + ")\nUSING iceberg\n"
    schema = table.schema()
    partitions, buckets = [], []
    for f in table.spec().fields:
        transform = str(f.transform)
        column = schema.find_column_name(f.source_id) or ""
        if transform == "void":
            continue
        if (
            transform.startswith("bucket[") and spark_major(ctx.spark) < 4
        ):  # Spark 4 keeps them in PARTITIONED BY
            buckets.append((column, transform[7:-1]))
        else:
            partitions.append(_transform_text(transform, column))
    if partitions:
        out += "PARTITIONED BY (" + ", ".join(partitions) + ")\n"
    if buckets:
        out += "CLUSTERED BY (" + ", ".join(c for c, _ in buckets) + ")\n"
        out += f"INTO {buckets[0][1]} BUCKETS\n"
    props = spark_properties(table)
    if "comment" in props:
        out += f"COMMENT '{_escape(props['comment'])}'\n"
    out += f"LOCATION '{props['location']}'\n"
    listed = sorted((k, v) for k, v in props.items() if k not in _RESERVED and not k.startswith("option."))
    if listed:
        out += (
            "TBLPROPERTIES (\n  "
            + ",\n  ".join(f"'{_escape(k)}' = '{_escape(v)}'" for k, v in listed)
            + ")\n"
        )
    return ctx.spark.createDataFrame([(out,)], "createtab_stmt string")


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _spark_sql_type(data_type: Any, iceberg: Any) -> str:
    """Spark's `DataType.sql`: upper-case names, `STRUCT<a: INT NOT NULL>`, `ARRAY<...>`,
    `MAP<k, v>`; nullability from the Iceberg type (`iceberg`) as Java's `SparkSchemaUtil`
    gives it."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        members = {f.name: f for f in iceberg.fields}
        inner = ", ".join(
            f"{_quote(f.name)}: {_spark_sql_type(f.dataType, members[f.name].field_type)}"
            + (" NOT NULL" if members[f.name].required else "")
            for f in data_type.fields
        )
        return f"STRUCT<{inner}>"
    if isinstance(data_type, T.ArrayType):
        return f"ARRAY<{_spark_sql_type(data_type.elementType, iceberg.element_type)}>"
    if isinstance(data_type, T.MapType):
        key = _spark_sql_type(data_type.keyType, iceberg.key_type)
        return f"MAP<{key}, {_spark_sql_type(data_type.valueType, iceberg.value_type)}>"
    return str(data_type.simpleString().upper())


def show_statement(ctx: Context, tree: ShowTableCommand) -> Any:
    from icefloe.spark.sql import views

    view = views.find_view(ctx, tree.this)
    if view is not None:
        return views.show(ctx, tree, view)
    if tree.args["kind"] == "TBLPROPERTIES":
        return show_properties(ctx, tree)
    return show_create(ctx, tree)


HANDLERS: dict[type, Any] = {exp.Describe: describe}
