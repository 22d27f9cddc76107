"""Iceberg views (the view spec, format version 1): metadata, versions, and the view object a
catalog loads.

A view's metadata file holds its schemas, its versions (each a query in one or more SQL
dialects, the schema its query produces, and the catalog and namespace its unqualified names
resolve in) and the log of which version was current when. Files are written as Iceberg Java's
`BaseViewOperations` writes them: `<location>/metadata/<NNNNN>-<uuid>.gz.metadata.json`,
gzip unless the view's `write.metadata.compression-codec` says `none`, in
`write.metadata.path` when set. A new version follows Java's `ViewMetadata.Builder`: an
equal schema or version already in the metadata is reused (its id), else the highest id + 1;
the log gains an entry when the current version changes; versions past
`version.history.num-entries` (10) are expired, oldest first, never the current one.

Catalogs that hold views: SQL (`iceberg_type = 'VIEW'` rows, as Java's JdbcCatalog) and REST
(the `/views` endpoints). The filesystem catalog refuses them, as Java's HadoopCatalog does.
"""

from __future__ import annotations

import gzip
import json
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from icefloe import _io
from icefloe.exceptions import InvalidDataError, ValidationError
from icefloe.schema import Schema

if TYPE_CHECKING:
    from icefloe.catalog import Catalog

__all__ = [
    "SQLViewRepresentation",
    "View",
    "ViewHistoryEntry",
    "ViewMetadata",
    "ViewVersion",
    "new_view_metadata_location",
    "read_view_metadata",
    "write_view_metadata",
]

FORMAT_VERSION = 1
HISTORY_SIZE = "version.history.num-entries"
HISTORY_SIZE_DEFAULT = 10
COMPRESSION = "write.metadata.compression-codec"
METADATA_PATH = "write.metadata.path"
REPLACE_DROP_DIALECT_ALLOWED = "replace.drop-dialect.allowed"


@dataclass(frozen=True)
class SQLViewRepresentation:
    """One SQL text of a view version, in one dialect (`spark`, `trino`, ...)."""

    sql: str
    dialect: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "sql", "sql": self.sql, "dialect": self.dialect}


# A representation of a type other than `sql`: kept as read, written back unchanged.
Representation = SQLViewRepresentation | Mapping[str, Any]


def _representation(obj: Any, where: str) -> Representation:
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise InvalidDataError(f"{where}: expected a representation object with a 'type', found {obj!r:.200}")
    if obj["type"].lower() != "sql":
        return dict(obj)
    sql, dialect = obj.get("sql"), obj.get("dialect")
    if not isinstance(sql, str) or not isinstance(dialect, str):
        raise InvalidDataError(
            f"{where}: a sql representation needs string 'sql' and 'dialect', found {obj!r:.200}"
        )
    return SQLViewRepresentation(sql, dialect)


