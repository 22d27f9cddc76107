"""`table.add_files`: existing Parquet files registered as data files (migrations).

Twins: the same Parquet files added by icefloe to one table and by Iceberg Java's
`add_files` procedure (and by PyIceberg's `add_files`) to another with the same schema and
spec; the data files must carry the same partition tuples, record counts and metrics, and
Java must read icefloe's table with the files' rows. Refusals leave the table unchanged and
the files in place."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from icefloe.exceptions import InvalidDataError, NotFoundError, ValidationError
from icefloe.partitioning import PartitionField, PartitionSpec
from support.oracle import assert_same_rows

UTC = dt.timezone.utc
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("v", pa.float64()),
        pa.field("d", pa.date32()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
        pa.field("name", pa.string()),
    ]
)
KIND = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform="identity", name="kind"))
JAVA_COLUMNS = "id BIGINT NOT NULL, kind STRING, v DOUBLE, d DATE, ts TIMESTAMP, name STRING"


def rows(ids: list[int], kind: str | None) -> pa.Table:
    base = dt.datetime(2026, 1, 1, tzinfo=UTC)
    return pa.table(
        {
            "id": ids,
            "kind": [kind] * len(ids),
            "v": [None if i % 3 == 0 else i * 1.5 for i in ids],
            "d": [dt.date(2026, 1, 1) + dt.timedelta(days=i) for i in ids],
            "ts": [base + dt.timedelta(hours=i) for i in ids],
            "name": [f"name-{i:04d}-" + "x" * (i % 20) for i in ids],
        },
        schema=SCHEMA,
    )


def write(path: Path, data: pa.Table, **kw: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(data, path, row_group_size=kw.pop("row_group_size", 3), **kw)
    return str(path)


def row_group_starts(path: Path) -> list[int]:
    meta = pq.ParquetFile(path).metadata
    starts = []
    for i in range(meta.num_row_groups):
        col = meta.row_group(i).column(0)
        offsets = [col.data_page_offset]
        if col.dictionary_page_offset is not None:
            offsets.append(col.dictionary_page_offset)
        starts.append(min(offsets))
    return starts


def data_files(table: icefloe.Table) -> dict[str, Any]:
    return {
        Path(t.file_path.removeprefix("file:")).name: t.file
        for t in table.scan(include_column_stats=True).plan_files()
    }


@pytest.mark.spark
@pytest.mark.interop
def test_add_files_matches_java_add_files_procedure(
    catalog: icefloe.Catalog, oracle: Any, table_name: str, tmp_path: Path
) -> None:
    # Hive-style folders for Java's procedure (it takes partition values from the paths);
    # the files hold the partition column too, which icefloe reads.
    src = tmp_path / "src"
    files = [
        write(src / "kind=a" / "part-0.parquet", rows(list(range(0, 7)), "a")),
        write(src / "kind=a" / "part-1.parquet", rows(list(range(7, 9)), "a")),
        write(src / "kind=b" / "part-0.parquet", rows(list(range(9, 14)), "b")),
    ]
    ours = catalog.create_table(table_name, schema=SCHEMA, partition_spec=KIND)
    twin = table_name + "_java"
    oracle.sql(f"CREATE TABLE {oracle.qualified(twin)} ({JAVA_COLUMNS}) USING iceberg PARTITIONED BY (kind)")
    oracle.sql(
        f"CALL {oracle.catalog}.system.add_files(table => '{twin}', source_table => '`parquet`.`{src}`')"
    )
    snap = ours.add_files(files, snapshot_properties={"migrated-by": "test"})
    assert snap is not None and str(snap.summary.operation) == "append"
    assert snap.summary["added-data-files"] == "3" and snap.summary["added-records"] == "14"
    assert snap.summary["migrated-by"] == "test"

    # Java reads icefloe's table with the files' rows.
    expected = pa.concat_tables([pq.read_table(f) for f in files])
    assert_same_rows(oracle.df(table_name), expected, context="Java reads the table after add_files")
    assert_same_rows(ours.scan().to_arrow(), expected, context="icefloe reads the table after add_files")

    # The same partitions, counts and metrics as Java's add_files computed from the same footers.
    mine = {Path(f["file_path"]).relative_to(src).as_posix(): f for f in oracle.data_files(table_name)}
    java = {
        Path(f["file_path"].removeprefix("file:")).relative_to(src).as_posix(): f
        for f in oracle.data_files(twin)
    }
    assert (
        sorted(mine)
        == sorted(java)
        == ["kind=a/part-0.parquet", "kind=a/part-1.parquet", "kind=b/part-0.parquet"]
    )
    for name, j in java.items():
        m = mine[name]
        for col in (
            "partition",
            "record_count",
            "file_size_in_bytes",
            "column_sizes",
            "value_counts",
            "null_value_counts",
            "lower_bounds",
            "upper_bounds",
            "spec_id",
        ):
            assert m[col] == j[col], f"{name}: {col} differs: icefloe {m[col]!r}, Java {j[col]!r}"
        # Java's add_files leaves split offsets out; icefloe keeps each row group's start (as
        # its writer and PyIceberg's add_files do), which the footer gives.
        assert j["split_offsets"] is None
        assert m["split_offsets"] == row_group_starts(src / name)
        # Java has no NaN counts for imported files (it does not read the data); icefloe
        # reads float columns and counts them, as for the files it writes.
        assert m["nan_value_counts"] == {3: 0}
    # Both set the table's name mapping for the files without field ids.
    ours_mapping = json.loads(catalog.load_table(table_name).properties["schema.name-mapping.default"])
    java_mapping = json.loads(oracle.java_table(twin).properties().get("schema.name-mapping.default"))
    assert ours_mapping == java_mapping


@pytest.fixture
def tables(tmp_path: Path) -> tuple[icefloe.Catalog, Any]:
    from pyiceberg.catalog.sql import SqlCatalog as PyIcebergSqlCatalog

    uri = f"sqlite:///{tmp_path / 'catalog.db'}"
    ice = icefloe.load_catalog("shared", uri=uri, warehouse=str(tmp_path / "wh"))
    ice.create_namespace("db")
    return ice, PyIcebergSqlCatalog("shared", uri=uri, warehouse=f"file://{tmp_path / 'wh'}")


def test_add_files_matches_pyiceberg_add_files(tables: tuple[icefloe.Catalog, Any], tmp_path: Path) -> None:
    ice, py = tables
    files = [
        write(tmp_path / "in" / "a.parquet", rows(list(range(0, 5)), "a")),
        write(tmp_path / "in" / "b.parquet", rows(list(range(5, 12)), "b"), row_group_size=100),
        write(tmp_path / "in" / "n.parquet", rows([12, 13], None)),  # a null partition value
    ]
    ours = ice.create_table("db.ours", schema=SCHEMA, partition_spec=KIND)
    ice.create_table("db.theirs", schema=SCHEMA, partition_spec=KIND)
    ours.add_files(files)
    py.load_table("db.theirs").add_files(files)
    theirs = ice.load_table("db.theirs")
    a, b = data_files(ours), data_files(theirs)
    assert sorted(a) == sorted(b) == ["a.parquet", "b.parquet", "n.parquet"]
    for name in a:
        x, y = a[name], b[name]
        assert x.partition == y.partition, name
        assert x.record_count == y.record_count
        assert x.file_size_in_bytes == y.file_size_in_bytes
        assert x.value_counts == y.value_counts, name
        assert x.null_value_counts == y.null_value_counts, name
        assert x.lower_bounds == y.lower_bounds, name
        assert x.upper_bounds == y.upper_bounds, name
        assert x.column_sizes == y.column_sizes, name
    assert a["n.parquet"].partition == [None]
    assert all(len(f.value_counts) == len(SCHEMA) and f.lower_bounds for f in a.values())
    assert ours.properties["schema.name-mapping.default"]
    # PyIceberg reads icefloe's table, and the other way round, with the same rows.
    expected = pa.concat_tables([pq.read_table(f) for f in files])
    assert_same_rows(py.load_table("db.ours").scan().to_arrow(), expected, context="PyIceberg reads ours")
    assert_same_rows(ice.load_table("db.theirs").scan().to_arrow(), expected, context="icefloe reads theirs")


def test_add_files_computes_transformed_partitions_from_the_data(tmp_path: Path) -> None:
    cat = icefloe.load_catalog("local", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    spec = PartitionSpec(
        PartitionField(source_id=5, field_id=1000, transform="day", name="ts_day"),
        PartitionField(source_id=2, field_id=1001, transform="truncate[1]", name="kind_t"),
    )
    t = cat.create_table("db.t", schema=SCHEMA, partition_spec=spec)
    day = rows([0, 1, 2], "apple")  # ts within 2026-01-01, kind 'apple' -> 'a'
    t.add_files([write(tmp_path / "in" / "day.parquet", day)])
    (f,) = data_files(t).values()
    assert f.partition == [(dt.date(2026, 1, 1) - dt.date(1970, 1, 1)).days, "a"]
    # The same partition tuple as icefloe's writer gives the same rows.
    t2 = cat.create_table("db.t2", schema=SCHEMA, partition_spec=spec)
    t2.append(day)
    (g,) = data_files(t2).values()
    assert g.partition == f.partition


def test_add_files_refusals_leave_nothing_behind(tmp_path: Path) -> None:
    cat = icefloe.load_catalog("local", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA, partition_spec=KIND)
    good = write(tmp_path / "in" / "good.parquet", rows([1, 2], "a"))
    t.add_files([good])
    before = cat.load_table("db.t").metadata_location

    def refused(exc: type[Exception], match: str, paths: list[str], **kw: Any) -> None:
        with pytest.raises(exc, match=match):
            t.add_files(paths, **kw)
        assert cat.load_table("db.t").metadata_location == before
        for p in paths:
            assert not Path(p).exists() or Path(p).stat().st_size > 0

    two = write(tmp_path / "in" / "two.parquet", pa.concat_tables([rows([3], "a"), rows([4], "b")]))
    refused(ValidationError, r"two\.parquet holds rows of more than one partition", [two])
    assert Path(two).exists()

    foreign = rows([5], "a").cast(
        pa.schema(
            [f.with_metadata({b"PARQUET:field_id": str(100 + i).encode()}) for i, f in enumerate(SCHEMA)]
        )
    )
    other = write(tmp_path / "in" / "foreign.parquet", foreign)
    refused(ValidationError, r"foreign\.parquet carries Parquet field ids of another schema", [other])

    swapped = rows([6], "a").cast(
        pa.schema([f.with_metadata({b"PARQUET:field_id": str(6 - i).encode()}) for i, f in enumerate(SCHEMA)])
    )
    refused(
        ValidationError, "field ids of another schema", [write(tmp_path / "in" / "swapped.parquet", swapped)]
    )

    no_id = write(tmp_path / "in" / "noid.parquet", rows([7], "a").drop_columns(["id"]))
    refused(ValidationError, r"noid\.parquet.*missing required column 'id'", [no_id])
    bad_type = write(
        tmp_path / "in" / "badtype.parquet",
        rows([8], "a").set_column(0, pa.field("id", pa.string(), nullable=False), pa.array(["x"])),
    )
    refused(ValidationError, r"badtype\.parquet.*incompatible type for column 'id'", [bad_type])
    no_kind = write(tmp_path / "in" / "nokind.parquet", rows([9], "a").drop_columns(["kind"]))
    refused(ValidationError, r"nokind\.parquet has no column 'kind'", [no_kind])
    empty = write(tmp_path / "in" / "empty.parquet", SCHEMA.empty_table())
    refused(ValidationError, r"empty\.parquet holds no rows", [empty])

    # A null in the required `id` (the file's column is optional): committed, no reader could
    # read the table back; an append of the same rows is refused too.
    nullable = rows([11, 12], "a").cast(pa.schema([SCHEMA.field(0).with_nullable(True), *list(SCHEMA)[1:]]))
    with_null = nullable.set_column(0, nullable.schema.field(0), pa.array([11, None], pa.int64()))
    refused(
        ValidationError,
        r"withnull\.parquet: column 'id' \(field id 1\) is required in the table but holds 1 null",
        [write(tmp_path / "in" / "withnull.parquet", with_null)],
    )

    not_parquet = tmp_path / "in" / "notes.parquet"
    not_parquet.write_text("this is not parquet")
    refused(InvalidDataError, r"notes\.parquet", [str(not_parquet)])
    refused(NotFoundError, r"missing\.parquet", [str(tmp_path / "in" / "missing.parquet")])
    refused(ValidationError, "File paths must be unique", [str(not_parquet), str(not_parquet)])
    refused(ValidationError, "already referenced by table.*good.parquet", [good])

    with pytest.raises(ValidationError, match="found one string"):
        t.add_files(good)  # type: ignore[arg-type]
    # One bad file among good ones: nothing of the batch is committed.
    fresh = write(tmp_path / "in" / "fresh.parquet", rows([10], "b"))
    refused(ValidationError, "more than one partition", [fresh, two])
    # PyIceberg's check_duplicate_files=False registers a referenced file again.
    t.add_files([good], check_duplicate_files=False)
    assert cat.load_table("db.t").scan().count() == 4


def test_add_files_of_a_file_with_the_tables_own_field_ids(tmp_path: Path) -> None:
    """A data file icefloe wrote for a table of the same schema carries the same field ids:
    it is accepted by id, and gets exactly the metrics the writer gave it."""
    cat = icefloe.load_catalog("local", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    src = cat.create_table("db.src", schema=SCHEMA, partition_spec=KIND)
    data = rows(list(range(20)), "a")
    data = data.set_column(2, "v", pa.array([float("nan") if i == 4 else i * 1.5 for i in range(20)]))
    src.append(data)
    (written,) = data_files(src).values()
    dst = cat.create_table("db.dst", schema=SCHEMA, partition_spec=KIND)
    dst.add_files([written.file_path])
    (added,) = data_files(dst).values()
    for attr in (
        "partition",
        "record_count",
        "file_size_in_bytes",
        "column_sizes",
        "value_counts",
        "null_value_counts",
        "nan_value_counts",
        "lower_bounds",
        "upper_bounds",
        "split_offsets",
    ):
        assert getattr(added, attr) == getattr(written, attr), attr
    assert added.nan_value_counts[3] == 1
    assert len(added.value_counts) == len(SCHEMA) and len(added.upper_bounds) == len(SCHEMA)
    assert "schema.name-mapping.default" in dst.properties  # set as PyIceberg does
    assert_same_rows(dst.scan().to_arrow(), src.scan().to_arrow(), context="the added file's rows")


@pytest.mark.spark
@pytest.mark.interop
@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_row_level_changes_on_added_files_match_java(
    catalog: icefloe.Catalog, oracle: Any, table_name: str, tmp_path: Path, mode: str
) -> None:
    """DELETE and UPDATE that reach into added files (no Parquet field ids: read through the
    name mapping), in process and on Spark, against Java's twin of the same files. Before,
    every such change failed for want of the mapping."""
    import icefloe.spark

    src = tmp_path / "src"
    files = [
        write(src / "kind=a" / "part-0.parquet", rows(list(range(0, 7)), "a")),
        write(src / "kind=b" / "part-0.parquet", rows(list(range(7, 14)), "b")),
    ]
    props = {"format-version": "2", "write.delete.mode": mode, "write.update.mode": mode}
    ours = catalog.create_table(table_name, schema=SCHEMA, partition_spec=KIND, properties=props)
    ours.add_files(files)
    twin = table_name + "_java"
    tbl_props = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(twin)} ({JAVA_COLUMNS}) USING iceberg PARTITIONED BY (kind) "
        f"TBLPROPERTIES ({tbl_props})"
    )
    oracle.sql(
        f"CALL {oracle.catalog}.system.add_files(table => '{twin}', source_table => '`parquet`.`{src}`')"
    )

    def same(step: str) -> None:
        java = oracle.df(twin)
        assert_same_rows(oracle.df(table_name), java, context=f"{mode}, {step}: Java reads ours")
        assert_same_rows(catalog.load_table(table_name).scan().to_arrow(), java, context=f"{mode}, {step}")

    catalog.load_table(table_name).delete("id = 3")
    oracle.sql(f"DELETE FROM {oracle.qualified(twin)} WHERE id = 3")
    same("in-process delete")
    assert oracle.df(twin).count() == 13

    icefloe.spark.delete(oracle.spark, catalog.load_table(table_name), "id IN (8, 9)")
    oracle.sql(f"DELETE FROM {oracle.qualified(twin)} WHERE id IN (8, 9)")
    same("Spark delete")

    icefloe.spark.update(oracle.spark, catalog.load_table(table_name), "id >= 12", {"name": "'changed'"})
    oracle.sql(f"UPDATE {oracle.qualified(twin)} SET name = 'changed' WHERE id >= 12")
    same("Spark update")
    assert [r["name"] for r in oracle.df(twin).collect()].count("changed") == 2
    if mode == "merge-on-read":  # the added files were never rewritten: their deletes apply
        live = {Path(f["file_path"]).name for f in oracle.data_files(table_name)}
        assert "part-0.parquet" in live


@pytest.mark.parametrize("unit", ["ms", "ns"])
def test_add_files_of_milli_and_nanosecond_timestamps_keep_true_bounds(tmp_path: Path, unit: str) -> None:
    """A file whose `ts` column is in milli- or nanoseconds: its rows read as microseconds, and
    its bounds are converted the same way (they were taken as microseconds: a millisecond
    file's lower bound read as 1970-01-20, a filtered read missed its rows and a delete that
    matched none of them removed the file)."""
    cat = icefloe.load_catalog("local", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    t = cat.create_table("db.t", schema=SCHEMA)
    data = rows([1, 30], "a")
    data = data.set_column(
        4, pa.field("ts", pa.timestamp(unit, tz="UTC")), data.column("ts").cast(pa.timestamp(unit, tz="UTC"))
    )
    kw: dict[str, Any] = {"coerce_timestamps": "ms"} if unit == "ms" else {"version": "2.6"}
    t.add_files([write(tmp_path / "in" / f"{unit}.parquet", data, **kw)])
    assert sorted(
        t.scan(row_filter="ts >= '2026-01-02T00:00:00+00:00'").to_arrow().column("id").to_pylist()
    ) == [30]
    assert sorted(
        t.scan(row_filter="ts < '2026-01-01T02:00:00+00:00'").to_arrow().column("id").to_pylist()
    ) == [1]
    t.delete("ts < '2025-12-31T00:00:00+00:00'")  # matches no row
    assert sorted(cat.load_table("db.t").scan().to_arrow().column("id").to_pylist()) == [1, 30]
    (f,) = t.inspect.data_files().to_pylist()
    lower = dict(f["lower_bounds"])[5]
    assert (
        int.from_bytes(lower, "little", signed=True)
        == int(dt.datetime(2026, 1, 1, 1, tzinfo=UTC).timestamp()) * 10**6
    )


def _evolved_twins(catalog: icefloe.Catalog, oracle: Any, table_name: str, tmp_path: Path) -> str:
    """icefloe's table and Java's twin, each given one file without field ids (which sets the
    name mapping) and then evolved alike: `name` renamed to `label` (the mapping keeps `name`
    as an alias of field 6), `v` (field 3) and `d` (field 4) dropped."""
    first = tmp_path / "first"
    write(first / "first.parquet", rows([1, 2], "a"))
    catalog.create_table(table_name, schema=SCHEMA).add_files([str(first / "first.parquet")])
    with catalog.load_table(table_name).update_schema() as u:
        u.rename_column("name", "label")
        u.delete_column("v")
        u.delete_column("d")
    twin = table_name + "_java"
    q = oracle.qualified(twin)
    oracle.sql(f"CREATE TABLE {q} ({JAVA_COLUMNS}) USING iceberg")
    _java_add_files(oracle, twin, first)
    oracle.sql(f"ALTER TABLE {q} RENAME COLUMN name TO label")
    oracle.sql(f"ALTER TABLE {q} DROP COLUMNS (v, d)")
    mapping = json.loads(catalog.load_table(table_name).properties["schema.name-mapping.default"])
    assert mapping == json.loads(oracle.java_table(twin).properties().get("schema.name-mapping.default"))
    assert {"field-id": 6, "names": ["name", "label"]} in mapping
    return twin


def _java_add_files(oracle: Any, twin: str, folder: Path) -> None:
    oracle.sql(
        f"CALL {oracle.catalog}.system.add_files(table => '{twin}', source_table => '`parquet`.`{folder}`')"
    )


def _assert_twins_agree(catalog: icefloe.Catalog, oracle: Any, table_name: str, twin: str) -> None:
    """Java reads both tables alike (and icefloe reads its own so), and the data files of both
    carry the same metrics: in `files` (by field id, the dropped fields' ids included) and in
    `readable_metrics` (by current column)."""
    java = oracle.df(twin)
    assert_same_rows(oracle.df(table_name), java, context="Java reads icefloe's table")
    ours = catalog.load_table(table_name).scan().to_arrow()
    assert_same_rows(ours, java, context="icefloe reads its table")
    mine = {Path(f["file_path"]).name: f for f in oracle.data_files(table_name)}
    theirs = {Path(f["file_path"]).name: f for f in oracle.data_files(twin)}
    assert sorted(mine) == sorted(theirs)
    for name, j in theirs.items():
        m = mine[name]
        for col in (
            "record_count",
            "file_size_in_bytes",
            "column_sizes",
            "value_counts",
            "null_value_counts",
            "lower_bounds",
            "upper_bounds",
        ):
            assert m[col] == j[col], f"{name}: {col} differs: icefloe {m[col]!r}, Java {j[col]!r}"
        # Java counts no NaNs in imported files; icefloe reads float columns (the dropped `v`).
        assert j["nan_value_counts"] == {}
        if name == "new.parquet":
            assert sorted(j["value_counts"]) == [1, 2, 5, 6] and not m["nan_value_counts"]
        else:
            assert 4 in j["lower_bounds"] and 3 in j["value_counts"], "Java keeps the dropped fields' metrics"
            assert m["nan_value_counts"] == {3: 0}
        assert m["readable_metrics"] == j["readable_metrics"], name


@pytest.mark.spark
@pytest.mark.interop
def test_add_files_maps_old_names_through_name_mapping_aliases_like_java(
    catalog: icefloe.Catalog, oracle: Any, table_name: str, tmp_path: Path
) -> None:
    """A file without field ids written before the rename: its `name` column is field 6
    through the mapping's alias, and its `v` / `d` columns the dropped fields 3 / 4 (the
    mapping keeps them), as Java's add_files procedure maps them. icefloe refused the file
    (unknown columns 'd', 'name'). A file holding both `name` and `label` gives field 6 twice:
    Java fails on it, icefloe refuses it naming both columns and the id."""
    twin = _evolved_twins(catalog, oracle, table_name, tmp_path)
    old = tmp_path / "old"
    write(old / "old.parquet", rows([3, 4, 5], "b"))
    catalog.load_table(table_name).add_files([str(old / "old.parquet")])
    _java_add_files(oracle, twin, old)
    # A file of the current schema lacks the dropped `v`: no metrics for it either.
    new = tmp_path / "new"
    write(
        new / "new.parquet",
        rows([6], "c").drop_columns(["v", "d"]).rename_columns(["id", "kind", "ts", "label"]),
    )
    catalog.load_table(table_name).add_files([str(new / "new.parquet")])
    _java_add_files(oracle, twin, new)
    _assert_twins_agree(catalog, oracle, table_name, twin)
    assert sorted(r["label"] for r in oracle.df(table_name).collect()) == [
        f"name-{i:04d}-" + "x" * i for i in range(1, 7)
    ]

    both = tmp_path / "both"
    write(both / "both.parquet", rows([6], "c").append_column("label", pa.array(["y"])))
    with pytest.raises(Exception, match="Multiple entries with same value: label=6 and name=6"):
        _java_add_files(oracle, twin, both)
    before = catalog.load_table(table_name).metadata_location
    with pytest.raises(
        ValidationError,
        match=r"both\.parquet has more than one column for a field \(by the table's name mapping\): "
        r"columns 'name' and 'label' both have field id 6",
    ):
        catalog.load_table(table_name).add_files([str(both / "both.parquet")])
    assert catalog.load_table(table_name).metadata_location == before
    _assert_twins_agree(catalog, oracle, table_name, twin)


def _with_ids(data: pa.Table, ids: list[int]) -> pa.Table:
    return data.cast(
        pa.schema([f.with_metadata({b"PARQUET:field_id": str(i).encode()}) for f, i in zip(data.schema, ids)])
    )


@pytest.mark.spark
@pytest.mark.interop
def test_add_files_of_a_file_with_older_field_ids_like_java(
    catalog: icefloe.Catalog, oracle: Any, table_name: str, tmp_path: Path
) -> None:
    """A file carrying the field ids of the table's first schema: field 6 still named `name`
    (renamed since) is read as `label`, and the dropped fields 3 (`v`) and 4 (`d`) are
    ignored by reads but keep their metrics, as Java's add_files procedure does. icefloe
    refused the file (ids 'of another schema'). A file repeating a field id: Java fails on it,
    icefloe refuses it naming both columns and the id; ids no schema of the table has are
    still refused."""
    twin = _evolved_twins(catalog, oracle, table_name, tmp_path)
    older = tmp_path / "older"
    write(older / "older.parquet", _with_ids(rows([3, 4, 5], "b"), [1, 2, 3, 4, 5, 6]))
    catalog.load_table(table_name).add_files([str(older / "older.parquet")])
    _java_add_files(oracle, twin, older)
    _assert_twins_agree(catalog, oracle, table_name, twin)
    assert sorted(r["label"] for r in oracle.df(table_name).collect()) == [
        f"name-{i:04d}-" + "x" * i for i in range(1, 6)
    ]

    before = catalog.load_table(table_name).metadata_location
    twice = tmp_path / "twice"
    data = rows([6], "c").append_column("label", pa.array(["y"]))
    write(twice / "twice.parquet", _with_ids(data, [1, 2, 3, 4, 5, 6, 6]))
    with pytest.raises(Exception, match="Multiple entries with same value: label=6 and name=6"):
        _java_add_files(oracle, twin, twice)
    with pytest.raises(
        ValidationError,
        match=r"twice\.parquet has more than one column for a field \(by its Parquet field ids\): "
        r"columns 'name' and 'label' both have field id 6",
    ):
        catalog.load_table(table_name).add_files([str(twice / "twice.parquet")])
    foreign = tmp_path / "foreign.parquet"
    write(foreign, _with_ids(rows([7], "c"), [1, 2, 3, 4, 5, 7]))
    with pytest.raises(
        ValidationError,
        match=r"foreign\.parquet carries Parquet field ids of another schema: "
        r"column 'name' has field id 7, which no schema of the table has",
    ):
        catalog.load_table(table_name).add_files([str(foreign)])
    assert catalog.load_table(table_name).metadata_location == before
    _assert_twins_agree(catalog, oracle, table_name, twin)
