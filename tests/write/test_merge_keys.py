"""Which rows an in-process MERGE / upsert matches and what it takes from the source: float
and double join keys against Java's `MERGE INTO` (Spark normalizes floating join keys, so NaN
matches NaN and -0.0 matches 0.0), and an upsert whose rows lack a column, against
PyIceberg's `Table.upsert`."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.exceptions import CommitConflictError, ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

NAN = math.nan
# Two files: the zeros of either sign in different files, so that a key filter whose bounds
# check ordered -0.0 below 0.0 would skip one of them.
TARGET = [[(NAN, "nan"), (0.0, "zero"), (1.0, "one")], [(-0.0, "negzero"), (2.0, "two"), (None, "null")]]
# Step 1: NaN and 0.0 (matching 0.0 and -0.0) update, 3.0 and a null key insert; step 2: a
# -0.0 key against the rows step 1 gave 0.0, and NaN again.
STEPS = [
    [(NAN, "nan-1"), (0.0, "zero-1"), (3.0, "three"), (None, "null-key")],
    [(-0.0, "negzero-2"), (NAN, "nan-2"), (4.0, "four")],
]


def _twins(
    oracle: Oracle, prefix: str, key_type: str, props: str, target: list[list[tuple[Any, str]]] = TARGET
) -> tuple[str, str]:
    java, ours = new_table_name(f"{prefix}_java"), new_table_name(f"{prefix}_ours")
    spark = oracle.spark
    for name in (java, ours):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (k {key_type}, v STRING) USING iceberg "
            f"TBLPROPERTIES ({props})"
        )
        for part in target:
            spark.createDataFrame(part, f"k {key_type}, v string").coalesce(1).writeTo(
                oracle.qualified(name)
            ).append()
    return java, ours


def _source(spark: Any, rows: list[tuple[Any, str]], key_type: str) -> pa.Table:
    """The rows as Java's source view `mk_src` and as the Arrow source (same values)."""
    spark.createDataFrame(rows, f"k {key_type}, v string").createOrReplaceTempView("mk_src")

    def signs(keys: list[Any]) -> list[Any]:
        return [k if k is None or math.isnan(k) else math.copysign(1.0, k) for k in keys]

    kept = [r["k"] for r in spark.table("mk_src").collect()]
    assert str(signs(kept)) == str(signs([k for k, _ in rows])), "Spark's source keeps each key's sign"
    arrow_type = pa.float32() if key_type == "FLOAT" else pa.float64()
    return pa.table({"k": pa.array([k for k, _ in rows], arrow_type), "v": [v for _, v in rows]})


def _same(oracle: Oracle, catalog: Any, java: str, ours: str, step: str) -> None:
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours after {step}")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe after {step}")


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize(
    ("mode", "key_type", "by_source"),
    [
        ("merge-on-read", "DOUBLE", False),
        ("copy-on-write", "FLOAT", False),
        ("copy-on-write", "DOUBLE", True),
    ],
)
def test_merge_on_float_keys_matches_nan_and_signed_zero_as_java(
    oracle: Oracle, catalog: Any, mode: str, key_type: str, by_source: bool
) -> None:
    """NaN matches NaN and 0.0 matches -0.0 (either way round), as in Java's MERGE INTO;
    the updated key is the source's. It failed on the NaN key (the target read's IN filter)
    and, without it, inserted -0.0 beside the 0.0 row instead of updating it."""
    props = f"'format-version'='2', 'write.merge.mode'='{mode}'"
    java, ours = _twins(oracle, "mk", key_type, props)
    for i, rows in enumerate(STEPS):
        source = _source(oracle.spark, rows, key_type)
        oracle.sql(
            f"MERGE INTO {oracle.qualified(java)} t USING mk_src s ON t.k = s.k "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * "
            + ("WHEN NOT MATCHED BY SOURCE AND t.k > 1.5 THEN DELETE" if by_source else "")
        )
        m = catalog.load_table(ours).merge(source, "target.k = source.k")
        m = m.when_matched_update_all().when_not_matched_insert_all()
        if by_source:
            m = m.when_not_matched_by_source_delete("target.k > 1.5")
        metrics = m.execute()
        assert metrics.rows_updated == 3, f"step {i}: NaN and both zeros match"
        _same(oracle, catalog, java, ours, f"step {i}")


