"""The interop matrix again, with the warehouse on the S3 server (moto, its own process).

One Postgres database holds the catalog of both engines: icefloe's SqlCatalog and Iceberg
Java's JdbcCatalog, whose FileIO is `iceberg-aws-bundle`'s S3FileIO pointed at the same
server (the `java_s3` fixture of support/s3_catalogs.py). For each partition transform
(identity, bucket, day):

- icefloe writes a table of many types (nested ones, NaN, -0.0, extreme values, escaping),
  in process and on Spark, then deletes rows merge-on-read (position deletes, in process and
  on Spark) and upserts (equality deletes, in process and on Spark). After every step Iceberg
  Java and PyIceberg (its own pyarrow FileIO on the same server, from the metadata file) read
  exactly the rows of a model kept here, and so does icefloe.
- Java writes a table on S3 and changes it with merge-on-read DELETE, UPDATE and MERGE INTO
  (position deletes); icefloe reads the same rows as Java after every step, in process and on
  Spark.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest
from icefloe.catalog import SqlCatalog
from icefloe.partitioning import PartitionField, PartitionSpec
from support.all_types import ARROW_SCHEMA, BATCHES, _row, arrow_batch, spark_df
from support.oracle import assert_same_rows
from support.servers.s3 import S3Server

pytestmark = [pytest.mark.spark, pytest.mark.interop]

UTC = dt.timezone.utc
MOR = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
MOR_SQL = ", ".join(f"'{k}'='{v}'" for k, v in MOR.items())
COLUMNS = ", ".join(f"`{n}`" for n in ARROW_SCHEMA.names)
# Field ids of ARROW_SCHEMA's top-level columns (assigned in order): id 1, category 2, ts 11.
# partitioning -> (spec field, Spark SQL clause, the partition source column)
PARTITIONINGS: dict[str, tuple[PartitionField, str, str]] = {
    "identity": (PartitionField(2, 1000, "identity", "category"), "category", "category"),
    "bucket": (PartitionField(1, 1000, "bucket[4]", "id_bucket"), "bucket(4, id)", "id"),
    "day": (PartitionField(11, 1000, "day", "ts_day"), "days(ts)", "ts"),
}


def generated(ids: range, amount_offset: float = 0.0) -> list[dict[str, Any]]:
    """Plain rows (the typed edge cases are in BATCHES) to have something to delete."""
    out = []
    for i in ids:
        out.append(
            _row(
                i,
                category="abc"[i % 3],
                b=i % 2 == 0,
                i=i,
                l=i * 1_000_003,
                f=i / 4,
                d=i * 0.5 + amount_offset,
                dec9=decimal.Decimal(i).scaleb(-2),
                dt=dt.date(2024, 1, 1) + dt.timedelta(days=i % 9),
                ts=dt.datetime(2024, 3, 1, tzinfo=UTC) + dt.timedelta(days=i % 7, seconds=i),
                ts_ntz=dt.datetime(2024, 3, 1) + dt.timedelta(minutes=i),
                name=f"row {i}",
                st={"a": i, "b": f"s{i}", "inner": {"x": i / 8}},
                arr=[i, i + 1],
                m={"k": i},
            )
        )
    return out


def catalogs(spark: Any, java_s3: tuple[SqlCatalog, str]) -> tuple[SqlCatalog, str]:
    """The fixture's catalogs, with Java's table cache off: icefloe commits behind Spark's
    back, and a cached Java table would be stale."""
    cat, java = java_s3
    spark.conf.set(f"spark.sql.catalog.{java}.cache-enabled", "false")
    return cat, java


def model_table(model: dict[int, dict[str, Any]]) -> pa.Table:
    return arrow_batch(sorted(model.values(), key=lambda r: r["id"]))


def pyiceberg_rows(metadata_location: str, s3: S3Server, snapshot_id: int | None = None) -> pa.Table | None:
    """The table read by PyIceberg through its pyarrow FileIO (from the metadata file), or
    None when PyIceberg cannot read equality deletes (it says so in a ValueError)."""
    from pyiceberg.table import StaticTable

    props = s3.properties()
    table = StaticTable.from_metadata(metadata_location, properties=props)
    try:
        return table.scan(snapshot_id=snapshot_id).to_arrow()
    except (ValueError, NotImplementedError) as e:
        if "equality deletes" in str(e):
            return None
        raise


def check_all_readers(
    spark: Any, java: str, table_name: str, cat: SqlCatalog, s3: S3Server, model: dict[int, Any], step: str
) -> bool:
    """Java, PyIceberg and icefloe read the model's rows; False when PyIceberg could not
    read the table (equality deletes)."""
    expected = model_table(model)
    t = cat.load_table(table_name)
    java_rows = spark.sql(f"SELECT {COLUMNS} FROM {java}.{table_name}")
    assert_same_rows(java_rows, expected, context=f"Java (S3FileIO) reads icefloe's table after {step}")
    assert_same_rows(t.scan().to_arrow(), expected, context=f"icefloe after {step}")
    py = pyiceberg_rows(t.metadata_location, s3)
    if py is not None:
        assert_same_rows(
            py.select(ARROW_SCHEMA.names), as_pyiceberg_reads(model), context=f"PyIceberg after {step}"
        )
    return py is not None


def as_pyiceberg_reads(model: dict[int, dict[str, Any]]) -> pa.Table:
    """The model as PyIceberg (0.12) returns it: a null list<struct> comes back as an empty
    list (apache/iceberg-python#3833, open: its projection rebuilds the list without the
    validity bitmap). pyarrow itself reads our files' nulls as nulls."""
    return model_table(
        {k: dict(r, arr_st=[] if r["arr_st"] is None else r["arr_st"]) for k, r in model.items()}
    )


