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
import zlib
from collections.abc import Callable, Iterator
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
# sessions side by side. With C1 alone every compiled method lands in the code cache's
# non-profiled half (~117 MB of the default 240): a worker's Spark session, compiling Janino's
# generated classes by the thousand, filled it, and the sweeper flushed and C1 recompiled the same
# methods over and over. A 512 MB cache stopped that: tests/spark/test_spark_sql.py's driver spent
# 11.4 -> 3.8 CPU s in C1 and 5.6-7.8 -> 0 in the sweeper (2026-12-07, per-thread CPU). Reserved,
# not committed: memory is used as code is compiled. Speed only; the benchmarks leave the JVM's
# defaults.
os.environ.setdefault(
    "JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ReservedCodeCacheSize=512m"
)

# `support` (the tests' helper package) is importable: pyproject's pytest `pythonpath` holds tests/.
from support.oracle import Oracle, oracle_session_conf
from support.session import NAMESPACE, PYSPARK_MAJOR, extra_jars, local_fs_conf, new_table_name, oracle_jar

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


_MODES = ("copy-on-write", "merge-on-read")


def _thinned(
    items: list[pytest.Item],
    group_of: Callable[[pytest.Item], str | None],
    keep: Callable[[str, list[pytest.Item]], list[pytest.Item]],
) -> list[pytest.Item]:
    """`items` less, in each group of two or more (`group_of`: the item's group, or None for
    none), the cases `keep` does not keep."""
    groups: dict[str, list[pytest.Item]] = {}
    for item in items:
        key = group_of(item)
        if key is not None:
            groups.setdefault(key, []).append(item)
    dropped: set[int] = set()
    for key, cases in groups.items():
        if len(cases) >= 2:
            kept = {id(c) for c in keep(key, cases)}
            dropped |= {id(c) for c in cases if id(c) not in kept}
    return [item for item in items if id(item) not in dropped]


def _one_mode_per_twin(items: list[pytest.Item]) -> list[pytest.Item]:
    """Of a test's copy-on-write and merge-on-read cases (otherwise the same parameters), the
    one chosen by a hash of the test's id: pairwise coverage of Spark line x write mode. On
    PySpark 4 each test runs one, and the tests of a file take either mode; in `make test` the
    PySpark 3.5 pass runs the other (`_left_to_spark4`)."""

    def group_of(item: pytest.Item) -> str | None:
        params = getattr(getattr(item, "callspec", None), "params", {})
        mode = next((v for v in params.values() if isinstance(v, str) and v in _MODES), None)
        return None if mode is None else item.nodeid.replace(mode, "*")

    def keep(key: str, twins: list[pytest.Item]) -> list[pytest.Item]:
        mode = _MODES[zlib.crc32(key.encode()) % 2]
        return [item for item in twins if mode in item.nodeid]

    return _thinned(items, group_of, keep)


def _half_of_the_other_cases(items: list[pytest.Item]) -> list[pytest.Item]:
    """Of the other parametrized cases of a test in the files both passes run (not
    `tests/spark4/`), about half, chosen by a hash of each case's id (at least one per test)
    (`ICEFLOE_SPARK4_ALL_MODES=1` runs every case)."""

    def group_of(item: pytest.Item) -> str | None:
        if "[" not in item.nodeid or item.nodeid.startswith("tests/spark4/"):
            return None
        return item.nodeid.split("[", 1)[0]

    def keep(_key: str, cases: list[pytest.Item]) -> list[pytest.Item]:
        chosen = [c for c in cases if zlib.crc32(c.nodeid.encode()) % 2 == 0]
        return chosen or [min(cases, key=lambda c: zlib.crc32(c.nodeid.encode()))]

    return _thinned(items, group_of, keep)


def _spark4_cases(items: list[pytest.Item]) -> list[pytest.Item]:
    """The cases of `items` (tests of the files both passes run) the PySpark 4 pass runs: of
    each test's copy-on-write / merge-on-read twin one mode, of its other parametrized cases
    about half. Cases that only PySpark 4 has (marked `spark4_case`) are not counted among a
    test's cases, so that both passes compute the same selection from what they collect."""
    common = [item for item in items if item.get_closest_marker("spark4_case") is None]
    chosen = {id(item) for item in _half_of_the_other_cases(_one_mode_per_twin(common))}
    return [item for item in items if id(item) in chosen or item.get_closest_marker("spark4_case")]


def _left_to_spark4(items: list[pytest.Item], files: list[str]) -> list[pytest.Item]:
    """For the PySpark 3.5 pass of `make test`: the cases of the PySpark 4 pass's `files` to
    leave to that pass (those `_spark4_cases` chooses), keeping at least one case of each test
    here. Every case then runs on one line, every test on both (a test with one case, or whose
    every case PySpark 4 runs, has one case on both)."""

    def shared(item: pytest.Item) -> bool:
        path = item.nodeid.split("::", 1)[0]
        return any(path == f or path.startswith(f.rstrip("/") + "/") for f in files)

    candidates = [i for i in items if shared(i) and i.get_closest_marker("one_spark_line") is None]
    on_spark4 = {id(i) for i in _spark4_cases(candidates)}

    def test(item: pytest.Item) -> str:
        return item.nodeid.split("[", 1)[0]

    # each test keeps one case here: the first that PySpark 4 does not run, else the first
    here: dict[str, pytest.Item] = {}
    for i in candidates:
        t = test(i)
        if t not in here or (id(here[t]) in on_spark4 and id(i) not in on_spark4):
            here[t] = i
    stays = {id(i) for i in here.values()}
    return [i for i in candidates if id(i) in on_spark4 and id(i) not in stays]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The PySpark 4 pass runs the Spark-facing files again for what depends on Spark's version;
    tests marked `one_spark_line` prove what does not, so they run in the PySpark 3.5 pass only,
    and of a test's cases it runs those `_spark4_cases` chooses. In `make test`
    (`ICEFLOE_SPARK4_FILES`: the PySpark 4 pass's files) the PySpark 3.5 pass runs the other
    cases of those tests, so each case runs once; `make test-python` alone runs them all, and
    `ICEFLOE_SPARK4_ALL_MODES=1` (`make test-spark4-modes`) every case on PySpark 4. What is
    left out is deselected and counted as such in the pass's summary."""
    if PYSPARK_MAJOR < 4:
        files = os.environ.get("ICEFLOE_SPARK4_FILES", "").split()
        dropped = {id(item) for item in _left_to_spark4(items, files)} if files else set()
        kept = [item for item in items if id(item) not in dropped]
    else:
        kept = [item for item in items if item.get_closest_marker("one_spark_line") is None]
        if os.environ.get("ICEFLOE_SPARK4_ALL_MODES") != "1":
            kept = _spark4_cases(kept)
    if len(kept) < len(items):
        kept_ids = {id(item) for item in kept}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in kept_ids])
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
        # Spark keeps 100 generated classes by default; a worker's session runs hundreds of
        # tests whose queries repeat across files: 2,000 halved the Janino compilations of three
        # files (1,882 -> 864; 2026-12-06). Caching only: the code run is the same.
        .config("spark.sql.codegen.cache.maxEntries", "2000")
        .config("spark.driver.extraJavaOptions", "-Duser.timezone=UTC")
        .config("spark.executor.extraJavaOptions", "-Duser.timezone=UTC")
    )
    for key, value in {**oracle_session_conf(warehouse), **local_fs_conf()}.items():
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
