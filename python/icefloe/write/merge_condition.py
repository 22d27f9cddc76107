"""What a MERGE's `on` condition says about the target alone: its conjuncts over the target
only (`target.region = 'eu'` in `"target.region = 'eu' AND target.id = source.id"`), as a
row filter over the table's columns, and the conflict-detection filter of the commit.

Iceberg Java's MERGE (`SparkPositionDeltaWrite` / `SparkCopyOnWriteOperation`) validates a
commit that lost the race against its conflict-detection filter: the filter Spark pushed down
to the target scan, i.e. the ON clause's conjuncts that name only target columns. Only
concurrent data and delete files that may hold rows matching it (by partition and column
stats) conflict; without such conjuncts the whole table is the scope. icefloe does the same
and, for a merge-on-read merge whose source keys are known (in process), narrows the scope to
them as well: `In(key, source keys)` for up to `CONFLICT_KEYS_MAX` distinct keys (that merge
writes rows of those keys and position deletes of rows of those keys, nothing else; a
copy-on-write merge rewrites whole files, so it keeps the conjuncts' scope, as Java). A clause
`when_not_matched_by_source_*` acts on every target row, so it keeps the whole table.

Conjuncts that icefloe's row-filter parser does not take (Spark functions, comparisons of
two columns) are left out of the filter, which only widens it: never a missed conflict.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import struct
import zoneinfo
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icefloe import _native
from icefloe.exceptions import IcefloeError
from icefloe.expressions import AlwaysFalse, AlwaysTrue, And, BooleanExpression, In, IsNaN, Or, from_json
from icefloe.types import FloatType, TimestamptzNanoType, TimestamptzType

if TYPE_CHECKING:
    from icefloe.schema import Schema

# Source keys up to this many (per join column) narrow the conflict scope with an IN filter.
CONFLICT_KEYS_MAX = 2_000

_WORD = re.compile(r"[A-Za-z_]\w*")
_NAN = object()


def split_conjuncts(condition: str) -> list[str]:
    """The top-level AND-ed parts of a SQL condition (quotes, backticks, parentheses,
    `CASE ... END` and `BETWEEN x AND y` respected; a part wholly in parentheses is split in
    turn). AND binds tighter than OR: a condition with an OR at its top level is one part
    (`a AND b OR c` is `(a AND b) OR c`)."""
    parts: list[str] = []
    depth = 0
    case_depth = 0
    start = 0
    i = 0
    between = False
    text = condition
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == ch:
                    if j + 1 < n and text[j + 1] == ch:  # doubled quote
                        j += 2
                        continue
                    break
                if text[j] == "\\" and ch != "`":
                    j += 1
                j += 1
            i = j + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and (ch.isalpha() or ch == "_") and (i == 0 or not _is_word_char(text[i - 1])):
            m = _WORD.match(text, i)
            assert m is not None
            word = m.group(0).lower()
            if word == "case":
                case_depth += 1
            elif word == "end" and case_depth:
                case_depth -= 1
            elif case_depth:
                pass  # inside CASE ... END: its ANDs and ORs are its own
            elif word == "or":
                return [condition.strip()] if condition.strip() else []
            elif word == "between":
                between = True
            elif word == "and":
                if between:
                    between = False
                else:
                    parts.append(text[start:i])
                    start = m.end()
            i = m.end()
            continue
        i += 1
    parts.append(text[start:])
    out: list[str] = []
    for p in (p.strip() for p in parts):
        if not p:
            continue
        inner = _unwrap(p)
        if inner is not None:
            out.extend(split_conjuncts(inner))
        else:
            out.append(p)
    return out


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_.`"


def _unwrap(part: str) -> str | None:
    """The inside of `( ... )` when the parentheses enclose the whole part."""
    if not (part.startswith("(") and part.endswith(")")):
        return None
    depth = 0
    quote = ""
    for i, ch in enumerate(part):
        if quote:
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"`":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and i != len(part) - 1:
                return None
    return part[1:-1]


def target_only_filter(
    conjunct: str, schema: Schema, target_alias: str, source_alias: str, time_zone: str | None = None
) -> BooleanExpression | None:
    """The conjunct as a row filter over the table's columns when it names target columns
    only (`target.region = 'eu'` -> `region = 'eu'`) and icefloe's parser takes it; else None.

    `time_zone`: the Spark session's (`spark.sql.session.timeZone`) when Spark evaluates the
    condition, whose reading the filter must then keep exactly (a merge takes the target rows
    it selects as the ones that can match). Spark casts a zone-less string compared with a
    `timestamptz` column in that zone, where icefloe's filters read it as UTC: such strings
    get the zone's offset for their date, and a conjunct whose string or zone cannot be read
    so is left out (None). Spark compares a `float` column with a number as doubles
    (`f = 0.1` is false for the float 0.1), icefloe as floats: a conjunct with a number no
    float holds exactly is left out."""
    try:
        parsed = json.loads(_native.parse_filter(conjunct))
    except IcefloeError:
        return None
    prefix = target_alias.lower() + "."
    terms: list[str] = []

    def rename(node: Any) -> bool:
        if not isinstance(node, dict):
            return True
        if "term" in node:
            term = node["term"]
            if not isinstance(term, str) or not term.lower().startswith(prefix):
                return False
            name = term[len(prefix) :].replace("`", "")
            try:
                field = schema.find_field(name, case_sensitive=False)
            except IcefloeError:
                return False
            exact = schema.find_column_name(field.field_id)
            if exact is None:
                return False
            node["term"] = exact
            terms.append(exact)
            if time_zone is not None and isinstance(field.field_type, (TimestamptzType, TimestamptzNanoType)):
                return _in_session_zone(node, time_zone)
            if time_zone is not None and isinstance(field.field_type, FloatType):
                return _float_exact(node)
        return all(rename(node[k]) for k in ("left", "right", "child") if k in node)

    if source_alias.lower() == target_alias.lower() or not rename(parsed) or not terms:
        return None
    expr = from_json(parsed)
    try:
        _native.bind_filter(expr.to_json(), schema.to_json())
    except IcefloeError:
        return None
    return expr


def _float_exact(node: dict[str, Any]) -> bool:
    """Whether every number of a predicate on a float column is a float exactly, so that
    comparing as floats (icefloe) and as doubles (Spark) agree."""
    values = node.get("values", [node["value"]] if "value" in node else [])
    for v in values:
        if isinstance(v, dict) and set(v) == {"decimal"}:
            try:
                exact = decimal.Decimal(v["decimal"])
            except decimal.InvalidOperation:
                return False
            if not exact.is_finite() or exact != decimal.Decimal(_as_float32(float(exact))):
                return False
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            if math.isfinite(v) and decimal.Decimal(v) != decimal.Decimal(_as_float32(float(v))):
                return False
        else:
            return False
    return True


def _as_float32(v: float) -> float:
    try:
        return float(struct.unpack("<f", struct.pack("<f", v))[0])
    except OverflowError:
        return math.inf


# A timestamp string as Spark casts it: date, optional time, optional zone (Z, +HH[:MM]).
_TS = re.compile(
    r"^\s*(\d{4}-\d{2}-\d{2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*"
    r"(Z|[+-]\d{2}(?::?\d{2})?)?\s*$"
)
_OFFSET_ZONE = re.compile(r"^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$")


def _zone(name: str) -> dt.tzinfo | None:
    """A Spark session time zone: a region id (`America/Los_Angeles`), `UTC`/`Z`, or an
    offset (`+05:00`, `UTC+8`); None when Python cannot read it."""
    if name.upper() in ("UTC", "Z", "GMT", "UT"):
        return dt.timezone.utc
    m = _OFFSET_ZONE.match(name)
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return dt.timezone(sign * dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0)))
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


def _zoned_timestamp(text: str, zone: dt.tzinfo) -> str | None:
    """`text` with the offset `zone` has at that wall time (Java's `ZonedDateTime.of`: the
    earlier offset in an overlap, the offset before a gap), or as is when it names a zone;
    None when it is not a timestamp string or the offset is not whole minutes."""
    m = _TS.match(text)
    if m is None:
        return None
    day, hour, minute, second, fraction, offset = m.groups()
    if offset is not None:
        return text
    try:
        wall = dt.datetime.fromisoformat(day).replace(
            hour=int(hour or 0), minute=int(minute or 0), second=int(second or 0)
        )
    except ValueError:
        return None
    delta = wall.replace(tzinfo=zone).utcoffset()
    if delta is None or delta.seconds % 60 or delta.microseconds:
        return None
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hh, mm = divmod(abs(minutes), 60)
    frac = f".{fraction}" if fraction else ""
    return f"{wall.isoformat()}{frac}{sign}{hh:02d}:{mm:02d}"


def _in_session_zone(node: dict[str, Any], time_zone: str) -> bool:
    """Rewrites a predicate's zone-less timestamp strings into `time_zone`; False when one
    cannot be (the conjunct is then not used)."""
    zone = _zone(time_zone)

    def convert(v: Any) -> Any:
        if not isinstance(v, str):
            return v
        if zone is None:
            raise ValueError(time_zone)
        out = _zoned_timestamp(v, zone)
        if out is None:
            raise ValueError(v)
        return out

    try:
        if "value" in node:
            node["value"] = convert(node["value"])
        if "values" in node:
            node["values"] = [convert(v) for v in node["values"]]
    except ValueError:
        return False
    return True


_NAME = r"(?:`[^`]+`|[A-Za-z_]\w*)"
_EQUI = re.compile(rf"^\s*({_NAME})\s*\.\s*({_NAME})\s*=\s*({_NAME})\s*\.\s*({_NAME})\s*$")


def equi_key_pairs(on: str, target_alias: str, source_alias: str) -> list[tuple[str, str]]:
    """The (target column, source column) of each top-level conjunct of `on` that is a plain
    equality of a target column and a source column (`target.id = source.id`, either way
    round, backticks allowed): the join keys every matched pair of rows agrees on. Null-safe
    `<=>` and expressions over the columns are not keys."""
    ta, sa = target_alias.lower(), source_alias.lower()
    if ta == sa:
        return []
    pairs: list[tuple[str, str]] = []
    for part in split_conjuncts(on):
        m = _EQUI.match(part)
        if m is None:
            continue
        a1, c1, a2, c2 = (g.strip("`") for g in m.groups())
        if a1.lower() == ta and a2.lower() == sa:
            pairs.append((c1, c2))
        elif a1.lower() == sa and a2.lower() == ta:
            pairs.append((c2, c1))
    return pairs


def keys_only_pairs(
    on: str, schema: Schema, target_alias: str, source_alias: str, time_zone: str | None = None
) -> list[tuple[str, str]]:
    """The equi-key pairs of `on` when they are all it says about the source: every other
    conjunct names target columns only. Then a source row matches some target row exactly
    when its keys equal the keys of a target row that matched. Empty otherwise."""
    pairs = equi_key_pairs(on, target_alias, source_alias)
    if not pairs:
        return []
    for part in split_conjuncts(on):
        if equi_key_pairs(part, target_alias, source_alias):
            continue
        if target_only_filter(part, schema, target_alias, source_alias, time_zone) is None:
            return []
    return pairs


def target_filter(
    on: str, schema: Schema, target_alias: str, source_alias: str, time_zone: str | None = None
) -> BooleanExpression | None:
    """The AND of the target-only conjuncts of `on` (None when there are none)."""
    found = [
        f
        for f in (
            target_only_filter(c, schema, target_alias, source_alias, time_zone) for c in split_conjuncts(on)
        )
        if f is not None
    ]
    return _and_all(found)


def key_filter(schema: Schema, column: str, values: Iterable[Any]) -> BooleanExpression | None:
    """The rows whose `column` equals one of `values` (`matching_keys`) for at most
    `CONFLICT_KEYS_MAX` distinct non-null values that bind to the column (AlwaysFalse for
    none); None when there are more, or they do not bind."""
    distinct: list[Any] = []
    seen: set[Any] = set()
    for v in values:
        if v is None:
            continue
        key = _NAN if _is_nan(v) else v  # every NaN one key (a set keeps each NaN object)
        try:
            if key in seen:
                continue
            seen.add(key)
        except TypeError:
            return None
        distinct.append(v)
        if len(distinct) > CONFLICT_KEYS_MAX:
            return None
    try:
        expr = matching_keys(column, distinct)
        _native.bind_filter(expr.to_json(), schema.to_json())
    except IcefloeError:
        return None
    return expr


def matching_keys(column: str, values: Iterable[Any]) -> BooleanExpression:
    """A row filter selecting the rows whose `column` equals one of `values` (non-null) as
    Spark's `=` compares join keys (NormalizeFloatingNumbers): a NaN key matches NaN rows
    (`IsNaN`: NaN is no literal) and a zero of either sign matches both (both literals, as
    file bounds order -0.0 below 0.0). AlwaysFalse for no values."""
    literals: list[Any] = []
    nan = zero = False
    for v in values:
        if _is_nan(v):
            nan = True
        elif isinstance(v, float) and v == 0.0:
            zero = True
        else:
            literals.append(v)
    if zero:
        literals += [0.0, -0.0]
    expr: BooleanExpression | None = In(column, literals) if literals else None
    if nan:
        expr = IsNaN(column) if expr is None else Or(expr, IsNaN(column))
    return AlwaysFalse() if expr is None else expr


def join_key(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """A join column as Spark compares join keys (NormalizeFloatingNumbers): a float / double
    -0.0 becomes 0.0 and every NaN one NaN, so that Arrow's join, which matches floats by
    their bits, matches -0.0 with 0.0 and NaN with NaN. Other types as they are."""
    t = column.type
    if not (pa.types.is_float32(t) or pa.types.is_float64(t)):
        return column
    # -0.0 + 0.0 is 0.0 (IEEE 754, rounding to nearest); NaN payloads differ, so one NaN.
    return pc.if_else(pc.is_nan(column), pa.scalar(math.nan, t), pc.add(column, pa.scalar(0.0, t)))


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def conflict_filter_json(
    on: str,
    schema: Schema,
    target_alias: str,
    source_alias: str,
    kinds: set[str],
    source_keys: Sequence[tuple[str, Iterable[Any]]] = (),
    time_zone: str | None = None,
) -> str:
    """The conflict-detection filter (unbound JSON) of a MERGE with clauses of `kinds`: the
    target-only conjuncts of `on`, AND `In(key, values)` for each (target column, source
    values) of `source_keys` small enough; the whole table when there is neither, or when a
    `not matched by source` clause may act on any target row."""
    if "not_matched_by_source" in kinds:
        return AlwaysTrue().to_json()
    parts: list[BooleanExpression] = []
    target = target_filter(on, schema, target_alias, source_alias, time_zone)
    if target is not None:
        parts.append(target)
    for column, values in source_keys:
        k = key_filter(schema, column, values)
        if k is not None:
            parts.append(k)
    return (_and_all(parts) or AlwaysTrue()).to_json()


def _and_all(parts: Sequence[BooleanExpression]) -> BooleanExpression | None:
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = And(out, p)
    return out
