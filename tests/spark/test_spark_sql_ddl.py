# ruff: noqa: E501
"""`icefloe.spark.sql` DDL, procedures and overwrites against Iceberg Java's Spark SQL: the same
statement text run by both on twin tables (`support.ddl_twins`: Java's on Spark catalog `ddlj`,
icefloe's on its catalog `ddlj`, read by Java as `ddlk`), compared through Java's API after each
statement: schema, spec, sort order, properties, format version, refs and rows."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe.exceptions import NoSuchTableError, NotSupportedError, ValidationError
from support.catalogs import java_catalog_conf, set_java_catalog
from support.ddl_twins import J, K, Twins
from support.oracle import assert_same_rows

pytestmark = [pytest.mark.spark, pytest.mark.interop]


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return Twins(spark, tmp_path_factory.mktemp("sqlddl"))


def _run_all(tw: Twins, name: str, statements: list[str]) -> None:
    for text in statements:
        tw.both(text.format(t=f"{J}.{name}"))
        tw.assert_same_metadata(name)


# ---- 1. Iceberg's ALTER TABLE extensions and the remaining ALTER TABLE forms ----
WRITE_ORDERS = [
    "ALTER TABLE {t} WRITE ORDERED BY id",
    "ALTER TABLE {t} WRITE ORDERED BY region DESC, bucket(4, id) ASC NULLS LAST, truncate(2, region) DESC NULLS FIRST",
    "ALTER TABLE {t} WRITE LOCALLY ORDERED BY (amount, id DESC)",
    "ALTER TABLE {t} WRITE DISTRIBUTED BY PARTITION",
    "ALTER TABLE {t} WRITE DISTRIBUTED BY PARTITION LOCALLY ORDERED BY st.a",
    "ALTER TABLE {t} WRITE UNORDERED",
]

IDENTIFIERS = [
    "ALTER TABLE {t} SET IDENTIFIER FIELDS id",
    "ALTER TABLE {t} SET IDENTIFIER FIELDS region, id",
    "ALTER TABLE {t} DROP IDENTIFIER FIELDS id",
    "ALTER TABLE {t} SET IDENTIFIER FIELDS id, region",
    "ALTER TABLE {t} DROP IDENTIFIER FIELDS region, id",
]

ALTER_COLUMNS = [
    "ALTER TABLE {t} ALTER COLUMN amount TYPE bigint",
    "ALTER TABLE {t} ALTER COLUMN st.a TYPE bigint",
    "ALTER TABLE {t} ALTER COLUMN amount COMMENT 'how much'",
    "ALTER TABLE {t} ALTER COLUMN Region FIRST",
    "ALTER TABLE {t} ALTER COLUMN id AFTER amount",
    "ALTER TABLE {t} ALTER COLUMN st.b AFTER a",
    "ALTER TABLE {t} ALTER COLUMN id DROP NOT NULL",
    "ALTER TABLE {t} SET TBLPROPERTIES ('a'='1', 'b'='2', 'c'='3')",
    "ALTER TABLE {t} UNSET TBLPROPERTIES ('a', 'b')",
    "ALTER TABLE {t} UNSET TBLPROPERTIES IF EXISTS ('c', 'nope')",
]


@pytest.mark.one_spark_line
def test_write_order_identifier_fields_and_alter_column(tw: Twins) -> None:
    """Each statement in turn on one pair of twins, the metadata compared after each; then a
    write lands on the final schema and both engines read the same rows."""
    name = tw.twin()
    _run_all(tw, name, WRITE_ORDERS + IDENTIFIERS)
    for text in ALTER_COLUMNS:  # each changes another part of the schema: compared once, at the end
        tw.both(text.format(t=f"{J}.{name}"))
    tw.both(f"INSERT INTO {J}.{name} VALUES ('x', 7, 70, named_struct('a', 7, 'b', 'z'))")
    tw.assert_same_table(name)


@pytest.mark.one_spark_line
def test_branches_and_tags(tw: Twins) -> None:
    name = tw.twin()
    first = tw.java(f"SELECT snapshot_id FROM {J}.{name}.snapshots ORDER BY committed_at").first()[0]
    ours = tw.ice(f"SELECT snapshot_id FROM {J}.{name}.snapshots ORDER BY committed_at").first()[0]
    statements = [
        "ALTER TABLE {t} CREATE BRANCH b1",
        "ALTER TABLE {t} CREATE BRANCH IF NOT EXISTS b1 AS OF VERSION {v}",
        "ALTER TABLE {t} CREATE BRANCH b2 AS OF VERSION {v} RETAIN 7 DAYS",
        "ALTER TABLE {t} CREATE BRANCH b3 WITH SNAPSHOT RETENTION 3 SNAPSHOTS",
        "ALTER TABLE {t} CREATE BRANCH b4 RETAIN 2 HOURS WITH SNAPSHOT RETENTION 2 SNAPSHOTS 30 MINUTES",
        "ALTER TABLE {t} CREATE BRANCH b5 WITH SNAPSHOT RETENTION 5 DAYS",
        "ALTER TABLE {t} REPLACE BRANCH b1 AS OF VERSION {v} WITH SNAPSHOT RETENTION 1 SNAPSHOTS",
        "ALTER TABLE {t} CREATE OR REPLACE BRANCH b2 RETAIN 1 DAYS",
        "ALTER TABLE {t} CREATE OR REPLACE BRANCH b6",
        "ALTER TABLE {t} DROP BRANCH b3",
        "ALTER TABLE {t} DROP BRANCH IF EXISTS b3",
        "ALTER TABLE {t} CREATE TAG t1",
        "ALTER TABLE {t} CREATE TAG IF NOT EXISTS t1 AS OF VERSION {v}",
        "ALTER TABLE {t} CREATE TAG t2 AS OF VERSION {v} RETAIN 365 DAYS",
        "ALTER TABLE {t} REPLACE TAG t1 AS OF VERSION {v}",
        "ALTER TABLE {t} CREATE OR REPLACE TAG t2 RETAIN 3 HOURS",
        "ALTER TABLE {t} CREATE OR REPLACE TAG t3",
        "ALTER TABLE {t} DROP TAG t3",
        "ALTER TABLE {t} DROP TAG IF EXISTS t3",
    ]
    for text in statements:
        tw.java(text.format(t=f"{J}.{name}", v=first)).collect()
        tw.ice(text.format(t=f"{J}.{name}", v=ours))
        tw.assert_same_metadata(name)
    tw.both(f"INSERT INTO {J}.{name}.branch_b1 VALUES (7, 'x', 7, null)")
    tw.assert_same_metadata(name)
    for ref in ("branch_b1", "tag_t1", "branch_b6"):
        assert_same_rows(
            tw.ice(f"SELECT * FROM {J}.{name}.{ref}"), tw.java(f"SELECT * FROM {J}.{name}.{ref}")
        )


def test_rename_refused_by_the_filesystem_catalog(tw: Twins) -> None:
    name = tw.twin()
    tw.refused(
        name, f"ALTER TABLE {J}.{name} RENAME TO {J}.db.renamed", r"(?i)rename", NotSupportedError, "rename"
    )


# ---- 2. CALL <catalog>.system.<procedure>(...) ----
@pytest.mark.one_spark_line
def test_snapshot_procedures(tw: Twins) -> None:
    name = tw.twin()
    tw.setup(f"INSERT INTO {J}.{name} VALUES (7, 'x', 7, null)")  # three snapshots: s0, s1, s2
    tw.call(name, f"CALL {J}.system.rollback_to_snapshot('{{tn}}', {{s1}})")
    tw.call(name, f"CALL {J}.system.set_current_snapshot(table => '{{tn}}', snapshot_id => {{s2}})")
    tw.call(name, f"CALL {J}.system.rollback_to_timestamp('{J}.{{tn}}', {{t1}})")
    tw.call(name, f"CALL {J}.system.cherrypick_snapshot(snapshot_id => {{s1}}, table => '{{tn}}')")
    tw.setup(f"ALTER TABLE {J}.{name} CREATE BRANCH b1")
    tw.setup(f"INSERT INTO {J}.{name}.branch_b1 VALUES (8, 'y', 8, null)")
    tw.call(name, f"CALL {J}.system.fast_forward('{{tn}}', 'main', 'b1')")
    tw.call(name, f"CALL {J}.system.set_current_snapshot(table => '{{tn}}', ref => 'b1')")
    tw.assert_same_table(name)


@pytest.mark.one_spark_line
def test_maintenance_procedures(tw: Twins) -> None:
    name = tw.twin(
        rest="PARTITIONED BY (region) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    tw.setup(f"INSERT INTO {J}.{name} VALUES (7, 'eu', 7, null), (8, 'us', 8, null)")
    tw.setup(f"DELETE FROM {J}.{name} WHERE id IN (1, 5)")
    tw.setup(f"DELETE FROM {J}.{name} WHERE id = 2")
    tw.call(name, f"CALL {J}.system.rewrite_manifests('{{tn}}')")
    tw.call(
        name,
        f"CALL {J}.system.rewrite_position_delete_files(table => '{{tn}}', options => map('rewrite-all', 'true'))",
        compare=("rewritten_delete_files_count", "added_delete_files_count"),
    )
    tw.call(
        name,
        f"CALL {J}.system.rewrite_data_files(table => '{{tn}}', where => 'region = \"eu\"', "
        "options => map('min-input-files', '2', 'max-concurrent-file-group-rewrites', '1'))",
        compare=(
            "rewritten_data_files_count",
            "added_data_files_count",
            "failed_data_files_count",
            "removed_delete_files_count",
        ),
    )
    tw.assert_same_table(name)
    tw.call(
        name,
        f"CALL {J}.system.expire_snapshots(table => '{{tn}}', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 2)",
    )
    tw.call(name, f"CALL {J}.system.remove_orphan_files(table => '{{tn}}', dry_run => true)")
    tw.assert_same_table(name)


def test_ancestors_of(tw: Twins) -> None:
    name = tw.twin()
    tw.setup(f"DELETE FROM {J}.{name} WHERE id = 2")
    for c in (J, K):  # each twin back to its own second snapshot
        tw.java(f"CALL {c}.system.rollback_to_snapshot('{name}', {tw.history_ids(c, name)[1]})")
    tw.setup(f"INSERT INTO {J}.{name} VALUES (9, 'x', 9, null)")  # s3's parent is s1, not s2
    tw.call(name, f"CALL {J}.system.ancestors_of('{{tn}}')", compare=("snapshot_id",))
    tw.call(
        name,
        f"CALL {J}.system.ancestors_of(snapshot_id => {{s2}}, table => '{{tn}}')",
        compare=("snapshot_id",),
    )
    # each row's time is its snapshot's commit time, newest first as Java lists them
    times = dict(zip(tw.history_ids(K, name), tw.history_times(K, name)))
    ours = [(r.snapshot_id, r.timestamp) for r in tw.ice(f"CALL {J}.system.ancestors_of('{name}')").collect()]
    assert ours == [(s, times[s]) for s in (tw.history_ids(K, name)[i] for i in (3, 1, 0))]


def test_add_files(tw: Twins, tmp_path: Path) -> None:
    """A Parquet folder Spark wrote added by Java to its twin and by icefloe to its own (the
    same files): Java's result columns and counts, the name mapping both add, the rows."""
    name = tw.twin(columns="id bigint, region string, amount int, st struct<a: int, b: string>")
    folder = tmp_path / "source"
    tw.spark.createDataFrame(
        [(10, "x", 1, (1, "q")), (11, None, None, None), (12, "y", 3, None)],
        "id bigint, region string, amount int, st struct<a: int, b: string>",
    ).repartition(2).write.parquet(str(folder))
    text = f"CALL {J}.system.add_files(table => '{name}', source_table => '`parquet`.`{folder}`')"
    java, ours = tw.java(text), tw.ice(text)
    assert ours.schema.simpleString() == java.schema.simpleString()
    # changed_partition_count is each snapshot summary's: Java appends the import as a manifest,
    # whose summary has no partition counts (null); icefloe appends the files (1 here)
    assert ours.collect()[0][0] == java.collect()[0][0]
    java_rows = tw.java(f"SELECT * FROM {J}.{name}")
    assert_same_rows(tw.java(f"SELECT * FROM {K}.{name}"), java_rows, context="Java reads")
    assert_same_rows(tw.ice(f"SELECT * FROM {J}.{name}"), java_rows, context="icefloe reads")
    # the name mapping both add: the same JSON (Java writes it pretty-printed)
    props = {c: dict(tw.java_table(c, name).properties()) for c in (J, K)}
    mappings = {c: json.loads(props[c].pop("schema.name-mapping.default")) for c in (J, K)}
    assert mappings[K] == mappings[J]
    assert props[K] == props[J]
    assert [str(s.operation()) for s in tw.java_table(K, name).snapshots()] == [
        str(s.operation()) for s in tw.java_table(J, name).snapshots()
    ]
    # the same files again: refused by both (duplicate files), nothing written
    text = f"CALL {J}.system.add_files('{name}', '`parquet`.`{folder}`')"
    with pytest.raises(Exception, match="already exist within the target table"):
        tw.java(text).collect()
    before = tw.history_ids(K, name)
    with pytest.raises(ValidationError, match="already referenced"):
        tw.ice(text)
    assert tw.history_ids(K, name) == before


