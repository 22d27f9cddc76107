"""A real Iceberg REST catalog server for the tests: Apache Iceberg's own
`RESTCatalogServer` (iceberg-open-api's test fixtures, run with its dependencies; `make
oracle` resolves the classpath from tests/java/rest-server/pom.xml), backed by a JdbcCatalog
on a sqlite file, its warehouse on the S3 test server through S3FileIO. Its own JVM, on a
free localhost port."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from support.servers.s3 import S3Server, _free_port


def rest_classpath() -> str:
    jar = os.environ.get("ICEFLOE_ORACLE_JAR", "")
    path = Path(jar).parent / "rest-server.classpath"
    if not path.is_file():
        raise RuntimeError(
            f"{path} is missing: run `make oracle`, which resolves the REST server's classpath"
        )
    return path.read_text().strip()


def java_env_name(prop: str) -> str:
    """RESTCatalogServer reads catalog properties from CATALOG_* variables: `-` is `__`,
    `.` is `_`."""
    return "CATALOG_" + prop.replace("-", "__").replace(".", "_").upper()


def run_rest(root: Path, s3: S3Server, warehouse: str, command: list[str] | None = None) -> Iterator[str]:
    """Starts the server; yields its URI; stops it. `command`: another `java` command serving
    the REST protocol with the same CATALOG_* settings (default: RESTCatalogServer)."""
    port = _free_port()
    props = {
        "rest.port": str(port),
        "uri": f"jdbc:sqlite:{root / 'rest-catalog.db'}",
        "jdbc.schema-version": "V1",
        "warehouse": warehouse,
        **s3.java_properties(),
    }
    env = dict(os.environ, **{java_env_name(k): v for k, v in props.items()})
    log = open(root / "rest.log", "wb")
    proc = subprocess.Popen(
        command or ["java", "-Xmx512m", "-cp", rest_classpath(), "org.apache.iceberg.rest.RESTCatalogServer"],
        stdout=log,
        stderr=log,
        env=env,
    )
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"REST server exited: {(root / 'rest.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{uri}/v1/config", timeout=2) as r:
                    json.loads(r.read())
                break
            except (urllib.error.URLError, OSError, ValueError):
                if time.monotonic() > deadline:
                    raise RuntimeError("REST server did not start within 120 s") from None
                time.sleep(0.3)
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
