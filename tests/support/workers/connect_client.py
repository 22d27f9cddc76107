"""Run by test_spark4_connect.py in its own process: a Spark Connect client (PySpark 4) that
drives icefloe against Iceberg Java living in the Connect server. Driver-side icefloe code
(planning, commits) runs here, in the client; executors run in the server. Exits non-zero
with the failed check on stderr."""

from __future__ import annotations

import sys

import icefloe.spark
from icefloe import load_catalog
from pyspark.sql import SparkSession


def rows(df: object) -> list[tuple[object, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=str)  # type: ignore[attr-defined]


def main(url: str, warehouse: str, name: str) -> None:
    spark = SparkSession.builder.remote(url).getOrCreate()
    assert type(spark).__module__.startswith("pyspark.sql.connect"), type(spark)
    java = f"oracle.{name}"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS oracle.db")
    spark.sql(f"CREATE TABLE {java} (id bigint, s string) USING iceberg PARTITIONED BY (s)")
    spark.sql(f"INSERT INTO {java} VALUES (1, 'a'), (2, 'b'), (3, null)")
    catalog = load_catalog("local", type="filesystem", warehouse=warehouse)
    table = catalog.load_table(name)

    # icefloe.spark functions: read Java's rows, append, Java reads icefloe's rows.
    assert rows(icefloe.spark.read(spark, table)) == rows(spark.table(java)), "icefloe.spark.read"
    # Over Connect, local files take Spark's Parquet source (the server's executors read them).
    plan = icefloe.spark.plan_read(spark, table)
    assert plan.spark_files and not plan.rust_files, f"read paths over Connect: {plan.rust_files}"
    pruned = icefloe.spark.read(spark, table).where("id > 1").select("id")
    assert rows(pruned) == [(2,), (3,)], "a filtered, pruned read over Connect"
    new = spark.createDataFrame([(4, "a"), (5, "c")], "id bigint, s string")
    icefloe.spark.append(new, table)
    expected = sorted([(1, "a"), (2, "b"), (3, None), (4, "a"), (5, "c")], key=str)
    assert rows(spark.table(java)) == expected, f"Java after icefloe.spark.append: {rows(spark.table(java))}"
    icefloe.spark.delete(spark, table.refresh(), "id = 2")
    expected = [r for r in expected if r[0] != 2]
    assert rows(spark.table(java)) == expected, "Java after icefloe.spark.delete"

    # The data source, registered from the client.
    spark.conf.set("icefloe.catalog.local.warehouse", warehouse)
    icefloe.spark.register(spark)
    assert rows(spark.read.format("icefloe").load(f"local.{name}")) == expected, "format('icefloe') read"
    assert rows(spark.read.format("icefloe").load(f"local.{name}").where("s = 'a'")) == [(1, "a"), (4, "a")]
    more = spark.createDataFrame([(6, "d")], "id bigint, s string")
    more.write.format("icefloe").mode("append").save(f"local.{name}")
    expected = sorted([*expected, (6, "d")], key=str)
    assert rows(spark.table(java)) == expected, "Java after format('icefloe') append"
    snaps = [
        r.operation
        for r in spark.sql(f"SELECT operation FROM {java}.snapshots ORDER BY committed_at").collect()
    ]
    assert snaps == ["append", "append", "delete", "append"], snaps
    # Rewrite tasks keep their packing over Connect: each group of rows in a partition of its own.
    from icefloe.spark._session import default_parallelism, pack_by_weight, packed_rows_frame
    from pyspark.sql import functions as F

    items = [(f"f{i}", i) for i in range(7)]
    weights = [100, 1, 1, 50, 50, 1, 1]
    packed = packed_rows_frame(spark, items, weights, "name string, group int")
    placed: dict[int, list[object]] = {}
    for r in packed.select("name", "group", F.spark_partition_id().alias("p")).collect():
        placed.setdefault(r["p"], []).append((r["name"], r["group"]))
    groups = pack_by_weight(weights, default_parallelism(spark))
    want = sorted(sorted(items[i] for i in g) for g in groups)
    assert len(groups) == 2 and sorted(sorted(v) for v in placed.values()) == want, f"packing: {placed}"  # type: ignore[type-var]

    print("OK")


if __name__ == "__main__":
    try:
        main(*sys.argv[1:4])
    except AssertionError as e:
        print(f"check failed: {e}", file=sys.stderr)
        raise
