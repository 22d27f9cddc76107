"""How the `icefloe` command shows its answers: rich tables on a terminal (`TextOutput`) or
one JSON document on stdout for scripts (`JsonOutput`, `--json`). Errors go to stderr."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import os
import sys
import traceback
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["JsonOutput", "Output", "TextOutput", "jsonable"]


def jsonable(value: Any) -> Any:
    """A value as plain JSON: bytes as hex, times as ISO-8601, decimals as strings, Arrow
    map lists (`[(k, v), ...]`) as they come (lists of pairs)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return base64.b16encode(bytes(value)).decode().lower()
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    return str(value)


class Output:
    """What every output offers; each command calls exactly one of these per answer."""

    def __init__(self, verbose: bool = False) -> None:
        self.verbose = verbose

    def rows(self, title: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
        raise NotImplementedError

    def mapping(self, title: str, values: Mapping[str, Any]) -> None:
        raise NotImplementedError

    def identifiers(self, identifiers: Sequence[tuple[str, ...]]) -> None:
        raise NotImplementedError

    def text(self, message: str, data: Any = None) -> None:
        raise NotImplementedError

    def document(self, text_view: Mapping[str, Any], data: Any) -> None:
        raise NotImplementedError

    def error(self, exc: BaseException) -> None:
        if self.verbose:
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        else:
            print(f"icefloe: error: {_describe(exc)}", file=sys.stderr)


def _describe(exc: BaseException) -> str:
    message = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        message = str(exc.args[0])
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


class TextOutput(Output):
    """rich tables on stdout; never cuts a value (a path, a summary) short."""

    def __init__(self, verbose: bool = False) -> None:
        super().__init__(verbose)
        from rich.console import Console

        width = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 100_000
        self._console = Console(width=width, soft_wrap=True, highlight=False)

    def _table(self, title: str | None, columns: Sequence[str], show_header: bool = True) -> Any:
        from rich.table import Table

        table = Table(title=title, show_header=show_header, header_style="bold", title_justify="left")
        for c in columns:
            table.add_column(c, overflow="fold")
        return table

    def rows(self, title: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
        table = self._table(title, columns)
        for r in rows:
            table.add_row(*(_cell(r.get(c)) for c in columns))
        self._console.print(table)

    def mapping(self, title: str, values: Mapping[str, Any]) -> None:
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        for k, v in values.items():
            grid.add_row(str(k), _cell(v))
        self._console.print(grid)

    def identifiers(self, identifiers: Sequence[tuple[str, ...]]) -> None:
        for ident in identifiers:
            self._console.print(".".join(ident), markup=False)

    def text(self, message: str, data: Any = None) -> None:
        self._console.print(message, markup=False)

    def document(self, text_view: Mapping[str, Any], data: Any) -> None:
        from rich.table import Table

        grid = Table.grid(padding=(0, 2))
        for k, v in text_view.items():
            if isinstance(v, Mapping):
                inner = Table.grid(padding=(0, 2))
                for ik, iv in v.items():
                    inner.add_row(str(ik), _cell(iv))
                grid.add_row(str(k), inner)
            elif isinstance(v, list):
                grid.add_row(str(k), "\n".join(_cell(x) for x in v))
            else:
                grid.add_row(str(k), _cell(v))
        self._console.print(grid)


class JsonOutput(Output):
    """One JSON document per command on stdout (errors: `{"type", "message"}` on stderr)."""

    def _out(self, value: Any) -> None:
        print(json.dumps(jsonable(value)))

    def rows(self, title: str, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
        self._out([dict(r) for r in rows])

    def mapping(self, title: str, values: Mapping[str, Any]) -> None:
        self._out(dict(values))

    def identifiers(self, identifiers: Sequence[tuple[str, ...]]) -> None:
        self._out([".".join(i) for i in identifiers])

    def text(self, message: str, data: Any = None) -> None:
        self._out(message if data is None else data)

    def document(self, text_view: Mapping[str, Any], data: Any) -> None:
        self._out(data)

    def error(self, exc: BaseException) -> None:
        if self.verbose:
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(json.dumps({"type": type(exc).__name__, "message": message}), file=sys.stderr)
