"""The streaming driver of the PySpark 4 kill test (`python -m support.workers.source_sink_driver
'[warehouse, src, dst, checkpoint, drain]'`, tests/spark4/test_spark4_streaming_kill.py): a local
Spark session with icefloe registered, streaming `readStream.format("icefloe")` of table `src`
(3 files per trigger) to `writeStream.format("icefloe")` of table `dst`, checkpointed at
`checkpoint`. Prints `started`; with `drain`, processes everything available, stops and
prints `finished`; otherwise runs until killed."""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    warehouse, src, dst, checkpoint, drain = json.loads(sys.argv[1])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import icefloe.spark
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("icefloe.catalog.local.warehouse", warehouse)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    icefloe.spark.register(spark)
    stream = spark.readStream.format("icefloe").option("max-files-per-trigger", 3).load(f"local.{src}")
    q = stream.writeStream.format("icefloe").option("checkpointLocation", checkpoint).start(f"local.{dst}")
    print("started", flush=True)
    if drain:
        q.processAllAvailable()
        q.stop()
        print("finished", flush=True)
    else:
        q.awaitTermination()


if __name__ == "__main__":
    main()
