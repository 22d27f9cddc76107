"""`table.maintenance.rewrite_table_path` / `CALL system.rewrite_table_path` checked against
Apache Iceberg Java's procedure.

One table per format (v2: Parquet position deletes; v3: deletion vectors in Puffin files),
partitioned, written by Java and by icefloe over several snapshots: inserts by both, deletes
by both (merge-on-read), Java equality deletes, and a statistics file. Java's procedure and
icefloe's rewrite it into two staging folders:

- twin: the same file lists (the same `source,target` pairs once each staging folder is taken
  out), the same latest version and counts;
- round trip: every file of icefloe's list copied to its target, the table registered there
  in a SQL catalog (icefloe's SqlCatalog and Java's JdbcCatalog on one sqlite file), and both
  engines read the copy with the source's rows; Java's copy read by Java too (where Java's own
  rewrite loses icefloe's file-scoped v2 position deletes, see the test);
- incremental: after more commits, `start_version` lists only the new metadata files, manifest
  lists, manifests and data / delete files (and the statistics files the new versions name),
  the same as Java's; copied over the first copy, the new version reads as the source in both
  engines;
- bad input: Java's errors with Java's messages, nothing written (the staging folder stays
  absent); a staging folder inside the table is accepted, as Java accepts it.
"""

from __future__ import annotations

import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.exceptions import ValidationError
from support.catalogs import java_catalog_conf, set_java_catalog
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

_MOR = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read'"
_SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("region", pa.string()), pa.field("v", pa.int32())])


def _region(i: int) -> str:
    return "eu" if i % 2 else "us"


def _insert(spark: Any, q: str, ids: range) -> None:
    rows = ", ".join(f"({i}, '{_region(i)}', {i % 7})" for i in ids)
    spark.sql(f"INSERT INTO {q} VALUES {rows}")


@dataclass
class Shared:
    """icefloe's SqlCatalog and Java's JdbcCatalog on one sqlite file, under one name, with the
    warehouse `file:/...`: Java spells a table location as the warehouse and its metadata files
    `file:/...`, and the `oracle` catalog's `file:///...` warehouse gives tables no prefix
    moves as a whole (Java's own procedure refuses them)."""

    ours: Any
    name: str

    def q(self, table: str) -> str:
        return f"{self.name}.{table}"

    def load(self, table: str) -> Any:
        return self.ours.load_table(tuple(table.split(".")))


def _shared(spark: Any, root: Path) -> Shared:
    name = f"rtp{uuid.uuid4().hex[:8]}"
    root = root / name
    root.mkdir(parents=True)
    conf = java_catalog_conf("sqlite", {"warehouse": str(root)}, root, None)
    # `file:/...`, the spelling Java gives the metadata files whatever the warehouse's
    set_java_catalog(spark, name, {**conf, ".warehouse": f"file:{root}"})
    ours = icefloe.load_catalog(name, uri=f"sqlite:///{root}/catalog.db", warehouse=str(root))
    ours.create_namespace("db")
    return Shared(ours, name)


