"""The metadata the soak's three tables must agree on after every step (see `support.soak`),
beyond their rows and refs: what a user of either engine sees of the table's shape, and what
the step committed.

- the current schema (field ids, names, types, required, identifier fields), partition spec
  (source, transform, field name) and sort order, and the format version: both engines evolve
  a table the same way, so these agree exactly, whichever engine did each step on the shared
  table;
- the head's operation on main, when the step moved main on every table with the same kind of
  commit: Java and icefloe name an append, a delete, an overwrite and a replace alike;
- main's head holds live data files in a table exactly when it does in the other two.

What legitimately differs is left out and why: file counts and `total-*` summaries (each
writer splits rows into files and chooses position or equality deletes its own way, and a
merge-on-read delete of a whole file drops the file in one engine where the other writes a
delete), snapshot ids and counts (Java commits an empty `overwrite` for a DELETE or UPDATE that
matches no row, icefloe nothing)."""

from __future__ import annotations

from typing import Any

# Steps after which main's head records the same operation in every table when main moved in
# all three: a plain insert, a schema or property change does not commit a snapshot, and a
# MERGE / upsert / the concurrent race are each engine's choice (append or overwrite when only
# rows are inserted; the race's two commits land in either order).
SAME_OPERATION = ("append", "append_java", "compact", "sort_compact", "rewrite_manifests")


def shape(table: Any) -> dict[str, Any]:
    """The table's schema, spec, sort order and format version, comparable across engines."""
    schema = table.schema()
    names = {f.field_id: f.name for f in schema.fields}
    spec = table.spec()
    order = table.sort_order()
    return {
        "format-version": table.format_version,
        "schema": [(f.field_id, f.name, str(f.field_type), f.required) for f in schema.fields],
        "identifier fields": sorted(schema.identifier_field_ids),
        "spec": [(names.get(p.source_id, p.source_id), str(p.transform), p.name) for p in spec.fields],
        "sort order": [
            (names.get(s.source_id, s.source_id), str(s.transform), s.direction.value, s.null_order.value)
            for s in order.fields
        ],
    }


def compare(catalog: Any, names: tuple[str, ...], kind: str, moved: bool, where: str) -> None:
    """Asserts the three tables agree on the metadata above after a step of `kind`; `moved`:
    the step moved main on every table."""
    tables = {n: catalog.load_table(n) for n in names}
    shapes = {n: shape(t) for n, t in tables.items()}
    first = names[0]
    for n in names[1:]:
        for key, value in shapes[first].items():
            assert shapes[n][key] == value, (
                f"{where}: {n}'s {key} differs from the Java twin's\n"
                f"  {n}: {shapes[n][key]}\n  Java twin: {value}"
            )
    heads = {n: t.current_snapshot() for n, t in tables.items()}
    if moved and kind in SAME_OPERATION:
        ops = {n: str(h.summary.operation) if h is not None else None for n, h in heads.items()}
        assert len(set(ops.values())) == 1, f"{where}: main's head operations differ: {ops}"
    counts = {}
    for n, t in tables.items():
        contents = [] if heads[n] is None else t.inspect.files().column("content").to_pylist()
        counts[n] = (contents.count(0), len(contents) - contents.count(0))
    has_data = {n: c[0] > 0 for n, c in counts.items()}
    assert len(set(has_data.values())) == 1, (
        f"{where}: (data, delete) files of main's head per table: {counts}"
    )
