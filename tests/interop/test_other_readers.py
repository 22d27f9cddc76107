"""Tables icefloe writes, read by two other Iceberg readers besides Iceberg Java: DuckDB's
`iceberg` extension (`support.duckdb_reader`) and Sail, a Spark-compatible engine in Rust run as
a Spark Connect server (`support.sail_reader`).

The tables are written in process through the table API on the shared filesystem warehouse, in
the shapes users have: unpartitioned; partitioned by identity, bucket, day and truncate; format v2
merge-on-read with position deletes (`table.delete`) and with equality deletes (`table.upsert` on
a table with identifier fields); schema evolution (rename, add, drop after data is written);
partition evolution; format v3 with deletion vectors. Every table holds the primitive types
(int, long, float and double with NaN, +-inf and -0.0, decimal, string, date, timestamp,
timestamptz, boolean, binary) and nulls. For each table and reader, the reader's rows (and
column names, in order) equal Iceberg Java's read of the same table.

Where a reader does not read a shape right, a test named for the limitation asserts what it does
instead (its error, or its different answer), so that test fails when the reader is fixed; the
limitations are listed in docs/reliability.md ("Other readers")."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pytest
from support import duckdb_reader
from support.oracle import CanonicalRows, Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

UTC = dt.timezone.utc
MOR = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
SHAPES = (
    "unpartitioned",
    "partitioned",
    "position_deletes",
    "equality_deletes",
    "schema_evolution",
    "partition_evolution",
    "v3_deletion_vectors",
    "escaped_partition_paths",
)
# What Sail 0.7.2 does not read (see the tests named for each limitation at the end).
SAIL_LIMITED = ("escaped_partition_paths", "partition_evolution")

ARROW_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("i", pa.int32()),
        ("f", pa.float32()),
        ("d", pa.float64()),
        ("dec", pa.decimal128(9, 2)),
        ("s", pa.string()),
        ("day", pa.date32()),
        ("ts", pa.timestamp("us")),
        ("tstz", pa.timestamp("us", tz="UTC")),
        ("b", pa.bool_()),
        ("bin", pa.binary()),
    ]
)
SPECIAL_DOUBLES = (float("nan"), float("inf"), float("-inf"), -0.0, 0.0)


def rows(lo: int, hi: int) -> pa.Table:
    """Rows `lo..hi-1` of every primitive type; every 11th row is all nulls but its id."""
    ids = list(range(lo, hi))

    def col(f: Callable[[int], Any]) -> list[Any]:
        return [None if x % 11 == 10 else f(x) for x in ids]

    return pa.table(
        {
            "id": ids,
            "i": col(lambda x: (x * 7919) % 100_003 - 50_000),
            "f": col(lambda x: SPECIAL_DOUBLES[x % 5] if x % 3 == 0 else x * 0.5),
            "d": col(lambda x: SPECIAL_DOUBLES[x % 5] if x % 4 == 0 else -x * 1.25e10),
            "dec": col(lambda x: decimal.Decimal(f"{(-1) ** x * x * 1013}.{x % 100:02d}")),
            "s": col(lambda x: f"{'abcde'[x % 5]}{x % 3}-é{x}"),
            "day": col(lambda x: dt.date(1969, 12, 30) + dt.timedelta(days=x % 9)),
            "ts": col(lambda x: dt.datetime(1969, 12, 31, 20) + dt.timedelta(hours=x * 7, microseconds=x)),
            "tstz": col(lambda x: dt.datetime(2024, 2, 28, 22, tzinfo=UTC) + dt.timedelta(minutes=x * 97)),
            "b": col(lambda x: x % 2 == 0),
            "bin": col(lambda x: bytes([x % 256, 0, 255]) if x % 7 else b""),
        },
        schema=ARROW_SCHEMA,
    )


def _unpartitioned(catalog: Any, name: str) -> None:
    table = catalog.create_table(name, ARROW_SCHEMA)
    table.append(rows(0, 30))
    catalog.load_table(name).append(rows(30, 45))


def _partitioned(catalog: Any, name: str) -> None:
    catalog.create_table(name, ARROW_SCHEMA)
    with catalog.load_table(name).update_spec() as u:
        u.add_field("day", "identity", "day")
        u.add_field("id", "bucket[4]", "id_bucket")
        u.add_field("tstz", "day", "tstz_day")
        u.add_field("s", "truncate[1]", "s_trunc")
    table = catalog.load_table(name)
    table.append(rows(0, 40))
    catalog.load_table(name).append(rows(40, 50))


def _position_deletes(catalog: Any, name: str) -> None:
    table = catalog.create_table(name, ARROW_SCHEMA, properties=MOR)
    table.append(rows(0, 40))
    catalog.load_table(name).delete("id IN (0, 3, 7, 10, 21, 39)")
    catalog.load_table(name).delete("i < 0")


def _equality_deletes(catalog: Any, name: str) -> None:
    from icefloe.schema import Schema
    from icefloe.types import NestedField

    fields = [
        NestedField(f.field_id, f.name, f.field_type, required=f.name == "id")
        for f in Schema.from_arrow(ARROW_SCHEMA).fields
    ]
    catalog.create_table(name, Schema(*fields, identifier_field_ids=[1]), properties=MOR)
    required = pa.schema([pa.field("id", pa.int64(), nullable=False), *list(ARROW_SCHEMA)[1:]])

    def keyed(ids: list[int], lo: int) -> pa.Table:
        data = rows(lo, lo + len(ids)).cast(required)
        return data.set_column(0, required.field("id"), pa.array(ids, pa.int64()))

    catalog.load_table(name).append(rows(0, 30).cast(required))
    # Replaces ids 5..14 and inserts 30..34 (new values: rows 100..114), then replaces some of
    # the replaced and inserted ones again and inserts more.
    catalog.load_table(name).upsert(keyed([*range(5, 15), *range(30, 35)], 100))
    catalog.load_table(name).upsert(keyed([1, 2, 6, 31, 32, 40, 41], 200))


def _schema_evolution(catalog: Any, name: str) -> None:
    from icefloe.types import StringType

    table = catalog.create_table(name, ARROW_SCHEMA)
    table.append(rows(0, 20))
    with catalog.load_table(name).update_schema() as u:
        u.rename_column("s", "s_renamed")
    with catalog.load_table(name).update_schema() as u:
        u.add_column("added", StringType())
    more = rows(20, 30).rename_columns([*ARROW_SCHEMA.names[:5], "s_renamed", *ARROW_SCHEMA.names[6:]])
    more = more.append_column("added", pa.array([f"new{x}" for x in range(20, 30)], pa.string()))
    catalog.load_table(name).append(more)
    with catalog.load_table(name).update_schema() as u:
        u.delete_column("i")
    catalog.load_table(name).append(
        more.drop_columns(["i"]).set_column(0, "id", pa.array(range(30, 40), pa.int64()))
    )


def _partition_evolution(catalog: Any, name: str) -> None:
    table = catalog.create_table(name, ARROW_SCHEMA)
    table.append(rows(0, 15))
    with catalog.load_table(name).update_spec() as u:
        u.add_field("b", "identity", "b")
        u.add_field("id", "bucket[3]", "id_bucket")
    catalog.load_table(name).append(rows(15, 30))
    with catalog.load_table(name).update_spec() as u:
        u.remove_field("id_bucket")
        u.add_field("day", "identity", "day")
    catalog.load_table(name).append(rows(30, 45))


def _escaped_partition_paths(catalog: Any, name: str) -> None:
    """Identity partitions on a string holding `é`: the data files' folders are
    `s=a0-%C3%A90` (URL-encoded, as Java names them), a `%` in every data file's path."""
    catalog.create_table(name, ARROW_SCHEMA)
    with catalog.load_table(name).update_spec() as u:
        u.add_field("s", "identity", "s")
    catalog.load_table(name).append(rows(0, 20))


