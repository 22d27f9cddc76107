"""uuid columns on Spark.

Spark has no uuid type; Iceberg Java on Spark shows a uuid as its 8-4-4-4-12 lowercase string,
at the top level and inside structs, lists and maps. `icefloe.spark.read` must show the very
strings Java shows, for a table icefloe wrote (which Java reads as its own) and for rows Java
appended. The conversion itself (`uuid_strings`, `_convert`) is vectorised: checked here
against Python's `uuid` module on nulls, sliced arrays and nested nulls.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pyarrow as pa
import pytest
from icefloe.spark._arrow import _convert, uuid_strings
from support.oracle import Oracle, assert_same_rows

RNG = random.Random(20261121)
U = pa.uuid()
B16 = pa.binary(16)


def _text(v: bytes | None) -> str | None:
    return None if v is None else str(uuid.UUID(bytes=v))


def _uuids(n: int) -> list[bytes | None]:
    edges: list[bytes | None] = [uuid.UUID(int=0).bytes, b"\xff" * 16, None, bytes(range(16))]
    return edges + [uuid.UUID(int=RNG.getrandbits(128)).bytes for _ in range(n)] + [None]


def test_uuid_strings_are_pythons_canonical_form_with_nulls_and_slices() -> None:
    values = _uuids(500)
    arr = pa.array(values, B16)
    assert uuid_strings(arr).to_pylist() == [_text(v) for v in values]
    for start, length in ((0, 1), (3, 7), (250, 255), (len(values) - 1, 1), (5, 0)):
        got = uuid_strings(arr.slice(start, length))
        assert got.type == pa.string()
        assert got.to_pylist() == [_text(v) for v in values[start : start + length]], (start, length)
    with pytest.raises(TypeError, match="fixed_size_binary"):
        uuid_strings(pa.array([b"x"], pa.binary()))


def test_uuids_inside_structs_lists_and_maps_with_nulls_and_slices() -> None:
    values = _uuids(20)
    texts = [_text(v) for v in values]
    lists = [values[0:3], None, [], values[3:10], [None], values[10:]]
    arr = pa.array(lists, pa.list_(B16))
    list_t = {"type": "list", "element-id": 2, "element": "uuid", "element-required": False}
    target = pa.list_(pa.field("element", pa.string()))
    expected = [None if v is None else [_text(x) for x in v] for v in lists]
    for start in range(len(lists)):
        got = _convert(arr.slice(start), list_t, target)
        assert got.to_pylist() == expected[start:], start

    maps = [[("a", values[0]), ("b", None)], None, [], [("c", values[5])]]
    marr = pa.array(maps, pa.map_(pa.string(), B16))
    map_t = {"type": "map", "key-id": 3, "key": "string", "value-id": 4, "value": "uuid"}
    mtarget = pa.map_(pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string()))
    mexpected = [None if m is None else [(k, _text(v)) for k, v in m] for m in maps]
    for start in range(len(maps)):
        assert _convert(marr.slice(start), map_t, mtarget).to_pylist() == mexpected[start:], start

    structs = [{"u": values[0], "n": 1}, None, {"u": None, "n": 2}, {"u": values[1], "n": None}]
    sarr = pa.array(structs, pa.struct([pa.field("u", B16), pa.field("n", pa.int32())]))
    struct_t = {
        "type": "struct",
        "fields": [
            {"id": 5, "name": "u", "required": False, "type": "uuid"},
            {"id": 6, "name": "n", "required": False, "type": "int"},
        ],
    }
    starget = pa.struct([pa.field("u", pa.string()), pa.field("n", pa.int32())])
    got = _convert(sarr, struct_t, starget).to_pylist()
    assert got == [{"u": texts[0], "n": 1}, None, {"u": None, "n": 2}, {"u": texts[1], "n": None}]


def _schema(u: pa.DataType) -> pa.Schema:
    return pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("u", u),
            pa.field("st", pa.struct([pa.field("u", u), pa.field("n", pa.int32())])),
            pa.field("arr", pa.list_(u)),
            pa.field("m", pa.map_(pa.string(), u)),
        ]
    )


@pytest.mark.spark
@pytest.mark.interop
def test_spark_read_shows_uuids_as_java_does(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    import icefloe.spark

    table = catalog.create_table(table_name, schema=_schema(U))
    v = _uuids(300)
    rows = [
        {"id": 1, "u": v[0], "st": {"u": v[1], "n": 1}, "arr": [v[2], None, v[3]], "m": [("a", v[4])]},
        {"id": 2, "u": None, "st": None, "arr": None, "m": None},
        {"id": 3, "u": v[5], "st": {"u": None, "n": 2}, "arr": [], "m": [("b", None)]},
    ]
    rows += [
        {"id": 10 + i, "u": v[i], "st": {"u": v[-i - 1], "n": i}, "arr": v[i : i + 3], "m": [("k", v[i])]}
        for i in range(6, 290)
    ]
    table.append(pa.Table.from_pylist(rows, schema=_schema(B16)).cast(_schema(U)))
    java = oracle.df(table_name)
    assert java.filter("id = 1").collect()[0]["u"] == _text(v[0]), "Java shows uuids as strings"
    table = catalog.load_table(table_name)
    assert_same_rows(icefloe.spark.read(spark, table), java)
    for cols in (["arr"], ["m", "id"], ["st"]):
        got = icefloe.spark.read(spark, table, selected_fields=cols)
        assert_same_rows(got, oracle.df(table_name, columns=cols), context=str(cols))

    # Java appends uuids given as strings; both engines show them the same way
    w = str(uuid.UUID(int=RNG.getrandbits(128)))
    oracle.sql(
        f"INSERT INTO {oracle.qualified(table_name)} VALUES "
        f"(1000, '{w}', named_struct('u', '{w}', 'n', 7), array('{w}', null), map('j', '{w}'))"
    )
    table = catalog.load_table(table_name)
    java = oracle.df(table_name)
    assert java.filter("id = 1000").collect()[0]["u"] == w
    assert_same_rows(icefloe.spark.read(spark, table), java)
