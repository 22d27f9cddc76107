"""Row filters: the string form (parsed in Rust) against the builder, the JSON door between
them, and binding errors. No Spark here; the oracle parity lives in test_expressions_oracle.py."""

from __future__ import annotations

import datetime as dt
import decimal
import json

import pyarrow as pa
import pytest
from icefloe import _native
from icefloe.exceptions import NotSupportedError, ValidationError
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNaN,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
    NotEqualTo,
    NotIn,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
    as_row_filter,
    from_json,
    parse_filter,
)
from icefloe.schema import Schema

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "name", "required": False, "type": "string"},
        {"id": 4, "name": "kind", "required": False, "type": "string"},
        {"id": 5, "name": "amount", "required": False, "type": "decimal(9, 2)"},
        {"id": 6, "name": "x", "required": False, "type": "double"},
        {"id": 7, "name": "d", "required": False, "type": "date"},
        {"id": 8, "name": "i", "required": False, "type": "int"},
        {
            "id": 9,
            "name": "s",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [{"id": 10, "name": "y", "required": False, "type": "long"}],
            },
        },
    ],
}
SCHEMA_JSON = json.dumps(SCHEMA)

# (string form, builder form): each pair must parse to the same tree and bind identically.
PAIRS: list[tuple[str, BooleanExpression]] = [
    ("id > 5", GreaterThan("id", 5)),
    ("5 < id", GreaterThan("id", 5)),
    ("id >= -3", GreaterThanOrEqual("id", -3)),
    ("id = 7", EqualTo("id", 7)),
    ("id != 7", NotEqualTo("id", 7)),
    ("id <> 7", NotEqualTo("id", 7)),
    ("ts >= '2024-01-01'", GreaterThanOrEqual("ts", "2024-01-01")),
    ("ts < '2024-01-01T10:00:00+00:00'", LessThan("ts", "2024-01-01T10:00:00+00:00")),
    ("d <= '1969-12-31'", LessThanOrEqual("d", "1969-12-31")),
    ("name LIKE 'a%'", StartsWith("name", "a")),
    ("name NOT LIKE 'ab%'", NotStartsWith("name", "ab")),
    ("kind IN ('x', 'y')", In("kind", ["x", "y"])),
    ("kind NOT IN ('x')", NotIn("kind", ["x"])),
    ("amount IS NOT NULL", NotNull("amount")),
    ("amount IS NULL", IsNull("amount")),
    ("amount = 1.50", EqualTo("amount", decimal.Decimal("1.50"))),
    ("amount > 2", GreaterThan("amount", 2)),
    ("x < 1.5", LessThan("x", 1.5)),
    ("isnan(x)", IsNaN("x")),
    ("NOT isnan(x)", Not(IsNaN("x"))),
    ("s.y = 3", EqualTo("s.y", 3)),
    ("i BETWEEN 1 AND 3", And(GreaterThanOrEqual("i", 1), LessThanOrEqual("i", 3))),
    ("id > 5 OR NOT (i = 2)", Or(GreaterThan("id", 5), Not(EqualTo("i", 2)))),
    ("true", AlwaysTrue()),
    ("false", AlwaysFalse()),
    (
        "id > 5 AND ts >= '2024-01-01' AND name LIKE 'a%' AND kind IN ('x','y') AND amount IS NOT NULL",
        And(
            And(
                And(
                    And(GreaterThan("id", 5), GreaterThanOrEqual("ts", "2024-01-01")), StartsWith("name", "a")
                ),
                In("kind", ["x", "y"]),
            ),
            NotNull("amount"),
        ),
    ),
]


@pytest.mark.parametrize(("text", "builder"), PAIRS, ids=[p[0] for p in PAIRS])
def test_string_form_equals_builder(text: str, builder: BooleanExpression) -> None:
    parsed = parse_filter(text)
    assert parsed == builder
    # Both sides bind in Rust to the very same typed expression.
    bound_parsed = json.loads(_native.bind_filter(_native.parse_filter(text), SCHEMA_JSON))
    bound_builder = json.loads(_native.bind_filter(builder.to_json(), SCHEMA_JSON))
    assert bound_parsed == bound_builder


@pytest.mark.parametrize(("text", "builder"), PAIRS, ids=[p[0] for p in PAIRS])
def test_json_round_trip(text: str, builder: BooleanExpression) -> None:
    assert from_json(builder.to_json()) == builder
    assert from_json(_native.parse_filter(text)) == builder


