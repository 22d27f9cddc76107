"""The REST catalog client against a real Iceberg REST server (Apache Iceberg's own
RESTCatalogServer: JdbcCatalog behind it, the warehouse on the S3 test server):

- what every catalog does (namespaces, tables, rename, compare-and-swap, a lost race retried,
  purge) is in test_catalog_contract.py; here: S3 locations, register, a row-level delete
  committed as requirements + updates, OAuth2;
- Iceberg Java's Spark catalog `type=rest` and icefloe commit to the same table interleaved,
  each reading the other's snapshots;
- 2 icefloe and 2 Java processes appending 25 times each at once leave 100 snapshots and
  every row.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import _native
from icefloe.catalog import RestCatalog
from icefloe.exceptions import (
    NoSuchTableError,
    TableAlreadyExistsError,
)
from support.catalogs import ARROW, catalog_props, rows
from support.java import JAVA_SOURCES, java_command
from support.oracle import assert_same_rows
from support.racing_writers import SCHEMA as PROC_SCHEMA
from support.racing_writers import spawn
from support.servers.rest import rest_classpath
from support.servers.s3 import BUCKET, S3Server
from support.start_gate import ready_path, release


@pytest.fixture
def props(rest_uri: str, s3: S3Server, tmp_path: Path) -> dict[str, str]:
    return catalog_props("rest", tmp_path, rest_uri=rest_uri, s3=s3)


@pytest.fixture
def cat(props: dict[str, str]) -> RestCatalog:
    c = icefloe.load_catalog(**props)
    assert isinstance(c, RestCatalog)
    return c


@pytest.fixture
def ns(cat: RestCatalog) -> str:
    name = f"ns_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(name, {"owner": "tests"})
    return name


def test_tables_on_s3_and_register(cat: RestCatalog, ns: str) -> None:
    """REST-specific: the server places tables under its S3 warehouse, a row-level delete
    commits through it, and drop keeps the files so the table can be registered again (the
    shared contract is in test_catalog_contract.py)."""
    t = cat.create_table(f"{ns}.t", schema=ARROW)
    assert t.location().startswith(f"s3://{BUCKET}/rest/")
    t.append(rows(range(10)))
    t.append(rows(range(10, 15)))
    t.delete("id < 3")
    again = cat.load_table(f"{ns}.t")
    assert sorted(again.scan().to_arrow().column("id").to_pylist()) == list(range(3, 15))
    assert [s.summary["operation"] for s in again.snapshots()] == ["append", "append", "overwrite"]
    location = again.metadata_location
    cat.drop_table(f"{ns}.t")
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns}.t")
    # The files are still there: register the table again from its metadata file.
    back = cat.register_table(f"{ns}.back", location)
    assert back.metadata_location == location
    assert len(back.scan().to_arrow()) == 12
    with pytest.raises(TableAlreadyExistsError):
        cat.register_table(f"{ns}.back", location)


def test_oauth2_client_credentials(props: dict[str, str], ns: str) -> None:
    c = icefloe.load_catalog(**{**props, "name": "rest-oauth"}, credential="client:secret-value-xyz")
    assert c.namespace_exists(ns)
    assert c._client._token  # a token was fetched from /v1/oauth/tokens and is used
    assert "secret-value-xyz" not in repr(c)


def test_java_and_icefloe_commit_interleaved(spark: Any, cat: RestCatalog, ns: str, s3: S3Server) -> None:
    name = f"restjava{uuid.uuid4().hex[:6]}"
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        ".uri": cat.properties["uri"],
        **{f".{k}": v for k, v in s3.java_properties().items()},
    }
    for k, v in conf.items():
        spark.conf.set(f"spark.sql.catalog.{name}{k}", v)
    t = cat.create_table(f"{ns}.i", schema=ARROW)
    t.append(rows(range(5)))
    spark.sql(f"INSERT INTO {name}.{ns}.i VALUES (100, 'java')")
    t.refresh().append(rows(range(5, 8)))
    spark.sql(f"DELETE FROM {name}.{ns}.i WHERE id = 0")
    t = cat.load_table(f"{ns}.i")
    ops = [s.summary["operation"] for s in t.snapshots()]
    assert ops == ["append", "append", "append", "delete"] or ops[:3] == ["append", "append", "append"]
    expected = spark.sql(f"SELECT id, name FROM {name}.{ns}.i")
    assert_same_rows(t.scan().to_arrow(), expected, context="icefloe and Java on one REST table")
    assert sorted(t.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4, 5, 6, 7, 100]


@pytest.fixture(scope="module")
def rest_appender() -> list[str]:
    """The `java` command running tests/java/RestAppender (compiled against the server's
    classpath)."""
    return java_command(JAVA_SOURCES / "RestAppender.java", rest_classpath(), heap="256m")


@pytest.mark.slow
def test_two_icefloe_and_two_java_processes_append_25_times(
    cat: RestCatalog, ns: str, props: dict[str, str], rest_appender: list[str], tmp_path: Path
) -> None:
    ident = f"{ns}.p"
    cat.create_table(
        ident,
        schema=icefloe.Schema.from_arrow(PROC_SCHEMA),
        properties={
            "commit.retry.num-retries": "200",
            "commit.retry.min-wait-ms": "5",
            "commit.retry.max-wait-ms": "500",
        },
    )
    t = cat.load_table(ident)
    n = 25
    go = tmp_path / "go"
    # Java writers (2, 3) append data files icefloe writes now (not committed), one per commit.
    java_procs = []
    for writer in (2, 3):
        lines = []
        for i in range(n):
            batch = pa.table(
                {
                    "writer": pa.array([writer], pa.int32()),
                    "seq": pa.array([i], pa.int32()),
                    "region": ["eu"],
                },
                schema=PROC_SCHEMA,
            )
            for d in _native.write_data_files(t.metadata, batch.to_reader(), uuid.uuid4().hex, 0):
                f = json.loads(d)
                lines.append(f"{f['file_path']}\t{f['file_size_in_bytes']}\t{f['record_count']}")
        files = tmp_path / f"files-{writer}.txt"
        files.write_text("\n".join(lines) + "\n")
        conf = tmp_path / f"java-{writer}.properties"
        java_props = {
            "uri": props["uri"],
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": props["s3.endpoint"],
            "s3.path-style-access": "true",
            "s3.access-key-id": props["s3.access-key-id"],
            "s3.secret-access-key": props["s3.secret-access-key"],
            "client.region": props["s3.region"],
        }
        conf.write_text("".join(f"{k}={v}\n" for k, v in java_props.items()))
        java_procs.append(
            subprocess.Popen(
                [*rest_appender, str(conf), ident, str(ready_path(go, writer)), str(go), str(files)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    py_props = props
    py_procs = [spawn(py_props, ident, w, n, ready_path(go, w), go, "append", "eu") for w in (0, 1)]
    # All four loaded the table before any commits: Java's JVM start no longer lets the
    # Python writers finish first.
    release(py_procs + java_procs, [ready_path(go, w) for w in (0, 1, 2, 3)], go)
    for p in py_procs + java_procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, f"{out}\n{err[-4000:]}"
    final = cat.load_table(ident)
    assert len(final.snapshots()) == 4 * n
    got = sorted(zip(*(final.scan().to_arrow().column(c).to_pylist() for c in ("writer", "seq"))))
    assert got == sorted((w, i) for w in range(4) for i in range(n))