@pytest.mark.one_spark_line
def test_add_files_into_an_earlier_spec(tw: Twins, tmp_path: Path) -> None:
    """A folder partitioned by `region` added to a table whose current spec is `bucket(2, id)`
    after `region`'s identity: both engines add the files under the earlier identity spec
    (Java's `findCompatibleSpec` takes the first matching spec), and read the same rows."""
    columns = "id bigint, region string, amount int, st struct<a: int, b: string>"
    name = tw.twin(columns=columns, rest="PARTITIONED BY (region)")
    tw.setup(f"ALTER TABLE {J}.{name} DROP PARTITION FIELD region")
    tw.setup(f"ALTER TABLE {J}.{name} ADD PARTITION FIELD bucket(2, id)")
    folder = tmp_path / "by_region"
    tw.spark.createDataFrame(
        [(10, "x", 1, (1, "q")), (11, "y", None, None), (12, "x", 3, None)], columns
    ).coalesce(1).write.partitionBy("region").parquet(str(folder))
    text = f"CALL {J}.system.add_files(table => '{name}', source_table => '`parquet`.`{folder}`')"
    java, ours = tw.java(text).collect(), tw.ice(text).collect()
    assert ours[0][0] == java[0][0] == 2
    java_rows = tw.java(f"SELECT * FROM {J}.{name}")
    assert_same_rows(tw.java(f"SELECT * FROM {K}.{name}"), java_rows, context="Java reads")
    assert_same_rows(tw.ice(f"SELECT * FROM {J}.{name}"), java_rows, context="icefloe reads")
    added = (
        "SELECT spec_id, partition.region, record_count FROM {c}.{n}.files WHERE file_path LIKE '%by_region%'"
    )
    assert_same_rows(tw.java(added.format(c=K, n=name)), tw.java(added.format(c=J, n=name)))
    assert sorted(tuple(r) for r in tw.java(added.format(c=K, n=name)).collect()) == [
        (0, "x", 2),
        (0, "y", 1),
    ]
    # a filter on the earlier spec's column selects there too
    assert_same_rows(
        tw.ice(f"SELECT id FROM {J}.{name} WHERE region = 'x'"),
        tw.java(f"SELECT id FROM {J}.{name} WHERE region = 'x'"),
    )


