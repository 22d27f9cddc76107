"""What every test session shares: the oracle jar (Apache Iceberg Java's Spark runtime, named
by ``ICEFLOE_ORACLE_JAR``) and the jars next to it, the namespace of the shared warehouse and
fresh table names in it, and the PySpark major version."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from support.oracle import side_jar

NAMESPACE = "db"

# PySpark-4-only test files (the data source API) are collected only there.
PYSPARK_MAJOR = int(__import__("pyspark").__version__.split(".")[0])


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


def s3a_jars() -> list[str]:
    """hadoop-aws and the AWS SDK bundle for this PySpark's Hadoop, which `make oracle` puts in
    `s3a-hadoop-<version>/` next to the runtime jar. Missing ones fail, never skip."""
    import pyspark

    found = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    assert found, "PySpark ships no hadoop-client-api jar"
    version = found[0].name.removeprefix("hadoop-client-api-").removesuffix(".jar")
    folder = Path(oracle_jar()).parent / f"s3a-hadoop-{version}"
    jars = sorted(str(p) for p in folder.glob("*.jar"))
    if not any("hadoop-aws" in j for j in jars) or len(jars) < 2:
        pytest.fail(f"Hadoop {version}'s S3A jars are missing in {folder} (run `make oracle`)", pytrace=False)
    return jars


def new_table_name(prefix: str = "t") -> str:
    """A fresh ``db.<prefix>_<hex>`` identifier (the warehouse is shared)."""
    return f"{NAMESPACE}.{prefix}_{uuid.uuid4().hex[:8]}"


def local_fs_conf() -> dict[str, str]:
    """Spark settings giving a session Hadoop's local file system without a `chmod` process
    per created file (tests/java/NioLocalFileSystem.java: the same files and permissions,
    ~5.5 -> 0.3 ms of CPU a file; ~9% of tests/spark/test_spark_sql.py's CPU). For the
    suite's sessions only: the benchmarks keep Hadoop's own."""
    from support.java import JAVA_SOURCES, compile_java, spark_jars_classpath

    classes = compile_java(JAVA_SOURCES / "NioLocalFileSystem.java", spark_jars_classpath())
    return {"spark.driver.extraClassPath": str(classes), "spark.hadoop.fs.file.impl": "NioLocalFileSystem"}
