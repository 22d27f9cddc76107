"""Names in a statement: which are icefloe tables, in which catalog, and at which snapshot.

A multi-part name resolves as Spark resolves it against catalogs (Spark's
`LookupCatalog`), with icefloe's catalogs standing in for Spark's:

- `cat.ns.t` where `cat` is an icefloe catalog: table `ns.t` of `cat`;
- otherwise, when `USE` (through `icefloe.spark.sql`) made an icefloe catalog current: a
  one-part `t` is `t` in the current namespace (unless it is a CTE or a temp view, which
  Spark resolves first), and `ns.t` is `ns.t` of the current catalog;
- otherwise the name is Spark's and is left alone.

The icefloe catalogs of a statement are those passed as `catalogs=`, then those the
session configures (`icefloe.catalog.<name>.<property>`, as the data source reads them),
then those an earlier `USE` of the session named. The table part resolves as Iceberg
Java's `SparkCatalog.load` does: the whole identifier if it is a table, else its last part
is a selector of the table before it (`branch_<name>`, `tag_<name>`, `snapshot_id_<id>`,
`at_timestamp_<millis>`) or a metadata table (`snapshots`, `files`, ...).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icefloe.exceptions import NoSuchNamespaceError, NoSuchTableError, ValidationError
from icefloe.inspect import METADATA_TABLES

# `<table>.changes`: Java's SparkChangelogTable, the changelog of the table's snapshots.
CHANGES = "changes"

if TYPE_CHECKING:
    from icefloe.catalog import Catalog
    from icefloe.table import Table

__all__ = ["Resolver", "SessionState", "TableRef", "session_state"]

_SELECTORS = (
    ("snapshot_id", re.compile(r"snapshot_id_(\d+)")),
    ("as_of_timestamp", re.compile(r"at_timestamp_(\d+)")),
    ("branch", re.compile(r"branch_(.*)")),
    ("tag", re.compile(r"tag_(.*)")),
)


@dataclass
class SessionState:
    """What `USE` set for a session: the current icefloe catalog (None: Spark's) and
    namespace, and the catalog objects statements of the session named."""

    catalog: str | None = None
    namespace: tuple[str, ...] = ()
    catalogs: dict[str, Catalog] = field(default_factory=dict)


# One state per session object, weakly held (a dead session's id() may be reused).
_STATES: weakref.WeakKeyDictionary[Any, SessionState] = weakref.WeakKeyDictionary()
# Catalogs built from session conf, by (name, properties): built once, not per statement.
_CONF_CATALOGS: dict[tuple[str, tuple[tuple[str, str], ...]], Catalog] = {}


def _session_conf(spark: Any) -> dict[str, str]:
    """The session's confs: PySpark 4's `spark.conf.getAll`; before it, Spark's `SET`
    command (runtime confs included, which `SparkContext.getConf` misses)."""
    conf = getattr(spark.conf, "getAll", None)
    if callable(conf):
        conf = conf()
    if conf is None:
        conf = {row[0]: row[1] for row in spark.sql("SET").collect()}
    return {str(k): str(v) for k, v in dict(conf).items()}


def _icefloe_catalogs(conf: Mapping[str, str]) -> dict[str, dict[str, str]]:
    """`icefloe.catalog.<name>.<property>` confs by catalog name (as the data source reads them)."""
    from icefloe.spark.datasource import CONF_PREFIX

    found: dict[str, dict[str, str]] = {}
    for key, value in conf.items():
        if key.startswith(CONF_PREFIX):
            name, _, prop = key[len(CONF_PREFIX) :].partition(".")
            if name and prop:
                found.setdefault(name, {})[prop] = value
    return found


def session_state(spark: Any) -> SessionState:
    state = _STATES.get(spark)
    if state is None:
        state = _STATES[spark] = SessionState()
    return state


@dataclass(frozen=True)
class TableRef:
    """An icefloe table a statement names: its catalog, identifier, and what of it is read
    (a snapshot, ref or time from the name's selector; a metadata table)."""

    catalog_name: str
    catalog: Catalog
    identifier: tuple[str, ...]
    snapshot_id: int | None = None
    ref: str | None = None
    as_of_timestamp: int | None = None
    metadata_table: str | None = None

    @property
    def name(self) -> str:
        return ".".join((self.catalog_name, *self.identifier))

    @property
    def has_selector(self) -> bool:
        return self.snapshot_id is not None or self.ref is not None or self.as_of_timestamp is not None

    def load(self) -> Table:
        return self.catalog.load_table(self.identifier)


class Resolver:
    """Resolves the names of one statement (see the module's docstring)."""

    def __init__(self, spark: Any, catalogs: Mapping[str, Catalog] | None = None) -> None:
        self.spark = spark
        self.state = session_state(spark)
        self._given = dict(catalogs or {})
        self._conf: dict[str, dict[str, str]] | None = None
        self._all_conf: dict[str, str] | None = None
        self._temp_views: set[str] | None = None
        self._exists: dict[tuple[str, tuple[str, ...]], bool] = {}

    # ---- catalogs ----
    def _session_conf(self) -> dict[str, str]:
        if self._all_conf is None:
            self._all_conf = _session_conf(self.spark)
        return self._all_conf

    def _conf_catalogs(self) -> dict[str, dict[str, str]]:
        if self._conf is None:
            self._conf = _icefloe_catalogs(self._session_conf())
        return self._conf

    def is_spark_catalog(self, name: str) -> bool:
        """Whether `name` is one of Spark's catalogs (`spark_catalog`, `spark.sql.catalog.<name>`)
        and not an icefloe catalog, which comes first."""
        if self.is_catalog(name):
            return False
        return name == "spark_catalog" or f"spark.sql.catalog.{name}" in self._session_conf()

    def is_catalog(self, name: str) -> bool:
        return name in self._given or name in self._conf_catalogs() or name in self.state.catalogs

    def catalog(self, name: str) -> Catalog:
        found = self._given.get(name)
        if found is None and name in self._conf_catalogs():
            from icefloe.catalog import load_catalog

            props = self._conf_catalogs()[name]
            key = (name, tuple(sorted(props.items())))
            found = _CONF_CATALOGS.get(key)
            if found is None:
                found = _CONF_CATALOGS[key] = load_catalog(name, **props)
        if found is None:
            found = self.state.catalogs.get(name)
        if found is None:
            raise ValidationError(f"{name!r} is not an icefloe catalog")
        self.state.catalogs[name] = found
        return found

    @property
    def current_catalog(self) -> str | None:
        name = self.state.catalog
        return name if name is not None and self.is_catalog(name) else None

    # ---- names ----
    def split(
        self, parts: Sequence[str], cte_names: frozenset[str] = frozenset()
    ) -> tuple[str, tuple[str, ...]] | None:
        """(icefloe catalog name, the rest of the name) of a multi-part name, or None when the
        name is Spark's."""
        parts = tuple(parts)
        if len(parts) >= 2 and self.is_catalog(parts[0]):
            return parts[0], parts[1:]
        current = self.current_catalog
        if current is None or (len(parts) >= 2 and self.is_spark_catalog(parts[0])):
            return None
        if len(parts) == 1:
            if parts[0].lower() in cte_names or self.is_temp_view(parts[0]):
                return None
            return current, (*self.state.namespace, parts[0])
        return current, parts

    def is_temp_view(self, name: str) -> bool:
        if self._temp_views is None:
            self._temp_views = {
                t.name.lower() for t in self.spark.catalog.listTables() if getattr(t, "isTemporary", False)
            }
        return name.lower() in self._temp_views

    def table(self, parts: Sequence[str], cte_names: frozenset[str] = frozenset()) -> TableRef | None:
        """The icefloe table a name names (None when the name is Spark's); NoSuchTableError
        when it is in an icefloe catalog and names no table."""
        found = self.split(parts, cte_names)
        if found is None:
            return None
        name, rest = found
        return self.table_in(name, rest)

    def table_exists(self, catalog_name: str, rest: tuple[str, ...]) -> bool:
        """Whether `rest` is a table of the catalog, asked once per statement (a query's names
        are resolved for its views, its aggregates and its reads)."""
        key = (catalog_name, tuple(rest))
        if key not in self._exists:
            self._exists[key] = self.catalog(catalog_name).table_exists(rest)
        return self._exists[key]

    def table_in(self, catalog_name: str, rest: tuple[str, ...]) -> TableRef:
        catalog = self.catalog(catalog_name)
        if len(rest) >= 2 and self.table_exists(catalog_name, rest):
            return TableRef(catalog_name, catalog, rest)
        if len(rest) >= 3 and self.table_exists(catalog_name, rest[:-1]):
            last = rest[-1]
            for kind, pattern in _SELECTORS:
                m = pattern.fullmatch(last)
                if m is None:
                    continue
                value = m.group(1)
                if kind == "snapshot_id":
                    return TableRef(catalog_name, catalog, rest[:-1], snapshot_id=int(value))
                if kind == "as_of_timestamp":
                    return TableRef(catalog_name, catalog, rest[:-1], as_of_timestamp=int(value))
                return TableRef(catalog_name, catalog, rest[:-1], ref=value)
            if last.lower() in METADATA_TABLES or last.lower() == CHANGES:
                return TableRef(catalog_name, catalog, rest[:-1], metadata_table=last.lower())
        raise NoSuchTableError(f"Table or view not found: {'.'.join((catalog_name, *rest))}")

    def namespace(self, parts: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
        """(icefloe catalog name, namespace) of a namespace name, or None when it is Spark's."""
        parts = tuple(parts)
        if parts and self.is_catalog(parts[0]):
            return parts[0], parts[1:]
        current = self.current_catalog
        if current is None or (parts and self.is_spark_catalog(parts[0])):
            return None
        return current, parts

    def use(self, parts: Sequence[str]) -> bool:
        """`USE parts`: makes an icefloe catalog and namespace current (True), or makes the
        session's names Spark's again (False, the statement is then Spark's)."""
        parts = tuple(parts)
        if parts and self.is_catalog(parts[0]):
            name, namespace = parts[0], parts[1:]
        elif self.current_catalog is not None and parts and not self.is_spark_catalog(parts[0]):
            name, namespace = self.current_catalog, parts
        else:
            self.state.catalog, self.state.namespace = None, ()
            return False
        catalog = self.catalog(name)
        if namespace and not catalog.namespace_exists(namespace):
            raise NoSuchNamespaceError(f"Namespace not found: {'.'.join((name, *namespace))}")
        self.state.catalog, self.state.namespace = name, namespace
        return True
