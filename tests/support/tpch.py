"""TPC-H data and queries from DuckDB's `tpch` extension (PyPI `duckdb-extension-tpch`,
loaded offline from its wheel with `INSTALL '<path>'`): the eight tables at a scale factor
as Arrow tables, and the 22 queries' text (DuckDB's, which Spark SQL runs unchanged)."""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa

TABLES = ("lineitem", "orders", "customer", "part", "partsupp", "supplier", "nation", "region")


def _connection(scale_factor: float) -> object:
    import duckdb
    import duckdb_extension_tpch

    root = Path(duckdb_extension_tpch.__file__).parent
    found = sorted(root.glob("extensions/*/tpch.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no tpch.duckdb_extension under {root} (duckdb-extension-tpch)")
    con = duckdb.connect()
    con.execute(f"INSTALL '{found[-1]}'")
    con.execute("LOAD tpch")
    con.execute(f"CALL dbgen(sf={scale_factor})")
    return con


@functools.cache
def tpch_data(scale_factor: float) -> tuple[dict[str, pa.Table], tuple[str, ...]]:
    """The tables (name -> Arrow table) and the 22 queries (index 0 is Q1, no trailing `;`)."""
    con = _connection(scale_factor)
    tables = {t: con.execute(f"SELECT * FROM {t}").to_arrow_table() for t in TABLES}  # type: ignore[attr-defined]
    rows = con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall()  # type: ignore[attr-defined]
    queries = tuple(q.strip().rstrip(";") for _, q in rows)
    if len(queries) != 22:
        raise AssertionError(f"expected the 22 TPC-H queries, found {len(queries)}")
    return tables, queries
