"""`catalog.replace_table_transaction(...)` and `catalog.create_or_replace_table_transaction(...)`:
what Spark SQL's `REPLACE TABLE`, `CREATE OR REPLACE TABLE` and `... AS SELECT` need (Iceberg
Java's `Catalog.newReplaceTableTransaction(identifier, schema, spec, sortOrder, properties,
orCreate)`, built on `TableMetadata.buildReplacement`):

    with catalog.replace_table_transaction("db.t", new_schema, spec) as txn:
        txn.append(arrow_table)   # the replaced table's first snapshot (no parent)
    # the table has the new schema, spec, sort order and rows, as ONE new version

The replacement is a new version of the SAME table (Java's rules):

- the table's uuid, snapshots, snapshot log, metadata log and every ref but `main` stay; `main`
  is removed, so the table has no current snapshot until the transaction's first write, whose
  snapshot has no parent (time travel to the old snapshots keeps working);
- the new schema takes the field ids of the current schema's columns of the same (full) name
  and new ids past `last-column-id` for the others (Java's `AssignFreshIds`: a struct's fields
  first, then their children); an existing schema that is identical is reused (its id), else
  the schema gets the next id;
- the partition spec and sort order are rebound by column name onto it; a partition field takes
  the highest field id any spec of the table gave the same (source, transform), else the next
  one past `last-partition-id` (format v2 and later); an existing compatible spec or equal
  order is reused;
- properties are merged (the new ones win, the others stay), `write.parquet.compression-codec`
  is `zstd` unless given (Java sets it on every replacement), and a `format-version` property
  upgrades the table;
- the location stays unless one is given.

Writes and changes are staged on `txn.table` as in a create transaction (the same staging
catalog, see `icefloe.create_transaction`); `commit_transaction()` swaps the final version in
against the table as it was when the transaction began: the filesystem and SQL catalogs'
compare-and-swap of the metadata pointer, the REST catalog's commit with `assert-table-uuid`
and `assert-ref-snapshot-id main` (and the ids the changes touch). A table changed meanwhile
makes it a CommitConflictError, and the files the transaction wrote are deleted (as on an
abort); the table's own earlier files are never touched.

Differences from Java: Java's replace overwrites whatever the table became meanwhile (its
non-REST commit refreshes and retries; its REST commit asserts only the table uuid, and
`last-assigned-*` ids for added schemas and specs); here the commit fails instead, so no
concurrent change is silently dropped. Format v1 tables (Java's void-transform carry-over of
old partition fields) are not supported.
"""

from __future__ import annotations

import json
import logging
import weakref
from typing import TYPE_CHECKING, Any

from icefloe import _native
from icefloe.catalog._base import Catalog, Identifier, Properties, _schema_json
from icefloe.commit.retry import _delete_removed_metadata_files
from icefloe.create_transaction import CreateTableTransaction, _file_key, _StagingCatalog
from icefloe.exceptions import CommitStateUnknownException, NotSupportedError, ValidationError
from icefloe.write import pending as _pending_write

if TYPE_CHECKING:
    import pyarrow as pa

    from icefloe.partitioning import PartitionSpec
    from icefloe.schema import Schema
    from icefloe.sorting import SortOrder
    from icefloe.table import Table

__all__ = ["ReplaceTableTransaction", "build_replacement"]

# Java's TableProperties.RESERVED_PROPERTIES: never stored as properties.
_RESERVED = frozenset(
    {
        "format-version",
        "uuid",
        "snapshot-count",
        "current-snapshot-id",
        "current-snapshot-summary",
        "current-snapshot-timestamp-ms",
        "current-schema",
        "default-partition-spec",
        "default-sort-order",
    }
)

_PARTITION_FIELD_ID_START = 1000

logger = logging.getLogger("icefloe")


