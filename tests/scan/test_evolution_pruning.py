"""Reads and row-level changes after type promotion of a partition source column, against
Apache Iceberg Java 1.12 and Spark's own filter.

Manifests written before `ALTER COLUMN ... TYPE` keep the partition values in the old Avro type
(an `int` value of an identity / truncate field whose source is `long` now, a `float` value of
one that is `double` now); Java reads them as the field's current type. Every filtered scan here
returns exactly the rows Spark's own filter keeps from Java's unfiltered read (icefloe in
process and on Spark), and the writes that carry old entries into new manifests (merge append,
copy-on-write and merge-on-read deletes, upserts with equality deletes, overwrite by filter)
keep and drop the rows Java's `DELETE FROM` does, in a table Java reads the same.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle, assert_same_rows, rows_per_filter
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

# id, i (int -> long), f (float -> double), d (decimal(9,2) -> decimal(12,2)), as SQL literals.
BEFORE = [
    (1, "-2147483640", "CAST(0.1 AS FLOAT)", "-9999999.00BD"),
    (2, "2147483647", "CAST(-0.0 AS FLOAT)", "9999999.99BD"),
    (3, "7", "CAST(3.4028235e38 AS FLOAT)", "0.10BD"),
    (4, "NULL", "CAST(-1.5 AS FLOAT)", "NULL"),
    (5, "0", "CAST(1.0/3 AS FLOAT)", "1.00BD"),
    (6, "-1", "NULL", "-0.01BD"),
]
AFTER = [
    (11, "2147483648", "0.1D", "99999999.99BD"),
    (12, "-2147483649", "CAST(CAST(0.1 AS FLOAT) AS DOUBLE)", "9999999.99BD"),
    (13, "7", "1e300D", "10000000.00BD"),
    (14, "5000000000", "-1e300D", "-99999999.99BD"),
    (15, "NULL", "-1.5D", "NULL"),
]

FILTERS = [
    "i = 2147483647",
    "i > 2147483647",
    "i >= 2147483647",
    "i <= -2147483640",
    "i = 2147483648",
    "i = 7",
    "i IN (7, 2147483648)",
    "i != 7",
    "i IS NULL",
    "i > 5",
    "i < 0",
    "f = 0.1",
    "f < 0.1",
    "f > 0.1",
    "f = 0.10000000149011612",
    "f >= 0.10000000149011612",
    "f <= 0.10000000149011612",
    "f < 0.10000000149011613",
    "f = 0.3333333432674408",
    "f >= 3.4028234663852886e38",
    "f = 0.0",
    "f IN (0.1, 0.10000000149011612)",
    "d = 9999999.99",
    "d > 9999999.99",
    "d < -9999999",
    "d = 99999999.99",
    "d > 10000000",
    "d = 0.1",
    "d < 0",
    "d IS NULL",
]

SPECS = {
    "identity_i": "PARTITIONED BY (i)",
    "truncate_i": "PARTITIONED BY (truncate(10, i))",
    "bucket_i": "PARTITIONED BY (bucket(4, i))",
    "identity_f": "PARTITIONED BY (f)",
    "identity_d": "PARTITIONED BY (d)",
    "truncate_d": "PARTITIONED BY (truncate(100, d))",
}


def _insert(oracle: Oracle, q: str, rows: list[tuple[Any, ...]], types: tuple[str, str, str]) -> None:
    for r in rows:  # one file (and manifest) each
        oracle.sql(
            f"INSERT INTO {q} SELECT {r[0]}L, CAST({r[1]} AS {types[0]}), "
            f"CAST({r[2]} AS {types[1]}), CAST({r[3]} AS {types[2]})"
        )


def _promoted_table(oracle: Oracle, catalog: Any, spec: str, props: str = "") -> str:
    """Rows written by Java before and after promoting i, f and d, and a copy of them
    appended by icefloe after (ids + 100)."""
    name = new_table_name(f"promo_{spec}")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, i int, f float, d decimal(9,2)) USING iceberg {SPECS[spec]} "
        f"TBLPROPERTIES ('format-version'='2'{props})"
    )
    _insert(oracle, q, BEFORE, ("int", "float", "decimal(9,2)"))
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN i TYPE bigint")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN f TYPE double")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN d TYPE decimal(12,2)")
    _insert(oracle, q, AFTER, ("bigint", "double", "decimal(12,2)"))
    table = catalog.load_table(name)
    arrow = table.schema().as_arrow()
    rows = [{"id": r.id + 100, "i": r.i, "f": r.f, "d": r.d} for r in oracle.df(name).collect()]
    table.append(pa.Table.from_pylist(rows, schema=arrow))
    return name


def _local(oracle: Oracle, name: str) -> Any:
    """Java's unfiltered rows as a local DataFrame: Spark's filter on it pushes nothing."""
    full = oracle.df(name)
    return oracle.spark.createDataFrame(full.collect(), full.schema).cache()


@pytest.mark.parametrize("spec", list(SPECS))
def test_partition_values_written_before_a_promotion_prune_as_the_current_type(
    oracle: Oracle, catalog: Any, spec: str
) -> None:
    """An `int` partition value compared with a `long` literal (or `float` with `double`) was
    no match at all: `i = 7` and `f < 0.1` lost every row of the files written before the
    promotion."""
    import icefloe.spark

    name = _promoted_table(oracle, catalog, spec)
    local = _local(oracle, name)
    view = f"local_{name.replace('.', '_')}"
    local.createOrReplaceTempView(view)
    # Spark's answer on the local rows, and Java's reads of the table (each filter pushed into
    # its own Iceberg scan), one Spark job each.
    wants = rows_per_filter(oracle.spark, view, FILTERS)
    javas = rows_per_filter(oracle.spark, oracle.qualified(name), FILTERS)
    for where, want, java in zip(FILTERS, wants, javas):
        got = catalog.load_table(name).scan(row_filter=where).to_arrow()
        assert_same_rows(got, want, context=f"{spec}: {where}")
        assert_same_rows(java, want, context=f"Java, {spec}: {where}")
    for where in ("i = 7", "f < 0.1", "i > 5 AND f > 0.1"):
        df = icefloe.spark.read(oracle.spark, catalog.load_table(name), row_filter=where)
        assert_same_rows(df, local.where(where), context=f"icefloe.spark, {spec}: {where}")


def _partitions(rows: Any) -> list[tuple[Any, ...]]:
    return sorted((str(r["partition"]), r["spec_id"], r["record_count"], r["file_count"]) for r in rows)


@pytest.mark.parametrize("spec", ["identity_i", "identity_f"])
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_writes_after_a_promotion_of_a_partition_source(
    oracle: Oracle, catalog: Any, spec: str, mode: str
) -> None:
    """Old entries carried into new manifests were refused ('partition value Int(7) is not a
    long': a merge append or a delete after the promotion failed) and a delete matched nothing
    in the old partitions. Each change leaves what Spark's own filter keeps of the rows before
    (Java 1.12's `DELETE FROM ... WHERE f < 0.2` would also drop the rows whose identity
    partition is null: its metadata delete takes `null < 0.2` for true), and Java reads the
    table the same."""
    props = f", 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', 'write.merge.mode'='{mode}'"
    name = _promoted_table(oracle, catalog, spec, props)
    # Merging manifests only now: Java's inserts above would rewrite the old ones as `long`.
    oracle.sql(
        f"ALTER TABLE {oracle.qualified(name)} SET TBLPROPERTIES ('commit.manifest.min-count-to-merge'='2')"
    )

    def check(want: Any, context: str) -> None:
        assert_same_rows(catalog.load_table(name).scan().to_arrow(), want, context=context)
        assert_same_rows(oracle.df(name), want, context=f"{context}, read by Java")

    # A merge append: the old manifests (int / float values) are rewritten into one.
    before = _local(oracle, name)
    table = catalog.load_table(name)
    extra = pa.Table.from_pylist(
        [{"id": 200, "i": 7, "f": 0.10000000149011612, "d": None}], schema=table.schema().as_arrow()
    )
    table.append(extra)
    check(before.union(oracle.spark.createDataFrame(extra.to_pylist(), before.schema)), "merge append")
    assert len(catalog.load_table(name).inspect.manifests()) < len(BEFORE)
    # Deletes by a filter on the promoted columns, then one on another column.
    for where in ("i = 7", "f < 0.2", "id = 2"):
        before = _local(oracle, name)
        catalog.load_table(name).delete(where)
        check(before.where(f"NOT ({where}) OR ({where}) IS NULL"), f"{mode}: delete {where}")
    # An overwrite by a filter on the promoted column (rows of old and new partitions).
    where = "i IN (0, 2147483648)" if spec == "identity_i" else "f IN (-1.5, 1e300)"
    before = _local(oracle, name)
    table = catalog.load_table(name)
    replacement = pa.Table.from_pylist(
        [{"id": 300, "i": 0, "f": -1.5, "d": None}], schema=table.schema().as_arrow()
    )
    table.overwrite(replacement, where)
    kept = before.where(f"NOT ({where}) OR ({where}) IS NULL")
    check(
        kept.union(oracle.spark.createDataFrame(replacement.to_pylist(), before.schema)), f"overwrite {where}"
    )
    # The partitions table: one row per partition, the old and new values of one together.
    java_parts = oracle.sql(f"SELECT * FROM {oracle.qualified(name)}.partitions")
    assert _partitions(catalog.load_table(name).inspect.partitions().to_pylist()) == _partitions(
        [r.asDict(recursive=True) for r in java_parts]
    )


def test_upsert_equality_deletes_apply_to_partitions_written_before_a_promotion(
    oracle: Oracle, catalog: Any
) -> None:
    """Merge-on-read upserts write equality deletes scoped to the partition of `long` values;
    the data files written before the promotion hold the same partition as `int` values."""
    name = new_table_name("promo_upsert")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, i int, data string) USING iceberg PARTITIONED BY (i) "
        "TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='merge-on-read')"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1, 7, 'old'), (2, 8, 'old'), (3, 7, 'old')")
    oracle.sql(f"ALTER TABLE {q} ALTER COLUMN i TYPE bigint")
    table = catalog.load_table(name)
    new = pa.Table.from_pylist(
        [{"id": 1, "i": 7, "data": "new"}, {"id": 4, "i": 2147483648, "data": "new"}],
        schema=table.schema().as_arrow(),
    )
    table.upsert(new, join_cols=["id", "i"])
    files = oracle.files(name)
    assert any(f["content"] == 2 for f in files), "expected equality deletes"
    want = [(1, 7, "new"), (2, 8, "old"), (3, 7, "old"), (4, 2147483648, "new")]
    got = catalog.load_table(name).scan().to_arrow()
    assert sorted(zip(*(got.column(c).to_pylist() for c in ("id", "i", "data")), strict=True)) == want
    assert sorted(tuple(r) for r in oracle.df(name).collect()) == want
