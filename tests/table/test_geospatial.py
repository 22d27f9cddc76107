"""Format v3 `geometry` and `geography` against Iceberg Java 1.12's core API (Spark 3.5 cannot
show them, so Java writes and reads these tables through `tests/java/GeoTable.java`):

- icefloe reads Java's WKB values byte for byte, as Arrow binary tagged `geoarrow.wkb` (CRS and
  edges in the extension metadata), and on Spark as binary;
- Java reads icefloe's table as its own: the same rows, the same type strings (the default
  CRS and algorithm named, as Java 1.12 prints them), the same Parquet logical types
  (GEOMETRY / GEOGRAPHY with the CRS), the same per-file metrics (value and null counts; for a
  geometry the bounding box of its WKB as the spec's x:y bounds, for a geography none);
- only null checks filter a geospatial column; a comparison, an identity or bucket partition
  and a sort on one are refused with the column's name, as Java refuses them.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe import LongType, NestedField, Schema
from icefloe.exceptions import IcefloeError, ValidationError
from icefloe.transforms import BucketTransform, IdentityTransform
from icefloe.types import GeographyType, GeometryType, StructType, type_from_json
from support.java import java_core_helper
from support.session import new_table_name


def point(x: float, y: float, *, big_endian: bool = False) -> bytes:
    if big_endian:
        return b"\x00" + struct.pack(">Idd", 1, x, y)
    return b"\x01" + struct.pack("<Idd", 1, x, y)


def point_z(x: float, y: float, z: float) -> bytes:
    return b"\x01" + struct.pack("<Iddd", 1001, x, y, z)


def line(*pts: tuple[float, float]) -> bytes:
    return b"\x01" + struct.pack("<II", 2, len(pts)) + b"".join(struct.pack("<dd", *p) for p in pts)


def polygon(*ring: tuple[float, float]) -> bytes:
    return b"\x01" + struct.pack("<III", 3, 1, len(ring)) + b"".join(struct.pack("<dd", *p) for p in ring)


SQUARE = polygon((0, 0), (0, 10), (10, 10), (10, 0), (0, 0))

# (id, g, g3857, geog, s.pt): points, lines, a polygon, a 3D point, a big-endian point, nulls.
ROWS: list[tuple[int, bytes | None, bytes | None, bytes | None, bytes | None]] = [
    (1, point(1.5, -2.25), point(1e6, 2e6), point(179.5, 10), point(0, 0)),
    (2, None, line((0, 0), (1e7, -1e7)), point(-179.5, -10), None),
    (3, line((0, 0), (1, 1), (2, 0)), None, None, point(-0.0, 90)),
    (4, SQUARE, point(-1e6, 0), line((170, 0), (-170, 0)), SQUARE),
    (5, point_z(1, 2, 3), point(0, 0, big_endian=True), point(0, 0), point_z(-1, -2, -3)),
    (6, point(float("inf"), 0), None, None, None),
] + [(100 + i, point(i, -i), point(i * 1000.0, i), point(i % 180, i % 90), point(-i, i)) for i in range(30)]


def java(*args: str) -> str:
    proc = subprocess.run([*java_core_helper("GeoTable"), *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def hexed(v: bytes | None) -> str:
    return "\\N" if v is None else v.hex()


def java_append(warehouse: Path, name: str, rows: list[tuple[Any, ...]]) -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
        for row in rows:
            f.write("\t".join([str(row[0]), *(hexed(v) for v in row[1:])]) + "\n")
    try:
        java("append", f"file://{warehouse}", name, f.name)
    finally:
        os.unlink(f.name)


def java_rows(warehouse: Path, name: str) -> list[tuple[Any, ...]]:
    out = []
    for text in java("read", f"file://{warehouse}", name).splitlines():
        fields = text.split("\t")
        out.append((int(fields[0]), *(None if v == "\\N" else bytes.fromhex(v) for v in fields[1:])))
    return sorted(out, key=lambda r: r[0])


def java_bounds(warehouse: Path, name: str) -> str:
    return java("bounds", f"file://{warehouse}", name)


def java_types(warehouse: Path, name: str) -> dict[int, str]:
    lines = java("types", f"file://{warehouse}", name).splitlines()
    return {int(i): t for i, t in (text.split("\t") for text in lines)}


def icefloe_rows(table: Any, **scan: Any) -> list[tuple[Any, ...]]:
    t = table.scan(**scan).to_arrow()
    pts = [None if s is None else s["pt"] for s in t.column("s").to_pylist()]
    cols = [t.column(c).to_pylist() for c in ("id", "g", "g3857", "geog")]
    return sorted(zip(*cols, pts), key=lambda r: r[0])


def arrow_rows(rows: list[tuple[Any, ...]]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "g": pa.array([r[1] for r in rows], pa.binary()),
            "g3857": pa.array([r[2] for r in rows], pa.binary()),
            "geog": pa.array([r[3] for r in rows], pa.binary()),
            "s": pa.array([{"pt": r[4]} for r in rows], pa.struct([pa.field("pt", pa.binary())])),
        }
    )


METRICS = ("record_count", "value_counts", "null_value_counts", "lower_bounds", "upper_bounds")


def file_metrics(table: Any) -> list[dict[str, Any]]:
    return [
        {
            k: f[k]
            for k in ("record_count", "value_counts", "null_value_counts", "lower_bounds", "upper_bounds")
        }
        for f in table.inspect.data_files().to_pylist()
    ]


def test_invalid_wkb_leaves_a_file_without_geometry_bounds_as_java(catalog: Any, warehouse: Path) -> None:
    """Java's `GeometryBoundsBuilder` drops a file's geometry bounds when any value is not WKB
    it accepts (an open ring here); the rows are still written whole, by both."""
    open_ring = polygon((0, 0), (0, 1), (1, 1), (1, 0))
    rows = [(1, point(1, 1), None, None, None), (2, open_ring, None, None, open_ring)]
    java_name = new_table_name("geo_bad_java")
    java("create", f"file://{warehouse}", java_name)
    java_append(warehouse, java_name, rows)
    ours_name = new_table_name("geo_bad_ours")
    catalog.create_table(ours_name, GEO_SCHEMA, properties={"format-version": "3"}).append(arrow_rows(rows))
    assert java_rows(warehouse, ours_name) == java_rows(warehouse, java_name) == rows
    assert java("bounds", f"file://{warehouse}", ours_name) == java(
        "bounds", f"file://{warehouse}", java_name
    )
    [metrics] = file_metrics(catalog.load_table(ours_name))
    assert [k for k, _ in metrics["lower_bounds"]] == [1]


def footer_geo_statistics(table: Any) -> list[tuple[Any, ...]]:
    """Each data file's GeospatialStatistics per column chunk (types and box), in file order of
    their first id."""
    out = []
    for f in sorted(table.inspect.data_files().to_pylist(), key=lambda f: f["lower_bounds"][0][1]):
        group = pq.ParquetFile(f["file_path"].removeprefix("file:")).metadata.row_group(0)
        for i in range(group.num_columns):
            c = group.column(i)
            s = c.geo_statistics if c.is_geo_stats_set else None
            box = None if s is None else (s.xmin, s.xmax, s.ymin, s.ymax, s.zmin, s.zmax, s.mmin, s.mmax)
            out.append((c.path_in_schema, None if s is None else s.geospatial_types, box))
    return out


def footer_logical_types(table: Any) -> list[tuple[str, str]]:
    [path] = [f["file_path"] for f in table.inspect.data_files().to_pylist()]
    schema = pq.ParquetFile(path.removeprefix("file:")).schema
    return [(schema.column(i).path, str(schema.column(i).logical_type)) for i in range(len(schema))]


GEO_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "g", GeometryType(), required=False),
    NestedField(3, "g3857", GeometryType("srid:3857"), required=False),
    NestedField(4, "geog", GeographyType("EPSG:4326", "karney"), required=False),
    NestedField(5, "s", StructType(NestedField(6, "pt", GeometryType(), required=False)), required=False),
)


def test_geospatial_columns_read_and_write_as_java_both_ways(
    spark: Any, catalog: Any, warehouse: Path
) -> None:
    java_name = new_table_name("geo_java")
    java("create", f"file://{warehouse}", java_name)
    java_append(warehouse, java_name, ROWS)
    theirs = catalog.load_table(java_name)

    # Java's schema as icefloe reads it, and its type strings as Java prints them.
    assert theirs.schema() == GEO_SCHEMA
    theirs_types = java_types(warehouse, java_name)
    assert theirs_types == {
        1: "long",
        2: "geometry(OGC:CRS84)",
        3: "geometry(srid:3857)",
        4: "geography(EPSG:4326, karney)",
        5: "struct<6: pt: optional geometry(OGC:CRS84)>",
        6: "geometry(OGC:CRS84)",
    }

    # icefloe reads Java's WKB byte for byte, tagged as GeoArrow WKB with the column's CRS.
    expected = sorted(ROWS, key=lambda r: r[0])
    assert icefloe_rows(theirs) == expected == java_rows(warehouse, java_name)
    got = theirs.scan().to_arrow().schema
    assert got.field("g").type == pa.binary()
    meta = {k.decode(): v.decode() for k, v in (got.field("geog").metadata or {}).items()}
    assert meta["ARROW:extension:name"] == "geoarrow.wkb"
    assert json.loads(meta["ARROW:extension:metadata"]) == {"crs": "EPSG:4326", "edges": "karney"}
    meta3857 = {k.decode(): v.decode() for k, v in (got.field("g3857").metadata or {}).items()}
    assert json.loads(meta3857["ARROW:extension:metadata"]) == {"crs": "3857", "crs_type": "srid"}

    # Null checks filter (and prune by null counts); other comparisons are refused by name.
    assert [r[0] for r in icefloe_rows(theirs, row_filter="g IS NULL")] == [2]
    assert [r[0] for r in icefloe_rows(theirs, row_filter="geog IS NOT NULL and id < 10")] == [1, 2, 4, 5]
    with pytest.raises(IcefloeError, match=r"'g'|g:"):
        theirs.scan(row_filter="g = 'abc'").to_arrow()

    # On Spark: WKB as binary.
    import icefloe.spark

    df = icefloe.spark.read(spark, theirs)
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields}["geog"] == "binary"
    spark_rows = sorted(
        (r["id"], r["g"], r["g3857"], r["geog"], None if r["s"] is None else r["s"]["pt"])
        for r in df.collect()
    )
    assert [tuple(None if v is None else bytes(v) for v in r[1:]) for r in spark_rows] == [
        r[1:] for r in expected
    ]

    # The twin written by icefloe (plain binary in, no extension metadata needed): Java reads
    # it as its own, with the same type strings, Parquet logical types and metrics.
    ours_name = new_table_name("geo_ours")
    ours = catalog.create_table(ours_name, GEO_SCHEMA, properties={"format-version": "3"})
    ours.append(arrow_rows(ROWS))
    assert java_rows(warehouse, ours_name) == expected
    assert java_types(warehouse, ours_name) == theirs_types
    ours = catalog.load_table(ours_name)
    assert file_metrics(ours) == file_metrics(theirs)
    [metrics] = file_metrics(ours)
    lower, upper = dict(metrics["lower_bounds"]), dict(metrics["upper_bounds"])
    assert set(lower) == set(upper) == {1, 2, 3, 6} and dict(metrics["null_value_counts"])[2] == 1
    # g's box: x from 0 to +inf (an infinite ordinate counts, NaN would not), y from -29 to 10.
    assert struct.unpack("<2d", lower[2]) == (0.0, -29.0)
    assert struct.unpack("<2d", upper[2]) == (float("inf"), 10.0)
    assert java("bounds", f"file://{warehouse}", ours_name) == java(
        "bounds", f"file://{warehouse}", java_name
    )
    assert footer_logical_types(ours) == footer_logical_types(theirs)
    assert dict(footer_logical_types(ours))["geog"].lower().startswith("geography")
    # The footers' GeospatialStatistics as parquet-java's: g's box is left out (an infinite X
    # on one side), its types kept; g3857 and s.pt boxed (s.pt with a Z range); none for geog.
    stats = footer_geo_statistics(ours)
    assert stats == footer_geo_statistics(theirs)
    assert {c: (t, b is not None and b[0] is not None) for c, t, b in stats if c != "id"} == {
        "g": ([1, 2, 3, 1001], False),
        "g3857": ([1, 2], True),
        "geog": (None, False),
        "s.pt": ([1, 3, 1001], True),
    }

    # Written from Spark (binary columns), Java reads the rows.
    spark_name = new_table_name("geo_spark")
    catalog.create_table(spark_name, GEO_SCHEMA, properties={"format-version": "3"})
    icefloe.spark.append(df, catalog.load_table(spark_name))
    assert java_rows(warehouse, spark_name) == expected


def test_geoarrow_input_creates_geospatial_columns(catalog: Any) -> None:
    def tagged(name: str, meta: dict[str, Any]) -> pa.Field:
        ext = {"ARROW:extension:name": "geoarrow.wkb", "ARROW:extension:metadata": json.dumps(meta)}
        return pa.field(name, pa.binary(), metadata=ext)

    arrow = pa.schema(
        [
            pa.field("id", pa.int64()),
            tagged("a", {}),
            tagged("b", {"crs": "3857", "crs_type": "srid"}),
            tagged("c", {"crs": "OGC:CRS84", "edges": "vincenty"}),
            pa.field("d", pa.binary()),
        ]
    )
    table = catalog.create_table(new_table_name("geo_arrow"), arrow, properties={"format-version": "3"})
    assert [f.field_type for f in table.schema().fields] == [
        LongType(),
        GeometryType(),
        GeometryType("srid:3857"),
        GeographyType("OGC:CRS84", "vincenty"),
        type_from_json("binary"),
    ]
    rows = pa.Table.from_pylist(
        [{"id": 1, "a": point(1, 2), "b": None, "c": point(3, 4), "d": b"x"}], schema=arrow
    )
    table.append(rows)
    assert table.scan().to_arrow().column("c").to_pylist() == [point(3, 4)]

    # A PROJJSON CRS object has no Iceberg type string: refused, naming the field.
    projjson = pa.schema([tagged("p", {"crs": {"type": "GeographicCRS"}})])
    with pytest.raises(IcefloeError, match="'p'"):
        catalog.create_table(new_table_name("geo_projjson"), projjson, properties={"format-version": "3"})


def test_geospatial_types_parse_as_java() -> None:
    assert type_from_json("geometry") == GeometryType() and GeometryType().to_json() == "geometry(OGC:CRS84)"
    assert type_from_json("Geography( EPSG:4326 , KARNEY )") == GeographyType("EPSG:4326", "karney")
    assert GeographyType().to_json() == "geography(OGC:CRS84, spherical)"
    # Java compares CRS names ignoring case.
    assert GeometryType("ogc:crs84") == GeometryType()
    for bad in ("geometry()", "geography(x, planar)", "geography(, spherical)"):
        with pytest.raises(IcefloeError):
            type_from_json(bad)


def test_geospatial_columns_are_refused_below_v3_as_java(catalog: Any, warehouse: Path) -> None:
    """Java's `Schema.checkCompatibility`: every v3-only column named, in one message."""
    name = new_table_name("geo_v2")
    proc = subprocess.run(
        [*java_core_helper("GeoTable"), "create", f"file://{warehouse}", name, "2"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0
    java_lines = [line for line in proc.stderr.splitlines() if "is not supported until v3" in line]
    assert len(java_lines) == 4, proc.stderr[-2000:]
    with pytest.raises(ValidationError) as refused:
        catalog.create_table(name, GEO_SCHEMA, properties={"format-version": "2"})
    assert "Invalid schema for v2:" in str(refused.value)
    ours = [line for line in str(refused.value).splitlines() if "is not supported until v3" in line]
    assert ours == java_lines
    assert not catalog.table_exists(name)


def test_partitions_and_sorts_on_geospatial_columns_are_refused(catalog: Any) -> None:
    table = catalog.create_table(new_table_name("geo_refuse"), GEO_SCHEMA, properties={"format-version": "3"})
    before = table.metadata_location
    for transform in (IdentityTransform(), BucketTransform(4)):
        with pytest.raises(IcefloeError, match="g"):
            with table.update_spec() as update:
                update.add_field("g", transform)
    with pytest.raises(IcefloeError, match="g"):
        with table.replace_sort_order() as order:
            order.asc("g")
    # Nothing was committed.
    assert catalog.load_table(table.name()).metadata_location == before


def test_footer_geospatial_statistics_of_edge_values_as_javas(catalog: Any, warehouse: Path) -> None:
    """Values parquet-java counts differently from a plain reading of the WKB: points JTS reads
    as empty (an X or Y that is NaN), a value that is not WKB, infinite ordinates on one or both
    sides, a `POINT Z` whose Z is NaN (a `POINT`), a collection whose first part is empty; and
    a chunk of only such values and nulls. Java's footers and icefloe's agree."""
    nan, inf = float("nan"), float("inf")
    truncated = b"\x01\x01\x00\x00\x00\x00"
    collection = (
        b"\x01" + struct.pack("<II", 1007, 3) + point_z(nan, nan, nan) + point_z(3, 4, 5) + point_z(6, 7, nan)
    )
    rows: list[tuple[int, bytes | None, bytes | None, bytes | None, bytes | None]] = [
        (1, point(nan, nan), point(15, nan), None, point_z(1, 2, nan)),
        (2, truncated, point(-inf, 1), None, point_z(1, 2, inf)),
        (3, point(5, 6), None, point(nan, nan), None),
        (4, collection, line((0, 0), (1, 1)), None, point_z(0, 0, nan)),
    ]
    java_name, ours_name = new_table_name("geo_edge_java"), new_table_name("geo_edge_ours")
    java("create", f"file://{warehouse}", java_name)
    java_append(warehouse, java_name, rows)
    ours = catalog.create_table(ours_name, GEO_SCHEMA, properties={"format-version": "3"})
    ours.append(arrow_rows(rows))
    stats = footer_geo_statistics(catalog.load_table(ours_name))
    assert stats == footer_geo_statistics(catalog.load_table(java_name))
    assert {c: (t, b) for c, t, b in stats if c != "id"} == {
        "g": ([1, 1007], (3.0, 6.0, 4.0, 7.0, 5.0, 5.0, None, None)),
        "g3857": ([1, 2], (None,) * 8),  # X from -inf to 1: no box
        "geog": (None, None),
        "s.pt": ([1, 1001], (0.0, 1.0, 0.0, 2.0, inf, inf, None, None)),
    }
