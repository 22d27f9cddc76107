"""Local-file helpers for the catalogs' metadata files (data files go through the native
FileIO). Locations are plain absolute paths or `file:` URLs; other schemes are refused
with NotSupportedError until the native FileIO exposes metadata reads/writes."""

from __future__ import annotations

import gzip
import logging
import os
import uuid
from urllib.parse import urlparse

from icefloe.exceptions import IcefloeIOError, NotFoundError, NotSupportedError

logger = logging.getLogger("icefloe")


def is_local(location: str) -> bool:
    scheme = urlparse(location).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def local_path(location: str) -> str:
    """The filesystem path of a local location (`/a/b`, `file:/a/b`, `file:///a/b`)."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        # No percent-decoding: Iceberg Java (Hadoop) keeps `%XX` in partition paths literally
        # on disk (`name=a%C3%B1b/`), and so does the Rust core.
        return parsed.path
    if parsed.scheme == "" or (len(parsed.scheme) == 1 and os.name == "nt"):
        return location
    raise NotSupportedError(
        f"location {location!r}: the {parsed.scheme!r} scheme is not supported by the Python "
        "catalogs yet (local paths and file: URLs are)"
    )


def join(location: str, *parts: str) -> str:
    return "/".join([location.rstrip("/"), *parts])


def read_text(location: str) -> str:
    """A metadata file's text (gzip when the name says so: `*.gz.metadata.json`, `*.json.gz`)."""
    path = local_path(location)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise NotFoundError(f"metadata file {location} does not exist") from None
    except OSError as e:
        raise IcefloeIOError(f"cannot read {location}: {e}") from e
    if path.endswith((".gz.metadata.json", ".gz")) or raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def write_temp(directory: str, data: bytes) -> str:
    """Writes `data` to a fresh hidden temp file in `directory` (fsynced); returns its path.
    The name starts with `.` and ends in `.tmp` so no listing takes it for metadata."""
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        remove_quietly(tmp)
        raise IcefloeIOError(f"cannot write {tmp}: {e}") from e
    return tmp


def write_new(location: str, data: bytes) -> None:
    """Creates a file that must not exist yet, all or nothing (temp + hard link)."""
    path = local_path(location)
    tmp = write_temp(os.path.dirname(path), data)
    try:
        link_exclusive(tmp, path)
    finally:
        remove_quietly(tmp)


def link_exclusive(src: str, dst: str) -> None:
    """Atomically makes `dst` name the complete file `src`; FileExistsError if `dst` exists.
    A hard link never replaces its target (unlike os.rename on POSIX), which makes it the
    compare-and-swap of a filesystem commit."""
    try:
        os.link(src, dst)
        return
    except FileExistsError:
        raise
    except OSError as e:
        # Filesystems without hard links: fall back to an exclusive create + copy. Readers
        # could see a partial file for a moment, but the swap is still exclusive.
        if e.errno not in _NO_LINK_ERRNOS:
            raise IcefloeIOError(f"cannot create {dst}: {e}") from e
    with open(src, "rb") as s:
        data = s.read()
    fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _no_link_errnos() -> set[int]:
    import errno

    names = ("EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EXDEV", "EMLINK")
    return {getattr(errno, n) for n in names if hasattr(errno, n)}


_NO_LINK_ERRNOS = _no_link_errnos()


def replace_atomically(path: str, data: bytes) -> None:
    tmp = write_temp(os.path.dirname(path), data)
    try:
        os.replace(tmp, path)
    except OSError:
        remove_quietly(tmp)
        raise


def remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as e:
        logger.warning("icefloe: could not delete %s: %s", path, e)
