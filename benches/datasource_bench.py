"""`format("icefloe")` on PySpark 4 against Iceberg Java and `icefloe.spark.read`, on the
same session and data: bench-read's 5,000,000-row merge-on-read table (written by Iceberg
Java; 10% position deletes, then 10% equality deletes), its last snapshot.

Queries, each from the table's name, the three engines' runs interleaved after warm-up,
best and median of N: count(*), sum(amount), and a full read of every column
(`DataFrame.write.format("noop")`). Java's scan is pruned by Spark; a Python data source
cannot be pruned by Spark, so `format("icefloe")` is told the columns as
`icefloe.spark.read` is (`selected-fields`), and the full read compares all three on the
same columns.

Two floors show what Spark itself costs on each path: the same Arrow batches (the columns a
query reads, straight from the data files with pyarrow, no deletes) handed to Spark by a
minimal Python data source and by mapInArrow. Their ratio bounds what `format("icefloe")`
can reach against `icefloe.spark.read`: both read in the same Rust code, only Spark's path
from the Python worker to rows differs.

Bars (issue 15): format("icefloe") at most Java's time, and within 1.1x of icefloe.spark.read.
Run with `make bench-datasource` (PySpark 4 in .venv4; the table is cached under
.cache/bench_read/).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _spark import bench_session

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

REPEAT = int(os.environ.get("BENCH_REPEAT", "7"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "3"))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def floor_frames(
    spark: Any, files: list[str], partitions: int
) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """(data source floor, mapInArrow floor): functions of the column names (None: all)
    giving DataFrames of the data files' batches of those columns, in `partitions` tasks of
    consecutive files, through a minimal Python data source and through mapInArrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
    from pyspark.sql.pandas.types import from_arrow_schema

    file_schema = pa.schema([f.remove_metadata() for f in pq.read_schema(files[0])])
    groups = [files[i::partitions] for i in range(partitions)]

    def batches(group: list[str], columns: list[str]) -> Any:
        schema = pa.schema([file_schema.field(c) for c in columns])
        for path in group:
            for b in pq.ParquetFile(path).iter_batches(batch_size=1 << 16, columns=columns):
                yield pa.RecordBatch.from_arrays(b.columns, schema=schema)

    class FloorReader(DataSourceReader):
        def __init__(self, columns: list[str]) -> None:
            self.columns = columns

        def partitions(self) -> list[InputPartition]:
            return [InputPartition(g) for g in groups]

        def read(self, partition: InputPartition) -> Any:
            return batches(partition.value, self.columns)

    class FloorSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "icefloe_bench_floor"

        def columns(self) -> list[str]:
            return self.options.get("columns", ",".join(file_schema.names)).split(",")

        def schema(self) -> Any:
            return from_arrow_schema(pa.schema([file_schema.field(c) for c in self.columns()]))

        def reader(self, schema: Any) -> Any:
            return FloorReader(self.columns())

    spark.dataSource.register(FloorSource)

    def source(columns: list[str] | None) -> Any:
        return (
            spark.read.format("icefloe_bench_floor")
            .option("columns", ",".join(columns or file_schema.names))
            .load()
        )

    def mapinarrow(columns: list[str] | None) -> Any:
        cols = columns or file_schema.names

        def read(it: Any) -> Any:
            for batch in it:
                for i in batch.column(0).to_pylist():
                    yield from batches(groups[i], cols)

        schema = from_arrow_schema(pa.schema([file_schema.field(c) for c in cols]))
        return spark.range(0, partitions, 1, partitions).mapInArrow(read, schema)

    return source, mapinarrow


