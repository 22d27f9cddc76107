"""The Spark session the benchmarks share: local[2], the Iceberg Java runtime (the oracle jar)
with an `oracle` Hadoop catalog on the benchmark's warehouse, UTC, no UI."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any


def bench_session(app: str, warehouse: Path, memory: str = "4g", **conf: str) -> Any:
    """A local[2] session named `app` whose `oracle` catalog is Iceberg Java's HadoopCatalog on
    `warehouse`; `conf` adds settings (dots spelled as underscores are not translated: pass
    them with `**{"spark.x.y": "v"}`)."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.jars", os.environ["ICEFLOE_ORACLE_JAR"])
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.oracle", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.oracle.type", "hadoop")
        .config("spark.sql.catalog.oracle.warehouse", f"file://{warehouse}")
        .config("spark.sql.catalog.oracle.cache-enabled", "false")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
