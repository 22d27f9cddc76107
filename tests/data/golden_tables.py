"""The golden tables: a local Spark session with the Iceberg runtime, and the SQL that
creates each table before it is dumped into golden/."""

# ruff: noqa: E501  (SQL and descriptions are kept on one line each)
from __future__ import annotations

import datetime as dt
import decimal
import json
from typing import Any

from golden_common import GOLDEN, JAR, jiter, note, write_json
from golden_dump import Dumper


def make_spark(warehouse: str) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-golden")
        .config("spark.jars", str(JAR))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.g", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.g.type", "hadoop")
        .config("spark.sql.catalog.g.warehouse", "file://" + warehouse)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def json_value(v: Any) -> Any:
    """A typed JSON rendering of a Spark Row value (as Iceberg Java returned it)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return [[json_value(k), json_value(x)] for k, x in v.items()]
    if isinstance(v, list):
        return [json_value(x) for x in v]
    if hasattr(v, "asDict"):
        return {k: json_value(x) for k, x in v.asDict(recursive=False).items()}
    raise TypeError(type(v))


def build_tables(spark: Any, d: Dumper) -> None:
    sql = spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS g.db")

    # ---- v1 / v2 partitioned (identity on string + day(ts)), two snapshots each
    for fv in (1, 2):
        t = f"g.db.v{fv}_part"
        sql(
            f"CREATE TABLE {t} (id bigint, category string, ts timestamp, value double) USING iceberg "
            f"PARTITIONED BY (category, days(ts)) TBLPROPERTIES ('format-version'='{fv}')"
        )
        sql(
            f"INSERT INTO {t} VALUES (1, 'a', TIMESTAMP'2024-01-01 10:00:00', 1.5), "
            f"(2, 'a', TIMESTAMP'2024-01-01 23:59:59', CAST('NaN' AS double)), "
            f"(3, 'b', TIMESTAMP'2024-01-02 00:00:00', -0.0), (4, null, null, null)"
        )
        sql(
            f"INSERT INTO {t} VALUES (5, 'b', TIMESTAMP'1969-12-31 23:00:00', 2.5), (6, 'c', TIMESTAMP'2024-02-29 12:00:00', 3.0)"
        )
        d.dump_table(
            f"db.v{fv}_part",
            f"v{fv}",
            f"Format v{fv} table `CREATE TABLE (id bigint, category string, ts timestamp, value double) "
            "PARTITIONED BY (category, days(ts))`; INSERT 1 = 4 rows (ids 1-4: partitions a/2024-01-01 x2, "
            "b/2024-01-02, null/null; value has NaN and -0.0), INSERT 2 = 2 rows (ids 5, 6: b/1969-12-31, c/2024-02-29).",
        )

    # ---- v2 with every transform, a sort order, a branch and a tag
    t = "g.db.v2_transforms"
    sql(
        f"CREATE TABLE {t} (id bigint, category string, s string, n int, d date, ts_ntz timestamp_ntz, "
        "ts timestamp, ts2 timestamp) USING iceberg "
        "PARTITIONED BY (category, bucket(16, id), truncate(4, s), truncate(10, n), years(d), months(ts_ntz), "
        "days(ts), hours(ts2)) TBLPROPERTIES ('format-version'='2')"
    )
    sql(
        f"ALTER TABLE {t} WRITE ORDERED BY category ASC NULLS FIRST, id DESC NULLS LAST, days(ts) DESC NULLS LAST"
    )
    sql(
        f"INSERT INTO {t} VALUES (1, 'x', 'iceberg', 17, DATE'2017-11-16', TIMESTAMP_NTZ'2017-11-16 22:31:08', "
        "TIMESTAMP'2017-11-16 22:31:08', TIMESTAMP'2017-11-16 22:31:08'), "
        "(2, 'y', 'héllo wörld', -1, DATE'1969-12-31', TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', "
        "TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP'1969-12-31 23:59:59.999999')"
    )
    snap1 = spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()[0][0]
    sql(f"INSERT INTO {t} VALUES (3, null, null, null, null, null, null, null)")
    sql(f"ALTER TABLE {t} CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    sql(f"ALTER TABLE {t} CREATE TAG first_load AS OF VERSION {snap1} RETAIN 365 DAYS")
    d.dump_table(
        "db.v2_transforms",
        "v2_all_transforms",
        "Format v2 table (id bigint, category string, s string, n int, d date, ts_ntz timestamp_ntz, "
        "ts timestamp, ts2 timestamp) PARTITIONED BY (category, bucket(16, id), truncate(4, s), truncate(10, n), "
        "years(d), months(ts_ntz), days(ts), hours(ts2)); `WRITE ORDERED BY category ASC NULLS FIRST, id DESC "
        "NULLS LAST, days(ts) DESC NULLS LAST` (sort order 1, the data files carry sort_order_id 1); INSERT 1 = 2 rows "
        "(2017-11-16 22:31:08 and 1969-12-31 23:59:59.999999 values, non-ASCII string), INSERT 2 = 1 row with "
        "all partition sources null; then `CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS` "
        "(at the current snapshot) and `CREATE TAG first_load AS OF VERSION <snapshot 1> RETAIN 365 DAYS`.",
        metadata_name="v2_all_transforms_metadata.json",
    )

    # ---- schema evolution
    t = "g.db.v2_evolution"
    sql(
        f"CREATE TABLE {t} (id int, name string, price float) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    sql(f"INSERT INTO {t} VALUES (1, 'one', 1.5), (2, 'two', null)")
    sql(f"ALTER TABLE {t} ADD COLUMN note string")
    sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")
    sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    sql(f"ALTER TABLE {t} ALTER COLUMN price TYPE double")
    sql(f"INSERT INTO {t} VALUES (3000000000, 'three', 2.25, 'added later')")
    d.dump_table(
        "db.v2_evolution",
        "v2_schema_evolution",
        "Format v2 table created as (id int, name string, price float), INSERT 2 rows, then `ADD COLUMN note "
        "string`, `RENAME COLUMN name TO full_name`, `ALTER COLUMN id TYPE bigint`, `ALTER COLUMN price TYPE "
        "double` (one schema per change), then INSERT 1 row (id 3000000000). The first data file has "
        "int/float bounds for the promoted columns (4-byte bounds read as long/double).",
        metadata_name="v2_schema_evolution_metadata.json",
    )

    # ---- merge-on-read position deletes
    t = "g.db.v2_deletes"
    sql(
        f"CREATE TABLE {t} (id bigint, category string, payload string) USING iceberg PARTITIONED BY (category) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
    )
    sql(
        f"INSERT INTO {t} VALUES (1, 'a', 'p1'), (2, 'a', 'p2'), (3, 'a', 'p3'), (4, 'b', 'p4'), (5, 'b', 'p5'), "
        "(6, 'b', 'p6')"
    )
    sql(f"DELETE FROM {t} WHERE id IN (2, 5)")
    d.dump_table(
        "db.v2_deletes",
        "v2_deletes",
        "Format v2 table (id bigint, category string, payload string) PARTITIONED BY (category) with "
        "'write.delete.mode'='merge-on-read'; INSERT 6 rows (ids 1-3 in a, 4-6 in b), then `DELETE WHERE id IN "
        "(2, 5)` (snapshot 2, operation `delete`) which writes one position-delete file per partition "
        "(file-scoped: referenced_data_file is null but the file_path bounds 2147483546 are equal) and a "
        "delete manifest (content=1). Rows after the delete: `v2_deletes_rows.json`.",
        metadata_name="v2_deletes_metadata.json",
    )
    table = d.table("db.v2_deletes")
    scan_rows = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {t}").collect())
    for k, m in enumerate(
        [m for m in table.currentSnapshot().allManifests(table.io()) if m.content().id() == 1], start=1
    ):
        reader = d.jvm.org.apache.iceberg.ManifestFiles.readDeleteManifest(m, table.io(), table.specs())
        try:
            for j, f in enumerate(jiter(reader), start=1):
                name = f"v2_deletes_position_delete_{k}_{j}.parquet"
                d.copy(f.location(), name)
                note(
                    name,
                    f"position-delete Parquet file written by Java for `DELETE WHERE id IN (2, 5)`, partition "
                    f"{f.partition().toString()}, {f.recordCount()} row(s) (file_path, pos) pointing at "
                    f"{d.rel(f.referencedDataFile()) or 'the data file in its bounds'}.",
                )
        finally:
            reader.close()
    write_json(
        GOLDEN / "v2_deletes_rows.json",
        {
            "note": "rows Java returns for the current snapshot (after deletes), sorted",
            "rows": [list(r) for r in scan_rows],
        },
    )
    note("v2_deletes_rows.json", "rows Iceberg Java returns for `v2_deletes` after the DELETE.")

    # ---- Parquet data file with every type Spark can write
    t = "g.db.all_types"
    sql(
        f"CREATE TABLE {t} (b boolean, i int, l bigint, f float, d double, dec9 decimal(9,2), "
        "dec38 decimal(38,10), dt date, ts timestamp, ts_ntz timestamp_ntz, s string, bin binary, "
        "st struct<a: int, b: string, inner: struct<x: double>>, arr array<int>, m map<string, int>, "
        "arr_st array<struct<x: int, y: string>>, m_arr map<int, array<string>>) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(
        f"""INSERT INTO {t} SELECT /*+ COALESCE(1) */ * FROM VALUES
        (true, 1, 1, CAST(1.5 AS float), 2.5, CAST(14.20 AS decimal(9,2)),
         CAST('12345678901234567890.0123456789' AS decimal(38,10)), DATE'2024-02-29',
         TIMESTAMP'2024-02-29 12:34:56.789012', TIMESTAMP_NTZ'2024-02-29 12:34:56.789012', 'héllo wörld 日本語',
         X'00010203', named_struct('a', 1, 'b', 'x', 'inner', named_struct('x', 1.0D)), array(1, 2, 3),
         map('k1', 1, 'k2', 2), array(named_struct('x', 1, 'y', 'a')), map(1, array('a', 'b'))),
        (false, -2147483648, -9223372036854775808, CAST('NaN' AS float), CAST('NaN' AS double),
         CAST(-9999999.99 AS decimal(9,2)), CAST('-9999999999999999999999999999.9999999999' AS decimal(38,10)),
         DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP_NTZ'1900-01-01 00:00:00',
         '', X'', named_struct('a', null, 'b', null, 'inner', null), array(), map(),
         array(named_struct('x', null, 'y', null), null), map(2, array(), 3, null)),
        (null, 2147483647, 9223372036854775807, CAST('-0.0' AS float), CAST('-0.0' AS double),
         CAST(0 AS decimal(9,2)), CAST(0 AS decimal(38,10)), DATE'1900-01-01', TIMESTAMP'1900-01-01 00:00:00',
         TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', '😀 emoji and a string longer than sixteen chars', X'FF',
         null, array(null, 4), map('k', null), null, null),
        (null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
        (true, 0, 0, CAST('Infinity' AS float), CAST('-Infinity' AS double), CAST(0.01 AS decimal(9,2)),
         CAST(1 AS decimal(38,10)), DATE'1970-01-01', TIMESTAMP'1970-01-01 00:00:00',
         TIMESTAMP_NTZ'1970-01-01 00:00:00', 'a', X'00', named_struct('a', 5, 'b', 'y', 'inner', named_struct('x', CAST('NaN' AS double))),
         array(5), map('z', 26), array(), map())
        AS v(b, i, l, f, d, dec9, dec38, dt, ts, ts_ntz, s, bin, st, arr, m, arr_st, m_arr)"""
    )
    table = d.table("db.all_types")
    files = list(jiter(table.currentSnapshot().addedDataFiles(table.io())))
    assert len(files) == 1, f"expected one data file, got {len(files)}"
    d.dump_table(
        "db.all_types",
        "all_types",
        "Format v2 unpartitioned table with every primitive Spark can write plus struct/array/map nesting "
        "(see all_types_rows.json); one INSERT of 5 rows written as one Parquet file (all_types.parquet).",
        metadata_name="all_types_metadata.json",
    )
    d.copy(files[0].location(), "all_types.parquet")
    rows = spark.sql(f"SELECT * FROM {t}").collect()
    cols = spark.table(t).columns
    write_json(
        GOLDEN / "all_types_rows.json",
        {
            "note": (
                "rows of all_types.parquet as Iceberg Java returns them (session TZ UTC), in file order. "
                "floats as Python repr (NaN, -0.0, inf); decimals as text; timestamps as ISO UTC "
                "without offset (both ts=timestamptz and ts_ntz=timestamp); binary as hex; maps as "
                "[[key, value], ...]; structs as objects"
            ),
            "schema": json.loads(d.jvm.org.apache.iceberg.SchemaParser.toJson(table.schema())),
            "columns": cols,
            "rows": [[json_value(v) for v in r] for r in rows],
        },
    )
    note(
        "all_types.parquet",
        "Parquet data file written by Iceberg Java (Spark INSERT) for `all_types` (Parquet field ids on every "
        "node incl. list elements and map keys/values): b boolean, i int, l bigint, f float, d double, "
        "dec9 decimal(9,2), dec38 decimal(38,10), dt date, ts timestamp (Iceberg timestamptz), ts_ntz "
        "timestamp_ntz (Iceberg timestamp), s string, bin binary, st struct<a int, b string, inner "
        "struct<x double>>, arr array<int>, m map<string,int>, arr_st array<struct<x int, y string>>, "
        "m_arr map<int, array<string>>. 5 rows: extremes, NaN, +-0.0, +-Infinity, pre-1970 dates and "
        "timestamps, non-ASCII strings, empty string/binary/list/map, nested nulls, an all-null row. "
        "Rows as Java reads them: `all_types_rows.json`; Java's metrics for it: the entry in "
        "`all_types_snap1_data_m0.json`; schema: `all_types_metadata.json`.",
    )
    note(
        "all_types_rows.json",
        "rows of all_types.parquet as Iceberg Java returns them, plus the Iceberg schema JSON.",
    )
