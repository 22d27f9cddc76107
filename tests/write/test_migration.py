"""`snapshot` and `migrate` of Parquet data into Iceberg (`icefloe.migration`, and `CALL
system.snapshot` / `system.migrate` through `icefloe.spark.sql`) against Iceberg Java 1.12's
`snapshot` procedure on the same Spark session-catalog table:

- the same data files with the same partition tuples (from the Hive-style folders: ints,
  strings with characters Spark escapes in paths, Hive's null), the same rows read by both
  engines, the same schema and identity spec, `snapshot=true` / `gc.enabled=false` and a name
  mapping on both, Java's result row;
- a Parquet folder given by path (schema from a footer, partition types inferred as Spark);
- `migrate` of an external table: the Spark table renamed to its backup, the icefloe table
  at its location over its files, Java reading it; `drop_backup`;
- refusals that write nothing: a snapshot inside its source, a managed table's migrate, a
  missing source, a snapshot named as its source, a registered partition whose folder is gone.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from icefloe.exceptions import NotSupportedError, ValidationError
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

ROWS = (
    "SELECT id, CONCAT('n', CAST(id AS STRING)) AS name, CAST(id % 3 AS INT) AS p, "
    "CASE id % 4 WHEN 0 THEN 'a/b' WHEN 1 THEN 'x=y %' WHEN 2 THEN NULL ELSE 'plain' END AS s "
    "FROM range(0, 40, 1, 1) AS r(id)"
)


def _source(spark: Any, tmp_path: Path, name: str, external: bool = True) -> str:
    """A Parquet table of Spark's session catalog, partitioned by (p int, s string)."""
    location = f"LOCATION '{tmp_path / name}'" if external else ""
    spark.sql(
        f"CREATE TABLE default.{name} (id bigint, name string, p int, s string) USING parquet "
        f"PARTITIONED BY (p, s) {location}"
    )
    spark.sql(f"INSERT INTO default.{name} {ROWS}")
    return name


def _files(oracle: Oracle, qualified: str) -> dict[str, tuple[Any, ...]]:
    rows = oracle.sql(f"SELECT file_path, partition.p, partition.s, record_count FROM {qualified}.files")
    return {str(r[0]).removeprefix("file:"): tuple(r[1:]) for r in rows}


def _rows(oracle: Oracle, qualified: str) -> list[tuple[Any, ...]]:
    return sorted(
        (tuple(r) for r in oracle.sql(f"SELECT id, name, p, s FROM {qualified}")), key=lambda r: r[0]
    )


def test_snapshot_is_javas_snapshot(oracle: Oracle, catalog: Any, spark: Any, tmp_path: Path) -> None:
    import icefloe.spark

    src = _source(spark, tmp_path, new_table_name("src").split(".")[-1])
    java, ours = new_table_name("snap_java"), new_table_name("snap_ours")
    java_rows = spark.sql(
        f"CALL {oracle.catalog}.system.snapshot(source_table => 'spark_catalog.default.{src}', "
        f"table => '{oracle.catalog}.{java}')"
    )
    mine = icefloe.spark.sql(
        spark,
        f"CALL ice.system.snapshot(source_table => 'spark_catalog.default.{src}', table => '{ours}')",
        catalogs={"ice": catalog},
    )
    assert mine.schema == java_rows.schema
    assert [tuple(r) for r in mine.collect()] == [tuple(r) for r in java_rows.collect()] == [(12,)]
    # The same files, partition tuples and counts: the source's, where they are.
    theirs, got = _files(oracle, oracle.qualified(java)), _files(oracle, oracle.qualified(ours))
    assert got == theirs and len(got) == 12
    assert all(path.startswith(str(tmp_path)) for path in got)
    assert {v[1] for v in got.values()} == {"a/b", "x=y %", None, "plain"}
    # Both engines read both tables alike, and as Spark reads the source.
    expected = _rows(oracle, f"spark_catalog.default.{src}")
    assert _rows(oracle, oracle.qualified(java)) == _rows(oracle, oracle.qualified(ours)) == expected
    table = catalog.load_table(ours)
    assert sorted(table.scan().to_arrow().to_pylist(), key=lambda r: r["id"]) == [
        dict(zip(("id", "name", "p", "s"), r)) for r in expected
    ]
    jtable = oracle.java_table(java)
    assert str(table.schema().as_arrow()) == str(catalog.load_table(java).schema().as_arrow())
    assert [(f.name, str(f.transform)) for f in table.spec().fields] == [("p", "identity"), ("s", "identity")]
    assert str(jtable.spec().fields().get(0).transform()) == "identity"
    for props in (table.properties, catalog.load_table(java).properties):
        assert props["snapshot"] == "true" and props["gc.enabled"] == "false"
        assert "schema.name-mapping.default" in props
    # gc.enabled=false: expiry refuses, as Java's does, so no source file can be deleted.
    with pytest.raises(ValidationError, match="GC is disabled"):
        table.maintenance.expire_snapshots(older_than=2**62)


