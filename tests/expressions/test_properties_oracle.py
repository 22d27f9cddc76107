"""Property tests: icefloe against Iceberg Java 1.12 (the oracle) on random sets of values.

Each hypothesis example is a set (values, rows, predicates, files) evaluated by Iceberg Java in
one request to tests/java/PropertyOracle.java (one JVM for the module, see tests/support/java_oracle.py),
so shrinking works and an example costs milliseconds:

- partition transforms over every source type (`_native.apply_transform`);
- single values: the binary form (Java `Conversions`) and the JSON form (Java
  `SingleValueParser`), both directions (`_native.single_value_to_bytes` / `_from_bytes`);
- row filters: Java `Evaluator` vs icefloe's `filter_mask` on random rows;
- file metrics: Java `InclusiveMetricsEvaluator` / `StrictMetricsEvaluator` vs icefloe's
  `eval_inclusive_metrics` / `eval_strict_metrics` on random counts and bounds;
- partition pruning: Java `Projections.inclusive/strict(spec)` + `Evaluator` on the partition
  tuples of random rows vs icefloe's `partitions_matching`.

Values include NaN, +-0.0, infinities, nulls, the extremes of each integer type, decimals at
their precision, empty and non-BMP strings, pre-1970 dates and instants on and off unit
boundaries. Examples are derandomized and no database is kept, so CI runs the same examples.

Documented differences (Java is the outlier or the semantics differ on purpose):
- Java's `SingleValueParser.toJson` writes a NaN or infinite float/double as the string "NaN"
  / "Infinity" / "-Infinity" and its `fromJson` rejects those strings (the spec's form is a
  JSON number, which has none of them): icefloe writes the same text, and these values are
  compared in the binary form only.
- A float's JSON text is its shortest form, read as a float32 (Java writes `Float.toString`,
  e.g. 3.3554472E7, icefloe 33554470.0: the same float32).
- icefloe's DataFile holds an empty count map and an absent one alike (not recorded), where
  Java's StrictMetricsEvaluator takes an empty null-count map as "recorded: no nulls"; the
  helper gives Java no map when a file's map is empty.
- Java's row `Evaluator` is not SQL: it compares a null as the smallest value (`x < -2^31` and
  `x != 5` are true for a null x) and `not` inverts a plain boolean; icefloe's `filter_mask`
  follows SQL (a comparison with a null is unknown: the row is not selected), as Spark does
  when it filters Iceberg rows. A row with a null in a column that a comparison (anything but
  is-null / not-null) names is therefore not compared; nulls are still compared through
  is-null / not-null, and in the metrics and projection tests.
- Java 1.12 orders -0.0 below 0.0 in its row `Evaluator` and its metrics evaluators, so it
  finds no row of -0.0 for `x = 0.0` or `x >= 0.0` and prunes a file of -0.0 for them; rows
  compare the two zeros equal in SQL and Spark, and icefloe's row filter and pruning follow
  the rows. Where a zero is compared, Java is asked the same case with every -0.0 made 0.0
  (where the two orders agree), and icefloe's pruning must keep what that answer keeps.
- Java 1.12 orders UUIDs as two signed longs (`UUID.compareTo`, its `Comparators` have no
  UUID order of their own), so `ff..ff < 00..00` in its evaluators and metrics; icefloe orders
  them as unsigned bytes, which is the order of Parquet's UUID statistics, of the spec's
  big-endian byte form, and of Spark, which reads a UUID as its lowercase string. The
  expression tests draw UUIDs whose two orders agree; `test_uuid_order_differs_from_java`
  pins the difference.
"""

from __future__ import annotations

import decimal
import json
import math
import re
import struct
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from icefloe import _native
from support.java import java_core_helper
from support.java_oracle import CTX, JavaOracle, arrow_array, arrow_codec, codec, decimal_scale

pytestmark = pytest.mark.interop

BASE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def examples(n: int) -> settings:
    """The module's profile with `n` examples."""
    return settings(BASE, max_examples=n)


I32 = (-(2**31), 2**31 - 1)
I64 = (-(2**63), 2**63 - 1)
DAY_US = 86_400_000_000
HOUR_US = 3_600_000_000
DAYS = (-719_162, 2_932_896)  # years 0001..9999
US = (DAYS[0] * DAY_US, DAYS[1] * DAY_US)
NS = (-(9 * 10**18), 9 * 10**18)

