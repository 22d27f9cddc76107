"""Which tables the Spark sort rewrite sends through Spark rows (`_sort_on_spark.spark_carries`):
only those whose every column Spark holds as it is; the others keep the one-writer path."""

from __future__ import annotations

import json

import pytest
from icefloe.maintenance._sort_on_spark import spark_carries


def _schema(*types: object) -> str:
    fields = [{"id": i + 1, "name": f"c{i}", "required": False, "type": t} for i, t in enumerate(types)]
    return json.dumps({"type": "struct", "schema-id": 0, "fields": fields})


def _list(element_id: int, element: object) -> dict[str, object]:
    return {"type": "list", "element-id": element_id, "element": element, "element-required": False}


def test_plain_and_nested_types_go_through_spark() -> None:
    nested = {
        "type": "struct",
        "fields": [
            {"id": 10, "name": "a", "required": False, "type": "decimal(38, 2)"},
            {
                "id": 11,
                "name": "m",
                "required": False,
                "type": {
                    "type": "map",
                    "key-id": 12,
                    "key": "string",
                    "value-id": 13,
                    "value": _list(14, "timestamptz"),
                    "value-required": False,
                },
            },
        ],
    }
    plain = ("long", "string", "double", "date", "timestamp", "binary", "boolean")
    assert spark_carries(_schema(*plain, nested))


LOSSY = ["uuid", "fixed[16]", "time", "timestamp_ns", "timestamptz_ns", "unknown", "variant"]


@pytest.mark.parametrize("kind", LOSSY)
def test_a_type_spark_cannot_hold_keeps_the_one_writer_path(kind: str) -> None:
    assert not spark_carries(_schema("long", kind))
    assert not spark_carries(_schema("long", _list(5, kind)))
