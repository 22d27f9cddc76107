"""Format v3 types against Iceberg Java's core API (Spark 3.5 has no nanosecond timestamps, so
Java writes and reads these tables through `tests/java/V3TypesTable.java`):

- `timestamp_ns` / `timestamptz_ns`: the same rows both ways, partitions (`day`, `bucket`)
  and column bounds written by icefloe equal to Java's for the same rows, nanosecond filters;
- `unknown`: read as an Arrow `null` column in both engines, never stored;
- `variant`: read as the Arrow struct of its `metadata` and `value` buffers, byte for byte
  what Java reads, and written back so that Java reads the same values; on PySpark 3.5 (no
  variant type) an error naming the column, never other values (Spark 4 reads and writes it:
  tests/spark4/test_spark4_variant.py).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from icefloe import LongType, NestedField, Schema
from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.partitioning import PartitionField, PartitionSpec
from icefloe.transforms import BucketTransform, DayTransform
from icefloe.types import TimestampNanoType, TimestamptzNanoType, UnknownType, VariantType
from support.java import java_core_helper
from support.session import new_table_name

DAY = 86_400 * 10**9

# (id, ts nanos, tstz nanos): sub-microsecond digits, before 1970, nulls, several days.
ROWS: list[tuple[int, int | None, int | None]] = [
    (1, 1_000_000_001, 5),
    (2, -1, None),
    (3, 3 * DAY + 7, 7),
    (4, None, -999),
    (5, -DAY - 1, 1_700_000_000_123_456_789),
    (6, 1_700_000_000_123_456_789, -(10**18) - 3),
    (7, 3 * DAY + 999, 1_700_000_000_123_456_000),
    (8, 1_000_000_000, 1_000_000_001),
] + [(100 + i, i * 7_919_000_013 - 40 * DAY, i * 1_000_003) for i in range(40)]


def java(*args: str) -> str:
    proc = subprocess.run([*java_core_helper("V3TypesTable"), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def java_append(warehouse: Path, name: str, rows: list[tuple[int, int | None, int | None]]) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        for row in rows:
            f.write("\t".join("\\N" if v is None else str(v) for v in row) + "\n")
    try:
        java("append", f"file://{warehouse}", name, f.name)
    finally:
        os.unlink(f.name)


def java_rows(warehouse: Path, name: str) -> list[tuple[Any, ...]]:
    """Rows as Java's `IcebergGenerics` reads them: (id, ts nanos, tstz nanos, u), plus the
    variant `v` as "<metadata hex>:<value hex>" when the table has it."""
    out = []
    for line in java("read", f"file://{warehouse}", name).splitlines():
        fields = line.split("\t")
        vals: list[Any] = [None if v == "\\N" else int(v) for v in fields[:4]]
        vals += [None if v == "\\N" else v for v in fields[4:]]
        out.append(tuple(vals))
    return sorted(out, key=lambda r: r[0])


def icefloe_rows(table: Any, **scan: Any) -> list[tuple[Any, ...]]:
    t = table.scan(**scan).to_arrow()
    cols = [c for c in ("id", "ts", "tstz", "u") if c in t.column_names]
    data = [
        t.column(c).cast(pa.int64()).to_pylist() if c in ("ts", "tstz") else t.column(c).to_pylist()
        for c in cols
    ]
    return sorted(zip(*data), key=lambda r: r[0])


def expected(rows: list[tuple[int, int | None, int | None]]) -> list[tuple[Any, ...]]:
    return sorted(((i, ts, tz, None) for i, ts, tz in rows), key=lambda r: r[0])


def arrow_rows(rows: list[tuple[int, int | None, int | None]]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "ts": pa.array([r[1] for r in rows], pa.timestamp("ns")),
            "tstz": pa.array([r[2] for r in rows], pa.timestamp("ns", tz="UTC")),
        }
    )


def file_metrics(table: Any) -> dict[Any, dict[str, Any]]:
    """Data files by partition: counts and bounds, as a comparable dict."""
    out = {}
    for f in table.inspect.data_files().to_pylist():
        key = tuple(sorted(f["partition"].items()))
        assert key not in out, f"two files in partition {key}"
        out[key] = {
            k: f[k]
            for k in ("record_count", "value_counts", "null_value_counts", "lower_bounds", "upper_bounds")
        }
    return out


def test_nanosecond_and_unknown_columns_match_java_both_ways(
    spark: Any, catalog: Any, warehouse: Path
) -> None:
    java_name = new_table_name("ns_java")
    java("create", f"file://{warehouse}", java_name, "0")
    java_append(warehouse, java_name, ROWS)
    theirs = catalog.load_table(java_name)

    # Java's schema and spec as icefloe reads them.
    assert [f.field_type for f in theirs.schema().fields] == [
        LongType(),
        TimestampNanoType(),
        TimestamptzNanoType(),
        UnknownType(),
    ]
    assert [(f.name, str(f.transform)) for f in theirs.spec().fields] == [
        ("ts_day", "day"),
        ("tstz_bucket", "bucket[3]"),
    ]

    # icefloe reads Java's rows: nanosecond Arrow types, `unknown` as a null column.
    got = theirs.scan().to_arrow()
    assert got.schema.field("ts").type == pa.timestamp("ns")
    assert got.schema.field("tstz").type == pa.timestamp("ns", tz="UTC")
    assert got.schema.field("u").type == pa.null()
    assert icefloe_rows(theirs) == expected(ROWS) == java_rows(warehouse, java_name)

    # On Spark (3.5 has no nanosecond type): `unknown` reads as NullType, a nanosecond column
    # is refused by name, never truncated.
    import icefloe.spark

    rows = icefloe.spark.read(spark, theirs, selected_fields=("id", "u")).collect()
    assert sorted((r["id"], r["u"]) for r in rows) == [(r[0], None) for r in expected(ROWS)]
    with pytest.raises(NotSupportedError, match="column 'ts' has Iceberg type timestamp_ns"):
        icefloe.spark.read(spark, theirs)

    # Nanosecond filters prune and select at nanosecond precision.
    cut = 1_000_000_001
    assert icefloe_rows(theirs, row_filter="ts >= '1970-01-01T00:00:01.000000001'") == expected(
        [r for r in ROWS if r[1] is not None and r[1] >= cut]
    )
    assert icefloe_rows(theirs, row_filter="tstz < '1970-01-01T00:00:00.000000006+00:00'") == expected(
        [r for r in ROWS if r[2] is not None and r[2] < 6]
    )

    # The twin written by icefloe: same partitions, same counts and bounds per file as Java's.
    ours_name = new_table_name("ns_ours")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "ts", TimestampNanoType(), required=False),
        NestedField(3, "tstz", TimestamptzNanoType(), required=False),
        NestedField(4, "u", UnknownType(), required=False),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=3, field_id=1001, transform=BucketTransform(3), name="tstz_bucket"),
    )
    ours = catalog.create_table(ours_name, schema, partition_spec=spec, properties={"format-version": "3"})
    ours.append(arrow_rows(ROWS))
    assert file_metrics(catalog.load_table(ours_name)) == file_metrics(theirs)
    assert java_rows(warehouse, ours_name) == expected(ROWS)

    # A merge-on-read delete (a deletion vector) by icefloe, then an append by Java on top.
    ours.delete("id IN (3, 6, 107)")
    more = [(900, 5 * DAY + 1, 2), (901, None, None)]
    java_append(warehouse, ours_name, more)
    live = [r for r in ROWS if r[0] not in (3, 6, 107)] + more
    assert java_rows(warehouse, ours_name) == expected(live)
    assert icefloe_rows(catalog.load_table(ours_name)) == expected(live)


def variant_hex(v: dict[str, bytes] | None) -> str | None:
    return None if v is None else f"{v['metadata'].hex()}:{v['value'].hex()}"


def test_variant_column_reads_and_writes_as_java(spark: Any, catalog: Any, warehouse: Path) -> None:
    name = new_table_name("variant")
    java("create", f"file://{warehouse}", name, "1")
    java_append(warehouse, name, ROWS[:8])
    table = catalog.load_table(name)
    assert table.schema().find_field("v").field_type == VariantType()

    # Every row with its variant, byte for byte as Java reads it (objects, strings, longs and
    # nulls), as the Arrow struct of Parquet's two buffers.
    t = table.scan().to_arrow()
    v_type = t.schema.field("v").type
    assert [(f.name, f.type, f.nullable) for f in v_type] == [
        ("metadata", pa.binary(), False),
        ("value", pa.binary(), False),
    ]
    assert t.schema.field("v").metadata[b"ARROW:extension:name"] == b"arrow.parquet.variant"
    ours = sorted(zip(t.column("id").to_pylist(), map(variant_hex, t.column("v").to_pylist())))
    theirs = [(r[0], r[4]) for r in java_rows(warehouse, name)]
    assert ours == theirs
    assert {v is None for _, v in ours} == {True, False}
    assert icefloe_rows(table, selected_fields=("id", "ts", "tstz", "u")) == expected(ROWS[:8])

    # Spark 3.5 has no variant type: reading the column through Spark names it.
    import icefloe.spark

    with pytest.raises(NotSupportedError, match=r"column 'v' has Iceberg type variant, which Spark 3"):
        icefloe.spark.read(spark, table, selected_fields=("id", "v"))
    assert icefloe.spark.read(spark, table, selected_fields=("id",)).count() == 8

    # Written back (the rows read, under new ids): Java reads the same variants, and the new
    # file's counts for `v` are those of Java's file of the same rows (no bounds, as Java).
    again = t.set_column(t.schema.get_field_index("id"), "id", pc.add(t.column("id"), 1000))
    table.append(again)
    theirs_now = {r[0]: r[4] for r in java_rows(warehouse, name)}
    assert {i - 1000: v for i, v in theirs_now.items() if i >= 1000} == dict(theirs)
    files = table.refresh().inspect.data_files().to_pylist()
    # Each partition has Java's file and ours of the same rows: the same counts, twice.
    counts = Counter(
        (str(f["partition"]), dict(f["value_counts"])[5], dict(f["null_value_counts"])[5]) for f in files
    )
    assert len(files) > 2 and set(counts.values()) == {2}, counts
    assert any(nulls for _, _, nulls in counts), counts
    assert all(5 not in dict(f["lower_bounds"] or {}) for f in files)

    # A malformed variant is refused by row before anything is written or committed.
    before = table.current_snapshot().snapshot_id
    data_dir = Path(table.location().removeprefix("file:").removeprefix("//")) / "data"
    files_before = sorted(p for p in data_dir.rglob("*") if p.is_file())
    bad = again.slice(0, 1).set_column(
        t.schema.get_field_index("v"),
        t.schema.field("v"),
        pa.StructArray.from_arrays(
            [pa.array([b"\x02\x00\x00"]), pa.array([b"\x00"])], fields=list(t.schema.field("v").type)
        ),
    )
    with pytest.raises(ValidationError, match=r"'v' \(field id 5\) row 0: metadata of encoding version 2"):
        table.append(bad)
    assert catalog.load_table(name).current_snapshot().snapshot_id == before
    assert sorted(p for p in data_dir.rglob("*") if p.is_file()) == files_before


def test_an_arrow_schema_with_nanosecond_timestamps_creates_nanosecond_columns_on_v3(catalog: Any) -> None:
    """PyIceberg's mapping: on v3 an Arrow `timestamp[ns]` column becomes `timestamp_ns` /
    `timestamptz_ns`, so its nanoseconds survive a write (they were cut to microseconds);
    before v3 it is a microsecond column."""
    data = arrow_rows(ROWS[:8])
    catalog.create_namespace_if_not_exists("db")
    v3 = catalog.create_table(
        new_table_name("ns_arrow"), schema=data.schema, properties={"format-version": "3"}
    )
    assert [f.field_type for f in v3.schema().fields][1:] == [TimestampNanoType(), TimestamptzNanoType()]
    v3.append(data)
    assert icefloe_rows(v3) == [r[:3] for r in expected(ROWS[:8])]
    v2 = catalog.create_table(new_table_name("ns_arrow_v2"), schema=data.schema)
    assert [f.field_type.to_json() for f in v2.schema().fields][1:] == ["timestamp", "timestamptz"]


def test_nanoseconds_into_microsecond_columns_are_kept_whole_or_refused(catalog: Any) -> None:
    """Arrow nanosecond timestamps appended to microsecond columns (a v2 table, or a v3 table
    created with `timestamp` columns): values of whole microseconds are stored exactly; a value
    with sub-microsecond digits is refused with the column named and nothing committed (Arrow's
    cast cut the digits off silently). PyIceberg refuses every nanosecond column unless told to
    downcast."""
    catalog.create_namespace_if_not_exists("db")
    rows = ROWS[:8]
    data = arrow_rows(rows)
    name = new_table_name("ns_into_us")
    table = catalog.create_table(name, schema=data.schema)
    with pytest.raises(ValidationError, match=r"'ts'.*row 0: 1000000001 ns"):
        table.append(data)
    assert catalog.load_table(name).current_snapshot() is None
    only_tstz_cut = arrow_rows([(i, None if ts is None else ts - ts % 1000, tz) for i, ts, tz in rows])
    with pytest.raises(ValidationError, match=r"'tstz'.*row 0: 5 ns"):
        table.append(only_tstz_cut)
    whole = [
        (i, None if ts is None else ts - ts % 1000, None if tz is None else tz - tz % 1000)
        for i, ts, tz in rows
    ]
    table.append(arrow_rows(whole))
    got = table.scan().to_arrow()
    assert got.schema.field("ts").type == pa.timestamp("us")
    assert icefloe_rows(table) == [
        (i, None if ts is None else ts // 1000, None if tz is None else tz // 1000)
        for i, ts, tz in sorted(whole)
    ]
