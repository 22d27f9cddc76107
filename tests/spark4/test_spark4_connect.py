"""icefloe from a Spark Connect client (PySpark 4, collected only there): a Connect server
started from the PySpark package (its own JVM, with Iceberg Java's runtime as the oracle's
catalog and Hadoop's S3A connector), and a client process running
`tests/support/workers/connect_client.py` — `icefloe.spark.read`, `append`, `delete` and the
`format("icefloe")` data source, each checked by Java's reads; `merge`, `read_changelog` and
`batch_writer` from clients of their own (`_CLIENTS`); and a read of tables on the S3 server
whose delete-free files the server's Spark reads through S3A."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import support.workers
from support.oracle import oracle_session_conf
from support.servers.spark_connect import run_connect_server
from support.session import extra_jars, new_table_name, oracle_jar, s3a_jars

pytestmark = [pytest.mark.spark, pytest.mark.interop]

CLIENT = Path(support.workers.__file__).parent / "connect_client.py"


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A Spark Connect server on a free localhost port; (its URL, the oracle warehouse)."""
    root = tmp_path_factory.mktemp("connect")
    warehouse = root / "warehouse"
    warehouse.mkdir()
    jar = oracle_jar()
    conf = {
        **oracle_session_conf(warehouse),
        # Hadoop's S3A connector first (its AWS SDK before the one in Iceberg's aws bundle)
        "spark.jars": ",".join([*s3a_jars(), jar, *extra_jars(jar)]),
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.sql.shuffle.partitions": "2",
    }
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    # The server starts a Python process per foreachBatch query and gives it a hard-coded 10 s
    # to connect back (Spark 4.1's PythonWorkerFactory.createSimpleWorker). Its imports cost
    # ~2.1 CPU s compiled from source (these machines set PYTHONDONTWRITEBYTECODE) and ~0.7 s
    # from bytecode: the server's Python processes keep bytecode in a folder of this run's,
    # compiled once here, before the server starts.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    subprocess.run(
        [sys.executable, "-c", "import pyspark.sql.connect.streaming.worker.foreach_batch_worker"],
        env=env,
        check=True,
    )
    with run_connect_server(root, conf, env) as url:
        yield url, warehouse


