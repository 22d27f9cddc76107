"""Format v3 column default values between Iceberg Java (the oracle) and icefloe.

Java creates a v3 table and writes rows, then adds columns with defaults through its core API
(`UpdateSchema.addColumn(name, type, doc, Literal)`, `addRequiredColumn(...)`, and a field
inside an existing struct): rows of files written before read as the field's
`initial-default`, in process and on Spark, exactly as Java reads them. Java's
`updateColumnDefault` then changes the `write-default`; an icefloe append whose input lacks
the defaulted columns stores that write-default, and Java reads it back.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

ADDED = ("c_int", "c_req", "c_str", "c_date", "c_ts", "c_dec")


def _add_defaulted_columns(oracle: Oracle, name: str) -> None:
    """Java 1.10's schema API: every added column gets initial-default = write-default."""
    jvm = oracle.jvm
    types = jvm.org.apache.iceberg.types.Types
    lit = jvm.org.apache.iceberg.expressions.Literal
    (
        oracle.java_table(name)
        .updateSchema()
        .addColumn("c_int", types.IntegerType.get(), "an int", lit.of(42))
        .addRequiredColumn("c_req", types.LongType.get(), "required, with a default", lit.of(7))
        .addColumn("c_str", types.StringType.get(), "a string", lit.of("dflt"))
        .addColumn("c_date", types.DateType.get(), "a date", lit.of("2024-02-29").to(types.DateType.get()))
        .addColumn(
            "c_ts",
            types.TimestampType.withZone(),
            "a timestamptz",
            lit.of("2024-02-29T12:34:56.789012+00:00").to(types.TimestampType.withZone()),
        )
        .addColumn(
            "c_dec", types.DecimalType.of(9, 2), "a decimal", lit.of(jvm.java.math.BigDecimal("-12.50"))
        )
        # A field inside an existing struct: older files have the struct but not the field.
        .addColumn("st", "b", types.IntegerType.get(), "nested", lit.of(5))
        .commit()
    )


def _assert_every_snapshot(spark: Any, oracle: Oracle, catalog: Any, name: str) -> None:
    import icefloe.spark

    table = catalog.load_table(name)
    ids = oracle.snapshot_ids(name)
    for sid in ids:
        ctx = f"{name} at snapshot {sid}"
        expected = oracle.df(name, snapshot_id=sid)
        ours = table.scan(snapshot_id=sid).to_arrow()
        assert_same_rows(ours, expected, context=f"icefloe in process, {ctx}")
        on_spark = icefloe.spark.read(spark, table, snapshot_id=sid)
        assert_same_rows(on_spark, expected, context=f"icefloe on Spark, {ctx}")