TYPES = [
    "boolean",
    "int",
    "long",
    "float",
    "double",
    "date",
    "time",
    "timestamp",
    "timestamptz",
    "timestamp_ns",
    "timestamptz_ns",
    "string",
    "binary",
    "fixed[4]",
    "uuid",
    "decimal(9, 2)",
    "decimal(18, 0)",
    "decimal(38, 10)",
    "decimal(4, 4)",
]

TEMPORAL = ["year", "month", "day", "hour"]
TRANSFORMS: dict[str, list[str]] = {
    "boolean": ["identity", "void"],
    "int": ["identity", "void", "bucket[16]", "bucket[7]", "truncate[10]", "truncate[1]"],
    "long": ["identity", "bucket[1000]", "truncate[128]", "void"],
    "float": ["identity", "void"],
    "double": ["identity", "void"],
    "date": ["identity", "bucket[16]", "year", "month", "day", "void"],
    "time": ["identity", "bucket[16]", "void"],
    "timestamp": ["identity", "bucket[16]", *TEMPORAL],
    "timestamptz": ["identity", "bucket[16]", *TEMPORAL],
    "timestamp_ns": ["identity", "bucket[16]", *TEMPORAL],
    "timestamptz_ns": ["identity", "bucket[16]", *TEMPORAL, "void"],
    "string": ["identity", "bucket[16]", "truncate[1]", "truncate[3]", "void"],
    "binary": ["identity", "bucket[16]", "truncate[3]"],
    "fixed[4]": ["identity", "bucket[16]"],
    "uuid": ["identity", "bucket[16]", "void"],
    "decimal(9, 2)": ["identity", "bucket[16]", "truncate[50]", "truncate[3]"],
    "decimal(18, 0)": ["identity", "bucket[16]", "truncate[10]"],
    "decimal(38, 10)": ["identity", "bucket[16]", "truncate[3]", "void"],
    "decimal(4, 4)": ["identity", "bucket[2]", "truncate[7]"],
}


def _name(ty: str) -> str:
    return "c_" + re.sub(r"[^a-z0-9]+", "_", ty).strip("_")


SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [{"id": i + 1, "name": _name(t), "required": False, "type": t} for i, t in enumerate(TYPES)],
}
SCHEMA_JSON = json.dumps(SCHEMA)
FIELD_ID = {t: i + 1 for i, t in enumerate(TYPES)}
ARROW_SCHEMA = _native.schema_to_arrow(SCHEMA_JSON)
ARROW = {t: ARROW_SCHEMA.field(i).type for i, t in enumerate(TYPES)}


# ---- values -------------------------------------------------------------------------------


def _instants(lo: int, hi: int, unit: int) -> st.SearchStrategy[int]:
    """Instants in `unit` per microsecond: edges around 1970 and unit boundaries, whole days
    and hours before and after 1970 (on a boundary, one off), anywhere in range."""
    day, hour = DAY_US * unit, HOUR_US * unit
    edges = [0, -1, 1, -day, -day - 1, -day + 1, -hour, -hour - 1, hour, day - 1, lo, hi]
    edges += [-31_536_000_000_000 * unit, -31_536_000_000_000 * unit - 1, -2_678_400_000_000 * unit - 1]
    return st.one_of(
        st.sampled_from(edges),
        st.builds(lambda d, off: d * day + off, st.integers(-40_000, 40_000), st.sampled_from([0, -1, 1])),
        st.builds(lambda h, off: h * hour + off, st.integers(-500_000, 500_000), st.sampled_from([0, -1, 1])),
        st.integers(lo, hi),
    )


def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    return st.one_of(
        st.sampled_from([lo, hi, 0, -1, 1, lo + 1, hi - 1]), st.integers(-5, 5), st.integers(lo, hi)
    )


def _decimals(ty: str) -> st.SearchStrategy[decimal.Decimal]:
    precision = int(ty.split("(")[1].split(",")[0])
    scale = decimal_scale(ty)
    m = 10**precision - 1
    return _ints(-m, m).map(lambda u: decimal.Decimal(u).scaleb(-scale, context=CTX))