def test_create_changelog_view(tw: Twins) -> None:
    """Java's view of its twin's changes and icefloe's view of its own: the result row, then
    the view's rows (commit snapshots by their position in each twin's history)."""
    name = tw.twin(rest="TBLPROPERTIES ('format-version'='2')")
    tw.setup(f"UPDATE {J}.{name} SET amount = 100 WHERE id = 1")
    tw.setup(f"DELETE FROM {J}.{name} WHERE id = 5")
    # for the net changes: a row inserted and deleted again, an update undone
    tw.setup(f"INSERT INTO {J}.{name} VALUES (9, 'x', 9, null)")
    tw.setup(f"DELETE FROM {J}.{name} WHERE id = 9")
    tw.setup(f"UPDATE {J}.{name} SET amount = 1 WHERE id = 1")
    leaf = name.split(".")[1]
    for text, view in [
        ("CALL {c}.system.create_changelog_view('{n}')", f"`{leaf}_changes`"),
        (
            "CALL {c}.system.create_changelog_view(table => '{n}', changelog_view => 'cl_net', net_changes => true)",
            "cl_net",
        ),
        (
            "CALL {c}.system.create_changelog_view(table => '{n}', changelog_view => 'cl_net2', "
            "options => map('start-snapshot-id', '{s0}'), net_changes => true)",
            "cl_net2",
        ),
        (
            "CALL {c}.system.create_changelog_view(table => '{n}', changelog_view => 'cl_ts', "
            "options => map('start-timestamp', '{t1}', 'end-timestamp', '{t3}'))",
            "cl_ts",
        ),
        (
            "CALL {c}.system.create_changelog_view(table => '{n}', changelog_view => 'cl_ts2', "
            "options => map('start-timestamp', '{t1m}'), net_changes => true)",
            "cl_ts2",
        ),
        (
            "CALL {c}.system.create_changelog_view(table => '{n}', changelog_view => 'cl_after', "
            "options => map('start-timestamp', '{tfar}'))",
            "cl_after",
        ),
        (
            "CALL {c}.system.create_changelog_view(table => '{n}', changelog_view => 'cl_ids', "
            "options => map('start-snapshot-id', '{s0}', 'end-snapshot-id', '{s2}'), identifier_columns => array('id'))",
            "cl_ids",
        ),
    ]:
        seen = {}
        for catalog in (J, K):
            s = tw.history_ids(catalog, name)
            t = tw.history_times(catalog, name)
            statement = text.format(
                c=J, n=name, s0=s[0], s2=s[2], t1=t[1], t3=t[3], t1m=t[1] - 1, tfar=t[-1] + 60_000
            )
            result = (tw.java if catalog == J else tw.ice)(statement)
            seen[catalog] = (
                result.schema.simpleString(),
                result.collect(),
                tw.changelog_rows(catalog, name, f"SELECT * FROM {view}"),
            )
        assert seen[K] == seen[J], text
        if view == f"`{leaf}_changes`":
            every_change = seen[J][2]
        elif "net_changes" in text:  # the net changes are fewer rows than the changes
            assert 0 < len(seen[J][2]) < len(every_change), seen[J][2]
    s = tw.history_ids(J, name)
    twice = (
        f"CALL {J}.system.create_changelog_view(table => '{name}', changelog_view => 'cl_twice', "
        f"options => map('start-snapshot-id', '{s[0]}', 'start-timestamp', '1'))"
    )
    refused = "Cannot set both start-snapshot-id and start-timestamp for changelogs"
    with pytest.raises(Exception, match=refused):  # Java's refuses when the view is read
        tw.java(twice).collect()
        tw.java("SELECT * FROM cl_twice").collect()
    with pytest.raises(ValidationError, match=refused):  # icefloe's at the CALL
        tw.ice(twice)
    both = "CALL {c}.system.create_changelog_view(table => '{n}', net_changes => true, identifier_columns => array('id'))"
    with pytest.raises(Exception, match="Not support net changes with update images"):
        tw.java(both.format(c=J, n=name)).collect()
    with pytest.raises(ValidationError, match="Not support net changes with update images"):
        tw.ice(both.format(c=J, n=name))


