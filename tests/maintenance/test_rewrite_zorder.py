"""`rewrite_data_files(strategy="sort", sort_order="zorder(a, b)")` against Iceberg Java 1.12's
z-order rewrite (`CALL ... rewrite_data_files(strategy => 'sort', sort_order => 'zorder(a,b)')`).

- z-values: icefloe's (`_native.z_values`, Rust) equal, byte for byte, those of Java's own
  `SparkZOrderUDF` (the class its rewrite runs, called through the oracle's JVM) on the same
  rows read from the same table, for every type Java z-orders, with and without Java's
  `var-length-contribution` and `max-output-size` options (dates as on Spark 4: their day
  count; Java on Spark 3.5 gives every date zero bytes, which the test pins);
- the rewrite: twin tables, Java's procedure on one, icefloe (in process or on Spark) on the
  other: the same rows as before, every new file sorted by the z-values, as many files, the
  `sort_order_id` Java records (0) and a `replace` snapshot; with the options, the files are
  sorted by the z-values those options give (and not by the default ones);
- skipping: 64 small files of uniformly random (a, b) rewritten into ~8: a narrow range on
  both columns plans far fewer files than before, about as many as on Java's twin;
- refusals: a type Java cannot z-order (decimal), a nested field, zorder mixed with other
  fields, an option below 1: a ValidationError naming it, nothing committed.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe import _native
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import PYSPARK_MAJOR, new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

INT_MAX = 2**31 - 1


def _java_udf_z_values(
    spark: Any, df: Any, columns: list[str], var: int = 8, max_size: int = INT_MAX
) -> list[bytes]:
    """Java's z-values of `df`'s rows: its rewrite's own `SparkZOrderUDF` (package-private,
    reached by reflection), built and applied as `SparkZOrderFileRewriteRunner.zValue` does."""
    from pyspark.sql import DataFrame

    jvm, gateway = spark._jvm, spark._sc._gateway
    load = jvm.py4j.reflection.ReflectionUtil.classForName

    def classes(*names: str) -> Any:
        arr = gateway.new_array(jvm.java.lang.Class, len(names))
        for i, n in enumerate(names):
            arr[i] = jvm.java.lang.Integer.TYPE if n == "int" else load(n)
        return arr

    def objects(*values: Any) -> Any:
        arr = gateway.new_array(jvm.java.lang.Object, len(values))
        for i, v in enumerate(values):
            arr[i] = v
        return arr

    udf_class = load("org.apache.iceberg.spark.actions.SparkZOrderUDF")
    ctor = udf_class.getDeclaredConstructor(classes("int", "int", "int"))
    ctor.setAccessible(True)
    udf = ctor.newInstance(
        objects(
            jvm.java.lang.Integer(len(columns)), jvm.java.lang.Integer(var), jvm.java.lang.Integer(max_size)
        )
    )
    ordered = udf_class.getDeclaredMethod(
        "sortedLexicographically",
        classes("org.apache.spark.sql.Column", "org.apache.spark.sql.types.DataType"),
    )
    ordered.setAccessible(True)
    interleave = udf_class.getDeclaredMethod("interleaveBytes", classes("org.apache.spark.sql.Column"))
    interleave.setAccessible(True)
    jdf = df._jdf
    jcols = gateway.new_array(jvm.org.apache.spark.sql.Column, len(columns))
    for i, c in enumerate(columns):
        jcols[i] = ordered.invoke(udf, objects(jdf.col(c), jdf.schema().apply(c).dataType()))
    z = interleave.invoke(udf, objects(jvm.org.apache.spark.sql.functions.array(jcols)))
    rows = DataFrame(jdf.withColumn("__z", z), spark).select("id", "__z").collect()
    return [bytes(r["__z"]) for r in sorted(rows, key=lambda r: r["id"])]


def _our_z_values(table: pa.Table, types: dict[str, str], columns: list[str], **options: int) -> list[bytes]:
    table = table.sort_by("id")
    z = _native.z_values(
        [table.column(c).combine_chunks() for c in columns], [types[c] for c in columns], **options
    )
    return list(z.to_pylist())


ALL_TYPES = (
    "id BIGINT, i INT, l BIGINT, f FLOAT, d DOUBLE, s STRING, dt DATE, ts TIMESTAMP, "
    "tn TIMESTAMP_NTZ, bo BOOLEAN, bi BINARY, de DECIMAL(10, 2)"
)
ICEBERG_TYPES = {
    "i": "int",
    "l": "long",
    "f": "float",
    "d": "double",
    "s": "string",
    "dt": "date",
    "ts": "timestamptz",
    "tn": "timestamp",
    "bo": "boolean",
    "bi": "binary",
}
# Negative, zero, positive, extremes, NaN and -0.0, strings longer than 8 bytes and with
# multi-byte characters at the cut, a null boolean after a true one (Java reuses buffers).
ALL_TYPES_ROWS = """
SELECT CAST(id AS BIGINT) id, CAST(i AS INT) i, CAST(l AS BIGINT) l, CAST(f AS FLOAT) f, CAST(d AS DOUBLE) d,
  CAST(s AS STRING) s, CAST(dt AS DATE) dt, CAST(ts AS TIMESTAMP) ts, CAST(tn AS TIMESTAMP_NTZ) tn,
  CAST(bo AS BOOLEAN) bo, CAST(bi AS BINARY) bi, CAST(de AS DECIMAL(10, 2)) de