TEXT = st.one_of(
    st.sampled_from(["", "a", "ab", "abc", "abcd", "é", "😀", "a😀", "\U00010000", "\U0010ffff", "日本語"]),
    st.text(st.characters(codec="utf-8"), max_size=6),
    st.text(st.sampled_from(["a", "b", "é", "😀", "\U00010000"]), max_size=5),
)


def _same_order_uuid(b: bytes) -> bytes:
    """A UUID whose order is the same unsigned (icefloe, Parquet, Spark's strings) and as
    two signed longs (Java 1.12's `UUID.compareTo`): bytes 0 and 8 below 0x80."""
    return bytes([b[0] & 0x7F, *b[1:8], b[8] & 0x7F, *b[9:]])


def values(ty: str, finite: bool = False, ordered: bool = False) -> st.SearchStrategy[Any]:
    """Non-null values of `ty`; `finite`: no NaN or infinity (predicate literals); `ordered`:
    values that are compared (see `_same_order_uuid`)."""
    if ty == "boolean":
        return st.booleans()
    if ty == "int":
        return _ints(*I32)
    if ty == "long":
        return _ints(*I64)
    if ty in ("float", "double"):
        width = 32 if ty == "float" else 64
        edges = [0.0, -0.0, 1.0, -1.0, 0.5]
        if not finite:
            edges += [math.nan, math.inf, -math.inf]
        return st.one_of(
            st.sampled_from(edges),
            st.floats(width=width, allow_nan=not finite, allow_infinity=not finite),
        )
    if ty == "date":
        return st.one_of(st.sampled_from([0, -1, 1, -365, -366, -31, -32, *DAYS]), st.integers(*DAYS))
    if ty == "time":
        return st.one_of(st.sampled_from([0, 1, DAY_US - 1, HOUR_US]), st.integers(0, DAY_US - 1))
    if ty in ("timestamp", "timestamptz"):
        return _instants(*US, unit=1)
    if ty.endswith("_ns"):
        return _instants(*NS, unit=1000)
    if ty == "string":
        return TEXT
    if ty == "binary":
        return st.one_of(st.sampled_from([b"", b"\x00", b"\xff"]), st.binary(max_size=8))
    if ty == "fixed[4]":
        return st.one_of(st.sampled_from([bytes(4), b"\xff" * 4]), st.binary(min_size=4, max_size=4))
    if ty == "uuid":
        uuids = st.one_of(st.sampled_from([bytes(16), b"\xff" * 16]), st.uuids().map(lambda u: u.bytes))
        return uuids.map(_same_order_uuid) if ordered else uuids
    return _decimals(ty)


def nullable(ty: str, ordered: bool = False) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), values(ty, ordered=ordered))


def _f32(v: float) -> float:
    return float(struct.unpack(">f", struct.pack(">f", v))[0])


def _same_float(a: Any, b: Any) -> bool:
    return struct.pack(">d", a) == struct.pack(">d", b) or (math.isnan(a) and math.isnan(b))


@pytest.fixture(scope="module")
def java() -> Iterator[JavaOracle]:
    oracle = JavaOracle(java_core_helper("PropertyOracle"))
    yield oracle
    oracle.close()


# ---- partition transforms -----------------------------------------------------------------

TRANSFORM_CASES = [(ty, t) for ty in TYPES for t in TRANSFORMS[ty]]


@st.composite
def transform_cases(draw: st.DrawFn) -> tuple[str, str, list[Any]]:
    ty, t = draw(st.sampled_from(TRANSFORM_CASES))
    return ty, t, draw(st.lists(nullable(ty), max_size=200))


@examples(150)
@given(case=transform_cases())
# An identity of uuids is uuids (Arrow: 16 fixed bytes), which Java's helper writes as text.
@example(case=("uuid", "identity", [bytes(16), b"\xff" * 16, None]))
def test_transforms_match_java(java: JavaOracle, case: tuple[str, str, list[Any]]) -> None:
    ty, transform, vals = case
    arr = arrow_array(ty, vals, ARROW[ty])
    result_type = "uuid" if (ty, transform) == ("uuid", "identity") else None
    ours = arrow_codec(_native.apply_transform(transform, ty, arr), result_type)
    theirs = java.ask({"cmd": "transform", "items": [[ty, transform, v] for v in arrow_codec(arr, ty)]})
    bad = [(v, o, j) for v, o, j in zip(vals, ours, theirs, strict=True) if o != j]
    assert not bad, f"{ty} {transform}: {len(bad)} differ (value, icefloe, Java), first {bad[:5]}"