def test_register_table(tw: Twins, tmp_path: Path) -> None:
    """`register_table` in SQL catalogs (Java's JdbcCatalog on sqlite; icefloe's SQL catalog on
    another sqlite file, read by Java too): each registers its own twin's current metadata."""
    name = tw.twin()
    roots = {c: tmp_path / c for c in ("regj", "regk")}
    for c, root in roots.items():
        root.mkdir()
        set_java_catalog(tw.spark, c, java_catalog_conf("sqlite", {"warehouse": str(root)}, root, None))
        tw.java(f"CREATE NAMESPACE {c}.db")
    # icefloe's catalog is `regj` in the statements and `regk` in its rows, so Java's `regk` reads it
    ours = {
        "regj": icefloe.load_catalog(
            "regk", uri=f"sqlite:///{roots['regk']}/catalog.db", warehouse=str(roots["regk"])
        )
    }
    metadata = {c: str(tw.java_table(c, name).operations().current().metadataFileLocation()) for c in (J, K)}
    text = "CALL regj.system.register_table(table => 'db.r', metadata_file => '{m}')"
    java = tw.java(text.format(m=metadata[J]))
    mine = icefloe.spark.sql(tw.spark, text.format(m=metadata[K]), catalogs=ours)
    assert mine.schema.simpleString() == java.schema.simpleString()
    position = {c: {s: i for i, s in enumerate(tw.history_ids(c, name))} for c in (J, K)}
    java_row, my_row = java.collect()[0], mine.collect()[0]
    assert (position[K][my_row[0]], *my_row[1:]) == (position[J][java_row[0]], *java_row[1:])
    java_rows = tw.java("SELECT * FROM regj.db.r")
    assert_same_rows(tw.java("SELECT * FROM regk.db.r"), java_rows, context="Java reads icefloe's")
    assert_same_rows(
        icefloe.spark.sql(tw.spark, "SELECT * FROM regj.db.r", catalogs=ours),
        java_rows,
        context="icefloe reads",
    )
    with pytest.raises(Exception, match="already exists"):
        tw.java(text.format(m=metadata[J])).collect()
    with pytest.raises(icefloe.exceptions.TableAlreadyExistsError):
        icefloe.spark.sql(tw.spark, text.format(m=metadata[K]), catalogs=ours)


