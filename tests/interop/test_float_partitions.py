"""Tables partitioned by float / double columns holding NaN, the infinities, -0.0 and nulls,
written by Iceberg Java and by icefloe: both engines read both alike (plain and filtered),
and icefloe's deletes and appends on Java's table leave rows Java reads. Before, a NaN or
infinite partition value became `null` in icefloe's scan-task and data-file JSON, so every
scan of such a table and every icefloe write to it failed.

Filtered reads equal Java's, except for `f < 0` on the partition `f = -0.0`: Java 1.12
orders -0.0 below 0 in its partition test, takes the filter as answered by the partition
and returns the row, which Spark's filter (`-0.0 < 0` is false) does not keep; icefloe
compares the zeros as rows do and leaves it out."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle

pytestmark = [pytest.mark.spark, pytest.mark.interop]

FILTERS = ["f > 0", "f < 0", "g >= 1.5", "f IS NULL", "f = 1.5", "id > 2"]


def _rows(rows: list[Any]) -> list[tuple[Any, ...]]:
    def key(v: Any) -> Any:
        if isinstance(v, float):
            return ("nan",) if math.isnan(v) else ("f", v, math.copysign(1.0, v))
        return ("v", v)

    return sorted(tuple(key(v) for v in r) for r in rows)


def _java(oracle: Oracle, name: str, where: str = "") -> list[tuple[Any, ...]]:
    q = f"SELECT id, f, g FROM {oracle.qualified(name)}" + (f" WHERE {where}" if where else "")
    return _rows([tuple(r) for r in oracle.sql(q)])


def _spark_filter(oracle: Oracle, name: str, where: str) -> list[tuple[Any, ...]]:
    """Spark's own filter over Java's unfiltered rows (nothing pushed into Iceberg)."""
    return _rows([tuple(r) for r in oracle.spark_filtered(name, where, ["id", "f", "g"]).collect()])


# The filters where Java 1.12's partition test orders -0.0 below 0 (see the module doc).
JAVA_ZERO_ORDER = {"f < 0"}


def _ours(catalog: Any, name: str, where: str = "") -> list[tuple[Any, ...]]:
    scan = catalog.load_table(name).scan(row_filter=where) if where else catalog.load_table(name).scan()
    t = scan.to_arrow()
    return _rows(list(zip(*(t.column(c).to_pylist() for c in ("id", "f", "g")))))


def test_nan_and_infinite_partition_values_read_and_write_as_java(
    oracle: Oracle, catalog: Any, table_name: str
) -> None:
    q = oracle.qualified(table_name)
    oracle.sql(f"CREATE TABLE {q} (id bigint, f double, g float) USING iceberg PARTITIONED BY (f, g)")
    oracle.sql(
        f"INSERT INTO {q} VALUES (1, double('NaN'), float('NaN')), "
        "(2, double('Infinity'), float('-Infinity')), (3, double('-Infinity'), float('Infinity')), "
        "(4, -0.0D, 0.0F), (5, 1.5D, 1.5F), (6, NULL, NULL)"
    )

    def same(step: str) -> None:
        for where in ["", *FILTERS]:
            ours, java = _ours(catalog, table_name, where), _java(oracle, table_name, where)
            if where not in JAVA_ZERO_ORDER:
                assert ours == java, f"{step}: {where!r}"
                continue
            # Only the -0.0 row differs: icefloe gives what Spark's filter keeps of it.
            minus_zero = [r for r in java if r[1] == ("f", -0.0, -1.0)]
            assert ours == [r for r in java if r not in minus_zero], f"{step}: {where!r}"
            assert all(r not in _spark_filter(oracle, table_name, where) for r in minus_zero), step

    same("Java's rows")
    # Pinned: the exception above exists because Java returns the -0.0 row (id 4) here.
    assert ("v", 4) in [r[0] for r in _java(oracle, table_name, "f < 0")], (
        "Java changed: drop JAVA_ZERO_ORDER"
    )
    assert len(_ours(catalog, table_name)) == 6
    table = catalog.load_table(table_name)
    table.append(
        pa.table(
            {
                "id": pa.array([7, 8], pa.int64()),
                "f": pa.array([math.nan, math.inf], pa.float64()),
                "g": pa.array([math.nan, -math.inf], pa.float32()),
            }
        )
    )
    same("after icefloe's append")
    catalog.load_table(table_name).delete("id IN (2, 7)")
    same("after icefloe's delete")
    oracle.sql(f"DELETE FROM {q} WHERE id = 1")
    same("after Java's delete")
    assert [r[0] for r in _ours(catalog, table_name)] == [("v", 3), ("v", 4), ("v", 5), ("v", 6), ("v", 8)]