@pytest.mark.slow
@pytest.mark.parametrize("partitioning", list(PARTITIONINGS))
def test_java_and_pyiceberg_read_icefloe_s3_tables(
    spark: Any, s3: S3Server, java_s3: tuple[SqlCatalog, str], partitioning: str
) -> None:
    import icefloe.spark as ispark

    cat, java = catalogs(spark, java_s3)
    field, _clause, source = PARTITIONINGS[partitioning]
    name = f"db.w_{partitioning}"
    t = cat.create_table(name, schema=ARROW_SCHEMA, partition_spec=PartitionSpec(field), properties=MOR)
    model: dict[int, dict[str, Any]] = {}

    # writes: in process, on Spark, in process
    b1 = BATCHES[0] + generated(range(100, 400))
    t.append(arrow_batch(b1))
    b2 = BATCHES[1] + generated(range(400, 700))
    ispark.append(spark_df(spark, b2), cat.load_table(name))
    cat.load_table(name).append(arrow_batch(BATCHES[2]))
    model.update({r["id"]: r for r in b1 + b2 + BATCHES[2]})
    check_all_readers(spark, java, name, cat, s3, model, "appends")

    # merge-on-read deletes: position-delete files, in process and on Spark
    cat.load_table(name).delete("id >= 150 and id < 200")
    ispark.delete(spark, cat.load_table(name), "i >= 600 and i < 650")
    model = {
        k: r for k, r in model.items() if not (150 <= k < 200 or (r["i"] is not None and 600 <= r["i"] < 650))
    }
    summary = cat.load_table(name).current_snapshot().summary
    assert int(summary["total-position-deletes"]) > 0, summary
    check_all_readers(spark, java, name, cat, s3, model, "merge-on-read deletes")
    before_upserts = cat.load_table(name).current_snapshot().snapshot_id
    model_before = dict(model)

    # upserts: equality deletes on the join columns (which hold every partition source)
    join_cols = ["id"] if source == "id" else ["id", source]
    up1 = generated(range(120, 130), amount_offset=1000.0)
    cat.load_table(name).upsert(arrow_batch(up1), join_cols=join_cols)
    up2 = generated(range(640, 660), amount_offset=2000.0)  # 640..649 were deleted: inserts
    ispark.upsert(spark_df(spark, up2), cat.load_table(name), join_cols=join_cols)
    model.update({r["id"]: r for r in up1 + up2})
    t = cat.load_table(name)
    eq = spark.sql(f"SELECT equality_ids FROM {java}.{name}.delete_files WHERE content = 2").collect()
    assert len(eq) >= 2, eq
    ids = sorted(ARROW_SCHEMA.names.index(c) + 1 for c in join_cols)
    assert all(sorted(r["equality_ids"]) == ids for r in eq), eq
    check_all_readers(spark, java, name, cat, s3, model, "upserts")
    # PyIceberg reads no equality deletes (yet): it reads the table as it was before them.
    py = pyiceberg_rows(t.metadata_location, s3, snapshot_id=before_upserts)
    assert py is not None
    java_before = spark.sql(f"SELECT {COLUMNS} FROM {java}.{name} VERSION AS OF {before_upserts}")
    assert_same_rows(java_before, model_table(model_before), context="Java at the snapshot before upserts")
    assert_same_rows(
        py.select(ARROW_SCHEMA.names), as_pyiceberg_reads(model_before), context="PyIceberg before upserts"
    )
    # And icefloe on Spark reads what everyone reads.
    assert_same_rows(ispark.read(spark, t), model_table(model), context="icefloe.spark.read")


JAVA_SOURCE = "s3_merge_source"


