"""Column names in Spark expressions. A name is quoted whole, with its backticks doubled, so
`a.b` (one column whose name holds a dot) never reads as field `b` of a struct `a`, and a
name holding a backtick stays one identifier; a nested field is a path of such names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa


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