FROM VALUES
 (1, -2, -9223372036854775808, CAST(-1.5 AS FLOAT), CAST('NaN' AS DOUBLE), 'aaaaaaa\u00e9-long',
  DATE'1969-12-31',
  TIMESTAMP'1969-12-31 23:59:59.5', TIMESTAMP_NTZ'1969-12-31 23:59:59.5', true, X'C3A9616263646566676869',
  1.25),
 (2, 0, 0, CAST(0.0 AS FLOAT), CAST(-0.0 AS DOUBLE), '', DATE'1970-01-01', TIMESTAMP'1970-01-01 00:00:00',
  TIMESTAMP_NTZ'1970-01-01 00:00:00', NULL, X'', -3.5),
 (3, 2147483647, 9223372036854775807, CAST('Infinity' AS FLOAT), CAST('-Infinity' AS DOUBLE),
  '\U0001f600\U0001f600x', DATE'2024-02-29', TIMESTAMP'2024-02-29 12:34:56.789012',
  TIMESTAMP_NTZ'2024-02-29 12:34:56.789012', false, X'FF', 0),
 (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
 (5, -2147483648, 42, CAST(3.25 AS FLOAT), 1e300, 'zorder', DATE'0001-01-01', TIMESTAMP'2262-04-11 23:47:16',
  TIMESTAMP_NTZ'1900-01-01 00:00:00.000001', true, X'0102030405060708', 99.99)
AS t(id, i, l, f, d, s, dt, ts, tn, bo, bi, de)
"""


@pytest.fixture(scope="module")
def all_types(spark: Any, oracle: Oracle, catalog: Any) -> tuple[Any, pa.Table]:
    """A table of every type, written by Java: (Java's DataFrame of it, icefloe's Arrow read)."""
    name = new_table_name("zorder_types")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} ({ALL_TYPES}) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(ALL_TYPES_ROWS).coalesce(1).writeTo(q).append()
    return oracle.df(name), catalog.load_table(name).scan().to_arrow()


@pytest.mark.parametrize("column", sorted(ICEBERG_TYPES))
def test_z_value_bytes_of_each_type_equal_javas(
    spark: Any, all_types: tuple[Any, pa.Table], column: str
) -> None:
    java_df, ours = all_types
    if column == "dt" and PYSPARK_MAJOR < 4:
        # Java's UDF takes Spark's cast of a date to a long: the day count on Spark 4, null on
        # Spark 3.5 (so zeros for every date there, which z-orders nothing by the date). icefloe
        # follows Spark 4: checked here against Java's UDF on the day count, an int column.
        from pyspark.sql import functions as F

        assert set(_java_udf_z_values(spark, java_df, ["dt"])) == {bytes(8)}, "Java on Spark 3.5 changed"
        java_df = java_df.withColumn("dt", F.datediff("dt", F.lit("1970-01-01")))
    for var in (8, 3, 12):  # var-length-contribution: shorter and longer than the defaults
        java = _java_udf_z_values(spark, java_df, [column], var=var)
        got = _our_z_values(ours, ICEBERG_TYPES, [column], var_length_contribution=var)
        assert got == java, (
            f"{column} var={var}: ours {[z.hex() for z in got]} Java {[z.hex() for z in java]}"
        )


@pytest.mark.parametrize(
    ("columns", "var", "max_size"),
    [
        (["i", "s"], 8, INT_MAX),
        (["s", "l", "ts"], 3, INT_MAX),  # a short string column next to 8-byte ones
        (["d", "bi", "tn", "bo"], 5, 7),  # max-output-size cuts the interleaving
        (["f", "i"], 8, 1),
    ],
)
def test_interleaved_z_values_and_options_equal_javas(
    spark: Any, all_types: tuple[Any, pa.Table], columns: list[str], var: int, max_size: int
) -> None:
    java_df, ours = all_types
    java = _java_udf_z_values(spark, java_df, columns, var=var, max_size=max_size)
    got = _our_z_values(ours, ICEBERG_TYPES, columns, var_length_contribution=var, max_output_size=max_size)
    assert got == java, f"{columns}: ours {[z.hex() for z in got]} Java {[z.hex() for z in java]}"
    assert {len(z) for z in got} == {min(max_size, sum(var if c in ("s", "bi") else 8 for c in columns))}


def test_uuid_and_fixed_z_values_equal_javas_and_a_spark_rewrite_of_them_sorts(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Spark shows Java a uuid as its text and a fixed as binary: Java's z-values take those.
    A table with them is one Spark cannot carry as it is, so the Spark rewrite sorts each
    group in one writer on an executor (the path of `_rewrite_on_spark`)."""
    from icefloe.schema import NestedField, Schema
    from icefloe.types import FixedType, LongType, UUIDType

    name = new_table_name("zorder_uuid")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "u", UUIDType(), required=False),
        NestedField(3, "fx", FixedType(3), required=False),
    )
    table = catalog.create_table(name, schema)
    rng = random.Random(7)
    ids = list(range(60))
    for part in range(3):  # three files, so the rewrite has something to do
        chunk = ids[part * 20 : (part + 1) * 20]
        us = [None if i % 13 == 0 else uuid.UUID(int=rng.getrandbits(128)).bytes for i in chunk]
        fx = [None if i % 11 == 0 else bytes(rng.getrandbits(8) for _ in range(3)) for i in chunk]
        table.append(
            pa.table(
                {
                    "id": pa.array(chunk, pa.int64()),
                    "u": pa.array(us, pa.binary(16)),
                    "fx": pa.array(fx, pa.binary(3)),
                }
            )
        )
    ours = catalog.load_table(name).scan().to_arrow()
    types = {"u": "uuid", "fx": "fixed[3]"}
    for columns, var in ((["u"], 8), (["fx"], 2), (["u", "fx"], 5)):
        java = _java_udf_z_values(spark, oracle.df(name), columns, var=var)
        got = _our_z_values(ours, types, columns, var_length_contribution=var)
        assert got == java, (
            f"{columns} var={var}: ours {[z.hex() for z in got]} Java {[z.hex() for z in java]}"
        )
    expected = oracle.canonical(name)
    before = {f["file_path"] for f in oracle.data_files(name)}
    catalog.load_table(name).maintenance.rewrite_data_files(
        strategy="sort", sort_order="zorder(u, fx)", rewrite_all=True, spark=spark
    )
    assert_same_rows(oracle.canonical(name), expected, context="Java reading icefloe's z-order rewrite")
    (new,) = _new_files(oracle, name, before)
    z = _file_z_values(new["file_path"], ["u", "fx"], types)
    assert z == sorted(z) and new["sort_order_id"] == 0


