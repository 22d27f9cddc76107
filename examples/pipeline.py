"""The `make demo` pipeline: icefloe on local Spark with the filesystem catalog in ./warehouse.

Creates a table, appends from Spark and in process, reads back through Spark and
Arrow, time-travels to the first snapshot, and shows that Iceberg's own metadata
(the snapshots) records what happened.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import icefloe
import icefloe.spark
import pyarrow as pa
from icefloe.expressions import GreaterThanOrEqual
from pyspark.sql import SparkSession

WAREHOUSE = Path(__file__).resolve().parent.parent / "warehouse"


def main() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    if (WAREHOUSE / "demo").exists():
        shutil.rmtree(WAREHOUSE / "demo")
    catalog = icefloe.load_catalog("demo", type="filesystem", warehouse=str(WAREHOUSE))
    catalog.create_namespace_if_not_exists("demo")

    schema = pa.schema(
        [
            pa.field("order_id", pa.int64(), nullable=False),
            pa.field("region", pa.string()),
            pa.field("amount", pa.float64()),
            pa.field("ts", pa.timestamp("us", tz="UTC")),
        ]
    )
    table = catalog.create_table("demo.orders", schema=schema)
    print(f"created table demo.orders at {table.location()}")

    t0 = time.perf_counter()
    df = spark.range(0, 100_000).selectExpr(
        "id AS order_id",
        "element_at(array('eu', 'us', 'apac'), CAST(id % 3 AS INT) + 1) AS region",
        "CAST(id % 1000 AS DOUBLE) / 10 AS amount",
        "TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id % 600 AS INT), 0) AS ts",
    )
    icefloe.spark.append(df, table)
    table.refresh()
    snap = table.current_snapshot()
    print(f"spark append: 100,000 rows in {time.perf_counter() - t0:.1f}s -> snapshot {snap.snapshot_id}")

    more = pa.table(
        {
            "order_id": [100_000, 100_001],
            "region": ["eu", None],
            "amount": [12.5, float("nan")],
            "ts": pa.array([0, 1_700_000_000_000_000], pa.timestamp("us", tz="UTC")),
        },
        schema=schema,
    )
    table.append(more)
    print(f"in-process append: 2 rows -> snapshot {table.current_snapshot().snapshot_id}")

    for snap in table.snapshots():
        s = snap.summary
        print(
            f"  snapshot {snap.snapshot_id}: {s.operation} total-records={s['total-records']} "
            f"total-data-files={s['total-data-files']}"
        )

    out = icefloe.spark.read(spark, table, row_filter=GreaterThanOrEqual("amount", 99.0))
    print("spark read, amount >= 99.0, rows by region:")
    for row in out.groupBy("region").count().orderBy("region").collect():
        print(f"  {row['region']}: {row['count']}")

    first = table.snapshots()[0].snapshot_id
    arrow = table.scan(selected_fields=("order_id", "amount"), snapshot_id=first).to_arrow()
    print(f"time travel to snapshot {first}: {arrow.num_rows} rows, columns {arrow.column_names}")
    spark.stop()


if __name__ == "__main__":
    main()
