"""The SQL catalog: table pointers in a database, on the schema Iceberg Java's
JdbcCatalog and PyIceberg's SqlCatalog share, so all three see the same tables.

    iceberg_tables(catalog_name, table_namespace, table_name, metadata_location,
                   previous_metadata_location, iceberg_type)
    iceberg_namespace_properties(catalog_name, namespace, property_key, property_value)

`uri="sqlite:///path/to/catalog.db"` uses the standard library's sqlite3,
`uri="postgresql://user:password@host:port/db"` the pure-Python pg8000 driver (no
SQLAlchemy; see `_sql_backend.py`). Metadata files are `<location>/metadata/<NNNNN>-<uuid>.metadata.json`; a
commit is a conditional UPDATE that only matches while the row still names the base
metadata file.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from icefloe import _io, _native
from icefloe.catalog._base import (
    Catalog,
    Identifier,
    IdentifierLike,
    Properties,
    PropertiesUpdateSummary,
)
from icefloe.catalog._sql_backend import Connection, PostgresBackend, backend_for
from icefloe.exceptions import (
    CommitConflictError,
    CommitStateUnknownException,
    IcefloeIOError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
    ViewAlreadyExistsError,
)
from icefloe.view import (
    View,
    ViewMetadata,
    new_view_metadata_location,
    read_view_metadata,
    write_view_metadata,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.commit.target import CommitBase
    from icefloe.partitioning import PartitionSpec
    from icefloe.schema import Schema
    from icefloe.sorting import SortOrder
    from icefloe.table import Table

__all__ = ["SqlCatalog"]

# Column sizes as in Iceberg Java's JdbcUtil (V1 schema, with iceberg_type) and PyIceberg.
_CREATE_TABLES = """
CREATE TABLE IF NOT EXISTS iceberg_tables (
    catalog_name VARCHAR(255) NOT NULL,
    table_namespace VARCHAR(255) NOT NULL,
    table_name VARCHAR(255) NOT NULL,
    metadata_location VARCHAR(1000),
    previous_metadata_location VARCHAR(1000),
    iceberg_type VARCHAR(5),
    PRIMARY KEY (catalog_name, table_namespace, table_name)
)
"""
_CREATE_NAMESPACE_PROPERTIES = """
CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
    catalog_name VARCHAR(255) NOT NULL,
    namespace VARCHAR(255) NOT NULL,
    property_key VARCHAR(255),
    property_value VARCHAR(1000),
    PRIMARY KEY (catalog_name, namespace, property_key)
)
"""
_IS_VIEW = " AND iceberg_type = 'VIEW'"  # JdbcCatalog V1's view rows
_METADATA_FILE = re.compile(r"^(\d+)-.*\.metadata\.json$")


class _CommitFailed(IcefloeIOError):
    """The COMMIT statement itself failed: on a lost connection it may have happened."""


class SqlCatalog(Catalog):
    """Tables and namespaces recorded in a SQLite or Postgres database (JdbcCatalog's schema)."""

    def __init__(self, name: str, **properties: str) -> None:
        super().__init__(name, **properties)
        uri = self.properties.get("uri")
        if not uri:
            raise ValidationError("the SQL catalog needs a 'uri' property, e.g. sqlite:///catalog.db")
        self._backend = backend_for(uri)
        self._path = self._backend.describe
        self._warehouse = self.properties.get("warehouse", "").rstrip("/")
        if self._warehouse and not urlparse_scheme(self._warehouse):
            self._warehouse = os.path.abspath(self._warehouse)
        self._has_type_column = False
        if self.properties.get("init_catalog_tables", "true").lower() != "false":
            self._ensure_tables()

    # ---- connections ----
    @contextlib.contextmanager
    def _connect(self) -> Iterator[Connection]:
        with self._backend.connect() as conn:
            yield conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction (sqlite: BEGIN IMMEDIATE takes the write lock up front, so
        concurrent writers queue on the busy timeout instead of failing on a lock upgrade)."""
        errors = self._backend.errors
        with self._connect() as conn:
            try:
                conn.execute(self._backend.begin_write)
            except errors as e:
                raise IcefloeIOError(f"cannot lock SQL catalog database {self._path}: {e}") from e
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(*errors):
                    conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except errors as e:
                with contextlib.suppress(*errors):
                    conn.execute("ROLLBACK")
                raise _CommitFailed(f"cannot commit to SQL catalog database {self._path}: {e}") from e

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._connect() as conn:
            try:
                return conn.execute(sql, params).fetchall()
            except self._backend.errors as e:
                raise IcefloeIOError(f"SQL catalog query failed ({self._path}): {e}") from e

    def _ensure_tables(self) -> None:
        with self._write() as conn:
            # Postgres: catalogs starting at once on an empty database would otherwise race
            # in CREATE TABLE IF NOT EXISTS (a unique violation in the system catalogs).
            self._backend.lock(conn, "icefloe:create-catalog-tables")
            conn.execute(_CREATE_TABLES)
            conn.execute(_CREATE_NAMESPACE_PROPERTIES)
            cols = self._backend.table_columns(conn, "iceberg_tables")
        self._has_type_column = "iceberg_type" in cols

    def _is_table(self) -> str:
        # Rows written by PyIceberg or Java's V0 schema have no type: they are tables.
        if self._has_type_column:
            return " AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)"
        return ""

    # Rows of one kind (`kind`: `_is_table()` or `_IS_VIEW`): listed, deleted, renamed.
    def _names(self, ns: Identifier, kind: str) -> list[Identifier]:
        rows = self._query(
            "SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?"
            + kind
            + " ORDER BY table_name",
            (self.name, ".".join(ns)),
        )
        return [(*ns, r[0]) for r in rows]

    def _delete_row(self, parts: Identifier, kind: str) -> bool:
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?"
                + kind,
                (self.name, ".".join(parts[:-1]), parts[-1]),
            )
            return cur.rowcount >= 1

    def _rename_row(self, src: Identifier, dst: Identifier, kind: str) -> bool:
        """Moves the row; False when `src` has none of `kind`. A row `dst` already has is the
        backend's duplicate error, which the caller names."""
        if not self.namespace_exists(dst[:-1]):
            raise NoSuchNamespaceError(f"namespace {'.'.join(dst[:-1])} does not exist")
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE iceberg_tables SET table_namespace = ?, table_name = ? WHERE catalog_name = ? "
                "AND table_namespace = ? AND table_name = ?" + kind,
                (".".join(dst[:-1]), dst[-1], self.name, ".".join(src[:-1]), src[-1]),
            )
            return cur.rowcount >= 1

    # ---- locations ----
    def _default_location(self, ns: Identifier, table_name: str) -> str:
        if not self._warehouse:
            raise ValidationError(
                "the SQL catalog needs a 'warehouse' property (or an explicit location) to create tables"
            )
        return _io.join(self._warehouse, *ns, table_name)

    @staticmethod
    def _metadata_dir(metadata: _native.TableMetadata) -> str:
        return metadata.metadata_root  # write.metadata.path, else <location>/metadata (Rust decides)

    @staticmethod
    def _new_metadata_location(metadata: _native.TableMetadata, version: int) -> str:
        return _io.join(SqlCatalog._metadata_dir(metadata), f"{version:05d}-{uuid.uuid4()}.metadata.json")

    @staticmethod
    def _version_of(metadata_location: str | None) -> int:
        """The version number a metadata file name starts with; -1 when it has none
        (Java's JdbcTableOperations does the same)."""
        if not metadata_location:
            return -1
        m = _METADATA_FILE.match(metadata_location.rsplit("/", 1)[-1])
        return int(m.group(1)) if m else -1

    # ---- tables ----
    def _stage_create(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Properties | None,
        location: str | None,
    ) -> tuple[Identifier, _native.TableMetadata, Properties]:
        parts = self.table_identifier(identifier)
        ns, table_name = parts[:-1], parts[-1]
        self._check_can_create(parts)
        table_location = (location or self._default_location(ns, table_name)).rstrip("/")
        metadata = self._new_table_metadata(schema, partition_spec, sort_order, table_location, properties)
        return parts, metadata, {}

    def _check_can_create(self, parts: Identifier) -> None:
        if not self.namespace_exists(parts[:-1]):
            raise NoSuchNamespaceError(f"namespace {'.'.join(parts[:-1])} does not exist")
        if self.table_exists(parts):
            raise TableAlreadyExistsError(f"table {'.'.join(parts)} already exists")
        if self._view_location(parts) is not None:
            raise TableAlreadyExistsError(f"View with same name already exists: {'.'.join(parts)}")

    def _create_staged(
        self, identifier: Identifier, metadata: _native.TableMetadata
    ) -> _native.TableMetadata:
        """Writes `metadata` as version 0 and INSERTs the table's row: the primary key makes
        the insert the atomic create (a row inserted meanwhile: TableAlreadyExistsError, the
        file removed)."""
        parts = self.table_identifier(identifier)
        ns, table_name = parts[:-1], parts[-1]
        self._check_can_create(parts)
        text = metadata.to_json()
        metadata_location = self._new_metadata_location(metadata, 0)
        _io.write_new(metadata_location, text.encode("utf-8"))
        columns = "catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location"
        values = "?, ?, ?, ?, NULL"
        if self._has_type_column:
            columns += ", iceberg_type"
            values += ", 'TABLE'"
        try:
            with self._write() as conn:
                conn.execute(
                    f"INSERT INTO iceberg_tables ({columns}) VALUES ({values})",
                    (self.name, ".".join(ns), table_name, metadata_location),
                )
        except _CommitFailed as e:
            # The row may have landed: keep the file it would name unless it did not.
            try:
                landed = self._metadata_location(parts) == metadata_location
            except Exception as check:
                raise CommitStateUnknownException(
                    f"table {'.'.join(parts)}: the create with {metadata_location} may or may not "
                    f"have happened (its files are kept): {e}; checking failed: {check}"
                ) from e
            if not landed:
                _io.remove_quietly(metadata_location)
                raise
        except self._backend.errors as e:
            _io.remove_quietly(metadata_location)
            if not self._backend.is_duplicate(e):
                raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
            raise TableAlreadyExistsError(
                f"table {'.'.join(parts)} already exists (another writer created it first)"
            ) from None
        except Exception:
            # Not on an interrupt (KeyboardInterrupt, SystemExit), which may land after the
            # COMMIT: a table whose first metadata file is gone cannot be loaded, while an orphan
            # file is harmless (as in `_commit_table`).
            _io.remove_quietly(metadata_location)
            raise
        return _native.TableMetadata.from_json(text, metadata_location)

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        parts = self.table_identifier(identifier)
        ns, table_name = parts[:-1], parts[-1]
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        # Fail before touching the catalog if the file is not table metadata.
        _native.TableMetadata.from_json(_io.read_text(metadata_location), metadata_location)
        columns = "catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location"
        values = "?, ?, ?, ?, NULL"
        if self._has_type_column:
            columns += ", iceberg_type"
            values += ", 'TABLE'"
        try:
            with self._write() as conn:
                conn.execute(
                    f"INSERT INTO iceberg_tables ({columns}) VALUES ({values})",
                    (self.name, ".".join(ns), table_name, metadata_location),
                )
        except self._backend.errors as e:
            if not self._backend.is_duplicate(e):
                raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
            raise TableAlreadyExistsError(f"table {'.'.join(parts)} already exists") from None
        return self.load_table(parts)

    def _metadata_location(self, parts: Identifier) -> str | None:
        rows = self._query(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
            "AND table_name = ?" + self._is_table(),
            (self.name, ".".join(parts[:-1]), parts[-1]),
        )
        return rows[0][0] if rows else None

    def load_table(self, identifier: IdentifierLike) -> Table:
        from icefloe.table import Table

        parts = self.table_identifier(identifier)
        location = self._metadata_location(parts)
        if not location:
            raise NoSuchTableError(f"table {'.'.join(parts)} does not exist")
        metadata = _native.TableMetadata.from_json(_io.read_text(location), location)
        return Table(parts, metadata, location, self)

    def table_exists(self, identifier: IdentifierLike) -> bool:
        return self._metadata_location(self.table_identifier(identifier)) is not None

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        ns = self.identifier_to_tuple(namespace)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        return self._names(ns, self._is_table())

    def drop_table(self, identifier: IdentifierLike) -> None:
        parts = self.table_identifier(identifier)
        if not self._delete_row(parts, self._is_table()):
            raise NoSuchTableError(f"table {'.'.join(parts)} does not exist")

    def rename_table(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> Table:
        src = self.table_identifier(from_identifier)
        dst = self.table_identifier(to_identifier)
        try:
            if not self._rename_row(src, dst, self._is_table()):
                raise NoSuchTableError(f"table {'.'.join(src)} does not exist")
        except self._backend.errors as e:
            if not self._backend.is_duplicate(e):
                raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
            raise TableAlreadyExistsError(f"table {'.'.join(dst)} already exists") from None
        return self.load_table(dst)

    # ---- views (rows of iceberg_type 'VIEW', as Java's JdbcCatalog with its V1 schema) ----
    def _view_default_location(self, identifier: Identifier) -> str:
        return self._default_location(identifier[:-1], identifier[-1])

    def _check_views(self) -> None:
        if not self._has_type_column:
            raise NotSupportedError(
                f"SQL catalog {self.name!r}: its iceberg_tables has no iceberg_type column (Java's "
                "JdbcCatalog V0 schema), so it cannot hold views; Java's jdbc.schema-version=V1 adds it"
            )

    def _view_location(self, parts: Identifier) -> str | None:
        if not self._has_type_column:
            return None
        rows = self._query(
            "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
            "AND table_name = ? AND iceberg_type = 'VIEW'",
            (self.name, ".".join(parts[:-1]), parts[-1]),
        )
        return rows[0][0] if rows else None

    def _load_view_record(self, identifier: Identifier) -> View | None:
        location = self._view_location(identifier)
        if not location:
            return None
        return View(identifier, read_view_metadata(location), location, self)

    def _create_view_record(
        self, identifier: Identifier, metadata: ViewMetadata, location_given: bool
    ) -> View:
        self._check_views()
        ns, name = identifier[:-1], identifier[-1]
        shown = ".".join(identifier)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        if self.table_exists(identifier):
            raise TableAlreadyExistsError(f"Table with same name already exists: {shown}")
        if self._view_location(identifier) is not None:
            raise ViewAlreadyExistsError(f"View already exists: {shown}")
        location = new_view_metadata_location(metadata, 0)
        write_view_metadata(metadata, location)
        try:
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, "
                    "metadata_location, "
                    "previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, 'VIEW')",
                    (self.name, ".".join(ns), name, location),
                )
        except self._backend.errors as e:
            _io.remove_quietly(location)
            if not self._backend.is_duplicate(e):
                raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
            raise ViewAlreadyExistsError(f"View was created concurrently: {shown}") from None
        except _CommitFailed:
            if self._view_location(identifier) != location:
                _io.remove_quietly(location)
            raise
        except Exception:
            _io.remove_quietly(location)
            raise
        return View(identifier, metadata, location, self)

    def _commit_view(self, base: View, new: ViewMetadata) -> View:
        parts = base.identifier
        location = new_view_metadata_location(new, self._version_of(base.metadata_location) + 1)
        write_view_metadata(new, location)
        try:
            with self._write() as conn:
                cur = conn.execute(
                    "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
                    "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? "
                    "AND metadata_location = ? AND iceberg_type = 'VIEW'",
                    (
                        location,
                        base.metadata_location,
                        self.name,
                        ".".join(parts[:-1]),
                        parts[-1],
                        base.metadata_location,
                    ),
                )
                if cur.rowcount < 1:
                    raise CommitConflictError(
                        f"view {'.'.join(parts)} was updated or dropped by another writer "
                        f"(its metadata is no longer {base.metadata_location})"
                    )
        except _CommitFailed:
            if self._view_location(parts) != location:
                _io.remove_quietly(location)
            raise
        except Exception as e:
            _io.remove_quietly(location)
            if isinstance(e, self._backend.errors):
                raise IcefloeIOError(f"SQL catalog commit failed ({self._path}): {e}") from e
            raise
        return View(parts, new, location, self)

    def list_views(self, namespace: IdentifierLike) -> list[Identifier]:
        ns = self.identifier_to_tuple(namespace)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        if not self._has_type_column:
            return []
        return self._names(ns, _IS_VIEW)

    def drop_view(self, identifier: IdentifierLike) -> None:
        parts = self.table_identifier(identifier)
        if not self._has_type_column or not self._delete_row(parts, _IS_VIEW):
            raise NoSuchViewError(f"view {'.'.join(parts)} does not exist")

    def rename_view(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> None:
        src = self.table_identifier(from_identifier)
        dst = self.table_identifier(to_identifier)
        self._check_views()
        if self.table_exists(dst):
            raise TableAlreadyExistsError(
                f"Cannot rename {'.'.join(src)} to {'.'.join(dst)}. Table already exists"
            )
        try:
            if not self._rename_row(src, dst, _IS_VIEW):
                raise NoSuchViewError(f"view {'.'.join(src)} does not exist")
        except self._backend.errors as e:
            if not self._backend.is_duplicate(e):
                raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
            raise ViewAlreadyExistsError(
                f"Cannot rename {'.'.join(src)} to {'.'.join(dst)}. View already exists"
            ) from None

    # ---- namespaces ----
    @staticmethod
    def _like_prefix(ns: str) -> str:
        return ns.replace("!", "!!").replace("_", "!_").replace("%", "!%") + ".%"

    def namespace_exists(self, namespace: IdentifierLike) -> bool:
        ns = self.identifier_to_tuple(namespace)
        if not ns:
            return False
        name = ".".join(ns)
        like = self._like_prefix(name)
        rows = self._query(
            "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND "
            "(table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') "
            "UNION ALL SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND "
            "(namespace = ? OR namespace LIKE ? ESCAPE '!') LIMIT 1",
            (self.name, name, like, self.name, name, like),
        )
        return bool(rows)

    def create_namespace(self, namespace: IdentifierLike, properties: Properties | None = None) -> None:
        ns = self.identifier_to_tuple(namespace)
        if not ns:
            raise ValidationError("cannot create the empty namespace")
        props = {**(properties or {}), "exists": "true"}  # Java's JdbcCatalog always adds it
        name = ".".join(ns)
        try:
            with self._write() as conn:
                self._lock_namespace(conn, name)
                if conn.execute(
                    "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
                    "UNION ALL SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
                    "LIMIT 1",
                    (self.name, name, self.name, name),
                ).fetchall():
                    raise NamespaceAlreadyExistsError(f"namespace {name} already exists")
                conn.executemany(
                    "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
                    "property_value) VALUES (?, ?, ?, ?)",
                    [(self.name, name, str(k), str(v)) for k, v in props.items()],
                )
        except self._backend.errors as e:
            # A client that does not take the lock (Java, PyIceberg) created it meanwhile.
            if not self._backend.is_duplicate(e):
                raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
            raise NamespaceAlreadyExistsError(f"namespace {name} already exists") from None

    def _lock_namespace(self, conn: Connection, name: str) -> None:
        """Serialises this catalog's changes to one namespace's rows (on Postgres, where a write
        transaction does not lock the database as sqlite's does)."""
        self._backend.lock(conn, f"icefloe:namespace:{self.name}:{name}")

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        parent = self.identifier_to_tuple(namespace)
        if parent and not self.namespace_exists(parent):
            raise NoSuchNamespaceError(f"namespace {'.'.join(parent)} does not exist")
        rows = self._query(
            "SELECT table_namespace FROM iceberg_tables WHERE catalog_name = ? "
            "UNION SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ?",
            (self.name, self.name),
        )
        level = len(parent) + 1
        found = {
            tuple(r[0].split("."))[:level]
            for r in rows
            if r[0] and len(r[0].split(".")) >= level and tuple(r[0].split("."))[: level - 1] == parent
        }
        return sorted(found)

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        ns = self.identifier_to_tuple(namespace)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        tables = self.list_tables(ns) + self.list_views(ns)
        children = self.list_namespaces(ns)
        if tables or children:
            held = [".".join(t) for t in tables] + [".".join(c) for c in children]
            raise NamespaceNotEmptyError(
                f"namespace {'.'.join(ns)} is not empty: it holds {', '.join(held[:10])}"
            )
        with self._write() as conn:
            self._lock_namespace(conn, ".".join(ns))
            conn.execute(
                "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?",
                (self.name, ".".join(ns)),
            )

    def load_namespace_properties(self, namespace: IdentifierLike) -> Properties:
        ns = self.identifier_to_tuple(namespace)
        if not self.namespace_exists(ns):
            raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist")
        rows = self._query(
            "SELECT property_key, property_value FROM iceberg_namespace_properties "
            "WHERE catalog_name = ? AND namespace = ?",
            (self.name, ".".join(ns)),
        )
        # As Java's JdbcCatalog.loadNamespaceMetadata: the marker row ("exists") is not a
        # property, and a namespace without a location has the warehouse's folder for it.
        props = {k: v for k, v in rows if k is not None and k != "exists"}
        if "location" not in props and self._warehouse:
            props["location"] = _io.join(self._warehouse, *ns)
        return props

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Properties | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self.identifier_to_tuple(namespace)
        removals = set(removals or ())
        updates = dict(updates or {})
        if removals & set(updates):
            raise ValidationError(f"properties both updated and removed: {sorted(removals & set(updates))}")
        self.load_namespace_properties(ns)  # NoSuchNamespaceError
        name = ".".join(ns)
        try:
            with self._write() as conn:
                # Postgres: without the lock, two updates of one key both delete it, then the
                # second insert fails on the first's row.
                self._lock_namespace(conn, name)
                current = {
                    r[0]
                    for r in conn.execute(
                        "SELECT property_key FROM iceberg_namespace_properties "
                        "WHERE catalog_name = ? AND namespace = ?",
                        (self.name, name),
                    )
                }
                keys = list(removals) + list(updates)
                conn.executemany(
                    "DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? "
                    "AND property_key = ?",
                    [(self.name, name, k) for k in keys],
                )
                conn.executemany(
                    "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, "
                    "property_value) VALUES (?, ?, ?, ?)",
                    [(self.name, name, k, str(v)) for k, v in updates.items()],
                )
        except self._backend.errors as e:
            raise IcefloeIOError(f"SQL catalog update failed ({self._path}): {e}") from e
        return PropertiesUpdateSummary(
            removed=sorted(k for k in removals if k in current),
            updated=sorted(updates),
            missing=sorted(k for k in removals if k not in current),
        )

    # ---- commit ----
    def _commit_table(self, base: CommitBase, new_metadata: _native.TableMetadata) -> _native.TableMetadata:
        return self._commit_tables([(base, new_metadata)])[0]

    def _check_multi_table_commit(self) -> None:
        """The SQL catalog commits several tables in one database transaction."""

    def _commit_tables(
        self, changes: list[tuple[CommitBase, _native.TableMetadata]]
    ) -> list[_native.TableMetadata]:
        """Swaps in each table's new metadata in ONE database transaction: every table's
        pointer moves, or (a table changed meanwhile: CommitConflictError) none does."""
        written: list[tuple[Identifier, str, str, str]] = []  # parts, base location, new location, text
        try:
            for base, new_metadata in changes:
                base_location = base.metadata_location
                location = self._new_metadata_location(new_metadata, self._version_of(base_location) + 1)
                text = new_metadata.to_json()
                _io.write_new(location, text.encode("utf-8"))
                written.append((self.table_identifier(base.identifier), base_location, location, text))
            with self._write() as conn:
                for parts, base_location, location, _text in written:
                    cur = conn.execute(
                        "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
                        "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? "
                        "AND metadata_location = ?",
                        (location, base_location, self.name, ".".join(parts[:-1]), parts[-1], base_location),
                    )
                    if cur.rowcount < 1:
                        exists = conn.execute(
                            "SELECT 1 FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? "
                            "AND table_name = ?",
                            (self.name, ".".join(parts[:-1]), parts[-1]),
                        ).fetchall()
                        if not exists:
                            raise NoSuchTableError(f"table {'.'.join(parts)} no longer exists")
                        raise CommitConflictError(
                            f"table {'.'.join(parts)} was updated by another writer "
                            f"(its metadata is no longer {base_location})"
                        )
        except _CommitFailed as e:
            # A COMMIT without an answer (Postgres: the connection broke) may have landed (for
            # every table or none: one transaction).
            parts, _base, location, _text = written[0]
            landed = self._landed(parts, location)
            if landed is None:
                raise CommitStateUnknownException(
                    f"table {'.'.join(parts)}: the commit of {location} may or may not have happened "
                    f"(its files are kept; reload the table to see): {e}"
                ) from e
            if not landed:
                for _parts, _base, loc, _text in written:
                    _io.remove_quietly(loc)
                raise
        except Exception as e:
            # Before the COMMIT: the database rolled the transaction back, the swap did not
            # happen. (Not on an interrupt, which may land after the COMMIT: an orphan file is
            # harmless.)
            for _parts, _base, loc, _text in written:
                _io.remove_quietly(loc)
            if isinstance(e, self._backend.errors):
                raise IcefloeIOError(f"SQL catalog commit failed ({self._path}): {e}") from e
            raise
        return [
            new_metadata.at_location(location)
            for (_base, new_metadata), (_p, _b, location, _t) in zip(changes, written)
        ]

    def _landed(self, parts: Identifier, location: str) -> bool | None:
        """After a COMMIT that got no answer: whether the table's pointer moved to `location`
        (now, or before a later commit built on it); None when that cannot be known."""
        try:
            rows = self._query(
                "SELECT metadata_location, previous_metadata_location FROM iceberg_tables "
                "WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
                (self.name, ".".join(parts[:-1]), parts[-1]),
            )
            if not rows:
                return False  # dropped: the file is nobody's
            current, previous = rows[0]
            if location in (current, previous):
                return True
            log = _native.TableMetadata.from_json(_io.read_text(current), current).metadata_log()
            return any(entry.get("metadata-file") == location for entry in log)
        except Exception:
            return None

    def __repr__(self) -> str:
        # A sqlite uri holds no secret; a Postgres one may hold a password: its redacted form.
        postgres = isinstance(self._backend, PostgresBackend)
        uri = self._backend.describe if postgres else self.properties.get("uri")
        return f"SqlCatalog({self.name!r}, uri={uri!r})"


def urlparse_scheme(location: str) -> str:
    from urllib.parse import urlparse

    return urlparse(location).scheme