@pytest.mark.one_spark_line  # icefloe's own listing and footers; Spark only writes the folder
def test_a_parquet_folder_by_path(oracle: Oracle, catalog: Any, spark: Any, tmp_path: Path) -> None:
    from icefloe.migration import parquet_folder, snapshot_table

    folder = tmp_path / "folder"
    spark.sql(ROWS).write.partitionBy("p", "s").parquet(str(folder))
    assert (folder / "_SUCCESS").exists()
    source = parquet_folder(str(folder))
    assert source.partition_columns == ("p", "s")
    assert [str(source.schema.field(c).type) for c in ("id", "name", "p", "s")] == [
        "int64",
        "string",
        "int32",  # inferred from the folder names, as Spark infers them
        "string",
    ]
    name = new_table_name("folder_snap")
    result = snapshot_table(catalog, name, source)
    assert result.imported_files_count == len(list(folder.rglob("*.parquet")))
    read = sorted(tuple(r) for r in spark.read.parquet(str(folder)).select("id", "name", "p", "s").collect())
    assert _rows(oracle, oracle.qualified(name)) == read


def test_migrate_an_external_table(oracle: Oracle, spark: Any, tmp_path: Path) -> None:
    import icefloe
    import icefloe.spark

    cat = icefloe.load_catalog(
        "mig", type="sql", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "w")
    )
    cat.create_namespace("default")
    src = _source(spark, tmp_path, new_table_name("mig").split(".")[-1])
    expected = _rows(oracle, f"spark_catalog.default.{src}")
    rows = icefloe.spark.sql(
        spark, f"CALL m.system.migrate('spark_catalog.default.{src}')", catalogs={"m": cat}
    ).collect()
    assert [tuple(r) for r in rows] == [(12,)]
    assert not spark.catalog.tableExists(f"default.{src}")
    assert spark.catalog.tableExists(f"default.{src}_BACKUP_")
    table = cat.load_table(("default", src))
    assert table.location().removeprefix("file:").rstrip("/") == str(tmp_path / src)
    assert table.properties["migrated"] == "true"
    # Java reads the migrated table (by its metadata file) with the source's rows.
    java = spark.read.format("iceberg").load(table.metadata_location)
    assert sorted(tuple(r) for r in java.select("id", "name", "p", "s").collect()) == expected
    # drop_backup drops the Spark table, not its files (an external table's).
    src2 = _source(spark, tmp_path, new_table_name("mig2").split(".")[-1])
    icefloe.spark.sql(
        spark, f"CALL m.system.migrate(table => 'default.{src2}', drop_backup => true)", catalogs={"m": cat}
    ).collect()
    assert not spark.catalog.tableExists(f"default.{src2}_BACKUP_")
    assert len(cat.load_table(("default", src2)).scan().to_arrow()) == 40


def test_refusals_write_nothing(oracle: Oracle, catalog: Any, spark: Any, tmp_path: Path) -> None:
    import icefloe.spark
    from icefloe.migration import parquet_folder, snapshot_table

    src = _source(spark, tmp_path, new_table_name("bad").split(".")[-1])
    folder = tmp_path / src
    before = sorted(p for p in folder.rglob("*") if p.is_file())
    # A snapshot inside its source's folder (Java's message).
    with pytest.raises(ValidationError, match="would overlap with source table location"):
        snapshot_table(
            _sql_catalog(tmp_path), "db.inside", parquet_folder(str(folder)), location=str(folder / "in")
        )
    assert sorted(p for p in folder.rglob("*") if p.is_file()) == before
    # A managed table cannot be migrated (Spark would move its files); nothing renamed.
    managed = _source(spark, tmp_path, new_table_name("managed").split(".")[-1], external=False)
    try:
        with pytest.raises(NotSupportedError, match="EXTERNAL tables"):
            icefloe.spark.sql(
                spark, f"CALL ice.system.migrate('default.{managed}')", catalogs={"ice": catalog}
            )
        assert spark.catalog.tableExists(f"default.{managed}")
    finally:  # a managed table's files are in Spark's warehouse folder (the working directory)
        spark.sql(f"DROP TABLE default.{managed}")
    # A missing source; a snapshot named as its source.
    with pytest.raises(ValidationError, match="does not exist"):
        icefloe.spark.sql(
            spark, "CALL ice.system.snapshot('default.nope_nope', 'db.x_nope')", catalogs={"ice": catalog}
        )
    with pytest.raises(ValidationError, match="same name as the source"):
        icefloe.spark.sql(
            spark, f"CALL ice.system.snapshot('default.{src}', 'default.{src}')", catalogs={"ice": catalog}
        )
    # A registered partition whose folder is gone: refused unless ignore_missing_files.
    gone = sorted(d for d in folder.iterdir() if d.is_dir())[0]
    shutil.rmtree(gone)
    name = new_table_name("gone")
    with pytest.raises(ValidationError, match="ignore_missing_files"):
        icefloe.spark.sql(
            spark, f"CALL ice.system.snapshot('default.{src}', '{name}')", catalogs={"ice": catalog}
        )
    assert not catalog.table_exists(name)
    rows = icefloe.spark.sql(
        spark,
        f"CALL ice.system.snapshot(source_table => 'default.{src}', table => '{name}', "
        "ignore_missing_files => true)",
        catalogs={"ice": catalog},
    ).collect()
    assert rows[0][0] == 12 - 4  # the 4 files of the partition p=0 are gone


