"""Single-value serialization, murmur3 hash and transform vectors from Iceberg Java.

The inputs are listed here; GoldenVectors.java (compiled and run against the oracle jar)
computes the results, written to golden/single_value_and_transforms.json.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from golden_common import GOLDEN, HERE, JAR, note, write_json

sys.path.insert(0, str(HERE.parent))  # tests/: its support package
from support.java import compile_java


def _h(s: str) -> str:
    return s.encode("utf-8").hex()


SER_VECTORS: list[tuple[str, str]] = (
    [("boolean", v) for v in ("true", "false")]
    + [("int", v) for v in ("0", "1", "-1", "34", "2147483647", "-2147483648")]
    + [("long", v) for v in ("0", "1", "-1", "34", "9223372036854775807", "-9223372036854775808")]
    + [("float", v) for v in ("0.0", "-0.0", "1.5", "-2.25", "NaN", "Infinity", "-Infinity")]
    + [("double", v) for v in ("0.0", "-0.0", "3.14", "-1.0E-300", "NaN", "Infinity", "-Infinity")]
    + [("date", v) for v in ("1970-01-01", "2017-11-16", "1969-12-31", "1900-01-01", "-719162")]
    + [("time", v) for v in ("00:00:00", "22:31:08", "23:59:59.999999")]
    + [
        ("timestamp", v)
        for v in (
            "1970-01-01T00:00:00",
            "2017-11-16T22:31:08",
            "1969-12-31T23:59:59.999999",
            "1900-01-01T00:00:00",
        )
    ]
    + [
        ("timestamptz", v)
        for v in (
            "2017-11-16T22:31:08+00:00",
            "2017-11-16T14:31:08-08:00",
            "1969-12-31T23:59:59.999999+00:00",
        )
    ]
    + [("string", _h(v)) for v in ("", "iceberg", "héllo wörld", "日本語", "😀 emoji", "a\x00b")]
    + [("uuid", v) for v in ("f79c3e09-677c-4bbd-a479-3f349cb785e7", "00000000-0000-0000-0000-000000000000")]
    + [("binary", v) for v in ("", "00010203", "ff")]
    + [("fixed[4]", "00010203")]
    + [("decimal(3, 0)", v) for v in ("0", "-128", "128", "127", "-129", "999")]
    + [("decimal(4, 2)", v) for v in ("14.20", "-14.20", "0.00", "10.65")]
    + [("decimal(9, 2)", v) for v in ("0.00", "1.28", "-1.28", "-0.01", "9999999.99", "-9999999.99")]
    + [
        ("decimal(38, 10)", v)
        for v in (
            "0E-10",
            "1.0000000000",
            "-1.0000000000",
            "9999999999999999999999999999.9999999999",
            "-9999999999999999999999999999.9999999999",
        )
    ]
)


HASH_VECTORS: list[tuple[str, str]] = [
    ("int", "34"),
    ("long", "34"),
    ("date", "2017-11-16"),
    ("time", "22:31:08"),
    ("timestamp", "2017-11-16T22:31:08"),
    ("timestamptz", "2017-11-16T14:31:08-08:00"),
    ("string", _h("iceberg")),
    ("string", _h("日本語")),
    ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("binary", "00010203"),
    ("fixed[4]", "00010203"),
    ("decimal(4, 2)", "14.20"),
    ("decimal(3, 0)", "-128"),
    ("decimal(3, 0)", "128"),
    ("int", "-1"),
    ("long", "-1"),
]

TEMPORAL_VALUES = {
    "date": ["2017-11-16", "1970-01-01", "1969-12-31", "1969-01-01", "1900-02-28", "2000-02-29"],
    "timestamp": [
        "2017-11-16T22:31:08",
        "1970-01-01T00:00:00",
        "1969-12-31T23:59:59.999999",
        "1969-12-31T23:00:00",
        "1900-01-01T00:00:00",
        "-1",
    ],
    "timestamptz": [
        "2017-11-16T22:31:08+00:00",
        "2017-11-16T23:31:08+01:00",
        "1969-12-31T23:59:59.999999+00:00",
    ],
}


def transform_vectors() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for t, v in HASH_VECTORS:
        out.append(("bucket[16]", t, v))
        out.append(("bucket[1000]", t, v))
    for v in ("iceberg", "ice", "", "日本語テキスト", "😀😀😀😀😀", "aé😀bc"):
        out.append(("truncate[4]", "string", _h(v)))
    out.append(("truncate[16]", "string", _h("abcdefghijklmnopqrstuvwxyz")))
    for t in ("int", "long"):
        for v in ("0", "1", "9", "10", "-1", "-10", "-11", "123"):
            out.append(("truncate[10]", t, v))
    for v in ("10.65", "-10.65", "0.00", "0.49"):
        out.append(("truncate[50]", "decimal(4, 2)", v))
    out.append(("truncate[4]", "binary", "0001020304"))
    for t, vals in TEMPORAL_VALUES.items():
        for v in vals:
            for tr in ("year", "month", "day") + (("hour",) if t != "date" else ()):
                out.append((tr, t, v))
    # identity: mostly for the partition-path human strings
    ident = [
        ("string", _h("a b/c=d")),
        ("int", "-5"),
        ("long", "5"),
        ("date", "1969-12-31"),
        ("timestamp", "2017-11-16T22:31:08.000001"),
        ("timestamptz", "2017-11-16T22:31:08+00:00"),
        ("boolean", "true"),
        ("decimal(9, 2)", "-1.28"),
        ("binary", "00010203"),
        ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ]
    out += [("identity", t, v) for t, v in ident]
    return out


def run_vectors(workdir: Path) -> None:
    classes = compile_java(HERE / "GoldenVectors.java", str(JAR), cache=workdir / "classes")
    requests: list[tuple[str, str, str]] = [("ser", t, v) for t, v in SER_VECTORS]
    requests += [("hash", t, v) for t, v in HASH_VECTORS]
    requests += transform_vectors()
    stdin = "".join(f"{op}\t{t}\t{v}\n" for op, t, v in requests)
    res = subprocess.run(
        ["java", "-cp", f"{JAR}{os.pathsep}{classes}", "GoldenVectors"],
        input=stdin.encode("utf-8"),
        capture_output=True,
        check=True,
    )
    lines = res.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(requests), (len(lines), len(requests))

    def show(t: str, v: str) -> str:
        # human-readable input (strings are passed to Java as hex)
        if t == "string":
            return bytes.fromhex(v).decode("utf-8")
        return v

    ser, hashes, transforms = [], [], []
    for (op, t, v), line in zip(requests, lines):
        parts = line.split("\t")
        if parts[0] != "ok":
            raise RuntimeError(f"Java failed on {op} {t} {v!r}: {parts[1:]}")
        if op == "ser":
            ser.append({"type": t, "value": show(t, v), "bytes_hex": parts[1]})
        elif op == "hash":
            hashes.append({"type": t, "value": show(t, v), "murmur3_32": int(parts[1])})
        else:
            transforms.append(
                {
                    "transform": op,
                    "source_type": t,
                    "value": show(t, v),
                    "result": parts[1],
                    "result_hex": parts[2],
                    "human_string": parts[3],
                    "result_type": parts[4],
                }
            )
    doc = {
        "generated_by": "tests/data/GoldenVectors.java via generate_golden.py (Iceberg Java 1.10.2)",
        "value_encoding": (
            "value is the input in text form: numbers as text; date/time/timestamp as ISO text (Iceberg "
            "Literal parsing) or, when an integer, days / microseconds; timestamptz with an offset; "
            "binary and fixed as hex; strings as text; decimals as text at the type's scale"
        ),
        "single_value": ser,
        "murmur3_hash": hashes,
        "transforms": transforms,
        "notes": {
            "single_value": "org.apache.iceberg.types.Conversions.toByteBuffer(type, value), as hex",
            "murmur3_hash": "org.apache.iceberg.util.BucketUtil.hash(value) (signed 32-bit)",
            "transforms": (
                "Transforms.fromString(transform).bind(type).apply(value); result as text (days for day, "
                "months/years/hours since epoch, binary results as hex), result_hex = Conversions."
                "toByteBuffer(result type, result), human_string = transform.toHumanString(result type, "
                "result) which is the partition path form"
            ),
        },
    }
    write_json(GOLDEN / "single_value_and_transforms.json", doc)
    note(
        "single_value_and_transforms.json",
        f"{len(ser)} single-value serialization vectors (`Conversions.toByteBuffer`), {len(hashes)} murmur3 "
        f"hashes (`BucketUtil.hash`, incl. the spec's bucket test values), {len(transforms)} transform "
        "results (`Transforms.fromString(t).bind(type).apply(v)`: bucket[16], bucket[1000], truncate[4]/[16] "
        "on strings incl. non-ASCII and surrogate pairs, truncate[10] on int/long incl. negatives, "
        "truncate[50] on decimal, truncate[4] on binary, year/month/day/hour on dates and timestamps "
        "before and after 1970, identity) with result bytes and the human (partition path) string. "
        "Computed by `GoldenVectors.java` run against the oracle jar.",
    )
