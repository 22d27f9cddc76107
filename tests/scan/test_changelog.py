"""Changelog reads (`Table.changelog`, `icefloe.spark.read_changelog`).

1. Against Iceberg Java: on histories Java's changelog scan supports (appends, copy-on-write
   DELETE / UPDATE / MERGE / INSERT OVERWRITE made by Java's Spark SQL), our rows equal
   `CALL oracle.system.create_changelog_view(...)`'s, as multisets, for several ranges, with
   and without identifier columns (compute_updates).
2. Against a model: randomized histories written through icefloe (appends, filtered
   overwrites, copy-on-write and merge-on-read deletes and updates, equality-delete upserts,
   v2 position deletes and v3 deletion vectors), each checked against a dict model of the
   table kept by the test: a snapshot's changes are the multiset difference of the rows
   before and after it.
3. Bad input: unknown snapshot ids, a from snapshot that is not an ancestor of to, unknown
   identifier columns, duplicate identifiers with compute-updates.
"""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import NestedField, Schema, Table
from icefloe.catalog import Catalog
from icefloe.exceptions import ValidationError
from icefloe.types import IntegerType, LongType, StringType

MOR = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "v", StringType()),
    NestedField(3, "grp", IntegerType()),
    identifier_field_ids=[1],
)
ARROW = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string()), pa.field("grp", pa.int32())]
)
Row = tuple[int, str | None, int]


def _arrow(rows: list[Row]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "v": pa.array([r[1] for r in rows], pa.string()),
            "grp": pa.array([r[2] for r in rows], pa.int32()),
        },
        schema=ARROW,
    )


def _changes(table: pa.Table) -> Counter[tuple[Any, ...]]:
    """The changelog rows as a multiset of (ordinal, snapshot id, change type, id, v, grp)."""
    d = table.to_pydict()
    return Counter(
        zip(
            d["_change_ordinal"],
            d["_commit_snapshot_id"],
            d["_change_type"],
            d["id"],
            d["v"],
            d["grp"],
            strict=True,
        )
    )


@pytest.fixture
def cat(tmp_path: Path) -> Catalog:
    c = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    c.create_namespace("db")
    return c


# ---- 2. randomized histories against a model ----


