"""A real S3-compatible server for the tests: moto in server mode (`moto_server`, from PyPI
`moto[server]`, which `make test` installs), as its own process on a free localhost port.
It speaks S3 over HTTP, signs with SigV4, supports multipart uploads and enforces
conditional writes (`If-None-Match: *` -> 412), which the filesystem catalog's commits need.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ACCESS_KEY = "icefloe-test-key"
SECRET_KEY = "icefloe-test-secret-Do-Not-Print"
REGION = "us-east-1"
BUCKET = "icefloe-tests"  # created when the server starts


@dataclass(frozen=True)
class S3Server:
    endpoint: str

    def properties(self) -> dict[str, str]:
        """PyIceberg-named FileIO properties for this server."""
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path-style-access": "true",
        }

    def java_properties(self) -> dict[str, str]:
        """Iceberg Java's S3FileIO properties for this server (a Spark catalog's or the REST
        server's)."""
        return {
            "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
            "s3.endpoint": self.endpoint,
            "s3.path-style-access": "true",
            "s3.access-key-id": ACCESS_KEY,
            "s3.secret-access-key": SECRET_KEY,
            "client.region": REGION,
        }

    def create_bucket(self, name: str) -> None:
        req = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _moto_server() -> list[str]:
    exe = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or shutil.which("moto_server")
    if exe:
        return [exe]
    return [sys.executable, "-m", "moto.server"]


def run_s3(log_dir: Path) -> Iterator[S3Server]:
    """Starts the server; yields it; stops it."""
    port = _free_port()
    log = open(log_dir / "moto.log", "wb")
    env = dict(os.environ, AWS_ACCESS_KEY_ID=ACCESS_KEY, AWS_SECRET_ACCESS_KEY=SECRET_KEY)
    proc = subprocess.Popen(
        [*_moto_server(), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log, env=env
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"moto_server exited with {proc.returncode}: {(log_dir / 'moto.log').read_text()}"
                )
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2) as r:
                    r.read()
                break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not start within 60 s") from None
                time.sleep(0.2)
        yield S3Server(endpoint)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