COLUMNS = "id BIGINT, a INT, b DOUBLE, s STRING, region STRING"
ROWS = (
    "SELECT id, CAST(pmod(xxhash64(id, 1), 1000) AS INT) AS a, "
    "CAST(pmod(xxhash64(id, 2), 100000) AS DOUBLE) / 100 AS b, "
    "IF(id % 17 = 0, NULL, "
    "concat(substr('abcdefghijklmnopqrstuvwxyz', CAST(pmod(id * 7, 26) AS INT) + 1, 3), "
    "CAST(pmod(xxhash64(id, 3), 100) AS STRING))) AS s, "
    "IF(id % 2 = 0, 'eu', 'us') AS region FROM range({lo}, {hi})"
)


def _twins(spark: Any, oracle: Oracle, count: int, files: int, rows: int, partitioned: bool) -> list[str]:
    """`count` tables with the same rows, written by Java in `files` small files (per partition)."""
    names = [new_table_name(f"zorder{i}") for i in range(count)]
    data = spark.sql(ROWS.format(lo=0, hi=rows))
    for name in names:
        q = oracle.qualified(name)
        part = " PARTITIONED BY (region)" if partitioned else ""
        oracle.sql(f"CREATE TABLE {q} ({COLUMNS}) USING iceberg{part} TBLPROPERTIES ('format-version'='2')")
        data.repartition(files).writeTo(q).option("distribution-mode", "none").append()
    return names


