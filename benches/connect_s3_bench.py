"""Which reader pays over Spark Connect for a table on S3 (`make bench-connect-s3`, PySpark 4).

Over Spark Connect, `icefloe.spark.read` hands the server the delete-free files on S3 as S3A
paths (a classic session gives a file list instead; the client's folders are not the server's),
and the server's file index sends a status call or two and a listing per file before the query
starts. This measures whether the minimum mean file size below which a scan's files on S3
take the Rust reader (`icefloe.read.spark-parquet.s3-min-mean-file-bytes`, 8 MiB, measured on
classic sessions) holds over Connect: tables of N files of a given size on the test
suite's S3 server (moto), a sum of 1 of 10 double columns from a Connect client, Spark's
Parquet source through S3A (the minimum set to 0) against the Rust reader (Spark's reader
turned off), alternating after warm-ups; best and median of BENCH_REPEAT (default 5). Sums are
checked equal. A Connect server from the PySpark package (`local[2]`) with Hadoop's S3A
connector for its Hadoop (`make oracle` fetches it).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.servers.s3 import run_s3  # noqa: E402
from support.servers.spark_connect import run_connect_server  # noqa: E402

BUCKET = "icefloe-bench"
REPEAT = int(os.environ.get("BENCH_REPEAT", "5"))
# (files, MiB per file)
SHAPES = [(64, 1), (32, 4), (16, 8), (8, 16), (4, 32)]


def _s3a_jars() -> list[str]:
    import pyspark

    found = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    version = found[0].name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    folder = ROOT / ".cache" / "oracle" / f"s3a-hadoop-{version}"
    jars = sorted(str(p) for p in folder.glob("*.jar"))
    if not any("hadoop-aws" in j for j in jars):
        raise SystemExit(f"Hadoop {version}'s S3A jars are missing in {folder} (run `make oracle`)")
    return jars


def _file(rows: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({f"c{i}": rng.random(rows) for i in range(10)})


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="icefloe-connect-s3-"))
    for server in run_s3(root):
        _measure(server, root)


def _measure(server: Any, root: Path) -> None:
    import icefloe
    import icefloe.spark
    from icefloe.spark._parquet_source import ENABLED_CONF, S3_MIN_MEAN_CONF
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    server.create_bucket(BUCKET)
    catalog = icefloe.load_catalog(
        "bench",
        type="sql",
        uri=f"sqlite:///{root}/catalog.db",
        warehouse=f"s3://{BUCKET}/wh",
        **server.properties(),
    )
    catalog.create_namespace("db")
    for files, mib in SHAPES:
        t = catalog.create_table(f"db.f{files}x{mib}", _file(1, 0).schema)
        rows = mib * (1 << 20) // 80  # 10 random doubles a row: ~80 bytes, incompressible
        for k in range(files):
            t.append(_file(rows, k))
    sums: dict[str, float] = {}
    conf = {"spark.jars": ",".join(_s3a_jars()), "spark.driver.memory": "4g", "spark.ui.enabled": "false"}
    with run_connect_server(root, conf) as url:
        spark = SparkSession.builder.remote(url).getOrCreate()

        def run(name: str, side: str) -> float:
            spark.conf.set(ENABLED_CONF, "true" if side == "spark" else "false")
            spark.conf.set(S3_MIN_MEAN_CONF, "0")
            t0 = time.perf_counter()
            plan = icefloe.spark.plan_read(spark, catalog.load_table(name))
            if side == "spark":
                assert plan.spark_files and not plan.rust_files, plan.rust_files
            value = plan.frame().agg(F.sum("c3")).collect()[0][0]
            took = time.perf_counter() - t0
            sums.setdefault(name, value)
            assert abs(sums[name] - value) < 1e-6 * abs(value), (name, side, value, sums[name])
            return took

        print(f"{'table':<12} {'Spark S3A best (median)':>24} {'Rust best (median)':>22}  Spark/Rust")
        for files, mib in SHAPES:
            name = f"db.f{files}x{mib}"
            for _ in range(2):
                run(name, "spark")
                run(name, "rust")
            times: dict[str, list[float]] = {"spark": [], "rust": []}
            for _ in range(REPEAT):
                for side in ("spark", "rust"):
                    times[side].append(run(name, side))
            s, r = times["spark"], times["rust"]
            print(
                f"{files} x {mib} MiB".ljust(12)
                + f"{min(s):>14.2f} s ({statistics.median(s):.2f})"
                + f"{min(r):>12.2f} s ({statistics.median(r):.2f})"
                + f"  {statistics.median(s) / statistics.median(r):.2f}x",
                flush=True,
            )
        spark.stop()


if __name__ == "__main__":
    main()
