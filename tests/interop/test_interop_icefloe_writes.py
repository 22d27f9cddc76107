# ruff: noqa: E501
"""Tables written by icefloe and read by Apache Iceberg Java (the oracle).

icefloe's filesystem catalog shares its warehouse with Spark's Iceberg catalog ``oracle``, so a table
``db.t`` that icefloe creates is ``oracle.db.t`` for Java. Java must return exactly the rows
icefloe wrote, list ``append`` snapshots with true summary totals, and report file metrics equal to
the truth computed here with pyarrow from the written Parquet files.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.all_types import (
    ARROW_SCHEMA,
    BATCH_1,
    BATCH_2,
    BATCH_3,
    BATCHES,
    ESCAPING,
    UTC,
    arrow_batch,
    spark_df,
)
from support.oracle import Oracle, assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]


def identity_spec() -> Any:
    from icefloe.partitioning import PartitionField, PartitionSpec

    # `category` is the second top-level column: field id 2 however ids are assigned.
    return PartitionSpec(PartitionField(source_id=2, field_id=1000, transform="identity", name="category"))


def local_path(path: str) -> str:
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


def files_under(folder: Path) -> set[str]:
    if not folder.exists():
        return set()
    return {str(p) for p in folder.rglob("*") if p.is_file()}


# ------------------------------------------------------------------------------------------------
# metrics truth, computed from the written Parquet files with pyarrow
# ------------------------------------------------------------------------------------------------


def leaf_array(table: pa.Table, dotted: str) -> tuple[pa.Array, bool]:
    """The values of leaf column ``dotted`` (e.g. ``st.inner.x``, ``m.key``, ``arr.element``) and
    whether it is inside a list or map (repeated)."""
    parts = dotted.split(".")
    arr: Any = table.column(parts[0]).combine_chunks()
    repeated = False
    for part in parts[1:]:
        t = arr.type
        if pa.types.is_struct(t):
            arr = arr.flatten()[t.get_field_index(part)]  # flatten() merges the parent's nulls
        elif pa.types.is_map(t):
            repeated = True
            arr = arr.keys if part == "key" else arr.items
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            assert part == "element", dotted
            repeated = True
            arr = arr.flatten()
        else:
            raise AssertionError(f"cannot descend into {t} for {dotted}")
    return arr, repeated


def _sort_key(v: Any) -> Any:
    if isinstance(v, float):
        return (v, math.copysign(1.0, v))  # -0.0 < +0.0, as Iceberg orders floats
    return v


def truncate_upper_str(s: str, width: int = 16) -> str | None:
    if len(s) <= width:
        return s
    cps = list(s[:width])
    for i in range(width - 1, -1, -1):
        c = ord(cps[i]) + 1
        if 0xD800 <= c <= 0xDFFF:
            c = 0xE000
        if c <= 0x10FFFF:
            return "".join(cps[:i]) + chr(c)
    return None


def truncate_upper_bytes(b: bytes, width: int = 16) -> bytes | None:
    if len(b) <= width:
        return b
    head = bytearray(b[:width])
    while head:
        if head[-1] < 0xFF:
            head[-1] += 1
            return bytes(head)
        head.pop()
    return None


def truth(arr: pa.Array) -> dict[str, Any]:
    values = arr.to_pylist()
    t = arr.type
    is_float = pa.types.is_floating(t)
    non_null = [v for v in values if v is not None]
    nan = sum(1 for v in non_null if is_float and math.isnan(v))
    ordered = [v for v in non_null if not (is_float and math.isnan(v))]
    lower = min(ordered, key=_sort_key) if ordered else None
    upper = max(ordered, key=_sort_key) if ordered else None
    if is_float and lower == 0.0:  # a zero bound covers both zeros (Parquet's statistics rule)
        lower = -0.0
    if is_float and upper == 0.0:
        upper = 0.0
    if isinstance(lower, str):
        lower, upper = lower[:16], truncate_upper_str(upper)
    elif isinstance(lower, bytes):
        lower, upper = lower[:16], truncate_upper_bytes(upper)
    return {
        "value_count": len(values),
        "null_value_count": len(values) - len(non_null),
        "nan_value_count": nan if is_float else None,
        "lower_bound": lower,
        "upper_bound": upper,
    }


def canon_bound(v: Any) -> Any:
    """Primitive values from Arrow (truth) and from Spark (Java's readable_metrics) made comparable."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, float):
        return ("float", "nan") if math.isnan(v) else ("float", v, math.copysign(1.0, v))
    if isinstance(v, decimal.Decimal):
        return ("dec", v, v.as_tuple().exponent)
    if isinstance(v, dt.datetime):
        epoch = dt.datetime(1970, 1, 1, tzinfo=UTC) if v.tzinfo else dt.datetime(1970, 1, 1)
        return ("ts", (v - epoch) // dt.timedelta(microseconds=1))
    if isinstance(v, dt.date):
        return ("date", (v - dt.date(1970, 1, 1)).days)
    if isinstance(v, (bytes, bytearray)):
        return ("bytes", bytes(v))
    return (type(v).__name__, v)


def check_file_metrics(oracle: Oracle, table: str) -> None:
    files = oracle.data_files(table)
    assert files, "Java lists no data files"
    jt = oracle.java_table(table)
    schema = jt.schema()
    checked_leaves = set()
    for f in files:
        path = local_path(f["file_path"])
        assert os.path.getsize(path) == f["file_size_in_bytes"], f"file_size_in_bytes wrong for {path}"
        data = pq.read_table(path)
        assert data.num_rows == f["record_count"], path
        for col, metrics in f["readable_metrics"].items():
            fid = schema.findField(col).fieldId()
            arr, repeated = leaf_array(data, col)
            want = truth(arr)
            ctx = f"{col} (field {fid}) in {os.path.basename(path)}"
            if repeated:
                # Java itself writes no counts for repeated leaves; if present they must be sound
                if metrics["value_count"] is not None:
                    assert metrics["null_value_count"] is not None, ctx
                    assert metrics["null_value_count"] <= metrics["value_count"], ctx
                if metrics["lower_bound"] is not None and want["lower_bound"] is not None:
                    assert canon_bound(metrics["lower_bound"]) <= canon_bound(want["lower_bound"]), ctx
                continue
            checked_leaves.add(col)
            assert metrics["value_count"] == want["value_count"], ctx
            assert metrics["null_value_count"] == want["null_value_count"], ctx
            if want["nan_value_count"] is not None:
                assert metrics["nan_value_count"] == want["nan_value_count"], ctx
            assert canon_bound(metrics["lower_bound"]) == canon_bound(want["lower_bound"]), (
                f"lower bound of {ctx}: {metrics['lower_bound']!r} != {want['lower_bound']!r}"
            )
            assert canon_bound(metrics["upper_bound"]) == canon_bound(want["upper_bound"]), (
                f"upper bound of {ctx}: {metrics['upper_bound']!r} != {want['upper_bound']!r}"
            )
            # the raw maps agree with the readable view
            assert f["value_counts"][fid] == want["value_count"], ctx
            assert f["null_value_counts"][fid] == want["null_value_count"], ctx
    expected_leaves = {"id", "category", "b", "i", "l", "f", "d", "dec9", "dec38", "dt", "ts", "ts_ntz", "name",
                       "bin", "st.a", "st.b", "st.inner.x"}  # fmt: skip
    assert expected_leaves <= checked_leaves, expected_leaves - checked_leaves


def check_snapshots(oracle: Oracle, table: str, batch_sizes: list[int]) -> None:
    snaps = oracle.snapshots(table)
    assert [s["operation"] for s in snaps] == ["append"] * len(batch_sizes)
    jt = oracle.java_table(table)
    total_records = total_files = total_size = 0
    for snap, size in zip(snaps, batch_sizes):
        summary = snap["summary"]
        jsnap = jt.snapshot(snap["snapshot_id"])
        added = list(_jiter(jsnap.addedDataFiles(jt.io())))
        added_size = sum(f.fileSizeInBytes() for f in added)
        total_records += size
        total_files += len(added)
        total_size += added_size
        ctx = f"snapshot {snap['snapshot_id']}: {summary}"
        assert int(summary["added-records"]) == size, ctx
        assert sum(f.recordCount() for f in added) == size, ctx
        assert int(summary["added-data-files"]) == len(added), ctx
        assert int(summary["added-files-size"]) == added_size, ctx
        assert int(summary["total-records"]) == total_records, ctx
        assert int(summary["total-data-files"]) == total_files, ctx
        assert int(summary["total-files-size"]) == total_size, ctx
        for f in added:
            assert os.path.getsize(local_path(f.location())) == f.fileSizeInBytes(), f.location()


def _jiter(iterable: Any) -> Any:
    it = iterable.iterator()
    while it.hasNext():
        yield it.next()


# ------------------------------------------------------------------------------------------------
# tests
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("partitioned", [False, True], ids=["unpartitioned", "identity"])
def test_java_reads_icefloe_appends(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, partitioned: bool
) -> None:
    import icefloe.spark

    table = catalog.create_table(
        table_name, schema=ARROW_SCHEMA, partition_spec=identity_spec() if partitioned else None
    )
    jt = oracle.java_table(table_name)
    assert [c.name() for c in jt.schema().columns()] == ARROW_SCHEMA.names
    assert jt.schema().findField("id").isRequired()
    if partitioned:
        spec = jt.spec()
        assert spec.fields().size() == 1
        field = spec.fields().get(0)
        assert field.transform().toString() == "identity"
        assert jt.schema().findField(field.sourceId()).name() == "category"
    else:
        assert jt.spec().isUnpartitioned()

    table.append(arrow_batch(BATCH_1))
    icefloe.spark.append(spark_df(spark, BATCH_2), table)
    table.append(arrow_batch(BATCH_3))

    expected = pa.concat_tables([arrow_batch(b) for b in BATCHES])
    assert_same_rows(oracle.df(table_name), expected)
    snaps = oracle.snapshot_ids(table_name)
    for k, snapshot_id in enumerate(snaps):
        assert_same_rows(
            oracle.df(table_name, snapshot_id),
            pa.concat_tables([arrow_batch(b) for b in BATCHES[: k + 1]]),
            context=f"snapshot {k + 1}",
        )
    check_snapshots(oracle, table_name, [len(b) for b in BATCHES])
    check_file_metrics(oracle, table_name)
    for f in oracle.data_files(table_name):
        assert f["file_path"].startswith(jt.location().rstrip("/") + "/data/"), f["file_path"]
        if partitioned:
            cats = set(pq.read_table(local_path(f["file_path"]), columns=["category"]).column(0).to_pylist())
            assert cats == {f["partition"]["category"]}, f["file_path"]
    if partitioned:
        parts = {f["partition"]["category"] for f in oracle.data_files(table_name)}
        assert parts == {"a", "b", ESCAPING, None}

    # icefloe reads its own table like Java does
    reloaded = catalog.load_table(table_name)
    assert_same_rows(reloaded.scan().to_arrow(), oracle.df(table_name))
    assert_same_rows(icefloe.spark.read(spark, reloaded), oracle.df(table_name))

    # Java appends to our table; both read both
    # Spark 3.5 does not null-fill columns missing from an INSERT column list on v2
    # tables: name every column. Columns: id, category, b, i, l, f, d, dec9, dec38, dt,
    # ts, ts_ntz, name, bin, st, arr, m, arr_st, m_arr.
    oracle.sql(
        f"INSERT INTO {oracle.qualified(table_name)} VALUES "
        "(100, 'a', null, null, null, null, CAST('NaN' AS double), null, null, null, "
        "TIMESTAMP'1969-12-31 23:59:59', null, 'from java', null, null, array(1), map('j', 1), null, null), "
        "(101, 'java-only', true, null, null, null, -0.0, null, null, null, "
        "null, null, null, null, null, null, null, null, null)"
    )
    assert len(oracle.snapshot_ids(table_name)) == 4
    reloaded = catalog.load_table(table_name)
    assert len(reloaded.snapshots()) == 4
    java_rows = oracle.df(table_name)
    assert len(java_rows.collect()) == 11
    assert_same_rows(reloaded.scan().to_arrow(), java_rows)
    assert_same_rows(icefloe.spark.read(spark, reloaded), java_rows)


def test_java_reads_sql_catalog_table(spark: Any, oracle: Oracle, tmp_path: Path) -> None:
    import icefloe
    import icefloe.spark

    wh2 = tmp_path / "sql_warehouse"
    wh2.mkdir()
    cat = icefloe.load_catalog(
        "sqlcat", type="sql", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=str(wh2)
    )
    name = "db.sql_t"
    try:
        cat.create_namespace("db")
    except Exception as e:  # the catalog may create namespaces implicitly
        if type(e).__name__ != "NamespaceAlreadyExistsError":
            raise
    table = cat.create_table(name, schema=ARROW_SCHEMA)
    table.append(arrow_batch(BATCH_1))
    icefloe.spark.append(spark_df(spark, BATCH_2), table)
    table = cat.load_table(name)
    location = table.metadata_location
    assert Path(local_path(location)).is_file(), location
    assert str(local_path(location)).startswith(str(wh2)), location

    java_df = spark.read.format("iceberg").load(location)
    assert_same_rows(java_df, pa.concat_tables([arrow_batch(BATCH_1), arrow_batch(BATCH_2)]))
    jt = oracle.java_table_at(location)
    snaps = list(_jiter(jt.snapshots()))
    assert [s.operation() for s in snaps] == ["append", "append"]
    assert [int(s.summary().get("added-records")) for s in snaps] == [len(BATCH_1), len(BATCH_2)]
    assert int(snaps[-1].summary().get("total-records")) == len(BATCH_1) + len(BATCH_2)
    assert [s.snapshotId() for s in snaps] == [s.snapshot_id for s in table.snapshots()]


MISMATCH_SCHEMA = pa.schema(
    [
        pa.field("req_key", pa.int64(), nullable=False),
        pa.field("amount_dbl", pa.float64()),
        pa.field("label_str", pa.string()),
    ]
)
GOOD = pa.Table.from_pylist([{"req_key": 1, "amount_dbl": 1.5, "label_str": "x"}], schema=MISMATCH_SCHEMA)


def _bad_arrow(case: str) -> tuple[pa.Table, list[str]]:
    if case == "missing_required":
        return pa.table({"amount_dbl": pa.array([1.0]), "label_str": pa.array(["a"])}), ["req_key"]
    if case == "wrong_type":
        return pa.table({"req_key": pa.array([1], pa.int64()), "amount_dbl": pa.array(["1.0"]),
                         "label_str": pa.array(["a"])}), ["amount_dbl"]  # fmt: skip
    if case == "null_in_required":
        return pa.table({"req_key": pa.array([1, None], pa.int64()), "amount_dbl": pa.array([1.0, 2.0]),
                         "label_str": pa.array(["a", "b"])}), ["req_key"]  # fmt: skip
    if case == "two_bad_columns":
        return pa.table({"amount_dbl": pa.array([True]), "label_str": pa.array(["a"])}), [
            "req_key",
            "amount_dbl",
        ]
    raise AssertionError(case)


def _bad_df(spark: Any, case: str) -> tuple[Any, list[str]]:
    if case == "missing_required":
        return spark.createDataFrame([(1.0, "a")], "amount_dbl double, label_str string"), ["req_key"]
    if case == "wrong_type":
        return spark.createDataFrame(
            [(1, "1.0", "a")], "req_key bigint, amount_dbl string, label_str string"
        ), ["amount_dbl"]
    if case == "null_in_required":
        return spark.createDataFrame(
            [(1, 1.0, "a"), (None, 2.0, "b")], "req_key bigint, amount_dbl double, label_str string"
        ), ["req_key"]
    if case == "two_bad_columns":
        return spark.createDataFrame([(True, "a")], "amount_dbl boolean, label_str string"), [
            "req_key",
            "amount_dbl",
        ]
    raise AssertionError(case)


@pytest.mark.parametrize("via", ["arrow", "spark"])
@pytest.mark.parametrize("case", ["missing_required", "wrong_type", "null_in_required", "two_bad_columns"])
def test_bad_appends_are_rejected_and_leave_nothing(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, case: str, via: str
) -> None:
    import icefloe.spark
    from icefloe.exceptions import ValidationError

    table = catalog.create_table(table_name, schema=MISMATCH_SCHEMA)
    table.append(GOOD)
    data_dir = Path(local_path(oracle.java_table(table_name).location())) / "data"
    before_files = files_under(data_dir)
    before_snaps = oracle.snapshot_ids(table_name)
    assert len(before_snaps) == 1

    if via == "arrow":
        bad, offending = _bad_arrow(case)
        with pytest.raises(ValidationError) as info:
            table.append(bad)
    else:
        bad, offending = _bad_df(spark, case)
        with pytest.raises(ValidationError) as info:
            icefloe.spark.append(bad, table)
    message = str(info.value)
    for col in offending:
        assert col in message, f"{col!r} not named in: {message}"
    assert "label_str" not in message, message

    assert oracle.snapshot_ids(table_name) == before_snaps
    assert len(catalog.load_table(table_name).snapshots()) == 1
    assert files_under(data_dir) == before_files
    assert_same_rows(oracle.df(table_name), GOOD)
