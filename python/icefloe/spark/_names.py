"""Column names in Spark expressions. A name is quoted whole, with its backticks doubled, so
`a.b` (one column whose name holds a dot) never reads as field `b` of a struct `a`, and a
name holding a backtick stays one identifier; a nested field is a path of such names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa


def session_case_sensitive(spark: Any = None) -> bool:
    """Whether `spark` (default: the active session; none: False) resolves names with case
    (`spark.sql.caseSensitive`, off by default)."""
    if spark is None:
        from pyspark.sql import SparkSession

        spark = SparkSession.getActiveSession()
    return spark is not None and str(spark.conf.get("spark.sql.caseSensitive", "false")).lower() == "true"


def quoted(name: str) -> str:
    """`name` as one Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def quoted_path(path: Sequence[str]) -> str:
    """A nested field (top-level name first) as a Spark SQL reference."""
    return ".".join(quoted(part) for part in path)


def positional(df: Any) -> tuple[Any, list[str] | None]:
    """`df` ready for `mapInArrow`, which looks every input column up by name (`df[name]`)
    and so fails on a name holding a dot or a backtick: such a DataFrame gets positional
    names, and the names to put back on its batches (`renamed`) come with it (else None)."""
    names = list(df.columns)
    if not any("." in n or "`" in n for n in names):
        return df, None
    return df.toDF(*[f"_icefloe_c{i}" for i in range(len(names))]), names


def renamed(batch: pa.RecordBatch, names: list[str] | None) -> pa.RecordBatch:
    """A batch of a `positional` DataFrame under its own column names again."""
    if names is None:
        return batch
    return pa.RecordBatch.from_arrays(batch.columns, schema=renamed_schema(batch.schema, names))


def renamed_schema(schema: pa.Schema, names: list[str]) -> pa.Schema:
    """`schema` with its fields named `names`, in order (types, nullability and metadata kept)."""
    return pa.schema([f.with_name(n) for f, n in zip(schema, names, strict=True)], metadata=schema.metadata)


def table_spelling(names: list[str], table_names: list[str]) -> list[str] | None:
    """Spark resolves column names ignoring case (its default, and Java's writes follow it):
    each name the table lacks takes the spelling of the one table column it matches ignoring
    case. None when nothing changes (or a change would make two columns one)."""
    exact = set(table_names)
    folded: dict[str, list[str]] = {}
    for t in table_names:
        folded.setdefault(t.lower(), []).append(t)
    out = []
    for n in names:
        match = folded.get(n.lower(), [])
        out.append(n if n in exact or len(match) != 1 else match[0])
    if out == names or len(set(out)) != len(out):
        return None
    return out


def nested_spelling(schema: pa.Schema, table_arrow: pa.Schema) -> pa.Schema | None:
    """`schema` with the fields of its structs (in lists and maps too) named as the table's
    (`table_arrow`), matched ignoring case as Spark resolves them; None when nothing changes.
    Top-level names are `table_spelling`'s."""
    fields = []
    for f in schema:
        i = table_arrow.get_field_index(f.name)
        fields.append(f if i < 0 else f.with_type(_spelled(f.type, table_arrow.field(i).type)))
    out = pa.schema(fields, metadata=schema.metadata)
    return None if out.equals(schema) else out


def _spelled(t: pa.DataType, target: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t) and pa.types.is_struct(target):
        exact = {f.name: f for f in target}
        folded: dict[str, list[pa.Field]] = {}
        for f in target:
            folded.setdefault(f.name.lower(), []).append(f)
        children = []
        for f in t:
            match = exact.get(f.name)
            if match is None:
                candidates = folded.get(f.name.lower(), [])
                match = candidates[0] if len(candidates) == 1 else None
            children.append(
                f if match is None else f.with_name(match.name).with_type(_spelled(f.type, match.type))
            )
        if len({c.name for c in children}) != len(children):
            return t  # two inputs for one field: left to the schema check
        return pa.struct(children)
    if pa.types.is_list(t) and pa.types.is_list(target):
        return pa.list_(t.value_field.with_type(_spelled(t.value_type, target.value_type)))
    if pa.types.is_large_list(t) and (pa.types.is_list(target) or pa.types.is_large_list(target)):
        return pa.large_list(t.value_field.with_type(_spelled(t.value_type, target.value_type)))
    if pa.types.is_map(t) and pa.types.is_map(target):
        key = t.key_field.with_type(_spelled(t.key_type, target.key_type))
        return pa.map_(key, t.item_field.with_type(_spelled(t.item_type, target.item_type)))
    return t


def respelled(batch: pa.RecordBatch, schema: pa.Schema | None) -> pa.RecordBatch:
    """`batch` (of `schema`'s layout) under `nested_spelling`'s names: a zero-copy view."""
    if schema is None:
        return batch
    columns = [c if c.type == t else c.view(t) for c, t in zip(batch.columns, schema.types, strict=True)]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def table_arrow_schema(table: Any) -> pa.Schema:
    """The table's current schema in Arrow (the names writes are matched to)."""
    from icefloe import _native

    return _native.schema_to_arrow(table.schema().to_json())
