"""icefloe on Spark: read and write Iceberg tables through DataFrame.mapInArrow.

The driver plans (Rust) and commits; executors read and write Parquet (Rust) inside
mapInArrow. `read` lives in `read.py`, the write operations in `write.py`, row-level
deletes in `row_level.py`.
"""

from icefloe.spark.read import read
from icefloe.spark.row_level import delete
from icefloe.spark.write import append, overwrite

__all__ = ["append", "delete", "overwrite", "read"]