def test_unsupported_forms_are_named(tw: Twins) -> None:
    name = tw.twin()
    before = tw.history_ids(K, name)
    for text, kind in [
        (f"SHOW CREATE TABLE {J}.{name} AS SERDE", "AS SERDE"),
    ]:
        with pytest.raises(NotSupportedError, match=kind):
            tw.ice(text)
    assert tw.history_ids(K, name) == before
    tw.assert_same_table(name)


def test_set_not_null_as_javas(tw: Twins) -> None:
    """`ALTER COLUMN c SET NOT NULL`: Spark's analyzer refuses it on a nullable column before
    Java's catalog sees it (nothing changed), and it does nothing on a required one."""
    name = tw.twin()
    refused = r"Cannot change nullable column to non-nullable: amount\."
    with pytest.raises(Exception, match=refused):
        tw.java(f"ALTER TABLE {J}.{name} ALTER COLUMN amount SET NOT NULL").collect()
    with pytest.raises(ValidationError, match=refused):
        tw.ice(f"ALTER TABLE {J}.{name} ALTER COLUMN amount SET NOT NULL")
    tw.both(f"ALTER TABLE {J}.{name} ALTER COLUMN id SET NOT NULL")
    tw.assert_same_table(name)


def test_unknown_procedure_is_named(tw: Twins) -> None:
    name = tw.twin()
    with pytest.raises(NotSupportedError, match="no_such_procedure"):
        tw.ice(f"CALL {J}.system.no_such_procedure(table => 'db.x')")
    # the filesystem catalog registers no table (icefloe's as PyIceberg's; nothing written)
    with pytest.raises(NotSupportedError, match="register"):
        tw.ice(f"CALL {J}.system.register_table(table => 'db.x', metadata_file => '/nope')")
    with pytest.raises(NotSupportedError, match="not an exact icefloe filter"):
        tw.ice(
            f"CALL {J}.system.rewrite_data_files(table => 'db.{name.split('.')[1]}', where => 'upper(region) = \"EU\"')"
        )


