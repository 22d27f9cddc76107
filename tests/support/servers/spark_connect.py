"""A Spark Connect server from the PySpark package of this interpreter (`spark-submit` of
`SparkConnectServer`, `local[2]`, its own JVM) on a free localhost port: the Connect tests'
server and `benches/connect_s3_bench.py`'s."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def run_connect_server(root: Path, conf: dict[str, str], env: dict[str, str] | None = None) -> Iterator[str]:
    """Starts the server with the Spark settings `conf` (its log `root/server.log`), waits up
    to 180 s for its port, yields its `sc://` URL, and stops it."""
    port = _free_port()
    conf = {
        **conf,
        "spark.connect.grpc.binding.port": str(port),
        "spark.connect.grpc.binding.address": "127.0.0.1",
    }
    cmd = [str(Path(sys.executable).parent / "spark-submit"), "--master", "local[2]"]
    cmd += ["--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
    for k, v in conf.items():
        cmd += ["--conf", f"{k}={v}"]
    cmd.append("spark-internal")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable) if env is None else env
    log_path = root / "server.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Spark Connect server exited: {log_path.read_text()[-3000:]}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"Spark Connect server not up after 180 s: {log_path.read_text()[-3000:]}")
            time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
