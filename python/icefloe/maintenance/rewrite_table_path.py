"""`rewrite_table_path` (Iceberg Java's `RewriteTablePathSparkAction` / `CALL
system.rewrite_table_path`): a copy of a table's metadata for another location prefix, for
replication and disaster recovery. Nothing is committed and no data file is touched:

- the metadata JSON files from `end_version` (default: the current one) back to, not
  including, `start_version` (default: all of the metadata log) are rewritten with every path
  under `source_prefix` moved under `target_prefix` (the table location, the snapshots'
  manifest lists, the metadata log, statistics and partition statistics files, and the
  `write.data.path`, `write.metadata.path`, `write.folder-storage.path` and
  `write.object-storage.path` properties);
- the manifest lists of the end version's snapshots (those not in the start version), the
  manifests they name (incrementally: those added by a snapshot new since the start
  version), and the position delete files of those manifests (Parquet rows, or the
  `referenced-data-file` of deletion vectors) are rewritten the same way (in Rust:
  `rust/maintenance/rewrite_table_path.rs`);
- everything rewritten is written to `staging_location` (default:
  `<metadata folder>/copy-table-staging-<uuid>/`) under its path relative to the source
  prefix, and the file list `<staging>/file-list` names what to copy, one `source,target` line
  each: the staged metadata files to their targets, then the data files, equality delete files
  and statistics files to copy as they are (live files added by a snapshot new since the start
  version).

The user copies each listed file to its target and registers the table there from the target
of `latest_version`. Arguments are checked as Java checks them, with Java's messages; on an
error nothing written is left behind.

Differences from Java, on purpose: a rewritten manifest list records the length of each
rewritten manifest, and an incremental run an older manifest's length from its copy at the
target when it is there (Java keeps the source manifest's, which differs when the prefixes
differ in length; readers that check it, icefloe among them, refuse such a copy); a file-scoped
position delete file's `referenced_data_file` is moved like a deletion vector's (Java leaves
it naming the source data file); format v1 tables and ORC / Avro position delete files are
refused (NotSupportedError). `create_file_list=False` skips the file list, as Java's.
"""

from __future__ import annotations

import gzip
import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icefloe import _io, _native
from icefloe.exceptions import ValidationError

if TYPE_CHECKING:
    from icefloe.table import Table

__all__ = ["RewriteTablePathResult", "rewrite_table_path"]

FILE_LIST = "file-list"
# Java's `NOT_APPLICABLE` file list location when no file list is written.
NOT_APPLICABLE = "N/A"
# The table properties holding locations (Java's `RewriteTablePathUtil.updateProperties`).
_LOCATION_PROPERTIES = (
    "write.object-storage.path",
    "write.folder-storage.path",
    "write.data.path",
    "write.metadata.path",
)


@dataclass(frozen=True)
class RewriteTablePathResult:
    """What a `rewrite_table_path` did (Java's `RewriteTablePath.Result`)."""

    latest_version: str  # the file name of the end version (register the table from its target)
    file_list_location: str  # `<staging>/file-list`, or "N/A" without a file list
    rewritten_manifest_file_paths_count: int
    rewritten_delete_file_paths_count: int
    staging_location: str

    def file_list(self) -> list[tuple[str, str]]:
        """The `(source, target)` pairs of the file list."""
        text = _io.read_bytes(self.file_list_location).decode("utf-8")
        return [_split_row(line) for line in text.splitlines() if line]


def _split_row(line: str) -> tuple[str, str]:
    source, _, target = line.partition(",")
    return source, target


# ---- paths, as Java's RewriteTablePathUtil -------------------------------------------------


def _with_separator(path: str) -> str:
    return path if path.endswith("/") else path + "/"


def _relativize(path: str, prefix: str) -> str:
    to_remove, normalized = _with_separator(prefix), _with_separator(path)
    if not normalized.startswith(to_remove):
        raise ValidationError(f"Path {normalized} does not start with {to_remove}")
    return "" if normalized == to_remove else path[len(to_remove) :]


def _combine(base: str, relative: str) -> str:
    return base if not relative else _with_separator(base) + relative


def new_path(path: str, source_prefix: str, target_prefix: str) -> str:
    """`path` moved from under `source_prefix` to under `target_prefix` (Java's `newPath`)."""
    return _combine(target_prefix, _relativize(path, source_prefix))


def staging_path(path: str, source_prefix: str, staging: str) -> str:
    """Where `path` is staged (Java's `stagingPath`)."""
    return _combine(staging, _relativize(path, source_prefix))


def _file_name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _spelled_as(path: str, location: str) -> str:
    """A local metadata file's path as Java's HadoopCatalog names it (`file:/...`) when the
    table location has the `file:` scheme: icefloe's filesystem catalog loads a table by
    plain path, and the paths to move must be spelled as the source prefix is."""
    if path.startswith("/") and location.startswith("file:"):
        return "file:" + path
    return path


def _java_str(value: str | None) -> str:
    return "null" if value is None else value


# ---- the action ----------------------------------------------------------------------------


