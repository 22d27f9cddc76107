"""PyIceberg's everyday table API on icefloe, side by side with PyIceberg itself on the same
tables (one sqlite catalog that both open): `table.io`, `dynamic_partition_overwrite`, and
the scan outputs `to_arrow_batch_reader()`, `to_polars()`, `to_duckdb()` and the Arrow
PyCapsule stream (`__arrow_c_stream__`) that polars, DuckDB and pyarrow take directly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import icefloe
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.partitioning import PartitionField, PartitionSpec

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("kind", pa.string()), pa.field("v", pa.float64())]
)
SPEC = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform="identity", name="kind"))


def batch(ids: list[int], kind: str) -> pa.Table:
    return pa.table({"id": ids, "kind": [kind] * len(ids), "v": [i * 0.5 for i in ids]}, schema=SCHEMA)


@pytest.fixture
def catalogs(tmp_path: Path) -> tuple[icefloe.Catalog, Any]:
    """icefloe's and PyIceberg's SQL catalogs on one sqlite database and warehouse."""
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    warehouse = tmp_path / "wh"
    ice = icefloe.load_catalog("shared", uri=uri, warehouse=str(warehouse))
    ice.create_namespace("db")
    py = PyIcebergSqlCatalog("shared", uri=uri, warehouse=f"file://{warehouse}")
    return ice, py


def rows_of(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, pl.DataFrame):
        data = data.to_arrow()
    return sorted(data.to_pylist(), key=lambda r: r["id"])


def test_scan_outputs_match_pyiceberg(catalogs: tuple[icefloe.Catalog, Any]) -> None:
    ice, py = catalogs
    t = ice.create_table("db.s", schema=SCHEMA, partition_spec=SPEC)
    t.append(batch([1, 2, 3], "a"))
    t.append(batch([4, 5], "b"))
    pt = py.load_table("db.s")
    for row_filter, fields in (("id >= 2", ("*",)), (None, ("id", "kind"))):
        ours = t.scan(row_filter=row_filter, selected_fields=fields)
        theirs = pt.scan(row_filter=row_filter or "true", selected_fields=fields)

        reader = ours.to_arrow_batch_reader()
        assert isinstance(reader, pa.RecordBatchReader)
        assert rows_of(reader.read_all()) == rows_of(theirs.to_arrow_batch_reader().read_all())

        ours_pl, theirs_pl = ours.to_polars(), theirs.to_polars()
        assert isinstance(ours_pl, pl.DataFrame)
        assert ours_pl.columns == theirs_pl.columns
        assert rows_of(ours_pl) == rows_of(theirs_pl)

        query = "SELECT kind, count(*) AS n, sum(id) AS s FROM events GROUP BY kind ORDER BY kind"
        con = ours.to_duckdb("events")
        assert isinstance(con, duckdb.DuckDBPyConnection)
        assert con.execute(query).fetchall() == theirs.to_duckdb("events").execute(query).fetchall()
        mine = duckdb.connect()
        assert ours.to_duckdb("events", connection=mine) is mine
        assert mine.execute(query).fetchall() == con.execute(query).fetchall()

    # The Arrow PyCapsule stream: polars, pyarrow and DuckDB take the scan itself.
    scan = t.scan(row_filter="kind = 'a'")
    expected = rows_of(pt.scan(row_filter="kind = 'a'").to_arrow())
    assert rows_of(pl.DataFrame(scan)) == expected
    assert rows_of(pa.table(scan)) == expected
    assert rows_of(pa.RecordBatchReader.from_stream(scan).read_all()) == expected
    assert duckdb.sql("SELECT sum(id) FROM scan").fetchall() == [(6,)]
    # limit is kept in every output
    assert t.scan(limit=2).to_polars().height == 2
    assert pa.table(t.scan(limit=2)).num_rows == 2


def test_dynamic_partition_overwrite_matches_pyiceberg(catalogs: tuple[icefloe.Catalog, Any]) -> None:
    ice, py = catalogs
    ours = ice.create_table("db.ours", schema=SCHEMA, partition_spec=SPEC)
    ice.create_table("db.theirs", schema=SCHEMA, partition_spec=SPEC)
    theirs = py.load_table("db.theirs")
    for data in (batch([1, 2], "a"), batch([3], "b"), batch([4, 5], "c")):
        ours.append(data)
        theirs.append(data)
    new = pa.concat_tables([batch([10, 11], "a"), batch([12], "d")])
    ours.dynamic_partition_overwrite(new)
    theirs.dynamic_partition_overwrite(new)
    expected = rows_of(py.load_table("db.theirs").scan().to_arrow())
    assert rows_of(ice.load_table("db.ours").scan().to_arrow()) == expected
    assert {r["kind"] for r in expected} == {"a", "b", "c", "d"} and len(expected) == 6
    # An empty frame changes nothing, in both.
    before = ice.load_table("db.ours").metadata.current_snapshot_id
    ours.dynamic_partition_overwrite(SCHEMA.empty_table())
    theirs.dynamic_partition_overwrite(SCHEMA.empty_table())
    assert ice.load_table("db.ours").metadata.current_snapshot_id == before
    assert rows_of(ice.load_table("db.ours").scan().to_arrow()) == rows_of(
        py.load_table("db.theirs").scan().to_arrow()
    )
    # PyIceberg reads the table icefloe overwrote (one `overwrite` snapshot) with the same rows.
    assert rows_of(py.load_table("db.ours").scan().to_arrow()) == expected
    assert str(ice.load_table("db.ours").current_snapshot().summary.operation) == "overwrite"  # type: ignore[union-attr]


def test_table_io_matches_pyiceberg_file_io(catalogs: tuple[icefloe.Catalog, Any]) -> None:
    ice, py = catalogs
    t = ice.create_table("db.io", schema=SCHEMA)
    t.append(batch(list(range(100)), "a"))
    pt = py.load_table("db.io")
    io, pio = t.io, pt.io
    payload = bytes(range(256)) * 5000  # > 1 MiB: several buffered reads
    loc = f"{t.location()}/extra/blob.bin"

    with io.new_output(loc).create() as out:
        out.write(payload[:1000])
        out.write(payload[1000:])
    assert io.new_input(loc).exists() and pio.new_input(loc).exists()
    assert len(io.new_input(loc)) == len(pio.new_input(loc)) == len(payload)
    with pio.new_input(loc).open() as f:  # PyIceberg reads what icefloe wrote
        assert f.read() == payload
    with io.new_input(loc).open() as f:
        assert f.read(4) == payload[:4]
        f.seek(300_000)
        assert f.tell() == 300_000
        assert f.read(10) == payload[300_000:300_010]
        f.seek(-7, 2)
        assert f.read() == payload[-7:]
        assert f.read() == b""
    with pytest.raises(FileExistsError):
        io.new_output(loc).create()
    with pytest.raises(FileExistsError):
        pio.new_output(loc).create()
    with io.new_output(loc).create(overwrite=True) as out:
        out.write(b"short")
    with pio.new_input(loc).open() as f:
        assert f.read() == b"short"

    # icefloe reads what PyIceberg wrote, and a data file through pyarrow (seeks + ranged reads).
    ploc = f"{t.location()}/extra/from-pyiceberg.bin"
    with pio.new_output(ploc).create() as out:
        out.write(b"written by pyiceberg")
    with io.new_input(ploc).open() as f:
        assert f.read() == b"written by pyiceberg"
    data_path = t.scan().plan_files()[0].file_path
    with io.new_input(data_path).open() as f:
        assert pq.read_table(f).equals(pq.read_table(data_path.removeprefix("file:")))
    with io.new_input(t.metadata_location).open() as f, pio.new_input(t.metadata_location).open() as g:
        assert f.read() == g.read()

    # Delete; a missing file is FileNotFoundError for both, everywhere.
    io.delete(loc)
    pio.delete(io.new_input(ploc).location)
    assert not io.new_input(loc).exists() and not pio.new_input(ploc).exists()
    for fio in (io, pio):
        with pytest.raises(FileNotFoundError):
            fio.delete(loc)
        with pytest.raises(FileNotFoundError):
            fio.new_input(loc).open()
    # A block that fails leaves no file.
    with pytest.raises(RuntimeError), io.new_output(loc).create() as out:
        out.write(b"partial")
        raise RuntimeError("boom")
    assert not io.new_input(loc).exists()


def test_table_io_on_s3_matches_pyiceberg(s3: Any) -> None:
    """The same on an object store (the test suite's S3 server): ranged reads of a file
    larger than one read-ahead, all-or-nothing creates, deletes, PyIceberg's S3 FileIO on
    the other side."""
    import os
    import uuid

    from pyiceberg.io.pyarrow import PyArrowFileIO
    from support.servers.s3 import BUCKET

    prefix = f"s3://{BUCKET}/{uuid.uuid4().hex[:10]}"
    cat = icefloe.load_catalog("s3io", type="filesystem", warehouse=f"{prefix}/wh", **s3.properties())
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA)
    t.append(batch(list(range(1000)), "a"))
    io, pio = t.io, PyArrowFileIO(s3.properties())
    payload = os.urandom(3 * 1024 * 1024 + 17)
    loc = f"{t.location()}/extra/blob.bin"
    with io.new_output(loc).create() as out:
        out.write(payload)
    with pio.new_input(loc).open() as f:
        assert f.read() == payload
    assert len(io.new_input(loc)) == len(pio.new_input(loc)) == len(payload)
    with io.new_input(loc).open() as f:
        f.seek(2 * 1024 * 1024 + 5)
        assert f.read(100) == payload[2 * 1024 * 1024 + 5 : 2 * 1024 * 1024 + 105]
        f.seek(0)
        assert f.read() == payload
    data_path = t.scan().plan_files()[0].file_path
    with io.new_input(data_path).open() as f:
        assert rows_of(pq.read_table(f)) == rows_of(t.scan().to_arrow())
    with pytest.raises(FileExistsError):
        io.new_output(loc).create()
    io.delete(loc)
    assert not pio.new_input(loc).exists() and not io.new_input(loc).exists()
    with pytest.raises(FileNotFoundError):
        io.delete(loc)
    with pytest.raises(FileNotFoundError):
        io.new_input(loc).open()


def test_upsert_keyed_off_the_partition_column_as_pyiceberg(catalogs: tuple[icefloe.Catalog, Any]) -> None:
    """PyIceberg's `upsert` on a table partitioned by `kind`, keyed on `id` alone, and icefloe's
    on a merge-on-read twin (where equality deletes cannot reach other partitions, so it
    rewrites the files holding the keys): the same rows, read by both libraries."""
    ice, py = catalogs
    mor = {"write.merge.mode": "merge-on-read", "write.delete.mode": "merge-on-read"}
    theirs_t = ice.create_table("db.up_theirs", schema=SCHEMA, partition_spec=SPEC)
    ours_t = ice.create_table("db.up_ours", schema=SCHEMA, partition_spec=SPEC, properties=mor)
    for t in (theirs_t, ours_t):
        t.append(batch([1, 2, 3], "a"))
        t.append(batch([4, 5], "b"))
    source = pa.table({"id": [2, 4, 9], "kind": ["b", "c", "a"], "v": [-2.0, -4.0, -9.0]}, schema=SCHEMA)
    py_result = py.load_table("db.up_theirs").upsert(source, join_cols=["id"])
    result = ours_t.upsert(source, join_cols=["id"])
    assert (result.rows_updated, result.rows_inserted) == (py_result.rows_updated, py_result.rows_inserted)
    expected = rows_of(py.load_table("db.up_theirs").scan().to_arrow())
    assert rows_of(ice.load_table("db.up_ours").scan().to_arrow()) == expected
    assert rows_of(py.load_table("db.up_ours").scan().to_arrow()) == expected
    assert rows_of(ice.load_table("db.up_theirs").scan().to_arrow()) == expected