# ---- 3. INSERT OVERWRITE, CTAS, DESCRIBE, SHOW TBLPROPERTIES, SHOW CREATE TABLE ----
OVERWRITES = [
    (
        "static",
        "PARTITIONED BY (region)",
        "INSERT OVERWRITE {t} SELECT id + 10, region, amount, st FROM {t} WHERE region = 'eu'",
    ),
    (
        "dynamic",
        "PARTITIONED BY (region)",
        "INSERT OVERWRITE {t} SELECT id + 10, region, amount, st FROM {t} WHERE region = 'eu'",
    ),
    ("dynamic", "", "INSERT OVERWRITE TABLE {t} VALUES (9, 'x', 9, null)"),
    (
        "static",
        "PARTITIONED BY (region)",
        "INSERT OVERWRITE {t} PARTITION (region = 'us') SELECT id, amount, st FROM {t} WHERE region = 'eu'",
    ),
    (
        "dynamic",
        "PARTITIONED BY (region, bucket(2, id))",
        "INSERT OVERWRITE {t} PARTITION (region = 'us') VALUES (20, 2, null)",
    ),
    (
        "dynamic",
        "PARTITIONED BY (region)",
        "INSERT OVERWRITE {t} PARTITION (region) SELECT id, 'apac', amount, st FROM {t} WHERE id < 3",
    ),
    # BY NAME with a static partition value: the query names the other columns, in any order
    (
        "static",
        "PARTITIONED BY (region)",
        "INSERT OVERWRITE {t} PARTITION (region = 'us') BY NAME SELECT st, amount * 2 AS amount, id + 30 AS id "
        "FROM {t} WHERE region = 'eu'",
    ),
    (
        "dynamic",
        "PARTITIONED BY (region)",
        "INSERT INTO {t} PARTITION (region = 'apac') BY NAME SELECT amount, id * 3 AS ID, st FROM {t} WHERE id < 3",
    ),
]


@pytest.mark.parametrize(("mode", "partitioning", "statement"), OVERWRITES)
def test_insert_overwrite(tw: Twins, mode: str, partitioning: str, statement: str) -> None:
    name = tw.twin(rest=partitioning)
    tw.spark.conf.set("spark.sql.sources.partitionOverwriteMode", mode)
    try:
        tw.both(statement.format(t=f"{J}.{name}"))
    finally:
        tw.spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
    tw.assert_same_table(name)


def test_by_name_with_a_static_partition_column_also_in_the_query_is_refused_as_by_java(tw: Twins) -> None:
    name = tw.twin(rest="PARTITIONED BY (region)")
    text = f"INSERT INTO {J}.{name} PARTITION (region = 'us') BY NAME SELECT id, 'eu' AS region, amount, st FROM {J}.{name}"
    tw.refused(name, text, r"(?i)region", ValidationError, "'region' has a static value and is in the query")


def test_create_table_as_select(tw: Twins) -> None:
    name = tw.twin()
    new = f"db.ctas_{uuid.uuid4().hex[:8]}"
    tw.both(
        f"CREATE TABLE {J}.{new} USING iceberg PARTITIONED BY (region, bucket(2, id)) COMMENT 'c' "
        f"TBLPROPERTIES ('k'='v', 'format-version'='2') AS SELECT id, region, amount * 2 AS twice, st, "
        f"CAST(id AS tinyint) AS small, DATE'2024-01-01' AS d FROM {J}.{name} WHERE id > 2"
    )
    tw.assert_same_table(new)
    tw.both(f"CREATE TABLE IF NOT EXISTS {J}.{new} USING iceberg AS SELECT 1 AS x")
    tw.assert_same_table(new)