@pytest.mark.parametrize("partitioning", list(PARTITIONINGS))
def test_icefloe_reads_java_s3_tables_with_position_deletes(
    spark: Any, java_s3: tuple[SqlCatalog, str], partitioning: str
) -> None:
    """Position-delete files from Java's merge-on-read DELETE, UPDATE and MERGE INTO (v2;
    icefloe does not read v3 deletion vectors yet: NotSupportedError)."""
    import icefloe.spark as ispark
    from support.all_types import SPARK_DDL

    cat, java = catalogs(spark, java_s3)
    _field, clause, _source = PARTITIONINGS[partitioning]
    name = f"db.j_{partitioning}"
    qualified = f"{java}.{name}"
    spark.sql(
        f"CREATE TABLE {qualified} ({SPARK_DDL}) USING iceberg PARTITIONED BY ({clause}) "
        f"TBLPROPERTIES ({MOR_SQL})"
    )
    rows = [r for batch in BATCHES for r in batch] + generated(range(100, 600))
    spark_df(spark, rows).coalesce(2).writeTo(qualified).append()

    def same(step: str) -> None:
        expected = spark.sql(f"SELECT {COLUMNS} FROM {qualified}")
        got = cat.load_table(name).scan().to_arrow()
        assert_same_rows(
            got.select(ARROW_SCHEMA.names), expected, context=f"icefloe reads Java's table after {step}"
        )

    same("insert")
    spark.sql(f"DELETE FROM {qualified} WHERE id % 7 = 0 OR (id >= 200 AND id < 260)")
    same("DELETE")
    spark.sql(f"UPDATE {qualified} SET d = d * 10, name = concat(name, ' updated') WHERE id % 5 = 1")
    same("UPDATE")
    spark_df(spark, generated(range(550, 650), amount_offset=-5000.0)).createOrReplaceTempView(JAVA_SOURCE)
    spark.sql(
        f"MERGE INTO {qualified} t USING {JAVA_SOURCE} s ON t.id = s.id "
        "WHEN MATCHED AND s.id % 2 = 0 THEN UPDATE SET t.d = s.d, t.arr = s.arr "
        "WHEN MATCHED THEN DELETE "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    same("MERGE INTO")
    deletes = spark.sql(f"SELECT content, file_format FROM {qualified}.delete_files").collect()
    assert deletes and {r["content"] for r in deletes} == {1}, deletes  # position deletes only
    assert {r["file_format"] for r in deletes} == {"PARQUET"}, deletes
    ops = [r["operation"] for r in spark.sql(f"SELECT operation FROM {qualified}.snapshots").collect()]
    assert ops == ["append", "delete", "overwrite", "overwrite"], ops  # DELETE, UPDATE, MERGE: row deltas
    expected = spark.sql(f"SELECT {COLUMNS} FROM {qualified}")
    got = ispark.read(spark, cat.load_table(name), selected_fields=ARROW_SCHEMA.names)
    assert_same_rows(got, expected, context="icefloe.spark.read of Java's table")
    # icefloe reads with a filter too (pruning by partition and by metrics on S3).
    filtered = cat.load_table(name).scan(row_filter="id >= 500 and id < 600").to_arrow()
    assert_same_rows(
        filtered.select(ARROW_SCHEMA.names),
        spark.sql(f"SELECT {COLUMNS} FROM {qualified} WHERE id >= 500 AND id < 600"),
        context="filtered",
    )


def test_icefloe_reads_java_s3_files_outside_the_current_table_paths(
    spark: Any, java_s3: tuple[SqlCatalog, str], prefix: str
) -> None:
    """Java's FileIO is per table: it reads every file a table references, also outside its
    current location and write paths. Here the files live under an earlier `write.data.path`,
    under the location before `SET LOCATION`, and under `s3a://` spellings of the same bucket,
    all outside the catalog's warehouse: icefloe reads them in process and on Spark."""
    import icefloe.spark as ispark

    cat, java = catalogs(spark, java_s3)
    qualified = f"{java}.db.moves"
    s3a = prefix.replace("s3://", "s3a://", 1)
    spark.sql(
        f"CREATE TABLE {qualified} (id bigint) USING iceberg LOCATION '{s3a}/first' "
        f"TBLPROPERTIES ('write.data.path'='{prefix}/elsewhere/a')"
    )
    spark.sql(f"INSERT INTO {qualified} VALUES (1)")
    spark.sql(f"ALTER TABLE {qualified} SET TBLPROPERTIES ('write.data.path'='{s3a}/elsewhere/b')")
    spark.sql(f"INSERT INTO {qualified} VALUES (2)")
    spark.sql(f"ALTER TABLE {qualified} UNSET TBLPROPERTIES ('write.data.path')")
    spark.sql(f"INSERT INTO {qualified} VALUES (3)")
    spark.sql(f"ALTER TABLE {qualified} SET LOCATION '{prefix}/moved'")
    spark.sql(f"INSERT INTO {qualified} VALUES (4)")
    paths = {r[0].rsplit("/", 2)[0] for r in spark.sql(f"SELECT file_path FROM {qualified}.files").collect()}
    assert len(paths) == 4, paths  # four places, none under the warehouse

    table = cat.load_table("db.moves")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]
    assert sorted(r.id for r in ispark.read(spark, table).collect()) == [1, 2, 3, 4]
