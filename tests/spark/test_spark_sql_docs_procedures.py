# ruff: noqa: E501
"""The `CALL` examples of Iceberg's "Spark Procedures" documentation page
(`docs/docs/spark-procedures.md`, the page of Iceberg's main branch that 1.12's runtime
implements), as the page writes them, in its order, run by Iceberg Java's Spark SQL on one
table and by `icefloe.spark.sql` on its twin (`support.ddl_twins`): each call's result rows
equal Java's (snapshot ids by their position in each twin's history, file paths by name) and
the twins alike after it, or both refused it and icefloe's twin is unchanged.

The page's `catalog_name` / `hive_prod` / `spark_catalog` is the twins' catalog, its
`db.sample` / `my_table` a fresh twin table per section; its snapshot ids (`1`, `123`) are
each twin's own snapshots by position (`{s1}`), its `tablelocation` each twin's location.
Examples of the page twin-tested elsewhere, statement form by statement form: `snapshot` and
`migrate` (`tests/write/test_migration.py`), `add_files`, `register_table`, `ancestors_of`,
`create_changelog_view` (`test_spark_sql_ddl.py`), `compute_table_stats` /
`compute_partition_stats` (`tests/maintenance/test_table_statistics.py`,
`test_partition_statistics.py`), `rewrite_table_path` (`tests/maintenance/test_rewrite_table_path.py`).
The PySpark 3.5 pass runs this page.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from icefloe.exceptions import NotSupportedError, ValidationError
from support.ddl_twins import Twins

pytestmark = [pytest.mark.spark, pytest.mark.interop, pytest.mark.one_spark_line]

J, K = "docprj", "docprk"  # this file's twin catalogs (Spark keeps a catalog once loaded)
PAGE_CATALOGS = ("catalog_name", "hive_prod", "spark_catalog")


@pytest.fixture(scope="module")
def tw(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return Twins(spark, tmp_path_factory.mktemp("sqldocsprocedures"), J, K)


def _page(text: str, ident: str, table_names: tuple[str, ...]) -> str:
    """The page's statement on the twins: its catalog the twins', its table `ident`; other
    `{...}` placeholders stay for `Twins.call`; without the page's `;` (a SQL shell's
    terminator, which `spark.sql` refuses)."""
    text = text.strip().removesuffix(";")
    for catalog in PAGE_CATALOGS:
        text = text.replace(f"{catalog}.system.", f"{J}.system.")
    for name in table_names:
        text = text.replace(f"'{name}'", "'{tn}'")
    return text


def _call(tw: Twins, ident: str, text: str, names: tuple[str, ...], **kw: Any) -> tuple[list[Any], list[Any]]:
    return tw.call(ident, _page(text, ident, names), **kw)


def _both_refuse(
    tw: Twins, ident: str, text: str, names: tuple[str, ...], java_match: str, ice_match: str = "."
) -> None:
    """The page's statement refused by Java and by icefloe, the twins unchanged and alike
    (`{s1}`: Java's second snapshot, a number that is not icefloe's: a string either way)."""
    statement = _page(text, ident, names).format(tn=ident, s1=tw.history_ids(J, ident)[1])
    tw.refused(ident, statement, java_match, Exception, ice_match)


def _twin(tw: Twins, rest: str = "", rows: int = 2) -> str:
    """A fresh `db.sample_<hex>` in both twins with `rows` snapshots of one row each."""
    ident = f"db.sample_{uuid.uuid4().hex[:8]}"
    tw.setup(
        f"CREATE TABLE {J}.{ident} (id bigint, name string, category string, c1 int, c2 int) USING iceberg {rest}"
    )
    for i in range(rows):
        tw.setup(f"INSERT INTO {J}.{ident} VALUES ({i}, 'n{i}', 'cat{i % 2}', {i}, {10 - i})")
    return ident


def test_snapshot_management(tw: Twins) -> None:
    """rollback_to_snapshot, rollback_to_timestamp, set_current_snapshot (an id and a tag),
    cherrypick_snapshot (positional and named), publish_changes (positional and named) and
    fast_forward, as the page writes them."""
    names = ("db.sample", "my_table")
    ident = _twin(tw, "TBLPROPERTIES ('write.wap.enabled'='true')", rows=3)  # S0, S1, S2
    _call(tw, ident, "CALL catalog_name.system.rollback_to_snapshot('db.sample', {s1});", names)
    # The page's 2021 time is before every snapshot: both refuse it; a time of this table's rolls back.
    _both_refuse(
        tw,
        ident,
        "CALL catalog_name.system.rollback_to_timestamp('db.sample', TIMESTAMP '2021-06-30 00:00:00.000')",
        names,
        "no valid snapshot older than",
    )
    _call(tw, ident, "CALL catalog_name.system.rollback_to_timestamp('db.sample', {t1})", names)
    _call(tw, ident, "CALL catalog_name.system.set_current_snapshot('db.sample', {s2})", names)
    for c in (J, K):
        tw.java(
            f"ALTER TABLE {c}.{ident} CREATE TAG s1 AS OF VERSION {tw.history_ids(c, ident)[0]}"
        ).collect()
    _call(
        tw, ident, "CALL catalog_name.system.set_current_snapshot(table => 'db.sample', ref => 's1')", names
    )
    # Cherry-picks of S1 and S2 onto S0 (appends: fast-forwarded, as Java does when the parent is current).
    _call(tw, ident, "CALL catalog_name.system.cherrypick_snapshot('my_table', {s1})", names)
    _call(
        tw,
        ident,
        "CALL catalog_name.system.cherrypick_snapshot(snapshot_id => {s2}, table => 'my_table' )",
        names,
    )
    # Two staged WAP writes (Java stages them on both twins), published by each engine.
    for wap in ("wap_id_1", "wap_id_2"):
        tw.java(f"SET spark.wap.id = {wap}").collect()
        try:
            tw.setup(f"INSERT INTO {J}.{ident} VALUES (9, '{wap}', 'w', 9, 9)")
        finally:
            tw.java("RESET spark.wap.id").collect()
    _call(tw, ident, "CALL catalog_name.system.publish_changes('my_table', 'wap_id_1');", names)
    _call(
        tw,
        ident,
        "CALL catalog_name.system.publish_changes(wap_id => 'wap_id_2', table => 'my_table');",
        names,
    )
    tw.setup(f"ALTER TABLE {J}.{ident} CREATE BRANCH `audit-branch`")
    tw.setup(f"INSERT INTO {J}.{ident}.`branch_audit-branch` VALUES (10, 'a', 'x', 1, 1)")
    _call(tw, ident, "CALL catalog_name.system.fast_forward('my_table', 'main', 'audit-branch');", names)
    tw.assert_same_table(ident)


def _age(folder: Path, days: float) -> list[Path]:
    """An orphan file in `folder`, its modification time `days` ago (older than the
    procedure's default of three days)."""
    folder.mkdir(parents=True, exist_ok=True)
    orphan = folder / "orphan-from-a-failed-write.parquet"
    orphan.write_bytes(b"PAR1 not a table file")
    then = time.time() - days * 86400
    os.utime(orphan, (then, then))
    return [orphan]


def test_metadata_management(tw: Twins) -> None:
    """expire_snapshots (a time and `retain_last`, `snapshot_ids`) and every remove_orphan_files
    example of the page: a dry run, a `location`, the prefix options; each twin with one
    orphan four days old in its data folder; `file_list_view` with a view of each twin's files
    (the page builds it in Java), and views without the columns it needs."""
    names = ("db.sample",)
    ident = _twin(tw, rows=3)
    _call(
        tw,
        ident,
        "CALL hive_prod.system.expire_snapshots('db.sample', TIMESTAMP '2021-06-30 00:00:00.000', 100);",
        names,
    )
    _call(
        tw,
        ident,
        "CALL hive_prod.system.expire_snapshots(table => 'db.sample', snapshot_ids => ARRAY({s0}));",
        names,
    )

    def location(c: str) -> str:
        return str(tw.java_table(c, ident).location()).removeprefix("file:")

    def orphans() -> None:
        for c in (J, K):
            _age(Path(location(c)) / "data", 4)

    def by_name(rows: list[Any]) -> list[str]:
        return sorted(Path(r.orphan_file_location).name for r in rows)

    orphans()
    java, ours = _call(
        tw,
        ident,
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', dry_run => true);",
        names,
        compare=(),
    )
    assert by_name(ours) == by_name(java) == ["orphan-from-a-failed-write.parquet"]
    java, ours = _call(
        tw,
        ident,
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', location => '{tablelocation}/data');",
        names,
        compare=(),
        tablelocation=(location(J), location(K)),
    )
    assert by_name(ours) == by_name(java) == ["orphan-from-a-failed-write.parquet"]
    assert not any(
        (Path(location(c)) / "data" / "orphan-from-a-failed-write.parquet").exists() for c in (J, K)
    )
    # The page's `files_view`: each twin's files as a listing would give them (paths under
    # the table's location as its metadata spells it), a hidden and a young orphan, and a file
    # of another folder. Java filters by that prefix and age and compares the rest.
    orphans()
    rows = []
    for c in (J, K):
        spelled = str(tw.java_table(c, ident).location())
        root = Path(location(c))
        hidden = root / "data" / "_hidden-orphan.parquet"
        hidden.write_bytes(b"x")
        young = root / "data" / "young-orphan.parquet"
        young.write_bytes(b"x")
        os.utime(hidden, (time.time() - 5 * 86400,) * 2)
        for f in sorted(p for p in root.rglob("*") if p.is_file()):
            modified = datetime.fromtimestamp(f.stat().st_mtime, tz=timezone.utc)
            rows.append((spelled + "/" + str(f.relative_to(root)), modified))
    rows.append(("file:/elsewhere/orphan.parquet", datetime(2020, 1, 1, tzinfo=timezone.utc)))
    tw.spark.createDataFrame(rows, "file_path string, last_modified timestamp").createOrReplaceTempView(
        "files_view"
    )
    java, ours = _call(
        tw,
        ident,
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', file_list_view => 'files_view');",
        names,
        compare=(),
    )
    assert by_name(ours) == by_name(java) == ["_hidden-orphan.parquet", "orphan-from-a-failed-write.parquet"]
    for c in (J, K):
        data = Path(location(c)) / "data"
        assert not (data / "_hidden-orphan.parquet").exists() and (data / "young-orphan.parquet").exists()
        (data / "young-orphan.parquet").unlink()
    # A view without the columns Java requires is refused alike.
    for columns, java_match, ice_match in (
        (
            "path string, last_modified timestamp",
            "file_path does not exist",
            "file_path does not exist. Available: path, last_modified",
        ),
        (
            "file_path int, last_modified timestamp",
            "Invalid file_path column: IntegerType is not a string",
            "Invalid file_path column: IntegerType is not a string",
        ),
        (
            "file_path string, last_modified string",
            "Invalid last_modified column: StringType is not a timestamp",
            "Invalid last_modified column: StringType is not a timestamp",
        ),
    ):
        tw.spark.createDataFrame([], columns).createOrReplaceTempView("bad_files_view")
        statement = _page(
            "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', file_list_view => 'bad_files_view')",
            ident,
            names,
        ).format(tn=ident)
        tw.refused(ident, statement, java_match, ValidationError, ice_match)
    for text in (
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', prefix_mismatch_mode => 'IGNORE');",
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', prefix_mismatch_mode => 'DELETE');",
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', equal_schemes => map('file', 'file1'));",
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', equal_authorities => map('ns1', 'ns2'));",
        "CALL catalog_name.system.remove_orphan_files(table => 'db.sample', prefix_listing => true);",
    ):
        orphans()
        java, ours = _call(tw, ident, text, names, compare=())
        assert by_name(ours) == by_name(java) == ["orphan-from-a-failed-write.parquet"], text
    tw.assert_same_table(ident)


def _new_manifest_partitions(tw: Twins, catalog: str, ident: str) -> list[list[str]]:
    """The categories of the entries of each data manifest the twin's current snapshot added,
    sorted."""
    jvm = tw.spark._jvm
    table = tw.java_table(catalog, ident)
    snapshot = table.currentSnapshot()
    out = []
    for manifest in snapshot.dataManifests(table.io()):
        if int(manifest.snapshotId()) != int(snapshot.snapshotId()):
            continue
        reader = jvm.org.apache.iceberg.ManifestFiles.read(manifest, table.io(), table.specs())
        it = reader.iterator()
        cats = []
        while it.hasNext():
            # PartitionData{category=cat0, id_bucket=1}
            cats.append(str(it.next().partition().toString()).split("category=")[1].split(",")[0])
        reader.close()
        out.append(sorted(cats))
    return sorted(out)


def test_data_and_manifest_rewrites(tw: Twins) -> None:
    """rewrite_data_files (bin-pack, a sort order, z-order, options, `where`),
    rewrite_manifests (`spec_id`, `sort_by`: the new manifests hold Java's entries) and rewrite_position_delete_files (options), as the
    page writes them, on a merge-on-read table of six small files with position deletes."""
    names = ("db.sample",)
    ident = _twin(
        tw,
        "PARTITIONED BY (category) TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')",
        rows=6,
    )
    tw.setup(f"DELETE FROM {J}.{ident} WHERE id IN (1, 4)")
    counts = ("rewritten_data_files_count", "added_data_files_count", "failed_data_files_count")
    for text in (
        "CALL catalog_name.system.rewrite_data_files('db.sample');",
        "CALL catalog_name.system.rewrite_data_files(table => 'db.sample', options => map('min-input-files', '2', 'remove-dangling-deletes', 'true'));",
        "CALL catalog_name.system.rewrite_data_files(table => 'db.sample', where => 'id = 3 and name = \"foo\"');",
    ):
        _call(tw, ident, text, names, compare=counts)
    tw.assert_same_table(ident)
    # The page's `spec_id => 1`: a second spec, with two commits of files in it (ids 20 and
    # 24: buckets 1 and 0).
    tw.setup(f"ALTER TABLE {J}.{ident} ADD PARTITION FIELD bucket(2, id)")
    for i in (20, 24):
        tw.setup(f"INSERT INTO {J}.{ident} VALUES ({i}, 'n{i}', 'cat0', {i}, {i})")
    for text in (
        "CALL catalog_name.system.rewrite_manifests('db.sample');",
        "CALL catalog_name.system.rewrite_manifests(table => 'db.sample', spec_id => 1);",
    ):
        _call(tw, ident, text, names)
    # `sort_by` (1.12): the entries clustered by `category` alone. A second manifest of spec 1
    # and a target size that makes two: by the whole tuple the three files would be cut
    # (cat0, 0) | (cat0, 1), (cat1, 1); by `category`, cat0's two | cat1's one.
    tw.setup(f"INSERT INTO {J}.{ident} VALUES (22, 'n22', 'cat1', 22, 22)")
    (total,) = tw.java(
        f"SELECT sum(length) FROM {J}.{ident}.manifests WHERE partition_spec_id = 1 AND content = 0"
    ).first()
    tw.setup(
        f"ALTER TABLE {J}.{ident} SET TBLPROPERTIES ('commit.manifest.target-size-bytes'='{int(total / 1.5)}')"
    )
    _call(
        tw,
        ident,
        "CALL catalog_name.system.rewrite_manifests(table => 'db.sample', sort_by => array('category'));",
        names,
    )
    layouts = [_new_manifest_partitions(tw, c, ident) for c in (J, K)]
    assert layouts[0] == layouts[1] == [["cat0", "cat0"], ["cat1"]], layouts
    bad = "CALL catalog_name.system.rewrite_manifests(table => 'db.sample', sort_by => array('nope'))"
    _both_refuse(
        tw,
        ident,
        bad,
        names,
        "were not found in current partition spec",
        "were not found in current partition spec",
    )
    tw.setup(f"DELETE FROM {J}.{ident} WHERE id = 2")
    tw.setup(f"DELETE FROM {J}.{ident} WHERE id = 0")
    for text in (
        "CALL catalog_name.system.rewrite_position_delete_files('db.sample');",
        "CALL catalog_name.system.rewrite_position_delete_files(table => 'db.sample', options => map('rewrite-all', 'true'));",
        "CALL catalog_name.system.rewrite_position_delete_files(table => 'db.sample', options => map('min-input-files','2'));",
    ):
        _call(tw, ident, text, names, compare=("rewritten_delete_files_count", "added_delete_files_count"))
    tw.assert_same_table(ident)
    # The sort and z-order examples: both engines rewrite, and read the same rows after.
    for text in (
        "CALL catalog_name.system.rewrite_data_files(table => 'db.sample', strategy => 'sort', sort_order => 'id DESC NULLS LAST,name ASC NULLS FIRST');",
        "CALL catalog_name.system.rewrite_data_files(table => 'db.sample', strategy => 'sort', sort_order => 'zorder(c1,c2)');",
    ):
        _call(tw, ident, text, names, compare=("failed_data_files_count",))
    tw.assert_same_table(ident)


def test_history_changelog_statistics_and_paths(tw: Twins) -> None:
    """ancestors_of (three forms), every create_changelog_view example and the page's queries
    of the view, compute_table_stats and compute_partition_stats (the page's `'snap1'` a
    snapshot id), and the page's register_table and rewrite_table_path examples, which name
    files and prefixes of another system: both engines refuse them here."""
    names = ("db.tbl", "my_table", "db.my_table")
    ident = _twin(tw, "PARTITIONED BY (category) TBLPROPERTIES ('format-version'='2')", rows=3)
    tw.setup(f"INSERT INTO {J}.{ident} VALUES (5, 'n5', 'cat1', 5, 5), (7, 'n7', 'cat1', 7, 7)")  # one file
    tw.setup(f"UPDATE {J}.{ident} SET name = 'renamed' WHERE id = 5")  # copy-on-write: id 7 carried over
    tw.setup(f"DELETE FROM {J}.{ident} WHERE id = 2")  # S0..S5
    for text in (
        "CALL spark_catalog.system.ancestors_of('db.tbl');",
        "CALL spark_catalog.system.ancestors_of('db.tbl', {s1});",
        "CALL spark_catalog.system.ancestors_of(snapshot_id => {s1}, table => 'db.tbl');",
    ):
        _call(tw, ident, text, names, compare=("snapshot_id",))

    leaf = ident.split(".")[1]
    for text, queries in (
        (
            "CALL spark_catalog.system.create_changelog_view(\n  table => 'db.tbl',\n  options => map('start-snapshot-id','{s1}','end-snapshot-id', '{s4}')\n);",
            [
                "SELECT * FROM tbl_changes;",
                "SELECT * FROM tbl_changes where _change_type = 'INSERT' AND id = 5 ORDER BY _change_ordinal;",
            ],
        ),
        (
            "CALL spark_catalog.system.create_changelog_view(\n  table => 'db.tbl',\n  options => map('start-timestamp','{ms1}','end-timestamp', '{ms4}'),\n  changelog_view => 'my_changelog_view'\n);",
            ["SELECT * FROM my_changelog_view"],
        ),
        (
            "CALL spark_catalog.system.create_changelog_view(\n  table => 'db.tbl',\n  options => map('start-snapshot-id','{s1}','end-snapshot-id', '{s3}'),\n  identifier_columns => array('id', 'name')\n);",
            ["SELECT * FROM tbl_changes;"],
        ),
        (
            "CALL spark_catalog.system.create_changelog_view(\n  table => 'db.tbl',\n  options => map('end-snapshot-id', '{s5}'),\n  net_changes => true\n);",
            ["SELECT * FROM tbl_changes;"],
        ),
    ):
        seen = {}
        for catalog, side in ((J, 0), (K, 1)):
            ids, times = tw.history_ids(catalog, ident), tw.history_times(catalog, ident)
            statement = _page(text, ident, names).format(
                tn=ident, s1=ids[1], s3=ids[3], s4=ids[4], s5=ids[5], ms1=times[1] - 1, ms4=times[4]
            )
            result = (tw.java if side == 0 else tw.ice)(statement)
            views = [
                tw.changelog_rows(catalog, ident, q.rstrip(";").replace("tbl_changes", f"`{leaf}_changes`"))
                for q in queries
            ]
            seen[catalog] = (result.schema.simpleString(), [tuple(r) for r in result.collect()], views)
        assert seen[K] == seen[J], text
        assert all(seen[J][2]), f"an empty changelog: {text}"
    # The page's `SELECT * FROM spark_catalog.db.tbl.changes`: every change of the table's
    # history, the rows the copy-on-write UPDATE wrote again unchanged included.
    query = _page("SELECT * FROM spark_catalog.db.tbl.changes;", ident, names).replace(
        "spark_catalog.db.tbl", f"{J}.{ident}"
    )
    java_changes = tw.changelog_rows(J, ident, query)
    tw.ice(query).createOrReplaceTempView("ice_changes")
    assert tw.changelog_rows(K, ident, "SELECT * FROM ice_changes") == java_changes
    with pytest.raises(NotSupportedError, match="changes with time travel"):  # not read at another snapshot
        tw.ice(f"{query} VERSION AS OF {tw.history_ids(K, ident)[1]}")
    carried = [r for r in java_changes if "'id': 7" in r and "'_commit_snapshot_id': 4" in r]
    assert len(carried) == 2, java_changes  # its DELETE and INSERT in the UPDATE's snapshot

    # The page's `snapshot_id => 'snap1'` is a string, which Java's procedures refuse for a
    # long argument (`Wrong arg type for snapshot_id`), as icefloe does; with the id a number
    # both compute the snapshot's statistics.
    stats = (
        "CALL catalog_name.system.compute_table_stats('my_table');",
        "CALL catalog_name.system.compute_table_stats(table => 'my_table', snapshot_id => 'snap1' );",
        "CALL catalog_name.system.compute_table_stats(table => 'my_table', snapshot_id => 'snap1', columns => array('id', 'name'));",
        "CALL catalog_name.system.compute_partition_stats('my_table');",
        "CALL catalog_name.system.compute_partition_stats(table => 'my_table', snapshot_id => 'snap1');",
    )
    for text in stats:
        if "'snap1'" in text:
            wrong = "Wrong arg type for snapshot_id"
            _both_refuse(tw, ident, text.replace("'snap1'", "'{s1}'"), names, wrong, wrong)
            text = text.replace("'snap1'", "{s1}")
        java, ours = _call(tw, ident, text, names, compare=())  # the files' paths are each twin's own
        assert len(java) == len(ours) == 1 and java[0][0] and ours[0][0], text

    # The page's metadata file and hdfs:// / s3a:// prefixes are not this table's: refused by both.
    _both_refuse(
        tw,
        ident,
        "CALL spark_catalog.system.register_table(\n  table => 'db.tbl',\n  metadata_file => 'path/to/metadata/file.json'\n);",
        names,
        ".",
        "(?i)register",
    )
    prefix_errors = "does not start with|Cannot find provided version file"
    for text in (
        "CALL catalog_name.system.rewrite_table_path(\n    table => 'db.my_table',\n    source_prefix => 'hdfs://nn:8020/path/to/source_table',\n    target_prefix => 's3a://bucket/prefix/db.db/my_table'\n);",
        "CALL catalog_name.system.rewrite_table_path(\n    table => 'db.my_table',\n    source_prefix => 's3a://bucketOne/prefix/db.db/my_table',\n    target_prefix => 's3a://bucketTwo/prefix/db.db/my_table',\n    start_version => 'v2.metadata.json',\n    end_version => 'v20.metadata.json',\n    staging_location => 's3a://bucketStaging/my_table'  \n);",
    ):
        _both_refuse(tw, ident, text, names, prefix_errors, prefix_errors)
