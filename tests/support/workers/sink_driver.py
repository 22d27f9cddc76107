"""The streaming driver of the sink kill test (`python -m support.workers.sink_driver
'[warehouse, ident, src, checkpoint, hold, drain]'`, tests/streaming/test_streaming_sink_kill.py):
a local Spark session streaming the Parquet files of `src` (3 per trigger) into the icefloe
table through `icefloe.spark.batch_writer`, checkpointed at `checkpoint`. Prints `started
<query id>`, `start <batch>` and `done <batch> <skipped>` around each batch (then holds `hold`
seconds), and `finished` once the query ends (with `drain`, once every file is in)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any


def main() -> None:
    warehouse, ident, src, checkpoint, hold, drain = json.loads(sys.argv[1])
    os.environ["PYSPARK_PYTHON"] = sys.executable
    import icefloe
    import icefloe.spark
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        # Spark's own file-source log (checkpoint/sources/0) is compacted every 10 entries; a
        # SIGKILL around a compaction left it unreadable ("9.compact doesn't exist") in a run
        # here. That is the source's checkpoint, not the sink: keep it uncompacted.
        .config("spark.sql.streaming.fileSource.log.compactInterval", "1000000")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    table = icefloe.load_catalog("local", type="filesystem", warehouse=warehouse).load_table(ident)
    writer = icefloe.spark.batch_writer(table)

    def each(df: Any, batch_id: int) -> None:
        print("start", batch_id, flush=True)
        writer(df, batch_id)
        print("done", batch_id, batch_id in writer.skipped, flush=True)
        time.sleep(hold)

    stream = spark.readStream.schema("id bigint, val string").option("maxFilesPerTrigger", 3).parquet(src)
    w = stream.writeStream.foreachBatch(each).option("checkpointLocation", checkpoint)
    if drain:
        w = w.trigger(availableNow=True)
    q = w.start()
    print("started", q.id, flush=True)
    q.awaitTermination()
    print("finished", flush=True)


if __name__ == "__main__":
    main()
