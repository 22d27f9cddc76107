"""Format v3 tables written by icefloe, read by Iceberg Java (the oracle): tables created as
v3 or upgraded from v2, appends that assign row ids (manifest list `first_row_id`, snapshot
`first-row-id` / `added-rows`, table `next-row-id`), and Java writing on top of ours."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

LINEAGE = ("id", "data", "_row_id", "_last_updated_sequence_number")
SCHEMA = pa.schema([("id", pa.int64()), ("data", pa.string())])


def _rows(lo: int, hi: int, tag: str) -> pa.Table:
    return pa.table({"id": list(range(lo, hi)), "data": [f"{tag}{i}" for i in range(lo, hi)]}, schema=SCHEMA)


def _same_everywhere(oracle: Oracle, catalog: Any, name: str) -> None:
    """Every snapshot reads the same rows and lineage in both engines."""
    table = catalog.load_table(name)
    for sid in oracle.snapshot_ids(name):
        java = oracle.df(name, snapshot_id=sid, columns=LINEAGE)
        ours = table.scan(snapshot_id=sid, selected_fields=LINEAGE).to_arrow()
        assert_same_rows(ours, java, context=f"{name} at {sid}")


def test_icefloe_v3_appends_assign_row_ids_java_reads(oracle: Oracle, catalog: Any) -> None:
    from icefloe.partitioning import PartitionField, PartitionSpec
    from icefloe.transforms import BucketTransform

    name = new_table_name("v3_ours")
    spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=BucketTransform(4), name="b"))
    schema = catalog.create_table(name, SCHEMA, partition_spec=spec, properties={"format-version": "3"})
    table = catalog.load_table(name)
    assert table.format_version == 3 and schema is not None
    table.append(_rows(0, 100, "a"))
    table.append(_rows(100, 250, "b"))
    md = catalog.load_table(name).metadata
    snaps = oracle.snapshots(name)
    assert [s["snapshot_id"] for s in snaps] == oracle.snapshot_ids(name)
    java_table = oracle.java_table(name)
    # Row ids: 0..99 for the first append, 100..249 for the second; next-row-id 250.
    assert [(s.firstRowId(), s.addedRows()) for s in java_table.snapshots()] == [(0, 100), (100, 150)]
    assert md.next_row_id == 250
    ids = sorted(r["_row_id"] for r in oracle.df(name, columns=("_row_id",)).collect())
    assert ids == list(range(250))
    _same_everywhere(oracle, catalog, name)
    # Java writes on top of ours (a delete: a DV; an append), and we read it.
    q = oracle.qualified(name)
    oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    oracle.sql(f"DELETE FROM {q} WHERE id % 3 = 0")
    oracle.sql(f"INSERT INTO {q} VALUES (1000, 'java')")
    table = catalog.load_table(name)
    table.append(_rows(2000, 2010, "c"))
    _same_everywhere(oracle, catalog, name)


def test_upgrading_a_v2_table_to_v3(oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("v3_upgrade")
    catalog.create_table(name, SCHEMA)
    table = catalog.load_table(name)
    table.append(_rows(0, 50, "v2"))
    with pytest.raises(ValidationError):
        table.transaction().upgrade_table_version(1)
    with table.transaction() as tx:
        tx.upgrade_table_version(3)
    table = catalog.load_table(name)
    assert table.format_version == 3 and table.metadata.next_row_id == 0
    # Files written before the upgrade get row ids from the next commit's manifest list.
    table.append(_rows(50, 80, "v3"))
    java_table = oracle.java_table(name)
    assert java_table.operations().current().formatVersion() == 3
    _same_everywhere(oracle, catalog, name)
    ids = sorted(r["_row_id"] for r in oracle.df(name, columns=("_row_id",)).collect())
    assert ids == list(range(80)), "every row has a distinct row id after the first v3 commit"
    # The upgrade through the property, as Java's ALTER TABLE does it.
    other = new_table_name("v3_prop")
    catalog.create_table(other, SCHEMA)
    with catalog.load_table(other).transaction() as tx:
        tx.set_properties({"format-version": "3"})
    assert catalog.load_table(other).format_version == 3
    assert "format-version" not in catalog.load_table(other).properties


KEYS = (
    "operation",
    "added-records",
    "added-dvs",
    "removed-dvs",
    "added-delete-files",
    "removed-delete-files",
    "added-position-deletes",
    "removed-position-deletes",
    "total-records",
    "total-position-deletes",
    "total-delete-files",
)


def _summary(oracle: Oracle, name: str) -> dict[str, Any]:
    s = oracle.snapshots(name)[-1]
    return {"operation": s["operation"], **{k: s["summary"].get(k) for k in KEYS[1:]}}


def test_merge_on_read_changes_on_v3_write_deletion_vectors_as_java_does(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """Twin v3 tables (Java's INSERT, one file per bucket): each step done by Java's SQL on
    one and by icefloe on the other gives the same rows, the same snapshot summary (DVs
    added and replaced), one live DV per data file, and Java's `position_deletes` shows
    ours. Steps: a DELETE on Spark, a second DELETE on the same files in process (DV
    merges), an UPDATE and a MERGE on Spark, a MERGE in process."""
    import icefloe.spark

    props = (
        "'format-version'='3', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"
    )
    java, ours = new_table_name("dv_java"), new_table_name("dv_ours")
    src = spark.sql("SELECT id, CAST(id AS STRING) AS data FROM range(0, 4000)")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg PARTITIONED BY (bucket(4, id)) "
            f"TBLPROPERTIES ({props})"
        )
        src.coalesce(1).sortWithinPartitions("id").writeTo(q).append()
    spark.createDataFrame(
        [(i, f"m{i}") for i in range(3900, 4100, 7)], "id bigint, data string"
    ).createOrReplaceTempView("dv_src")
    local_src = pa.table(
        {
            "id": [*range(2000, 2100, 3), 5000, 5001],
            "data": [*(f"l{i}" for i in range(2000, 2100, 3)), "n0", "n1"],
        },
        schema=SCHEMA,
    )
    spark.createDataFrame(local_src.to_pandas()).createOrReplaceTempView("dv_local_src")
    steps = [
        (
            "DELETE FROM {q} WHERE id < 300",
            lambda t: icefloe.spark.delete(spark, t, "id < 300"),
        ),
        (
            "DELETE FROM {q} WHERE id >= 250 AND id < 600",
            lambda t: t.delete("id >= 250 and id < 600"),
        ),
        (
            "UPDATE {q} SET data = 'u' WHERE id >= 1000 AND id < 1100",
            lambda t: icefloe.spark.update(spark, t, "id >= 1000 and id < 1100", {"data": "'u'"}),
        ),
        (
            "MERGE INTO {q} t USING dv_src s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            lambda t: (
                icefloe.spark.merge(spark.table("dv_src"), t, "target.id = source.id")
                .when_matched_update_all()
                .when_not_matched_insert_all()
                .execute()
            ),
        ),
        (
            "MERGE INTO {q} t USING dv_local_src s ON t.id = s.id "
            "WHEN MATCHED THEN UPDATE SET data = s.data WHEN NOT MATCHED THEN INSERT *",
            lambda t: (
                t.merge(local_src, "target.id = source.id")
                .when_matched_update({"data": "source.data"})
                .when_not_matched_insert_all()
                .execute()
            ),
        ),
    ]
    for sql, ours_step in steps:
        oracle.sql(sql.format(q=oracle.qualified(java)))
        ours_step(catalog.load_table(ours))
        expected = oracle.df(java, columns=("id", "data"))
        assert_same_rows(oracle.df(ours, columns=("id", "data")), expected, context=f"Java reads ours: {sql}")
        table = catalog.load_table(ours)
        assert_same_rows(table.scan(selected_fields=("id", "data")).to_arrow(), expected, context=sql)
        s_ours, s_java = _summary(oracle, ours), _summary(oracle, java)
        assert s_ours == s_java, (sql, s_ours, s_java)
        # Row lineage as Java keeps it: updated rows keep their row ids and take the
        # update's sequence number, untouched rows keep both (the ids new rows get depend
        # on each engine's manifests, so rows inserted by the MERGE are left out).
        old_rows = "id < 4000"
        assert_same_rows(
            oracle.df(ours, columns=LINEAGE, where=old_rows),
            oracle.df(java, columns=LINEAGE, where=old_rows),
            context=f"row lineage after {sql}",
        )
        dvs = oracle.sql(
            f"SELECT file_format, referenced_data_file FROM {oracle.qualified(ours)}.delete_files"
        )
        assert {r["file_format"] for r in dvs} == {"PUFFIN"}
        referenced = [r["referenced_data_file"] for r in dvs]
        assert len(referenced) == len(set(referenced)), f"one live DV per data file after {sql}"
        # Java's position_deletes metadata table lists exactly the rows ours hide.
        n = oracle.sql(f"SELECT count(*) AS n FROM {oracle.qualified(ours)}.position_deletes")[0]["n"]
        assert n == int(s_ours["total-position-deletes"])
    _same_everywhere(oracle, catalog, ours)


def test_upserts_on_v3_write_equality_deletes_java_reads(spark: Any, oracle: Oracle, catalog: Any) -> None:
    """The CDC path on a v3 table: equality deletes plus new rows (no DVs involved), read
    back by Java with the same rows; the upserted rows get new row ids."""
    import icefloe.spark

    name = new_table_name("v3_upsert")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT NOT NULL, data STRING) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='merge-on-read', "
        "'write.upsert.enabled'='true')"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 500)")
    table = catalog.load_table(name)
    for batch in range(3):
        rows = [(i, f"v{batch}") for i in range(batch * 100, batch * 100 + 300)]
        df = spark.createDataFrame(rows, "id bigint, data string")
        icefloe.spark.upsert(df, catalog.load_table(name), join_cols=["id"])
    expected = {i: str(i) for i in range(500)}
    for batch in range(3):
        expected.update({i: f"v{batch}" for i in range(batch * 100, batch * 100 + 300)})
    got = {r["id"]: r["data"] for r in oracle.df(name, columns=("id", "data")).collect()}
    assert got == expected
    assert table.format_version == 3
    _same_everywhere(oracle, catalog, name)
    ids = [r["_row_id"] for r in oracle.df(name, columns=("_row_id",)).collect()]
    assert len(ids) == len(set(ids)) == len(expected), "row ids stay unique"


def test_copy_on_write_upsert_in_process_keeps_row_lineage_as_javas_merge(
    oracle: Oracle, catalog: Any
) -> None:
    """`Table.upsert` on a v3 copy-on-write table updates matched rows in place (a MERGE), so
    they keep their `_row_id` and take the new sequence number, as Java's `MERGE INTO ...
    WHEN MATCHED UPDATE SET * WHEN NOT MATCHED INSERT *` on a twin; it re-inserted them
    under new ids. A null key keeps the upsert's NULL-equals-NULL replacement."""
    java, ours = new_table_name("v3_cow_upsert_java"), new_table_name("v3_cow_upsert_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id BIGINT, data STRING) USING iceberg "
            "TBLPROPERTIES ('format-version'='3', 'write.merge.mode'='copy-on-write')"
        )
        oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS STRING) FROM range(0, 10)")
    src = pa.table({"id": pa.array([3, 7, 42], pa.int64()), "data": ["new3", "new7", "new42"]})
    oracle.spark.createDataFrame(src.to_pylist(), "id bigint, data string").createOrReplaceTempView(
        "upsert_src"
    )
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING upsert_src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    result = catalog.load_table(ours).upsert(src, join_cols=["id"])
    assert (result.rows_updated, result.rows_inserted) == (2, 1)

    def lineage(name: str) -> dict[int, tuple[Any, ...]]:
        rows = oracle.df(name, columns=LINEAGE).collect()
        return {r["id"]: (r["data"], r["_row_id"], r["_last_updated_sequence_number"]) for r in rows}

    theirs, mine = lineage(java), lineage(ours)
    assert {k: v for k, v in mine.items() if k != 42} == {k: v for k, v in theirs.items() if k != 42}
    assert mine[42][0] == "new42" and mine[42][1] is not None
    _same_everywhere(oracle, catalog, ours)

    # A null key: replaced like any other (not the MERGE, whose `=` never matches a null).
    table = catalog.load_table(ours)
    table.append(pa.table({"id": pa.array([None], pa.int64()), "data": ["null-old"]}))
    table.upsert(pa.table({"id": pa.array([None], pa.int64()), "data": ["null-new"]}), join_cols=["id"])
    nulls = [r["data"] for r in oracle.df(ours).collect() if r["id"] is None]
    assert nulls == ["null-new"]
