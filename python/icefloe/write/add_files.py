"""`table.add_files`: registers existing Parquet files as data files, as PyIceberg's
`add_files` does for migrations. The files stay where they are and are never deleted, not
even when the commit fails.

Each file is checked and described in Rust (`rust/writer/parquet_import.rs`): its schema
against the table's (a file with Parquet field ids must carry ids the table's schemas gave
those names, earlier schemas included; one without is read through the table's name
mapping, old names of renamed columns included; as Java's `add_files` procedure, columns of
dropped fields are accepted and keep their metrics, two columns of one field id are refused),
metrics from the footer as for the files
icefloe writes, and its partition tuple computed from the data with the table's transforms
(exactly one tuple per file, else a ValidationError naming the file). As PyIceberg does, the
table gets a `schema.name-mapping.default` made from its schema when it has none, in the same
commit as the append.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from icefloe import _io, _native
from icefloe.exceptions import ValidationError
from icefloe.write.pending import snapshot_props

if TYPE_CHECKING:
    from icefloe.snapshots import Snapshot
    from icefloe.table import Table

NAME_MAPPING = "schema.name-mapping.default"


def _key(location: str) -> tuple[str, str]:
    return _io.parse(location)[1:]


def add_files(
    table: Table,
    file_paths: Iterable[str],
    snapshot_properties: dict[str, str] | None = None,
    check_duplicate_files: bool = True,
    partitions: list[list[str | None]] | None = None,
    spec_id: int | None = None,
) -> Snapshot | None:
    """See the module doc. `partitions`: each file's partition tuple as the texts of its
    Hive-style folder names (one per partition field of the spec, identity fields only; None
    for a null), instead of computing it from the data. `spec_id`: the partition spec the
    files are added under (default: the table's), as Java's `add_files` picks any identity
    spec of the table matching the source's partition columns."""
    if isinstance(file_paths, str):
        raise ValidationError("add_files takes a list of file paths, found one string")
    paths = [str(p) for p in file_paths]
    seen: set[tuple[str, str]] = set()
    dupes = []
    for p in paths:
        k = _key(p)
        if k in seen:
            dupes.append(p)
        seen.add(k)
    if dupes:
        raise ValidationError(f"File paths must be unique, found more than once: {', '.join(dupes)}")
    if not paths:
        return table.current_snapshot()
    if check_duplicate_files:
        live = {_key(t.file_path) for t in table.scan().plan_files()}
        referenced = [p for p in paths if _key(p) in live]
        if referenced:
            raise ValidationError(
                f"Cannot add files that are already referenced by table, files: {', '.join(referenced)}"
            )
    descriptors = _native.import_parquet_files(table.metadata, paths, partitions, spec_id)
    mapping = None if NAME_MAPPING in table.properties else _native.import_name_mapping(table.metadata)
    props = snapshot_props(snapshot_properties)

    def build(base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        if mapping is not None and NAME_MAPPING not in base.properties:
            base = base.with_properties({NAME_MAPPING: mapping}, [])
        return _native.merge_append(base, descriptors, props)

    committed = table._commit(build)
    sid = committed.current_snapshot_id
    return None if sid is None else table.snapshot_by_id(sid)
