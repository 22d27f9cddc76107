"""A table of every type icefloe writes (primitives, decimals, timestamps with and without zone,
nested struct / list / map) and three batches of rows with their edge cases (NaN, infinities,
-0.0, escaping, long strings, nulls), as Arrow and as Spark DataFrames: the interop tests'
appends, locally and on S3."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa

UTC = dt.timezone.utc


D = decimal.Decimal


ARROW_SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("category", pa.string()),
        pa.field("b", pa.bool_()),
        pa.field("i", pa.int32()),
        pa.field("l", pa.int64()),
        pa.field("f", pa.float32()),
        pa.field("d", pa.float64()),
        pa.field("dec9", pa.decimal128(9, 2)),
        pa.field("dec38", pa.decimal128(38, 10)),
        pa.field("dt", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("ts_ntz", pa.timestamp("us")),
        pa.field("name", pa.string()),
        pa.field("bin", pa.binary()),
        pa.field(
            "st",
            pa.struct(
                [
                    pa.field("a", pa.int32()),
                    pa.field("b", pa.string()),
                    pa.field("inner", pa.struct([pa.field("x", pa.float64())])),
                ]
            ),
        ),
        pa.field("arr", pa.list_(pa.int32())),
        pa.field("m", pa.map_(pa.string(), pa.int32())),
        pa.field("arr_st", pa.list_(pa.struct([pa.field("x", pa.int32()), pa.field("y", pa.string())]))),
        pa.field("m_arr", pa.map_(pa.int32(), pa.list_(pa.string()))),
    ]
)


SPARK_DDL = (
    "id bigint NOT NULL, category string, b boolean, i int, l bigint, f float, d double, dec9 decimal(9,2), "
    "dec38 decimal(38,10), dt date, ts timestamp, ts_ntz timestamp_ntz, name string, bin binary, "
    "st struct<a: int, b: string, inner: struct<x: double>>, arr array<int>, m map<string, int>, "
    "arr_st array<struct<x: int, y: string>>, m_arr map<int, array<string>>"
)


NAN = float("nan")


INF = float("inf")


ESCAPING = "é/ü x=1%"


LONG_ASCII = "a string that is longer than sixteen characters"


LONG_UNICODE = "日本語のテキストは十六文字を超えています😀"  # > 16 code points


def _row(id_: int, **values: Any) -> dict[str, Any]:
    row = dict.fromkeys(ARROW_SCHEMA.names)
    row.update(id=id_, **values)
    return row


BATCH_1 = [
    _row(
        1,
        category="a",
        b=True,
        i=1,
        l=1,
        f=1.5,
        d=2.5,
        dec9=D("14.20"),
        dec38=D("12345678901234567890.0123456789"),
        dt=dt.date(2024, 2, 29),
        ts=dt.datetime(2024, 2, 29, 12, 34, 56, 789012, tzinfo=UTC),
        ts_ntz=dt.datetime(2024, 2, 29, 12, 34, 56, 789012),
        name="alpha",
        bin=b"\x00\x01\x02\x03",
        st={"a": 1, "b": "x", "inner": {"x": 1.0}},
        arr=[1, 2, 3],
        m={"k1": 1, "k2": 2},
        arr_st=[{"x": 1, "y": "a"}],
        m_arr={1: ["a", "b"]},
    ),
    _row(
        2,
        category=ESCAPING,
        b=False,
        i=-(2**31),
        l=-(2**63),
        f=NAN,
        d=NAN,
        dec9=D("-9999999.99"),
        dec38=D("-9999999999999999999999999999.9999999999"),
        dt=dt.date(1969, 12, 31),
        ts=dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        ts_ntz=dt.datetime(1900, 1, 1),
        name="héllo wörld 日本語",
        bin=b"",
        st={"a": None, "b": None, "inner": None},
        arr=[],
        m={},
        arr_st=[{"x": None, "y": None}, None],
        m_arr={2: [], 3: None},
    ),
    _row(
        3,
        category="a",
        i=2**31 - 1,
        l=2**63 - 1,
        f=-0.0,
        d=-0.0,
        dec9=D("0.00"),
        dec38=D("0E-10"),
        dt=dt.date(1900, 1, 1),
        ts=dt.datetime(1900, 1, 1, tzinfo=UTC),
        ts_ntz=dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
        name=LONG_UNICODE,
        bin=bytes(range(20)),
        arr=[None, 4],
        m={"k": None},
    ),
    _row(4),
]


BATCH_2 = [  # appended through Spark (icefloe.spark.append)
    _row(
        5,
        category="b",
        b=True,
        i=0,
        l=0,
        f=0.0,
        d=0.0,
        dec9=D("0.01"),
        dec38=D("1.0000000000"),
        dt=dt.date(1970, 1, 1),
        ts=dt.datetime(1970, 1, 1, tzinfo=UTC),
        ts_ntz=dt.datetime(1970, 1, 1),
        name=LONG_ASCII,
        bin=b"\xff" * 18,
        st={"a": 5, "b": "y", "inner": {"x": NAN}},
        arr=[5],
        m={"z": 26},
        arr_st=[],
        m_arr={},
    ),
    _row(
        6,
        category=ESCAPING,
        b=False,
        i=6,
        l=6,
        f=INF,
        d=-INF,
        dec9=D("-0.01"),
        dec38=D("-1.0000000000"),
        dt=dt.date(1969, 1, 1),
        ts=dt.datetime(1969, 1, 1, 0, 0, 0, 1, tzinfo=UTC),
        ts_ntz=dt.datetime(1969, 7, 20, 20, 17, 40),
        name="zeta",
        bin=b"\xde\xad\xbe\xef",
        st={"a": 6, "b": "ñ", "inner": None},
        arr=[6, None, 6],
        m={"é": 6},
        arr_st=[{"x": 6, "y": "six"}],
        m_arr={6: ["six", None]},
    ),
    _row(
        7, category=None, b=None, i=7, f=-1.5, d=1e300, name="", st={"a": None, "b": "", "inner": {"x": -0.0}}
    ),
]


BATCH_3 = [
    _row(
        8,
        category="b",
        b=True,
        i=8,
        l=8,
        f=8.5,
        d=8.5,
        dec9=D("8.00"),
        dec38=D("8.0000000000"),
        dt=dt.date(1999, 12, 31),
        ts=dt.datetime(1999, 12, 31, 23, 59, 59, tzinfo=UTC),
        ts_ntz=dt.datetime(1999, 12, 31, 23, 59, 59),
        name="theta ✓",
        bin=b"\x08",
    ),
    _row(9, category="a"),
]


BATCHES = [BATCH_1, BATCH_2, BATCH_3]


def arrow_batch(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=ARROW_SCHEMA)


def spark_df(spark: Any, rows: list[dict[str, Any]]) -> Any:
    def spark_value(v: Any) -> Any:
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            return v.astimezone(UTC).replace(tzinfo=None)  # TimestampType: naive = local = UTC here
        return v

    data = [tuple(spark_value(r[n]) for n in ARROW_SCHEMA.names) for r in rows]
    return spark.createDataFrame(data, SPARK_DDL)
