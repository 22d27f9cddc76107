"""Deletion vectors that DuckDB reads right (issue 44, the soak's seed 87382409).

DuckDB's `iceberg` extension 1.5.5 (the newest on PyPI) reads each deletion vector through
DuckDB's external file cache (`enable_external_file_cache`, on by default). A read the cache
cannot serve is widened up to the next range it holds when the gap is no longer than the read;
a later read inside that range gets the range's start, not its own offset, so the blob decoded
is another data file's vector, with a valid CRC (duckdb-iceberg PR #1182, fixed after 1.5.5).
It happens when a Puffin file's blobs are read with a blob not yet read between a read one and
a cached range: a large blob before a small one at the end of a file, or blobs of two specs in
one file (a table's delete manifests are one per spec, read one after the other).

Iceberg Java writes a Puffin file's blobs in the hash order of the data files' paths, so its
tables trigger it: `test_duckdb_limitation_misreads_javas_deletion_vectors_through_its_cache`
pins it on a table Java wrote (it fails once a fixed DuckDB is installed; with the cache off
DuckDB reads Java's rows). icefloe writes one Puffin file per spec with the smallest blob first
(rust/writer/dv_writer.rs), which DuckDB reads right with its cache on: the same history
written by icefloe reads like Java in DuckDB (before that layout, one file in path order, it
failed the same way)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from support import duckdb_reader
from support.oracle import Oracle, assert_same_rows, canonical_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

V3_MOR = {"format-version": "3", "write.delete.mode": "merge-on-read", "write.update.mode": "merge-on-read"}
ROWS = 2000  # a file; the large vector deletes every other row: ~2 KB, more than a small
#             vector and the footer together, so a cache widening the large one's read covers
#             the small one
PAIRS = 12  # Java orders each pair's blobs by a hash: large first (the misread) half the time


def _file(k: int) -> pa.Table:
    ids = list(range(k * ROWS, (k + 1) * ROWS))
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "k": pa.array([k] * ROWS, pa.int32()),
            "even": [i % 2 == 0 for i in ids],
        }
    )


def _pair_delete(j: int) -> str:
    """Every other row of file 2j (a large vector), one row of file 2j+1 (a small one)."""
    return f"(k = {2 * j} AND even = true) OR (k = {2 * j + 1} AND id = {(2 * j + 1) * ROWS + 7})"


def _puffin_blobs(table: Any) -> dict[str, int]:
    """Live deletion vectors of the current snapshot, counted per Puffin file."""
    out: dict[str, int] = {}
    for path in table.inspect.delete_files().column("file_path").to_pylist():
        out[path] = out.get(path, 0) + 1
    return out


def _duckdb(table: Any, file_cache: bool) -> Any:
    return duckdb_reader.read_iceberg(table.metadata_location, file_cache=file_cache)


def test_duckdb_limitation_misreads_javas_deletion_vectors_through_its_cache(
    catalog: Any, oracle: Oracle
) -> None:
    name = new_table_name("dv_java")
    qualified = oracle.qualified(name)
    props = ", ".join(
        f"'{k}' = '{v}'" for k, v in {**V3_MOR, "write.delete.distribution-mode": "none"}.items()
    )
    oracle.sql(
        f"CREATE TABLE {qualified} (id bigint, k int, even boolean) USING iceberg PARTITIONED BY (k) "
        f"TBLPROPERTIES ({props})"
    )
    # a file per k (Java clusters a partitioned table's rows by partition before writing)
    n = 2 * PAIRS * ROWS
    oracle.sql(f"INSERT INTO {qualified} SELECT id, CAST(id DIV {ROWS} AS INT), id % 2 = 0 FROM range({n})")
    for j in range(PAIRS):
        # no delete distribution: the pair's two small files are one scan task, one Puffin file
        oracle.sql(f"DELETE FROM {qualified} WHERE {_pair_delete(j)}")
    table = catalog.load_table(name)
    assert sorted(_puffin_blobs(table).values()) == [2] * PAIRS, "one Puffin file of two vectors a DELETE"

    java = oracle.canonical(name)
    assert_same_rows(
        _duckdb(table, file_cache=False), java, context=f"DuckDB {duckdb_reader.version()}, cache off"
    )
    cached = _duckdb(table, file_cache=True)
    # Pinned: the cache misreads a pair whose large vector Java wrote first (probability
    # 1 - 2**-PAIRS that some pair is), so DuckDB returns other rows; this fails on a fixed DuckDB.
    assert canonical_rows(cached).rows != java.rows, (
        f"DuckDB {duckdb_reader.version()} read Java's deletion vectors right with its file cache on: "
        "the limitation is fixed; drop this test and the file_cache=False of support/soak/readers.py"
    )


def test_duckdb_reads_icefloes_deletion_vectors_with_its_cache_on(catalog: Any, oracle: Oracle) -> None:
    name = new_table_name("dv_icefloe")
    table = catalog.create_table(name, _file(0).schema, properties=V3_MOR)
    for k in range(2 * PAIRS):
        catalog.load_table(name).append(_file(k))
    for j in range(PAIRS):
        catalog.load_table(name).delete(_pair_delete(j))
    # Two specs in one delete (the soak's case): files of identity(k), then vectors of both.
    with catalog.load_table(name).update_spec() as update:
        update.add_field("k", "identity", "k")
    for k in (100, 101):
        catalog.load_table(name).append(_file(k))
    # spec 1: file 101 loses half its rows, 100 one; spec 0: file 3 half, file 2 one more
    one_of_100, one_of_2 = 100 * ROWS + 7, 2 * ROWS + 11
    catalog.load_table(name).delete(
        f"(k = 101 AND even = true) OR id = {one_of_100} OR (k = 3 AND even = false) OR id = {one_of_2}"
    )
    table = catalog.load_table(name)
    blobs = _puffin_blobs(table)
    assert len(blobs) == PAIRS + 2, "the last delete writes a Puffin file per spec"

    java = oracle.canonical(name)
    assert_same_rows(
        _duckdb(table, file_cache=True), java, context=f"DuckDB {duckdb_reader.version()}, cache on"
    )
    assert_same_rows(
        _duckdb(table, file_cache=False), java, context=f"DuckDB {duckdb_reader.version()}, cache off"
    )