def test_transform_cases_cover_every_type() -> None:
    assert {ty for ty, _ in TRANSFORM_CASES} == set(TYPES)
    assert {t.split("[")[0] for _, t in TRANSFORM_CASES} >= {
        "identity",
        "bucket",
        "truncate",
        "void",
        *TEMPORAL,
    }


# ---- single values ------------------------------------------------------------------------


@examples(60)
@given(
    items=st.lists(st.sampled_from(TYPES).flatmap(lambda t: st.tuples(st.just(t), values(t))), max_size=100)
)
# Found here: serde_json's default float parser read this double one ulp off (fixed with its
# `float_roundtrip` feature); shortest float texts; infinities.
@example(items=[("double", 1.3410285095116159e56), ("float", 33554472.0), ("float", math.inf)])
def test_single_values_match_java(java: JavaOracle, items: list[tuple[str, Any]]) -> None:
    theirs = java.ask({"cmd": "serde", "items": [[t, codec(t, v)] for t, v in items]})
    ours_json: list[str] = []
    for (ty, v), j in zip(items, theirs, strict=True):
        assert "error" not in j, (ty, v, j)
        raw = bytes.fromhex(j["bytes"])
        text = _native.single_value_from_bytes(ty, raw)  # icefloe reads Java's binary form
        ours_json.append(text)
        if isinstance(v, float) and not math.isfinite(v):
            # Documented: Java writes "NaN" / "Infinity" / "-Infinity" (strings), which no
            # reader takes (Java's included); icefloe writes the same.
            assert text == j["json"], (ty, v, text, j["json"])
            continue
        mine, java_value = json.loads(text), json.loads(j["json"])
        if ty == "float":  # both texts are shortest forms of the same float32
            assert _same_float(_f32(mine), _f32(java_value)), (ty, v, text, j["json"])
        elif ty == "double":
            assert _same_float(mine, java_value), (ty, v, text, j["json"])
        else:
            assert mine == java_value, (ty, v, text, j["json"])
        # icefloe reads Java's JSON form into the same binary form as Java's.
        assert _native.single_value_to_bytes(ty, j["json"]) == raw, (ty, v, j)
    # Java reads icefloe's JSON form (NaN has none) into the same binary form.
    keep = [i for i, (_, v) in enumerate(items) if not (isinstance(v, float) and not math.isfinite(v))]
    back = java.ask({"cmd": "from_json", "items": [[items[i][0], ours_json[i]] for i in keep]})
    for i, b in zip(keep, back, strict=True):
        assert b.get("bytes") == theirs[i]["bytes"], (items[i], ours_json[i], b)


# ---- expressions --------------------------------------------------------------------------

ORDERED = [t for t in TYPES if t != "boolean"]