@pytest.fixture(scope="module")
def shared(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Shared:
    return _shared(spark, tmp_path_factory.mktemp("rtp"))


def _build(spark: Any, cat: Shared, version: int) -> str:
    """Java and icefloe inserts, Java and icefloe merge-on-read deletes (position deletes on
    v2, deletion vectors on v3), icefloe equality deletes (a merge-on-read upsert), and Java's
    statistics file."""
    name = f"db.{new_table_name(f'rtp{version}').split('.')[-1]}"
    q = cat.q(name)
    spark.sql(
        f"CREATE TABLE {q} (id bigint, region string, v int) USING iceberg PARTITIONED BY (region) "
        f"TBLPROPERTIES ('format-version'='{version}', {_MOR})"
    )
    _insert(spark, q, range(0, 40))
    _insert(spark, q, range(40, 80))
    ids = list(range(80, 100))
    cat.load(name).append(pa.table({"id": ids, "region": [_region(i) for i in ids], "v": [1] * 20}, _SCHEMA))
    spark.sql(f"DELETE FROM {q} WHERE id IN (3, 4, 45, 46)")
    cat.load(name).delete("id = 81 OR id = 50")
    ups = [7, 8, 61, 62]
    cat.load(name).upsert(
        pa.table({"id": ups, "region": [_region(i) for i in ups], "v": [100] * 4}, _SCHEMA), ["id", "region"]
    )
    spark.sql(f"CALL {cat.name}.system.compute_table_stats(table => '{name}')")
    return name


@pytest.fixture(scope="module", params=[2, 3], ids=["v2", "v3"])
def source(request: pytest.FixtureRequest, spark: Any, shared: Shared) -> str:
    return _build(spark, shared, request.param)


def _java_rewrite(
    spark: Any, cat: str, name: str, source: str, target: str, staging: str, **extra: str
) -> Any:
    args = "".join(f", {k} => '{v}'" for k, v in extra.items())
    return spark.sql(
        f"CALL {cat}.system.rewrite_table_path(table => '{name}', source_prefix => '{source}', "
        f"target_prefix => '{target}', staging_location => '{staging}'{args})"
    ).collect()[0]


def _rows_of(location: str) -> list[tuple[str, str]]:
    text = Path(_local(location)).read_text()
    return [tuple(line.split(",", 1)) for line in text.splitlines() if line]  # type: ignore[misc]


def _local(location: str) -> str:
    return location[len("file:") :] if location.startswith("file:") else location


def _unstaged(rows: list[tuple[str, str]], staging: str) -> set[tuple[str, str]]:
    """The pairs with the staging folder taken out of staged sources."""
    staging = _local(staging).rstrip("/") + "/"
    return {
        (("<staging>/" + _local(s)[len(staging) :]) if _local(s).startswith(staging) else s, t)
        for s, t in rows
    }


def _copy(rows: list[tuple[str, str]]) -> None:
    for s, t in rows:
        Path(_local(t)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(_local(s), _local(t))


def _target_of_latest(rows: list[tuple[str, str]], latest: str) -> str:
    (target,) = [t for _s, t in rows if t.endswith("/metadata/" + latest)]
    return target


def test_twin_and_round_trip(spark: Any, shared: Shared, source: str, tmp_path: Path) -> None:
    table = shared.load(source)
    src = table.location()
    assert src.startswith("file:/tmp") and table.metadata_location.startswith(src + "/metadata/")
    leaf = source.split(".")[-1]
    target = f"{tmp_path}/dr/{leaf}"
    java = _java_rewrite(spark, shared.name, source, src, target, f"{tmp_path}/java-staging")
    mine = table.maintenance.rewrite_table_path(src, target, staging_location=f"{tmp_path}/ice-staging")

    assert mine.latest_version == java["latest_version"] == table.metadata_location.rsplit("/", 1)[-1]
    assert mine.rewritten_manifest_file_paths_count == java["rewritten_manifest_file_paths_count"]
    assert mine.rewritten_delete_file_paths_count == java["rewritten_delete_file_paths_count"]
    assert mine.rewritten_delete_file_paths_count > 0
    assert mine.file_list_location == f"{tmp_path}/ice-staging/file-list"
    java_rows, my_rows = _rows_of(java["file_list_location"]), mine.file_list()
    assert _unstaged(my_rows, f"{tmp_path}/ice-staging") == _unstaged(java_rows, f"{tmp_path}/java-staging")
    kinds = {t.rsplit(".", 1)[-1] for _s, t in my_rows}
    assert {"json", "avro", "parquet", "stats"} <= kinds, (
        kinds
    )  # metadata, lists + manifests, files, statistics
    if table.format_version == 3:
        assert "puffin" in kinds
    assert all(t.startswith(target + "/") for _s, t in my_rows)
    assert len(my_rows) == len(set(my_rows))

    # The round trip: icefloe's copy registered at the target, read by both engines.
    expected = spark.sql(f"SELECT * FROM {shared.q(source)}").collect()
    expected_df = spark.createDataFrame(expected, spark.table(shared.q(source)).schema)
    _copy(my_rows)
    copied = shared.ours.register_table(
        ("db", f"{leaf}_copy"), _target_of_latest(my_rows, mine.latest_version)
    )
    assert copied.location() == target
    assert_same_rows(copied.scan().to_arrow(), expected_df, context="icefloe reads icefloe's copy")
    java_read = spark.sql(f"SELECT * FROM {shared.q(source)}_copy")
    assert_same_rows(java_read, expected_df, context="Java reads icefloe's copy")

    # Java's copy, at its own target, read by Java.
    java_target = f"{tmp_path}/drj/{leaf}"
    java2 = _java_rewrite(spark, shared.name, source, src, java_target, f"{tmp_path}/java-staging2")
    rows2 = _rows_of(java2["file_list_location"])
    _copy(rows2)
    spark.sql(
        f"CALL {shared.name}.system.register_table(table => '{source}_jcopy', "
        f"metadata_file => '{_target_of_latest(rows2, java2['latest_version'])}')"
    ).collect()
    # Java leaves a file-scoped position delete file's `referenced_data_file` naming the source
    # data file (it moves a deletion vector's only): reading its own copy, Java no longer
    # applies icefloe's v2 delete files (they set it), and the rows they deleted come back.
    java_copy = {tuple(r) for r in spark.sql(f"SELECT * FROM {shared.q(source)}_jcopy").collect()}
    source_rows = {tuple(r) for r in expected}
    assert source_rows <= java_copy
    back = {r[0] for r in java_copy - source_rows}
    assert back <= ({81, 50} if table.format_version == 2 else set()), back


def test_sql_call_and_incremental(spark: Any, shared: Shared, tmp_path: Path) -> None:
    name = _build(spark, shared, 2)
    table = shared.load(name)
    src, target = table.location(), f"{tmp_path}/dr/{name.split('.')[-1]}"
    call = (
        f"CALL {shared.name}.system.rewrite_table_path(table => '{name}', source_prefix => '{src}', "
        f"target_prefix => '{target}', staging_location => '{{staging}}')"
    )
    first = icefloe.spark.sql(
        spark, call.format(staging=f"{tmp_path}/s1"), catalogs={shared.name: shared.ours}
    )
    java_df = spark.sql(call.format(staging=f"{tmp_path}/j1"))
    assert first.schema.simpleString() == java_df.schema.simpleString()
    (row,) = first.collect()
    (java_first,) = java_df.collect()
    assert (row[0], *row[2:]) == (java_first[0], *java_first[2:])
    assert row[1] == f"{tmp_path}/s1/file-list"
    first_rows = _rows_of(row[1])
    assert _unstaged(first_rows, f"{tmp_path}/s1") == _unstaged(_rows_of(java_first[1]), f"{tmp_path}/j1")
    _copy(first_rows)
    start = row[0]

    # More commits, then an incremental rewrite from the first one's latest version.
    q = shared.q(name)
    _insert(spark, q, range(100, 120))
    spark.sql(f"DELETE FROM {q} WHERE id IN (101, 102, 20)")
    shared.load(name).append(pa.table({"id": [200], "region": ["eu"], "v": [1]}, _SCHEMA))
    table = shared.load(name)
    mine = table.maintenance.rewrite_table_path(
        src, target, start_version=start, staging_location=f"{tmp_path}/s2"
    )
    java = _java_rewrite(spark, shared.name, name, src, target, f"{tmp_path}/j2", start_version=start)
    assert (
        mine.latest_version,
        mine.rewritten_manifest_file_paths_count,
        mine.rewritten_delete_file_paths_count,
    ) == (
        java["latest_version"],
        java["rewritten_manifest_file_paths_count"],
        java["rewritten_delete_file_paths_count"],
    )
    rows = mine.file_list()
    assert _unstaged(rows, f"{tmp_path}/s2") == _unstaged(
        _rows_of(java["file_list_location"]), f"{tmp_path}/j2"
    )
    # Only what is new since: nothing the first copy listed, the new data and delete files only.
    # (but the statistics files the new versions still name, which Java lists from every
    # version it rewrites)
    common = {t for _s, t in rows} & {t for _s, t in first_rows}
    assert common and all(t.endswith(".stats") for t in common), sorted(common)
    first_sources = {s for s, _t in first_rows}
    new_files = {s for s, _t in rows if s.startswith(src) and not s.endswith(".stats")}
    assert new_files and not new_files & first_sources
    live = {r["file_path"] for r in spark.sql(f"SELECT file_path FROM {q}.files").collect()}
    assert new_files <= live
    versions = [t.rsplit("/", 1)[-1] for _s, t in rows if t.endswith(".metadata.json")]
    assert start not in versions and mine.latest_version in versions

    # The incremental copy laid over the first one reads as the source in both engines (the
    # new lists name the older manifests' copies with their lengths).
    _copy(rows)
    latest = _target_of_latest(rows, mine.latest_version)
    expected = spark.createDataFrame(spark.sql(f"SELECT * FROM {q}").collect(), spark.table(q).schema)
    spark.sql(
        f"CALL {shared.name}.system.register_table(table => '{name}_inc', metadata_file => '{latest}')"
    ).collect()
    assert_same_rows(spark.sql(f"SELECT * FROM {q}_inc"), expected, context="Java reads the incremental copy")
    inc = shared.ours.register_table(("db", f"{name.split('.')[-1]}_inc2"), latest)
    assert_same_rows(inc.scan().to_arrow(), expected, context="icefloe reads the incremental copy")

    # create_file_list => false: the same result row as Java's (no file list named), and no
    # file list in either staging folder.
    no_list = call.replace(")", ", create_file_list => false)")
    (ours_row,) = icefloe.spark.sql(
        spark, no_list.format(staging=f"{tmp_path}/s3"), catalogs={shared.name: shared.ours}
    ).collect()
    (java_row,) = spark.sql(no_list.format(staging=f"{tmp_path}/j3")).collect()
    assert tuple(ours_row) == tuple(java_row)
    assert ours_row[0] == mine.latest_version and not (tmp_path / "s3" / "file-list").exists()
    assert not (tmp_path / "j3" / "file-list").exists()


def test_bad_input_is_refused_as_java_refuses_it(
    spark: Any, oracle: Oracle, catalog: Any, shared: Shared, tmp_path: Path
) -> None:
    # A table of the filesystem catalog (Java's HadoopCatalog): icefloe names its metadata file
    # as Java does (`file:/...`) in the errors.
    name = new_table_name("rtpbad")
    oracle.sql(f"CREATE TABLE {oracle.qualified(name)} (id bigint) USING iceberg")
    oracle.sql(f"INSERT INTO {oracle.qualified(name)} VALUES (1), (2)")
    table = catalog.load_table(name)
    src = table.location()
    assert src.startswith("file:/") and table.metadata_location.startswith("/")
    staging = tmp_path / "staging"
    cases: list[tuple[dict[str, Any], str]] = [
        ({"source_prefix": "", "target_prefix": "/x"}, "Source prefix('') cannot be empty."),
        ({"source_prefix": src, "target_prefix": ""}, "Target prefix('') cannot be empty."),
        (
            {"source_prefix": src, "target_prefix": src},
            f"Source prefix cannot be the same as target prefix ({src})",
        ),
        (
            {"source_prefix": src, "target_prefix": "/x", "end_version": "v99.metadata.json"},
            "Cannot find provided version file v99.metadata.json in metadata log.",
        ),
        (
            {"source_prefix": src, "target_prefix": "/x", "start_version": "nope.json"},
            "Cannot find provided version file nope.json in metadata log.",
        ),
        (
            {"source_prefix": src, "target_prefix": "/x", "start_version": " "},
            "Start version(' ') cannot be empty.",
        ),
        (
            {"source_prefix": "/not/the/table", "target_prefix": "/x"},
            f"Path file:{table.metadata_location}/ does not start with /not/the/table/",
        ),
    ]
    for kwargs, message in cases:
        java_args = "".join(f", {k} => '{v}'" for k, v in kwargs.items())
        with pytest.raises(Exception) as java_error:
            oracle.sql(
                f"CALL oracle.system.rewrite_table_path(table => '{name}'{java_args}, "
                f"staging_location => '{staging}')"
            )
        assert message in str(java_error.value), (message, str(java_error.value)[:400])
        with pytest.raises(ValidationError) as ours:
            table.maintenance.rewrite_table_path(**kwargs, staging_location=str(staging))
        assert str(ours.value) == message
        assert not staging.exists() or not any(staging.iterdir()), kwargs

    # A data file outside the source prefix fails after the metadata files were staged: Java
    # leaves them behind, icefloe deletes what it wrote.
    good = f"db.{new_table_name('rtpout').split('.')[-1]}"
    spark.sql(f"CREATE TABLE {shared.q(good)} (id bigint) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {shared.q(good)} VALUES (1)")
    outside = tmp_path / "outside.parquet"
    pq.write_table(pa.table({"id": [999]}), outside)
    shared.load(good).add_files([str(outside)])
    t = shared.load(good)
    with pytest.raises(ValidationError, match="not under the source prefix"):
        t.maintenance.rewrite_table_path(
            t.location(), f"{tmp_path}/x", staging_location=str(tmp_path / "s-out")
        )
    assert not (tmp_path / "s-out").exists() or not [
        p for p in (tmp_path / "s-out").rglob("*") if p.is_file()
    ]
    with pytest.raises(Exception, match="not under the source prefix"):
        _java_rewrite(spark, shared.name, good, t.location(), f"{tmp_path}/x", str(tmp_path / "s-java"))

    # A staging folder inside the table is accepted (Java's default is one); nothing committed.
    other = _build(spark, shared, 2)
    t = shared.load(other)
    src = t.location()
    before = t.metadata_location
    r = t.maintenance.rewrite_table_path(
        src, f"{tmp_path}/dr", staging_location=f"{src}/metadata/copy-staging"
    )
    java = _java_rewrite(
        spark, shared.name, other, src, f"{tmp_path}/dr", f"{src}/metadata/copy-staging-java"
    )
    assert r.latest_version == java["latest_version"]
    assert shared.load(other).metadata_location == before
    # The default staging folder: `<metadata>/copy-table-staging-<uuid>/`.
    d = t.maintenance.rewrite_table_path(src, f"{tmp_path}/dr2")
    assert d.staging_location.startswith(
        f"{src}/metadata/copy-table-staging-"
    ) and d.staging_location.endswith("/")
    assert d.file_list_location == d.staging_location + "file-list"
    assert len(d.file_list()) == len(r.file_list())