def _v3_deletion_vectors(catalog: Any, name: str) -> None:
    table = catalog.create_table(name, ARROW_SCHEMA, properties={**MOR, "format-version": "3"})
    table.append(rows(0, 40))
    catalog.load_table(name).delete("id IN (1, 2, 8, 13, 34)")
    catalog.load_table(name).delete("b = true AND id > 20")


WRITERS: dict[str, Callable[[Any, str], None]] = {
    "unpartitioned": _unpartitioned,
    "partitioned": _partitioned,
    "position_deletes": _position_deletes,
    "equality_deletes": _equality_deletes,
    "schema_evolution": _schema_evolution,
    "partition_evolution": _partition_evolution,
    "v3_deletion_vectors": _v3_deletion_vectors,
    "escaped_partition_paths": _escaped_partition_paths,
}


class Tables:
    """The module's tables (written once) and Java's canonical rows of each (read once)."""

    def __init__(self, catalog: Any, oracle: Oracle) -> None:
        self.catalog = catalog
        self.oracle = oracle
        self.names: dict[str, str] = {}
        for shape in SHAPES:
            name = new_table_name(f"other_{shape}")
            WRITERS[shape](catalog, name)
            self.names[shape] = name
        self._java: dict[str, CanonicalRows] = {}

    def table(self, shape: str) -> Any:
        return self.catalog.load_table(self.names[shape])

    def java(self, shape: str) -> CanonicalRows:
        if shape not in self._java:
            self._java[shape] = self.oracle.canonical(self.names[shape])
        return self._java[shape]


