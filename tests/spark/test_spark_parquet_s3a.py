"""Spark's own Parquet source reads a table's delete-free files on S3 through Hadoop's S3A
connector, with the catalog's storage settings; without the connector they take the Rust
reader, decided when the read is planned.

The suite's Spark session has no S3A connector: there every file of a table on the S3 server
takes the Rust reader and the read returns Java's rows. A Spark driver of its own
(support/workers/s3a_reader.py) has hadoop-aws and the AWS SDK bundle of its PySpark's Hadoop
release (fetched by `make oracle` from Maven Central) and no Iceberg jar: there the same
tables' delete-free files, `s3://` and `s3a://` ones, take Spark's reader. Nothing but the
catalog's properties tells S3A where the server is or which keys to sign with: the session's
Hadoop configuration has no S3 setting (a read with the default endpoint would go to AWS and
fail). What that driver read equals what Iceberg Java (JdbcCatalog on the same sqlite
catalog, S3FileIO) reads in the suite's session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.partitioning import PartitionField, PartitionSpec
from icefloe.spark import plan_read, read
from icefloe.spark._parquet_source import S3_MIN_MEAN_CONF
from support.catalogs import java_jdbc_s3_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows
from support.servers.s3 import BUCKET, S3Server
from support.session import s3a_jars

pytestmark = [pytest.mark.spark, pytest.mark.interop]

TESTS = Path(__file__).resolve().parents[1]
ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("region", pa.string()),
        pa.field("amount", pa.float64()),
        pa.field("day", pa.date32()),
    ]
)


def _rows(lo: int, hi: int, region: str) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "region": [region] * len(ids),
            "amount": [i / 8 for i in ids],
            "day": pa.array([19000 + i % 5 for i in ids], pa.int32()).cast(pa.date32()),
        },
        schema=ARROW,
    )


def _run_driver(config: dict[str, Any], log: Path) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    with open(log, "wb") as err:
        proc = subprocess.run(
            [sys.executable, "-m", "support.workers.s3a_reader"],
            input=json.dumps(config).encode(),
            stdout=err,
            stderr=err,
            env=env,
            cwd=TESTS,
            timeout=600,
        )
    assert proc.returncode == 0, f"the S3A driver failed:\n{log.read_text()[-6000:]}"
    return json.loads((Path(config["out"]) / "result.json").read_text())


def test_s3_tables_read_through_spark_s3a_with_the_catalogs_settings(
    spark: Any, s3: S3Server, tmp_path: Path
) -> None:
    jars = s3a_jars()
    run = uuid.uuid4().hex[:10]
    catalog_name = f"s3a{run[:6]}"
    db = tmp_path / "catalog.db"
    props = s3.properties()
    tables = {}
    for scheme in ("s3", "s3a"):
        warehouse = f"{scheme}://{BUCKET}/{run}/{scheme}-wh"
        cat = icefloe.load_catalog(
            catalog_name, type="sql", uri=f"sqlite:///{db}", warehouse=warehouse, **props
        )
        if scheme == "s3":
            cat.create_namespace("db")
        name = f"db.events_{scheme}"
        t = cat.create_table(
            name,
            ARROW,
            # `id_bucket=` in the paths: a column Spark would add if it inferred Hive partitions
            partition_spec=PartitionSpec(
                PartitionField(2, 1000, "identity", "region"),
                PartitionField(1, 1001, "bucket[2]", "id_bucket"),
            ),
            properties={"format-version": "2", "write.delete.mode": "merge-on-read"},
        )
        for k, region in enumerate(("eu", "us", "ap", "eu", "ap")):
            t.append(_rows(k * 100, k * 100 + 60, region))
        t.delete("region = 'us' AND id IN (101, 107, 130, 150)")  # position deletes on the us file(s)
        tables[name] = (cat.load_table(name), warehouse)

    # The suite's session has no S3A connector: every file takes the Rust reader, planned so.
    for name, (t, _warehouse) in tables.items():
        p = plan_read(spark, t)
        assert p.spark_files == [] and p.scan_reason is None, name
        reasons = set(p.rust_files.values())
        scheme = name.rsplit("_", 1)[1]
        assert f"Spark has no file system for {scheme}:" in reasons, reasons

    out = tmp_path / "out"
    out.mkdir()
    result = _run_driver(
        {
            "jars": jars,
            "catalog": catalog_name,
            "uri": f"sqlite:///{db}",
            "warehouse": tables["db.events_s3"][1],
            "properties": props,
            "bucket": BUCKET,
            "tables": list(tables),
            "out": str(out),
            "spark_conf": {S3_MIN_MEAN_CONF: "0"},  # the test's files are small
        },
        tmp_path / "driver.log",
    )
    secret = props["s3.secret-access-key"]
    for i, (name, (t, warehouse)) in enumerate(tables.items()):
        got = result["tables"][name]
        scheme = name.rsplit("_", 1)[1]
        # The delete-free files (eu, ap) take Spark's reader; the us file keeps its deletes in Rust.
        assert got["scan_reason"] is None
        assert got["spark_files"] and all(f.startswith(f"{scheme}://") for f in got["spark_files"]), got
        assert all("region=us" not in f for f in got["spark_files"])
        assert set(got["rust_files"].values()) == {"deletes"}, got["rust_files"]
        # With the default minimum mean file size, these small files on S3 take the Rust reader.
        assert len(got["default_rust_reasons"]) == 2 and "deletes" in got["default_rust_reasons"]
        assert got["default_rust_reasons"][1].startswith("small files on S3"), got["default_rust_reasons"]
        # Spark's file index takes the plan's paths and sizes (from a file stream sink log) and
        # infers no partition column from the paths.
        assert got["columns"] == ["id", "region", "amount", "day"]
        # Spark's Parquet source read exactly those files (only S3A opens s3a://), with this
        # read's own per-bucket keys (the secret among them, never printed).
        assert "Scan parquet" in got["plan"] and "MetadataLogFileIndex" in got["plan"], got["plan"]
        expected_files = sorted("s3a://" + f.split("://", 1)[1] for f in got["spark_files"])
        assert got["input_files"] == expected_files
        assert secret not in got["plan"]
        assert f"fs.s3a.bucket.{BUCKET}.endpoint" in got["option_keys"]
        assert f"fs.s3a.bucket.{BUCKET}.secret.key" in got["option_keys"]
        # Iceberg Java (JdbcCatalog on the sqlite file, S3FileIO) reads the same rows.
        java = set_java_catalog(
            spark, catalog_name, java_jdbc_s3_catalog_conf(f"jdbc:sqlite:{db}", warehouse, s3)
        )
        expected = spark.sql(f"SELECT id, region, amount, day FROM {java}.{name}")
        assert_same_rows(pq.read_table(out / f"{i}.parquet"), expected, context=f"{name} read with S3A")
        assert_same_rows(read(spark, t), expected, context=f"{name} read in Rust")
    # No status call per file on the driver: no S3A file system was even made before the queries.
    assert result["s3a_used_before_queries"] is False
    # The bucket's S3A file system got the catalog's endpoint and keys from the read's options;
    # nothing was set on the session's Hadoop configuration.
    assert result["s3a"]["class"] == "org.apache.hadoop.fs.s3a.S3AFileSystem"
    assert result["s3a"]["endpoint"] == props["s3.endpoint"]
    assert result["s3a"]["access_key_is_catalogs"] is True
    assert result["s3a"]["session_conf_has_bucket_keys"] is False


def test_storage_settings_become_per_bucket_s3a_options() -> None:
    from icefloe.spark._s3a import s3a_options, s3a_path

    k = "fs.s3a.bucket.bkt."
    assert s3a_options(
        {
            "s3.endpoint": "http://127.0.0.1:9000",
            "s3.access-key-id": "AK",
            "s3.secret-access-key": "SK",
            "s3.session-token": "TOK",
            "client.region": "eu-west-1",
            "s3.path-style-access": "true",
            "s3.proxy-uri": "https://proxy:3128",
        },
        "bkt",
    ) == {
        k + "endpoint": "http://127.0.0.1:9000",
        k + "connection.ssl.enabled": "false",
        k + "endpoint.region": "eu-west-1",
        k + "path.style.access": "true",
        k + "access.key": "AK",
        k + "secret.key": "SK",
        k + "session.token": "TOK",
        k + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
        k + "proxy.host": "proxy",
        k + "proxy.port": "3128",
        k + "proxy.secured": "true",
    }
    assert s3a_options({"s3.anonymous": "true", "s3.force-virtual-addressing": "true"}, "bkt") == {
        k + "aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider",
        k + "path.style.access": "false",
    }
    assert s3a_options({}, "bkt") == {}  # the environment's credentials, as the Rust reader's
    assert isinstance(s3a_options({"s3.access-key-id": "AK"}, "bkt"), str)
    assert isinstance(s3a_options({"s3.proxy-uri": "http://u:p@proxy:1"}, "bkt"), str)
    assert s3a_path("s3://b/k=1/f.parquet") == "s3a://b/k=1/f.parquet" == s3a_path("s3a://b/k=1/f.parquet")


def test_a_bucket_spark_opened_with_other_settings_takes_the_rust_reader(spark: Any) -> None:
    """Hadoop keeps one S3A file system per bucket and JVM, made by its first use: a second set
    of settings for the same bucket in one application would be ignored, so it is refused."""
    from icefloe.spark._parquet_source import _bucket_options

    bucket = f"bkt-{uuid.uuid4().hex[:8]}"
    first = _bucket_options(spark, bucket, {"s3.endpoint": "http://127.0.0.1:1"})
    assert isinstance(first, dict) and first == _bucket_options(
        spark, bucket, {"s3.endpoint": "http://127.0.0.1:1"}
    )
    other = _bucket_options(spark, bucket, {"s3.endpoint": "http://127.0.0.1:2"})
    assert isinstance(other, str) and "other storage settings" in other


def test_file_list_uris_name_the_files_hadoop_names(spark: Any) -> None:
    """The file list handed to Spark names each file by the URI Hadoop's own Path gives it."""
    from icefloe.spark._parquet_source import _file_uri
    from icefloe.spark._s3a import s3a_path

    jvm = spark.sparkContext._jvm
    paths = [
        "s3://bkt/wh/db/t/data/k=a b/00000-0.parquet",
        "s3a://bkt/wh/data/ts_hour=2024-01-01-10%3A00/f+1,(2)&x=y;@$!~'*.parquet",
        "s3://bkt/wh/data/s=\u00e9\u6f22 \u00a0/f#1.parquet",
        "/tmp/wh/data/k=%25/f 1.parquet",
        "file:/tmp/wh/data/k=\u00e9/f.parquet",
        "file:///tmp/wh/data/k=1/f.parquet",
    ]
    for p in paths:
        ours = jvm.java.net.URI(_file_uri(p))
        hadoops = jvm.org.apache.hadoop.fs.Path(s3a_path(p) if "://" in p else p).toUri()
        assert (ours.getScheme() or "file", ours.getAuthority() or "", ours.getPath()) == (
            hadoops.getScheme() or "file",
            hadoops.getAuthority() or "",
            hadoops.getPath(),
        ), p


