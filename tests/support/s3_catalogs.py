"""Fixtures of catalogs on the S3 test server: a fresh S3 prefix per test, a Postgres server for
the module, and `java_s3`: icefloe's SqlCatalog and Iceberg Java's JdbcCatalog with S3FileIO
(a Spark catalog) on one Postgres database and one S3 warehouse."""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import icefloe
import pytest
from icefloe.catalog import SqlCatalog

from support.servers.postgres import run_postgres
from support.servers.s3 import BUCKET, SECRET_KEY, S3Server


@pytest.fixture
def prefix() -> str:
    return f"s3://{BUCKET}/{uuid.uuid4().hex[:10]}"


# ---- SQL catalog + S3 against Iceberg Java (JdbcCatalog + S3FileIO) ----
@pytest.fixture(scope="module")
def pg_uri() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as root:
        yield from run_postgres(Path(root))


def set_java_catalog(spark: Any, name: str, s3: S3Server, **catalog: str) -> None:
    """Spark catalog `name`: Iceberg Java's SparkCatalog with S3FileIO on the S3 test server
    (no proxy), and `catalog`'s settings (keys starting with "." after the name)."""
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        **catalog,
        ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        ".s3.endpoint": s3.endpoint,
        ".s3.path-style-access": "true",
        ".s3.access-key-id": s3.properties()["s3.access-key-id"],
        ".s3.secret-access-key": SECRET_KEY,
        ".client.region": "us-east-1",
    }
    for k, v in conf.items():
        spark.conf.set(f"spark.sql.catalog.{name}{k}", v)


@pytest.fixture
def java_s3(spark: Any, s3: S3Server, prefix: str, pg_uri: str) -> tuple[SqlCatalog, str]:
    """icefloe's SQL catalog and a Spark catalog of Iceberg Java's JdbcCatalog with S3FileIO,
    on one Postgres database and one S3 warehouse."""
    name = f"s3java{uuid.uuid4().hex[:6]}"
    warehouse = f"{prefix}/wh"
    host_db = pg_uri.split("@", 1)[1]
    set_java_catalog(
        spark,
        name,
        s3,
        **{
            ".catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            ".uri": f"jdbc:postgresql://{host_db}",
            ".jdbc.user": "postgres",
            ".jdbc.schema-version": "V1",
            ".warehouse": warehouse,
        },
    )
    cat = icefloe.load_catalog(name, type="sql", uri=pg_uri, warehouse=warehouse, **s3.properties())
    assert isinstance(cat, SqlCatalog)
    cat.create_namespace("db")
    return cat, name