class ReplaceTableTransaction(CreateTableTransaction):
    """A table replaced with every staged change in one commit (see the module doc). The same
    surface as `CreateTableTransaction` (`table`, `append`, `overwrite`, `delete`,
    `set_properties`, ..., `commit_transaction()`, `abort()`, context manager)."""

    def __init__(self, catalog: Catalog, base: Table, replacement: _native.TableMetadata) -> None:
        super().__init__(catalog, base._identifier, replacement, base._io_properties)
        # The staged table's snapshots include the table's own: only the ones this transaction
        # adds are its files to delete, and the table's folders are never removed.
        self._discard.detach()
        self._base = base._commit_base()
        self._replacement = replacement
        old = {sid for s in base.metadata.snapshots() if isinstance(sid := s.get("snapshot-id"), int)}
        discard: weakref.finalize[Any, Any] = weakref.finalize(
            self,
            _discard_new_files,
            self._stage,
            self._staged_table,
            self._write_ids,
            self._registered,
            frozenset(old),
        )
        self._discard = discard

    def commit_transaction(self) -> Table:
        """Replaces the table with everything staged, as one new version; returns it.
        CommitConflictError (the transaction's files deleted) if the table changed since the
        transaction began; CommitStateUnknownException (files kept) when the outcome is unknown."""
        self._open()
        self._stage.closed = "committed"
        final = _with_metadata_log(self._stage.current, self._replacement)
        try:
            committed = self._catalog._commit_table(self._base, final)
        except CommitStateUnknownException:
            self._discard.detach()  # the table may reference the files now
            raise
        except Exception:
            self._stage.closed = "aborted"
            self._discard()
            raise
        self._discard.detach()
        _delete_removed_metadata_files(self._base.metadata, committed)
        self._committed = self._catalog.load_table(self._identifier)
        return self._committed

    def __enter__(self) -> ReplaceTableTransaction:
        return self

    def __repr__(self) -> str:
        state = self._stage.closed or "open"
        return f"ReplaceTableTransaction({self._catalog.name!r}, {'.'.join(self._identifier)!r}, {state})"


def _with_metadata_log(
    staged: _native.TableMetadata, replacement: _native.TableMetadata
) -> _native.TableMetadata:
    """The staged metadata with the replacement's metadata log: the staged versions were never
    written (their pseudo locations must not be logged)."""
    doc = json.loads(staged.to_json())
    doc["metadata-log"] = json.loads(replacement.to_json()).get("metadata-log", [])
    return _native.TableMetadata.from_json(json.dumps(doc))


def _discard_new_files(
    stage: _StagingCatalog,
    table: Table,
    write_ids: list[str],
    registered: set[tuple[str, str]],
    old_snapshots: frozenset[int],
) -> None:
    """Deletes what an uncommitted replace wrote: the files only its own snapshots reach and
    the files of its failed writes; never the table's earlier files or folders, nor the files
    `add_files` registered. Best effort: logged, never raised (it may run from a finalizer)."""
    if stage.closed == "committed":
        return  # a commit was under way (interrupted?): the table may reference the files
    stage.closed = "aborted"
    metadata = stage.current
    new = [
        sid
        for s in metadata.snapshots()
        if isinstance(sid := s.get("snapshot-id"), int) and sid not in old_snapshots
    ]
    try:
        if new:
            reached = _native.expired_snapshot_files(metadata, new, [])
            files = {loc for _kind, loc, _size in reached}
            _native.delete_files(sorted(f for f in files if not registered or _file_key(f) not in registered))
    except Exception as e:
        logger.warning("icefloe: replace transaction of %s: could not delete its files: %s", stage._name(), e)
    for write_id in write_ids:
        try:
            _pending_write.abort_write(table, write_id)
        except Exception as e:
            logger.warning(
                "icefloe: replace transaction of %s: could not delete write %s: %s",
                stage._name(),
                write_id,
                e,
            )


# ---- TableMetadata.buildReplacement ----


