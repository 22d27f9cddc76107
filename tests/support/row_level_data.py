"""The row-level tests' table (id, region, amount; id the identifier field) and its rows, shared by
the in-process, model and process tests of row-level changes."""

from __future__ import annotations

import pyarrow as pa
from icefloe import (
    NestedField,
    Schema,
)
from icefloe.types import DoubleType, LongType, StringType

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "region", StringType()),
    NestedField(3, "amount", DoubleType()),
    identifier_field_ids=[1],
)


ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
    ]
)


def rows(ids: range | list[int], region: str = "eu", amount: float | None = None) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "region": [region] * len(ids),
            "amount": [float(i) if amount is None else amount for i in ids],
        },
        schema=ARROW,
    )
