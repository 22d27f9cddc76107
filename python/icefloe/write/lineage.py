"""Row lineage kept by row-level writes on format v3 tables (the spec's "Row Lineage").

An updated row keeps its `_row_id` and gets a null `_last_updated_sequence_number` (it
inherits the sequence number of the commit that wrote it); a row copied into a new file
(copy-on-write, compaction) keeps both, written as stored values; a new row has neither
(both inherited). Writers pass these columns with the rows; `write_data_files` writes
them into the data file under their reserved field ids (as Iceberg Java's writers do).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from icefloe._reserved_fields import LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, ROW_ID_FIELD_ID

if TYPE_CHECKING:
    from icefloe.table import Table

ROW_ID = "_row_id"
LAST_UPDATED = "_last_updated_sequence_number"
COLUMNS = (ROW_ID, LAST_UPDATED)
_FIELDS = (
    {"id": ROW_ID_FIELD_ID, "name": ROW_ID, "required": False, "type": "long"},
    {"id": LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID, "name": LAST_UPDATED, "required": False, "type": "long"},
)


def tracked(table: Table) -> bool:
    """Whether writes to `table` keep row lineage (format v3 and later)."""
    return table.format_version >= 3


def copied_columns(table: Table) -> tuple[str, ...]:
    """The lineage columns a copied row keeps (none before v3)."""
    return COLUMNS if tracked(table) else ()


def with_read_fields(schema: dict[str, Any]) -> dict[str, Any]:
    """An Iceberg schema JSON (dict) with the lineage columns appended, to read them."""
    return {**schema, "fields": [*schema["fields"], *_FIELDS]}


def updated(new_rows: pa.Table, matched: pa.Table) -> pa.Table:
    """The new rows of an update (row for row from `matched`, which was read with `_row_id`):
    each keeps its row id; its last-updated sequence number is left to inherit."""
    out = new_rows.append_column(pa.field(ROW_ID, pa.int64()), matched.column(ROW_ID))
    return out.append_column(pa.field(LAST_UPDATED, pa.int64()), pa.nulls(out.num_rows, pa.int64()))