def rewrite_table_path(
    table: Table,
    source_prefix: str,
    target_prefix: str,
    start_version: str | None = None,
    end_version: str | None = None,
    staging_location: str | None = None,
    create_file_list: bool = True,
) -> RewriteTablePathResult:
    """Stages a copy of the table's metadata for `target_prefix`; see the module doc."""
    # The checks of Java's procedure, in its order (its setters, then `validateInputs`).
    if start_version is not None and not start_version.strip():
        raise ValidationError(f"Start version('{start_version}') cannot be empty.")
    if end_version is not None and not end_version.strip():
        raise ValidationError(f"End version('{end_version}') cannot be empty.")
    if staging_location is not None and not staging_location:
        raise ValidationError(f"Staging location('{staging_location}') cannot be empty.")
    if not source_prefix:
        raise ValidationError(f"Source prefix('{_java_str(source_prefix)}') cannot be empty.")
    if not target_prefix:
        raise ValidationError(f"Target prefix('{_java_str(target_prefix)}') cannot be empty.")
    if source_prefix == target_prefix:
        raise ValidationError(f"Source prefix cannot be the same as target prefix ({source_prefix})")

    current = _spelled_as(table.metadata_location, table.metadata.location)
    log = [str(e["metadata-file"]) for e in table.metadata.metadata_log()]
    end = _resolve_version(current, log, end_version) if end_version is not None else current
    start = _resolve_version(current, log, start_version) if start_version is not None else None
    if staging_location is None:
        metadata_dir = current[: current.rfind("/") + 1] if "/" in current else ""
        if not metadata_dir:
            raise ValidationError("Failed to get the metadata file root directory")
        staging = f"{metadata_dir}copy-table-staging-{uuid.uuid4()}/"
    else:
        staging = _with_separator(staging_location)

    written: list[str] = []
    try:
        return _rebuild(source_prefix, target_prefix, start, end, staging, create_file_list, written)
    except BaseException:
        for path in written:
            _io.remove_quietly(path)
        raise


def _resolve_version(current: str, log: list[str], version: str) -> str:
    """The metadata file named `version` (a file name) in the current metadata or its log
    (Java's `validateVersion`: the last match in the log wins)."""
    found = current if _file_name(current) == version else None
    for path in log:
        if _file_name(path) == version:
            found = path
    if found is None:
        raise ValidationError(f"Cannot find provided version file {version} in metadata log.")
    if not _io.exists(found):
        raise ValidationError(f"Version file {found} does not exist.")
    return found


def _rebuild(
    source: str,
    target: str,
    start: str | None,
    end: str,
    staging: str,
    create_file_list: bool,
    written: list[str],
) -> RewriteTablePathResult:
    start_ids = set() if start is None else set(_snapshot_ids(json.loads(_io.read_text(start))))
    end_text = _io.read_text(end)
    end_json = json.loads(end_text)

    # The version files: the end one, then its log from newest back to the start version.
    versions = [(end, end_json)]
    for entry in reversed(end_json.get("metadata-log") or []):
        path = str(entry["metadata-file"])
        if path == start:
            break
        if not _io.exists(path):
            raise ValidationError(f"Version file {path} doesn't exist")
        versions.append((path, None))

    copy_plan: set[tuple[str, str]] = set()
    all_ids: set[int] = set()
    for path, parsed in versions:
        doc = parsed if parsed is not None else json.loads(_io.read_text(path))
        all_ids |= set(_snapshot_ids(doc))
        copy_plan |= _rewrite_version_file(doc, path, source, target, staging, written)

    delta = sorted(all_ids - start_ids)
    valid = [sid for sid in _snapshot_ids(end_json) if sid not in start_ids]
    end_metadata = _native.TableMetadata.from_json(end_text, end)
    pairs, manifests, deletes = _native.rewrite_table_path_files(
        end_metadata, valid, delta, start is not None, source, target, staging
    )
    copy_plan |= set(pairs)

    file_list_location = NOT_APPLICABLE
    if create_file_list:
        file_list_location = staging + FILE_LIST
        rows = "".join(f"{s},{t}\n" for s, t in sorted(copy_plan))
        # Java writes it with createOrOverwrite.
        _io.write(file_list_location, rows.encode("utf-8"))
        written.append(file_list_location)
    return RewriteTablePathResult(
        latest_version=_file_name(end),
        file_list_location=file_list_location,
        rewritten_manifest_file_paths_count=manifests,
        rewritten_delete_file_paths_count=deletes,
        staging_location=staging,
    )


def _snapshot_ids(doc: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(s["snapshot-id"]) for s in doc.get("snapshots") or [])


def _rewrite_version_file(
    doc: dict[str, Any], path: str, source: str, target: str, staging: str, written: list[str]
) -> set[tuple[str, str]]:
    """Writes the metadata JSON `doc` (of the file at `path`) with its paths moved to its
    staging path; returns its copy-plan pairs and those of its statistics files (copied as
    they are: they hold no paths). Java's `rewriteVersionFile` and `replacePaths`."""
    staged = staging_path(path, source, staging)
    out = dict(doc)
    out["location"] = new_path(str(doc["location"]), source, target)
    snapshots = []
    for s in doc.get("snapshots") or []:
        s = dict(s)
        if "manifest-list" in s:
            s["manifest-list"] = new_path(str(s["manifest-list"]), source, target)
        snapshots.append(s)
    if "snapshots" in doc:
        out["snapshots"] = snapshots
    if "metadata-log" in doc:
        out["metadata-log"] = [
            {**e, "metadata-file": new_path(str(e["metadata-file"]), source, target)}
            for e in doc["metadata-log"]
        ]
    props = dict(doc.get("properties") or {})
    for key in _LOCATION_PROPERTIES:
        if key in props:
            props[key] = new_path(str(props[key]), source, target)
    if "properties" in doc:
        out["properties"] = props
    plan = set()
    for key in ("statistics", "partition-statistics"):
        if key not in doc:
            continue
        moved = []
        for f in doc[key] or []:
            old = str(f["statistics-path"])
            f = {**f, "statistics-path": new_path(old, source, target)}
            plan.add((old, f["statistics-path"]))
            moved.append(f)
        out[key] = moved
    data = json.dumps(out).encode("utf-8")
    if ".gz." in _file_name(staged):  # Java's TableMetadataParser picks gzip by the name
        data = gzip.compress(data)
    _io.write(staged, data)
    written.append(staged)
    plan.add((staged, new_path(path, source, target)))
    return plan