def _new_files(oracle: Oracle, name: str, before: set[str]) -> list[dict[str, Any]]:
    return [f for f in oracle.data_files(name) if f["file_path"] not in before]


def _file_z_values(path: str, columns: list[str], types: dict[str, str], **options: int) -> list[bytes]:
    t = pq.read_table(path.removeprefix("file:"))
    z = _native.z_values(
        [t.column(c).combine_chunks() for c in columns], [types[c] for c in columns], **options
    )
    return list(z.to_pylist())


TYPES = {"a": "int", "b": "double", "s": "string", "id": "long"}


@pytest.mark.parametrize("via_spark", [False, True], ids=["in-process", "spark"])
def test_zorder_rewrite_like_javas(spark: Any, oracle: Oracle, catalog: Any, via_spark: bool) -> None:
    java_name, our_name = _twins(spark, oracle, 2, files=4, rows=1200, partitioned=True)
    expected = oracle.canonical(java_name)
    befores = {n: {f["file_path"] for f in oracle.data_files(n)} for n in (java_name, our_name)}
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{java_name}', strategy => 'sort', "
        "sort_order => 'zorder(a, b)', options => map('rewrite-all', 'true'))"
    )
    result = catalog.load_table(our_name).maintenance.rewrite_data_files(
        strategy="sort", sort_order="zorder(a, b)", rewrite_all=True, spark=spark if via_spark else None
    )
    assert_same_rows(oracle.canonical(our_name), expected, context="Java reading icefloe's z-order rewrite")
    assert_same_rows(oracle.canonical(java_name), expected, context="Java reading Java's z-order rewrite")
    java, ours = (_new_files(oracle, n, befores[n]) for n in (java_name, our_name))
    assert result.added_data_files_count == len(ours) == len(java) == 2, (java, ours)
    assert result.rewritten_data_files_count == len(befores[our_name])
    for f in java + ours:
        z = _file_z_values(f["file_path"], ["a", "b"], TYPES)
        assert z == sorted(z), f"{f['file_path']} is not sorted by zorder(a, b)"
    # One file per partition: Java's and ours hold the rows in the same z-order.
    by_partition = {
        (f["partition"]["region"], who): f for who, fs in (("java", java), ("ours", ours)) for f in fs
    }
    for region in ("eu", "us"):
        zj, zo = (
            _file_z_values(by_partition[(region, w)]["file_path"], ["a", "b"], TYPES)
            for w in ("java", "ours")
        )
        assert zo == zj, f"partition {region}: the z-values in file order differ from Java's"
    assert sorted(f["sort_order_id"] for f in ours) == sorted(f["sort_order_id"] for f in java) == [0, 0]
    snaps = {n: oracle.snapshots(n)[-1] for n in (java_name, our_name)}
    assert snaps[our_name]["operation"] == snaps[java_name]["operation"] == "replace"
    for key in (
        "added-data-files",
        "deleted-data-files",
        "added-records",
        "deleted-records",
        "total-records",
    ):
        assert snaps[our_name]["summary"][key] == snaps[java_name]["summary"][key], key