def build_replacement(
    base: _native.TableMetadata,
    schema: Schema | pa.Schema,
    partition_spec: PartitionSpec | None,
    sort_order: SortOrder | None,
    location: str | None,
    properties: Properties | None,
) -> _native.TableMetadata:
    """The next version of `base` replacing the table by this definition (see the module doc),
    as Iceberg Java's `TableMetadata.buildReplacement`."""
    props = {str(k): str(v) for k, v in (properties or {}).items()}
    fv_text = props.get("format-version", str(base.format_version))
    try:
        format_version = int(fv_text)
    except ValueError:
        raise ValidationError(f"format-version must be 1, 2 or 3, found {fv_text!r}") from None
    if format_version < base.format_version:
        raise ValidationError(
            f"cannot downgrade a v{base.format_version} table to format version {format_version}"
        )
    if base.format_version == 1:
        raise NotSupportedError("replacing a format v1 table is not supported (upgrade it to v2 first)")

    # Properties, the format upgrade and the location first: they start the new version
    # (logging the base's metadata file) as any commit does.
    persisted = {"write.parquet.compression-codec": "zstd"}
    persisted.update({k: v for k, v in props.items() if k not in _RESERVED})
    updates: list[dict[str, Any]] = []
    if format_version > base.format_version:
        updates.append({"action": "upgrade-format-version", "format-version": format_version})
    updates.append({"action": "set-properties", "updates": persisted})
    if location is not None and location.rstrip("/") != base.location.rstrip("/"):
        updates.append({"action": "set-location", "location": location.rstrip("/")})
    next_md = base.apply_updates(json.dumps(updates))
    doc: dict[str, Any] = json.loads(next_md.to_json())

    # The schema: ids by name from the current schema, fresh ones past last-column-id.
    given = json.loads(_schema_json(schema, format_version))
    current = json.loads(base.schema_json())
    last_column_id = int(doc["last-column-id"])
    fresh, last_column_id = _assign_fresh_ids(given, current, last_column_id)
    schema_id = _reuse_or_add(doc, "schemas", "schema-id", fresh, _same_schema)
    doc["current-schema-id"] = schema_id
    doc["last-column-id"] = last_column_id
    given_names = _id_to_name(given)
    fresh_ids = {name: fid for fid, name in _id_to_name(fresh).items()}

    def rebind(source_id: int, what: str) -> int:
        name = given_names.get(source_id)
        if name is None or name not in fresh_ids:
            raise ValidationError(f"{what} source id {source_id} is not a column of the new schema")
        return fresh_ids[name]

    # The partition spec: rebound by name; field ids as Java's reassignPartitionIds (v2+).
    spec_doc = json.loads(partition_spec.to_json()) if partition_spec is not None else {"fields": []}
    existing: dict[tuple[int, str], int] = {}
    for s in doc.get("partition-specs", []):
        for f in s.get("fields", []):
            key = (int(f["source-id"]), str(f["transform"]))
            existing[key] = max(existing.get(key, f["field-id"]), int(f["field-id"]))
    last_partition_id = int(doc.get("last-partition-id", _PARTITION_FIELD_ID_START - 1))
    next_partition_id = last_partition_id
    fields = []
    for f in spec_doc.get("fields", []):
        source = rebind(int(f["source-id"]), f"partition field {f.get('name')!r}")
        key = (source, str(f["transform"]))
        if key not in existing:
            next_partition_id += 1
            existing[key] = next_partition_id
        fields.append(
            {
                "name": f["name"],
                "transform": str(f["transform"]),
                "source-id": source,
                "field-id": existing[key],
            }
        )
    spec = {"spec-id": 0, "fields": fields}
    spec_id = _reuse_or_add(doc, "partition-specs", "spec-id", spec, _compatible_spec)
    doc["default-spec-id"] = spec_id
    chosen = next(s for s in doc["partition-specs"] if s["spec-id"] == spec_id)
    top = max((int(f["field-id"]) for f in chosen.get("fields", [])), default=last_partition_id)
    doc["last-partition-id"] = max(last_partition_id, top)

    # The sort order: rebound by name; order id 0 when unsorted, an equal order reused.
    order_doc = json.loads(sort_order.to_json()) if sort_order is not None else {"fields": []}
    order_fields = [
        {**f, "source-id": rebind(int(f["source-id"]), "sort field")} for f in order_doc.get("fields", [])
    ]
    if not order_fields:
        doc["default-sort-order-id"] = 0
        if not any(o["order-id"] == 0 for o in doc.get("sort-orders", [])):
            doc.setdefault("sort-orders", []).append({"order-id": 0, "fields": []})
    else:
        order = {"order-id": 1, "fields": order_fields}
        doc["default-sort-order-id"] = _reuse_or_add(
            doc, "sort-orders", "order-id", order, _same_order, first=1
        )

    # `main` removed: no current snapshot (the snapshot log stays, as Java's removeRef).
    refs = dict(doc.get("refs") or {})
    refs.pop("main", None)
    doc["refs"] = refs
    doc["current-snapshot-id"] = -1
    return _native.TableMetadata.from_json(json.dumps(doc))


def _reuse_or_add(
    doc: dict[str, Any],
    key: str,
    id_key: str,
    item: dict[str, Any],
    same: Any,
    first: int = 0,
) -> int:
    """The id of an existing equal item in `doc[key]`, else `item` added with the next id."""
    items: list[dict[str, Any]] = doc.setdefault(key, [])
    for existing in items:
        if same(existing, item):
            return int(existing[id_key])
    new_id = max([int(x[id_key]) for x in items] + [first - 1]) + 1
    items.append({**item, id_key: new_id})
    return new_id


