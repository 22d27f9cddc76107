# ruff: noqa: E501
"""The SQL examples of Iceberg's "Spark DDL" documentation page (`docs/docs/spark-ddl.md`),
as the page writes them, run by Iceberg Java's Spark SQL on one table and by
`icefloe.spark.sql` on its twin (`support.ddl_twins`), in the page's order.

After every statement both engines have done the same: both ran it and the twins' schema, spec,
sort order, properties, format version, refs and snapshot operations are equal, or both refused
it and icefloe's twin is unchanged (the page shows alternatives that cannot all run on one
table: adding a partition field twice, identifier fields over a nullable column, a branch or
tag that exists; and one example that is not Spark SQL, a comment after `ALTER COLUMN ... TYPE`). Rows written along the way are read alike by both engines.

The page's `prod.db.sample` is a fresh table per section, with the columns that section's
examples name (the page's examples name columns of several tables). Its `another_table` is a
temp view; its snapshot ids (1234, 4567) are each twin's own first and second snapshot. The
page's view examples are twin-tested on catalogs with views in `test_spark_sql_views.py` (the
filesystem catalog refuses views, as Java's HadoopCatalog does). The PySpark 3.5 pass runs this
page; the same statement forms run on PySpark 4 in `test_spark_sql_ddl.py` and
`test_spark_sql.py`.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from support.ddl_twins import Twins
from support.oracle import assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop, pytest.mark.one_spark_line]

J, K = "docddlj", "docddlk"  # this file's twin catalogs (Spark keeps a catalog once loaded)


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return Twins(spark, tmp_path_factory.mktemp("sqldocsddl"), J, K)


def _fresh() -> str:
    return f"db.sample_{uuid.uuid4().hex[:8]}"


CREATE = [
    # `CREATE TABLE`, and with `PARTITIONED BY`, identity and transforms
    "CREATE TABLE prod.db.sample (\n    id bigint NOT NULL COMMENT 'unique id',\n    data string)\nUSING iceberg",
    "CREATE TABLE prod.db.sample (\n    id bigint,\n    data string,\n    category string)\nUSING iceberg\n"
    "PARTITIONED BY (category)",
    "CREATE TABLE prod.db.sample (\n    id bigint,\n    data string,\n    category string,\n    ts timestamp)\n"
    "USING iceberg\nPARTITIONED BY (bucket(16, id), days(ts), category)",
]

# The transforms the page lists for `PARTITIONED BY`, each on a table of the page's columns.
TRANSFORMS = [
    "year(ts)",
    "month(ts)",
    "day(ts)",
    "date(ts)",
    "hour(ts)",
    "date_hour(ts)",
    "truncate(4, data)",
]


def test_create_table_examples(tw: Twins) -> None:
    for text in CREATE:
        ident = _fresh()
        assert tw.page(ident, [text]) == [True]
    for transform in TRANSFORMS:
        ident = _fresh()
        text = (
            "CREATE TABLE prod.db.sample (id bigint, data string, category string, ts timestamp) "
            f"USING iceberg PARTITIONED BY ({transform})"
        )
        assert tw.page(ident, [text]) == [True], transform


def test_ctas_rtas_and_drop_examples(tw: Twins) -> None:
    """The page's table of four columns written by its `INSERT INTO ... SELECT ... FROM
    another_table ORDER BY ts, category`, then its CTAS, RTAS, `CREATE OR REPLACE` and `DROP`
    examples with that table as the `SELECT ...` they leave open."""
    source = _fresh()
    tw.page(source, [CREATE[2]])
    tw.spark.sql(
        "SELECT * FROM VALUES (1L, 'a', 'c1', TIMESTAMP'2024-01-01 10:00:00'), (2L, 'b', 'c2', "
        "TIMESTAMP'2024-01-02 11:00:00'), (3L, 'c', 'c1', TIMESTAMP'2023-12-31 09:00:00'), "
        "(4L, null, null, null) AS t(id, data, category, ts)"
    ).createOrReplaceTempView("another_table")
    assert tw.page(
        source,
        [
            "INSERT INTO prod.db.sample\nSELECT id, data, category, ts FROM another_table\nORDER BY ts, category"
        ],
    ) == [True]
    tw.assert_same_table(source)

    select = f"SELECT id, data, category AS part, ts FROM {J}.{source}"
    ctas = _fresh()
    assert tw.page(ctas, [f"CREATE TABLE prod.db.sample\nUSING iceberg\nAS {select}"]) == [True]
    tw.assert_same_table(ctas)
    ctas2 = _fresh()
    text = f"CREATE TABLE prod.db.sample\nUSING iceberg\nPARTITIONED BY (part)\nTBLPROPERTIES ('key'='value')\nAS {select}"
    assert tw.page(ctas2, [text]) == [True]
    tw.assert_same_table(ctas2)

    replaced = [
        f"REPLACE TABLE prod.db.sample\nUSING iceberg\nAS {select} WHERE id > 1",
        f"REPLACE TABLE prod.db.sample\nUSING iceberg\nPARTITIONED BY (part)\nTBLPROPERTIES ('key'='value')\nAS {select}",
        f"CREATE OR REPLACE TABLE prod.db.sample\nUSING iceberg\nAS {select} WHERE id < 4",
    ]
    for text in replaced:
        assert tw.page(ctas, [text]) == [True], text
        tw.assert_same_table(ctas)

    # `DROP TABLE` and `DROP TABLE ... PURGE`: gone from both catalogs.
    for ident, text in ((ctas, "DROP TABLE prod.db.sample"), (ctas2, "DROP TABLE prod.db.sample PURGE")):
        tw.java(text.replace("prod.db.sample", f"{J}.{ident}")).collect()
        tw.ice(text.replace("prod.db.sample", f"{J}.{ident}"))
        assert not tw.exists(J, ident) and not tw.exists(K, ident), text


ALTER = [
    # `RENAME TO`: refused by both filesystem catalogs (Java's HadoopCatalog cannot rename)
    "ALTER TABLE prod.db.sample RENAME TO prod.db.new_name",
    # `SET` / `UNSET TBLPROPERTIES`, the table comment
    "ALTER TABLE prod.db.sample SET TBLPROPERTIES (\n    'read.split.target-size'='268435456'\n)",
    "ALTER TABLE prod.db.sample UNSET TBLPROPERTIES ('read.split.target-size')",
    "ALTER TABLE prod.db.sample SET TBLPROPERTIES (\n    'comment' = 'A table comment.'\n)",
    # `ADD COLUMN`: top level, a struct and a field in it, an array of structs and a field in
    # its element
    "ALTER TABLE prod.db.sample\nADD COLUMNS (\n    new_column string comment 'new_column docs'\n)",
    "ALTER TABLE prod.db.sample\nADD COLUMN point struct<x: double, y: double>",
    "ALTER TABLE prod.db.sample\nADD COLUMN point.z double",
    "ALTER TABLE prod.db.sample\nADD COLUMN points array<struct<x: double, y: double>>",
    "ALTER TABLE prod.db.sample\nADD COLUMN points.element.z double",
    "ALTER TABLE prod.db.sample\nADD COLUMN nested.new_column bigint FIRST",
    # `RENAME COLUMN`, top level and nested
    "ALTER TABLE prod.db.sample RENAME COLUMN data TO payload",
    "ALTER TABLE prod.db.sample RENAME COLUMN location.lat TO latitude",
    # `ALTER COLUMN`: widening, comments, order, nullability
    "ALTER TABLE prod.db.sample ALTER COLUMN measurement TYPE double",
    # not Spark SQL (both lines' parsers refuse a comment after TYPE): refused by both
    "ALTER TABLE prod.db.sample ALTER COLUMN measurement TYPE double COMMENT 'unit is bytes per second'",
    "ALTER TABLE prod.db.sample ALTER COLUMN measurement COMMENT 'unit is kilobytes per second'",
    "ALTER TABLE prod.db.sample ALTER COLUMN col FIRST",
    "ALTER TABLE prod.db.sample ALTER COLUMN nested.col AFTER other_col",
    "ALTER TABLE prod.db.sample ALTER COLUMN id DROP NOT NULL",
    # `DROP COLUMN`, top level and nested
    "ALTER TABLE prod.db.sample DROP COLUMN id",
    "ALTER TABLE prod.db.sample DROP COLUMN point.z",
]

# The page's map example adds `points` again, and its `AFTER other_column` example adds
# `new_column` again: they run on a table of their own.
ALTER_MAP_AND_AFTER = [
    "ALTER TABLE prod.db.sample\nADD COLUMN points map<struct<x: int>, struct<a: int>>",
    "ALTER TABLE prod.db.sample\nADD COLUMN points.value.b int",
    "ALTER TABLE prod.db.sample\nADD COLUMN new_column bigint AFTER other_column",
]

SAMPLE = (
    "CREATE TABLE {t} (id bigint NOT NULL COMMENT 'unique id', data string, category string, "
    "ts timestamp, measurement float, col int, other_column int, "
    "location struct<lat: double, long: double>, nested struct<col: int, other_col: int>) USING iceberg"
)

ROW = (
    "INSERT INTO {t} VALUES (1, 'a', 'c', TIMESTAMP'2024-01-01 00:00:00', 1.5, 7, 8, "
    "named_struct('lat', 1.0, 'long', 2.0), named_struct('col', 3, 'other_col', 4))"
)


def test_alter_table_examples(tw: Twins) -> None:
    ident = _fresh()
    tw.setup(SAMPLE.format(t=f"{J}.{ident}"))
    tw.setup(ROW.format(t=f"{J}.{ident}"))
    ran = tw.page(ident, ALTER)
    refused = [text for text, done in zip(ALTER, ran) if not done]
    assert refused == [ALTER[0], ALTER[13]], refused  # the rename and the comment after TYPE
    tw.both(f"INSERT INTO {J}.{ident} SELECT * FROM {J}.{ident}")  # a write of the evolved schema
    tw.assert_same_table(ident)

    other = _fresh()
    tw.setup(SAMPLE.format(t=f"{J}.{other}"))
    tw.setup(ROW.format(t=f"{J}.{other}"))
    assert tw.page(other, ALTER_MAP_AND_AFTER) == [True] * 3
    tw.both(f"INSERT INTO {J}.{other} SELECT * FROM {J}.{other}")
    tw.assert_same_table(other)


PARTITION_FIELDS = [
    "ALTER TABLE prod.db.sample ADD PARTITION FIELD catalog",
    "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id)",
    "ALTER TABLE prod.db.sample ADD PARTITION FIELD truncate(4, data)",
    "ALTER TABLE prod.db.sample ADD PARTITION FIELD year(ts)",  # beside days(ts): both take it
    "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id) AS shard",  # a second bucket(16, id): refused
    "ALTER TABLE prod.db.sample DROP PARTITION FIELD catalog",
    "ALTER TABLE prod.db.sample DROP PARTITION FIELD bucket(16, id)",
    "ALTER TABLE prod.db.sample DROP PARTITION FIELD truncate(4, data)",
    "ALTER TABLE prod.db.sample DROP PARTITION FIELD year(ts)",
    "ALTER TABLE prod.db.sample ADD PARTITION FIELD bucket(16, id) AS shard",
    "ALTER TABLE prod.db.sample DROP PARTITION FIELD shard",
    "ALTER TABLE prod.db.sample REPLACE PARTITION FIELD ts_day WITH day(ts)",
    "ALTER TABLE prod.db.sample REPLACE PARTITION FIELD ts_day WITH day(ts) AS day_of_ts",
]

ORDERS_AND_IDENTIFIERS = [
    "ALTER TABLE prod.db.sample WRITE ORDERED BY category, id",
    "ALTER TABLE prod.db.sample WRITE ORDERED BY category ASC, id DESC",
    "ALTER TABLE prod.db.sample WRITE ORDERED BY category ASC NULLS LAST, id DESC NULLS FIRST",
    "ALTER TABLE prod.db.sample WRITE LOCALLY ORDERED BY category, id",
    "ALTER TABLE prod.db.sample WRITE UNORDERED",
    "ALTER TABLE prod.db.sample WRITE DISTRIBUTED BY PARTITION",
    "ALTER TABLE prod.db.sample WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY category, id",
    "ALTER TABLE prod.db.sample SET IDENTIFIER FIELDS id",
    "ALTER TABLE prod.db.sample SET IDENTIFIER FIELDS id, data",  # `data` is optional: refused
    "ALTER TABLE prod.db.sample DROP IDENTIFIER FIELDS id",
    "ALTER TABLE prod.db.sample DROP IDENTIFIER FIELDS id, data",  # none left to drop: refused
]


def test_partition_evolution_write_order_and_identifier_examples(tw: Twins) -> None:
    ident = _fresh()
    tw.setup(
        f"CREATE TABLE {J}.{ident} (id bigint NOT NULL, data string, category string, ts timestamp, "
        "catalog string) USING iceberg PARTITIONED BY (days(ts))"
    )
    insert = (
        f"INSERT INTO {J}.{ident} VALUES (1, 'abcdef', 'c1', TIMESTAMP'2024-01-01 10:00:00', 'x'), "
        "(2, null, null, null, null)"
    )
    tw.setup(insert)
    ran = tw.page(ident, PARTITION_FIELDS)
    assert ran == [True] * 4 + [False] + [True] * 8, ran  # a second bucket(16, id) is refused
    tw.both(insert)
    ran = tw.page(ident, ORDERS_AND_IDENTIFIERS)
    assert ran == [True] * 8 + [False, True, False], ran
    tw.both(insert)
    tw.assert_same_table(ident)


BRANCHES_AND_TAGS = [
    "ALTER TABLE prod.db.sample CREATE BRANCH `audit-branch`",
    "ALTER TABLE prod.db.sample CREATE BRANCH IF NOT EXISTS `audit-branch`",
    "ALTER TABLE prod.db.sample CREATE OR REPLACE BRANCH `audit-branch`",
    "ALTER TABLE prod.db.sample CREATE BRANCH `audit-branch`\nAS OF VERSION {v1}",  # exists: refused
    "ALTER TABLE prod.db.sample CREATE BRANCH `audit-branch`\nAS OF VERSION {v1} RETAIN 30 DAYS \n"
    "WITH SNAPSHOT RETENTION 3 SNAPSHOTS 2 DAYS",  # exists: refused
    "ALTER TABLE prod.db.sample CREATE TAG `historical-tag`",
    "ALTER TABLE prod.db.sample CREATE TAG IF NOT EXISTS `historical-tag`",
    "ALTER TABLE prod.db.sample CREATE OR REPLACE TAG `historical-tag`",
    "ALTER TABLE prod.db.sample CREATE TAG `historical-tag` AS OF VERSION {v1}",  # exists: refused
    "ALTER TABLE prod.db.sample CREATE TAG `historical-tag` \nAS OF VERSION {v1} RETAIN 365 DAYS",  # refused
    "ALTER TABLE prod.db.sample REPLACE BRANCH `audit-branch`\nAS OF VERSION {v2} RETAIN 60 DAYS",
    "ALTER TABLE prod.db.sample REPLACE TAG `historical-tag`\nAS OF VERSION {v2} RETAIN 60 DAYS",
]


def test_branch_and_tag_examples(tw: Twins) -> None:
    """The page's branch and tag statements in its order (the `AS OF VERSION` forms of a name
    that exists are refused by both), then each `AS OF VERSION` form on a name of its own, and
    the page's `DROP BRANCH` / `DROP TAG`."""
    ident = _fresh()
    tw.setup(f"CREATE TABLE {J}.{ident} (id bigint, data string) USING iceberg")
    for i in range(3):
        tw.setup(f"INSERT INTO {J}.{ident} VALUES ({i}, 'r{i}')")
    java, ours = tw.snapshot_ids(ident)
    subs = {"v1": (java[0], ours[0]), "v2": (java[1], ours[1])}
    ran = tw.page(ident, BRANCHES_AND_TAGS, **subs)
    assert ran == [True, True, True, False, False, True, True, True, False, False, True, True], ran
    fresh_names = [
        text.replace("`audit-branch`", "`audit-branch-2`").replace("`historical-tag`", "`historical-tag-2`")
        for text in BRANCHES_AND_TAGS
        if "AS OF VERSION {v1}" in text
    ]
    for text in fresh_names:
        name = text.split("`")[1]
        kind = "BRANCH" if "BRANCH" in text else "TAG"
        drop = f"ALTER TABLE prod.db.sample DROP {kind} `{name}`"
        assert tw.page(ident, [text, drop], **subs) == [True, True], text
    for ref in ("branch_audit-branch", "tag_historical-tag"):
        java_rows = tw.java(f"SELECT * FROM {J}.{ident}.`{ref}`")
        assert_same_rows(tw.ice(f"SELECT * FROM {J}.{ident}.`{ref}`"), java_rows, context=ref)
    assert tw.page(
        ident,
        [
            "ALTER TABLE prod.db.sample DROP BRANCH `audit-branch`",
            "ALTER TABLE prod.db.sample DROP TAG `historical-tag`",
        ],
    ) == [True, True]
    tw.assert_same_table(ident)