def _history(tw: Twins, catalog: str, ident: str) -> tuple[Any, ...]:
    """The current snapshot (position, parent's position), the snapshot log and the number of
    metadata log entries, snapshots by position (ids differ between twins)."""
    table = tw.java_table(catalog, ident)
    current = table.operations().current()
    order = [int(s.snapshotId()) for s in table.snapshots()]
    snapshot = table.currentSnapshot()
    head = None
    if snapshot is not None:
        parent = snapshot.parentId()
        head = (order.index(int(snapshot.snapshotId())), None if parent is None else order.index(int(parent)))
    log = [order.index(int(e.snapshotId())) for e in current.snapshotLog()]
    return head, log, len(list(current.previousFiles())), str(current.uuid()) != ""


@pytest.mark.one_spark_line
def test_replace_table(tw: Twins) -> None:
    name, src = tw.twin(), tw.twin()
    tw.setup(f"ALTER TABLE {J}.{name} CREATE TAG t1")
    firsts = [tw.history_ids(c, name)[0] for c in (J, K)]
    uuids = [str(tw.java_table(c, name).uuid()) for c in (J, K)]
    statements = [
        f"REPLACE TABLE {J}.{name} (region string, id bigint, extra int, st struct<b: string, c: int>) "
        "USING iceberg PARTITIONED BY (region, bucket(2, id)) TBLPROPERTIES ('k'='v')",
        f"CREATE OR REPLACE TABLE {J}.{name} USING iceberg PARTITIONED BY (bucket(4, id)) "
        f"TBLPROPERTIES ('format-version'='3', 'k'='w') AS SELECT id, region, CAST(amount AS bigint) AS amount, st "
        f"FROM {J}.{src} WHERE id > 1",
        f"CREATE OR REPLACE TABLE {J}.{name} (id bigint, region string) USING iceberg",
    ]
    for text in statements:
        tw.both(text)
        tw.assert_same_table(name)
        assert _history(tw, K, name) == _history(tw, J, name), text
        assert [str(tw.java_table(c, name).uuid()) for c in (J, K)] == uuids
        # Time travel to a snapshot from before the replace reads the old rows, in both engines.
        java_old = tw.java(f"SELECT * FROM {J}.{name} VERSION AS OF {firsts[0]}")
        assert_same_rows(tw.java(f"SELECT * FROM {K}.{name} VERSION AS OF {firsts[1]}"), java_old)
        assert_same_rows(tw.ice(f"SELECT * FROM {J}.{name} VERSION AS OF {firsts[1]}"), java_old)
    head, log, _, _ = _history(tw, K, name)
    assert head is None and len(log) == 3  # the bare replace left no current snapshot; the log stays

    # REPLACE of a missing table fails in both; CREATE OR REPLACE creates it.
    missing = f"db.r_{uuid.uuid4().hex[:8]}"
    with pytest.raises(Exception, match="TABLE_OR_VIEW_NOT_FOUND"):
        tw.java(f"REPLACE TABLE {J}.{missing} (id bigint) USING iceberg")
    with pytest.raises(NoSuchTableError, match="TABLE_OR_VIEW_NOT_FOUND"):
        tw.ice(f"REPLACE TABLE {J}.{missing} (id bigint) USING iceberg")
    tw.both(
        f"CREATE OR REPLACE TABLE {J}.{missing} USING iceberg PARTITIONED BY (region) AS SELECT id, region FROM {J}.{src}"
    )
    tw.assert_same_table(missing)
    assert _history(tw, K, missing) == _history(tw, J, missing)


def _normal(tw: Twins, name: str, rows: list[Any]) -> list[tuple[Any, ...]]:
    """Rows with the twin's location and current snapshot id replaced by placeholders."""
    out = []
    for catalog in (J, K):
        table = tw.java_table(catalog, name)
        current = table.currentSnapshot()
        out.append((str(table.location()), None if current is None else str(current.snapshotId())))
    text_rows = []
    for r in rows:
        values = []
        for v in r:
            if isinstance(v, str):
                for location, snapshot in out:
                    v = v.replace(location, "<location>")
                    if snapshot is not None:
                        v = v.replace(snapshot, "<snapshot>")
            values.append(v)
        text_rows.append(tuple(values))
    return text_rows


