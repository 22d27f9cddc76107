"""Row lineage (`_row_id`, `_last_updated_sequence_number`, snapshot `first-row-id` /
`added-rows`, table `next-row-id`) and deletion vectors on format v3 across icefloe's
operations, each against Iceberg Java doing the same on a twin table: cherry-picks, row-level
changes before and after a compaction, deletes interleaved with Java's on the same files, and
deletes after a v2 -> v3 upgrade that left partition-scoped position deletes."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

LINEAGE = ("id", "data", "_row_id", "_last_updated_sequence_number")
COW = (
    "'write.delete.mode'='copy-on-write', 'write.update.mode'='copy-on-write', "
    "'write.merge.mode'='copy-on-write'"
)
MOR = (
    "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
    "'write.merge.mode'='merge-on-read'"
)
# The position of a position-delete row's data file (`file_path`, field 2147483546).
FILE_PATH_ID = 2147483546


def _twins(oracle: Oracle, props: str, prefix: str) -> tuple[str, str]:
    """Two v3 tables (Java's, ours) with the same rows written by Java: 300 rows in four files
    from two INSERTs."""
    java, ours = new_table_name(f"{prefix}_java"), new_table_name(f"{prefix}_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg "
            f"TBLPROPERTIES ('format-version'='3', {props})"
        )
        oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 200)")
        oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(200, 300)")
    return java, ours


def _lineage(oracle: Oracle, name: str) -> dict[int, tuple[Any, ...]]:
    """id -> (data, _row_id, _last_updated_sequence_number), as Java reads the table."""
    rows = oracle.df(name, columns=LINEAGE).collect()
    return {r["id"]: (r["data"], r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}


def _our_lineage(catalog: Any, name: str) -> dict[int, tuple[Any, ...]]:
    """The same, as icefloe reads it."""
    rows = catalog.load_table(name).scan(selected_fields=LINEAGE).to_arrow().to_pylist()
    return {r["id"]: (r["data"], r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}


def _row_id_ranges(oracle: Oracle, name: str) -> list[tuple[Any, ...]]:
    """(operation, sequence number, first-row-id, added-rows) per snapshot, and next-row-id."""
    t = oracle.java_table(name)
    out: list[tuple[Any, ...]] = [
        (s.operation(), s.sequenceNumber(), s.firstRowId(), s.addedRows()) for s in t.snapshots()
    ]
    out.append(("next-row-id", t.operations().current().nextRowId()))
    return out


def _delete_files(oracle: Oracle, name: str) -> list[dict[str, Any]]:
    """Java's `delete_files` rows, with each data file path replaced by that file's record
    count (the twins' file names differ) and sizes, offsets and paths left out."""
    q = oracle.qualified(name)
    rows_of = {r[0]: r[1] for r in oracle.sql(f"SELECT file_path, record_count FROM {q}.data_files")}
    out = []
    for r in oracle.sql(f"SELECT * FROM {q}.delete_files"):
        d = r.asDict(recursive=True)
        for k in ("file_path", "file_size_in_bytes", "column_sizes", "readable_metrics"):
            d.pop(k, None)
        for k in ("content_offset", "content_size_in_bytes"):  # Puffin layout, not meaning
            d[k] = d[k] is not None
        ref = d.pop("referenced_data_file")
        d["referenced_rows"] = rows_of.get(ref, ref)
        for k in ("lower_bounds", "upper_bounds"):
            if d[k] and FILE_PATH_ID in d[k]:
                path = bytes(d[k][FILE_PATH_ID]).decode()
                d[k] = {**d[k], FILE_PATH_ID: rows_of.get(path, path)}
        out.append(d)
    return sorted(out, key=repr)


def _position_deletes(oracle: Oracle, name: str) -> list[tuple[Any, ...]]:
    """Java's `position_deletes` rows, the data file as its record count, without the delete
    file's path and blob offsets."""
    q = oracle.qualified(name)
    rows_of = {r[0]: r[1] for r in oracle.sql(f"SELECT file_path, record_count FROM {q}.data_files")}
    out = []
    for r in oracle.sql(f"SELECT * FROM {q}.position_deletes"):
        d = r.asDict(recursive=True)
        data_file = rows_of.get(d["file_path"], d["file_path"])
        dv = d.get("content_size_in_bytes") is not None
        out.append((data_file, d["pos"], d.get("row"), d.get("partition"), d["spec_id"], dv))
    return sorted(out, key=repr)


def _summary(oracle: Oracle, name: str) -> dict[str, str]:
    """The current snapshot's summary without sizes, engine names and manifest counts
    (icefloe lays out manifests its own way)."""
    s = oracle.snapshots(name)[-1]["summary"]
    skip = ("app", "engine", "iceberg", "spark", "manifests")
    return {k: v for k, v in s.items() if "size" not in k and not k.startswith(skip)}


@pytest.mark.parametrize("kind", ["append", "dynamic overwrite"])
def test_cherry_picked_files_take_new_row_ids_as_java(oracle: Oracle, catalog: Any, kind: str) -> None:
    """A cherry-pick re-adds the picked snapshot's data files in a new snapshot; Java's
    `MergingSnapshotProducer.add` drops the first_row_id they were read with, so their rows
    take ids from the new snapshot's range (`first-row-id`, `added-rows`). icefloe wrote the
    old first_row_id into the new manifest: the rows kept the branch's ids and the new
    snapshot's range went unused."""
    java, ours = _twins(oracle, "'write.wap.enabled'='true'", prefix="cp")
    picked = {}
    for name in (java, ours):
        q = oracle.qualified(name)
        if kind == "append":
            oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b")
            oracle.sql(f"INSERT INTO {q}.branch_b SELECT id, 'b' FROM range(1000, 1010)")
            main_rows = "range(2000, 2005)"
        else:
            # The overwrite replaces bucket 0 on the branch; main then adds to bucket 1 only.
            oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD bucket(2, id)")
            oracle.sql(f"INSERT INTO {q} SELECT id, 'p' FROM range(500, 520)")
            oracle.sql(f"ALTER TABLE {q} CREATE BRANCH b")
            oracle.spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
            try:
                oracle.sql(
                    f"INSERT OVERWRITE {q}.branch_b SELECT id, 'o' FROM range(1000, 1020) "
                    "WHERE oracle.system.bucket(2, id) = 0"
                )
            finally:
                oracle.spark.conf.unset("spark.sql.sources.partitionOverwriteMode")
            main_rows = "range(2000, 2010) WHERE oracle.system.bucket(2, id) = 1"
        picked[name] = oracle.sql(f"SELECT snapshot_id FROM {q}.refs WHERE name = 'b'")[0][0]
        oracle.sql(f"INSERT INTO {q} SELECT id, 'main' FROM {main_rows}")
    oracle.sql(f"CALL oracle.system.cherrypick_snapshot('{java}', {picked[java]})")
    catalog.load_table(ours).manage_snapshots().cherrypick_snapshot(picked[ours]).commit()
    assert _row_id_ranges(oracle, ours) == _row_id_ranges(oracle, java)
    expected = _lineage(oracle, java)
    assert _lineage(oracle, ours) == expected
    assert _our_lineage(catalog, ours) == expected
    ids = [v[1] for v in expected.values()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("where", ["process", "spark"])
def test_row_level_changes_keep_lineage_through_a_compaction_as_java(
    spark: Any, oracle: Oracle, catalog: Any, where: str
) -> None:
    """Copy-on-write UPDATE / DELETE / MERGE leave files with stored lineage columns (nulls
    for new rows); a compaction keeps every row's `_row_id` and
    `_last_updated_sequence_number`; merge-on-read changes after it (deletion vectors on the
    compacted file) keep them as Java's do. Same row-id ranges per snapshot."""
    import icefloe.spark

    java, ours = _twins(oracle, COW, prefix="cwr")
    src = pa.table({"id": pa.array([6, 8, 251], pa.int64()), "data": ["m6", "m8", "m251"]})
    spark.createDataFrame(src.to_pylist(), "id bigint, data string").createOrReplaceTempView("cwr_src")
    sevens = "id in (" + ", ".join(str(i) for i in range(0, 300, 7)) + ")"
    fives = "id in (" + ", ".join(str(i) for i in range(0, 300, 5)) + ")"
    on_spark = where == "spark"

    def update(t: Any, cond: str, value: str) -> Any:
        if on_spark:
            return icefloe.spark.update(spark, t, cond, {"data": f"'{value}'"})
        return t.update(cond, {"data": value})

    def delete(t: Any, cond: str) -> Any:
        return icefloe.spark.delete(spark, t, cond) if on_spark else t.delete(cond)

    def merge(t: Any) -> Any:
        m = (
            icefloe.spark.merge(spark.table("cwr_src"), t, "target.id = source.id")
            if on_spark
            else t.merge(src, "target.id = source.id")
        )
        return m.when_matched_update_all().execute()

    qj = oracle.qualified(java)
    steps = [
        (f"UPDATE {qj} SET data = 'u' WHERE {sevens}", lambda t: update(t, sevens, "u")),
        (f"DELETE FROM {qj} WHERE {fives}", lambda t: delete(t, fives)),
        (
            f"MERGE INTO {qj} t USING cwr_src s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *",
            merge,
        ),
        (
            f"CALL oracle.system.rewrite_data_files(table => '{java}', "
            "options => map('rewrite-all', 'true'))",
            lambda t: t.maintenance.rewrite_data_files(rewrite_all=True, spark=spark if on_spark else None),
        ),
        (f"ALTER TABLE {qj} SET TBLPROPERTIES ({MOR})", None),
        (f"DELETE FROM {qj} WHERE id in (1, 2, 3, 251)", lambda t: delete(t, "id in (1, 2, 3, 251)")),
        (
            f"UPDATE {qj} SET data = 'w' WHERE id in (4, 6, 298)",
            lambda t: update(t, "id in (4, 6, 298)", "w"),
        ),
    ]
    for sql, ours_step in steps:
        oracle.sql(sql)
        if ours_step is None:
            oracle.sql(sql.replace(qj, oracle.qualified(ours)))
        else:
            ours_step(catalog.load_table(ours))
        expected = _lineage(oracle, java)
        assert _lineage(oracle, ours) == expected, sql
        assert _our_lineage(catalog, ours) == expected, sql
        assert _row_id_ranges(oracle, ours) == _row_id_ranges(oracle, java), sql


def test_deletes_interleaved_with_javas_on_the_same_files_keep_one_dv_per_file(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """icefloe (in process and on Spark) and Java take turns deleting rows of the same data
    files of one table; a twin gets every delete from Java. After each, both have the same
    deletion vectors (Java's `delete_files`, one per data file), the same `position_deletes`
    rows, the same snapshot summary and the same rows with their lineage."""
    import icefloe.spark

    java, ours = _twins(oracle, MOR, prefix="dvi")
    turns = [
        ("id in (1, 2, 3, 201)", "process"),
        ("id in (4, 5, 202, 203)", "java"),
        ("id in (6, 204, 150)", "spark"),
        ("id in (7, 8, 205)", "java"),
        ("id in (9, 10, 11, 206)", "process"),
    ]
    for cond, who in turns:
        oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE {cond}")
        if who == "java":
            oracle.sql(f"DELETE FROM {oracle.qualified(ours)} WHERE {cond}")
        elif who == "spark":
            icefloe.spark.delete(spark, catalog.load_table(ours), cond)
        else:
            catalog.load_table(ours).delete(cond)
        context = f"{who}: {cond}"
        assert _delete_files(oracle, ours) == _delete_files(oracle, java), context
        assert _position_deletes(oracle, ours) == _position_deletes(oracle, java), context
        assert _summary(oracle, ours) == _summary(oracle, java), context
        expected = _lineage(oracle, java)
        assert _lineage(oracle, ours) == expected, context
        assert _our_lineage(catalog, ours) == expected, context


@pytest.mark.parametrize("granularity", ["file", "partition"])
def test_a_delete_after_an_upgrade_merges_the_v2_position_deletes_as_java(
    spark: Any, oracle: Oracle, catalog: Any, granularity: str
) -> None:
    """v2 position deletes (file- or partition-scoped) left by an upgrade to v3: the first
    delete of a data file writes a DV holding them too; the file-scoped ones it replaces are
    removed, the partition-scoped ones stay (they cover other files), as Java does."""
    import icefloe.spark

    java, ours = new_table_name("upg_java"), new_table_name("upg_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg PARTITIONED BY (bucket(2, id)) "
            f"TBLPROPERTIES ('format-version'='2', {MOR}, 'write.delete.granularity'='{granularity}')"
        )
        oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 100)")
        oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(100, 200)")
        oracle.sql(f"DELETE FROM {q} WHERE id % 10 = 0")
        oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('format-version'='3')")
        oracle.sql(f"INSERT INTO {q} SELECT id, 'after' FROM range(200, 220)")
    for i, cond in enumerate(["id in (1, 2, 3, 201)", "id in (11, 12, 111, 202)"]):
        oracle.sql(f"DELETE FROM {oracle.qualified(java)} WHERE {cond}")
        t = catalog.load_table(ours)
        if i % 2:
            icefloe.spark.delete(spark, t, cond)
        else:
            t.delete(cond)
        assert _delete_files(oracle, ours) == _delete_files(oracle, java), cond
        assert _summary(oracle, ours) == _summary(oracle, java), cond
        expected = _lineage(oracle, java)
        assert _lineage(oracle, ours) == expected, cond
        assert _our_lineage(catalog, ours) == expected, cond