# One row per key (an upsert's table): 0.0 in a file whose lower bound is 0.0, so a filter on
# -0.0 alone would skip the file by its bounds.
UPSERT_TARGET = [[(NAN, "nan"), (0.0, "zero"), (1.0, "one")], [(2.0, "two"), (None, "null")]]
UPSERT_STEPS = [
    [(-0.0, "negzero-1"), (NAN, "nan-1"), (3.0, "three")],
    [(0.0, "zero-2"), (NAN, "nan-2"), (4.0, "four")],
]


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize("version", ["2", "3"])
def test_copy_on_write_upsert_on_float_keys_matches_javas_merge(
    oracle: Oracle, catalog: Any, version: str
) -> None:
    """`Table.upsert` (v2: an overwrite of the keys' rows, v3: a MERGE) replaces the NaN row
    and the row of the other zero as Java's `MERGE ... UPDATE SET * ... INSERT *` on a twin.
    It failed on the NaN key (NaN is no IN literal); a -0.0 key then left the 0.0 row."""
    props = f"'format-version'='{version}', 'write.merge.mode'='copy-on-write'"
    java, ours = _twins(oracle, f"mku{version}", "DOUBLE", props, UPSERT_TARGET)
    for i, rows in enumerate(UPSERT_STEPS):
        source = _source(oracle.spark, rows, "DOUBLE")
        oracle.sql(
            f"MERGE INTO {oracle.qualified(java)} t USING mk_src s ON t.k = s.k "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
        )
        result = catalog.load_table(ours).upsert(source, join_cols=["k"])
        assert (result.rows_updated, result.rows_inserted) == (2, 1), f"step {i}"
        _same(oracle, catalog, java, ours, f"upsert step {i}")


def test_upsert_keeps_the_last_of_keys_spark_compares_equal(tmp_path: Path) -> None:
    """Source rows whose keys are -0.0 and 0.0 (or two NaNs) are one key: the last given
    wins, as for any duplicate key, instead of both matching one target row (a MERGE
    refuses that) or both being inserted."""
    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    schema = pa.schema([pa.field("k", pa.float64()), pa.field("v", pa.string())])
    for version in ("2", "3"):
        t = cat.create_table(
            f"db.t{version}",
            schema=schema,
            properties={"format-version": version, "write.merge.mode": "copy-on-write"},
        )
        t.append(pa.table({"k": [0.0, NAN], "v": ["zero", "nan"]}, schema=schema))
        # A NaN of another payload (sign bit set) before the plain one.
        other_nan = pa.array([0xFFF8000000000000], pa.uint64()).view(pa.float64())
        src = pa.table(
            {
                "k": pa.concat_arrays([pa.array([-0.0, 0.0]), other_nan, pa.array([NAN])]),
                "v": ["first", "last", "nan-first", "nan-last"],
            }
        )
        result = t.upsert(src, join_cols=["k"])
        assert (result.rows_updated, result.rows_inserted) == (2, 0), version
        got = sorted((r["v"], str(r["k"])) for r in t.scan().to_arrow().to_pylist())
        assert got == [("last", "0.0"), ("nan-last", "nan")], version


def test_v2_upsert_counts_a_key_held_by_two_rows_once(tmp_path: Path) -> None:
    """The v2 copy-on-write upsert counts as inserted the rows whose key no row of the table
    holds (it once took the number of matched table rows from the rows given, so a key held
    by two rows, appended twice or 0.0 and -0.0, made an insert vanish from the counts), and,
    as PyIceberg's upsert (a MERGE, as on v3), every row of a key takes the new values: a key
    held twice stays two rows."""
    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    schema = pa.schema([pa.field("k", pa.float64()), pa.field("v", pa.string())])
    t = cat.create_table("db.t", schema=schema, properties={"format-version": "2"})
    t.append(pa.table({"k": [5.0, 0.0], "v": ["a", "zero"]}, schema=schema))
    t.append(pa.table({"k": [5.0, -0.0], "v": ["b", "negzero"]}, schema=schema))
    result = t.upsert(pa.table({"k": [5.0, 0.0, 6.0], "v": ["new5", "new0", "new6"]}, schema=schema), ["k"])
    assert (result.rows_written, result.rows_updated, result.rows_inserted) == (3, 4, 1)
    assert sorted(t.scan().to_arrow().column("v").to_pylist()) == ["new0", "new0", "new5", "new5", "new6"]