def _same_schema(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(
        a.get("fields") == b.get("fields")
        and sorted(a.get("identifier-field-ids") or []) == sorted(b.get("identifier-field-ids") or [])
    )


def _compatible_spec(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Java's `PartitionSpec.compatibleWith`: the same source, transform and name per position."""
    fa, fb = a.get("fields", []), b.get("fields", [])
    return len(fa) == len(fb) and all(
        x["source-id"] == y["source-id"]
        and str(x["transform"]) == str(y["transform"])
        and x["name"] == y["name"]
        for x, y in zip(fa, fb)
    )


def _same_order(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def key(o: dict[str, Any]) -> list[tuple[int, str, str, str]]:
        return [
            (int(f["source-id"]), str(f["transform"]), str(f["direction"]), str(f["null-order"]))
            for f in o.get("fields", [])
        ]

    return key(a) == key(b)


def _id_to_name(schema: dict[str, Any]) -> dict[int, str]:
    """Every field id of a schema (JSON) to its full name (`a.b`, `l.element`, `m.key`)."""
    out: dict[int, str] = {}

    def visit(t: Any, prefix: str) -> None:
        if not isinstance(t, dict):
            return
        kind = t.get("type")
        if kind == "struct":
            for f in t.get("fields", []):
                name = f"{prefix}{f['name']}"
                out[int(f["id"])] = name
                visit(f["type"], name + ".")
        elif kind == "list":
            name = f"{prefix}element"
            out[int(t["element-id"])] = name
            visit(t["element"], name + ".")
        elif kind == "map":
            out[int(t["key-id"])] = f"{prefix}key"
            out[int(t["value-id"])] = f"{prefix}value"
            visit(t["key"], f"{prefix}key.")
            visit(t["value"], f"{prefix}value.")

    visit({"type": "struct", "fields": schema.get("fields", [])}, "")
    return out


def _assign_fresh_ids(
    given: dict[str, Any], base: dict[str, Any], last_column_id: int
) -> tuple[dict[str, Any], int]:
    """Java's `TypeUtil.assignFreshIds(schema, baseSchema, nextId)`: each field keeps the id of
    the base schema's field of the same full name, others get ids past `last_column_id`, a
    struct's fields before their children. Returns the schema and the new last column id."""
    names = _id_to_name(given)
    base_ids = {name: fid for fid, name in _id_to_name(base).items()}
    counter = [last_column_id]
    mapping: dict[int, int] = {}

    def id_for(old_id: int) -> int:
        name = names.get(old_id)
        if name is not None and name in base_ids:
            new = base_ids[name]
        else:
            counter[0] += 1
            new = counter[0]
        mapping[old_id] = new
        return new

    def visit(t: Any) -> Any:
        if not isinstance(t, dict):
            return t
        kind = t.get("type")
        if kind == "struct":
            ids = [id_for(int(f["id"])) for f in t.get("fields", [])]
            fields = [{**f, "id": i, "type": visit(f["type"])} for f, i in zip(t.get("fields", []), ids)]
            return {**t, "fields": fields}
        if kind == "list":
            eid = id_for(int(t["element-id"]))
            return {**t, "element-id": eid, "element": visit(t["element"])}
        if kind == "map":
            kid = id_for(int(t["key-id"]))
            vid = id_for(int(t["value-id"]))
            return {**t, "key-id": kid, "value-id": vid, "key": visit(t["key"]), "value": visit(t["value"])}
        return t

    out = visit({**given, "type": "struct"})
    ident = [mapping[int(i)] for i in given.get("identifier-field-ids") or [] if int(i) in mapping]
    out.pop("schema-id", None)
    if ident:
        out["identifier-field-ids"] = ident
    else:
        out.pop("identifier-field-ids", None)
    highest = max(mapping.values(), default=last_column_id)
    return out, max(last_column_id, highest, counter[0])


def replace_table_transaction(
    catalog: Catalog,
    parts: Identifier,
    schema: Schema | pa.Schema,
    partition_spec: PartitionSpec | None,
    sort_order: SortOrder | None,
    properties: Properties | None,
    location: str | None,
) -> ReplaceTableTransaction:
    """The replace transaction of the existing table `parts` (NoSuchTableError if absent)."""
    base = catalog.load_table(parts)
    replacement = build_replacement(base.metadata, schema, partition_spec, sort_order, location, properties)
    return ReplaceTableTransaction(catalog, base, replacement)
