"""What the row filters of the expression tests must cover (every operation of Iceberg's
expression JSON, on every column of their table), and how to read both off a parsed filter."""

from __future__ import annotations

from typing import Any

# What the filters must exercise, read from the expressions icefloe parses them to: every
# predicate and connective of Iceberg's expression JSON (`NOT isnan(x)` parses to not(is-nan);
# both engines rewrite it to not-nan before evaluating metrics), on every column of the table.
OPERATIONS = {
    "eq", "not-eq", "lt", "lt-eq", "gt", "gt-eq",
    "in", "not-in",
    "is-null", "not-null", "is-nan",
    "starts-with", "not-starts-with",
    "and", "or", "not",
}  # fmt: skip


COLUMNS = {"id", "ts", "name", "amount", "d", "dec", "nul"}


def operations_and_terms(expr: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The operation types and the terms of an unbound expression's JSON, recursively."""
    ops, terms = {str(expr["type"])}, {str(expr["term"])} if "term" in expr else set()
    for child in ("left", "right", "child"):
        if child in expr:
            o, t = operations_and_terms(expr[child])
            ops, terms = ops | o, terms | t
    return ops, terms
