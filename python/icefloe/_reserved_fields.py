"""Iceberg's reserved field ids for the metadata columns icefloe reads and writes (the spec's
"Reserved Field IDs", Java's `MetadataColumns`): counted down from Integer.MAX_VALUE, so no
table column ever takes them."""

from __future__ import annotations

# The spec reserves every field id from Integer.MAX_VALUE - 200 up for metadata columns.
FIRST_RESERVED_FIELD_ID = 2147483447

# `_file`: the path of the data file a row was read from (MAX_VALUE - 1).
FILE_PATH_FIELD_ID = 2147483646
# `_pos`: the row's position in that file (MAX_VALUE - 2).
ROW_POS_FIELD_ID = 2147483645
# `_row_id`: v3 row lineage's row id (MAX_VALUE - 107).
ROW_ID_FIELD_ID = 2147483540
# `_last_updated_sequence_number`: v3 row lineage (MAX_VALUE - 108).
LAST_UPDATED_SEQUENCE_NUMBER_FIELD_ID = 2147483539