@pytest.mark.parametrize("via", ["in-process", "spark", "sql"])
def test_var_length_contribution_and_max_output_size_are_honoured_like_javas(
    spark: Any, oracle: Oracle, catalog: Any, via: str
) -> None:
    """`sql`: Java's very CALL statement, run by icefloe.spark.sql on icefloe's twin."""
    java_name, our_name = _twins(spark, oracle, 2, files=4, rows=600, partitioned=False)
    expected = oracle.canonical(java_name)
    befores = {n: {f["file_path"] for f in oracle.data_files(n)} for n in (java_name, our_name)}
    call = (
        "CALL {cat}.system.rewrite_data_files(table => '{name}', strategy => 'sort', "
        "sort_order => 'zorder(s, a)', options => map('rewrite-all', 'true', "
        "'var-length-contribution', '2', 'max-output-size', '5'))"
    )
    oracle.sql(call.format(cat="oracle", name=java_name))
    if via == "sql":
        import icefloe.spark

        icefloe.spark.sql(spark, call.format(cat="zcat", name=our_name), catalogs={"zcat": catalog}).collect()
    else:
        catalog.load_table(our_name).maintenance.rewrite_data_files(
            strategy="sort",
            sort_order="zorder(s, a)",
            rewrite_all=True,
            var_length_contribution=2,
            max_output_size=5,
            spark=spark if via == "spark" else None,
        )
    assert_same_rows(oracle.canonical(our_name), expected, context="Java reading icefloe's z-order rewrite")
    (java,), (ours,) = (_new_files(oracle, n, befores[n]) for n in (java_name, our_name))
    options = {"var_length_contribution": 2, "max_output_size": 5}
    zj, zo = (_file_z_values(f["file_path"], ["s", "a"], TYPES, **options) for f in (java, ours))
    assert {len(z) for z in zo} == {5}
    assert zo == sorted(zo) and zo == zj, "icefloe's file is not in Java's order of the optioned z-values"
    default = _file_z_values(ours["file_path"], ["s", "a"], TYPES)
    assert default != sorted(default), "the options made no difference to the order (a weak test)"


# (a low, a high, b low, b high): a and b are uniform in [0, 1000); 1% and 6.25% of the rows.
BOXES = [(400, 499, 400.0, 499.99), (100, 349, 600.0, 849.99)]


def _java_planned(oracle: Oracle, name: str, box: tuple[int, int, float, float]) -> int:
    """Files Java's planner plans for the box on `name`."""
    lo_a, hi_a, lo_b, hi_b = box
    ex = oracle.jvm.org.apache.iceberg.expressions.Expressions
    both = getattr(ex, "and")  # `and` is a Python keyword
    expr = both(
        both(ex.greaterThanOrEqual("a", lo_a), ex.lessThanOrEqual("a", hi_a)),
        both(ex.greaterThanOrEqual("b", lo_b), ex.lessThanOrEqual("b", hi_b)),
    )
    tasks = oracle.java_table(name).newScan().filter(expr).planFiles()
    try:
        it, count = tasks.iterator(), 0
        while it.hasNext():
            it.next()
            count += 1
        return count
    finally:
        tasks.close()


