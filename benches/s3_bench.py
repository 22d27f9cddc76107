"""Object-store benchmarks: the read and write benchmarks again with the tables on the test
suite's S3 server (moto_server on localhost, tests/support/servers/s3.py), icefloe against Iceberg Java
with `S3FileIO`, both through one catalog: Java's JdbcCatalog on a sqlite file (Spark catalog
`s3j`) and icefloe's SqlCatalog (`uri=sqlite:///...`, same name) on that file.

`read` (`make bench-s3`): the 5,000,000-row merge-on-read table of `make bench-read`, built on
S3 by Iceberg Java the same way (create_orders_table, a merge-on-read DELETE of 10% = position
deletes, then an equality delete of another 10% through the Java API; tests/java/EqDeleteWriter
only opens a HadoopCatalog, which cannot reach S3 without hadoop-aws, so
benches/java/CatalogEqDeleteWriter.java runs the same code on the JdbcCatalog). Times, best of
N and median, in one run:

- on Spark, each query from the table's name (plan + read) as read_bench does: Java
  count(*) and sum(amount) vs icefloe.spark.read, per snapshot, warm-up runs first, then the
  two engines alternating; bar icefloe <= 0.6x Java;
- in process: icefloe `scan(order_id, amount).to_arrow()` on S3 against the same on local disk
  (read_bench's table, .cache/bench_read/: same rows and deletes, made the same way),
  alternating; bar S3 <= 1.5x local; plus raw pyarrow over the same data files (no deletes) on
  S3 and on local disk: what the server costs a plain reader.

Every timed query is then run twice more with both engines pointed at a counting proxy in front
of the server (benches/_s3_proxy.py): GET requests and bytes per query (the second run, which
is what the timed runs did; the first is shown when it differs). The timed runs go to the
server directly.

`write` (`make bench-s3-write`): the 5,000,000 rows of `make bench-write` (day(ts),
bucket(16, id)) into a fresh S3 table per run: Java `df.writeTo(t).append()` vs
`icefloe.spark.append`, alternating, best of N (BENCH_REPEAT, default 3); bar icefloe <= 0.5x
Java; the two tables read back equal; then one write each through the proxy: requests and bytes.

moto_server keeps every object in memory: the tables are built again on every run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq
from _s3_proxy import Counts, ProxyClient, run_proxy
from _spark import bench_session, create_orders_table, oracle_jars

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from support.java import java_command  # noqa: E402
from support.servers.s3 import ACCESS_KEY, REGION, SECRET_KEY, S3Server, run_s3  # noqa: E402

ROWS = int(os.environ.get("BENCH_ROWS", "5000000"))
WARMUP = int(os.environ.get("BENCH_WARMUP", "5"))
CACHE = ROOT / ".cache" / "bench_s3"
BUCKET = "icefloe-bench"
WAREHOUSE = f"s3://{BUCKET}/wh"
CATALOG = "s3j"  # the Spark catalog's name and icefloe's: a JdbcCatalog's rows are keyed by it
TABLE = "db.orders"
JARS = ("iceberg-aws-bundle-*.jar", "sqlite-jdbc-*.jar")


# ------------------------------------------------------------------------------------------------
# the server, the catalogs
# ------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def s3_stack() -> Iterator[tuple[S3Server, ProxyClient]]:
    """The S3 server with the benchmark's bucket, and a counting proxy in front of it."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with contextlib.contextmanager(run_s3)(CACHE) as server:
        server.create_bucket(BUCKET)
        with run_proxy(server.endpoint, CACHE) as proxy:
            yield server, proxy


def java_catalog_properties(db: Path, endpoint: str) -> dict[str, str]:
    """Iceberg Java's JdbcCatalog on the sqlite file `db` with S3FileIO on `endpoint`."""
    return {
        "catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        "uri": f"jdbc:sqlite:{db}",
        "jdbc.schema-version": "V1",
        "warehouse": WAREHOUSE,
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": endpoint,
        "s3.path-style-access": "true",
        "s3.access-key-id": ACCESS_KEY,
        "s3.secret-access-key": SECRET_KEY,
        "client.region": REGION,
        "cache-enabled": "false",
    }