@pytest.fixture(scope="module")
def tables(catalog: Any, oracle: Oracle) -> Tables:
    return Tables(catalog, oracle)


@pytest.fixture(scope="module")
def sail() -> Iterator[Any]:
    from support.sail_reader import SailReader

    reader = SailReader()
    yield reader
    reader.close()


def test_the_tables_have_the_shapes_they_are_named_for(tables: Tables) -> None:
    def deletes(shape: str) -> list[dict[str, Any]]:
        return (
            tables.table(shape)
            .inspect.delete_files()
            .select(["content", "file_format", "equality_ids"])
            .to_pylist()
        )

    assert {(d["content"], d["file_format"]) for d in deletes("position_deletes")} == {(1, "PARQUET")}
    eq = deletes("equality_deletes")
    assert eq and all(d["content"] == 2 and list(d["equality_ids"]) == [1] for d in eq), eq
    assert {(d["content"], d["file_format"]) for d in deletes("v3_deletion_vectors")} == {(1, "PUFFIN")}
    assert tables.table("v3_deletion_vectors").format_version == 3
    assert len(tables.table("partition_evolution").specs()) == 3
    spec = [f.name for f in tables.table("partitioned").spec().fields]
    assert spec == ["day", "id_bucket", "tstz_day", "s_trunc"]
    escaped = tables.table("escaped_partition_paths").inspect.data_files().column("file_path").to_pylist()
    assert any("%C3%A9" in p for p in escaped), escaped
    assert tables.table("schema_evolution").schema().find_field("s_renamed") is not None
    for shape in SHAPES:
        assert len(tables.java(shape)) > 0, shape


@pytest.mark.parametrize("shape", SHAPES)
def test_duckdb_reads_like_java(tables: Tables, shape: str) -> None:
    got = duckdb_reader.read_iceberg(tables.table(shape).metadata_location)
    assert_same_rows(got, tables.java(shape), context=f"DuckDB {duckdb_reader.version()}, {shape}")


@pytest.mark.parametrize("shape", [s for s in SHAPES if s not in SAIL_LIMITED])
def test_sail_reads_like_java(tables: Tables, sail: Any, shape: str) -> None:
    got = sail.read_iceberg(tables.table(shape).location())
    assert_same_rows(got, tables.java(shape), context=f"Sail, {shape}")


# ------------------------------------------------------------------------------------------------
# limitations: each test fails when the reader starts reading the shape (then move the shape to
# the parity tests above and out of docs/reliability.md)
# ------------------------------------------------------------------------------------------------


def test_sail_limitation_data_file_paths_with_percent(tables: Tables, sail: Any) -> None:
    """Sail percent-encodes a data file's path again (`%C3%A9` becomes `%25C3%25A9`) and so
    looks for a file that does not exist: a table partitioned by identity on a value that needs
    escaping (here `é`; Java and icefloe URL-encode partition values in folder names alike) is
    unreadable. DuckDB and Java read it (the parity tests above)."""
    from pyspark.errors.exceptions.connect import SparkConnectGrpcException

    with pytest.raises(SparkConnectGrpcException, match=r"%25C3%25A9.*not found") as info:
        sail.read_iceberg(tables.table("escaped_partition_paths").location())
    assert type(info.value).__name__ == "QueryExecutionException"


def test_sail_limitation_identity_columns_added_by_partition_evolution_come_last(
    tables: Tables, sail: Any
) -> None:
    """On a table whose spec gained identity fields after data was written (`b`, then `day`),
    Sail returns those columns after all the others instead of in the schema's order; their
    values are right (the rows equal Java's once the columns are put in the schema's order).
    A table partitioned by identity from the start keeps its order (`partitioned` above)."""
    got = sail.read_iceberg(tables.table("partition_evolution").location())
    java = tables.java("partition_evolution")
    assert got.column_names == [c for c in java.columns if c not in ("b", "day")] + ["b", "day"]
    assert got.column_names != list(java.columns)
    assert_same_rows(got.select(list(java.columns)), java, context="Sail, partition_evolution reordered")


def test_sail_limitation_takes_a_table_folder_not_a_metadata_file(tables: Tables, sail: Any) -> None:
    """`load()` with a `vN.metadata.json` path is refused (Sail lists `<path>/metadata` for the
    newest metadata file), so a table is read from its folder, at its newest metadata only."""
    from pyspark.errors.exceptions.connect import AnalysisException

    location = tables.table("unpartitioned").metadata_location
    with pytest.raises(AnalysisException, match=r"Failed to list metadata directory.*Not a directory"):
        sail.read_iceberg(location)