@dataclass(frozen=True)
class ViewVersion:
    """A version of a view: its query representations, the schema they produce, and where
    their unqualified names resolve (`default_catalog` None: the view's own catalog)."""

    version_id: int
    schema_id: int
    timestamp_ms: int
    summary: Mapping[str, str]
    representations: tuple[Representation, ...]
    default_namespace: tuple[str, ...]
    default_catalog: str | None = None

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        """The SQL of `dialect` (case-insensitive), or None."""
        for r in self.representations:
            if isinstance(r, SQLViewRepresentation) and r.dialect.lower() == dialect.lower():
                return r
        return None

    def dialects(self) -> set[str]:
        return {r.dialect.lower() for r in self.representations if isinstance(r, SQLViewRepresentation)}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version-id": self.version_id,
            "timestamp-ms": self.timestamp_ms,
            "schema-id": self.schema_id,
            "summary": dict(self.summary),
        }
        if self.default_catalog is not None:
            out["default-catalog"] = self.default_catalog
        out["default-namespace"] = list(self.default_namespace)
        out["representations"] = [
            r.to_dict() if isinstance(r, SQLViewRepresentation) else dict(r) for r in self.representations
        ]
        return out

    @staticmethod
    def from_dict(obj: Any, where: str = "view version") -> ViewVersion:
        if not isinstance(obj, dict):
            raise InvalidDataError(f"{where}: expected an object, found {obj!r:.200}")
        try:
            reps = obj["representations"]
            if not isinstance(reps, list):
                raise InvalidDataError(f"{where}: 'representations' must be a list, found {reps!r:.200}")
            return ViewVersion(
                version_id=int(obj["version-id"]),
                schema_id=int(obj["schema-id"]),
                timestamp_ms=int(obj["timestamp-ms"]),
                summary={str(k): str(v) for k, v in (obj.get("summary") or {}).items()},
                representations=tuple(_representation(r, where) for r in reps),
                default_namespace=tuple(str(p) for p in obj.get("default-namespace") or ()),
                default_catalog=obj.get("default-catalog"),
            )
        except KeyError as e:
            raise InvalidDataError(f"{where}: missing field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise InvalidDataError(f"{where}: {e}") from None

    def same_as(self, other: ViewVersion) -> bool:
        """Java's `sameViewVersion`: everything but the id and the time."""
        return (
            dict(self.summary) == dict(other.summary)
            and self.representations == other.representations
            and self.default_catalog == other.default_catalog
            and self.default_namespace == other.default_namespace
            and self.schema_id == other.schema_id
        )


@dataclass(frozen=True)
class ViewHistoryEntry:
    timestamp_ms: int
    version_id: int


def _same_schema(a: Schema, b: Schema) -> bool:
    return a.as_struct() == b.as_struct() and list(a.identifier_field_ids) == list(b.identifier_field_ids)


@dataclass(frozen=True)
class ViewMetadata:
    """A view metadata file's content."""

    view_uuid: str
    location: str
    schemas: tuple[Schema, ...]
    current_version_id: int
    versions: tuple[ViewVersion, ...]
    version_log: tuple[ViewHistoryEntry, ...]
    properties: Mapping[str, str] = field(default_factory=dict)
    format_version: int = FORMAT_VERSION

    # ---- reading ----
    @property
    def current_version(self) -> ViewVersion:
        for v in self.versions:
            if v.version_id == self.current_version_id:
                return v
        raise InvalidDataError(
            f"view metadata: current version {self.current_version_id} is not among its versions"
        )

    def schema_by_id(self, schema_id: int) -> Schema:
        for s in self.schemas:
            if s.schema_id == schema_id:
                return s
        raise InvalidDataError(f"view metadata: schema {schema_id} is not among its schemas")

    def schema(self) -> Schema:
        """The current version's schema."""
        return self.schema_by_id(self.current_version.schema_id)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "view-uuid": self.view_uuid,
            "format-version": self.format_version,
            "location": self.location,
        }
        if self.properties:
            out["properties"] = dict(self.properties)
        out["schemas"] = [s.to_dict() for s in self.schemas]
        out["current-version-id"] = self.current_version_id
        out["versions"] = [v.to_dict() for v in self.versions]
        out["version-log"] = [
            {"timestamp-ms": e.timestamp_ms, "version-id": e.version_id} for e in self.version_log
        ]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    @staticmethod
    def from_dict(obj: Any, where: str = "view metadata") -> ViewMetadata:
        if not isinstance(obj, dict):
            raise InvalidDataError(f"{where}: expected a JSON object, found {obj!r:.200}")
        try:
            fv = int(obj["format-version"])
            if fv != FORMAT_VERSION:
                raise InvalidDataError(f"{where}: view format-version {fv} is not supported (expected 1)")
            versions = tuple(ViewVersion.from_dict(v, where) for v in obj["versions"])
            log = tuple(
                ViewHistoryEntry(int(e["timestamp-ms"]), int(e["version-id"]))
                for e in obj.get("version-log") or ()
            )
            metadata = ViewMetadata(
                view_uuid=str(obj["view-uuid"]),
                location=str(obj["location"]),
                schemas=tuple(Schema.from_dict(s) for s in obj["schemas"]),
                current_version_id=int(obj["current-version-id"]),
                versions=versions,
                version_log=log,
                properties={str(k): str(v) for k, v in (obj.get("properties") or {}).items()},
                format_version=fv,
            )
        except KeyError as e:
            raise InvalidDataError(f"{where}: missing field {e.args[0]!r}") from None
        except (TypeError, ValueError) as e:
            raise InvalidDataError(f"{where}: {e}") from None
        metadata.schema()  # the current version and its schema exist
        return metadata

    @staticmethod
    def from_json(text: str, where: str = "view metadata") -> ViewMetadata:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as e:
            raise InvalidDataError(f"{where}: malformed JSON: {e}") from None
        return ViewMetadata.from_dict(obj, where)

    # ---- new metadata (Java's ViewMetadata.Builder) ----
    @staticmethod
    def new(
        location: str, schema: Schema, version: ViewVersion, properties: Mapping[str, str]
    ) -> ViewMetadata:
        """A new view's metadata: `schema` as schema 0 (unless it says otherwise) and `version`
        as version 1, current."""
        _check_version(version)
        schema = Schema(
            *schema.fields, schema_id=schema.schema_id, identifier_field_ids=schema.identifier_field_ids
        )
        version = replace(version, version_id=1, schema_id=schema.schema_id)
        metadata = ViewMetadata(
            view_uuid=str(uuid.uuid4()),
            location=location.rstrip("/"),
            schemas=(schema,),
            current_version_id=1,
            versions=(version,),
            version_log=(ViewHistoryEntry(version.timestamp_ms, 1),),
            properties={str(k): str(v) for k, v in properties.items()},
        )
        return metadata._expired(frozenset({1}))

    def with_version(
        self,
        schema: Schema,
        version: ViewVersion,
        properties: Mapping[str, str] | None = None,
        location: str | None = None,
    ) -> ViewMetadata:
        """A replacement: `version` (its query, namespace and catalog) current with `schema`,
        `properties` set over the view's (Java's `replace`), the location changed if given."""
        _check_version(version)
        schemas = list(self.schemas)
        schema_id = next((s.schema_id for s in schemas if _same_schema(s, schema)), None)
        if schema_id is None:
            schema_id = max((s.schema_id for s in schemas), default=-1) + 1
            schemas.append(
                Schema(*schema.fields, schema_id=schema_id, identifier_field_ids=schema.identifier_field_ids)
            )
        candidate = replace(version, schema_id=schema_id)
        version_id = next((v.version_id for v in self.versions if v.same_as(candidate)), None)
        versions = list(self.versions)
        added: set[int] = set()
        if version_id is None:
            version_id = max(v.version_id for v in versions) + 1
            versions.append(replace(candidate, version_id=version_id))
            added.add(version_id)
        props = {**self.properties, **{str(k): str(v) for k, v in (properties or {}).items()}}
        previous = self.current_version
        log = list(self.version_log)
        if version_id != self.current_version_id:
            log.append(ViewHistoryEntry(candidate.timestamp_ms, version_id))
        new = replace(
            self,
            schemas=tuple(schemas),
            versions=tuple(versions),
            current_version_id=version_id,
            version_log=tuple(log),
            properties=props,
            location=(location or self.location).rstrip("/"),
        )
        if props.get(REPLACE_DROP_DIALECT_ALLOWED, "false").lower() != "true":
            dropped = previous.dialects() - new.current_version.dialects()
            if dropped:
                raise ValidationError(
                    "Cannot replace view due to loss of view dialects "
                    f"({REPLACE_DROP_DIALECT_ALLOWED}=false):\n"
                    f"Previous dialects: {sorted(previous.dialects())}\n"
                    f"New dialects: {sorted(new.current_version.dialects())}"
                )
        return new._expired(frozenset(added | {version_id}))

    def with_properties(
        self, updates: Mapping[str, str] | None = None, removals: Iterable[str] = ()
    ) -> ViewMetadata:
        props = dict(self.properties)
        for k in removals:
            props.pop(k, None)
        props.update({str(k): str(v) for k, v in (updates or {}).items()})
        return replace(self, properties=props)._expired(frozenset({self.current_version_id}))

    def _expired(self, keep: frozenset[int]) -> ViewMetadata:
        """Versions past the history size expired, oldest id first, never `keep` (the versions
        just added and the current one); the log keeps entries of retained versions only."""
        text = self.properties.get(HISTORY_SIZE, str(HISTORY_SIZE_DEFAULT))
        try:
            size = int(text)
        except ValueError:
            raise ValidationError(f"{HISTORY_SIZE} must be an integer, found {text!r}") from None
        if size <= 0:
            raise ValidationError(f"{HISTORY_SIZE} must be positive but was {size}")
        limit = max(len(keep), size)
        if len(self.versions) <= limit:
            return self
        retained = {self.current_version_id}
        for v in sorted(self.versions, key=lambda v: -v.version_id):
            if len(retained) >= limit:
                break
            retained.add(v.version_id)
        versions = tuple(v for v in self.versions if v.version_id in retained)
        log = tuple(e for e in self.version_log if e.version_id in retained)
        return replace(self, versions=versions, version_log=log)