def _describe_column_statistics(tw: Twins) -> None:
    """`DESCRIBE EXTENDED t c` after each twin computed its own NDV sketches of two columns:
    Java's scan reports them only with the cost-based optimizer on and column stats reporting
    not switched off, for the snapshot the statistics file describes; the same rows from both."""
    table = tw.twin()
    tw.both(f"CALL {J}.system.compute_table_stats(table => '{table}', columns => array('id', 'region'))")

    def same(column: str) -> list[Any]:
        statement = f"DESCRIBE TABLE EXTENDED {J}.{table} {column}"
        java_rows = [tuple(r) for r in tw.java(statement).collect()]
        assert [tuple(r) for r in tw.ice(statement).collect()] == java_rows, statement
        return java_rows

    conf = tw.spark.conf
    conf.set("spark.sql.cbo.enabled", "true")
    try:
        assert ("distinct_count", "6") in same("id")
        assert ("distinct_count", "3") in same("region")
        assert len(same("REGION")) == 3  # Spark looks the statistics up by the name as spelled
        assert len(same("amount")) == 3  # no sketch of it
        conf.set("spark.sql.iceberg.report-column-stats", "false")
        assert len(same("id")) == 3
        conf.unset("spark.sql.iceberg.report-column-stats")
        tw.setup(f"INSERT INTO {J}.{table} VALUES (7, 'eu', 7, null)")  # a snapshot without statistics
        assert len(same("id")) == 3
    finally:
        conf.unset("spark.sql.cbo.enabled")
        conf.unset("spark.sql.iceberg.report-column-stats")
    assert len(same("region")) == 3  # the optimizer off (Spark's default)


def test_describe_and_show(tw: Twins) -> None:
    name = tw.twin(
        columns="id bigint NOT NULL COMMENT 'key', region string NOT NULL, amount int, st struct<a: int, b: string>",
        rest="PARTITIONED BY (region, bucket(4, id)) COMMENT 'the table' TBLPROPERTIES ('k'='v')",
    )
    tw.setup(f"ALTER TABLE {J}.{name} WRITE ORDERED BY region DESC NULLS LAST, truncate(2, region)")
    tw.setup(f"ALTER TABLE {J}.{name} SET IDENTIFIER FIELDS id")
    identity = tw.twin(rest="PARTITIONED BY (region)")
    plain = tw.twin()
    for table in (name, identity, plain):
        for text in (
            "DESCRIBE {t}",
            "DESCRIBE TABLE EXTENDED {t}",
            "SHOW TBLPROPERTIES {t}",
            "SHOW TBLPROPERTIES {t} ('k')",
            "SHOW TBLPROPERTIES {t} ('nope')",
            "SHOW CREATE TABLE {t}",
            "DESCRIBE {t} id",
            "DESC TABLE EXTENDED {t} REGION",
            "DESCRIBE {t} `st`",
        ):
            statement = text.format(t=f"{J}.{table}")
            java_df, ours_df = tw.java(statement), tw.ice(statement)
            assert ours_df.schema.simpleString() == java_df.schema.simpleString(), statement
            java_rows = _normal(tw, table, java_df.collect())
            ours_rows = _normal(tw, table, ours_df.collect())
            assert ours_rows == java_rows, statement
    # DESCRIBE EXTENDED's `Statistics` row on Spark 4.1 (Java's scan estimate): a table without
    # a snapshot, and an unpartitioned merge-on-read one whose deleted row still counts.
    empty = f"db.t_{uuid.uuid4().hex[:8]}"
    tw.setup(
        f"CREATE TABLE {J}.{empty} (id bigint, d decimal(20, 2), m map<string, double>, b binary) USING iceberg"
    )
    mor = tw.twin(rest="TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')")
    tw.setup(f"DELETE FROM {J}.{mor} WHERE id = 2")
    for table in (empty, mor):
        statement = f"DESCRIBE TABLE EXTENDED {J}.{table}"
        java_rows = _normal(tw, table, tw.java(statement).collect())
        assert _normal(tw, table, tw.ice(statement).collect()) == java_rows, statement
        if int(tw.spark.version.split(".")[0]) >= 4:
            assert (
                "Statistics",
                "0 bytes, 0 rows" if table == empty else "336 bytes, 6 rows",
                None,
            ) in java_rows
    _describe_column_statistics(tw)
    # A nested column, an unknown one and a PARTITION clause: refused by both, as Spark refuses them.
    for text, refusal in (
        ("DESCRIBE {t} st.a", "does not support nested column: st.a"),
        ("DESCRIBE {t} nope", "UNRESOLVED_COLUMN"),
        ("DESCRIBE {t} PARTITION (region = 'eu')", "does not support partition for v2 tables"),
    ):
        statement = text.format(t=f"{J}.{name}")
        with pytest.raises(Exception, match=refusal):
            tw.java(statement).collect()
        with pytest.raises(ValidationError, match=refusal):
            tw.ice(statement)