class History:
    """A table and a model of it: the rows (by id) after each snapshot, in commit order."""

    def __init__(self, table: Table, rng: random.Random) -> None:
        self.table = table
        self.rng = rng
        self.rows: dict[int, Row] = {}
        self.states: list[tuple[int, dict[int, Row]]] = []  # (snapshot id, rows after it)
        self.next_id = 0

    def _record(self, before: int | None) -> None:
        self.table = self.table.refresh()
        snap = self.table.current_snapshot()
        sid = None if snap is None else snap.snapshot_id
        if sid != before and sid is not None:
            self.states.append((sid, dict(self.rows)))
        got = sorted(tuple(r.values()) for r in self.table.scan().to_arrow().to_pylist())
        assert got == sorted(self.rows.values()), "the model and the table disagree"

    def _current(self) -> int | None:
        snap = self.table.current_snapshot()
        return None if snap is None else snap.snapshot_id

    def _new_rows(self, n: int) -> list[Row]:
        out = []
        for _ in range(n):
            out.append((self.next_id, self.rng.choice(["a", "b", None]), self.rng.randrange(4)))
            self.next_id += 1
        return out

    def append(self) -> None:
        before = self._current()
        new = self._new_rows(self.rng.randrange(1, 40))
        self.table.append(_arrow(new))
        self.rows.update((r[0], r) for r in new)
        self._record(before)

    def delete(self) -> None:
        if not self.rows:
            return
        before = self._current()
        lo = self.rng.randrange(self.next_id)
        hi = lo + self.rng.randrange(1, 15)
        self.table.delete(f"id >= {lo} and id < {hi}")
        self.rows = {k: r for k, r in self.rows.items() if not (lo <= k < hi)}
        self._record(before)

    def update(self) -> None:
        if not self.rows:
            return
        before = self._current()
        g = self.rng.randrange(4)
        value = self.rng.choice(["x", "a"])  # "a": some rows keep their value (carry-overs)
        self.table.update(f"grp = {g}", {"v": value})
        self.rows = {k: (k, value, r[2]) if r[2] == g else r for k, r in self.rows.items()}
        self._record(before)

    def overwrite(self) -> None:
        before = self._current()
        g = self.rng.randrange(4)
        new = [(i, v, g) for i, v, _ in self._new_rows(self.rng.randrange(0, 10))]
        self.table.overwrite(_arrow(new), f"grp = {g}")
        self.rows = {k: r for k, r in self.rows.items() if r[2] != g}
        self.rows.update((r[0], r) for r in new)
        self._record(before)

    def upsert(self) -> None:
        before = self._current()
        keys = self.rng.sample(sorted(self.rows), min(len(self.rows), self.rng.randrange(1, 8)))
        changed = [(k, self.rng.choice(["u", "a"]), self.rows[k][2]) for k in keys]
        new = [(r[0], r[1], r[2]) for r in self._new_rows(self.rng.randrange(0, 4))]
        self.table.upsert(_arrow(changed + new), join_cols=["id"])
        self.rows.update((r[0], r) for r in changed + new)
        self._record(before)

    def expected(self, from_id: int | None, to_id: int | None) -> Counter[tuple[Any, ...]]:
        """The model's changes after `from_id` up to `to_id`: per snapshot, the rows before
        minus the rows after (DELETE) and the reverse (INSERT)."""
        ids = [s for s, _ in self.states]
        start = 0 if from_id is None else ids.index(from_id) + 1
        end = len(ids) if to_id is None else ids.index(to_id) + 1
        out: Counter[tuple[Any, ...]] = Counter()
        for ordinal, k in enumerate(range(start, end)):
            sid, after = self.states[k]
            prior = self.states[k - 1][1] if k > 0 else {}
            before_rows, after_rows = Counter(prior.values()), Counter(after.values())
            for r, n in (before_rows - after_rows).items():
                out[(ordinal, sid, "DELETE", *r)] += n
            for r, n in (after_rows - before_rows).items():
                out[(ordinal, sid, "INSERT", *r)] += n
        return out


def _as_updates(changes: Counter[tuple[Any, ...]]) -> Counter[tuple[Any, ...]]:
    """Model changes with a DELETE and an INSERT of one id in one ordinal as an update pair."""
    by_key: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    for row, n in changes.items():
        for _ in range(n):
            by_key.setdefault((row[0], row[3]), []).append(row)
    out: Counter[tuple[Any, ...]] = Counter()
    for rows in by_key.values():
        kinds = sorted(r[2] for r in rows)
        for r in rows:
            if kinds == ["DELETE", "INSERT"]:
                r = (r[0], r[1], "UPDATE_BEFORE" if r[2] == "DELETE" else "UPDATE_AFTER", *r[3:])
            out[r] += 1
    return out


