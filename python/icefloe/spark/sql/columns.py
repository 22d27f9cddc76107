"""Spark SQL column definitions as Iceberg types, as Iceberg Java's `SparkSchemaUtil.convert`
reads a Spark schema: `timestamp` is `timestamptz`, `timestamp_ntz` is `timestamp`,
`tinyint` / `smallint` are `int`, `char(n)` / `varchar(n)` are `string`, a column is
required only when `NOT NULL`, array elements and map values are optional (Spark's
`containsNull` / `valueContainsNull` default), map keys required; `COMMENT` is the doc.

Field ids are assigned as Java's `TypeUtil.assignFreshIds` assigns them when a table is
created: a struct's fields first, then each field's nested types in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from icefloe.exceptions import NotSupportedError
from icefloe.schema import Schema
from icefloe.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

__all__ = ["column_doc", "column_required", "iceberg_type", "schema_of"]

_T = exp.DataType.Type
_PRIMITIVES: dict[Any, Callable[[], IcebergType]] = {
    _T.BOOLEAN: BooleanType,
    _T.TINYINT: IntegerType,
    _T.SMALLINT: IntegerType,
    _T.INT: IntegerType,
    _T.BIGINT: LongType,
    _T.FLOAT: FloatType,
    _T.DOUBLE: DoubleType,
    _T.TEXT: StringType,
    _T.VARCHAR: StringType,
    _T.CHAR: StringType,
    _T.DATE: DateType,
    _T.TIMESTAMPTZ: TimestamptzType,
    _T.TIMESTAMPLTZ: TimestamptzType,
    _T.TIMESTAMPNTZ: TimestampType,
    _T.BINARY: BinaryType,
    _T.VARBINARY: BinaryType,
}


def column_required(column: exp.ColumnDef) -> bool:
    return any(isinstance(c.kind, exp.NotNullColumnConstraint) for c in column.constraints)


def column_doc(column: exp.ColumnDef) -> str | None:
    for c in column.constraints:
        if isinstance(c.kind, exp.CommentColumnConstraint):
            return str(c.kind.this.this)
    return None


class _Ids:
    def __init__(self, start: int = 0) -> None:
        self.last = start

    def next(self) -> int:
        self.last += 1
        return self.last


def schema_of(columns: list[exp.ColumnDef]) -> Schema:
    """The Iceberg schema of a CREATE TABLE's column definitions."""
    return Schema(*_struct_fields(columns, _Ids()))


def iceberg_type(kind: exp.DataType | None, first_id: int = 0) -> IcebergType:
    """The Iceberg type of one Spark type; nested ids are numbered from `first_id + 1` (an
    update assigns its own ids when it commits)."""
    return _type(kind, _Ids(first_id))


def _struct_fields(columns: list[exp.ColumnDef], ids: _Ids) -> list[NestedField]:
    own = [ids.next() for _ in columns]
    return [
        NestedField(
            field_id,
            column.name,
            _type(column.kind, ids),
            required=column_required(column),
            doc=column_doc(column),
        )
        for field_id, column in zip(own, columns)
    ]


def _type(kind: exp.DataType | None, ids: _Ids) -> IcebergType:
    if not isinstance(kind, exp.DataType):
        raise NotSupportedError(f"column type {kind!r}")
    make = _PRIMITIVES.get(kind.this)
    if make is not None:
        return make()
    if kind.this == _T.DECIMAL:
        params = [int(p.this.this if isinstance(p.this, exp.Literal) else p.name) for p in kind.expressions]
        precision, scale = (params + [10, 0][len(params) :])[:2] if params else (10, 0)
        return DecimalType(precision, scale)
    if kind.this == _T.STRUCT:
        members = [m for m in kind.expressions if isinstance(m, exp.ColumnDef)]
        return StructType(*_struct_fields(members, ids))
    if kind.this == _T.ARRAY:
        element_id = ids.next()
        return ListType(element_id, _type(kind.expressions[0], ids), element_required=False)
    if kind.this == _T.MAP:
        key_id, value_id = ids.next(), ids.next()
        key, value = kind.expressions
        return MapType(key_id, _type(key, ids), value_id, _type(value, ids), value_required=False)
    raise NotSupportedError(f"column type {kind.sql(dialect='spark')} has no Iceberg type")
