"""Partition transforms on Arrow arrays (`_native.apply_transform`) against Iceberg Java.

For every supported source type: 10,000 random values plus edge values (min/max, 0, -1,
pre-1970 instants on unit boundaries, empty and non-ASCII strings, decimals of several
scales). Iceberg Java's results come from tests/java/PropertyOracle.java
(`Transforms.fromString(type, transform).bind(type).apply(value)`), fed all values in one
file, so the whole comparison costs one JVM start.
"""

from __future__ import annotations

import decimal
import random
import subprocess
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from icefloe import _native
from support.java import java_core_helper
from support.java_oracle import CTX, arrow_codec

pytestmark = pytest.mark.interop

N = 10_000


@pytest.fixture(scope="module")
def java_helper() -> list[str]:
    """The `java` command of tests/java/PropertyOracle.java (compiled once)."""
    return java_core_helper("PropertyOracle")


# ---- values -------------------------------------------------------------------------

RNG = random.Random(20240501)
I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)
DAY_US = 86_400_000_000
HOUR_US = 3_600_000_000
# Years 0001..9999 in days / micros since 1970 (the range Spark and java.time agree on).
DAYS = (-719_162, 2_932_896)
EDGE_US = [0, -1, 1, -DAY_US, -DAY_US - 1, -DAY_US + 1, -HOUR_US, -HOUR_US - 1, HOUR_US, DAY_US - 1]
EDGE_US += [-31_536_000_000_000, -31_536_000_000_001, -2_678_400_000_000, -2_678_400_000_001]


def _ints(lo: int, hi: int, edges: list[int]) -> list[int | None]:
    return [*edges, None, *(RNG.randint(lo, hi) for _ in range(N))]


def _text() -> str:
    alphabet = ["a", "Z", "0", " ", "é", "ß", "中", "語", "😀", "🤣", "\u0301", "\uffff", "\U0010ffff"]
    return "".join(RNG.choice(alphabet) for _ in range(RNG.randint(0, 12)))


def _decimal_values(precision: int) -> list[int | None]:
    m = 10**precision - 1
    return _ints(-m, m, [0, -1, 1, m, -m, 127, 128, -128, -129, 1420, 1065])


def _cases() -> list[tuple[str, pa.Array, list[str]]]:
    """(Iceberg type, Arrow values, transforms)."""
    us_lo, us_hi = DAYS[0] * DAY_US, DAYS[1] * DAY_US
    ts = _ints(us_lo, us_hi, EDGE_US)
    strings = [
        *["", "a", "iceberg", "héllo", "日本語テキスト", "😀😁😂", "ab😀cd"],
        None,
        *(_text() for _ in range(N)),
    ]
    blobs = [None, b"", b"\x00", b"\xff\x00\x01", *(RNG.randbytes(RNG.randint(0, 20)) for _ in range(N))]
    fixed = [None, bytes(16), b"\xff" * 16, *(RNG.randbytes(16) for _ in range(N))]
    uuids = [None, uuid.UUID(int=0).bytes, uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7").bytes]
    uuids += [uuid.UUID(int=RNG.getrandbits(128)).bytes for _ in range(N)]
    temporal = ["bucket[16]", "year", "month", "day", "hour"]
    cases: list[tuple[str, pa.Array, list[str]]] = [
        (
            "int",
            pa.array(_ints(*I32, [0, -1, 1, *I32]), pa.int32()),
            ["bucket[16]", "bucket[7]", "truncate[10]", "truncate[1]", "identity", "void"],
        ),
        (
            "long",
            pa.array(_ints(*I64, [0, -1, 1, *I64]), pa.int64()),
            ["bucket[16]", "bucket[1000]", "truncate[10]", "truncate[128]"],
        ),
        (
            "date",
            pa.array(_ints(*DAYS, [0, -1, 1, -365, -366, -31, -32]), pa.date32()),
            ["bucket[16]", "year", "month", "day"],
        ),
        ("time", pa.array(_ints(0, DAY_US - 1, [0, 1, DAY_US - 1]), pa.time64("us")), ["bucket[16]"]),
        ("timestamp", pa.array(ts, pa.timestamp("us")), temporal),
        ("timestamptz", pa.array(ts, pa.timestamp("us", tz="UTC")), temporal),
        (
            "timestamp_ns",
            pa.array(_ints(-(9 * 10**18), 9 * 10**18, [v * 1000 for v in EDGE_US]), pa.timestamp("ns")),
            temporal,
        ),
        ("string", pa.array(strings, pa.string()), ["bucket[16]", "truncate[1]", "truncate[3]", "identity"]),
        ("binary", pa.array(blobs, pa.binary()), ["bucket[16]", "truncate[3]"]),
        ("fixed[16]", pa.array(fixed, pa.binary(16)), ["bucket[16]"]),
        ("uuid", pa.array(uuids, pa.binary(16)), ["bucket[16]"]),
    ]
    for p, s in [(9, 2), (18, 0), (38, 10), (4, 4)]:
        ds = [None if v is None else decimal.Decimal(v).scaleb(-s, context=CTX) for v in _decimal_values(p)]
        cases.append(
            (
                f"decimal({p}, {s})",
                pa.array(ds, pa.decimal128(p, s)),
                ["bucket[16]", "truncate[50]", "truncate[3]"],
            )
        )
    return cases


def test_transforms_match_iceberg_java(java_helper: list[str], tmp_path: Path) -> None:
    lines: list[str] = []
    ours: list[str] = []
    labels: list[tuple[str, str, str]] = []
    for ty, arr, transforms in _cases():
        encoded = arrow_codec(arr, ty)
        for t in transforms:
            out = _native.apply_transform(t, ty, arr)
            assert len(out) == len(arr), (ty, t)
            ours.extend(arrow_codec(out))
            for v in encoded:
                lines.append(f"{ty}\t{t}\t{v}")
                labels.append((ty, t, v))
    inp, outp = tmp_path / "in.tsv", tmp_path / "out.txt"
    inp.write_text("\n".join(lines) + "\n")
    subprocess.run([*java_helper, "transform", str(inp), str(outp)], check=True)
    java = outp.read_text().split("\n")[:-1]
    assert len(java) == len(ours)
    mismatches = [(lab, o, j) for lab, o, j in zip(labels, ours, java, strict=True) if o != j]
    assert not mismatches, f"{len(mismatches)} mismatches, first: {mismatches[:10]}"
    # Every (type, transform) pair was exercised with non-null results.
    assert len({(a, b) for a, b, _ in labels}) >= 40


def test_apply_transform_rejects_mismatched_input() -> None:
    from icefloe.exceptions import IcefloeError

    with pytest.raises(IcefloeError, match="year"):
        _native.apply_transform("year", "string", pa.array(["x"]))
    with pytest.raises(IcefloeError):
        _native.apply_transform("bucket[4]", "int", pa.array(["not a number"]))