def spark_catalog_conf(db: Path, endpoint: str) -> dict[str, str]:
    conf = {f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog"}
    for k, v in java_catalog_properties(db, endpoint).items():
        conf[f"spark.sql.catalog.{CATALOG}.{k}"] = v
    return conf


def point_java_at(spark: Any, endpoint: str) -> None:
    """Re-creates Spark's catalogs with Java's S3FileIO on `endpoint`."""
    spark.conf.set(f"spark.sql.catalog.{CATALOG}.s3.endpoint", endpoint)
    spark._jsparkSession.sessionState().catalogManager().reset()


def icefloe_catalog(db: Path, server: S3Server, endpoint: str) -> Any:
    import icefloe

    props = dict(server.properties(), **{"s3.endpoint": endpoint})
    return icefloe.load_catalog(CATALOG, type="sql", uri=f"sqlite:///{db}", warehouse=WAREHOUSE, **props)


def s3_filesystem(endpoint: str) -> pafs.S3FileSystem:
    host = endpoint.removeprefix("http://")
    return pafs.S3FileSystem(
        access_key=ACCESS_KEY,
        secret_key=SECRET_KEY,
        region=REGION,
        endpoint_override=host,
        scheme="http",
        force_virtual_addressing=False,
    )


def fresh_db(name: str) -> Path:
    """An empty sqlite catalog database (the server starts empty too), in WAL mode: in the
    default rollback-journal mode a COMMIT waits for every open read, and Java's JdbcCatalog,
    initialised on a database that already has the catalog tables (here: Spark's catalogs
    re-created by point_java_at), keeps a read open on a pooled connection from its first
    query on, so icefloe's commits waited out the 60 s busy timeout and failed."""
    db = CACHE / f"{name}.db"
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    return db


# ------------------------------------------------------------------------------------------------
# timing and reporting
# ------------------------------------------------------------------------------------------------


def best(fn: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times), out


def best_interleaved_n(fns: Sequence[Callable[[], Any]], repeat: int) -> list[tuple[float, float, Any]]:
    """best/median/result of each of `fns`, run in turn so that a noisy stretch of a shared
    machine falls on all of them."""
    runs: list[list[float]] = [[] for _ in fns]
    out: list[Any] = [None for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            out[i] = fn()
            runs[i].append(time.perf_counter() - t0)
    return [(min(r), statistics.median(r), o) for r, o in zip(runs, out)]


def best_interleaved(
    a: Callable[[], Any], b: Callable[[], Any], repeat: int
) -> tuple[tuple[float, float, Any], tuple[float, float, Any]]:
    first, second = best_interleaved_n([a, b], repeat)
    return first, second


def counted(proxy: ProxyClient, fn: Callable[[], Any]) -> tuple[Counts, Counts]:
    """The requests of a first and of a second run of `fn` through the proxy."""
    proxy.reset()
    fn()
    first = proxy.counts()
    proxy.reset()
    fn()
    return first, proxy.counts()


def mb(n: int) -> str:
    return f"{n / 1e6:.1f}"


def other_requests(c: Counts, but: str) -> str:
    return ", ".join(f"{m} {n}" for m, n in sorted(c.requests.items()) if m != but) or "-"


def print_table(title: str, rows: list[tuple[str, float, float, str]]) -> None:
    print(f"\n{title} (median in brackets)\n")
    print(f"| {'what':<62} | {'best s':>8} | {'median s':>8} | notes |")
    print(f"|{'-' * 64}|{'-' * 10}|{'-' * 10}|-------|")
    for what, b, m, note in rows:
        print(f"| {what:<62} | {b:8.3f} | {m:8.3f} | {note} |")


# ------------------------------------------------------------------------------------------------
# the equality delete through the Java API, on the JdbcCatalog
# ------------------------------------------------------------------------------------------------


def java_classpath() -> str:
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    return ":".join([*oracle_jars(*JARS), f"{jars}/*"])


def commit_eq_delete(catalog_props: dict[str, str], column: str, keys: Iterator[int]) -> None:
    """One equality-delete file of `keys` on `column` of TABLE, committed by Iceberg Java
    (benches/java/CatalogEqDeleteWriter.java, compiled once into .cache/bench_s3/java)."""
    src = ROOT / "benches" / "java" / "CatalogEqDeleteWriter.java"
    java = java_command(src, java_classpath(), cache=CACHE / "java")
    props, keys_file = CACHE / "eq-catalog.properties", CACHE / "eq-keys.txt"
    props.write_text("".join(f"{k}={v}\n" for k, v in catalog_props.items()))
    keys_file.write_text("".join(f"{k}\n" for k in keys))
    try:
        cmd = [*java, CATALOG, str(props), TABLE, column, str(keys_file)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        props.unlink()
        keys_file.unlink()


# ------------------------------------------------------------------------------------------------
# read
# ------------------------------------------------------------------------------------------------


def read(repeat: int) -> None:
    import icefloe
    import icefloe.spark
    import read_bench

    with s3_stack() as (server, proxy):
        db = fresh_db("read-catalog")
        spark = bench_session(
            "icefloe-s3-read-bench",
            read_bench.WAREHOUSE,
            **{"spark.jars": ",".join(oracle_jars(*JARS))},
            **spark_catalog_conf(db, server.endpoint),
        )
        spark.sparkContext.setLogLevel("ERROR")

        # -- the tables: on S3 (built now: the server starts empty), on local disk (cached) --
        t0 = time.perf_counter()
        read_bench.build_table(spark)
        t_local = time.perf_counter() - t0
        q = f"{CATALOG}.{TABLE}"
        t0 = time.perf_counter()
        create_orders_table(spark, q, ROWS, files=4)
        spark.sql(f"DELETE FROM {q} WHERE order_id % 10 = 3")
        commit_eq_delete(
            java_catalog_properties(db, server.endpoint), "order_id", (k for k in range(ROWS) if k % 10 == 7)
        )
        print(f"built the S3 table in {time.perf_counter() - t0:.1f} s (local table: {t_local:.1f} s)")

        def snapshots(qualified: str) -> tuple[int, int]:
            ids = [
                r.snapshot_id
                for r in spark.sql(
                    f"SELECT snapshot_id FROM {qualified}.snapshots ORDER BY committed_at"
                ).collect()
            ]
            return ids[-2], ids[-1]

        s3_snaps, local_snaps = snapshots(q), snapshots(f"oracle.{TABLE}")
        cat = icefloe_catalog(db, server, server.endpoint)
        local_catalog = icefloe.load_catalog("local", type="filesystem", warehouse=str(read_bench.WAREHOUSE))
        local_table = local_catalog.load_table(TABLE)
        s3_table = cat.load_table(TABLE)
        kinds = ("data", "position-delete", "equality-delete")
        for content, kind in enumerate(kinds):
            sizes = [
                r[0]
                for r in spark.sql(
                    f"SELECT file_size_in_bytes FROM {q}.files WHERE content = {content}"
                ).collect()
            ]
            listed = ", ".join(mb(s) for s in sorted(sizes, reverse=True))
            print(f"S3 table: {len(sizes)} {kind} files, {mb(sum(sizes))} MB ({listed} MB)")
        rows: list[tuple[str, float, float, str]] = []
        counts: list[tuple[str, Counts, Counts]] = []
        cols = ("order_id", "amount")

        # -- in process: raw pyarrow (no deletes), local vs S3 --
        data_files = [r.file_path for r in spark.sql(f"SELECT file_path FROM {q}.data_files").collect()]
        local_files = [
            r.file_path.removeprefix("file:")
            for r in spark.sql(f"SELECT file_path FROM oracle.{TABLE}.data_files").collect()
        ]

        def pyarrow_s3(fs: pafs.FileSystem) -> Callable[[], pa.Table]:
            keys = [f.removeprefix("s3://") for f in data_files]
            return lambda: pa.concat_tables(pq.read_table(k, columns=list(cols), filesystem=fs) for k in keys)

        def pyarrow_local() -> pa.Table:
            return pa.concat_tables(pq.read_table(p, columns=list(cols)) for p in local_files)

        s3fs = s3_filesystem(server.endpoint)
        for _ in range(2):
            pyarrow_local(), pyarrow_s3(s3fs)()
        (lb, lm, lt), (sb, sm, st) = best_interleaved(pyarrow_local, pyarrow_s3(s3fs), repeat)
        assert lt.num_rows == st.num_rows == ROWS, (lt.num_rows, st.num_rows)
        rows.append(("raw pyarrow, 2 columns, no deletes, local disk", lb, lm, f"{lt.num_rows} rows"))
        rows.append(("raw pyarrow, 2 columns, no deletes, S3", sb, sm, f"{sb / lb:.2f}x local"))

        # -- in process: icefloe to_arrow, local vs S3, both snapshots --
        results: dict[str, tuple[int, float]] = {}
        in_process_ratio: dict[str, tuple[float, float]] = {}
        for i, label in enumerate(("pos deletes", "pos + eq deletes")):
            local_scan = local_table.scan(selected_fields=cols, snapshot_id=local_snaps[i])
            s3_scan = s3_table.scan(selected_fields=cols, snapshot_id=s3_snaps[i])
            for _ in range(2):
                local_scan.to_arrow(), s3_scan.to_arrow()
            (lb, lm, lt), (sb, sm, st) = best_interleaved(local_scan.to_arrow, s3_scan.to_arrow, repeat)
            got = [(t.num_rows, pc.sum(t.column("amount")).as_py()) for t in (lt, st)]
            assert got[0][0] == got[1][0] and abs(got[0][1] - got[1][1]) < 1e-6 * abs(got[0][1]), got
            results[label] = got[1]
            rows.append((f"icefloe to_arrow, {label}, local disk", lb, lm, f"{lt.num_rows} rows"))
            rows.append((f"icefloe to_arrow, {label}, S3", sb, sm, f"{sb / lb:.2f}x local (bar 1.5x)"))
            in_process_ratio[label] = (sb / lb, sm / lm)

        # -- on Spark: Java vs icefloe, each query from the table's name (plan + read), on S3 and
        # on local disk (the four alternating) --
        local_q = f"oracle.{TABLE}"

        def java_df(name: str, snap: int) -> Any:
            return spark.sql(f"SELECT order_id, amount FROM {name} VERSION AS OF {snap}")

        def ice_df(catalog: Any, fields: tuple[str, ...], snap: int) -> Any:
            return icefloe.spark.read(
                spark, catalog.load_table(TABLE), selected_fields=fields, snapshot_id=snap
            )

        def java_count(name: str, snap: int) -> Any:
            return java_df(name, snap).count()

        def ice_count(catalog: Any, snap: int) -> Any:
            return ice_df(catalog, (), snap).count()

        def java_sum(name: str, snap: int) -> Any:
            return java_df(name, snap).agg({"amount": "sum"}).collect()[0][0]

        def ice_sum(catalog: Any, snap: int) -> Any:
            return ice_df(catalog, ("amount",), snap).agg({"amount": "sum"}).collect()[0][0]

        # The driver's part of an icefloe query (load the table, plan, build the DataFrame).
        for i, label in enumerate(("pos", "pos+eq")):
            plan_local = partial(ice_df, local_catalog, ("amount",), local_snaps[i])
            plan_s3 = partial(ice_df, cat, ("amount",), s3_snaps[i])
            for _ in range(WARMUP):
                plan_local(), plan_s3()
            (lb, lm, _), (sb, sm, _) = best_interleaved(plan_local, plan_s3, repeat)
            rows.append((f"icefloe.spark.read, driver only (load + plan), {label}, local", lb, lm, ""))
            rows.append(
                (
                    f"icefloe.spark.read, driver only (load + plan), {label}, S3",
                    sb,
                    sm,
                    f"{sb / lb:.2f}x local",
                )
            )

        spark_ratio: list[float] = []
        spark_median_ratio: list[float] = []
        spark_queries: list[tuple[str, Callable[[], Any], Callable[[Any], Any]]] = []
        for i, label in enumerate(("pos", "pos+eq")):
            n, s = results["pos deletes" if label == "pos" else "pos + eq deletes"]
            queries = [("count(*)", java_count, ice_count), ("sum(amount)", java_sum, ice_sum)]
            for what, java_q, ice_q in queries:
                fns: list[Callable[[], Any]] = [
                    partial(java_q, q, s3_snaps[i]),
                    partial(ice_q, cat, s3_snaps[i]),
                    partial(java_q, local_q, local_snaps[i]),
                    partial(ice_q, local_catalog, local_snaps[i]),
                ]
                floor = what == "sum(amount)" and label == "pos"
                if floor:
                    # What Spark costs to take this many rows out of mapInArrow with no reading
                    # at all (read_bench's floor): batches made in the worker, same partitions.
                    parts = ice_df(cat, ("amount",), s3_snaps[i]).rdd.getNumPartitions()
                    fdf = read_bench.ingestion_floor(spark, n, parts)
                    fns.append(partial(lambda df: df.agg({"amount": "sum"}).collect()[0][0], fdf))
                # Warm every engine first (JIT, Python workers, delete caches).
                for _ in range(WARMUP):
                    for fn in fns:
                        fn()
                timed = best_interleaved_n(fns, repeat)
                (jb, jm, jv), (ib, im, iv), (jlb, jlm, jlv), (ilb, ilm, ilv) = timed[:4]
                if what == "count(*)":
                    assert jv == iv == jlv == ilv == n, (jv, iv, jlv, ilv, n)
                else:
                    for v in (jv, iv, jlv, ilv):
                        assert abs(v - s) < 1e-6 * abs(s), (jv, iv, jlv, ilv, s)
                rows.append(
                    (
                        f"Java (S3FileIO) on Spark {what}, {label}, S3",
                        jb,
                        jm,
                        f"= {jv}; {jb / jlb:.2f}x Java local",
                    )
                )
                rows.append(
                    (
                        f"icefloe on Spark {what}, {label}, S3",
                        ib,
                        im,
                        f"**{ib / jb:.2f}x Java** (bar 0.6x); {ib / ilb:.2f}x icefloe local",
                    )
                )
                rows.append((f"Java on Spark {what}, {label}, local disk", jlb, jlm, ""))
                rows.append(
                    (
                        f"icefloe on Spark {what}, {label}, local disk",
                        ilb,
                        ilm,
                        f"{ilb / jlb:.2f}x Java local",
                    )
                )
                if floor:
                    fb, fm, _ = timed[4]
                    note = f"{n} made-up doubles, {parts} tasks; {fb / jb:.2f}x Java S3"
                    rows.append(("Spark mapInArrow floor: sum, no read", fb, fm, note))
                spark_ratio.append(ib / jb)
                spark_median_ratio.append(im / jm)
                spark_queries.append(
                    (f"{what}, {label}", partial(java_q, q, s3_snaps[i]), partial(ice_q, snap=s3_snaps[i]))
                )

        # -- GET requests and bytes per query, through the counting proxy --
        point_java_at(spark, proxy.endpoint)
        ccat = icefloe_catalog(db, server, proxy.endpoint)
        pfs = s3_filesystem(proxy.endpoint)
        counts.append(("raw pyarrow, 2 columns, no deletes", *counted(proxy, pyarrow_s3(pfs))))
        for i, label in enumerate(("pos deletes", "pos + eq deletes")):
            scan = ccat.load_table(TABLE).scan(selected_fields=cols, snapshot_id=s3_snaps[i])
            counts.append((f"icefloe to_arrow, {label}", *counted(proxy, scan.to_arrow)))
        for i, label in enumerate(("pos", "pos+eq")):
            plan = partial(ice_df, ccat, ("amount",), s3_snaps[i])
            counts.append((f"icefloe.spark.read, driver only, {label}", *counted(proxy, plan)))
        for what, java_query, ice_query in spark_queries:
            counts.append((f"Java on Spark {what}", *counted(proxy, java_query)))
            counts.append((f"icefloe on Spark {what}", *counted(proxy, partial(ice_query, ccat))))

        print(f"\nS3 read benchmark: {ROWS:,} rows, moto_server on localhost, best of {repeat}", end="")
        print(f" after {WARMUP} warm-up runs (Spark), 2 (in process)")
        print_table("times", rows)
        print(
            "\nrequests per query through the counting proxy "
            "(second run; first run in brackets if different)\n"
        )
        print(f"| {'query':<40} | GET requests | GET MB | GET s in the server | other requests |")
        print(f"|{'-' * 42}|-------------:|-------:|--------------------:|----------------|")
        for what, first, second in counts:
            g, gb = second.requests.get("GET", 0), second.bytes_out.get("GET", 0)
            fg, fgb = first.requests.get("GET", 0), first.bytes_out.get("GET", 0)
            gs = f"{g}" + (f" ({fg})" if fg != g else "")
            bs = mb(gb) + (f" ({mb(fgb)})" if mb(fgb) != mb(gb) else "")
            secs = f"{second.micros.get('GET', 0) / 1e6:.2f}"
            print(f"| {what:<40} | {gs:>12} | {bs:>6} | {secs:>19} | {other_requests(second, 'GET')} |")
        worst = max(in_process_ratio.values())
        in_ok = "met" if worst[0] <= 1.5 else "missed"
        spark_ok = "met" if max(spark_ratio) <= 0.6 else "missed"
        print(
            f"\nin process S3 / local disk: pos {in_process_ratio['pos deletes'][0]:.2f}x, "
            f"pos+eq {in_process_ratio['pos + eq deletes'][0]:.2f}x of best times; worst median "
            f"{max(m for _, m in in_process_ratio.values()):.2f}x (bar 1.5x: {in_ok})"
        )
        print(
            f"on Spark icefloe / Java: worst {max(spark_ratio):.2f}x of best times, "
            f"{max(spark_median_ratio):.2f}x of medians (bar 0.6x: {spark_ok})"
        )
        spark.stop()


# ------------------------------------------------------------------------------------------------
# write
# ------------------------------------------------------------------------------------------------


def write(repeat: int) -> None:
    import icefloe
    import icefloe.spark
    import write_bench

    write_bench.make_input()
    local_warehouse = CACHE / "oracle-warehouse"
    shutil.rmtree(local_warehouse, ignore_errors=True)
    local_warehouse.mkdir(parents=True)
    with s3_stack() as (server, proxy):
        db = fresh_db("write-catalog")
        spark = bench_session(
            "icefloe-s3-write-bench",
            local_warehouse,
            "6g",
            **{"spark.jars": ",".join(oracle_jars(*JARS)), "spark.sql.shuffle.partitions": "2"},
            **spark_catalog_conf(db, server.endpoint),
        )
        spark.sparkContext.setLogLevel("ERROR")
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.db")
        spark.sql("CREATE NAMESPACE IF NOT EXISTS oracle.db")
        cat = icefloe_catalog(db, server, server.endpoint)
        local_cat = icefloe.load_catalog("local", type="filesystem", warehouse=str(local_warehouse))
        df = spark.read.parquet(str(write_bench.INPUT)).repartition(2).cache()
        assert df.count() == ROWS

        def fresh_table(qualified: str) -> None:
            spark.sql(f"DROP TABLE IF EXISTS {qualified} PURGE")
            if qualified.startswith("oracle."):
                shutil.rmtree(local_warehouse / "db" / qualified.rsplit(".", 1)[1], ignore_errors=True)
            spark.sql(
                f"CREATE TABLE {qualified} ({write_bench.DDL}) USING iceberg "
                f"PARTITIONED BY ({write_bench.PARTITIONED_BY}) TBLPROPERTIES ('format-version'='2')"
            )

        def java(qualified: str) -> None:
            df.writeTo(qualified).append()

        def ours(catalog: Any, qualified: str) -> None:
            icefloe.spark.append(df, catalog.load_table(qualified.split(".", 1)[1]))

        # The S3 pair, and the same two writes to local disk (Java's HadoopCatalog, icefloe's
        # filesystem catalog): what the server adds to each writer.
        writers: dict[str, tuple[str, Callable[[str], None]]] = {
            "java": (f"{CATALOG}.db.java_t", java),
            "icefloe": (f"{CATALOG}.db.icefloe_t", partial(ours, cat)),
            "java local": ("oracle.db.java_t", java),
            "icefloe local": ("oracle.db.icefloe_t", partial(ours, local_cat)),
        }
        times: dict[str, list[float]] = {name: [] for name in writers}
        for i in range(repeat + 1):  # interleaved, so background noise hits all of them
            for name, (qualified, fn) in writers.items():
                fresh_table(qualified)
                t0 = time.perf_counter()
                fn(qualified)
                if i:  # the first round warms up (JIT, class loading, Python workers)
                    times[name].append(time.perf_counter() - t0)

        j, o = spark.table(f"{CATALOG}.db.java_t"), spark.table(f"{CATALOG}.db.icefloe_t")
        assert j.count() == o.count() == ROWS
        assert j.exceptAll(o).count() == 0 and o.exceptAll(j).count() == 0
        parts = "SELECT partition, record_count FROM {}.db.{}.partitions"
        pj = sorted(tuple(r) for r in spark.sql(parts.format(CATALOG, "java_t")).collect())
        po = sorted(tuple(r) for r in spark.sql(parts.format(CATALOG, "icefloe_t")).collect())
        assert pj == po, "partition tuples / counts differ"
        files = {
            n: spark.sql(f"SELECT count(*), sum(file_size_in_bytes) FROM {CATALOG}.db.{n}.files").collect()[0]
            for n in ("java_t", "icefloe_t")
        }

        # -- requests and bytes per write, through the counting proxy (one write each) --
        point_java_at(spark, proxy.endpoint)
        ccat = icefloe_catalog(db, server, proxy.endpoint)
        counts: dict[str, Counts] = {}
        for name, (qualified, fn) in (
            ("java", writers["java"]),
            ("icefloe", (writers["icefloe"][0], partial(ours, ccat))),
        ):
            fresh_table(qualified)
            proxy.reset()
            fn(qualified)
            counts[name] = proxy.counts()

        best_s = {name: min(t) for name, t in times.items()}
        median_s = {name: statistics.median(t) for name, t in times.items()}
        bj, bo, mj, mo = best_s["java"], best_s["icefloe"], median_s["java"], median_s["icefloe"]
        print(
            f"\nS3 write: {ROWS:,} rows into {write_bench.PARTITIONED_BY} ({len(pj)} partitions), "
            f"moto_server on localhost, local[2], best of {repeat}:"
        )
        print(f"{'writer':<40}{'best s':>9}{'median s':>10}{'files':>7}{'MB':>8}{'ratio':>8}")
        for label, key, name in (
            ("Iceberg Java writeTo().append(), S3FileIO", "java_t", "java"),
            ("icefloe.spark.append, S3", "icefloe_t", "icefloe"),
        ):
            n, size = files[key]
            b, m = best_s[name], median_s[name]
            print(f"{label:<40}{b:>9.2f}{m:>10.2f}{n:>7}{mb(size):>8}{b / bj:>8.2f}")
        for label, name in (
            ("Iceberg Java, local disk", "java local"),
            ("icefloe, local disk", "icefloe local"),
        ):
            b, m, s3 = best_s[name], median_s[name], best_s[name.split()[0]]
            ratio = b / best_s["java local"]
            print(f"{label:<40}{b:>9.2f}{m:>10.2f}{'':>7}{'':>8}{ratio:>8.2f}  (on S3: {s3 / b:.2f}x this)")
        print("\nrequests per write through the counting proxy:")
        for name, c in counts.items():
            print(f"  {name}: {c.summary()}; bodies signed as {dict(c.payloads)}")
        print(
            f"bar: icefloe <= 0.5x Java -> {'met' if bo <= 0.5 * bj else 'missed'} "
            f"({bo / bj:.2f}x of best times, {mo / mj:.2f}x of medians)"
        )
        spark.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("read", "write"))
    parser.add_argument(
        "--repeat", type=int, default=None, help="timed runs (BENCH_REPEAT; read 10, write 3)"
    )
    args = parser.parse_args()
    default = 10 if args.mode == "read" else 3
    repeat = args.repeat or int(os.environ.get("BENCH_REPEAT", default))
    (read if args.mode == "read" else write)(repeat)


if __name__ == "__main__":
    main()
