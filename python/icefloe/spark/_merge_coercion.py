"""Spark 4.1's `spark.sql.mergeNestedTypeCoercion.enabled` for `MERGE ... UPDATE SET *` and
`INSERT *`: a source struct without some fields of the table's struct is accepted, where Spark
(and Iceberg Java) refuse it otherwise ("cannot find data for the output column `s`.`c3`").

What Java 1.12 writes on Spark 4.1 with the setting on (probed field by field, null structs
on either side included):

- UPDATE SET *: each field the source has takes the source's value, each field it lacks keeps
  the target's, recursively through nested structs; the struct is NULL only when both the
  source's and the target's are NULL (a NULL source struct updates the fields it has to NULL
  and keeps the others).
- INSERT *, only with schema evolution (without it Spark still refuses): the fields the source
  lacks are NULL; a NULL source struct inserts NULL.

Only struct fields: a struct inside an array or a map is left to the store assignment check,
which refuses a missing field there as Spark does.
"""

from __future__ import annotations

from typing import Any

from icefloe.spark._names import quoted

__all__ = ["COERCION_CONF", "coerced", "enabled"]

COERCION_CONF = "spark.sql.mergeNestedTypeCoercion.enabled"


def enabled(spark: Any) -> bool:
    return str(spark.conf.get(COERCION_CONF, "false") or "false").strip().lower() == "true"


def coerced(source: str, target: str | None, table_type: Any, source_type: Any) -> str | None:
    """The SQL value of a column the source's `source` gives (`table_type` in the table,
    `source_type` in the source) when the source's struct lacks some of the table's fields:
    kept from `target` (UPDATE), NULL where `target` is None (INSERT). None when no struct
    field is missing (the source's value as it is)."""
    from pyspark.sql.types import StructType

    if not (isinstance(table_type, StructType) and isinstance(source_type, StructType)):
        return None
    found = {f.name.lower(): f.dataType for f in source_type.fields}
    parts, missing = [], False
    for f in table_type.fields:
        src = f"{source}.{quoted(f.name)}"
        tgt = None if target is None else f"{target}.{quoted(f.name)}"
        if f.name.lower() not in found:
            missing = True
            value = tgt if tgt is not None else f"CAST(NULL AS {f.dataType.simpleString()})"
        else:
            deeper = coerced(src, tgt, f.dataType, found[f.name.lower()])
            missing = missing or deeper is not None
            value = src if deeper is None else deeper
        parts.append(f"'{_literal(f.name)}', {value}")
    if not missing:
        return None
    both_null = f"{source} IS NULL" + ("" if target is None else f" AND {target} IS NULL")
    return f"CASE WHEN {both_null} THEN NULL ELSE named_struct({', '.join(parts)}) END"


def _literal(name: str) -> str:
    return name.replace("\\", "\\\\").replace("'", "\\'")
