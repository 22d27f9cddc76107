"""The Spark session the benchmarks share: local[2], the Iceberg Java runtime (the oracle jar)
with an `oracle` Hadoop catalog on the benchmark's warehouse, UTC, no UI."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from support.oracle import oracle_session_conf, side_jar


def oracle_jars(*patterns: str) -> list[str]:
    """The runtime (ICEFLOE_ORACLE_JAR) and the jars `make oracle` puts next to it, by glob
    pattern: `iceberg-aws-bundle-*.jar` (S3FileIO), `sqlite-jdbc-*.jar` (JdbcCatalog on sqlite)."""
    folder = Path(os.environ["ICEFLOE_ORACLE_JAR"]).parent
    found = [os.environ["ICEFLOE_ORACLE_JAR"]]
    for pattern in patterns:
        jar = side_jar(found[0], pattern)
        if jar is None:
            raise SystemExit(f"{pattern} is missing in {folder} (run `make oracle`)")
        found.append(jar)
    return found


def bench_session(app: str, warehouse: Path, memory: str = "4g", **conf: str) -> Any:
    """A local[2] session named `app` whose `oracle` catalog is Iceberg Java's HadoopCatalog on
    `warehouse`; `conf` adds settings (dots spelled as underscores are not translated: pass
    them with `**{"spark.x.y": "v"}`; `spark.jars` replaces the runtime: see oracle_jars)."""
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app)
        .config("spark.jars", os.environ["ICEFLOE_ORACLE_JAR"])
        .config("spark.driver.memory", memory)
    )
    for key, value in oracle_session_conf(warehouse).items():
        builder = builder.config(key, value)
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def create_orders_table(spark: Any, qualified: str, rows: int, files: int, version: int = 2) -> None:
    """The read benchmarks' table, written by Iceberg Java: `rows` orders (order_id, order_date,
    quantity, product_id, purchaser, amount) in `files` data files, unpartitioned, format
    `version` (v3: its merge-on-read deletes are deletion vectors), merge-on-read deletes."""
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {qualified.rsplit('.', 1)[0]}")
    spark.sql(
        f"CREATE TABLE {qualified} (order_id bigint, order_date date, quantity int, product_id int, "
        f"purchaser string, amount double) USING iceberg TBLPROPERTIES ('format-version'='{version}', "
        "'write.delete.mode'='merge-on-read', 'write.target-file-size-bytes'='134217728')"
    )
    spark.sql(
        f"INSERT INTO {qualified} SELECT id AS order_id, date_add(DATE'2020-01-01', CAST(id % 1500 AS int)), "
        "CAST(id % 10 + 1 AS int), CAST(id % 5000 AS int), concat('user_', CAST(id % 100000 AS string)), "
        f"CAST((id % 100000) / 100.0 AS double) FROM range({rows}) "
        f"DISTRIBUTE BY CAST(id / {max(rows // files, 1)} AS int)"
    )