def test_a_two_column_range_skips_files_after_the_rewrite_as_on_javas_twin(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    java_name, in_process, on_spark = _twins(spark, oracle, 3, files=64, rows=12800, partitioned=False)
    expected = oracle.canonical(java_name)

    def planned(name: str, box: tuple[int, int, float, float]) -> int:
        row_filter = "a >= {} AND a <= {} AND b >= {} AND b <= {}".format(*box)
        return len(catalog.load_table(name).scan(row_filter=row_filter).plan_files())

    before = [planned(in_process, box) for box in BOXES]
    total = sum(f["file_size_in_bytes"] for f in oracle.data_files(java_name))
    target = total // 8
    oracle.sql(
        f"CALL oracle.system.rewrite_data_files(table => '{java_name}', strategy => 'sort', "
        "sort_order => 'zorder(a, b)', "
        f"options => map('rewrite-all', 'true', 'target-file-size-bytes', '{target}'))"
    )
    for name, via in ((in_process, None), (on_spark, spark)):
        catalog.load_table(name).maintenance.rewrite_data_files(
            strategy="sort",
            sort_order="zorder(a, b)",
            rewrite_all=True,
            target_file_size_bytes=target,
            spark=via,
        )
    for name in (java_name, in_process, on_spark):
        assert_same_rows(oracle.canonical(name), expected, context=f"{name} after the z-order rewrite")
    files = {n: len(oracle.data_files(n)) for n in (java_name, in_process, on_spark)}
    for box, was in zip(BOXES, before):
        after = {n: planned(n, box) for n in (java_name, in_process, on_spark)}
        java_after = _java_planned(oracle, java_name, box)
        report = (
            "files planned for a in [{}, {}] and b in [{}, {}]: ".format(*box)
            + f"before {was} of 64; after, Java's twin {after[java_name]} of {files[java_name]} "
            f"(Java's planner: {java_after}), icefloe in process {after[in_process]} of {files[in_process]}, "
            f"icefloe on Spark {after[on_spark]} of {files[on_spark]}"
        )
        print(report)
        assert was == 64, report
        assert after[java_name] == java_after, report
        # Spark samples the range bounds (Java's and ours alike), so a box can straddle one
        # more boundary in one twin than in the other: 1-2 and 3 files in either over runs.
        for ours in (after[on_spark], after[in_process]):
            assert ours <= after[java_name] + 2 and ours * 4 <= was, report


def test_unsupported_types_nested_fields_and_bad_options_are_refused_like_java(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = new_table_name("zorderbad")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, de DECIMAL(10, 2), st STRUCT<x: INT>, region STRING) USING iceberg "
        "PARTITIONED BY (region) TBLPROPERTIES ('format-version'='2')"
    )
    for k in range(2):
        spark.sql(
            f"SELECT id, CAST(id AS DECIMAL(10, 2)) de, named_struct('x', CAST(id AS INT)) st, 'eu' region "
            f"FROM range({k * 10}, {k * 10 + 10})"
        ).coalesce(1).writeTo(q).append()
    start = oracle.current_snapshot_id(name)
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("zorder(id, de)", {}, "found column 'de' of type decimal(10, 2)"),
        (
            "zorder(id, st.x)",
            {},
            "expected a top-level column of the table (Iceberg Java cannot z-order by a field",
        ),
        ("zorder(id), de", {}, "expected zorder(...) alone, found it mixed with other sort fields"),
        ("zorder(region)", {}, "found only identity partition columns"),
        ("zorder(id, nope)", {}, "found 'nope'"),
        (
            "zorder(id)",
            {"var_length_contribution": 0},
            "'var-length-contribution' of at least 1 byte, found 0",
        ),
        ("zorder(id)", {"max_output_size": -1}, "'max-output-size' of at least 1 byte, found -1"),
        ("id", {"max_output_size": 4}, "apply to a z-order rewrite only"),
    ]
    java_options = {
        "var_length_contribution": "var-length-contribution",
        "max_output_size": "max-output-size",
    }
    table = catalog.load_table(name)
    for sort_order, options, message in cases:
        java_opts = "".join(f", '{java_options[k]}', '{v}'" for k, v in options.items())
        with pytest.raises(Exception) as java_error:  # Java's errors: Py4J / Spark errors
            oracle.sql(
                f"CALL oracle.system.rewrite_data_files(table => '{name}', strategy => 'sort', "
                f"sort_order => '{sort_order}', options => map('rewrite-all', 'true'{java_opts}))"
            )
        with pytest.raises(ValidationError) as ours:
            table.maintenance.rewrite_data_files(
                strategy="sort", sort_order=sort_order, rewrite_all=True, **options
            )
        assert message in str(ours.value), (sort_order, str(ours.value), str(java_error.value)[:300])
    assert oracle.current_snapshot_id(name) == start
    assert catalog.load_table(name).metadata.current_snapshot_id == start
