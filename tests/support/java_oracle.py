"""Iceberg Java's core API as a long-lived helper process (tests/java/PropertyOracle.java),
and the one text form ("codec") values travel in between the tests and that helper.

``JavaOracle.ask(request)`` sends one JSON request line and returns the ``result`` of the
JSON answer line: one JVM start for a whole test module, any number of batched requests.

Python values by Iceberg type: boolean ``bool``; int, long ``int``; float, double ``float``;
date as days, time and timestamp(tz) as microseconds, timestamp(tz)_ns as nanoseconds (all
``int``); string ``str``; binary, fixed, uuid ``bytes``; decimal ``decimal.Decimal`` (at the
type's scale).
"""

from __future__ import annotations

import decimal
import json
import struct
import subprocess
import uuid
from typing import Any

import pyarrow as pa

NULL = "\\N"
CTX = decimal.Context(prec=80)


def decimal_scale(ty: str) -> int:
    return int(ty.split(",")[1].strip(" )"))


def codec(ty: str, v: Any) -> str:
    """The helper's text form of the Python value ``v`` of Iceberg type ``ty``."""
    if v is None:
        return NULL
    if ty == "boolean":
        return "true" if v else "false"
    if ty == "float":
        return struct.pack(">f", v).hex()
    if ty == "double":
        return struct.pack(">d", v).hex()
    if ty == "string":
        return str(v).encode().hex()
    if ty == "uuid":
        return str(uuid.UUID(bytes=bytes(v)))
    if ty == "binary" or ty.startswith("fixed"):
        return bytes(v).hex()
    if ty.startswith("decimal"):
        return str(int(v.scaleb(decimal_scale(ty), context=CTX)))
    return str(int(v))


def arrow_codec(arr: pa.Array, ty: str | None = None) -> list[str]:
    """The codec form of each value of an Arrow array (of Iceberg type ``ty``, else the
    type its Arrow type stands for: a transform's result)."""
    t = arr.type
    if ty == "uuid":
        pass
    elif pa.types.is_string(t):
        ty = "string"
    elif pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        ty = "binary"
    elif pa.types.is_decimal(t):
        ty = f"decimal({t.precision}, {t.scale})"
    elif pa.types.is_boolean(t):
        ty = "boolean"
    elif pa.types.is_float32(t):
        ty = "float"
    elif pa.types.is_float64(t):
        ty = "double"
    else:  # integers, dates, times, timestamps as their integer storage
        storage = pa.int32() if pa.types.is_int32(t) or pa.types.is_date32(t) else pa.int64()
        return [codec("long", v) for v in arr.cast(storage).to_pylist()]
    return [codec(ty, v) for v in arr.to_pylist()]


def arrow_array(ty: str, values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    """The Arrow array of Python values of Iceberg type ``ty``, of ``arrow_type``."""
    if ty in ("int", "date"):
        return pa.array(values, pa.int32()).cast(arrow_type)
    if ty in ("long", "time") or ty.startswith("timestamp"):
        return pa.array(values, pa.int64()).cast(arrow_type)
    return pa.array(values, arrow_type)


class JavaOracle:
    """The `serve` mode of tests/java/PropertyOracle.java as a child process."""

    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(
            [*command, "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def ask(self, request: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the Java oracle exited (code {self.proc.wait()})")
        answer = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"the Java oracle failed on {request.get('cmd')}: {answer['error']}")
        return answer["result"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