def test_java_added_columns_read_as_their_initial_default_and_icefloe_writes_the_write_default(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    name = new_table_name("v3_defaults")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, data STRING, st STRUCT<a: INT>) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')"
    )
    oracle.sql(
        f"INSERT INTO {q} SELECT id, CAST(id AS STRING), "
        "IF(id % 7 = 0, NULL, named_struct('a', CAST(id AS INT))) FROM range(0, 300)"
    )
    _add_defaulted_columns(oracle, name)
    schema = json.loads(catalog.load_table(name).schema().to_json())
    by_name = {f["name"]: f for f in schema["fields"]}
    assert by_name["c_req"]["required"] is True
    assert by_name["c_req"]["initial-default"] == 7
    assert by_name["c_ts"]["initial-default"] == "2024-02-29T12:34:56.789012+00:00"
    assert by_name["c_dec"]["write-default"] == "-12.50"

    # Rows written after the add carry their own values (nulls included).
    oracle.sql(
        f"INSERT INTO {q} SELECT id, 'second', named_struct('a', 1, 'b', IF(id % 2 = 0, NULL, 6)), "
        "IF(id % 3 = 0, NULL, CAST(id AS INT)), id * 10, NULL, DATE '2000-01-01', "
        "TIMESTAMP '2001-02-03 04:05:06', CAST(1.25 AS DECIMAL(9, 2)) FROM range(300, 400)"
    )
    # Only the write-default changes; old files keep reading the initial default.
    (
        oracle.java_table(name)
        .updateSchema()
        .updateColumnDefault("c_int", oracle.jvm.org.apache.iceberg.expressions.Literal.of(99))
        .commit()
    )

    table = catalog.load_table(name)
    # (Reading the first snapshot uses the schema of its time: read the current one.)
    current = table.scan().to_arrow()
    old = current.filter(pa.compute.less(current["id"], 300)).to_pylist()
    assert len(old) == 300
    assert {(r["c_int"], r["c_req"], r["c_str"]) for r in old} == {(42, 7, "dflt")}
    assert {(r["c_date"], r["c_dec"]) for r in old} == {(dt.date(2024, 2, 29), decimal.Decimal("-12.50"))}
    assert {r["c_ts"] for r in old} == {dt.datetime(2024, 2, 29, 12, 34, 56, 789012, tzinfo=dt.timezone.utc)}
    # A null struct stays null; a present one gets the new field's default.
    assert {None if r["st"] is None else r["st"]["b"] for r in old} == {None, 5}

    # icefloe appends input without any of the defaulted columns (st without `b`).
    table.append(
        pa.table(
            {
                "id": pa.array(range(1000, 1050), pa.int64()),
                "data": pa.array(["ours"] * 50),
                "st": pa.array([{"a": i} for i in range(50)], pa.struct([("a", pa.int32())])),
            }
        )
    )
    java_new = oracle.df(name, columns=("id", "st", *ADDED), where="id >= 1000").collect()
    assert len(java_new) == 50
    assert {(r["c_int"], r["c_req"], r["c_str"], r["st"]["b"]) for r in java_new} == {(99, 7, "dflt", 5)}
    assert {r["c_dec"] for r in java_new} == {decimal.Decimal("-12.50")}
    assert {r["c_date"] for r in java_new} == {dt.date(2024, 2, 29)}

    # A MERGE's inserted rows take the write-default of every column its INSERT leaves out
    # (the spec's writer rule), in process and on Spark; updated rows keep their values.
    import icefloe.spark

    source = pa.table({"id": pa.array([1000, 2000, 2001], pa.int64()), "data": ["upd", "ins", "ins"]})
    (
        catalog.load_table(name)
        .merge(source, "target.id = source.id")
        .when_matched_update({"data": "source.data"})
        .when_not_matched_insert({"id": "source.id", "data": "source.data"})
        .execute()
    )
    spark_source = spark.createDataFrame([(3000, "spark"), (1001, "upd2")], "id bigint, data string")
    (
        icefloe.spark.merge(spark_source, catalog.load_table(name), "target.id = source.id")
        .when_matched_update({"data": "source.data"})
        .when_not_matched_insert({"id": "source.id", "data": "source.data"})
        .execute()
    )
    merged = oracle.df(name, columns=("id", "data", *ADDED), where="id IN (1000, 1001, 2000, 2001, 3000)")
    got = {r["id"]: (r["data"], r["c_int"], r["c_req"], r["c_str"], r["c_dec"]) for r in merged.collect()}
    dec = decimal.Decimal("-12.50")
    assert got == {
        1000: ("upd", 99, 7, "dflt", dec),
        1001: ("upd2", 99, 7, "dflt", dec),
        2000: ("ins", 99, 7, "dflt", dec),
        2001: ("ins", 99, 7, "dflt", dec),
        3000: ("spark", 99, 7, "dflt", dec),
    }

    _assert_every_snapshot(spark, oracle, catalog, name)

    # Files written before the add have no statistics for the columns: a filter on a default
    # never prunes them (Java 1.10's Parquet row-group filter would, fixed later upstream).
    table = catalog.load_table(name)
    hits = table.scan(row_filter="c_int = 42", selected_fields=("id",)).to_arrow()
    assert sorted(hits["id"].to_pylist()) == list(range(300))
    hits = table.scan(row_filter="c_str = 'dflt' AND c_req = 7", selected_fields=("id",)).to_arrow()
    assert sorted(hits["id"].to_pylist()) == [*range(300), *range(1000, 1050), 2000, 2001, 3000]


def test_a_required_column_without_a_write_default_must_be_supplied(oracle: Oracle, catalog: Any) -> None:
    """`allowIncompatibleChanges` lets Java add a required column without defaults: reading a
    file written before fails (as in Java), and an append must supply the column."""
    from icefloe.exceptions import IcefloeError, ValidationError

    name = new_table_name("v3_nodefault")
    q = oracle.qualified(name)
    oracle.sql(f"CREATE TABLE {q} (id BIGINT) USING iceberg TBLPROPERTIES ('format-version'='3')")
    oracle.sql(f"INSERT INTO {q} VALUES (1)")
    types = oracle.jvm.org.apache.iceberg.types.Types
    (
        oracle.java_table(name)
        .updateSchema()
        .allowIncompatibleChanges()
        .addRequiredColumn("must", types.IntegerType.get())
        .commit()
    )
    table = catalog.load_table(name)
    # (Raised while streaming batches, so it arrives through Arrow as ArrowInvalid.)
    with pytest.raises((IcefloeError, pa.ArrowInvalid), match="required field 'must'"):
        table.scan().to_arrow()
    with pytest.raises(ValidationError, match="missing required column 'must'"):
        table.append(pa.table({"id": pa.array([2], pa.int64())}))
