"""Schema evolution (`table.update_schema()`) against Apache Iceberg Java.

Twins made identically by icefloe; one evolved by icefloe, the other by Java (Spark SQL's
`ALTER TABLE`, or the Java API through py4j where SQL cannot say it); after each change the
metadata must agree (ids, types, docs, required, identifier fields, last-column-id) and rows
written by both engines before and after must read the same in both. Bad changes are clear
errors that leave the table untouched.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from icefloe.exceptions import CommitConflictError, ValidationError
from icefloe.schema import Schema
from icefloe.types import (
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)
from icefloe.update_schema import UpdateSchema
from support.evolution_twins import (
    assert_rows_agree,
    assert_same_evolution,
    make_twins,
    raw_metadata,
    write_row_both_engines,
)
from support.oracle import Oracle

pytestmark = [pytest.mark.spark, pytest.mark.interop]

BASE = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "data", StringType()),
    NestedField(3, "i", IntegerType()),
    NestedField(4, "f", FloatType()),
    NestedField(5, "dec", DecimalType(9, 2)),
    NestedField(6, "req", StringType(), required=True),
    NestedField(7, "st", StructType(NestedField(8, "a", IntegerType()), NestedField(9, "b", StringType()))),
)

Step = tuple[str, Callable[[UpdateSchema], Any], Callable[[Oracle, str], Any]]


def _sql(*stmts: str) -> Callable[[Oracle, str], None]:
    def run(oracle: Oracle, name: str) -> None:
        for s in stmts:
            oracle.sql(s.format(t=oracle.qualified(name)))

    return run


def _java_union(schema: Schema) -> Callable[[Oracle, str], None]:
    def run(oracle: Oracle, name: str) -> None:
        jschema = oracle.jvm.org.apache.iceberg.SchemaParser.fromJson(schema.to_json())
        oracle.java_table(name).updateSchema().unionByNameWith(jschema).commit()

    return run


STEPS: list[Step] = [
    (
        "add a column with a doc",
        lambda u: u.add_column("added", LongType(), doc="a doc"),
        _sql("ALTER TABLE {t} ADD COLUMN added bigint COMMENT 'a doc'"),
    ),
    (
        "add struct and map columns in one change",
        lambda u: u.add_column(
            "point", StructType(NestedField(0, "x", DoubleType()), NestedField(0, "y", DoubleType()))
        ).add_column("tags", MapType(0, StringType(), 0, IntegerType(), value_required=False)),
        _sql("ALTER TABLE {t} ADD COLUMNS (point struct<x: double, y: double>, tags map<string, int>)"),
    ),
    (
        "add a nested column",
        lambda u: u.add_column(("st", "c"), StringType()),
        _sql("ALTER TABLE {t} ADD COLUMN st.c string"),
    ),
    (
        "rename a column",
        lambda u: u.rename_column("data", "payload"),
        _sql("ALTER TABLE {t} RENAME COLUMN data TO payload"),
    ),
    (
        "rename a nested column",
        lambda u: u.rename_column("st.b", "bee"),
        _sql("ALTER TABLE {t} RENAME COLUMN st.b TO bee"),
    ),
    (
        "promote int -> long",
        lambda u: u.update_column("i", LongType()),
        _sql("ALTER TABLE {t} ALTER COLUMN i TYPE bigint"),
    ),
    (
        "promote float -> double",
        lambda u: u.update_column("f", DoubleType()),
        _sql("ALTER TABLE {t} ALTER COLUMN f TYPE double"),
    ),
    (
        "widen a decimal",
        lambda u: u.update_column("dec", DecimalType(12, 2)),
        _sql("ALTER TABLE {t} ALTER COLUMN dec TYPE decimal(12,2)"),
    ),
    (
        "required -> optional",
        lambda u: u.update_column("req", required=False),
        _sql("ALTER TABLE {t} ALTER COLUMN req DROP NOT NULL"),
    ),
    (
        "a doc",
        lambda u: u.update_column("req", doc="no longer required"),
        _sql("ALTER TABLE {t} ALTER COLUMN req COMMENT 'no longer required'"),
    ),
    ("move first", lambda u: u.move_first("payload"), _sql("ALTER TABLE {t} ALTER COLUMN payload FIRST")),
    (
        "move after",
        lambda u: u.move_after("added", "id"),
        _sql("ALTER TABLE {t} ALTER COLUMN added AFTER id"),
    ),
    (
        "move a nested column",
        lambda u: u.move_before("st.c", "st.a"),
        _sql("ALTER TABLE {t} ALTER COLUMN st.c FIRST"),
    ),
    ("drop a column", lambda u: u.delete_column("f"), _sql("ALTER TABLE {t} DROP COLUMN f")),
    ("drop a nested column", lambda u: u.delete_column("st.bee"), _sql("ALTER TABLE {t} DROP COLUMN st.bee")),
    (
        "set identifier fields",
        lambda u: u.set_identifier_fields("id"),
        _sql("ALTER TABLE {t} SET IDENTIFIER FIELDS id"),
    ),
    (
        "union by name: new top-level and nested columns, a widened type, optional, a doc",
        lambda u: u.union_by_name(UNION),
        lambda oracle, name: _java_union(UNION)(oracle, name),
    ),
    (
        "add back a dropped name (a new id)",
        lambda u: u.add_column("f", StringType()),
        _sql("ALTER TABLE {t} ADD COLUMN f string"),
    ),
]

# Applied after the steps above: `extra` and `st.d` are new, `dec` wider, `id` keeps its type
# (int is narrower: ignored), `req` gets a doc.
UNION = Schema(
    NestedField(1, "id", IntegerType(), required=True),
    NestedField(2, "dec", DecimalType(14, 2)),
    NestedField(3, "req", StringType(), doc="from the union"),
    NestedField(4, "st", StructType(NestedField(5, "d", LongType()), NestedField(6, "a", IntegerType()))),
    NestedField(7, "extra", StructType(NestedField(8, "e1", StringType()), NestedField(9, "e2", LongType()))),
)


def test_schema_evolution_matches_java_step_by_step(oracle: Oracle, catalog: Any) -> None:
    ours, theirs = make_twins(catalog, BASE, "schema")
    write_row_both_engines(oracle, catalog, ours, 0)
    write_row_both_engines(oracle, catalog, theirs, 0)
    assert_same_evolution(oracle, ours, theirs, "created")
    for k, (what, ice, java) in enumerate(STEPS, start=1):
        with catalog.load_table(ours).update_schema() as u:
            ice(u)
        java(oracle, theirs)
        parts = assert_same_evolution(oracle, ours, theirs, what)
        write_row_both_engines(oracle, catalog, ours, 10 * k)
        write_row_both_engines(oracle, catalog, theirs, 10 * k)
        assert_rows_agree(oracle, catalog, ours, theirs, what)
    # the end state, spelled out: every step made one schema
    assert parts["current-schema-id"] == len(STEPS)
    final = catalog.load_table(ours).schema()
    assert [f.name for f in final.fields][:3] == ["payload", "id", "added"]
    assert final.identifier_field_ids == [1]
    assert final.find_field("extra.e2").field_id == parts["last-column-id"] - 1
    assert final.find_field("f").field_id == parts["last-column-id"]


def _metadata_files(oracle: Oracle, name: str) -> list[str]:
    import os

    folder = os.path.dirname(oracle.metadata_location(name).removeprefix("file:"))
    return sorted(f for f in os.listdir(folder) if f.endswith(".metadata.json"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda u: u.update_column("data", IntegerType()), "cannot change column type: data: string -> int"),
        (lambda u: u.update_column("id", IntegerType()), "cannot change column type: id: long -> int"),
        (lambda u: u.update_column("dec", DecimalType(9, 3)), "decimal(9, 2) -> decimal(9, 3)"),
        (lambda u: u.delete_column("id"), "cannot delete identifier field"),
        (lambda u: u.delete_column("nope"), "cannot delete missing column: nope"),
        (lambda u: u.rename_column("nope", "x"), "cannot rename missing column: nope"),
        (lambda u: u.update_column("st.nope", LongType()), "cannot update missing column: st.nope"),
        (lambda u: u.add_column("data", StringType()), "name already exists: data"),
        (lambda u: u.add_column(("st", "a"), StringType()), "name already exists: st.a"),
        (lambda u: u.add_column(("nope", "a"), StringType()), "cannot find parent struct"),
        (lambda u: u.add_column("r", StringType(), required=True), "cannot add required column"),
        (lambda u: u.update_column("data", required=True), "optional -> required"),
        (lambda u: u.set_identifier_fields("data"), "not a required field"),
        (lambda u: u.set_identifier_fields("nope"), "not found in current schema"),
        (lambda u: u.move_after("st.a", "id"), "to a different struct"),
        (lambda u: u.add_column("x", LongType()).delete_column("x"), "cannot delete missing column: x"),
    ],
)
def test_bad_changes_are_errors_and_change_nothing(
    oracle: Oracle, catalog: Any, table_name: str, change: Callable[[UpdateSchema], Any], message: str
) -> None:
    catalog.create_table(table_name, Schema(*BASE.fields, identifier_field_ids=[1]))
    before_files = _metadata_files(oracle, table_name)
    before = raw_metadata(oracle, table_name)
    table = catalog.load_table(table_name)
    with pytest.raises(ValidationError) as info:
        with table.update_schema() as u:
            change(u)
    assert message in str(info.value), str(info.value)
    assert _metadata_files(oracle, table_name) == before_files
    assert raw_metadata(oracle, table_name) == before
    assert table.metadata_location == catalog.load_table(table_name).metadata_location


def test_incompatible_changes_when_allowed(oracle: Oracle, catalog: Any) -> None:
    ours, theirs = make_twins(catalog, BASE, "incompat")
    with catalog.load_table(ours).update_schema(allow_incompatible_changes=True) as u:
        u.add_column("must", LongType(), required=True).update_column("data", required=True)
    jt = oracle.java_table(theirs)
    jt.updateSchema().allowIncompatibleChanges().addRequiredColumn(
        "must", oracle.jvm.org.apache.iceberg.types.Types.LongType.get()
    ).requireColumn("data").commit()
    assert_same_evolution(oracle, ours, theirs, "incompatible changes allowed")


def test_a_concurrent_schema_change_is_a_conflict(oracle: Oracle, catalog: Any, table_name: str) -> None:
    catalog.create_table(table_name, BASE)
    mine, other = catalog.load_table(table_name), catalog.load_table(table_name)
    u = mine.update_schema()
    u.add_column("mine", LongType())
    with other.update_schema() as v:
        v.add_column("theirs", LongType())
    with pytest.raises(CommitConflictError) as info:
        u.commit()
    assert "current-schema-id 0" in str(info.value) and "current-schema-id 1" in str(info.value), str(
        info.value
    )
    names = [f.name for f in catalog.load_table(table_name).schema().fields]
    assert "theirs" in names and "mine" not in names
    # an append in between is no conflict: the change re-applies to the refreshed table
    again = catalog.load_table(table_name)
    u2 = again.update_schema()
    u2.add_column("later", StringType())
    write_row_both_engines(oracle, catalog, table_name, 1)
    u2.commit()
    assert catalog.load_table(table_name).schema().find_field("later").field_id == 11


def test_name_mapping_and_column_properties_follow_the_change(oracle: Oracle, catalog: Any) -> None:
    mapping = json.dumps(
        [
            {"field-id": 1, "names": ["id"]},
            {"field-id": 2, "names": ["data"]},
            {
                "field-id": 7,
                "names": ["st"],
                "fields": [{"field-id": 8, "names": ["a"]}, {"field-id": 9, "names": ["b"]}],
            },
        ]
    )
    props = {
        "schema.name-mapping.default": mapping,
        "write.metadata.metrics.column.data": "full",
        "write.metadata.metrics.column.i": "counts",
    }
    ours, theirs = make_twins(catalog, BASE, "mapping", properties=props)
    with catalog.load_table(ours).update_schema() as u:
        u.rename_column("data", "payload").delete_column("i").add_column(("st", "c"), LongType())
    _sql(
        "ALTER TABLE {t} RENAME COLUMN data TO payload",
        "ALTER TABLE {t} DROP COLUMN i",
        "ALTER TABLE {t} ADD COLUMN st.c bigint",
    )(oracle, theirs)
    a, b = raw_metadata(oracle, ours)["properties"], raw_metadata(oracle, theirs)["properties"]

    def canon(fields: list[dict[str, Any]]) -> list[Any]:
        return sorted((f.get("field-id"), sorted(f["names"]), canon(f.get("fields") or [])) for f in fields)

    assert canon(json.loads(a.pop("schema.name-mapping.default"))) == canon(
        json.loads(b.pop("schema.name-mapping.default"))
    )
    assert (
        {k: v for k, v in a.items() if k.startswith("write.metadata")}
        == {k: v for k, v in b.items() if k.startswith("write.metadata")}
        == {"write.metadata.metrics.column.payload": "full"}
    )


def test_union_by_name_with_an_arrow_schema(oracle: Oracle, catalog: Any) -> None:
    import pyarrow as pa

    arrow = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("i", pa.int64()),  # int -> long
            pa.field("req", pa.string()),  # required -> optional
            pa.field("new_col", pa.string()),
            pa.field("st", pa.struct([pa.field("z", pa.float64()), pa.field("a", pa.int32())])),
            pa.field("lst", pa.list_(pa.struct([pa.field("x", pa.int32())]))),
        ]
    )
    ours, theirs = make_twins(catalog, BASE, "union_arrow")
    with catalog.load_table(ours).update_schema() as u:
        u.union_by_name(arrow)
    _java_union(Schema.from_arrow(arrow))(oracle, theirs)
    parts = assert_same_evolution(oracle, ours, theirs, "union by name with an Arrow schema")
    schema = catalog.load_table(ours).schema()
    assert schema.find_type("i") == LongType() and not schema.find_field("req").required
    assert [f.name for f in schema.fields][-2:] == ["new_col", "lst"]
    # nested additions first (st.z: 10), then the struct's own: new_col 11, lst 12, element 13, x 14
    assert schema.find_field("st.z").field_id == 10 and schema.find_field("lst.element.x").field_id == 14
    assert parts["last-column-id"] == 14


def test_filters_bind_to_the_current_schema_after_a_change(
    oracle: Oracle, catalog: Any, table_name: str
) -> None:
    """A scan, delete or overwrite of the current table binds its filter to the current
    schema, not the last snapshot's (as Java's): after a rename and an add with no snapshot
    since, the new names work; a time travel still binds to its snapshot's schema. (Found by
    tests/table/test_table_model_stateful.py: a merge-on-read delete by a renamed column failed.)"""
    import pyarrow as pa
    from support.oracle import assert_same_rows

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()))
    props = {"format-version": "2", "write.delete.mode": "merge-on-read"}
    t = catalog.create_table(table_name, schema=schema, properties=props)
    arrow = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())])
    t.append(pa.table({"id": [1, 2, 3, 4], "region": ["eu", "us", "eu", "ap"]}, schema=arrow))
    first = t.current_snapshot().snapshot_id
    with t.update_schema() as u:
        u.rename_column("region", "area")
        u.add_column("extra", LongType())

    got = t.scan(row_filter="area = 'eu'").to_arrow()
    assert_same_rows(got, oracle.df(table_name, where="area = 'eu'"), context="scan by a renamed column")
    assert sorted(got.column("id").to_pylist()) == [1, 3]
    assert t.scan(row_filter="extra IS NULL").to_arrow().num_rows == 4
    old = t.scan(snapshot_id=first, row_filter="region = 'us'").to_arrow()
    assert old.column_names == ["id", "region"] and old.column("id").to_pylist() == [2]

    t.delete("area = 'eu'")  # merge-on-read: position deletes
    with t.transaction() as tx:
        tx.set_properties({"write.delete.mode": "copy-on-write"})
    t.delete("extra IS NULL and id = 2")  # copy-on-write: the file is rewritten
    assert_same_rows(t.scan().to_arrow(), oracle.df(table_name), context="after the deletes")
    assert t.scan().to_arrow().to_pylist() == [{"id": 4, "area": "ap", "extra": None}]


def test_dropping_a_column_of_the_sort_order_is_refused_as_java_refuses_it(
    oracle: Oracle, catalog: Any
) -> None:
    """Java refuses to drop a column the default sort order uses ("Cannot find source column
    for sort field"); icefloe committed it, leaving a sort order over a missing column (the
    differential soak, seed 316909072). Now refused, nothing committed; after the order is
    replaced the column can go, on both."""
    from support.session import new_table_name

    java, ours = new_table_name("sort_drop_java"), new_table_name("sort_drop_ours")
    for name in (java, ours):
        q = oracle.qualified(name)
        oracle.sql(f"CREATE TABLE {q} (id bigint, c bigint, d string) USING iceberg")
        oracle.sql(f"ALTER TABLE {q} WRITE ORDERED BY c ASC NULLS LAST")
    with pytest.raises(Exception, match="Cannot find source column for sort field"):
        oracle.sql(f"ALTER TABLE {oracle.qualified(java)} DROP COLUMN c")
    table = catalog.load_table(ours)
    before = table.metadata_location
    with pytest.raises(ValidationError, match="sort field"):
        with table.update_schema() as u:
            u.delete_column("c")
    assert catalog.load_table(ours).metadata_location == before
    oracle.sql(f"ALTER TABLE {oracle.qualified(java)} WRITE UNORDERED")
    oracle.sql(f"ALTER TABLE {oracle.qualified(java)} DROP COLUMN c")
    with catalog.load_table(ours).replace_sort_order() as o:
        o.asc("d")
    with catalog.load_table(ours).update_schema() as u:
        u.delete_column("c")
    assert [f.name for f in catalog.load_table(ours).schema().fields] == ["id", "d"]
