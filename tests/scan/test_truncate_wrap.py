"""truncate(w) of an int or long within `w` of the type's minimum wraps around (Java's
arithmetic, which the spec's partition values follow: both engines write 2147483646 for
truncate(10, -2147483648)). That value sorts above every correct one while its rows lie below
all others, so order comparisons through it must not prune, prove or drop a residual: scans
and deletes by filter give exactly the rows the filter names (Spark's filter over all rows),
with column metrics and without."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import NestedField, PartitionField, PartitionSpec, Schema
from icefloe.transforms import TruncateTransform
from icefloe.types import IntegerType, LongType

I32_MIN, I64_MIN = -(2**31), -(2**63)
CASES = {
    "int": (IntegerType(), pa.int32(), [0, 5, 17, I32_MIN, I32_MIN + 3, I32_MIN + 8, 2**31 - 1]),
    "long": (LongType(), pa.int64(), [0, 5, 17, I64_MIN, I64_MIN + 3, I64_MIN + 8, 2**63 - 1]),
}
FILTERS = [
    ("i < {m9}", lambda v, m: v < m + 9),
    ("i <= {m}", lambda v, m: v <= m),
    ("i > 5", lambda v, m: v > 5),
    ("i >= {m}", lambda v, m: v >= m),
    ("i < 0", lambda v, m: v < 0),
    ("i >= 0", lambda v, m: v >= 0),
    ("i = {m}", lambda v, m: v == m),
    ("i IN ({m}, 5)", lambda v, m: v in (m, 5)),
    ("i != {m}", lambda v, m: v != m),
]


def _table(tmp_path: Path, kind: str, metrics: str) -> Any:
    ty, arrow, values = CASES[kind]
    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table(
        "db.t",
        schema=Schema(NestedField(1, "i", ty)),
        partition_spec=PartitionSpec(PartitionField(1, 1000, TruncateTransform(10), "i_trunc")),
        properties={"write.metadata.metrics.default": metrics},
    )
    t.append(pa.table({"i": pa.array(values, arrow)}))
    return t


@pytest.mark.parametrize("metrics", ["none", "full"])
@pytest.mark.parametrize("kind", sorted(CASES))
def test_scans_through_a_wrapped_truncation_return_exactly_the_matching_rows(
    tmp_path: Path, kind: str, metrics: str
) -> None:
    t = _table(tmp_path, kind, metrics)
    values = CASES[kind][2]
    m = I32_MIN if kind == "int" else I64_MIN
    for text, keep in FILTERS:
        f = text.format(m=m, m9=m + 9)
        got = sorted(t.scan(row_filter=f).to_arrow().column("i").to_pylist())
        assert got == sorted(v for v in values if keep(v, m)), f


@pytest.mark.parametrize("kind", sorted(CASES))
def test_deletes_through_a_wrapped_truncation_remove_exactly_the_matching_rows(
    tmp_path: Path, kind: str
) -> None:
    values = CASES[kind][2]
    m = I32_MIN if kind == "int" else I64_MIN
    for n, (text, keep) in enumerate(FILTERS):
        t = _table(tmp_path / str(n), kind, "none")
        f = text.format(m=m, m9=m + 9)
        t.delete(f)
        got = sorted(t.scan().to_arrow().column("i").to_pylist())
        assert got == sorted(v for v in values if not keep(v, m)), f
