"""FileIO for the Python layer: thin wrappers over the Rust FileIO (rust/io/), so the
catalogs, clean-up and the Rust readers and writers share one location parser and one
implementation per storage: local paths and `file:` URLs, `s3://`/`s3a://`, `gs://`,
`abfss://`/`az://` and `memory://`.

Storage settings are FileIO properties with PyIceberg's names (`s3.endpoint`,
`s3.access-key-id`, `s3.secret-access-key`, `s3.session-token`, `s3.region`,
`s3.path-style-access`, `gcs.*`, `adls.*`), registered for a location prefix (a catalog's
warehouse, a table's location). Spark tasks carry an `IoConfig` and register it in the
worker before touching a file. Secret values are never logged or shown in a repr.
"""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Iterable, Mapping

from icefloe import _native

logger = logging.getLogger("icefloe")

# Property prefixes that configure storage (everything else stays on the driver).
_FILE_IO_PREFIXES = ("s3.", "gcs.", "adls.", "client.")
# What this process registered (prefix -> properties): Spark tasks carry it to executors.
_REGISTERED: dict[str, dict[str, str]] = {}


def file_io_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """The storage settings among catalog (or vended table) properties."""
    return {k: str(v) for k, v in properties.items() if k.startswith(_FILE_IO_PREFIXES)}


def redact(properties: Mapping[str, str]) -> dict[str, str]:
    return {k: ("***" if _native.is_secret_property(k) else v) for k, v in properties.items()}


class IoConfig:
    """FileIO properties per location prefix, as a Spark task carries them to executors."""

    __slots__ = ("entries",)

    def __init__(self, entries: Iterable[tuple[str, Mapping[str, str]]] = ()) -> None:
        self.entries: tuple[tuple[str, dict[str, str]], ...] = tuple((p, dict(props)) for p, props in entries)

    def apply(self) -> None:
        """Registers every entry in this process (cheap when already registered)."""
        for prefix, props in self.entries:
            register(prefix, props)

    @staticmethod
    def current() -> IoConfig:
        """Everything registered in this process (what a Spark task needs on an executor)."""
        return IoConfig(_REGISTERED.items())

    def __repr__(self) -> str:
        return f"IoConfig({[(p, redact(props)) for p, props in self.entries]!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, IoConfig) and self.entries == other.entries

    __hash__ = None  # type: ignore[assignment]

    @staticmethod
    def for_table(metadata: _native.TableMetadata, io_properties: Mapping[str, str]) -> IoConfig:
        """The table's storage settings for its location and write paths and, as Java's
        per-table FileIO serves every file a table references, for the roots (buckets) of
        those: files outside the current paths (an earlier `write.data.path`, the location
        before a move, files added from elsewhere) take them too. A longer registered prefix
        wins, so another table's settings for its own paths are never overridden."""
        props = dict(io_properties)
        if not props:
            return IoConfig()
        prefixes = [p for p in table_prefixes(metadata) if not is_local(p)]
        roots = [parse(p)[1] for p in prefixes]
        return IoConfig((p, props) for p in dict.fromkeys(roots + prefixes))


def table_prefixes(metadata: _native.TableMetadata) -> list[str]:
    """Every place a table's files may live: its location and the write paths."""
    keys = (
        "write.data.path",
        "write.metadata.path",
        "write.folder-storage.path",
        "write.object-storage.path",
    )
    out = [metadata.location]
    properties = metadata.properties
    out += [v for k in keys if (v := properties.get(k))]
    return list(dict.fromkeys(out))


def register(prefix: str, properties: Mapping[str, str]) -> None:
    """Uses `properties` for every location under `prefix` in this process (remote only)."""
    if not is_local(prefix):
        props = file_io_properties(properties)
        _native.register_file_io(prefix, props)
        _REGISTERED[prefix.rstrip("/")] = props


def parse(location: str) -> tuple[str, str, str]:
    """(kind, storage root, key): `("local", "", "/a/b")`, `("s3", "s3://bkt", "a/b")`."""
    return _native.parse_location(location)


def is_local(location: str) -> bool:
    return parse(location)[0] == "local"


def local_path(location: str) -> str:
    """The filesystem path of a local location (`/a/b`, `file:/a/b`, `file:///a/b`); no
    percent-decoding: Iceberg Java (Hadoop) keeps `%XX` of partition paths literally."""
    kind, _root, key = parse(location)
    if kind != "local":
        from icefloe.exceptions import NotSupportedError

        raise NotSupportedError(f"location {location!r} is not a local path")
    return key


def join(location: str, *parts: str) -> str:
    return "/".join([location.rstrip("/"), *parts])


def read_bytes(location: str) -> bytes:
    return _native.io_read(location)


def read_text(location: str) -> str:
    """A metadata file's text (gzip when the name or the bytes say so: `*.gz.metadata.json`,
    `*.json.gz`)."""
    raw = _native.io_read(location)
    if location.endswith((".gz.metadata.json", ".gz")) or raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def write_new(location: str, data: bytes) -> None:
    """Creates a file that must not exist yet, all or nothing; FileExistsError when another
    writer created it first (the compare-and-swap of a filesystem-catalog commit)."""
    if not _native.io_write_new(location, data):
        raise FileExistsError(location)


def write(location: str, data: bytes) -> None:
    """Writes a file, replacing it (hints such as version-hint.text; never a commit)."""
    _native.io_write(location, data)


def exists(location: str) -> bool:
    return _native.io_exists(location)


def list_dir(location: str) -> tuple[list[str], list[tuple[str, int]]]:
    """One folder level: (sub-folder names, [(file name, size)]); a missing folder is empty."""
    return _native.io_list_dir(location)


def list_files(location: str) -> list[tuple[str, int]]:
    """Every file under a folder, recursively: [(location, size)]."""
    return _native.io_list(location)


def delete(locations: Iterable[str]) -> None:
    _native.delete_files(list(locations))


def delete_prefix(location: str) -> None:
    _native.io_delete_prefix(location)


def remove_quietly(location: str) -> None:
    """Deletes a file, logging (not raising) a failure: clean-up after a failed write."""
    try:
        _native.delete_files([location])
    except Exception as e:
        logger.warning("icefloe: could not delete %s: %s", location, e)


def remove_empty_dirs(path: str) -> None:
    """Removes the empty folders under a local `path` (and `path` itself when it ends up
    empty), deepest first; anything holding files stays."""
    if not os.path.isdir(path):
        return
    for dirpath, _dirnames, _files in sorted(os.walk(path), key=lambda t: -len(t[0])):
        try:
            os.rmdir(dirpath)
        except OSError:
            pass
