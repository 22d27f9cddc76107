"""Tables partitioned by fields of struct columns (`PARTITIONED BY (st.a, bucket(4, st.b))`,
which Iceberg Java writes): icefloe writes them in process, on Spark and through add_files,
with the partition tuples Java computes for the same rows (a field of a null struct is
null), and its copy-on-write delete rewrites them. Before, every such write was refused
("not a top-level column")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe.spark
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.oracle import Oracle, assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]

DDL = "id bigint, st struct<a: string, b: bigint>, v double"
SPEC = "st.a, bucket(4, st.b), truncate(2, st.a)"


def _rows() -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for i in range(40):
        st = None if i % 11 == 0 else {"a": None if i % 7 == 0 else f"k{i % 3}x", "b": i * 37}
        out.append((i, st, i / 2))
    return out


def _arrow(rows: list[tuple[Any, ...]], table: Any) -> pa.Table:
    schema = table.schema().as_arrow()
    return pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema)


def _partitions(oracle: Oracle, name: str) -> list[str]:
    return sorted(repr(f["partition"]) + f":{f['record_count']}" for f in oracle.data_files(name))


def test_struct_field_partitions_written_as_java(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str, tmp_path: Path
) -> None:
    java, ours, on_spark, imported = (f"{table_name}_{s}" for s in ("java", "ours", "spark", "import"))
    for name in (java, ours, on_spark, imported):
        oracle.sql(f"CREATE TABLE {oracle.qualified(name)} ({DDL}) USING iceberg PARTITIONED BY ({SPEC})")
    df = spark.createDataFrame(_rows(), DDL).coalesce(1)
    df.writeTo(oracle.qualified(java)).append()
    catalog.load_table(ours).append(_arrow(_rows(), catalog.load_table(ours)))
    icefloe.spark.append(df, catalog.load_table(on_spark))
    for name in (ours, on_spark):
        assert_same_rows(oracle.df(name), oracle.df(java), context=name)
        # One file per partition in each (one input task, hash distribution on Spark).
        assert _partitions(oracle, name) == _partitions(oracle, java), name

    # add_files computes the tuple from the data, nested sources included: a file of one
    # row gets the partition of Java's file holding that row.
    row = _rows()[5]
    path = tmp_path / "in" / "one.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(_arrow([row], catalog.load_table(imported)), path)
    catalog.load_table(imported).add_files([str(path)])
    assert_same_rows(oracle.df(imported), _arrow([row], catalog.load_table(imported)))
    (java_file,) = [
        r[0] for r in oracle.sql(f"SELECT _file FROM {oracle.qualified(java)} WHERE id = {row[0]}")
    ]
    java_partition = [f["partition"] for f in oracle.data_files(java) if f["file_path"] == java_file]
    assert [f["partition"] for f in oracle.data_files(imported)] == java_partition

    # A copy-on-write delete by a nested field rewrites the files partly matching.
    catalog.load_table(ours).delete("st.b < 200")
    oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE st.b < 200")
    assert_same_rows(oracle.df(ours), oracle.df(java), context="after the delete")


def _sorted_by_b_desc(oracle: Oracle, name: str) -> list[bool]:
    out = []
    for f in oracle.data_files(name):
        st = pq.read_table(f["file_path"].removeprefix("file:"), columns=["st"]).column("st").to_pylist()
        keys = [(s is None or s["b"] is None, -(s["b"] or 0) if s else 0) for s in st]
        out.append(keys == sorted(keys))
    return out


def test_sort_order_on_a_struct_field_sorts_each_file_as_java(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """`WRITE ORDERED BY st.b DESC NULLS LAST`: Java's files are sorted by it, and so are
    icefloe's (in process, on Spark, and after a sort rewrite). Before, a sort key inside a
    struct was refused, so writes to such a table stayed in input order."""
    java, ours = f"{table_name}_java", f"{table_name}_ours"
    for name in (java, ours):
        oracle.sql(f"CREATE TABLE {oracle.qualified(name)} ({DDL}) USING iceberg PARTITIONED BY (st.a)")
        oracle.sql(f"ALTER TABLE {oracle.qualified(name)} WRITE ORDERED BY st.b DESC NULLS LAST")
    rows = list(reversed(_rows())) + _rows()
    df = spark.createDataFrame(rows, DDL).repartition(2)
    df.writeTo(oracle.qualified(java)).append()
    icefloe.spark.append(df, catalog.load_table(ours))
    catalog.load_table(ours).append(_arrow(rows, catalog.load_table(ours)))
    assert all(_sorted_by_b_desc(oracle, java))
    mine = _sorted_by_b_desc(oracle, ours)
    assert len(mine) >= 4 and all(mine), mine
    assert oracle.df(ours).count() == 2 * len(rows)
    catalog.load_table(ours).maintenance.rewrite_data_files(strategy="sort", rewrite_all=True)
    assert all(_sorted_by_b_desc(oracle, ours))
    assert_same_rows(oracle.df(ours), df.unionAll(df), context="after the sort rewrite")
