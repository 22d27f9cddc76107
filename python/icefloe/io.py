"""`table.io`: the table's FileIO with PyIceberg's shape (`new_input`, `new_output`,
`delete`), backed by the Rust FileIO (rust/io/) that every icefloe read and write uses, so
it reaches the same storages with the same settings: local paths and `file:` URLs,
`s3://`/`s3a://`, `gs://`, `abfss://`/`az://`, `memory://`.

    io = table.io
    with io.new_input(path).open() as f:      # seekable; ranged reads on object stores
        magic = f.read(4)
    with io.new_output(path).create() as out:  # all or nothing, on close
        out.write(b"...")
    io.delete(path)
"""

from __future__ import annotations

import io as _pyio
from collections.abc import Mapping
from typing import Any

from icefloe import _io, _native
from icefloe.exceptions import NotFoundError

__all__ = ["FileIO", "InputFile", "InputStream", "OutputFile", "OutputStream"]


class _RangeReader(_pyio.RawIOBase):
    """Raw reads at an offset of a native file handle (buffered by `InputStream`)."""

    def __init__(self, handle: _native.InputFileHandle) -> None:
        super().__init__()
        self._handle = handle
        self._size = len(handle)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._handle.read_at(self._pos, len(view))
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = _pyio.SEEK_SET) -> int:
        if whence == _pyio.SEEK_SET:
            pos = offset
        elif whence == _pyio.SEEK_CUR:
            pos = self._pos + offset
        elif whence == _pyio.SEEK_END:
            pos = self._size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if pos < 0:
            raise ValueError(f"negative seek position {pos}")
        self._pos = pos
        return pos

    def tell(self) -> int:
        return self._pos


# An open input file: a seekable, buffered binary stream (read, seek, tell, close).
InputStream = _pyio.BufferedReader


class InputFile:
    """A file to read at `location`."""

    def __init__(self, location: str) -> None:
        self.location = location

    def __len__(self) -> int:
        return len(_open_handle(self.location))

    def exists(self) -> bool:
        return _io.exists(self.location)

    def open(self, seekable: bool = True) -> InputStream:
        """A binary stream over the file; FileNotFoundError when it does not exist."""
        return _pyio.BufferedReader(_RangeReader(_open_handle(self.location)), buffer_size=1 << 20)

    def __repr__(self) -> str:
        return f"InputFile({self.location!r})"


class OutputStream(_pyio.BytesIO):
    """Bytes written to an output file; stored on `close()` as one all-or-nothing write
    (never a partial file), refused if the file exists unless created with `overwrite`."""

    def __init__(self, location: str, overwrite: bool) -> None:
        super().__init__()
        self._location = location
        self._overwrite = overwrite
        self._stored = False

    def close(self) -> None:
        if self.closed or self._stored:
            super().close()
            return
        self._stored = True
        try:
            data = self.getvalue()
            if self._overwrite:
                _io.write(self._location, data)
            else:
                try:
                    _io.write_new(self._location, data)
                except FileExistsError:
                    raise FileExistsError(f"cannot create {self._location}: it already exists") from None
        finally:
            super().close()

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self._stored = True  # a failed block writes nothing
        self.close()


class OutputFile:
    """A file to write at `location`."""

    def __init__(self, location: str) -> None:
        self.location = location

    def __len__(self) -> int:
        return len(_open_handle(self.location))

    def exists(self) -> bool:
        return _io.exists(self.location)

    def to_input_file(self) -> InputFile:
        return InputFile(self.location)

    def create(self, overwrite: bool = False) -> OutputStream:
        """A stream whose bytes become the file on close; FileExistsError when the file
        exists and `overwrite` is false (checked now and again at the write)."""
        if not overwrite and self.exists():
            raise FileExistsError(f"cannot create {self.location}: it already exists")
        return OutputStream(self.location, overwrite)

    def __repr__(self) -> str:
        return f"OutputFile({self.location!r})"


class FileIO:
    """PyIceberg's FileIO over icefloe's Rust FileIO, with the table's storage properties."""

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        self.properties: dict[str, str] = dict(properties or {})

    def new_input(self, location: str) -> InputFile:
        return InputFile(location)

    def new_output(self, location: str) -> OutputFile:
        return OutputFile(location)

    def delete(self, location: str | InputFile | OutputFile) -> None:
        """Deletes a file; FileNotFoundError when it does not exist (as PyIceberg's)."""
        path = location if isinstance(location, str) else location.location
        if not _io.exists(path):
            raise FileNotFoundError(f"cannot delete {path}: it does not exist")
        _io.delete([path])

    def __repr__(self) -> str:
        return f"FileIO({_io.redact(self.properties)!r})"


def _open_handle(location: str) -> _native.InputFileHandle:
    try:
        return _native.InputFileHandle(location)
    except NotFoundError as e:
        raise FileNotFoundError(f"cannot open {location}: it does not exist ({e})") from None