@pytest.mark.parametrize(("source_key", "concurrent_key"), [(NAN, NAN), (-0.0, 0.0), (0.0, -0.0)])
def test_merge_on_read_merge_conflicts_with_a_concurrent_row_of_a_float_key(
    tmp_path: Path, source_key: float, concurrent_key: float
) -> None:
    """A merge-on-read MERGE narrows its conflict scope to the source's keys; a concurrent
    append of a row with the key NaN (or the other zero) is in that scope: had the MERGE seen
    it, the key would have matched it (Java's serializable MERGE, whose scope is the whole
    table, conflicts). The scope left NaN out, and a -0.0 key's IN filter ruled out a file
    whose bounds are [0.0, 0.0]. A row of another key still does not conflict."""
    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    schema = pa.schema([pa.field("k", pa.float64()), pa.field("v", pa.string())])
    props = {"write.merge.mode": "merge-on-read", "commit.retry.min-wait-ms": "1"}
    t = cat.create_table("db.t", schema=schema, properties=props)
    t.append(pa.table({"k": [1.0, 2.0], "v": ["one", "two"]}, schema=schema))
    source = pa.table({"k": [source_key, 1.0], "v": ["new", "one-new"]}, schema=schema)

    other = cat.load_table("db.t")
    other.append(pa.table({"k": [7.0], "v": ["unrelated"]}, schema=schema))
    t.merge(source, "target.k = source.k").when_matched_update_all().execute()

    stale = cat.load_table("db.t")
    other.refresh().append(pa.table({"k": [concurrent_key], "v": ["concurrent"]}, schema=schema))
    merge = stale.merge(source, "target.k = source.k").when_matched_update_all().when_not_matched_insert_all()
    with pytest.raises(CommitConflictError):
        merge.execute()
    got = sorted((r["v"], str(r["k"])) for r in t.refresh().scan().to_arrow().to_pylist())
    assert got == [
        ("concurrent", str(concurrent_key)),
        ("one-new", "1.0"),
        ("two", "2.0"),
        ("unrelated", "7.0"),
    ]


# ---- a source without one of the table's columns, against PyIceberg ----
def test_upsert_of_rows_lacking_an_optional_column_is_refused_as_pyiceberg(tmp_path: Path) -> None:
    """PyIceberg's `Table.upsert` fails on rows without one of the table's optional columns
    as soon as one of them matches a row of the table (it casts the source to the table's
    schema), so icefloe refuses such rows on v2 and v3 tables in both write modes with a
    ValidationError naming the column, and leaves the table as it was. The v3 copy-on-write
    upsert said 'MERGE update_all: the source has no column'; the others stored nulls over
    the matched rows' values."""
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog
    from pyiceberg.schema import Schema as PySchema
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType

    full = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("data", pa.string()),
            pa.field("x", pa.float64()),
        ]
    )
    before = pa.table({"id": [1, 2, 3], "data": ["a", "b", "c"], "x": [1.0, 2.0, 3.0]}, schema=full)
    partial = pa.table({"id": [2, 9], "data": ["B", "new"]}, schema=pa.schema(list(full)[:2]))

    py = PyIcebergSqlCatalog(
        "py", uri=f"sqlite:///{tmp_path / 'py.db'}", warehouse=f"file://{tmp_path / 'py-wh'}"
    )
    py.create_namespace("db")
    pt = py.create_table(
        "db.t",
        schema=PySchema(
            NestedField(1, "id", LongType(), required=True),
            NestedField(2, "data", StringType()),
            NestedField(3, "x", DoubleType()),
        ),
    )
    pt.append(before)
    with pytest.raises(ValueError, match="field names are not matching"):
        pt.upsert(partial, join_cols=["id"])
    assert pt.refresh().scan().to_arrow().sort_by("id").equals(before)

    cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    for version in ("2", "3"):
        for mode in ("copy-on-write", "merge-on-read"):
            t = cat.create_table(
                f"db.t{version}_{mode.replace('-', '_')}",
                schema=full,
                properties={"format-version": version, "write.merge.mode": mode},
            )
            t.append(before)
            snapshot = t.current_snapshot()
            with pytest.raises(ValidationError, match=r"lack column\(s\) \['x'\]"):
                t.upsert(partial, join_cols=["id"])
            assert t.refresh().current_snapshot() == snapshot, (version, mode)
            # With every column, the same upsert goes through.
            whole = partial.append_column(full.field("x"), pa.array([20.0, 90.0]))
            t.upsert(whole, join_cols=["id"])
            got = t.scan().to_arrow().sort_by("id").to_pylist()
            assert [(r["id"], r["data"], r["x"]) for r in got] == [
                (1, "a", 1.0),
                (2, "B", 20.0),
                (3, "c", 3.0),
                (9, "new", 90.0),
            ], (version, mode)