def _check_version(version: ViewVersion) -> None:
    if not version.representations:
        raise ValidationError("a view version needs at least one query representation")
    dialects: set[str] = set()
    for r in version.representations:
        if isinstance(r, SQLViewRepresentation):
            d = r.dialect.lower()
            if d in dialects:
                raise ValidationError(f"Invalid view version: Cannot add multiple queries for dialect {d}")
            dialects.add(d)


def new_version(
    sql: str,
    default_namespace: Iterable[str],
    *,
    dialect: str = "spark",
    default_catalog: str | None = None,
    summary: Mapping[str, str] | None = None,
) -> ViewVersion:
    """A version of one query (ids are assigned when it is added to a view's metadata)."""
    from icefloe import __version__

    return ViewVersion(
        version_id=1,
        schema_id=0,
        timestamp_ms=int(time.time() * 1000),
        summary=dict(summary)
        if summary is not None
        else {"engine-name": "icefloe", "icefloe-version": __version__},
        representations=(SQLViewRepresentation(sql, dialect),),
        default_namespace=tuple(default_namespace),
        default_catalog=default_catalog,
    )


# ---- files ----
def new_view_metadata_location(metadata: ViewMetadata, version: int) -> str:
    """Where version `version` (0 for a new view) of the metadata is written."""
    codec = metadata.properties.get(COMPRESSION, "gzip").lower()
    if codec not in ("gzip", "none"):
        raise ValidationError(f"{COMPRESSION} must be gzip or none, found {codec!r}")
    suffix = ".gz.metadata.json" if codec == "gzip" else ".metadata.json"
    folder = metadata.properties.get(METADATA_PATH) or _io.join(metadata.location, "metadata")
    return _io.join(folder.rstrip("/"), f"{version:05d}-{uuid.uuid4()}{suffix}")


