"""The assignments of `icefloe.spark.update` and `merge`'s update clauses, resolved as Spark's
`UPDATE` / `MERGE INTO` resolve theirs (Spark's AssignmentUtils): a key is a top-level column
or a dotted path of struct fields (`"s.a"`, `"s.inner.x"`; a part holding a dot or a
backtick quoted in backticks, "s.`x.y`"), names matched ignoring case unless
`spark.sql.caseSensitive`. A struct with assigned fields is rebuilt with its other fields
kept (`F.struct` of the old fields, no Python per row); a NULL struct becomes a struct of
NULLs holding the assigned fields, as Java stores it (`Column.withField` would keep it NULL).
Java refuses, and so does icefloe before anything is written: a field inside an array or a
map element, a path that is no field, two assignments to one field, and a column (or field)
assigned together with a field inside it. Each assigned value goes through the store
assignment of `_store_assign` (`check_assignable`, `stored`) at its own path."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icefloe._identifiers import display
from icefloe._identifiers import multipart as _parts
from icefloe.exceptions import ValidationError
from icefloe.spark._names import quoted, session_case_sensitive
from icefloe.spark._store_assign import check_assignable, stored

if TYPE_CHECKING:
    from icefloe.table import Table

_LEAF = "__icefloe_assigned{}"


@dataclass(frozen=True)
class Assignment:
    key: str  # as given
    path: tuple[str, ...]  # in the table's spelling, the top-level column first
    value: Any
    expected: Any  # the Spark type of the assigned column or field

    @property
    def name(self) -> str:
        return display(self.path)


def table_spark_schema(table: Table) -> Any:
    """The Spark StructType of `table`'s columns, as icefloe's reads give them."""
    from icefloe.spark._arrow import spark_arrow_schema, spark_schema

    columns = tuple(f.name for f in table.schema().fields)
    projection = json.loads(table.scan(selected_fields=columns).projection().to_json())
    return spark_schema(spark_arrow_schema(projection))


def _lookup(fields: list[Any], name: str, cs: bool) -> list[Any]:
    exact = [f for f in fields if f.name == name]
    if cs or exact:
        return exact
    return [f for f in fields if f.name.lower() == name.lower()]


def resolve(
    assignments: Mapping[str, Any], columns: Any, *, what: str, nested: bool = True
) -> list[Assignment]:
    """The assignments of `assignments` (key -> value) against the table's columns
    (`columns`, a Spark StructType), or a ValidationError naming the key. A key that is a
    top-level column's name is that column (so a column named `a.b` is one); otherwise a
    dotted path of struct fields, refused when `nested` is False (a MERGE insert's keys)."""
    from pyspark.sql import types as T

    cs = session_case_sensitive()
    names = [f.name for f in columns.fields]
    out: list[Assignment] = []
    for key, value in assignments.items():
        key = str(key)
        top = _lookup(columns.fields, key, cs)
        if len(top) == 1:
            out.append(Assignment(key, (top[0].name,), value, top[0].dataType))
            continue
        parts = _parts(key)
        if parts is None or len(parts) < 2 or len(_lookup(columns.fields, parts[0], cs)) != 1:
            raise ValidationError(f"cannot {what} column {key!r}: the table has no such column ({names})")
        field = _lookup(columns.fields, parts[0], cs)[0]
        path = [field.name]
        for part in parts[1:]:
            if not isinstance(field.dataType, T.StructType):
                raise ValidationError(
                    f"cannot {what} {key!r}: only fields of structs can be assigned, and "
                    f"{display(tuple(path))!r} is {field.dataType.simpleString()} (as Spark's "
                    "UPDATE / MERGE INTO: a field inside an array or map element cannot be "
                    "assigned; assign the whole column)"
                )
            hits = _lookup(field.dataType.fields, part, cs)
            if len(hits) != 1:
                inner = [f.name for f in field.dataType.fields]
                why = "no field" if not hits else f"{len(hits)} fields"
                raise ValidationError(
                    f"cannot {what} {key!r}: the struct {display(tuple(path))!r} has {why} named "
                    f"{part!r} ({inner})"
                )
            field = hits[0]
            path.append(field.name)
        if not nested:
            raise ValidationError(
                f"cannot {what} {display(tuple(path))!r}: an insert's keys cannot be nested fields "
                f"(as Spark's MERGE INTO); give the whole column {path[0]!r} (a named_struct)"
            )
        out.append(Assignment(key, tuple(path), value, field.dataType))
    _refuse_conflicts(out, cs, what)
    return out


def _refuse_conflicts(assigned: list[Assignment], cs: bool, what: str) -> None:
    def norm(path: tuple[str, ...]) -> tuple[str, ...]:
        return path if cs else tuple(p.lower() for p in path)

    for i, a in enumerate(assigned):
        for b in assigned[i + 1 :]:
            pa, pb = norm(a.path), norm(b.path)
            if pa == pb:
                raise ValidationError(
                    f"cannot {what}: multiple assignments to {a.name!r} ({a.key!r}, {b.key!r})"
                )
            short, long = (a, b) if len(pa) < len(pb) else (b, a)
            if norm(long.path)[: len(short.path)] == norm(short.path):
                raise ValidationError(
                    f"cannot {what}: conflicting assignments to {short.name!r} ({short.key!r} and "
                    f"{long.key!r}): a column or field and a field inside it cannot both be assigned"
                )


class NestedValues:
    """The values of assignments `assigned` over rows whose column `c` holds the value it
    had, as a probe (one select, so every value sees the old row) and then the stored
    columns: `probe_columns` adds one column per nested assignment, `check` refuses a value
    the field cannot store, `column` gives a column's new value."""

    def __init__(self, assigned: list[Assignment], to_column: Callable[[Any], Any]) -> None:
        self.top = {a.path[0]: a.value for a in assigned if len(a.path) == 1}
        self.nested = [a for a in assigned if len(a.path) > 1]
        self._to_column = to_column
        self._found: dict[str, Any] = {}

    def probe_columns(self) -> list[Any]:
        return [self._to_column(a.value).alias(_LEAF.format(i)) for i, a in enumerate(self.nested)]

    def check(self, probe_schema: Any, types: Mapping[str, Any]) -> None:
        """Refuses what Spark's store assignment refuses: each of the columns `types` names
        (column -> Spark type) as that type, each nested value at its path."""
        found = {f.name: f.dataType for f in probe_schema.fields}
        for name, expected in types.items():
            check_assignable(name, found[name], expected)
        for i, a in enumerate(self.nested):
            check_assignable(a.name, found[_LEAF.format(i)], a.expected)
        self._found = found

    def column(self, name: str, expected: Any) -> Any:
        """The new value of top-level column `name` (of Spark type `expected`) from the probe."""
        from pyspark.sql import functions as F

        old = F.col(quoted(name))
        fields = [(i, a) for i, a in enumerate(self.nested) if a.path[0] == name]
        if not fields:
            return stored(name, old, self._found[name], expected)
        leaves = {
            a.path[1:]: stored(a.name, F.col(_LEAF.format(i)), self._found[_LEAF.format(i)], a.expected)
            for i, a in fields
        }
        return _rebuilt(old, expected, leaves)


def _rebuilt(old: Any, struct: Any, leaves: dict[tuple[str, ...], Any]) -> Any:
    """The struct `old` (of type `struct`) with the fields at `leaves`' paths replaced: a
    struct of the old fields, so a NULL `old` gives NULL fields beside the assigned ones
    (Java's UPDATE stores such a struct, not NULL)."""
    from pyspark.sql import functions as F

    out = []
    for f in struct.fields:
        own = {p[1:]: v for p, v in leaves.items() if p[0] == f.name}
        if () in own:
            value = own[()]
        elif own:
            value = _rebuilt(old.getField(f.name), f.dataType, own)
        else:
            value = old.getField(f.name)
        out.append(value.alias(f.name))
    return F.struct(*out)