def test_files_spark_would_skip_or_misname_take_the_rust_reader(spark: Any) -> None:
    from icefloe.spark._parquet_source import split_files

    plain, refused = split_files(
        spark,
        [
            ("/tmp/wh/data/_hidden.parquet", 10, 1),
            ("/tmp/wh/data/.hidden.parquet", 10, 1),
            ("/tmp/wh/data/k=1/x.parquet", 10, 1),
            ("file:/tmp/wh//data/y.parquet", 10, 1),
            ("gs://bkt/wh/data/z.parquet", 10, 1),
        ],
        {"gcs.project-id": "p", "s3.endpoint": "http://127.0.0.1:1"},
    )
    assert [p for p, _s, _r in plain.files] == ["/tmp/wh/data/k=1/x.parquet"]
    assert [p for p, _why in refused] == [
        "/tmp/wh/data/_hidden.parquet",
        "/tmp/wh/data/.hidden.parquet",
        "file:/tmp/wh//data/y.parquet",
        "gs://bkt/wh/data/z.parquet",
    ]
    # GCS settings are not handed to Spark's connector (only S3's are): such files stay in Rust.
    assert refused[-1][1] == "the table's storage settings for gs: are not passed to Spark"


def test_a_spark_without_s3a_is_found_by_the_bucket_probe(spark: Any) -> None:
    """Over Spark Connect a bucket is asked of the server by analysing a read of one object; a
    Spark without S3A (the suite's session) answers "no file system", and the files stay in Rust."""
    from icefloe.spark._parquet_source import _connect_opens_bucket

    why = _connect_opens_bucket(
        spark, f"bkt-{uuid.uuid4().hex[:8]}", {"fs.s3a.endpoint": "http://127.0.0.1:1"}
    )
    assert why == "Spark has no file system for s3a: (no S3A connector in its classpath)"
