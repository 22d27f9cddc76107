"""Row-level changes on Spark (icefloe.spark.merge / update / upsert) against Iceberg Java's
Spark SQL `MERGE INTO` / `UPDATE` on twin tables: same rows read by both engines, the same
snapshot summaries; bad input refused with nothing committed and no file left."""

from __future__ import annotations

import os
from typing import Any

import pytest
from icefloe.exceptions import ValidationError
from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

KEYS = (
    "operation",
    "added-records",
    "deleted-records",
    "added-position-deletes",
    "added-position-delete-files",
    "total-records",
    "total-position-deletes",
    "total-data-files",
    "total-delete-files",
)


def _props(mode: str) -> str:
    """Table properties: format v2, every row-level command in `mode`."""
    return (
        f"'format-version'='2', 'write.delete.mode'='{mode}', 'write.update.mode'='{mode}', "
        f"'write.merge.mode'='{mode}'"
    )


def _twins(spark: Any, oracle: Oracle, mode: str, partitioning: str = "") -> tuple[str, str]:
    props = _props(mode)
    java, ours = new_table_name("m_java"), new_table_name("m_ours")
    src = spark.sql(
        "SELECT id, CASE WHEN id % 2 = 0 THEN 'eu' ELSE 'us' END AS region, CAST(id AS DOUBLE) AS amount "
        "FROM range(0, 300)"
    )
    for name in (java, ours):
        oracle.sql(
            f"CREATE TABLE {oracle.qualified(name)} (id BIGINT, region STRING, amount DOUBLE) USING iceberg "
            f"{partitioning} TBLPROPERTIES ({props})"
        )
        src.coalesce(1).sortWithinPartitions("id").writeTo(oracle.qualified(name)).append()
    return java, ours


def _summary(oracle: Oracle, name: str) -> dict[str, Any]:
    s = oracle.snapshots(name)[-1]
    return {"operation": s["operation"], **{k: s["summary"].get(k) for k in KEYS[1:]}}


def _assert_same_summary(oracle: Oracle, ours: str, java: str, mode: str) -> None:
    """The last snapshots' summaries agree; the number of new data files follows each
    engine's Spark task layout, not the change, and copy-on-write rewrites whole files
    (each engine its own), so only the totals of rows compare there."""
    s_ours, s_java = _summary(oracle, ours), _summary(oracle, java)
    keys = (
        [k for k in KEYS if k != "total-data-files"]
        if mode == "merge-on-read"
        else ["operation", "total-records"]
    )
    for k in keys:
        assert s_ours[k] == s_java[k], (k, s_ours, s_java)


def _source(spark: Any) -> Any:
    # updates of 0..39 (negative amount for 0..4: deleted), inserts of 1000..1019
    rows = [(i, "eu" if i % 2 else "us", -1.0 if i < 5 else i * 10.0) for i in range(40)]
    rows += [(1000 + i, "eu", float(i)) for i in range(20)]
    return spark.createDataFrame(rows, "id bigint, region string, amount double")


def _arrow(df: Any) -> Any:
    import pyarrow as pa

    schema = pa.schema([("id", pa.int64()), ("region", pa.string()), ("amount", pa.float64())])
    return pa.Table.from_pylist([r.asDict() for r in df.collect()], schema=schema)


@pytest.mark.parametrize(
    ("engine", "mode", "partitioning"),
    [
        ("spark", "merge-on-read", ""),
        ("spark", "merge-on-read", "PARTITIONED BY (bucket(4, id))"),
        ("spark", "copy-on-write", ""),
        ("in-process", "merge-on-read", "PARTITIONED BY (bucket(4, id))"),
        ("in-process", "copy-on-write", ""),
    ],
)
def test_merge_twins_java_merge_into(
    spark: Any, oracle: Oracle, catalog: Any, engine: str, mode: str, partitioning: str
) -> None:
    import icefloe.spark

    java, ours = _twins(spark, oracle, mode, partitioning)
    _source(spark).createOrReplaceTempView("merge_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING merge_src s ON t.id = s.id "
        "WHEN MATCHED AND s.amount < 0 THEN DELETE "
        "WHEN MATCHED THEN UPDATE SET amount = s.amount + t.amount, region = s.region "
        "WHEN NOT MATCHED THEN INSERT * "
        "WHEN NOT MATCHED BY SOURCE AND t.id >= 290 THEN DELETE"
    )
    if engine == "spark":
        metrics: Any = (
            icefloe.spark.merge(_source(spark), catalog.load_table(ours), "target.id = source.id")
            .when_matched_delete("source.amount < 0")
            .when_matched_update({"amount": "source.amount + target.amount", "region": "source.region"})
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete("target.id >= 290")
            .execute()
        )
    else:  # in process: the same clauses over an Arrow source
        import pyarrow.compute as pc

        source = _arrow(_source(spark))
        metrics = (
            catalog.load_table(ours)
            .merge(source, "target.id = source.id")
            .when_matched_delete("source.amount < 0")
            .when_matched_update(
                {"amount": pc.field("source.amount") + pc.field("target.amount"), "region": "source.region"}
            )
            .when_not_matched_insert_all()
            .when_not_matched_by_source_delete("target.id >= 290")
            .execute()
        )
    assert (metrics.rows_updated, metrics.rows_deleted, metrics.rows_inserted) == (35, 15, 20)
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({mode})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ({mode})")
    _assert_same_summary(oracle, ours, java, mode)