def test_bound_literals_are_typed() -> None:
    b = json.loads(
        _native.bind_filter(parse_filter("ts >= '2024-01-01' AND amount = 1.5").to_json(), SCHEMA_JSON)
    )
    assert b["left"] == {
        "type": "gt-eq",
        "term": "ts",
        "field-id": 2,
        "field-type": "timestamptz",
        "required": False,
        "value": "2024-01-01T00:00:00+00:00",
    }
    assert b["right"]["value"] == "1.50"
    # required column: IS NULL is false; int column vs a huge literal: constant
    assert json.loads(_native.bind_filter(IsNull("id").to_json(), SCHEMA_JSON)) == {"type": "false"}
    assert json.loads(_native.bind_filter(LessThan("i", 2**40).to_json(), SCHEMA_JSON)) == {"type": "true"}
    # a Python date binds like its ISO string
    by_date = _native.bind_filter(LessThanOrEqual("d", dt.date(1969, 12, 31)).to_json(), SCHEMA_JSON)
    assert json.loads(by_date)["value"] == "1969-12-31"
    cs = json.loads(_native.bind_filter(EqualTo("ID", 1).to_json(), SCHEMA_JSON, False))
    assert cs["field-id"] == 1
    # Decimals whose str() has an exponent (a scaled zero, as Spark pushes `amount = 0`)
    for value, want in ((decimal.Decimal("0E-2"), "0.00"), (decimal.Decimal("1.0E-2"), "0.01")):
        bound = json.loads(_native.bind_filter(EqualTo("amount", value).to_json(), SCHEMA_JSON))
        assert bound["value"] == want, (value, bound)


def test_errors_name_the_culprit() -> None:
    with pytest.raises(ValidationError, match="'nope'"):
        _native.bind_filter(EqualTo("nope", 1).to_json(), SCHEMA_JSON)
    with pytest.raises(ValidationError, match="'ID'"):
        _native.bind_filter(EqualTo("ID", 1).to_json(), SCHEMA_JSON)
    with pytest.raises(ValidationError, match="'abc'"):
        _native.bind_filter(EqualTo("id", "abc").to_json(), SCHEMA_JSON)
    with pytest.raises(ValidationError, match="garbage"):
        parse_filter("id > 5 garbage")
    with pytest.raises(NotSupportedError, match="'%a'"):
        parse_filter("name LIKE '%a'")
    with pytest.raises(NotSupportedError, match="lower"):
        parse_filter("lower(name) = 'a'")
    with pytest.raises(ValidationError, match="IS NULL"):
        parse_filter("name = NULL")


def test_string_filters_work_with_the_python_layer() -> None:
    f = as_row_filter("id > 2 AND name LIKE 'a%'")
    schema = Schema.from_json(SCHEMA_JSON)
    bound = f.bind(schema)
    assert bound.referenced_columns() == {"id", "name"}
    t = pa.table({"id": [1, 3, 4, 5], "name": ["apple", "avocado", None, "banana"]})
    assert t.filter(bound.to_pyarrow())["id"].to_pylist() == [3]
    assert as_row_filter("") == AlwaysTrue()
    assert as_row_filter(None) == AlwaysTrue()
    # the string form parses the same whitespace/case-insensitively for keywords
    assert as_row_filter("ID > 1 and NAME is not null") == And(GreaterThan("ID", 1), NotNull("NAME"))


def test_inclusive_metrics_binding() -> None:
    f = {
        "content": "Data",
        "file_path": "f.parquet",
        "file_format": "Parquet",
        "partition": [],
        "record_count": 10,
        "file_size_in_bytes": 100,
        "column_sizes": {},
        "value_counts": {"1": 10},
        "null_value_counts": {"1": 0},
        "nan_value_counts": {},
        "lower_bounds": {"1": list((30).to_bytes(8, "little"))},
        "upper_bounds": {"1": list((79).to_bytes(8, "little"))},
        "key_metadata": None,
        "split_offsets": None,
        "equality_ids": None,
        "sort_order_id": None,
        "referenced_data_file": None,
        "spec_id": 0,
    }
    fj = json.dumps(f)

    def keeps(text: str) -> bool:
        return _native.eval_inclusive_metrics(
            fj, _native.bind_filter(_native.parse_filter(text), SCHEMA_JSON)
        )

    assert keeps("id = 50") and not keeps("id = 80") and not keeps("id < 30") and keeps("id <= 30")
    assert _native.files_matching_metrics(
        [fj], _native.bind_filter(_native.parse_filter("id > 78"), SCHEMA_JSON)
    ) == ["f.parquet"]
