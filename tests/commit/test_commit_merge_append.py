"""Merge append (issue 5): after many small appends the current snapshot plans a handful of
manifests, Iceberg Java reads every row and its `manifests` table agrees; with a low
`commit.manifest.min-count-to-merge`, icefloe's manifest counts after each append equal
those Java's own MergeAppend produces on a twin table."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("g", pa.int32())])


def test_120_appends_merge_and_java_agrees(oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("merge")
    table = catalog.create_table(name, schema=SCHEMA, properties={"commit.manifest.min-count-to-merge": "10"})
    for i in range(120):
        table.append(pa.table({"id": [2 * i, 2 * i + 1], "g": [i, i]}, schema=SCHEMA))
    rows = table.scan().to_arrow()
    assert sorted(rows.column("id").to_pylist()) == list(range(240))
    java_manifests = oracle.sql(f"SELECT * FROM {oracle.qualified(name)}.manifests")
    assert 1 <= len(java_manifests) <= 10
    assert sum(m["added_data_files_count"] + m["existing_data_files_count"] for m in java_manifests) == 120
    assert [r[0] for r in oracle.sql(f"SELECT count(*) FROM {oracle.qualified(name)}")] == [240]
    assert sorted(r["id"] for r in oracle.sql(f"SELECT id FROM {oracle.qualified(name)}")) == list(range(240))


def test_manifest_counts_match_java_merge_append(spark: Any, oracle: Oracle, catalog: Any) -> None:
    ours, java = new_table_name("mo"), new_table_name("mj")
    props = {"commit.manifest.min-count-to-merge": "3"}
    catalog.create_table(ours, schema=SCHEMA, properties=props)
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(java)} (id bigint NOT NULL, g int) USING iceberg "
        "TBLPROPERTIES ('format-version'='2', 'commit.manifest.min-count-to-merge'='3')"
    )
    ours_counts, java_counts = [], []
    for i in range(7):
        catalog.load_table(ours).append(pa.table({"id": [i], "g": [i]}, schema=SCHEMA))
        oracle.sql(f"INSERT INTO {oracle.qualified(java)} VALUES ({i}, {i})")
        ours_counts.append(len(oracle.sql(f"SELECT * FROM {oracle.qualified(ours)}.manifests")))
        java_counts.append(len(oracle.sql(f"SELECT * FROM {oracle.qualified(java)}.manifests")))
    assert ours_counts == java_counts
    assert oracle.rows(ours) == oracle.rows(java)
