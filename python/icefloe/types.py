"""Iceberg data types, PyIceberg-style: small immutable value classes with `__eq__`,
`__repr__`, and the spec's JSON form (`to_json()` / `type_from_json()`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Union

from icefloe.exceptions import InvalidDataError, ValidationError

__all__ = [
    "BinaryType",
    "BooleanType",
    "DateType",
    "DecimalType",
    "DoubleType",
    "FixedType",
    "FloatType",
    "GeographyType",
    "GeometryType",
    "IcebergType",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "NestedField",
    "PrimitiveType",
    "StringType",
    "StructType",
    "TimeType",
    "TimestampNanoType",
    "TimestampType",
    "TimestamptzNanoType",
    "TimestamptzType",
    "UUIDType",
    "UnknownType",
    "UnsupportedType",
    "VariantType",
    "type_from_json",
]

JsonType = Union[str, dict[str, Any]]


class IcebergType:
    """Base of every Iceberg type."""

    @property
    def is_primitive(self) -> bool:
        return isinstance(self, PrimitiveType)

    @property
    def is_struct(self) -> bool:
        return isinstance(self, StructType)

    def to_json(self) -> JsonType:
        raise NotImplementedError

    def _key(self) -> tuple[Any, ...]:
        return ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IcebergType) and type(self) is type(other) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))


class PrimitiveType(IcebergType):
    """A primitive type; `str()` is its JSON string (`long`, `decimal(9, 2)`, `fixed[16]`)."""

    _json: str = ""

    def to_json(self) -> str:
        return self._json

    def __str__(self) -> str:
        return self.to_json()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class BooleanType(PrimitiveType):
    _json = "boolean"


class IntegerType(PrimitiveType):
    _json = "int"


class LongType(PrimitiveType):
    _json = "long"


class FloatType(PrimitiveType):
    _json = "float"


class DoubleType(PrimitiveType):
    _json = "double"


class DateType(PrimitiveType):
    _json = "date"


class TimeType(PrimitiveType):
    _json = "time"


class TimestampType(PrimitiveType):
    _json = "timestamp"


class TimestamptzType(PrimitiveType):
    _json = "timestamptz"


class TimestampNanoType(PrimitiveType):
    _json = "timestamp_ns"


class TimestamptzNanoType(PrimitiveType):
    _json = "timestamptz_ns"


class UnknownType(PrimitiveType):
    """Format v3 `unknown`: a column whose every value is null (read as Arrow `null`)."""

    _json = "unknown"


class VariantType(PrimitiveType):
    """Format v3 `variant`: semi-structured values in the Variant binary encoding. Read as an
    Arrow struct of two binary columns, `metadata` and `value` (the Parquet form of an
    unshredded variant, Arrow's `arrow.parquet.variant` extension), and as Spark's `variant` on
    PySpark 4; written from the same struct (or a Spark `variant` column on PySpark 4)."""

    _json = "variant"


DEFAULT_CRS = "OGC:CRS84"
EDGE_ALGORITHMS = ("spherical", "vincenty", "thomas", "andoyer", "karney")


class GeometryType(PrimitiveType):
    """Format v3 `geometry(crs)`: WKB values with planar edges in the coordinate reference
    system `crs` (default `OGC:CRS84`). Read as Arrow binary tagged with GeoArrow's
    `geoarrow.wkb` extension (its metadata names the CRS), as binary on Spark; written from
    either. Filters on the column are left to the engine (only null checks prune)."""

    def __init__(self, crs: str = DEFAULT_CRS) -> None:
        if not crs.strip():
            raise ValidationError("expected a non-empty CRS for geometry, found an empty string")
        self.crs = crs.strip()

    def to_json(self) -> str:
        # Java 1.12 names the CRS even when it is the default.
        return f"geometry({self.crs})"

    def _key(self) -> tuple[Any, ...]:
        # Java compares CRS names ignoring case.
        return (self.crs.lower(),)

    def __repr__(self) -> str:
        return f"GeometryType(crs={self.crs!r})"


class GeographyType(PrimitiveType):
    """Format v3 `geography(crs, algorithm)`: WKB values whose edges follow `algorithm`
    (`spherical`, the default, `vincenty`, `thomas`, `andoyer` or `karney`) on the CRS `crs`
    (default `OGC:CRS84`). In Arrow and Spark as `GeometryType` (GeoArrow's metadata also
    names the edges)."""

    def __init__(self, crs: str = DEFAULT_CRS, algorithm: str = "spherical") -> None:
        if not crs.strip():
            raise ValidationError("expected a non-empty CRS for geography, found an empty string")
        alg = algorithm.strip().lower()
        if alg not in EDGE_ALGORITHMS:
            names = ", ".join(EDGE_ALGORITHMS)
            raise ValidationError(f"expected an edge interpolation algorithm ({names}), found {algorithm!r}")
        self.crs = crs.strip()
        self.algorithm = alg

    def to_json(self) -> str:
        return f"geography({self.crs}, {self.algorithm})"

    def _key(self) -> tuple[Any, ...]:
        return (self.crs.lower(), self.algorithm)

    def __repr__(self) -> str:
        return f"GeographyType(crs={self.crs!r}, algorithm={self.algorithm!r})"


class UnsupportedType(PrimitiveType):
    """A primitive type kept by its JSON name. No type parses to it any more (`geometry` and
    `geography` are `GeometryType` and `GeographyType`); kept for code that imports it."""

    def __init__(self, name: str) -> None:
        self._json = name

    def _key(self) -> tuple[Any, ...]:
        return (self._json,)

    def __repr__(self) -> str:
        return f"UnsupportedType({self._json!r})"


class StringType(PrimitiveType):
    _json = "string"


class UUIDType(PrimitiveType):
    _json = "uuid"


class BinaryType(PrimitiveType):
    _json = "binary"


class DecimalType(PrimitiveType):
    def __init__(self, precision: int, scale: int) -> None:
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise ValidationError(
                f"expected decimal precision 1..38 and 0 <= scale <= precision, found ({precision}, {scale})"
            )
        self.precision = precision
        self.scale = scale

    def to_json(self) -> str:
        return f"decimal({self.precision}, {self.scale})"

    def _key(self) -> tuple[Any, ...]:
        return (self.precision, self.scale)

    def __repr__(self) -> str:
        return f"DecimalType(precision={self.precision}, scale={self.scale})"


class FixedType(PrimitiveType):
    def __init__(self, length: int) -> None:
        if length < 1:
            raise ValidationError(f"expected a fixed length >= 1, found {length}")
        self.length = length

    def __len__(self) -> int:
        return self.length

    def to_json(self) -> str:
        return f"fixed[{self.length}]"

    def _key(self) -> tuple[Any, ...]:
        return (self.length,)

    def __repr__(self) -> str:
        return f"FixedType(length={self.length})"


class NestedField:
    """A field of a struct (or a list element / map key / map value) with its Iceberg id."""

    def __init__(
        self,
        field_id: int,
        name: str,
        field_type: IcebergType,
        required: bool = False,
        doc: str | None = None,
        initial_default: Any = None,
        write_default: Any = None,
    ) -> None:
        if not isinstance(field_type, IcebergType):
            raise ValidationError(
                f"field {name!r} (id {field_id}): expected an Iceberg type, found {field_type!r}"
            )
        self.field_id = field_id
        self.name = name
        self.field_type = field_type
        self.required = required
        self.doc = doc
        # v3 defaults, kept in their JSON single-value form.
        self.initial_default = initial_default
        self.write_default = write_default

    @property
    def optional(self) -> bool:
        return not self.required

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.field_id,
            "name": self.name,
            "required": self.required,
            "type": self.field_type.to_json(),
        }
        if self.doc is not None:
            out["doc"] = self.doc
        if self.initial_default is not None:
            out["initial-default"] = self.initial_default
        if self.write_default is not None:
            out["write-default"] = self.write_default
        return out

    @staticmethod
    def from_json(obj: dict[str, Any]) -> NestedField:
        try:
            return NestedField(
                field_id=int(obj["id"]),
                name=str(obj["name"]),
                field_type=type_from_json(obj["type"]),
                required=bool(obj["required"]),
                doc=obj.get("doc"),
                initial_default=obj.get("initial-default"),
                write_default=obj.get("write-default"),
            )
        except KeyError as e:
            raise InvalidDataError(f"schema field {obj!r} has no {e.args[0]!r}") from None

    def _key(self) -> tuple[Any, ...]:
        return (
            self.field_id,
            self.name,
            self.field_type,
            self.required,
            self.doc,
            repr(self.initial_default),
            repr(self.write_default),
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NestedField) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        doc = f", doc={self.doc!r}" if self.doc is not None else ""
        return (
            f"NestedField(field_id={self.field_id}, name={self.name!r}, field_type={self.field_type!r}, "
            f"required={self.required}{doc})"
        )

    def __str__(self) -> str:
        req = "required" if self.required else "optional"
        doc = f" ({self.doc})" if self.doc else ""
        return f"{self.field_id}: {self.name}: {req} {self.field_type}{doc}"


class StructType(IcebergType):
    def __init__(self, *fields: NestedField) -> None:
        self.fields: tuple[NestedField, ...] = tuple(fields)

    def field(self, field_id: int) -> NestedField | None:
        for f in self.fields:
            if f.field_id == field_id:
                return f
        return None

    def field_by_name(self, name: str, case_sensitive: bool = True) -> NestedField | None:
        for f in self.fields:
            if f.name == name or (not case_sensitive and f.name.lower() == name.lower()):
                return f
        return None

    def __iter__(self) -> Iterator[NestedField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def to_json(self) -> dict[str, Any]:
        return {"type": "struct", "fields": [f.to_json() for f in self.fields]}

    def _key(self) -> tuple[Any, ...]:
        return self.fields

    def __repr__(self) -> str:
        return f"StructType({', '.join(repr(f) for f in self.fields)})"

    def __str__(self) -> str:
        return f"struct<{', '.join(str(f) for f in self.fields)}>"


class ListType(IcebergType):
    def __init__(self, element_id: int, element_type: IcebergType, element_required: bool = True) -> None:
        self.element_id = element_id
        self.element_type = element_type
        self.element_required = element_required

    @property
    def element_field(self) -> NestedField:
        return NestedField(self.element_id, "element", self.element_type, self.element_required)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "list",
            "element-id": self.element_id,
            "element": self.element_type.to_json(),
            "element-required": self.element_required,
        }

    def _key(self) -> tuple[Any, ...]:
        return (self.element_id, self.element_type, self.element_required)

    def __repr__(self) -> str:
        return (
            f"ListType(element_id={self.element_id}, element_type={self.element_type!r}, "
            f"element_required={self.element_required})"
        )

    def __str__(self) -> str:
        return f"list<{self.element_type}>"


class MapType(IcebergType):
    def __init__(
        self,
        key_id: int,
        key_type: IcebergType,
        value_id: int,
        value_type: IcebergType,
        value_required: bool = True,
    ) -> None:
        self.key_id = key_id
        self.key_type = key_type
        self.value_id = value_id
        self.value_type = value_type
        self.value_required = value_required

    @property
    def key_field(self) -> NestedField:
        return NestedField(self.key_id, "key", self.key_type, True)

    @property
    def value_field(self) -> NestedField:
        return NestedField(self.value_id, "value", self.value_type, self.value_required)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "map",
            "key-id": self.key_id,
            "key": self.key_type.to_json(),
            "value-id": self.value_id,
            "value": self.value_type.to_json(),
            "value-required": self.value_required,
        }

    def _key(self) -> tuple[Any, ...]:
        return (self.key_id, self.key_type, self.value_id, self.value_type, self.value_required)

    def __repr__(self) -> str:
        return (
            f"MapType(key_id={self.key_id}, key_type={self.key_type!r}, value_id={self.value_id}, "
            f"value_type={self.value_type!r}, value_required={self.value_required})"
        )

    def __str__(self) -> str:
        return f"map<{self.key_type}, {self.value_type}>"


_PRIMITIVES: dict[str, type[PrimitiveType]] = {
    cls._json: cls
    for cls in (
        BooleanType,
        IntegerType,
        LongType,
        FloatType,
        DoubleType,
        DateType,
        TimeType,
        TimestampType,
        TimestamptzType,
        TimestampNanoType,
        TimestamptzNanoType,
        StringType,
        UUIDType,
        BinaryType,
        UnknownType,
        VariantType,
    )
}
_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED = re.compile(r"^fixed\[\s*(\d+)\s*\]$")
# Java's `Types.fromTypeName` patterns (case-insensitive; whitespace inside a CRS is kept).
_GEOMETRY = re.compile(r"^geometry\s*(?:\(\s*([^)]*?)\s*\))?$", re.IGNORECASE)
_GEOGRAPHY = re.compile(r"^geography\s*(?:\(\s*([^,)]*?)\s*(?:,\s*(\w*)\s*)?\))?$", re.IGNORECASE)


def _geospatial_from_str(t: str) -> PrimitiveType | None:
    if m := _GEOMETRY.match(t):
        if m.group(1) is not None and not m.group(1):
            raise InvalidDataError(f"invalid CRS in type {t!r}: expected a non-empty CRS")
        return GeometryType(m.group(1) or DEFAULT_CRS)
    if m := _GEOGRAPHY.match(t):
        crs, alg = m.group(1), m.group(2)
        if crs is not None and not crs:
            raise InvalidDataError(f"invalid CRS in type {t!r}: expected a non-empty CRS")
        try:
            return GeographyType(crs or DEFAULT_CRS, "spherical" if alg is None else alg)
        except ValidationError as e:
            raise InvalidDataError(f"{e} (type {t!r})") from None
    return None


def _primitive_from_str(s: str) -> PrimitiveType:
    t = s.strip()
    cls = _PRIMITIVES.get(t)
    if cls is not None:
        return cls()
    if m := _DECIMAL.match(t):
        return DecimalType(int(m.group(1)), int(m.group(2)))
    if m := _FIXED.match(t):
        return FixedType(int(m.group(1)))
    if (geo := _geospatial_from_str(t)) is not None:
        return geo
    raise InvalidDataError(f"unknown Iceberg primitive type {t!r}")


def type_from_json(obj: JsonType) -> IcebergType:
    """Parses the spec's JSON form of a type (a string for primitives, an object otherwise)."""
    if isinstance(obj, str):
        return _primitive_from_str(obj)
    if not isinstance(obj, dict):
        raise InvalidDataError(f"expected an Iceberg type (string or object), found {obj!r}")
    kind = obj.get("type")
    try:
        if kind == "struct":
            return StructType(*(NestedField.from_json(f) for f in obj["fields"]))
        if kind == "list":
            return ListType(
                int(obj["element-id"]), type_from_json(obj["element"]), bool(obj["element-required"])
            )
        if kind == "map":
            return MapType(
                int(obj["key-id"]),
                type_from_json(obj["key"]),
                int(obj["value-id"]),
                type_from_json(obj["value"]),
                bool(obj["value-required"]),
            )
    except KeyError as e:
        raise InvalidDataError(f"{kind} type {obj!r} has no {e.args[0]!r}") from None
    raise InvalidDataError(f"expected type struct, list or map, found {kind!r}")
