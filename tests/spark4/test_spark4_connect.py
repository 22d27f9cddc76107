"""icefloe from a Spark Connect client (PySpark 4, collected only there): a Connect server
started from the PySpark package (its own JVM, with Iceberg Java's runtime as the oracle's
catalog), and a client process running `tests/support/workers/connect_client.py` — `icefloe.spark.read`,
`append`, `delete` and the `format("icefloe")` data source, each checked by Java's reads."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import support.workers
from support.oracle import oracle_session_conf
from support.session import extra_jars, new_table_name, oracle_jar

pytestmark = [pytest.mark.spark, pytest.mark.interop]

CLIENT = Path(support.workers.__file__).parent / "connect_client.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A Spark Connect server on a free localhost port; (its URL, the oracle warehouse)."""
    root = tmp_path_factory.mktemp("connect")
    warehouse = root / "warehouse"
    warehouse.mkdir()
    port = _free_port()
    jar = oracle_jar()
    conf = {
        **oracle_session_conf(warehouse),
        "spark.jars": ",".join([jar, *extra_jars(jar)]),
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.driver.extraJavaOptions": "-Duser.timezone=UTC",
        "spark.sql.shuffle.partitions": "2",
    }
    spark_submit = Path(sys.executable).parent / "spark-submit"
    cmd = [
        str(spark_submit),
        "--master",
        "local[2]",
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
    ]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    cmd.append("spark-internal")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    log = open(root / "server.log", "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"Spark Connect server exited: {(root / 'server.log').read_text()[-3000:]}"
                )
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"Spark Connect server not up after 180 s: {(root / 'server.log').read_text()[-3000:]}"
                )
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}", warehouse
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


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
