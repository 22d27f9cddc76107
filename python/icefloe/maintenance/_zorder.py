"""The z-order of a sort rewrite (`rewrite_data_files(strategy="sort",
sort_order="zorder(a, b)")`), as Iceberg Java's procedure takes it: `zorder(...)` terms
(several are one z-order of all their columns), never mixed with other sort fields; each
column a top-level column of the table, those that are identity partition sources of the
current spec left out (constant within a partition), at least one left; the options
`var-length-contribution` and `max-output-size` (Java's `SparkZOrderFileRewriteRunner`),
each at least 1. The z-values themselves are computed in Rust (`rust/writer/zorder.rs`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icefloe import _native
from icefloe.exceptions import ValidationError

if TYPE_CHECKING:
    from icefloe.schema import Schema
    from icefloe.table import Table

VAR_LENGTH_CONTRIBUTION_DEFAULT = 8  # Java's ZOrderByteUtils.PRIMITIVE_BUFFER_SIZE
MAX_OUTPUT_SIZE_DEFAULT = 2**31 - 1  # Java's Integer.MAX_VALUE: every byte interleaved


@dataclass(frozen=True)
class ZOrder:
    """A z-order of top-level columns (names, field ids and Iceberg types, in order)."""

    columns: tuple[str, ...]
    source_ids: tuple[int, ...]
    types: tuple[str, ...]
    var_length_contribution: int = VAR_LENGTH_CONTRIBUTION_DEFAULT
    max_output_size: int = MAX_OUTPUT_SIZE_DEFAULT

    def to_json(self) -> str:
        """The form `_native.write_data_files(zorder=...)` takes."""
        return json.dumps(
            {
                "source-ids": list(self.source_ids),
                "var-length-contribution": self.var_length_contribution,
                "max-output-size": self.max_output_size,
            }
        )


def parse_zorder(
    text: str,
    table: Table,
    case_sensitive: bool = True,
    var_length_contribution: int | None = None,
    max_output_size: int | None = None,
) -> ZOrder | None:
    """The z-order `text` asks for, checked against the table (ValidationError naming what
    was expected and found); None when `text` has no `zorder(...)` term."""
    terms = _native.parse_sort_order_terms(text)
    zterms = [t for t in terms if t[1] == "zorder"]
    if not zterms:
        return None
    if len(zterms) != len(terms):
        raise ValidationError(
            f"sort_order {text!r}: expected zorder(...) alone, found it mixed with other sort fields "
            "(Iceberg Java: cannot mix identity sort columns and a Zorder sort expression)"
        )
    for columns, _, args, direction, nulls in zterms:
        if args or direction is not None or nulls is not None:
            raise ValidationError(f"sort_order {text!r}: expected zorder(column, ...) of columns only")
        if not columns:
            raise ValidationError(f"sort_order {text!r}: expected at least one column in zorder(...)")
    schema = table.schema()
    by_name = {(f.name if case_sensitive else f.name.lower()): f for f in schema.fields}
    identity_sources = {f.source_id for f in table.spec().fields if str(f.transform) == "identity"}
    names, ids, types = [], [], []
    for columns, *_ in zterms:
        for path in columns:
            name = ".".join(path)
            field = by_name.get(name if case_sensitive else name.lower())
            if field is None:
                nested = len(path) > 1 and _nested_exists(schema, name, case_sensitive)
                expected = "a top-level column of the table" + (
                    " (Iceberg Java cannot z-order by a field inside a struct)" if nested else ""
                )
                found = ", ".join(f.name for f in schema.fields)
                raise ValidationError(f"sort_order {text!r}: expected {expected} ({found}), found {name!r}")
            if field.field_id in identity_sources:
                continue  # Java: "Ignoring ... as such values are constant within a partition"
            names.append(field.name)
            ids.append(field.field_id)
            types.append(str(field.field_type))
    if not ids:
        raise ValidationError(
            f"sort_order {text!r}: expected a column that is not an identity partition source, found only "
            "identity partition columns (Iceberg Java: cannot ZOrder, all columns provided were identity "
            "partition columns and cannot be used)"
        )
    z = ZOrder(
        tuple(names),
        tuple(ids),
        tuple(types),
        VAR_LENGTH_CONTRIBUTION_DEFAULT if var_length_contribution is None else int(var_length_contribution),
        MAX_OUTPUT_SIZE_DEFAULT if max_output_size is None else int(max_output_size),
    )
    _native.check_zorder(table.metadata, z.to_json())  # types Java can z-order, options >= 1
    return z


def _nested_exists(schema: Schema, name: str, case_sensitive: bool) -> bool:
    try:
        schema.find_field(name, case_sensitive=case_sensitive)
    except ValidationError:
        return False
    return True
