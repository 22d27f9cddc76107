"""icefloe: Apache Iceberg for PySpark with a Rust core.

    import icefloe
    catalog = icefloe.load_catalog("local", warehouse="/data/warehouse")
    catalog.create_namespace("db")
    table = catalog.create_table("db.events", schema=arrow_table.schema)
    table.append(arrow_table)
    table.scan(row_filter=icefloe.expressions.GreaterThan("id", 10)).to_arrow()

The names follow PyIceberg's, so code written for PyIceberg reads the same.
"""

from __future__ import annotations

from icefloe import exceptions, expressions
from icefloe._native import __version__
from icefloe.catalog import Catalog, load_catalog
from icefloe.partitioning import UNPARTITIONED_PARTITION_SPEC, PartitionField, PartitionSpec
from icefloe.scan import DataScan, FileScanTask
from icefloe.schema import Schema
from icefloe.snapshots import Operation, Snapshot, Summary
from icefloe.sorting import UNSORTED_SORT_ORDER, NullOrder, SortDirection, SortField, SortOrder
from icefloe.table import Table
from icefloe.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    VoidTransform,
    YearTransform,
)
from icefloe.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

__all__ = [
    "UNPARTITIONED_PARTITION_SPEC",
    "UNSORTED_SORT_ORDER",
    "BinaryType",
    "BooleanType",
    "BucketTransform",
    "Catalog",
    "DataScan",
    "DateType",
    "DayTransform",
    "DecimalType",
    "DoubleType",
    "FileScanTask",
    "FixedType",
    "FloatType",
    "HourTransform",
    "IdentityTransform",
    "IntegerType",
    "ListType",
    "LongType",
    "MapType",
    "MonthTransform",
    "NestedField",
    "NullOrder",
    "Operation",
    "PartitionField",
    "PartitionSpec",
    "Schema",
    "Snapshot",
    "SortDirection",
    "SortField",
    "SortOrder",
    "StringType",
    "StructType",
    "Summary",
    "Table",
    "TimeType",
    "TimestampType",
    "TimestamptzType",
    "TruncateTransform",
    "UUIDType",
    "VoidTransform",
    "YearTransform",
    "__version__",
    "exceptions",
    "expressions",
    "load_catalog",
]