def test_merge_refuses_a_target_row_matched_twice_and_bad_sets(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    import icefloe.spark

    _java, ours = _twins(spark, oracle, "merge-on-read")
    table = catalog.load_table(ours)
    before = table.current_snapshot()
    data_dir = os.path.join(table.location(), "data")
    files = {os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs}
    dup = spark.createDataFrame([(7, "eu", 1.0), (7, "us", 2.0)], "id bigint, region string, amount double")
    with pytest.raises(ValidationError, match=r"'id': 7.*2 source rows"):
        icefloe.spark.merge(dup, table, "target.id = source.id").when_matched_update_all().execute()
    with pytest.raises(ValidationError, match="'nope'"):
        icefloe.spark.merge(dup, table, "target.id = source.id").when_matched_update({"nope": "1"})
    one = spark.createDataFrame([(7, "eu", 1.0)], "id bigint, region string, amount double")
    with pytest.raises(ValidationError, match="'amount'"):
        icefloe.spark.merge(one, table, "target.id = source.id").when_matched_update(
            {"amount": "'not a number'"}
        ).execute()
    with pytest.raises(ValidationError, match="'amount'"):
        icefloe.spark.update(spark, table, "id = 7", {"amount": "'x'"})
    assert catalog.load_table(ours).current_snapshot() == before
    assert {os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs} == files


def _data_files(table: Any) -> set[str]:
    data_dir = os.path.join(table.location().removeprefix("file:"), "data")
    return {os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs}


def test_copy_on_write_delete_update_overwrite_rewrite_in_spark_tasks(
    spark: Any, oracle: Oracle, catalog: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Copy-on-write DELETE, UPDATE and overwrite-by-filter read and rewrite the files the
    condition partly matches in Spark tasks: with the driver's reader disabled they still
    give Java's rows, and the new files carry Spark task ids, not the driver's."""
    import icefloe._task_ids
    import icefloe.spark
    import icefloe.write.overwrite

    def no_driver_read(*_: Any) -> Any:
        raise AssertionError("a copy-on-write rewrite read data on the driver")

    monkeypatch.setattr(icefloe.write.overwrite, "kept_rows", no_driver_read)
    monkeypatch.setattr(icefloe.write.overwrite, "rewrite_on_driver", no_driver_read)
    java, ours = _twins(spark, oracle, "copy-on-write", "PARTITIONED BY (bucket(4, id))")
    jq = oracle.qualified(java)
    before = _data_files(catalog.load_table(ours))

    oracle.sql(f"DELETE FROM {jq} WHERE id >= 100 AND id < 150")
    icefloe.spark.delete(spark, catalog.load_table(ours), "id >= 100 and id < 150")
    assert_same_rows(oracle.df(ours), oracle.df(java), context="delete")
    oracle.sql(f"UPDATE {jq} SET amount = -amount WHERE id >= 150 AND id < 160")
    icefloe.spark.update(spark, catalog.load_table(ours), "id >= 150 and id < 160", {"amount": "-amount"})
    assert_same_rows(oracle.df(ours), oracle.df(java), context="update")
    new = spark.createDataFrame([(5, "ap", 0.5)], "id bigint, region string, amount double")
    # Java's overwrite(expr) removes whole files only: its rows are DELETE then INSERT.
    oracle.sql(f"DELETE FROM {jq} WHERE id < 20")
    new.writeTo(jq).append()
    icefloe.spark.overwrite(new, catalog.load_table(ours), overwrite_filter="id < 20")
    assert_same_rows(oracle.df(ours), oracle.df(java), context="overwrite")

    table = catalog.load_table(ours)
    live = {f.file_path.removeprefix("file:") for f in table.scan().plan_files()}
    assert before and before <= _data_files(table)
    rewritten = live - before
    assert rewritten, "the copy-on-write operations rewrote no file"
    driver_task = str(icefloe._task_ids.OVERWRITE_REWRITE_DRIVER_TASK_BASE)[:4]
    assert not [p for p in rewritten if os.path.basename(p).startswith(driver_task)], rewritten
    assert table.current_snapshot().summary["operation"] == "overwrite"


def test_a_failed_copy_on_write_rewrite_task_commits_nothing_and_leaves_no_file(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    import icefloe.spark
    from icefloe.exceptions import IcefloeError

    _java, ours = _twins(spark, oracle, "copy-on-write", "PARTITIONED BY (bucket(4, id))")
    table = catalog.load_table(ours)
    files = _data_files(table)
    # One data file the delete must read is gone: its rewrite task fails.
    victim = sorted(f for f in files if f.endswith(".parquet"))[0]
    os.rename(victim, victim + ".away")
    try:
        with pytest.raises(IcefloeError, match=os.path.basename(victim)):
            icefloe.spark.delete(spark, table, "region = 'eu'")
    finally:
        os.rename(victim + ".away", victim)
    assert catalog.load_table(ours).current_snapshot() == table.current_snapshot()
    assert _data_files(table) == files


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_spark_update_twins_java_update(spark: Any, oracle: Oracle, catalog: Any, mode: str) -> None:
    import icefloe.spark

    java, ours = _twins(spark, oracle, mode)
    oracle.sql(
        f"UPDATE {oracle.qualified(java)} SET amount = amount * 2, region = 'ap' WHERE id >= 100 AND id < 150"
    )
    icefloe.spark.update(
        spark, catalog.load_table(ours), "id >= 100 and id < 150", {"amount": "amount * 2", "region": "'ap'"}
    )
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context="update")
    s_ours, s_java = _summary(oracle, ours), _summary(oracle, java)
    keys = KEYS if mode == "merge-on-read" else ("operation", "total-records")
    for k in keys:
        assert s_ours[k] == s_java[k], (k, s_ours, s_java)


@pytest.mark.one_spark_line
@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_spark_upsert_with_a_delete_column_matches_a_model(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    import random

    import icefloe.spark

    name = new_table_name("m_upsert")
    oracle.sql(
        f"CREATE TABLE {oracle.qualified(name)} (id BIGINT NOT NULL, amount DOUBLE) USING iceberg "
        f"TBLPROPERTIES ('format-version'='2', 'write.merge.mode'='{mode}')"
    )
    oracle.sql(f"ALTER TABLE {oracle.qualified(name)} SET IDENTIFIER FIELDS id")
    rng = random.Random(5)
    model: dict[int, float] = {}
    for step in range(8):
        batch = []
        for j in range(rng.randrange(1, 30)):
            k = rng.randrange(0, 50)
            op = "D" if rng.random() < 0.2 else "U"
            batch.append((k, float(step * 100 + j), op))
        for k, amount, op in batch:  # the last row of a key wins
            if op == "D":
                model.pop(k, None)
            else:
                model[k] = amount
        df = spark.createDataFrame(batch, "id bigint, amount double, op string").coalesce(1)
        icefloe.spark.upsert(df, catalog.load_table(name), delete_column="op")
    got = {r["id"]: r["amount"] for r in oracle.df(name).collect()}
    assert got == model
    ours = {r["id"]: r["amount"] for r in catalog.load_table(name).scan().to_arrow().to_pylist()}
    assert ours == model


@pytest.mark.one_spark_line
@pytest.mark.parametrize(
    ("mode", "on_java", "on_ours"),
    [
        ("merge-on-read", "t.id = s.id", "target.id = source.id"),
        ("copy-on-write", "t.id = s.id", "target.id = source.id"),
        (
            "merge-on-read",
            "s.id = t.id AND t.region = 'eu'",
            "source.id = target.id AND target.region = 'eu'",
        ),
        (
            "merge-on-read",
            "t.id = s.id AND t.region = s.region",
            "target.id = source.id AND target.region = source.region",
        ),
        # A source conjunct: unmatched source rows are found by row id, not by key.
        (
            "copy-on-write",
            "t.id = s.id AND s.amount < 1250",
            "target.id = source.id AND source.amount < 1250",
        ),
    ],
)
def test_merge_reads_only_target_rows_the_source_keys_can_match(
    spark: Any, oracle: Oracle, catalog: Any, mode: str, on_java: str, on_ours: str
) -> None:
    """The target read of a merge without a `not matched by source` clause keeps only rows
    whose join keys the source holds (a null key matches nothing, an int source key matches
    a long target key by value) and skips files outside the source keys' bounds: the result
    stays Java's MERGE INTO's, on a table with null keys and duplicate-free sources."""
    import icefloe.spark
    from icefloe.spark.read import read_rows

    java, ours = _twins(spark, oracle, mode, "PARTITIONED BY (truncate(100, id))")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"INSERT INTO {q} VALUES (NULL, 'eu', 1.0), (NULL, 'us', 2.0)")
        # Position deletes on the file the merge touches: a copy-on-write rewrite keeps them.
        oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
        oracle.sql(f"DELETE FROM {q} WHERE id IN (115, 150)")
    # Updates of 110..129 (int keys against the table's long ones), inserts of 400..404 and
    # two rows with a null key (never matched: inserted, as Java's MERGE does).
    rows = [(i, "eu" if i % 2 == 0 else "us", i * 10.0) for i in range(110, 130)]
    rows += [(400 + i, "eu", float(i)) for i in range(5)] + [(None, "eu", 5.0), (None, "us", 6.0)]
    source = spark.createDataFrame(rows, "id int, region string, amount double")
    source.createOrReplaceTempView("prune_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING prune_src s ON {on_java} "
        "WHEN MATCHED THEN UPDATE SET amount = s.amount + t.amount "
        "WHEN NOT MATCHED THEN INSERT *"
    )
    table = catalog.load_table(ours)
    builder = (
        icefloe.spark.merge(source, table, on_ours)
        .when_matched_update({"amount": "source.amount + target.amount"})
        .when_not_matched_insert_all()
    )
    # What the target read is given: the source's keys and their bounds as a row filter,
    # which prunes the files of ids 0..99 and 200..299 and leaves 20 (or 10: eu) rows.
    row_filter, semi = builder._target_pruning(source)
    assert semi is not None and semi.key_columns[0] == "id"
    planned = {t.file_path for t in table.scan(row_filter=row_filter).plan_files()}
    assert planned and planned < {t.file_path for t in table.scan().plan_files()}
    target_rows = read_rows(spark, table, row_filter=row_filter, semi_join=semi).collect()
    eu_only = "'eu'" in on_ours
    target_ids = [i for i in range(110, 130) if i != 115 and (i % 2 == 0 or not eu_only)]
    assert sorted(r["id"] for r in target_rows) == target_ids
    metrics = builder.execute()
    matched = [i for i in target_ids if "amount" not in on_ours or i * 10.0 < 1250]
    assert (metrics.rows_updated, metrics.rows_inserted) == (len(matched), 27 - len(matched))
    if mode == "copy-on-write":  # the other live rows of the one file of ids 100..199
        assert (metrics.rows_copied, metrics.data_files_removed) == (98 - len(matched), 1)
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({mode}, {on_ours})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ({mode})")


@pytest.mark.one_spark_line
@pytest.mark.parametrize(
    ("mode", "on_java", "on_ours"),
    [
        ("merge-on-read", "t.id = s.id", "target.id = source.id"),
        (
            "merge-on-read",
            "t.id = s.id AND t.region = s.region",
            "target.id = source.id AND target.region = source.region",
        ),
        (
            "copy-on-write",
            "t.id = s.id AND t.region = 'eu'",
            "target.id = source.id AND target.region = 'eu'",
        ),
    ],
)
def test_update_all_insert_all_merge_on_unique_keys_joins_no_rows(
    spark: Any, oracle: Oracle, catalog: Any, monkeypatch: Any, mode: str, on_java: str, on_ours: str
) -> None:
    """`UPDATE SET * / INSERT *` on unique source keys runs without a join (the new rows are
    the source's, the removed ones the target rows its keys match) and still equals Java's
    MERGE INTO: a key two target rows hold updates both, null keys match nothing, int source
    keys match long target keys, a target-only conjunct narrows the match."""
    import icefloe.spark
    from icefloe.spark.merge import MergeBuilder

    java, ours = _twins(spark, oracle, mode, "PARTITIONED BY (bucket(4, id))")
    extra = [(None, "eu", 1.0), (120, "eu", 7.0), (121, "us", 8.0)]
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"INSERT INTO {q} VALUES (NULL, 'eu', 1.0), (120, 'eu', 7.0), (121, 'us', 8.0)")
        oracle.sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
        oracle.sql(f"DELETE FROM {q} WHERE id IN (115, 150)")
    rows = [(i, "eu" if i % 2 == 0 else "us", i * 10.0) for i in range(110, 130)]
    rows += [(117, "eu", 3.0)] if "s.region" in on_java else []  # unique (id, region), not id
    rows += [(400 + i, "eu", float(i)) for i in range(5)] + [(None, "eu", 5.0), (None, "us", 6.0)]
    source = spark.createDataFrame(rows, "id int, region string, amount double")
    source.createOrReplaceTempView("keyed_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING keyed_src s ON {on_java} "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )

    def no_join(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the keyed update_all / insert_all merge joined rows")

    monkeypatch.setattr(MergeBuilder, "_join_broadcasting_source", no_join)
    metrics = (
        icefloe.spark.merge(source, catalog.load_table(ours), on_ours)
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    # The model: which live target rows each source row's keys match.
    target = [(i, "eu" if i % 2 == 0 else "us") for i in range(300) if i not in (115, 150)]
    target += [(i, r) for i, r, _a in extra]

    def matches(t: tuple[Any, str], s: tuple[Any, str, float]) -> bool:
        if t[0] is None or s[0] is None or t[0] != s[0]:
            return False
        if "s.region" in on_java:
            return t[1] == s[1]
        return "'eu'" not in on_java or t[1] == "eu"

    updated = sum(1 for t in target for s in rows if matches(t, s))
    inserted = sum(1 for s in rows if not any(matches(t, s) for t in target))
    assert (metrics.rows_updated, metrics.rows_inserted, metrics.rows_deleted) == (updated, inserted, 0)
    assert updated > 10 and inserted >= 7
    expected = oracle.df(java)
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({mode}, {on_ours})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ({mode})")
    _assert_same_summary(oracle, ours, java, mode)


@pytest.mark.parametrize("old_partitioning", ["truncate(10, id)", "region"])
def test_spark_upsert_reaches_rows_of_an_older_partition_spec(
    spark: Any, oracle: Oracle, catalog: Any, old_partitioning: str
) -> None:
    """After partition evolution the old rows of upserted keys live in files of the older spec,
    which a partitioned equality delete of the current spec does not reach. Keyed old specs
    get their own copy of the deletes (merge-on-read stays); an old spec partitioned by a
    non-key column is rewritten (copy-on-write). Java reads the model's rows either way."""
    import icefloe.spark

    name = new_table_name("evolved_upsert")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT NOT NULL, region STRING, amount DOUBLE) USING iceberg "
        f"PARTITIONED BY ({old_partitioning}) TBLPROPERTIES ('format-version'='2', "
        "'write.merge.mode'='merge-on-read')"
    )
    oracle.sql(f"ALTER TABLE {q} SET IDENTIFIER FIELDS id")
    oracle.sql(f"INSERT INTO {q} SELECT id, IF(id % 2 = 0, 'eu', 'us'), 1.0 FROM range(0, 40)")
    if old_partitioning == "region":
        oracle.sql(f"ALTER TABLE {q} DROP PARTITION FIELD region")
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD bucket(4, id)")
    oracle.sql(f"INSERT INTO {q} SELECT id, 'ap', 2.0 FROM range(40, 60)")
    model = {i: 1.0 if i < 40 else 2.0 for i in range(60)}
    keys = [3, 17, 38, 45, 59, 70]  # old-spec files, new-spec files, and a new key
    model.update({k: 9.0 for k in keys})
    df = spark.createDataFrame([(k, "xx", 9.0) for k in keys], "id bigint, region string, amount double")
    icefloe.spark.upsert(df.coalesce(1), catalog.load_table(name))

    java_rows = oracle.df(name).collect()
    assert len(java_rows) == len(model), "an old row of an upserted key survived"
    assert {r["id"]: r["amount"] for r in java_rows} == model, "Java reads the model's rows"
    ours = catalog.load_table(name).scan().to_arrow().to_pylist()
    assert len(ours) == len(model)
    assert {r["id"]: r["amount"] for r in ours} == model
    summary = oracle.snapshots(name)[-1]["summary"]
    deletes = [f for f in oracle.files(name) if f["content"] == 2]
    if old_partitioning == "region":
        assert "added-equality-deletes" not in summary, "copy-on-write: rows rewritten"
        assert not deletes
    else:
        assert "deleted-data-files" not in summary, "merge-on-read: no data file rewritten"
        assert sorted({f["spec_id"] for f in deletes}) == [0, 1], "one copy of the keys per live spec"


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_spark_writes_with_dots_and_backticks_in_column_names_twin_java(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """Columns named `a.b` (a dot, next to a column `a`) and ``c`d`` (a backtick), partitioned
    and sorted by them: append, update, merge, upsert and delete on Spark, each twinned by
    Java's SQL. mapInArrow looked input columns up by name (a dot made it a struct access)
    and icefloe quoted names without doubling backticks, so every one of these failed."""
    import icefloe.spark

    java, ours = new_table_name("names_java"), new_table_name("names_ours")
    rows = spark.sql(
        "SELECT id, CONCAT('p', CAST(id % 3 AS STRING)) AS `a.b`, CONCAT('x', CAST(id AS STRING)) AS a, "
        "CAST(id AS DOUBLE) AS `c``d` FROM range(0, 40)"
    )
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id BIGINT, `a.b` STRING, a STRING, `c``d` DOUBLE) USING iceberg "
            f"PARTITIONED BY (`a.b`) TBLPROPERTIES ({_props(mode)})"
        )
        oracle.sql(f"ALTER TABLE {q} WRITE ORDERED BY `c``d` DESC")
    source = spark.sql(
        "SELECT id, 'p9' AS `a.b`, 'merged' AS a, CAST(-id AS DOUBLE) AS `c``d` FROM range(30, 50)"
    )
    source.createOrReplaceTempView("names_src")
    jq = oracle.qualified(java)
    rows.createOrReplaceTempView("names_rows")
    oracle.sql(f"INSERT INTO {jq} SELECT * FROM names_rows")
    oracle.sql(f"UPDATE {jq} SET `c``d` = `c``d` * 2, a = 'u' WHERE `a.b` = 'p1' AND id < 20")
    oracle.sql(
        f"MERGE INTO {jq} t USING names_src s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    upserts = spark.sql("SELECT id, 'p0' AS `a.b`, 'up' AS a, 0.5 AS `c``d` FROM range(0, 3)")
    upserts.createOrReplaceTempView("names_up")
    oracle.sql(
        f"MERGE INTO {jq} t USING names_up s ON t.id = s.id AND t.`a.b` = s.`a.b` "
        "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
    )
    oracle.sql(f"DELETE FROM {jq} WHERE `a.b` = 'p2' AND `c``d` > 20")

    icefloe.spark.append(rows, catalog.load_table(ours))
    icefloe.spark.update(
        spark, catalog.load_table(ours), "\"a.b\" = 'p1' AND id < 20", {"c`d": "`c``d` * 2", "a": "'u'"}
    )
    icefloe.spark.merge(
        source, catalog.load_table(ours), "target.id = source.id"
    ).when_matched_update_all().when_not_matched_insert_all().execute()
    icefloe.spark.upsert(upserts, catalog.load_table(ours), join_cols=["id", "a.b"])
    icefloe.spark.delete(spark, catalog.load_table(ours), '"a.b" = \'p2\' AND "c`d" > 20')

    expected = oracle.df(java)
    assert expected.count() > 30
    assert_same_rows(oracle.df(ours), expected, context=f"Java reads ours ({mode})")
    assert_same_rows(catalog.load_table(ours).scan().to_arrow(), expected, context=f"icefloe ({mode})")


def test_spark_append_matches_names_ignoring_case_and_fills_fixed_from_binary(
    spark: Any, oracle: Oracle, catalog: Any
) -> None:
    """`icefloe.spark.append` of `ID`/`S`/`FX` into `id`/`s`/`fx fixed[3]`, as Java's
    `writeTo().append()` takes it: Spark resolves names ignoring case and has no fixed type."""
    import icefloe.spark
    from icefloe.schema import Schema
    from icefloe.types import FixedType, LongType, NestedField, StringType

    name = new_table_name("case_fixed")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "s", StringType(), required=False),
        NestedField(3, "fx", FixedType(3), required=False),
    )
    catalog.create_table(name, schema)
    df = spark.sql("SELECT 2L AS ID, 'b' AS S, X'78797A' AS FX")
    icefloe.spark.append(df, catalog.load_table(name))
    df.writeTo(oracle.qualified(name)).append()
    assert sorted(tuple(r) for r in oracle.df(name).collect()) == [(2, "b", b"xyz"), (2, "b", b"xyz")]
    assert catalog.load_table(name).scan().to_arrow().column("fx").to_pylist() == [b"xyz", b"xyz"]
    # A case-sensitive session resolves names exactly, in both engines: `ID` is not `id`.
    try:
        spark.conf.set("spark.sql.caseSensitive", "true")
        with pytest.raises(Exception, match=r"(?i)id"):  # Spark 3.5 names `id`, 4.x `ID`
            df.writeTo(oracle.qualified(name)).append()
        with pytest.raises(ValidationError, match="unknown column 'ID'"):
            icefloe.spark.append(df, catalog.load_table(name))
    finally:
        spark.conf.unset("spark.sql.caseSensitive")
    assert oracle.df(name).count() == 2


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_values_that_do_not_fit_fail_the_write_as_javas(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """A bigint into an int column or a decimal(9,3) into a decimal(6,2) one: Java's UPDATE and
    MERGE fail (ANSI store assignment) and commit nothing; icefloe's Spark update / merge /
    upsert stored 705032704 and NULL. Values that fit are stored as Java stores them."""
    import icefloe.spark

    java, ours = new_table_name("fit_java"), new_table_name("fit_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(
            f"CREATE TABLE {q} (id bigint, small int, d decimal(6,2)) USING iceberg "
            f"TBLPROPERTIES ({_props(mode)})"
        )
        oracle.sql(f"INSERT INTO {q} VALUES (1, 1, 1.00), (2, 2, 2.00)")
    before = oracle.snapshot_ids(ours)
    for column, value in (("small", "5000000000"), ("d", "CAST(123456.789 AS DECIMAL(9,3))")):
        bad = {column: value}
        with pytest.raises(Exception, match=r"CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE"):
            oracle.sql(f"UPDATE {oracle.qualified(java)} SET {column} = {value} WHERE id = 1")
        with pytest.raises(Exception, match=r"CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE"):
            icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", bad)
    source = spark.sql("SELECT 2L AS id, 5000000000L AS small, CAST(3.5 AS DECIMAL(9,3)) AS d")
    with pytest.raises(Exception, match=r"CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE"):
        icefloe.spark.upsert(source, catalog.load_table(ours), join_cols=["id"])
    with pytest.raises(Exception, match=r"CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE"):
        (
            icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id")
            .when_matched_update_all()
            .execute()
        )
    assert oracle.snapshot_ids(ours) == before
    # Values that fit: stored, as Java stores them.
    fits = {"small": "CAST(7 AS BIGINT)", "d": "CAST(12.345 AS DECIMAL(9,3))"}
    oracle.sql(f"UPDATE {oracle.qualified(java)} SET small = {fits['small']}, d = {fits['d']} WHERE id = 1")
    icefloe.spark.update(spark, catalog.load_table(ours), "id = 1", fits)
    assert_same_rows(oracle.df(ours), oracle.df(java), context="fits")


@pytest.mark.parametrize("mode", ["merge-on-read", "copy-on-write"])
def test_a_merge_of_delete_clauses_only_twins_java(
    spark: Any, oracle: Oracle, catalog: Any, mode: str
) -> None:
    """`when_matched_delete()` alone (no clause writes rows) deletes the matched rows as Java's
    `MERGE ... WHEN MATCHED THEN DELETE`; it failed with an IndexError."""
    import icefloe.spark

    java, ours = _twins(spark, oracle, mode)
    source = spark.sql("SELECT id FROM range(100, 120)")
    source.createOrReplaceTempView("delete_only_src")
    oracle.sql(
        f"MERGE INTO {oracle.qualified(java)} t USING delete_only_src s ON t.id = s.id "
        "WHEN MATCHED THEN DELETE"
    )
    metrics = (
        icefloe.spark.merge(source, catalog.load_table(ours), "target.id = source.id")
        .when_matched_delete()
        .execute()
    )
    assert metrics.rows_deleted == 20
    assert_same_rows(oracle.df(ours), oracle.df(java), context="delete-only merge")
