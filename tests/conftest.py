"""Shared fixtures: one SparkSession with Apache Iceberg Java (the oracle) for the whole run.

- ``warehouse``: a session-scoped folder; Spark's catalog ``oracle`` (Iceberg SparkCatalog,
  type hadoop) and icefloe's filesystem catalog both point at it, so a table ``db.t`` is the same
  table for both.
- ``spark``: local[2], UI off, two shuffle partitions, UTC, Arrow enabled, the oracle jar from
  ``ICEFLOE_ORACLE_JAR`` (the Makefile's ``test-python`` sets it; a missing jar is an error,
  never a skip).
- ``oracle``: ``tests.oracle.Oracle`` on that session.
- ``table_name``: a fresh ``db.t_<hex>`` identifier per test (the warehouse is shared).
- ``catalog``: ``icefloe.load_catalog("local", type="filesystem", warehouse=<warehouse>)``.
- ``postgres``: a real Postgres server for the run (its URI); tests make their own databases.
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Rows are compared in UTC: naive timestamps from Spark are local times of this process.
os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()

sys.path.insert(0, str(Path(__file__).resolve().parent))

from oracle import Oracle, oracle_session_conf, side_jar

NAMESPACE = "db"


def pytest_configure(config: pytest.Config) -> None:
    # py4j (PySpark's bridge to the JVM) leaves client sockets for the garbage collector; with
    # filterwarnings=error their ResourceWarnings would fail whichever test happens to be running.
    config.addinivalue_line("filterwarnings", "ignore:unclosed <socket.socket:ResourceWarning")
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning",
    )


# PySpark-4-only test files (the data source API): `make test` runs them in its PySpark 4 pass.
PYSPARK_MAJOR = int(__import__("pyspark").__version__.split(".")[0])
collect_ignore_glob = ["test_spark4_*.py"] if PYSPARK_MAJOR < 4 else []


def oracle_jar() -> str:
    jar = os.environ.get("ICEFLOE_ORACLE_JAR")
    if not jar:
        pytest.fail(
            "ICEFLOE_ORACLE_JAR is not set: it must name the iceberg-spark-runtime-3.5_2.12 jar "
            "(run the suite with `make test-python`, which fetches it with `make oracle` and sets it)",
            pytrace=False,
        )
    path = Path(jar)
    if not path.is_file():
        pytest.fail(f"ICEFLOE_ORACLE_JAR={jar} does not exist (run `make oracle`)", pytrace=False)
    return str(path.resolve())


def extra_jars(runtime_jar: str) -> list[str]:
    """The jars `make oracle` puts next to the runtime: S3FileIO's AWS SDK bundle and the
    JDBC drivers of Java's JdbcCatalog (sqlite, Postgres). Missing ones fail, never skip."""
    found = []
    for pattern in ("iceberg-aws-bundle-*.jar", "sqlite-jdbc-*.jar", "postgresql-*.jar"):
        jar = side_jar(runtime_jar, pattern)
        if jar is None:
            pytest.fail(f"{pattern} is missing next to {runtime_jar} (run `make oracle`)", pytrace=False)
        found.append(jar)
    return found


def java_core_helper(class_name: str) -> list[str]:
    """The `java` command running tests/java/<class_name>.java, a small program on Iceberg
    Java's core API (compiled once into .cache/java against the oracle jar and Spark's jars)."""
    import subprocess

    import pyspark

    src = Path(__file__).parent / "java" / f"{class_name}.java"
    out = Path(__file__).resolve().parent.parent / ".cache" / "java" / Path(oracle_jar()).stem
    classpath = f"{oracle_jar()}:{Path(pyspark.__file__).parent / 'jars'}/*"
    cls = out / f"{class_name}.class"
    if not cls.exists() or cls.stat().st_mtime < src.stat().st_mtime:
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["javac", "-nowarn", "-cp", classpath, "-d", str(out), str(src)], check=True, capture_output=True
        )
    return ["java", "-Xmx2g", "-cp", f"{out}:{classpath}", class_name]


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared warehouse folder of the ``oracle`` Spark catalog and icefloe's filesystem catalog."""
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="session")
def spark(warehouse: Path) -> Iterator[Any]:
    jar = oracle_jar()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-tests")
        .config("spark.jars", ",".join([jar, *extra_jars(jar)]))
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
    )
    for key, value in oracle_session_conf(warehouse).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    session.sql(f"CREATE NAMESPACE IF NOT EXISTS oracle.{NAMESPACE}")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def oracle(spark: Any, warehouse: Path) -> Oracle:
    return Oracle(spark, str(warehouse))


def new_table_name(prefix: str = "t") -> str:
    return f"{NAMESPACE}.{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def table_name() -> str:
    """A fresh ``db.t_<hex>`` identifier (no table is created)."""
    return new_table_name()


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real S3-compatible server (moto, its own process) with the bucket `icefloe-tests`."""
    from servers.s3 import BUCKET, run_s3

    for server in run_s3(tmp_path_factory.mktemp("s3")):
        server.create_bucket(BUCKET)
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A real Postgres server (its own process) for the whole run; its URI. Each test makes its
    own database with `servers.postgres.new_database`."""
    import tempfile

    from servers.postgres import run_postgres

    # Not under tmp_path_factory: its folders are private to root, and the server runs as `postgres`.
    with tempfile.TemporaryDirectory() as root:
        yield from run_postgres(Path(root))


@pytest.fixture(scope="session")
def catalog(warehouse: Path) -> Any:
    """icefloe's filesystem catalog on the shared warehouse."""
    import icefloe

    return icefloe.load_catalog("local", type="filesystem", warehouse=str(warehouse))


@pytest.fixture(scope="session")
def rest_uri(s3: Any) -> Iterator[str]:
    """A real Iceberg REST server (Apache Iceberg's RESTCatalogServer, JdbcCatalog behind it,
    the warehouse on the `s3` server) for the whole run; its URI. Tests use fresh namespaces."""
    import tempfile

    from servers.rest import run_rest
    from servers.s3 import BUCKET

    with tempfile.TemporaryDirectory() as d:
        yield from run_rest(Path(d), s3, f"s3://{BUCKET}/rest")
