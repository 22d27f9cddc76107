"""The task ids writers name their files by (`<task_id:05>-<write_id>-<n:05>...`).

Within one write id, two writers of one kind of file must never share a task id, or the
second would take the first's file names. On Spark a writer uses its task attempt id
(`task_attempt_id`): unique within the application, counted from 0. Work the driver does
itself on threads (in-process deletes, rewrites and maintenance) takes ids from a base far
above any attempt id an application reaches, plus the thread's or chunk's index, so a driver
file could never take the name of a file a Spark task wrote under the same write id. (An
in-process data write, `_pending_write.write_local`, is one writer: task id 0.)

The bases are separate constants because they are separate ranges by intent, even where the
values agree:
- the row-level and MERGE bases name delete files (`...-deletes.parquet` / `.puffin`), the
  overwrite rewrite's data files, and no operation writes one kind of file from two of them
  under one write id, so the three share 3_000_000_000;
- every maintenance operation mints a write id of its own, so its files never meet another
  operation's: rewrite_data_files shares 3_000_000_000 too, while convert_equality_deletes
  and rewrite_position_delete_files were given ranges of their own (3_100_000_000,
  3_500_000_000), which tell from a file's name what wrote it.
The values are the ones files have always been written with (tests read them back).
"""

from __future__ import annotations

# In-process row-level deletes, updates and upserts (`icefloe.write.row_level`): their delete files.
ROW_LEVEL_DRIVER_TASK_BASE = 3_000_000_000
# In-process MERGE (`icefloe.write.merge`): its position-delete files.
MERGE_DRIVER_TASK_BASE = 3_000_000_000
# Data files an overwrite by filter (or a copy-on-write delete / update) rewrites on the
# driver (`icefloe.write.overwrite.rewrite_on_driver`).
OVERWRITE_REWRITE_DRIVER_TASK_BASE = 3_000_000_000
# In-process `rewrite_data_files`.
REWRITE_DATA_FILES_DRIVER_TASK_BASE = 3_000_000_000
# In-process `convert_equality_deletes`.
CONVERT_EQUALITY_DELETES_DRIVER_TASK_BASE = 3_100_000_000
# In-process `rewrite_position_delete_files`: apart from rewrite_data_files' range.
REWRITE_POSITION_DELETE_FILES_DRIVER_TASK_BASE = 3_500_000_000


def task_attempt_id() -> int:
    """The running Spark task attempt's id (names the files it writes); 0 outside a task."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    return ctx.taskAttemptId() if ctx is not None else 0
