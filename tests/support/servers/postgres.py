"""A real Postgres for the tests: Debian's `postgresql` package (`make test` installs it),
`initdb` into a temporary folder and `pg_ctl start` on a free localhost port; stopped at the
end. Postgres refuses to run as root, so as root it runs as the `postgres` user. Tests take
one server per run (the `postgres` fixture in conftest.py) and a fresh database each
(`new_database`)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse


def _bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_postgres(root: Path) -> Iterator[str]:
    """Starts a server in `root`; yields its URI; stops it."""
    initdb, pg_ctl = _bin("initdb"), _bin("pg_ctl")
    if not initdb or not pg_ctl:
        raise RuntimeError("Postgres is not installed (initdb/pg_ctl): run `make test`, which installs it")
    data = root / "pgdata"
    data.mkdir(parents=True)
    prefix: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(data, "postgres")
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    subprocess.run(
        [*prefix, initdb, "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
        check=True,
        capture_output=True,
    )
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        [*prefix, pg_ctl, "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "start"],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*prefix, pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"], capture_output=True)


def _connect(uri: str) -> Any:
    import pg8000.native

    u = urlparse(uri)
    return pg8000.native.Connection(
        user=u.username or "postgres",
        host=u.hostname or "127.0.0.1",
        port=u.port or 5432,
        database=(u.path or "/").lstrip("/") or "postgres",
    )


def new_database(server_uri: str) -> str:
    """Creates an empty database on the server of `server_uri`; returns its URI. A fresh
    database per test keeps the tests' catalog tables apart."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    conn = _connect(server_uri)
    try:
        conn.run(f"CREATE DATABASE {name}")
    finally:
        conn.close()
    return server_uri.rsplit("/", 1)[0] + "/" + name


def query(uri: str, sql: str) -> list[tuple[Any, ...]]:
    """Runs one statement (autocommit) on the database of `uri`; its rows as tuples."""
    conn = _connect(uri)
    try:
        return [tuple(r) for r in conn.run(sql) or []]
    finally:
        conn.close()