def _sql_catalog(tmp_path: Path) -> Any:
    import icefloe

    cat = icefloe.load_catalog(
        "x", type="sql", uri=f"sqlite:///{tmp_path / 'x.db'}", warehouse=str(tmp_path / "xw")
    )
    cat.create_namespace("db")
    return cat


def _twins(oracle: Oracle, partitioned_by: str = "PARTITIONED BY (p, s)") -> tuple[str, str]:
    names = new_table_name("add_java"), new_table_name("add_ours")
    for name in names:
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id bigint, name string, p int, s string) USING iceberg "
            f"{partitioned_by}"
        )
    return names


def _call_both(oracle: Oracle, catalog: Any, spark: Any, java: str, ours: str, rest: str) -> tuple[Any, Any]:
    import icefloe.spark

    theirs = spark.sql(f"CALL {oracle.catalog}.system.add_files(table => '{java}', {rest})").collect()
    mine = icefloe.spark.sql(
        spark, f"CALL ice.system.add_files(table => '{ours}', {rest})", catalogs={"ice": catalog}
    ).collect()
    return theirs, mine


def test_add_files_of_a_partitioned_folder_and_table_as_javas(
    oracle: Oracle, catalog: Any, spark: Any, tmp_path: Path
) -> None:
    """`add_files` into a partitioned table from a Hive-style folder (with and without a
    `partition_filter`) and from a session-catalog table: the same files with the same
    partition tuples as Java's procedure adds, the same rows, the same added count."""
    folder = tmp_path / "hive"
    spark.sql(ROWS).repartition(1).write.partitionBy("p", "s").parquet(str(folder))
    java, ours = _twins(oracle)
    theirs, mine = _call_both(
        oracle,
        catalog,
        spark,
        java,
        ours,
        f"source_table => '`parquet`.`{folder}`', partition_filter => map('p', '1')",
    )
    assert mine[0][0] == theirs[0][0] == 4
    assert _files(oracle, oracle.qualified(ours)) == _files(oracle, oracle.qualified(java))
    theirs, mine = _call_both(
        oracle,
        catalog,
        spark,
        java,
        ours,
        f"source_table => '`parquet`.`{folder}`', check_duplicate_files => false",
    )
    assert mine[0][0] == theirs[0][0] == 12
    got = _files(oracle, oracle.qualified(ours))
    assert got == _files(oracle, oracle.qualified(java)) and len(got) == 12
    assert _rows(oracle, oracle.qualified(ours)) == _rows(oracle, oracle.qualified(java))
    # From a table of Spark's session catalog (its registered partitions).
    src = _source(spark, tmp_path, new_table_name("add_src").split(".")[-1])
    java2, ours2 = _twins(oracle)
    theirs, mine = _call_both(
        oracle, catalog, spark, java2, ours2, f"source_table => 'spark_catalog.default.{src}'"
    )
    assert mine[0][0] == theirs[0][0] == 12
    assert _files(oracle, oracle.qualified(ours2)) == _files(oracle, oracle.qualified(java2))
    assert _rows(oracle, oracle.qualified(ours2)) == _rows(oracle, f"spark_catalog.default.{src}")


@pytest.mark.parametrize(
    ("partitioned_by", "rest", "message"),
    [
        ("PARTITIONED BY (s, p)", "", "Cannot find a partition spec in Iceberg table"),
        ("PARTITIONED BY (p, s)", ", partition_filter => map('name', 'x')", "not partitioned: \\[name\\]"),
        (
            "PARTITIONED BY (p, s)",
            ", partition_filter => map('p', '7')",
            "Cannot find any matching partitions",
        ),
        ("", "", "that matches the partition columns \\(\\[p, s\\]\\) in input table"),
    ],
)
def test_add_files_refusals_are_javas(
    oracle: Oracle, catalog: Any, spark: Any, tmp_path: Path, partitioned_by: str, rest: str, message: str
) -> None:
    import icefloe.spark

    folder = tmp_path / "hive"
    spark.sql(ROWS).repartition(1).write.partitionBy("p", "s").parquet(str(folder))
    java, ours = _twins(oracle, partitioned_by)
    text = (
        "CALL {}.system.add_files(table => '{}', source_table => '`parquet`.`"
        + str(folder)
        + "`'"
        + rest
        + ")"
    )
    with pytest.raises(Exception, match=message):
        spark.sql(text.format(oracle.catalog, java)).collect()
    with pytest.raises(ValidationError, match=message):
        icefloe.spark.sql(spark, text.format("ice", ours), catalogs={"ice": catalog})
    assert catalog.load_table(ours).current_snapshot() is None
