"""The Iceberg REST catalog client: `load_catalog(name, type="rest", uri=..., ...)`.

The REST OpenAPI spec as Iceberg Java's RESTSessionCatalog implements it: `GET /v1/config`
(defaults < the client's properties < overrides) gives the path `prefix` (put into paths as
it is, `/` included), the `namespace-separator` (joins nested namespace levels in paths and
the `parent` query) and the `endpoints` the server supports (HEAD is used for the exists
checks only when listed; otherwise a GET, as Java does); namespaces (nested), tables
(create, load, register, rename, drop, purge, exists, list); commits as
`requirements` + `updates` (see `_rest_updates`), so every operation commits through it.

A 409 on commit is a CommitConflictError (the shared retry loop refreshes, re-validates and
retries); a 5xx or a lost response is checked against the table (did our snapshot land?)
and otherwise raises CommitStateUnknownException — never a blind retry that could commit
twice. The `config` of a loaded table and its `storage-credentials` (vended credentials,
each for a location prefix: the longest matching prefix wins, over `config`) become that
table's FileIO properties, on the driver and in executor tasks.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import urllib.parse
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from icefloe import _io, _native
from icefloe.catalog._base import Catalog, Identifier, IdentifierLike, Properties, PropertiesUpdateSummary
from icefloe.catalog._rest_client import RestClient
from icefloe.catalog._rest_scan_planning import SUBMIT_PLAN, ServerScanPlanner, planning_mode
from icefloe.catalog._rest_updates import create_updates, requirements_and_updates
from icefloe.exceptions import (
    CommitConflictError,
    CommitStateUnknownException,
    NamespaceAlreadyExistsError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NoSuchViewError,
    NotSupportedError,
    TableAlreadyExistsError,
    ValidationError,
)
from icefloe.view import View, ViewMetadata

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.commit.target import CommitBase
    from icefloe.partitioning import PartitionSpec
    from icefloe.scan import DataScan
    from icefloe.schema import Schema
    from icefloe.sorting import SortOrder
    from icefloe.table import Table

__all__ = ["RestCatalog"]

# Namespace levels in a path segment, URL-encoded (the spec's unit separator), unless the
# server's config says otherwise (`namespace-separator`, e.g. `%2E`).
_DEFAULT_SEP = "%1F"
# The exists checks HEAD only when /v1/config lists them; Java's defaults for a server that
# lists no endpoints do not include them.
_TABLE_EXISTS = "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}"
_NAMESPACE_EXISTS = "HEAD /v1/{prefix}/namespaces/{namespace}"
logger = logging.getLogger("icefloe")
_COMMIT_TRANSACTION = "POST /v1/{prefix}/transactions/commit"
_REPORT_METRICS = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics"
# Freshness-aware loading: answers kept for at most this long (vended credentials in them may
# expire; Java's table cache keeps them 5 minutes), for at most this many tables.
_FRESH_S = 300.0
_FRESH_MAX = 32


class RestCatalog(Catalog):
    """A catalog served over Iceberg's REST protocol (Polaris, Unity, Glue, Nessie,
    Lakekeeper, S3 Tables, Iceberg's own RESTCatalogServer, ...)."""

    def __init__(self, name: str, **properties: str) -> None:
        uri = properties.get("uri")
        if not uri:
            raise ValidationError(f"REST catalog {name!r} needs a 'uri' (e.g. http://localhost:8181)")
        client = RestClient(uri, properties)
        query = {"warehouse": properties["warehouse"]} if properties.get("warehouse") else None
        config = client.request("GET", "v1/config", query=query) or {}
        merged = {**config.get("defaults", {}), **properties, **config.get("overrides", {})}
        super().__init__(name, **merged)
        self._client = RestClient(self.properties.get("uri", uri), self.properties)
        self._client.idempotency = bool(config.get("idempotency-key-lifetime"))
        # The prefix goes into paths as it is (Java's ResourcePaths): `catalogs/one` stays
        # two path segments.
        prefix = self.properties.get("prefix", "").strip("/")
        self._base = f"v1/{prefix}/" if prefix else "v1/"
        self._sep = self.properties.get("namespace-separator") or _DEFAULT_SEP
        self._endpoints = _endpoints(config.get("endpoints"))
        # loadTable answers by table: (when, ETag, answer, its parsed metadata), newest last.
        self._fresh: OrderedDict[Identifier, tuple[float, str, dict[str, Any], _native.TableMetadata]] = (
            OrderedDict()
        )
        self._fresh_lock = threading.Lock()
        # The `config` of each table's last loadTable / createTable answer.
        self._table_config: dict[Identifier, dict[str, str]] = {}
        self._warned_local_planning = False

    # ---- paths ----
    def _ns_segment(self, ns: Identifier) -> str:
        """Each level URL-encoded, joined by the separator as it is (Java's
        RESTUtil.encodeNamespace)."""
        return self._sep.join(urllib.parse.quote(level, safe="") for level in ns)

    def _ns_path(self, ns: Identifier) -> str:
        return f"{self._base}namespaces/{self._ns_segment(ns)}"

    def _table_path(self, parts: Identifier) -> str:
        return f"{self._ns_path(parts[:-1])}/tables/{urllib.parse.quote(parts[-1], safe='')}"

    # ---- tables ----
    def _table(
        self, parts: Identifier, result: dict[str, Any], metadata: _native.TableMetadata | None = None
    ) -> Table:
        from icefloe.table import Table

        location = result.get("metadata-location")
        if metadata is None:
            metadata = _native.TableMetadata.from_json(json.dumps(result["metadata"]), location)
        vended = _vended_io_properties(self.properties, result, metadata.location)
        # The table's `config` may choose its scan planning mode (Java's RESTSessionCatalog).
        self._table_config[parts] = {str(k): str(v) for k, v in (result.get("config") or {}).items()}
        return Table(parts, metadata, location or "", self, io_properties=vended)

    def create_table(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None = None,
        sort_order: SortOrder | None = None,
        properties: Properties | None = None,
        location: str | None = None,
    ) -> Table:
        parts = self.table_identifier(identifier)
        result = self._create(parts, schema, partition_spec, sort_order, properties, location, stage=False)
        return self._table(parts, result)

    def _stage_create(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Properties | None,
        location: str | None,
    ) -> tuple[Identifier, _native.TableMetadata, Properties]:
        """`stage-create`: the server checks the name and answers the new table's metadata
        (its location, uuid, properties) and storage config / vended credentials, without
        creating anything."""
        parts = self.table_identifier(identifier)
        result = self._create(parts, schema, partition_spec, sort_order, properties, location, stage=True)
        metadata = _native.TableMetadata.from_json(json.dumps(result["metadata"]))
        return parts, metadata, _vended_io_properties(self.properties, result, metadata.location)

    def _create_staged(
        self, identifier: Identifier, metadata: _native.TableMetadata
    ) -> _native.TableMetadata:
        """The commit of a create transaction (Java's RESTTableOperations for a CREATE):
        requirement `assert-create`, updates building the metadata from nothing."""
        parts = self.table_identifier(identifier)
        body = {
            "identifier": {"namespace": list(parts[:-1]), "name": parts[-1]},
            "requirements": [{"type": "assert-create"}],
            "updates": create_updates(metadata),
        }
        try:
            got = self._client.request("POST", self._table_path(parts), body, commit=True)
        except (CommitConflictError, TableAlreadyExistsError) as e:
            raise TableAlreadyExistsError(
                f"table {'.'.join(parts)} already exists (created by another writer before this "
                f"create transaction committed): {e}"
            ) from None
        except CommitStateUnknownException as unknown:
            try:
                current = self.load_table(parts).metadata
            except Exception:  # not there (yet?) or unreachable: still unknown
                raise unknown from None
            if current.table_uuid != metadata.table_uuid:
                raise TableAlreadyExistsError(
                    f"table {'.'.join(parts)} already exists (created by another writer, uuid "
                    f"{current.table_uuid}, not this transaction's {metadata.table_uuid})"
                ) from None
            return current
        return _native.TableMetadata.from_json(json.dumps(got["metadata"]), got.get("metadata-location"))

    def _create(
        self,
        identifier: IdentifierLike,
        schema: Schema | pa.Schema,
        partition_spec: PartitionSpec | None,
        sort_order: SortOrder | None,
        properties: Properties | None,
        location: str | None,
        stage: bool,
    ) -> dict[str, Any]:
        parts = self.table_identifier(identifier)
        # Built locally for its JSON (schema ids, spec, order); the server assigns the rest.
        md = self._new_table_metadata(
            schema, partition_spec, sort_order, location or "s3://unused", properties
        )
        body: dict[str, Any] = {
            "name": parts[-1],
            "schema": json.loads(md.schema_json()),
            "partition-spec": json.loads(md.spec_json()),
            "write-order": json.loads(md.sort_order_json()),
            "stage-create": stage,
            "properties": {**md.properties, "format-version": str(md.format_version)},
        }
        if location:
            body["location"] = location.rstrip("/")
        result: dict[str, Any] = self._client.request("POST", f"{self._ns_path(parts[:-1])}/tables", body)
        return result

    def load_table(self, identifier: IdentifierLike) -> Table:
        """The table's current version. A table this catalog object loaded in the last
        `_FRESH_S` seconds is asked for with `If-None-Match` (the ETag of that answer): a 304
        reuses that answer, already parsed, where the server supports freshness-aware loading
        (Iceberg 1.11's; Java's RESTSessionCatalog does the same)."""
        parts = self.table_identifier(identifier)
        now = time.monotonic()
        with self._fresh_lock:
            held = self._fresh.get(parts)
        if held is not None and now - held[0] > _FRESH_S:
            held = None
        result, etag, unchanged = self._client.get_fresh(self._table_path(parts), held[1] if held else None)
        if unchanged and held is not None:
            return self._table(parts, held[2], held[3])
        table = self._table(parts, result)
        with self._fresh_lock:
            self._fresh.pop(parts, None)
            if etag:
                self._fresh[parts] = (now, etag, result, table.metadata)
                while len(self._fresh) > _FRESH_MAX:
                    self._fresh.popitem(last=False)
        return table

    def register_table(self, identifier: IdentifierLike, metadata_location: str) -> Table:
        parts = self.table_identifier(identifier)
        body = {"name": parts[-1], "metadata-location": metadata_location}
        result = self._client.request("POST", f"{self._ns_path(parts[:-1])}/register", body)
        return self._table(parts, result)

    def table_exists(self, identifier: IdentifierLike) -> bool:
        path = self._table_path(self.table_identifier(identifier))
        if _TABLE_EXISTS in self._endpoints:
            return self._client.exists(path)
        return self._client.exists(path, method="GET")  # loadTable, as Java falls back

    def list_tables(self, namespace: IdentifierLike) -> list[Identifier]:
        return self._list(namespace, "tables")

    def _list(self, namespace: IdentifierLike, kind: str) -> list[Identifier]:
        """Every identifier of `kind` (`tables`, `views`) in the namespace, page by page."""
        ns = self.identifier_to_tuple(namespace)
        out: list[Identifier] = []
        token: str | None = None
        while True:
            got = self._client.request(
                "GET", f"{self._ns_path(ns)}/{kind}", query={"pageToken": token} if token else None
            )
            out += [(*i["namespace"], i["name"]) for i in got.get("identifiers", [])]
            token = got.get("next-page-token")
            if not token:
                return out

    def _rename(
        self, kind: str, from_identifier: IdentifierLike, to_identifier: IdentifierLike
    ) -> Identifier:
        src, dst = self.table_identifier(from_identifier), self.table_identifier(to_identifier)
        body = {
            "source": {"namespace": list(src[:-1]), "name": src[-1]},
            "destination": {"namespace": list(dst[:-1]), "name": dst[-1]},
        }
        self._client.request("POST", f"{self._base}{kind}/rename", body)
        return dst

    def drop_table(self, identifier: IdentifierLike) -> None:
        self._client.request("DELETE", self._table_path(self.table_identifier(identifier)))

    def purge_table(self, identifier: IdentifierLike) -> None:
        """Drops the table and asks the server to delete its files (`purgeRequested`)."""
        parts = self.table_identifier(identifier)
        self._client.request("DELETE", self._table_path(parts), query={"purgeRequested": "true"})

    def rename_table(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> Table:
        return self.load_table(self._rename("tables", from_identifier, to_identifier))

    # ---- namespaces ----
    def create_namespace(self, namespace: IdentifierLike, properties: Properties | None = None) -> None:
        ns = self.identifier_to_tuple(namespace)
        if not ns:
            raise ValidationError("cannot create the empty namespace")
        body = {"namespace": list(ns), "properties": {str(k): str(v) for k, v in (properties or {}).items()}}
        try:
            self._client.request("POST", f"{self._base}namespaces", body)
        except TableAlreadyExistsError as e:
            raise NamespaceAlreadyExistsError(str(e)) from None

    def list_namespaces(self, namespace: IdentifierLike = ()) -> list[Identifier]:
        ns = self.identifier_to_tuple(namespace)
        out: list[Identifier] = []
        token: str | None = None
        while True:
            # Java's RESTUtil.namespaceToQueryParam: the separator URL-decoded.
            query = {"parent": urllib.parse.unquote_plus(self._sep).join(ns)} if ns else {}
            if token:
                query["pageToken"] = token
            got = self._client.request("GET", f"{self._base}namespaces", query=query or None)
            out += [tuple(n) for n in got.get("namespaces", [])]
            token = got.get("next-page-token")
            if not token:
                return out

    def drop_namespace(self, namespace: IdentifierLike) -> None:
        ns = self.identifier_to_tuple(namespace)
        try:
            self._client.request("DELETE", self._ns_path(ns))
        except NoSuchTableError as e:
            raise NoSuchNamespaceError(str(e)) from None

    def load_namespace_properties(self, namespace: IdentifierLike) -> Properties:
        ns = self.identifier_to_tuple(namespace)
        got = self._client.request("GET", self._ns_path(ns))
        return {str(k): str(v) for k, v in (got.get("properties") or {}).items()}

    def namespace_exists(self, namespace: IdentifierLike) -> bool:
        ns = self.identifier_to_tuple(namespace)
        if not ns:
            return False
        method = "HEAD" if _NAMESPACE_EXISTS in self._endpoints else "GET"  # GET: loadNamespace
        return self._client.exists(self._ns_path(ns), method=method)

    def update_namespace_properties(
        self,
        namespace: IdentifierLike,
        removals: set[str] | None = None,
        updates: Properties | None = None,
    ) -> PropertiesUpdateSummary:
        ns = self.identifier_to_tuple(namespace)
        body = {
            "removals": sorted(removals or ()),
            "updates": {str(k): str(v) for k, v in (updates or {}).items()},
        }
        got = self._client.request("POST", f"{self._ns_path(ns)}/properties", body)
        return PropertiesUpdateSummary(
            removed=list(got.get("removed", [])),
            updated=list(got.get("updated", [])),
            missing=list(got.get("missing") or []),
        )

    # ---- commit ----
    # ---- views (the REST spec's /views endpoints; the server writes the metadata files) ----
    def _view_path(self, parts: Identifier) -> str:
        return f"{self._ns_path(parts[:-1])}/views/{urllib.parse.quote(parts[-1], safe='')}"

    def _view(self, parts: Identifier, result: dict[str, Any]) -> View:
        location = str(result.get("metadata-location") or "")
        return View(
            parts, ViewMetadata.from_dict(result["metadata"], f"view {'.'.join(parts)}"), location, self
        )

    def _view_default_location(self, identifier: Identifier) -> str:
        return ""  # the server chooses it

    def _load_view_record(self, identifier: Identifier) -> View | None:
        try:
            return self._view(identifier, self._client.request("GET", self._view_path(identifier)))
        except NoSuchViewError:
            return None

    def _create_view_record(
        self, identifier: Identifier, metadata: ViewMetadata, location_given: bool
    ) -> View:
        body: dict[str, Any] = {
            "name": identifier[-1],
            "schema": metadata.schema().to_dict(),
            "view-version": metadata.current_version.to_dict(),
            "properties": dict(metadata.properties),
        }
        if location_given:
            body["location"] = metadata.location
        result = self._client.request("POST", f"{self._ns_path(identifier[:-1])}/views", body)
        return self._view(identifier, result)

    def _commit_view(self, base: View, new: ViewMetadata) -> View:
        """The changes from `base` to `new` as the spec's view updates (a version added in
        this change names its new schema, and is made current, as "last added": -1, so the
        server's own numbering holds), asserting the view's uuid."""
        old = base.metadata
        updates: list[dict[str, Any]] = []
        changed = {k: v for k, v in new.properties.items() if old.properties.get(k) != v}
        removed = [k for k in old.properties if k not in new.properties]
        if changed:
            updates.append({"action": "set-properties", "updates": changed})
        if removed:
            updates.append({"action": "remove-properties", "removals": removed})
        if new.location != old.location:
            updates.append({"action": "set-location", "location": new.location})
        old_schemas = {s.schema_id for s in old.schemas}
        added_schemas = [s for s in new.schemas if s.schema_id not in old_schemas]
        for s in added_schemas:
            updates.append({"action": "add-schema", "schema": s.to_dict()})
        old_versions = {v.version_id for v in old.versions}
        added = [v for v in new.versions if v.version_id not in old_versions]
        for v in added:
            version = v.to_dict()
            if added_schemas and v.schema_id == added_schemas[-1].schema_id:
                version["schema-id"] = -1
            updates.append({"action": "add-view-version", "view-version": version})
        if new.current_version_id != old.current_version_id:
            last = bool(added) and added[-1].version_id == new.current_version_id
            updates.append(
                {
                    "action": "set-current-view-version",
                    "view-version-id": -1 if last else new.current_version_id,
                }
            )
        parts = base.identifier
        body = {
            "identifier": {"namespace": list(parts[:-1]), "name": parts[-1]},
            "requirements": [{"type": "assert-view-uuid", "uuid": old.view_uuid}],
            "updates": updates,
        }
        return self._view(parts, self._client.request("POST", self._view_path(parts), body, commit=True))

    def list_views(self, namespace: IdentifierLike) -> list[Identifier]:
        return self._list(namespace, "views")

    def drop_view(self, identifier: IdentifierLike) -> None:
        self._client.request("DELETE", self._view_path(self.table_identifier(identifier)))

    def rename_view(self, from_identifier: IdentifierLike, to_identifier: IdentifierLike) -> None:
        self._rename("views", from_identifier, to_identifier)

    def _table_change(self, base: CommitBase, new_metadata: _native.TableMetadata) -> dict[str, Any]:
        """The REST `CommitTableRequest` turning `base` into `new_metadata`."""
        parts = self.table_identifier(base.identifier)
        requirements, updates = requirements_and_updates(base.metadata, new_metadata)
        return {
            "identifier": {"namespace": list(parts[:-1]), "name": parts[-1]},
            "requirements": requirements,
            "updates": updates,
        }

    def _commit_table(self, base: CommitBase, new_metadata: _native.TableMetadata) -> _native.TableMetadata:
        parts = self.table_identifier(base.identifier)
        body = self._table_change(base, new_metadata)
        try:
            got = self._client.request("POST", self._table_path(parts), body, commit=True)
        except CommitStateUnknownException:
            landed = self._landed(parts, new_metadata)
            if landed is not None:
                return landed
            raise
        return _native.TableMetadata.from_json(json.dumps(got["metadata"]), got.get("metadata-location"))

    def _metrics_reporting(self) -> bool:
        """Java's RESTMetricsReporter: when the server lists the metrics endpoint (or no
        endpoints) and `rest-metrics-reporting-enabled` is not false."""
        if self.properties.get("rest-metrics-reporting-enabled", "true").strip().lower() == "false":
            return False
        return not self._endpoints or _REPORT_METRICS in self._endpoints

    def _report_metrics(self, table: Table, report: dict[str, Any]) -> None:
        """`POST .../tables/{table}/metrics`. A failure is logged, never raised: a report never
        fails the scan or commit it is about."""
        try:
            path = f"{self._table_path(self.table_identifier(table.identifier))}/metrics"
            self._client.request("POST", path, report)
        except Exception as e:
            logger.warning("icefloe: could not report metrics of %s to %s: %s", table, self.name, e)

    def _plan_scan_on_server(self, scan: DataScan) -> _native.ScanPlan | None:
        """Server-side scan planning (see `_rest_scan_planning`) when the table's planning mode
        is `server` and the server offers it. A server that does not list the endpoint: the
        scan plans locally, unless the server's own table config asked for server planning
        (then, as in Java, an error)."""
        table = scan.table
        config = self._table_config.get(self.table_identifier(table.identifier), {})
        mode, by_server = planning_mode(self.properties, config)
        if mode != "server" or scan.from_snapshot_id is not None or scan.to_snapshot_id is not None:
            return None  # Java plans only table scans on the server, not incremental ones
        if SUBMIT_PLAN not in self._endpoints:
            if by_server:
                raise NotSupportedError(
                    f"the server requires server-side scan planning for table {'.'.join(table.identifier)} "
                    f"but does not offer {SUBMIT_PLAN}"
                )
            if not self._warned_local_planning:
                self._warned_local_planning = True
                logger.warning(
                    "icefloe: %s does not offer %s; its scans are planned locally", self.name, SUBMIT_PLAN
                )
            return None
        if "_last_updated_sequence_number" in scan.selected_fields:
            return None  # needs the sequence numbers content files do not carry
        snapshot = scan.snapshot()
        committed = table._commit_base().metadata
        if snapshot is not None and committed.snapshot_by_id(snapshot.snapshot_id) is None:
            return None  # a transaction's staged snapshot, which the server does not have
        path = self._table_path(self.table_identifier(table.identifier))
        plan, credentials = ServerScanPlanner(self._client, path, self._endpoints, self.properties).plan(scan)
        if credentials:
            _vended_io_properties(self.properties, {"storage-credentials": credentials}, table.location())
        return plan

    def _check_multi_table_commit(self) -> None:
        """A server that lists its endpoints must list the multi-table commit."""
        if self._endpoints and _COMMIT_TRANSACTION not in self._endpoints:
            raise NotSupportedError(
                f"REST catalog {self.name!r} ({self._client.uri}) does not offer {_COMMIT_TRANSACTION} "
                "(not among the endpoints of its /v1/config): it cannot commit several tables atomically"
            )

    def _commit_tables(
        self, changes: list[tuple[CommitBase, _native.TableMetadata]]
    ) -> list[_native.TableMetadata]:
        """One `POST /v1/{prefix}/transactions/commit` of every table's requirements and
        updates: the server applies all or none (409 when one table's requirements fail)."""
        self._check_multi_table_commit()
        names = [self.table_identifier(base.identifier) for base, _ in changes]
        table_changes = [self._table_change(base, new_metadata) for base, new_metadata in changes]
        try:
            self._client.request(
                "POST", f"{self._base}transactions/commit", {"table-changes": table_changes}, commit=True
            )
        except CommitStateUnknownException:
            # All or nothing: it landed when every table holds its new snapshot.
            landed = [self._landed(parts, md) for parts, (_b, md) in zip(names, changes)]
            if all(m is not None for m in landed):
                return [m for m in landed if m is not None]
            raise
        # The answer is empty (204): each table's committed version is loaded.
        return [self.load_table(parts).metadata for parts in names]

    def _landed(self, parts: Identifier, new_metadata: _native.TableMetadata) -> _native.TableMetadata | None:
        """After an unknown outcome: the table's metadata if our new snapshot is in it."""
        sid = new_metadata.current_snapshot_id
        if sid is None:
            return None
        try:
            current = self.load_table(parts).metadata
        except Exception:  # the server is still unreachable: the state stays unknown
            return None
        return current if current.snapshot_by_id(sid) is not None else None

    def __repr__(self) -> str:
        return f"RestCatalog({self.name!r}, uri={self.properties.get('uri')!r})"


def _endpoints(listed: Any) -> frozenset[str]:
    """The `endpoints` of a /v1/config answer as `METHOD path` strings (method upper-cased, as
    Java's Endpoint.fromString); none listed: Java's defaults, which hold no HEAD endpoint
    (only those matter here, so the empty set stands for them)."""
    out = set()
    for e in listed or ():
        method, sep, path = str(e).partition(" ")
        if sep and method and path and " " not in path:
            out.add(f"{method.upper()} {path}")
    return frozenset(out)


def _vended_io_properties(
    catalog_properties: Properties, result: dict[str, Any], location: str
) -> Properties:
    """The FileIO properties a loadTable / createTable answer gives the table: its `config`,
    then the config of the `storage-credentials` entry whose prefix is the longest match of
    the table's location (Java's S3FileIO: a credential's config over the catalog's and the
    table's properties). Every credential with a remote prefix is also registered for that
    prefix (catalog properties < `config` < the credential), so a file of the table under a
    longer prefix uses its own credential, in this process and in Spark tasks (which carry
    every registered prefix). Values are never logged or shown."""
    config = {str(k): str(v) for k, v in (result.get("config") or {}).items()}
    credentials: list[tuple[str, Properties]] = []
    for c in result.get("storage-credentials") or ():
        if isinstance(c, dict) and isinstance(c.get("prefix"), str) and isinstance(c.get("config"), dict):
            credentials.append((c["prefix"], {str(k): str(v) for k, v in c["config"].items()}))
    for prefix, cred in credentials:
        try:
            remote = not _io.is_local(prefix) and bool(_io.parse(prefix)[1])
        except ValidationError:  # a bare scheme (`s3`, `s3://`): only the match below uses it
            remote = False
        if remote:
            _io.register(prefix, {**catalog_properties, **config, **cred})
    matching = [(prefix, cred) for prefix, cred in credentials if location.startswith(prefix)]
    if matching:
        config.update(max(matching, key=lambda m: len(m[0]))[1])
    return config