def _literal_values(ty: str) -> st.SearchStrategy[Any]:
    # A timestamp_ns literal is a long of microseconds on both sides (Java's LongLiteral.to).
    if ty.endswith("_ns"):
        return _instants(NS[0] // 1000, NS[1] // 1000, unit=1)
    return values(ty, finite=True, ordered=True)


def _ice_literal(ty: str, v: Any) -> Any:
    if ty in ("binary", "fixed[4]"):
        return {"binary": v.hex()}
    if ty == "uuid":
        return codec(ty, v)
    if ty.startswith("decimal"):
        return {"decimal": format(v, "f")}
    return v


@st.composite
def predicates(draw: st.DrawFn, types: list[str]) -> dict[str, Any]:
    ty = draw(st.sampled_from(types))
    ops = ["is-null", "not-null", "in", "not-in", "eq", "not-eq"]
    if ty != "boolean":
        ops += ["lt", "lt-eq", "gt", "gt-eq"]
    if ty in ("float", "double"):
        ops += ["is-nan", "not-nan"]
    if ty == "string":
        ops += ["starts-with", "not-starts-with"]
    op = draw(st.sampled_from(ops))
    p: dict[str, Any] = {"type": op, "term": _name(ty), "ty": ty}
    if op in ("in", "not-in"):
        p["values"] = draw(st.lists(_literal_values(ty), min_size=1, max_size=4))
    elif op not in ("is-null", "not-null", "is-nan", "not-nan"):
        p["value"] = draw(_literal_values(ty))
    return p


def expressions(types: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.recursive(
        predicates(types),
        lambda kids: st.one_of(
            st.tuples(st.sampled_from(["and", "or"]), kids, kids).map(
                lambda x: {"type": x[0], "left": x[1], "right": x[2]}
            ),
            kids.map(lambda c: {"type": "not", "child": c}),
        ),
        max_leaves=5,
    )


def _render(e: dict[str, Any], literal: Any) -> dict[str, Any]:
    """The expression with each literal rendered by `literal(ty, value)`."""
    if e["type"] in ("and", "or"):
        return {"type": e["type"], "left": _render(e["left"], literal), "right": _render(e["right"], literal)}
    if e["type"] == "not":
        return {"type": "not", "child": _render(e["child"], literal)}
    out = {"type": e["type"], "term": e["term"]}
    if "values" in e:
        out["values"] = [literal(e["ty"], v) for v in e["values"]]
    if "value" in e:
        out["value"] = literal(e["ty"], e["value"])
    return out


def ice_json(e: dict[str, Any]) -> str:
    return json.dumps(_render(e, _ice_literal))


def java_json(e: dict[str, Any]) -> dict[str, Any]:
    return _render(e, lambda ty, v: str(v) if ty.endswith("_ns") else codec(ty, v))


def _batch(rows: list[tuple[Any, ...]]) -> pa.RecordBatch:
    cols = [arrow_array(t, [r[i] for r in rows], ARROW[t]) for i, t in enumerate(TYPES)]
    return pa.RecordBatch.from_arrays(cols, schema=ARROW_SCHEMA)


def value_terms(e: dict[str, Any]) -> set[str]:
    """Columns named by a predicate other than is-null / not-null: on a null there, Java's
    Evaluator orders the null first (documented at the top)."""
    if e["type"] in ("and", "or"):
        return value_terms(e["left"]) | value_terms(e["right"])
    if e["type"] == "not":
        return value_terms(e["child"])
    return set() if e["type"] in ("is-null", "not-null") else {e["term"]}


def _terms(e: dict[str, Any]) -> set[str]:
    if e["type"] in ("and", "or"):
        return _terms(e["left"]) | _terms(e["right"])
    if e["type"] == "not":
        return _terms(e["child"])
    return {e["term"]}


@st.composite
def filter_cases(draw: st.DrawFn, types: list[str]) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """An expression and rows; the columns it does not name are null (cheap to shrink)."""
    expr = draw(expressions(types))
    used = _terms(expr)
    cols = [nullable(t, ordered=True) if _name(t) in used else st.none() for t in TYPES]
    return expr, draw(st.lists(st.tuples(*cols), max_size=40))


@examples(80)
@given(case=filter_cases(TYPES))
# A float zero against the other zero (rows of -0.0 and 0.0, literal 0.0).
@example(
    case=(
        {"type": "eq", "term": "c_double", "ty": "double", "value": 0.0},
        [tuple(v if t == "double" else None for t in TYPES) for v in (-0.0, 0.0, 1.0)],
    )
)
def test_row_filter_matches_java_evaluator(java: JavaOracle, case: tuple[dict[str, Any], list[Any]]) -> None:
    """Equal to Java's `Evaluator` on every row without a null in a compared column (see the
    module doc). Rows compare a float zero equal to the other zero (SQL, Spark), where Java
    orders -0.0 below 0.0: the rows and literals are given to Java with every -0.0 made 0.0,
    which changes no answer of icefloe's."""
    expr, rows = case
    mask = _native.filter_mask(ice_json(expr), SCHEMA_JSON, _batch(rows))
    ours = [bool(m) for m in mask.to_pylist()]
    zeroless_rows = [tuple(0.0 if _is_zero(t, v) else v for t, v in zip(TYPES, r, strict=True)) for r in rows]
    theirs = java.ask(
        {
            "cmd": "eval",
            "schema": SCHEMA,
            "expr": java_json(_no_negative_zero(expr)),
            "rows": [[codec(t, v) for t, v in zip(TYPES, r, strict=True)] for r in zeroless_rows],
        }
    )
    compared = [TYPES.index(t) for t in TYPES if _name(t) in value_terms(expr)]
    bad = [
        (i, o, j)
        for i, (o, j) in enumerate(zip(ours, theirs, strict=True))
        if o != j and not any(rows[i][c] is None for c in compared)
    ]
    assert not bad, f"{ice_json(expr)}: rows (index, icefloe, Java) {bad[:5]}, first row {rows[bad[0][0]]}"


# ---- file metrics -------------------------------------------------------------------------


def _order(ty: str, v: Any) -> Any:
    if isinstance(v, float):
        return (v, math.copysign(1.0, v))
    if ty == "string":
        return v.encode()
    return v


@st.composite
def metrics_cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """An expression and files with random, consistent metrics for the columns it names
    (value/null/NaN counts and bounds, each sometimes missing)."""
    expr = draw(expressions(TYPES))
    used = [t for t in TYPES if _name(t) in _terms(expr)]
    present = st.sampled_from([True, True, True, False])
    files = []
    for _ in range(draw(st.integers(1, 12))):
        records = draw(st.sampled_from([0, 1, 2, 10]))
        f: dict[str, Any] = {"records": records, "value_counts": {}, "null_counts": {}, "nan_counts": {}}
        f["lower"], f["upper"] = {}, {}
        for ty in used:
            fid = str(FIELD_ID[ty])
            nulls = draw(st.sampled_from(sorted({0, records, records // 2})))
            nans = draw(st.sampled_from(sorted({0, records - nulls}))) if ty in ("float", "double") else 0
            for key, n in (("value_counts", records), ("null_counts", nulls), ("nan_counts", nans)):
                if draw(present) and (key != "nan_counts" or ty in ("float", "double")):
                    f[key][fid] = n
            if records - nulls - nans > 0 and draw(present):
                not_nan = lambda v: not (isinstance(v, float) and math.isnan(v))  # noqa: E731
                bound = values(ty, ordered=True).filter(not_nan)
                lo, hi = sorted([draw(bound), draw(bound)], key=lambda v, t=ty: _order(t, v))
                f["lower"][fid], f["upper"][fid] = codec(ty, lo), codec(ty, hi)
        files.append(f)
    return expr, files


def _descriptor(i: int, f: dict[str, Any], bounds: dict[str, Any]) -> str:
    """icefloe's DataFile descriptor of a file, with the bounds' binary form Java made."""
    return json.dumps(
        {
            "content": "Data",
            "file_path": f"/f{i}.parquet",
            "file_format": "Parquet",
            "partition": [],
            "record_count": f["records"],
            "file_size_in_bytes": 100,
            "column_sizes": {},
            "value_counts": f["value_counts"],
            "null_value_counts": f["null_counts"],
            "nan_value_counts": f["nan_counts"],
            "lower_bounds": {k: list(bytes.fromhex(v)) for k, v in bounds["lower"].items()},
            "upper_bounds": {k: list(bytes.fromhex(v)) for k, v in bounds["upper"].items()},
            "spec_id": 0,
        }  # the optional fields (key_metadata, split_offsets, ...) left out: null
    )


@examples(80)
@given(case=metrics_cases())
# Found here: Java 1.12 prunes `!=` / `not in` on a column whose rows all hold that value.
@example(
    case=(
        {"type": "not-eq", "term": "c_long", "ty": "long", "value": 42},
        [
            {"records": 1, "value_counts": {"3": 1}, "null_counts": {"3": 0}, "nan_counts": {}}
            | {"lower": {"3": "42"}, "upper": {"3": "42"}}
        ],
    )
)
# A float zero: icefloe compares bounds with literals as rows compare (-0.0 = 0.0), Java 1.12
# in its bound order (-0.0 < 0.0), and prunes a file of -0.0 for `>= 0.0`.
@example(
    case=(
        {"type": "gt-eq", "term": "c_double", "ty": "double", "value": 0.0},
        [
            {"records": 2, "value_counts": {"5": 2}, "null_counts": {"5": 0}, "nan_counts": {"5": 0}}
            | {"lower": {"5": codec("double", -0.0)}, "upper": {"5": codec("double", -0.0)}}
        ],
    )
)
def test_metrics_evaluators_match_java(java: JavaOracle, case: tuple[dict[str, Any], list[Any]]) -> None:
    """Equal to Java's evaluators, except where a float zero is compared (a zero literal,
    or a zero bound of a float column): there Java orders -0.0 below 0.0 and rows compare
    them equal. Such a case is checked against Java's answer on the same case with every
    -0.0 made 0.0 (where the two orders agree): icefloe keeps every file that answer keeps
    (inclusive) and proves no file that answer does not (strict)."""
    expr, files = case
    theirs = java.ask({"cmd": "metrics", "schema": SCHEMA, "expr": java_json(expr), "files": files})
    bound = _native.bind_filter(ice_json(expr), SCHEMA_JSON)
    zeroless: list[Any] | None = None
    for i, (f, j) in enumerate(zip(files, theirs, strict=True)):
        desc = _descriptor(i, f, j)
        ours = (_native.eval_inclusive_metrics(desc, bound), _native.eval_strict_metrics(desc, bound))
        if ours == (j["inclusive"], j["strict"]):
            continue
        assert _zero_compared(expr, f), (
            f"{ice_json(expr)} on {f}: icefloe (inclusive, strict) {ours}, Java {j}"
        )
        if zeroless is None:
            zeroless = java.ask(
                {
                    "cmd": "metrics",
                    "schema": SCHEMA,
                    "expr": java_json(_no_negative_zero(expr)),
                    "files": [_file_without_negative_zero(g) for g in files],
                }
            )
        rows = zeroless[i]
        assert ours[0] >= rows["inclusive"] and ours[1] <= rows["strict"], (
            f"{ice_json(expr)} on {f}: icefloe (inclusive, strict) {ours}, rows' order {rows}, Java {j}"
        )


_FLOAT_TYPES = ("float", "double")


def _is_zero(ty: str, v: Any) -> bool:
    return ty in _FLOAT_TYPES and isinstance(v, float) and v == 0.0


def _zero_compared(expr: dict[str, Any], f: dict[str, Any]) -> bool:
    """A float zero among the literals, or a float column's bound of the file that is zero."""

    def literals(e: dict[str, Any]) -> bool:
        if e["type"] in ("and", "or"):
            return literals(e["left"]) or literals(e["right"])
        if e["type"] == "not":
            return literals(e["child"])
        vals = e.get("values", [e["value"]] if "value" in e else [])
        return any(_is_zero(e["ty"], v) for v in vals)

    zero_bounds = [
        _decode_float(ty, f[side][str(FIELD_ID[ty])])
        for ty in _FLOAT_TYPES
        for side in ("lower", "upper")
        if str(FIELD_ID[ty]) in f[side]
    ]
    return literals(expr) or any(v == 0.0 for v in zero_bounds)


def _decode_float(ty: str, hex_text: str) -> float:
    return float(struct.unpack(">f" if ty == "float" else ">d", bytes.fromhex(hex_text))[0])


def _no_negative_zero(e: dict[str, Any]) -> dict[str, Any]:
    if e["type"] in ("and", "or"):
        return {**e, "left": _no_negative_zero(e["left"]), "right": _no_negative_zero(e["right"])}
    if e["type"] == "not":
        return {**e, "child": _no_negative_zero(e["child"])}
    out = dict(e)
    if "value" in e and _is_zero(e["ty"], e["value"]):
        out["value"] = 0.0
    if "values" in e:
        out["values"] = [0.0 if _is_zero(e["ty"], v) else v for v in e["values"]]
    return out


def _file_without_negative_zero(f: dict[str, Any]) -> dict[str, Any]:
    out = {**f, "lower": dict(f["lower"]), "upper": dict(f["upper"])}
    for ty in _FLOAT_TYPES:
        fid = str(FIELD_ID[ty])
        for side in ("lower", "upper"):
            if fid in out[side] and _decode_float(ty, out[side][fid]) == 0.0:
                out[side][fid] = codec(ty, 0.0)
    return out


# ---- partition projection -----------------------------------------------------------------

# No float/double sources: an identity partition of a NaN has no JSON single value.
PARTITION_CASES = [(ty, t) for ty, t in TRANSFORM_CASES if ty not in ("float", "double")]


@st.composite
def projection_cases(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], list[tuple[Any, ...]]]:
    """A spec of 1-3 fields, an expression on their sources, and rows (other columns null)."""
    fields = draw(st.lists(st.sampled_from(PARTITION_CASES), min_size=1, max_size=3, unique=True))
    spec = {
        "spec-id": 0,
        "fields": [
            {"name": f"p{i}", "transform": t, "source-id": FIELD_ID[ty], "field-id": 1000 + i}
            for i, (ty, t) in enumerate(fields)
        ],
    }
    sources = sorted({ty for ty, _ in fields}, key=TYPES.index)
    expr = draw(expressions(sources))
    cols = [nullable(t, ordered=True) if t in sources else st.none() for t in TYPES]
    return spec, expr, draw(st.lists(st.tuples(*cols), min_size=1, max_size=30))


def _one_row(**values: Any) -> list[tuple[Any, ...]]:
    return [tuple(values.get(t) for t in TYPES)]


@examples(80)
@given(case=projection_cases())
# truncate[10] of a decimal(18, 0) at -999..9 is -10^18, 19 digits: Java keeps it.
@example(
    case=(
        {
            "spec-id": 0,
            "fields": [
                {"name": "p0", "transform": "identity", "source-id": 1, "field-id": 1000},
                {"name": "p1", "transform": "truncate[10]", "source-id": 17, "field-id": 1001},
            ],
        },
        {"type": "is-null", "term": "c_boolean", "ty": "boolean"},
        _one_row(**{"decimal(18, 0)": decimal.Decimal("-999999999999999999")}),
    )
)
# day(date) is the date: no pre-1970 widening of its projection (Java's Dates: this != DAY).
@example(
    case=(
        {"spec-id": 0, "fields": [{"name": "p0", "transform": "day", "source-id": 6, "field-id": 1000}]},
        {"type": "eq", "term": "c_date", "ty": "date", "value": -1},
        _one_row(date=0),
    )
)
def test_partition_projection_matches_java(java: JavaOracle, case: tuple[Any, Any, list[Any]]) -> None:
    spec, expr, rows = case
    theirs = java.ask(
        {
            "cmd": "project",
            "schema": SCHEMA,
            "spec": spec,
            "expr": java_json(expr),
            "rows": [[codec(t, v) for t, v in zip(TYPES, r)] for r in rows],
        }
    )
    tuples = ["[" + ",".join("null" if v is None else v for v in j["partition"]) + "]" for j in theirs]
    # Partition values compared by a predicate: a null there is ordered first by Java's
    # Evaluator (documented at the top), unknown to icefloe's StructEvaluator.
    compared = [
        i for i, f in enumerate(spec["fields"]) if _name(TYPES[f["source-id"] - 1]) in value_terms(expr)
    ]
    for strict in (False, True):
        ours = _native.partitions_matching(ice_json(expr), SCHEMA_JSON, json.dumps(spec), tuples, strict)
        key = "strict" if strict else "inclusive"
        bad = [
            (t, o)
            for t, o, j in zip(tuples, ours, theirs, strict=True)
            if o != j[key] and not any(j["partition"][i] is None for i in compared)
        ]
        assert not bad, f"{key} {ice_json(expr)} through {spec['fields']}: icefloe differs on {bad[:5]}"


def test_uuid_order_differs_from_java(java: JavaOracle) -> None:
    """icefloe compares UUIDs as unsigned bytes (Spark's string order); Java 1.12's row
    Evaluator as two signed longs. If Java changes, this test says so."""
    low, high = "1e2feb89-0000-4000-8000-000000000000", "cd613e30-0000-4000-8000-000000000000"
    assert low < high  # Spark's order: a UUID is read as its string
    row = tuple(bytes.fromhex(low.replace("-", "")) if t == "uuid" else None for t in TYPES)
    expr = {"type": "lt", "term": _name("uuid"), "ty": "uuid", "value": bytes.fromhex(high.replace("-", ""))}
    ours = [bool(m) for m in _native.filter_mask(ice_json(expr), SCHEMA_JSON, _batch([row])).to_pylist()]
    theirs = java.ask(
        {
            "cmd": "eval",
            "schema": SCHEMA,
            "expr": java_json(expr),
            "rows": [[codec(t, v) for t, v in zip(TYPES, row)]],
        }
    )
    assert ours == [True] and theirs == [False], (ours, theirs)