@pytest.mark.parametrize(
    ("seed", "props"),
    [
        (1, {}),  # copy-on-write
        (2, MOR),  # v2 position deletes + equality-delete upserts
        (3, {**MOR, "format-version": "3"}),  # deletion vectors
    ],
    ids=["cow", "mor-v2", "mor-v3"],
)
def test_random_histories_match_the_model(cat: Catalog, seed: int, props: dict[str, str]) -> None:
    from icefloe import BucketTransform, PartitionField, PartitionSpec

    rng = random.Random(seed)
    # Partitioned by the key (an equality-delete upsert needs the partition source among its
    # key columns), so deletes are scoped per partition.
    spec = PartitionSpec(PartitionField(1, 1000, BucketTransform(3), "id_bucket"))
    table = cat.create_table("db.h", schema=SCHEMA, partition_spec=spec, properties=props)
    h = History(table, rng)
    h.append()
    ops = [h.append, h.delete, h.update, h.overwrite, h.upsert]
    for _ in range(14):
        rng.choice(ops)()
    table = h.table
    ids = [s for s, _ in h.states]
    assert len(ids) >= 8
    ranges: list[tuple[int | None, int | None]] = [(None, None)]
    for _ in range(3):
        a, b = sorted(rng.sample(range(len(ids)), 2))
        ranges.append((ids[a], ids[b]))
    ranges.append((ids[0], None))
    ranges.append((None, ids[len(ids) // 2]))
    for from_id, to_id in ranges:
        expected = h.expected(from_id, to_id)
        got = table.changelog(from_snapshot_id=from_id, to_snapshot_id=to_id)
        assert got.column_names == [
            "id",
            "v",
            "grp",
            "_change_type",
            "_change_ordinal",
            "_commit_snapshot_id",
        ]
        assert _changes(got) == expected, (from_id, to_id)
        with_updates = table.changelog(from_id, to_id, identifier_columns=["id"])
        assert _changes(with_updates) == _as_updates(expected), (from_id, to_id)
    # The history holds the delete kinds the table's mode writes.
    added: Counter[str] = Counter()
    for snap in table.snapshots():
        for k, v in snap.summary.items():
            if k.startswith("added-"):
                added[k] += int(v)
    if props:
        assert added["added-equality-delete-files"] > 0, added
        assert added["added-position-deletes"] > 0, added
        if props.get("format-version") == "3":
            assert added["added-dvs"] > 0, added
    else:
        assert added["added-delete-files"] == 0, added


def test_delete_files_in_one_snapshot_are_deletes_at_its_ordinal(cat: Catalog) -> None:
    """A merge-on-read delete, an update and an equality-delete upsert: each removed row is a
    DELETE at the snapshot that wrote the delete file, with its values as they were."""
    table = cat.create_table("db.mor", schema=SCHEMA, properties=MOR)
    table.append(_arrow([(i, "a", i % 2) for i in range(10)]))
    s1 = table.refresh().current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.delete("id < 3")
    s2 = table.refresh().current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.update("id = 5", {"v": "b"})
    s3 = table.refresh().current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.upsert(_arrow([(6, "c", 0), (2, "new", 0)]), join_cols=["id"])
    s4 = table.refresh().current_snapshot().snapshot_id  # type: ignore[union-attr]
    got = _changes(table.changelog(from_snapshot_id=s1))
    assert got == Counter(
        [
            (0, s2, "DELETE", 0, "a", 0),
            (0, s2, "DELETE", 1, "a", 1),
            (0, s2, "DELETE", 2, "a", 0),
            (1, s3, "DELETE", 5, "a", 1),
            (1, s3, "INSERT", 5, "b", 1),
            (2, s4, "DELETE", 6, "a", 0),
            (2, s4, "INSERT", 6, "c", 0),
            (2, s4, "INSERT", 2, "new", 0),
        ]
    )
    updates = _changes(table.changelog(s1, s4, identifier_columns=["id"]))
    assert updates[(1, s3, "UPDATE_BEFORE", 5, "a", 1)] == 1
    assert updates[(1, s3, "UPDATE_AFTER", 5, "b", 1)] == 1
    assert updates[(2, s4, "INSERT", 2, "new", 0)] == 1
    # Empty ranges.
    assert table.changelog(from_snapshot_id=s4).num_rows == 0
    assert table.changelog(from_snapshot_id=s2, to_snapshot_id=s2).num_rows == 0


# ---- 3. bad input ----


def test_bad_input_is_a_clear_error(cat: Catalog) -> None:
    table = cat.create_table("db.bad", schema=SCHEMA)
    assert table.changelog().num_rows == 0  # no snapshot yet
    table.append(_arrow([(1, "a", 0)]))
    s1 = table.refresh().current_snapshot().snapshot_id  # type: ignore[union-attr]
    table.append(_arrow([(2, "a", 0)]))
    s2 = table.refresh().current_snapshot().snapshot_id  # type: ignore[union-attr]
    with pytest.raises(ValidationError, match=r"from snapshot id 12345 is not in table .*known snapshot ids"):
        table.changelog(from_snapshot_id=12345)
    with pytest.raises(ValidationError, match=r"to snapshot id 777 is not in table"):
        table.changelog(to_snapshot_id=777)
    with pytest.raises(
        ValidationError, match=rf"from snapshot {s2} \(exclusive\) is not an ancestor of to snapshot {s1}"
    ):
        table.changelog(from_snapshot_id=s2, to_snapshot_id=s1)
    with pytest.raises(
        ValidationError, match=r"identifier column 'nope' is not a column .*columns: \[id, v, grp\]"
    ):
        table.changelog(identifier_columns=["nope"])
    with pytest.raises(ValidationError, match="identifier_columns is empty"):
        table.changelog(identifier_columns=[])
    # Two DELETEs of one identifier in one ordinal: no update can be computed (as in Java).
    table.append(_arrow([(1, "b", 0)]))
    table.refresh().delete("id = 1")
    with pytest.raises(ValidationError, match=r"multiple rows with the same identifier fields\(\[id\]\)"):
        table.refresh().changelog(identifier_columns=["id"])
    assert table.refresh().changelog(from_snapshot_id=s1).num_rows == 4


# ---- 1. against Iceberg Java's create_changelog_view (and 2. on Spark) ----


@pytest.mark.spark
@pytest.mark.interop
def test_equal_to_java_create_changelog_view(spark: Any, oracle: Any, catalog: Catalog) -> None:
    from icefloe.spark import read_changelog
    from support.oracle import assert_same_rows
    from support.session import new_table_name

    name = new_table_name("changelog")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, v STRING, grp INT) USING iceberg PARTITIONED BY (grp) "
        "TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id % 5 AS STRING), CAST(id % 3 AS INT) FROM range(0, 40)")
    oracle.sql(f"INSERT INTO {q} SELECT id, 'z', CAST(id % 3 AS INT) FROM range(40, 50)")
    oracle.sql(f"UPDATE {q} SET v = 'u' WHERE id % 7 = 0")  # copy-on-write
    oracle.sql(f"DELETE FROM {q} WHERE id >= 30 AND id < 36")  # copy-on-write
    oracle.sql(f"UPDATE {q} SET v = v WHERE grp = 1")  # every row a carry-over
    oracle.sql(
        f"MERGE INTO {q} t USING (SELECT id, 'm' AS v, CAST(id % 3 AS INT) AS grp FROM range(45, 55)) s "
        "ON t.id = s.id WHEN MATCHED THEN UPDATE SET t.v = s.v WHEN NOT MATCHED THEN INSERT *"
    )
    # Compaction: a `replace` snapshot, which changes no row and gets no ordinal.
    oracle.sql(
        f"CALL {oracle.catalog}.system.rewrite_data_files("
        f"table => '{q}', options => map('min-input-files', '2'))"
    )
    oracle.sql(f"INSERT OVERWRITE {q} PARTITION (grp = 2) SELECT id, 'o' FROM range(100, 103)")
    oracle.sql(f"DELETE FROM {q} WHERE grp = 0 AND id < 10")
    ids = oracle.snapshot_ids(name)
    assert len(ids) == 9
    assert [s["operation"] for s in oracle.snapshots(name)].count("replace") == 1
    table = catalog.load_table(name)

    def java_view(from_id: int | None, to_id: int | None, identifier: bool) -> Any:
        view = f"cl_{abs(hash((from_id, to_id, identifier))) % 10**8}"
        options = {}
        if from_id is not None:
            options["start-snapshot-id"] = str(from_id)
        if to_id is not None:
            options["end-snapshot-id"] = str(to_id)
        args = [f"table => '{q}'", f"changelog_view => '{view}'"]
        if options:
            args.append("options => map(" + ", ".join(f"'{k}', '{v}'" for k, v in options.items()) + ")")
        if identifier:
            args.append("identifier_columns => array('id')")
        oracle.sql(f"CALL {oracle.catalog}.system.create_changelog_view({', '.join(args)})")
        return spark.table(view)

    for n, (from_id, to_id) in enumerate([(None, None), (ids[1], ids[6]), (ids[5], None), (None, ids[2])]):
        for identifier in (False, True):
            expected = java_view(from_id, to_id, identifier)
            cols = ["id"] if identifier else None
            context = f"range ({from_id}, {to_id}], identifier columns {cols}"
            ours = table.changelog(from_id, to_id, identifier_columns=cols)
            kinds = set(ours.column("_change_type").to_pylist())
            assert kinds == (
                {"UPDATE_BEFORE", "UPDATE_AFTER", "INSERT", "DELETE"} if identifier else {"INSERT", "DELETE"}
            ) or (from_id is not None or to_id is not None), (context, kinds)
            assert_same_rows(ours, expected, context=context)
            if n < 2:  # the Spark path on two ranges (it is also checked on delete files below)
                df = read_changelog(spark, table, from_id, to_id, identifier_columns=cols)
                assert_same_rows(df, expected, context="spark " + context)


@pytest.mark.spark
def test_read_changelog_on_spark_reads_delete_files(
    spark: Any, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Spark path on a merge-on-read v3 history (deletion vectors, equality deletes)
    gives the same rows as the Arrow path, which the model tests check."""
    from icefloe.spark import read_changelog
    from support.oracle import assert_same_rows
    from support.session import new_table_name

    name = new_table_name("changelog_mor")
    table = catalog.create_table(name, schema=SCHEMA, properties={**MOR, "format-version": "3"})
    table.append(_arrow([(i, "a", i % 3) for i in range(30)]))
    table.refresh().delete("id < 5")
    table.refresh().update("grp = 1", {"v": "b"})
    table.refresh().upsert(_arrow([(7, "c", 1), (100, "n", 0)]), join_cols=["id"])
    table.refresh().delete("id >= 20")
    table = table.refresh()
    for cols in (None, ["id"]):
        expected = table.changelog(identifier_columns=cols)
        assert expected.num_rows > 20
        assert_same_rows(read_changelog(spark, table, identifier_columns=cols), expected, context=str(cols))
    # A plan too large to ride in the closure travels as RDD rows, one unit each.
    import icefloe.spark.changelog as spark_changelog

    monkeypatch.setattr(spark_changelog, "INLINE_UNIT_BYTES", 0)
    assert_same_rows(read_changelog(spark, table), table.changelog(), context="units as RDD rows")
    with pytest.raises(ValidationError, match="identifier column 'nope'"):
        read_changelog(spark, table, identifier_columns=["nope"])


@pytest.mark.spark
@pytest.mark.interop
def test_read_changelog_on_map_columns_equal_to_java(spark: Any, oracle: Any, catalog: Catalog) -> None:
    """Map columns (top-level, in a struct, in a list) cannot be window keys: carry-over
    removal keys them by their JSON text. Java's view needs identifier columns there; without
    them the Spark path gives the Arrow path's rows."""
    from icefloe.spark import read_changelog
    from support.oracle import assert_same_rows
    from support.session import new_table_name

    name = new_table_name("changelog_map")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, m MAP<STRING, STRING>, s STRUCT<a: INT, tags: MAP<STRING, INT>>, "
        "l ARRAY<MAP<STRING, STRING>>) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(
        f"INSERT INTO {q} VALUES "
        "(1, map('k', 'v', 'j', 'w'), named_struct('a', 1, 'tags', map('x', 1)), array(map('a', 'b'))), "
        "(2, NULL, NULL, NULL), "
        "(3, map('k', 'v'), named_struct('a', 3, 'tags', NULL), array()), "
        "(4, map(), named_struct('a', 4, 'tags', map()), array(NULL))"
    )
    oracle.sql(f"UPDATE {q} SET m = map('k', 'new') WHERE id = 1")  # copy-on-write: 2, 3, 4 carried over
    oracle.sql(f"UPDATE {q} SET s = named_struct('a', 30, 'tags', map('y', 2)) WHERE id = 3")
    oracle.sql(f"DELETE FROM {q} WHERE id = 4")
    view = f"cl_map_{abs(hash(name)) % 10**8}"
    oracle.sql(
        f"CALL {oracle.catalog}.system.create_changelog_view(table => '{q}', "
        f"changelog_view => '{view}', identifier_columns => array('id'))"
    )
    expected = spark.table(view)
    table = catalog.load_table(name)
    ours = read_changelog(spark, table, identifier_columns=["id"])
    assert sorted(r["_change_type"] for r in ours.collect()) == sorted(
        ["INSERT"] * 4 + ["UPDATE_BEFORE", "UPDATE_AFTER"] * 2 + ["DELETE"]
    )
    assert_same_rows(ours, expected, context="identifier columns ['id']")
    assert_same_rows(read_changelog(spark, table), table.changelog(), context="no identifier columns")