def write_view_metadata(metadata: ViewMetadata, location: str) -> None:
    data = metadata.to_json().encode("utf-8")
    if location.endswith(".gz.metadata.json"):
        data = gzip.compress(data, mtime=0)
    _io.write_new(location, data)


def read_view_metadata(location: str) -> ViewMetadata:
    raw = _io.read_bytes(location)
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise InvalidDataError(f"view metadata {location}: cannot decompress: {e}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InvalidDataError(f"view metadata {location}: not UTF-8 JSON: {e}") from None
    return ViewMetadata.from_json(text, f"view metadata {location}")


class View:
    """A view a catalog loaded: its identifier, metadata and metadata file."""

    def __init__(
        self, identifier: tuple[str, ...], metadata: ViewMetadata, metadata_location: str, catalog: Catalog
    ) -> None:
        self.identifier = identifier
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.catalog = catalog

    @property
    def name(self) -> str:
        return ".".join(self.identifier)

    @property
    def properties(self) -> dict[str, str]:
        return dict(self.metadata.properties)

    def schema(self) -> Schema:
        return self.metadata.schema()

    def current_version(self) -> ViewVersion:
        return self.metadata.current_version

    def versions(self) -> list[ViewVersion]:
        return list(self.metadata.versions)

    def sql_for(self, dialect: str) -> SQLViewRepresentation | None:
        return self.metadata.current_version.sql_for(dialect)

    def location(self) -> str:
        return self.metadata.location

    def __repr__(self) -> str:
        return f"View({self.name!r}, version={self.metadata.current_version_id})"
