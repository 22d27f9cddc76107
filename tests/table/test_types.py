"""Types, schemas, partition specs, sort orders and row-filter expressions (no Spark)."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest
from icefloe import (
    BooleanType,
    BucketTransform,
    DateType,
    DayTransform,
    DecimalType,
    DoubleType,
    FixedType,
    IdentityTransform,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    PartitionField,
    PartitionSpec,
    Schema,
    SortField,
    SortOrder,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    TruncateTransform,
    UUIDType,
    VoidTransform,
)
from icefloe.exceptions import IcefloeError, ValidationError
from icefloe.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
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
    NotNaN,
    NotNull,
    NotStartsWith,
    Or,
    StartsWith,
    as_row_filter,
)
from icefloe.sorting import NullOrder, SortDirection
from icefloe.transforms import parse_transform
from icefloe.types import UnknownType, UnsupportedType, VariantType, type_from_json


def nested_schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(
            3,
            "loc",
            StructType(NestedField(4, "lat", DoubleType()), NestedField(5, "lon", DoubleType())),
        ),
        NestedField(6, "tags", ListType(7, StringType(), element_required=False)),
        NestedField(8, "props", MapType(9, StringType(), 10, IntegerType(), value_required=True)),
        NestedField(11, "price", DecimalType(9, 2), doc="in euros"),
        NestedField(12, "ts", TimestamptzType()),
        NestedField(13, "day", DateType()),
        NestedField(14, "u", UUIDType()),
        NestedField(15, "f", FixedType(3)),
        NestedField(16, "t", TimeType()),
        NestedField(17, "ok", BooleanType()),
        schema_id=3,
        identifier_field_ids=[1],
    )


def test_primitive_json_strings() -> None:
    assert str(DecimalType(9, 2)) == "decimal(9, 2)"
    assert str(FixedType(16)) == "fixed[16]"
    assert type_from_json("decimal(9,2)") == DecimalType(9, 2)
    assert type_from_json(" fixed[ 4 ] ") == FixedType(4)
    assert type_from_json("timestamptz") == TimestamptzType()
    assert LongType() == LongType() and LongType() != IntegerType()
    assert DecimalType(9, 2) != DecimalType(9, 3)
    assert repr(DecimalType(9, 2)) == "DecimalType(precision=9, scale=2)"
    with pytest.raises(ValidationError):
        DecimalType(39, 0)
    with pytest.raises(IcefloeError):
        type_from_json("varchar")
    # Format v3 types: `unknown` is read (as nulls), variants as their two buffers.
    assert type_from_json("unknown") == UnknownType() and UnknownType().to_json() == "unknown"
    assert type_from_json("variant") == VariantType() and VariantType().to_json() == "variant"
    assert UnsupportedType("x(1)") != UnsupportedType("x") and UnsupportedType("x").to_json() == "x"


def test_schema_json_round_trip_follows_the_spec() -> None:
    s = nested_schema()
    obj = json.loads(s.to_json())
    assert obj["type"] == "struct" and obj["schema-id"] == 3 and obj["identifier-field-ids"] == [1]
    assert obj["fields"][0] == {"id": 1, "name": "id", "required": True, "type": "long"}
    assert obj["fields"][3]["type"] == {
        "type": "list",
        "element-id": 7,
        "element": "string",
        "element-required": False,
    }
    assert obj["fields"][4]["type"]["key-id"] == 9 and obj["fields"][4]["type"]["value-required"] is True
    assert obj["fields"][5]["doc"] == "in euros"
    assert Schema.from_json(s.to_json()) == s
    assert hash(Schema.from_json(s.to_json())) == hash(s)


def test_schema_lookup_and_select() -> None:
    s = nested_schema()
    assert s.find_field("id").field_id == 1
    assert s.find_field(5).name == "lon"
    assert s.find_field("loc.lat").field_id == 4
    assert s.find_field("tags.element").field_id == 7
    assert s.find_field("props.value").field_id == 10
    assert s.find_field("NAME", case_sensitive=False).field_id == 2
    assert s.find_column_path("loc.lon") == ("loc", "lon")
    assert s.highest_field_id == 17
    with pytest.raises(ValidationError, match="nope"):
        s.find_field("nope")
    with pytest.raises(ValidationError, match="NAME"):
        s.find_field("NAME")

    sel = s.select("name", "loc.lat")
    assert [f.name for f in sel.fields] == ["name", "loc"]
    loc = sel.find_field("loc").field_type
    assert isinstance(loc, StructType) and [f.name for f in loc.fields] == ["lat"]
    with pytest.raises(ValidationError, match=r"'a'.*'b'"):
        s.select("a", "b")


def test_schema_errors() -> None:
    with pytest.raises(ValidationError, match="id 1"):
        Schema(NestedField(1, "a", LongType()), NestedField(1, "b", LongType()))
    with pytest.raises(ValidationError, match="'a'"):
        Schema(NestedField(1, "a", LongType()), NestedField(2, "a", LongType()))
    with pytest.raises(ValidationError):
        Schema(NestedField(1, "a", LongType()), identifier_field_ids=[5])


def test_schema_arrow_round_trip_keeps_field_ids() -> None:
    s = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "ts", TimestampType()),
    )
    arrow = s.as_arrow()
    assert arrow.names == ["id", "name", "ts"]
    assert arrow.field("id").nullable is False
    assert arrow.field("id").metadata[b"PARQUET:field_id"] == b"1"
    assert Schema.from_arrow(arrow).fields == s.fields


def test_schema_from_plain_arrow_assigns_ids() -> None:
    arrow = pa.schema([pa.field("a", pa.int64(), nullable=False), pa.field("b", pa.string())])
    s = Schema.from_arrow(arrow)
    assert [(f.field_id, f.name, f.required) for f in s.fields] == [(1, "a", True), (2, "b", False)]
    assert s.fields[0].field_type == LongType()


def test_transforms() -> None:
    assert str(BucketTransform(16)) == "bucket[16]"
    assert str(TruncateTransform(4)) == "truncate[4]"
    assert parse_transform("bucket[16]") == BucketTransform(16)
    assert parse_transform("day") == DayTransform()
    assert parse_transform("void") == VoidTransform()
    assert parse_transform("identity") != parse_transform("void")
    with pytest.raises(ValidationError):
        BucketTransform(0)


def test_partition_spec_json() -> None:
    spec = PartitionSpec(
        PartitionField(1, 1000, IdentityTransform(), "id"),
        PartitionField(12, 1001, DayTransform(), "ts_day"),
        PartitionField(2, 1002, "bucket[8]", "name_bucket"),
        spec_id=0,
    )
    obj = json.loads(spec.to_json())
    assert obj == {
        "spec-id": 0,
        "fields": [
            {"name": "id", "transform": "identity", "source-id": 1, "field-id": 1000},
            {"name": "ts_day", "transform": "day", "source-id": 12, "field-id": 1001},
            {"name": "name_bucket", "transform": "bucket[8]", "source-id": 2, "field-id": 1002},
        ],
    }
    assert PartitionSpec.from_json(spec.to_json()) == spec
    assert "BucketTransform(num_buckets=8)" in repr(spec)
    # Legacy v1 fields without field-id get 1000 + position.
    legacy = PartitionSpec.from_json(
        '{"spec-id":0,"fields":[{"name":"x","transform":"identity","source-id":1}]}'
    )
    assert legacy.fields[0].field_id == 1000


def test_sort_order_json() -> None:
    order = SortOrder(SortField(1), SortField(2, direction=SortDirection.DESC))
    assert order.order_id == 1
    assert order.fields[0].null_order == NullOrder.NULLS_FIRST
    assert order.fields[1].null_order == NullOrder.NULLS_LAST
    obj = json.loads(order.to_json())
    assert obj["fields"][1] == {
        "transform": "identity",
        "source-id": 2,
        "direction": "desc",
        "null-order": "nulls-last",
    }
    assert SortOrder.from_json(order.to_json()) == order
    assert SortOrder().order_id == 0


# ---- expressions ----


def flat_schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "x", DoubleType()),
        NestedField(4, "d", DateType()),
        NestedField(5, "s", StructType(NestedField(6, "k", IntegerType()))),
    )


DATA = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "name": pa.array(["apple", "banana", None, "avocado", "cherry"]),
        "x": pa.array([1.0, float("nan"), None, 4.0, 5.0]),
        "d": pa.array([dt.date(2024, 1, i) for i in range(1, 6)], pa.date32()),
        "s": pa.array([{"k": 1}, {"k": None}, None, {"k": 4}, {"k": 5}]),
    }
)


def ids(expr: object) -> list[int]:
    assert isinstance(expr, (AlwaysTrue, AlwaysFalse)) or hasattr(expr, "to_pyarrow")
    bound = expr.bind(flat_schema())  # type: ignore[attr-defined]
    return DATA.filter(bound.to_pyarrow()).column("id").to_pylist()


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        (EqualTo("id", 3), [3]),
        (NotEqualTo("name", "apple"), [2, 4, 5]),  # the null name is not selected
        (LessThan("id", 3), [1, 2]),
        (LessThanOrEqual("id", 3), [1, 2, 3]),
        (GreaterThan("x", 1.0), [2, 4, 5]),  # NaN sorts above numbers (Java, Spark); null never
        (GreaterThanOrEqual("x", 4.0), [2, 4, 5]),
        (LessThan("x", 4.0), [1]),  # NaN is not < 4
        (LessThanOrEqual("x", 5.0), [1, 4, 5]),
        (NotEqualTo("x", 1.0), [2, 4, 5]),
        (GreaterThanOrEqual("d", "2024-01-04"), [4, 5]),
        (In("name", ["apple", "cherry", "zzz"]), [1, 5]),
        (NotIn("name", ["apple"]), [2, 4, 5]),
        (IsNull("name"), [3]),
        (NotNull("name"), [1, 2, 4, 5]),
        (IsNaN("x"), [2]),
        (NotNaN("x"), [1, 3, 4, 5]),  # a null is not NaN
        (StartsWith("name", "a"), [1, 4]),
        (NotStartsWith("name", "a"), [2, 5]),
        (Not(EqualTo("name", "apple")), [2, 4, 5]),
        (And(GreaterThan("id", 1), LessThan("id", 5)), [2, 3, 4]),
        (Or(EqualTo("id", 1), IsNull("name")), [1, 3]),
        (EqualTo("id", 1) | EqualTo("id", 2), [1, 2]),
        (GreaterThan("id", 1) & ~EqualTo("id", 2), [3, 4, 5]),
        (EqualTo("s.k", 4), [4]),
        (IsNull("s.k"), [2, 3]),
        (IsNaN("id"), []),  # a long is never NaN
        (NotNaN("id"), [1, 2, 3, 4, 5]),
        (In("id", []), []),
        (AlwaysTrue(), [1, 2, 3, 4, 5]),
        (AlwaysFalse(), []),
    ],
)
def test_expression_semantics(expr: object, expected: list[int]) -> None:
    assert ids(expr) == expected


def test_expression_binding_errors_name_the_column() -> None:
    with pytest.raises(ValidationError, match="'nope'"):
        EqualTo("nope", 1).bind(flat_schema())
    with pytest.raises(ValidationError, match="'nope'"):
        And(EqualTo("id", 1), IsNull("nope")).bind(flat_schema())
    with pytest.raises(ValidationError, match="'id'"):
        EqualTo("id", "not a number").bind(flat_schema())
    with pytest.raises(ValidationError, match="'id'"):
        StartsWith("id", "1").bind(flat_schema())
    with pytest.raises(ValidationError):
        EqualTo("id", None)
    with pytest.raises(ValidationError, match="IsNaN"):
        GreaterThan("x", float("nan")).bind(flat_schema())
    # Case-insensitive binding resolves to the schema's spelling.
    bound = EqualTo("ID", 2).bind(flat_schema(), case_sensitive=False)
    assert bound.referenced_columns() == {"id"}
    assert DATA.filter(bound.to_pyarrow()).num_rows == 1


def test_expression_helpers() -> None:
    e = And(EqualTo("id", 1), Or(IsNull("name"), GreaterThan("s.k", 2)))
    assert e.referenced_columns() == {"id", "name", "s.k"}
    assert e == And(EqualTo("id", 1), Or(IsNull("name"), GreaterThan("s.k", 2)))
    assert "EqualTo(term='id', literal=1)" in repr(e)
    assert isinstance(as_row_filter(None), AlwaysTrue)
    assert as_row_filter("id > 5") == GreaterThan("id", 5)  # strings parse in Rust
