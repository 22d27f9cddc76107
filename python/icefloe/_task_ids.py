"""The task ids writers name their files by (`<task_id:05>-<write_id>-<n:05>...`).

Within one write id, two writers must never share a task id, or the second would take the
first's file names. On Spark a writer uses its task attempt id (`task_attempt_id`): unique
within the application, counted from 0. Work the driver does itself (in-process writes,
deletes and maintenance on threads) takes ids from a base far above any attempt id a Spark
application reaches, plus the thread's or chunk's index, so a driver file never takes an
executor file's name when both write under one write id (an update writing its rows on
executors and its deletes on the driver, say).

Each operation keeps its own range. Every operation also mints its own write id, so the
ranges need not be apart for names to be unique; keeping them apart still tells from a
file's name which driver work wrote it, and stays safe should two of them ever share a write
id. The values are the ones files have always been written with (tests read them back).
"""

from __future__ import annotations

# In-process row-level deletes, updates and upserts (`icefloe._row_level`).
ROW_LEVEL_DRIVER_TASK_BASE = 3_000_000_000
# In-process `rewrite_data_files` (the same base as the row-level operations: the two never
# write under one write id).
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
