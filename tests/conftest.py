"""Shared fixtures: one SparkSession with Apache Iceberg Java (the oracle) for the whole run.

- ``warehouse``: a session-scoped folder; Spark's catalog ``oracle`` (Iceberg SparkCatalog,
  type hadoop) and icefloe's filesystem catalog both point at it, so a table ``db.t`` is the same
  table for both.
- ``spark``: local[2], UI off, two shuffle partitions, UTC, Arrow enabled, the oracle jar from
  ``ICEFLOE_ORACLE_JAR`` (the Makefile's ``test-python`` sets it; a missing jar is an error,
  never a skip).
- ``oracle``: ``support.oracle.Oracle`` on that session.
- ``table_name``: a fresh ``db.t_<hex>`` identifier per test (the warehouse is shared).
- ``catalog``: ``icefloe.load_catalog("local", type="filesystem", warehouse=<warehouse>)``.
- ``postgres``: a real Postgres server for the run (its URI); tests make their own databases.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Rows are compared in UTC: naive timestamps from Spark are local times of this process.
os.environ["TZ"] = "UTC"
if hasattr(time, "tzset"):
    time.tzset()

# Every JVM the suite starts (Spark sessions, Java helpers, the REST server, the drivers of
# subprocesses) lives seconds to minutes: with C1 alone and the serial collector it spends ~40%
# less CPU than with C2 and G1's threads (tests/write/test_merge_condition.py alone: 71 -> 44
# CPU seconds, 47 -> 38 s), and CPU is what the two-core machine runs short of with five
# sessions side by side. Speed only; the benchmarks leave the JVM's defaults.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")

# `support` (the tests' helper package) is importable: pyproject's pytest `pythonpath` holds tests/.
from support.oracle import Oracle, oracle_session_conf
from support.session import NAMESPACE, PYSPARK_MAJOR, extra_jars, new_table_name, oracle_jar

# Fixtures several test files share, defined in the support package: Java's tables of every
# type (support.java_tables) and the catalogs on the S3 server (support.s3_catalogs).
pytest_plugins = ["support.java_tables", "support.s3_catalogs"]


def pytest_configure(config: pytest.Config) -> None:
    # py4j (PySpark's bridge to the JVM) leaves client sockets for the garbage collector; with
    # filterwarnings=error their ResourceWarnings would fail whichever test happens to be running.
    config.addinivalue_line("filterwarnings", "ignore:unclosed <socket.socket:ResourceWarning")
    config.addinivalue_line(
        "filterwarnings",
        "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning",
    )


# PySpark-4-only test files (the data source API): `make test` runs them in its PySpark 4 pass.
collect_ignore_glob = ["spark4/test_spark4_*.py"] if PYSPARK_MAJOR < 4 else []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The PySpark 4 pass runs the Spark-facing files again for what depends on Spark's version;
    tests marked `one_spark_line` prove what does not, so they run in the PySpark 3.5 pass only
    (deselected here, and counted as such in the pass's summary)."""
    if PYSPARK_MAJOR < 4:
        return
    kept = [item for item in items if item.get_closest_marker("one_spark_line") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


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


@pytest.fixture
def table_name() -> str:
    """A fresh ``db.t_<hex>`` identifier (no table is created)."""
    return new_table_name()


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real S3-compatible server (moto, its own process) with the bucket `icefloe-tests`."""
    from support.servers.s3 import BUCKET, run_s3

    for server in run_s3(tmp_path_factory.mktemp("s3")):
        server.create_bucket(BUCKET)
        yield server


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A real Postgres server (its own process) for the whole run; its URI. Each test makes its
    own database with `servers.postgres.new_database`."""
    import tempfile

    from support.servers.postgres import run_postgres

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

    from support.servers.rest import run_rest
    from support.servers.s3 import BUCKET

    with tempfile.TemporaryDirectory() as d:
        yield from run_rest(Path(d), s3, f"s3://{BUCKET}/rest")
