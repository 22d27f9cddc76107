"""What a write takes: Arrow data (`ArrowData`), read as one `RecordBatchReader`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Union

import pyarrow as pa

from icefloe.exceptions import ValidationError

ArrowData = Union[pa.Table, pa.RecordBatchReader, pa.RecordBatch, Iterable[pa.RecordBatch]]


def as_reader(df: object) -> pa.RecordBatchReader:
    """The rows a write was given (a pyarrow Table, RecordBatch, list of RecordBatches or a
    RecordBatchReader) as one RecordBatchReader; anything else is a ValidationError."""
    if isinstance(df, pa.RecordBatchReader):
        return df
    if isinstance(df, pa.Table):
        return df.to_reader()
    if isinstance(df, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(df.schema, [df])
    if isinstance(df, (list, tuple)):
        if not df:
            raise ValidationError("cannot append an empty list of record batches (no schema)")
        if not all(isinstance(b, pa.RecordBatch) for b in df):
            raise ValidationError("expected a list of pyarrow.RecordBatch")
        return pa.RecordBatchReader.from_batches(df[0].schema, df)
    raise ValidationError(
        f"expected a pyarrow.Table, RecordBatchReader or list of RecordBatch, found {type(df).__name__}"
    )


def fitted(
    col: pa.Array | pa.ChunkedArray, field: pa.Field, cast_error: Callable[[Exception], str], null_error: str
) -> pa.Array | pa.ChunkedArray:
    """`col` cast to `field`'s type (a column of nulls of no type becomes one of that type), or
    a ValidationError with `cast_error(e)` when a value does not fit; `null_error` when the
    field is required and `col` holds a null. Updates and MERGE store their values through it."""
    if not col.type.equals(field.type):
        if pa.types.is_null(col.type):
            col = pa.nulls(len(col), field.type)
        else:
            try:
                col = col.cast(field.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise ValidationError(cast_error(e)) from e
    if not field.nullable and col.null_count:
        raise ValidationError(null_error)
    return col
