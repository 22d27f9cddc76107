"""DuckDB (PyPI `duckdb`) as a second reader of Iceberg tables: its `iceberg` extension (PyPI
`duckdb-extension-iceberg`, with the `avro` extension it needs for manifests,
`duckdb-extension-avro`) loaded offline from the wheels' files with `INSTALL '<path>'`, as
`support.tpch` loads `tpch`. `read_iceberg(metadata_location)` is `iceberg_scan('<vN.metadata.json>')`
as an Arrow table.

`file_cache=False` reads with DuckDB's external file cache off (`enable_external_file_cache`,
on by default): through it, the `iceberg` extension 1.5.5 can decode a deletion vector from
another blob of the same Puffin file (duckdb-iceberg PR #1182, fixed after 1.5.5;
tests/interop/test_dv_layout.py), which Iceberg Java's Puffin files trigger."""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any

import pyarrow as pa


def extension_file(name: str) -> Path:
    """The `<name>.duckdb_extension` shipped in PyPI's `duckdb-extension-<name>` package."""
    module = importlib.import_module(f"duckdb_extension_{name}")
    root = Path(str(module.__file__)).parent
    found = sorted(root.glob(f"extensions/*/{name}.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no {name}.duckdb_extension under {root} (duckdb-extension-{name})")
    return found[-1]


def version() -> str:
    import duckdb

    return str(duckdb.__version__)


@functools.cache
def connection(file_cache: bool = True) -> Any:
    """One DuckDB database per process and `file_cache` setting, with `avro` and `iceberg`
    loaded; nothing is downloaded (the extensions' autoinstall is off, so a missing one fails
    here, not in a scan)."""
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": False})
    for name in ("avro", "iceberg"):
        con.execute(f"INSTALL '{extension_file(name)}'")
        con.execute(f"LOAD {name}")
    con.execute(f"SET enable_external_file_cache = {str(file_cache).lower()}")
    return con


def read_iceberg(metadata_location: str, file_cache: bool = True) -> pa.Table:
    """The rows of the table whose metadata file is `metadata_location` (a local path or a
    `file:` URI), read by DuckDB's `iceberg_scan` (with its external file cache on, DuckDB's
    default, unless `file_cache` is False)."""
    path = metadata_location.removeprefix("file://").removeprefix("file:")
    quoted = path.replace("'", "''")
    return connection(file_cache).execute(f"SELECT * FROM iceberg_scan('{quoted}')").to_arrow_table()
