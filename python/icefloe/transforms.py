"""Partition and sort transforms (PyIceberg names); `str()` is the spec's JSON string."""

from __future__ import annotations

import re
from typing import Any

from icefloe.exceptions import InvalidDataError, ValidationError

__all__ = [
    "BucketTransform",
    "DayTransform",
    "HourTransform",
    "IdentityTransform",
    "MonthTransform",
    "Transform",
    "TruncateTransform",
    "VoidTransform",
    "YearTransform",
    "parse_transform",
]


class Transform:
    """Base of the transforms; instances compare by their JSON string."""

    _json = ""

    def to_json(self) -> str:
        return self._json

    def __str__(self) -> str:
        return self.to_json()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Transform) and self.to_json() == other.to_json()

    def __hash__(self) -> int:
        return hash(self.to_json())


class IdentityTransform(Transform):
    _json = "identity"


class YearTransform(Transform):
    _json = "year"


class MonthTransform(Transform):
    _json = "month"


class DayTransform(Transform):
    _json = "day"


class HourTransform(Transform):
    _json = "hour"


class VoidTransform(Transform):
    _json = "void"


class BucketTransform(Transform):
    def __init__(self, num_buckets: int) -> None:
        if num_buckets < 1:
            raise ValidationError(f"expected a bucket count >= 1, found {num_buckets}")
        self.num_buckets = num_buckets

    def to_json(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def __repr__(self) -> str:
        return f"BucketTransform(num_buckets={self.num_buckets})"


class TruncateTransform(Transform):
    def __init__(self, width: int) -> None:
        if width < 1:
            raise ValidationError(f"expected a truncate width >= 1, found {width}")
        self.width = width

    def to_json(self) -> str:
        return f"truncate[{self.width}]"

    def __repr__(self) -> str:
        return f"TruncateTransform(width={self.width})"


class UnknownTransform(Transform):
    """A transform this version does not know; kept verbatim so metadata round-trips."""

    def __init__(self, text: str) -> None:
        self._json = text

    def __repr__(self) -> str:
        return f"UnknownTransform({self._json!r})"


_SIMPLE: dict[str, type[Transform]] = {
    c._json: c
    for c in (IdentityTransform, YearTransform, MonthTransform, DayTransform, HourTransform, VoidTransform)
}
_BUCKET = re.compile(r"^bucket\[\s*(\d+)\s*\]$")
_TRUNCATE = re.compile(r"^truncate\[\s*(\d+)\s*\]$")


def parse_transform(value: Any) -> Transform:
    """A Transform from a Transform or its JSON string (`identity`, `bucket[16]`, ...)."""
    if isinstance(value, Transform):
        return value
    if not isinstance(value, str):
        raise ValidationError(f"expected a transform or its string form, found {value!r}")
    t = value.strip().lower()
    if t in _SIMPLE:
        return _SIMPLE[t]()
    if m := _BUCKET.match(t):
        return BucketTransform(int(m.group(1)))
    if m := _TRUNCATE.match(t):
        return TruncateTransform(int(m.group(1)))
    if not t:
        raise InvalidDataError("empty transform string")
    return UnknownTransform(value)