def test_icefloe_from_a_connect_client(connect_server: tuple[str, Path], tmp_path: Path) -> None:
    url, warehouse = connect_server
    res = subprocess.run(
        [sys.executable, str(CLIENT), url, str(warehouse), new_table_name("connect")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env=dict(os.environ, PYTHONPATH=str(CLIENT.parent)),
    )
    assert res.returncode == 0, f"client failed:\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}"
    assert res.stdout.strip().splitlines()[-1] == "OK"


# Clients of the tests below, run as `python -c` with argv (url, warehouse, table name): each
# checks icefloe against Iceberg Java in the Connect server and prints OK.
_PRELUDE = """
import sys
import icefloe.spark
from icefloe import load_catalog
from pyspark.sql import SparkSession

url, warehouse, name = sys.argv[1:4]
spark = SparkSession.builder.remote(url).getOrCreate()
assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
spark.sql("CREATE NAMESPACE IF NOT EXISTS oracle.db")
catalog = load_catalog("local", type="filesystem", warehouse=warehouse)


def rows(df):
    return sorted((tuple(r) for r in df.collect()), key=str)
"""

_CLIENTS = {
    # MergeBuilder._target_pruning and _keyed_upsert.matched_keys collect the source's keys as
    # Arrow (classic PySpark's `_collect_as_arrow` is missing over Connect).
    "merge": """
java, ice = f"oracle.{name}_java", f"{name}_ice"
for t in (java, f"oracle.{ice}"):
    spark.sql(f"CREATE TABLE {t} (id bigint, s string) USING iceberg")
    spark.sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (4, 'd')")
src = spark.createDataFrame([(1, "A"), (3, "c")], "id bigint, s string")
src.createOrReplaceTempView("src")
spark.sql(f"MERGE INTO {java} t USING src s ON t.id = s.id "
          "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *")
# update_all + insert_all on unique keys: the keyed-upsert path (matched_keys).
icefloe.spark.merge(src, catalog.load_table(ice), "target.id = source.id") \
    .when_matched_update_all().when_not_matched_insert_all().execute()
assert rows(spark.table(f"oracle.{ice}")) == rows(spark.table(java)), rows(spark.table(f"oracle.{ice}"))
# A conditional clause: the join path, pruned by the source's keys.
spark.sql(f"MERGE INTO {java} t USING src s ON t.id = s.id "
          "WHEN MATCHED AND s.s = 'A' THEN DELETE WHEN NOT MATCHED THEN INSERT *")
icefloe.spark.merge(src, catalog.load_table(ice), "target.id = source.id") \
    .when_matched_delete("source.s = 'A'").when_not_matched_insert_all().execute()
assert rows(spark.table(f"oracle.{ice}")) == rows(spark.table(java)), rows(spark.table(f"oracle.{ice}"))
""",
    # A plan past INLINE_UNIT_BYTES travels as rows of units (no SparkContext over Connect).
    "changelog": """
import icefloe.spark.changelog

icefloe.spark.changelog.INLINE_UNIT_BYTES = 0
spark.sql(f"CREATE TABLE oracle.{name} (id bigint, p int) USING iceberg PARTITIONED BY (p)")
spark.range(0, 6).selectExpr("id", "cast(id % 3 as int) as p").writeTo(f"oracle.{name}").append()
spark.sql(f"DELETE FROM oracle.{name} WHERE id = 4")
view = spark.sql(f"CALL oracle.system.create_changelog_view(table => '{name}')").collect()[0][0]
cols = ["id", "p", "_change_type", "_change_ordinal"]
ice = icefloe.spark.read_changelog(spark, catalog.load_table(name))
assert rows(ice.select(cols)) == rows(spark.table(view).select(cols)), rows(ice.select(cols))
""",
    # foreachBatch pickles the writer for the server's Python process. Spark 4.1's server gives
    # that process a hard-coded 10 s to connect back (PythonWorkerFactory.createSimpleWorker);
    # with both test passes on two cores, its imports missed that (CI stops 49 and 51: "Python
    # worker failed to connect back", the second time on all three tries while its imports
    # compiled from source). The server's processes now import from bytecode (~0.7 CPU s,
    # `connect_server`), and only that refusal of `start()` is retried, twice, after a pause;
    # any other error, and any error of the query itself, fails the test.
    "batch_writer": """
import os
import time

from pyspark.errors.exceptions.connect import SparkException


def start(stream):
    for attempt in range(3):
        try:
            return stream.start()
        except SparkException as e:
            if "Python worker failed to connect back" not in str(e) or attempt == 2:
                raise
            print(f"start() refused ({attempt + 1}): the worker missed Spark's 10 s", file=sys.stderr)
            time.sleep(15)

src, dst = f"oracle.{name}_src", f"{name}_dst"
spark.sql(f"CREATE TABLE {src} (id bigint) USING iceberg")
spark.sql(f"CREATE TABLE oracle.{dst} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2')")
spark.sql(f"INSERT INTO {src} VALUES (1), (2)")
writer = icefloe.spark.batch_writer(catalog.load_table(dst), query_id="q1")
for more in ("INSERT INTO {src} VALUES (3)", None):  # a query per run, from one checkpoint
    query = start(
        spark.readStream.format("iceberg").load(src).writeStream.foreachBatch(writer)
        .option("checkpointLocation", os.path.join(os.getcwd(), "checkpoint"))
        .trigger(availableNow=True)
    )
    query.awaitTermination()
    assert query.exception() is None, query.exception()
    if more:
        spark.sql(more.format(src=src))
assert rows(spark.table(f"oracle.{dst}")) == [(1,), (2,), (3,)], rows(spark.table(f"oracle.{dst}"))
snapshots = spark.sql(f"SELECT summary FROM oracle.{dst}.snapshots ORDER BY committed_at")
summaries = [r[0] for r in snapshots.collect()]
assert [s.get("icefloe.streaming.query-id") for s in summaries] == ["q1", "q1"], summaries
""",
}


@pytest.mark.parametrize("client", sorted(_CLIENTS))
def test_icefloe_spark_functions_from_a_connect_client(
    connect_server: tuple[str, Path], tmp_path: Path, client: str
) -> None:
    url, warehouse = connect_server
    code = _PRELUDE + _CLIENTS[client] + '\nprint("OK")\n'
    res = subprocess.run(
        [sys.executable, "-c", code, url, str(warehouse), new_table_name(client)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, f"{client} client failed:\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}"
    assert res.stdout.strip().splitlines()[-1] == "OK"


# The client of the S3 test: argv (url, config JSON). It plans the read of each table over
# Connect with the default minimum mean file size on S3 and without it, and writes the second
# read's rows and plan.
_S3_CLIENT = """
import json, sys
import icefloe, icefloe.spark
import pyarrow.parquet as pq
from icefloe.spark._parquet_source import S3_MIN_MEAN_CONF
from pyspark.sql import SparkSession
url, cfg = sys.argv[1], json.loads(sys.argv[2])
spark = SparkSession.builder.remote(url).getOrCreate()
assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
cat = icefloe.load_catalog(cfg["catalog"], type="sql", uri=cfg["uri"], warehouse=cfg["warehouse"],
                           **cfg["properties"])
out = {}
for i, name in enumerate(cfg["tables"]):
    t = cat.load_table(name)
    default = sorted(set(icefloe.spark.plan_read(spark, t).rust_files.values()))
    spark.conf.set(S3_MIN_MEAN_CONF, "0")
    plan = icefloe.spark.plan_read(spark, t)
    df = plan.frame()
    pq.write_table(df.toArrow(), f"{cfg['out']}/{i}.parquet")
    out[name] = {
        "default_rust_reasons": default,
        "spark_files": plan.spark_files,
        "rust_files": plan.rust_files,
        "inputs": sorted(df.inputFiles()),
        "columns": df.columns,
    }
    spark.conf.unset(S3_MIN_MEAN_CONF)
print(json.dumps(out))
"""


def test_s3_tables_read_through_the_connect_servers_s3a(
    connect_server: tuple[str, Path], s3: Any, spark: Any, tmp_path: Path
) -> None:
    """Over Spark Connect the client cannot ask the server's JVM whether it has S3A: icefloe asks
    the server once per bucket (a read of one object it analyses) and hands it the delete-free
    files as S3A paths with the catalog's settings in the read's options; the server's session
    has no S3 setting. Java (JdbcCatalog, S3FileIO) reads the same rows in the suite's session."""
    import icefloe
    import pyarrow as pa
    import pyarrow.parquet as pq
    from support.catalogs import java_jdbc_s3_catalog_conf, set_java_catalog
    from support.oracle import assert_same_rows
    from support.servers.s3 import BUCKET

    url, _warehouse = connect_server
    run = uuid.uuid4().hex[:10]
    name, db = f"cs3a{run[:6]}", tmp_path / "catalog.db"
    warehouse = f"s3://{BUCKET}/{run}/wh"
    props = s3.properties()
    cat = icefloe.load_catalog(name, type="sql", uri=f"sqlite:///{db}", warehouse=warehouse, **props)
    cat.create_namespace("db")
    t = cat.create_table(
        "db.events",
        pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())]),
        properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
    )
    for k, region in enumerate(("eu", "us", "ap")):
        t.append(pa.table({"id": pa.array(range(k * 50, k * 50 + 40), pa.int64()), "region": [region] * 40}))
    t.delete("id IN (51, 57, 60)")  # position deletes on the us file
    config = {
        "catalog": name,
        "uri": f"sqlite:///{db}",
        "warehouse": warehouse,
        "properties": props,
        "tables": ["db.events"],
        "out": str(tmp_path),
    }
    res = subprocess.run(
        [sys.executable, "-c", _S3_CLIENT, url, json.dumps(config)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, f"client failed:\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}"
    got = json.loads(res.stdout.strip().splitlines()[-1])["db.events"]
    # With the default minimum mean file size over Connect, these small files take the Rust reader.
    assert len(got["default_rust_reasons"]) == 2 and "deletes" in got["default_rust_reasons"], got
    assert any(r.startswith("small files on S3") for r in got["default_rust_reasons"]), got
    # Without it the delete-free files took the server's S3A reader, the one with deletes Rust.
    assert len(got["spark_files"]) == 2 and set(got["rust_files"].values()) == {"deletes"}, got
    assert got["inputs"] == sorted("s3a://" + f.split("://", 1)[1] for f in got["spark_files"]), got
    assert got["columns"] == ["id", "region"]
    java = set_java_catalog(spark, name, java_jdbc_s3_catalog_conf(f"jdbc:sqlite:{db}", warehouse, s3))
    expected = spark.sql(f"SELECT id, region FROM {java}.db.events")
    assert expected.count() == 117
    assert_same_rows(pq.read_table(tmp_path / "0.parquet"), expected, context="read over Connect, S3A")