def main() -> None:
    import icefloe
    import icefloe.spark
    import read_bench

    spark = bench_session("icefloe-datasource-bench", read_bench.WAREHOUSE)
    spark.sparkContext.setLogLevel("ERROR")
    read_bench.build_table(spark)
    warehouse = str(read_bench.WAREHOUSE)
    spark.conf.set("icefloe.catalog.bench.warehouse", warehouse)
    icefloe.spark.register(spark)
    q = f"oracle.{read_bench.TABLE}"
    catalog = icefloe.load_catalog("bench", type="filesystem", warehouse=warehouse)
    snap = catalog.load_table(read_bench.TABLE).metadata.current_snapshot_id

    def java(cols: str) -> Any:
        return spark.sql(f"SELECT {cols} FROM {q} VERSION AS OF {snap}")

    def source(fields: str | None) -> Any:
        r = spark.read.format("icefloe").option("snapshot-id", snap)
        if fields is not None:
            r = r.option("selected-fields", fields)
        return r.load(f"bench.{read_bench.TABLE}")

    def mapinarrow(fields: tuple[str, ...] | None) -> Any:
        t = catalog.load_table(read_bench.TABLE)
        return icefloe.spark.read(spark, t, selected_fields=fields, snapshot_id=snap)

    files = [
        r.file_path.removeprefix("file:")
        for r in spark.sql(f"SELECT file_path FROM {q}.data_files").collect()
    ]
    partitions = source(None).rdd.getNumPartitions()  # the floors run as many tasks
    floor_source, floor_mia = floor_frames(spark, files, partitions)
    floors = ("floor: Python data source", "floor: mapInArrow")

    queries: list[tuple[str, list[tuple[str, Callable[[], Any]]]]] = [
        (
            "count(*)",
            [
                ("Java", lambda: java("order_id").count()),
                ("format(icefloe)", lambda: source("order_id").count()),
                ("icefloe.spark.read", lambda: mapinarrow(("order_id",)).count()),
                (floors[0], lambda: floor_source(["order_id"]).count()),
                (floors[1], lambda: floor_mia(["order_id"]).count()),
            ],
        ),
        (
            "sum(amount)",
            [
                ("Java", lambda: java("amount").agg({"amount": "sum"}).collect()[0][0]),
                ("format(icefloe)", lambda: source("amount").agg({"amount": "sum"}).collect()[0][0]),
                (
                    "icefloe.spark.read",
                    lambda: mapinarrow(("amount",)).agg({"amount": "sum"}).collect()[0][0],
                ),
                (floors[0], lambda: floor_source(["amount"]).agg({"amount": "sum"}).collect()[0][0]),
                (floors[1], lambda: floor_mia(["amount"]).agg({"amount": "sum"}).collect()[0][0]),
            ],
        ),
        (
            "all columns (noop write)",
            [
                ("Java", lambda: java("*").write.format("noop").mode("overwrite").save()),
                ("format(icefloe)", lambda: source(None).write.format("noop").mode("overwrite").save()),
                (
                    "icefloe.spark.read",
                    lambda: mapinarrow(None).write.format("noop").mode("overwrite").save(),
                ),
                (floors[0], lambda: floor_source(None).write.format("noop").mode("overwrite").save()),
                (floors[1], lambda: floor_mia(None).write.format("noop").mode("overwrite").save()),
            ],
        ),
    ]
    print(f"\ndata source benchmark: PySpark {spark.version}, snapshot {snap}, best/median of {REPEAT}\n")
    print(f"| {'query':<26} | {'engine':<26} | {'best s':>7} | {'median s':>8} | vs Java | vs spark.read |")
    print(f"|{'-' * 28}|{'-' * 28}|{'-' * 9}|{'-' * 10}|---------|---------------|")
    for what, engines in queries:
        for _ in range(WARMUP):
            for _name, fn in engines:
                fn()
        times: dict[str, list[float]] = {name: [] for name, _ in engines}
        results: dict[str, Any] = {}
        for _ in range(REPEAT):
            for name, fn in engines:
                t, out = timed(fn)
                times[name].append(t)
                results[name] = out
        if what != "all columns (noop write)":  # the floors read no deletes
            values = [v for k, v in results.items() if k not in floors]
            assert all(abs(v - values[0]) < 1e-6 * max(1.0, abs(values[0])) for v in values), results
        java_best = min(times["Java"])
        read_best = min(times["icefloe.spark.read"])
        for name, _fn in engines:
            b, m = min(times[name]), statistics.median(times[name])
            print(
                f"| {what:<26} | {name:<26} | {b:7.3f} | {m:8.3f} | {b / java_best:6.2f}x "
                f"| {b / read_best:12.2f}x |"
            )
        ds_floor, mia_floor = (min(times[f]) for f in floors)
        label, gap = "floors: source / mIA", ""
        print(f"| {what:<26} | {label:<26} | {ds_floor / mia_floor:6.2f}x |{gap:10}|{gap:9}|{gap:15}|")


if __name__ == "__main__":
    main()
