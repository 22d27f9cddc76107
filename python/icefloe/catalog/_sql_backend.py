"""The databases the SQL catalog runs on, behind one small connection interface: sqlite
(the standard library) and Postgres (`pg8000`, a pure-Python driver: `pip install
icefloe[postgres]`). The catalog writes its SQL once, with `?` placeholders, and runs its
writes in explicit transactions; the backend translates placeholders, the transaction start
and the error classes."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import unquote, urlparse

from icefloe.exceptions import IcefloeIOError, NotSupportedError

# Seconds a connection waits for another process's lock before giving up.
BUSY_TIMEOUT_S = 60.0


class Result:
    """Rows and the affected-row count of one statement."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)


class Connection:
    """One connection: `execute(sql, params)` with `?` placeholders."""

    def __init__(self, raw: Any, postgres: bool) -> None:
        self._raw = raw
        self._postgres = postgres

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        if self._postgres:
            cur = self._raw.cursor()
            cur.execute(sql.replace("?", "%s"), tuple(params))
            rows = [tuple(r) for r in cur.fetchall()] if cur.description else []
            return Result(rows, cur.rowcount)
        cur = self._raw.execute(sql, tuple(params))
        return Result(cur.fetchall(), cur.rowcount)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        for r in rows:
            self.execute(sql, r)


class Backend:
    """Where the catalog's rows live; `describe` is safe to print (no password)."""

    begin_write = "BEGIN"
    errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
    describe = ""

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        raise NotImplementedError
        yield

    def is_duplicate(self, e: BaseException) -> bool:
        raise NotImplementedError

    def table_columns(self, conn: Connection, table: str) -> set[str]:
        raise NotImplementedError

    def lock(self, conn: Connection, key: str) -> None:
        """Inside a write transaction: waits until no other writer of this database holds
        `key`, then holds it until the transaction ends. (sqlite: BEGIN IMMEDIATE already
        serialises every writer.)"""


class SqliteBackend(Backend):
    begin_write = "BEGIN IMMEDIATE"  # take the write lock up front: writers queue, never upgrade

    def __init__(self, path: str) -> None:
        self.path = path
        self.describe = path
        self._memory: sqlite3.Connection | None = None
        self._memory_lock = threading.Lock()
        if path == ":memory:":
            self._memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        elif os.path.dirname(path):
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        if self._memory is not None:
            with self._memory_lock:
                yield Connection(self._memory, postgres=False)
            return
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as e:
            raise IcefloeIOError(f"cannot open SQL catalog database {self.path}: {e}") from e
        try:
            yield Connection(conn, postgres=False)
        finally:
            conn.close()

    def is_duplicate(self, e: BaseException) -> bool:
        return isinstance(e, sqlite3.IntegrityError)

    def table_columns(self, conn: Connection, table: str) -> set[str]:
        return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


class PostgresBackend(Backend):
    """`postgresql://user:password@host:port/database` (also `postgresql+pg8000://`,
    `postgresql+psycopg://`, `postgres://`: the driver is always pg8000). A connection per
    operation; writes run in explicit transactions at READ COMMITTED, which the catalog's
    conditional UPDATE makes safe."""

    def __init__(self, uri: str) -> None:
        try:
            import pg8000.dbapi
        except ImportError as e:
            raise NotSupportedError(
                f"the SQL catalog on Postgres needs the pg8000 driver: pip install 'icefloe[postgres]' ({e})"
            ) from e
        self._pg = pg8000.dbapi
        self.errors = (pg8000.dbapi.Error, sqlite3.Error)
        u = urlparse(uri)
        self._params: dict[str, Any] = {
            "user": unquote(u.username or os.environ.get("PGUSER", "postgres")),
            "host": u.hostname or "localhost",
            "port": u.port or 5432,
            "database": unquote((u.path or "/").lstrip("/") or "postgres"),
            "timeout": BUSY_TIMEOUT_S,
        }
        if u.password:
            self._params["password"] = unquote(u.password)
        self.describe = (
            f"postgresql://{self._params['user']}@{self._params['host']}:{self._params['port']}/"
            + str(self._params["database"])
        )

    @contextlib.contextmanager
    def connect(self) -> Iterator[Connection]:
        try:
            conn = self._pg.connect(**self._params)
        except Exception as e:
            # The driver's message never holds the password; ours names the database only.
            raise IcefloeIOError(f"cannot connect to SQL catalog database {self.describe}: {e}") from e
        conn.autocommit = True
        try:
            yield Connection(conn, postgres=True)
        finally:
            with contextlib.suppress(Exception):
                conn.close()

    def is_duplicate(self, e: BaseException) -> bool:
        code = e.args[0].get("C") if e.args and isinstance(e.args[0], dict) else None
        return code == "23505"  # unique_violation

    def table_columns(self, conn: Connection, table: str) -> set[str]:
        # The table an unqualified name resolves to (the search path), not a namesake in
        # another schema.
        rows = conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND attnum > 0 "
            "AND NOT attisdropped",
            (table,),
        )
        return {str(r[0]) for r in rows}

    def lock(self, conn: Connection, key: str) -> None:
        # A transaction-scoped advisory lock: other clients (Java, PyIceberg) do not take it,
        # so the catalog still maps their races' unique violations to its own errors.
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest()
        conn.execute(
            "SELECT pg_advisory_xact_lock(CAST(? AS BIGINT))", (int.from_bytes(digest, "big", signed=True),)
        )


def backend_for(uri: str) -> Backend:
    """The backend a catalog `uri` names (`sqlite:///path`, `postgresql://...`)."""
    scheme = uri.split(":", 1)[0].lower()
    if scheme == "sqlite":
        if uri.startswith("sqlite:///"):
            return SqliteBackend(uri[len("sqlite:///") :] or ":memory:")
        if uri in ("sqlite://", "sqlite:"):
            return SqliteBackend(":memory:")
    if scheme.split("+", 1)[0] in ("postgresql", "postgres"):
        return PostgresBackend(uri)
    raise NotSupportedError(
        f"SQL catalog uri {uri.split('@')[-1]!r}: supported are sqlite:///<path> and postgresql://... "
        f"(found the {scheme!r} scheme)"
    )
