"""Divergences the differential soak found where Iceberg Java is the one that is wrong: each
pins both engines' behaviour (so the test fails when either changes) and says why icefloe's
is right. The soak's generator keeps away from them (support.soak.history), so that its
histories stay comparable.

- A DELETE on a branch filtering on a column added after the branch's head was written
  (seed 901417144, 2026-12-07): Java binds the filter to the branch head's schema and refuses
  the column ("Cannot find field"), although its own SELECT of the branch has the column (the
  table's schema, as Iceberg reads a branch) and returns the rows the filter matches, NULL in
  that column. icefloe deletes exactly the rows Java's SELECT with the same filter returns."""

from __future__ import annotations

from typing import Any

import pytest
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


def test_branch_delete_on_a_column_newer_than_the_branch_head(oracle: Oracle, catalog: Any) -> None:
    name = new_table_name("branch_new_col")
    q = oracle.qualified(name)
    for statement in (
        f"CREATE TABLE {q} (id bigint, s string) USING iceberg TBLPROPERTIES ('format-version'='2')",
        f"INSERT INTO {q} VALUES (1, 'a'), (2, 'b')",
        f"ALTER TABLE {q} CREATE BRANCH audit",
        f"INSERT INTO {q}.branch_audit VALUES (3, 'c')",  # the branch's head: schema (id, s)
        f"ALTER TABLE {q} ADD COLUMN n string",
        f"INSERT INTO {q} VALUES (4, 'd', 'x')",  # main moves on; the branch keeps its head
    ):
        oracle.sql(statement)

    # Java's read of the branch has `n` (NULL in every row) and the filter matches them all
    matched = oracle.spark.sql(f"SELECT id FROM {q}.branch_audit WHERE n IS NULL").collect()
    assert sorted(r[0] for r in matched) == [1, 2, 3]
    # ... but Java's DELETE with that filter refuses the column
    with pytest.raises(Exception, match="Cannot find field 'n'"):
        oracle.sql(f"DELETE FROM {q}.branch_audit WHERE n IS NULL")
    assert oracle.spark.sql(f"SELECT count(*) FROM {q} VERSION AS OF 'audit'").first()[0] == 3

    # icefloe deletes the rows Java's SELECT matched; main is untouched; Java reads the result
    table = catalog.load_table(name)
    table.delete("n IS NULL", branch="audit")
    assert oracle.spark.sql(f"SELECT count(*) FROM {q} VERSION AS OF 'audit'").first()[0] == 0
    main = oracle.spark.sql(f"SELECT id FROM {q}").collect()
    assert sorted(r[0] for r in main) == [1, 2, 4]
    # a filter on the new column matching none of the branch's rows deletes nothing
    oracle.sql(f"INSERT INTO {q}.branch_audit VALUES (5, 'e', null)")
    catalog.load_table(name).delete("n = 'x'", branch="audit")
    assert oracle.spark.sql(f"SELECT id FROM {q} VERSION AS OF 'audit'").first()[0] == 5


def test_position_delete_rewrite_after_partition_evolution(oracle: Oracle, catalog: Any) -> None:
    """Java's `rewrite_position_delete_files` groups delete files by their partition coerced to
    all specs' union, so the deletes of an unpartitioned spec and those of a later
    `bucket(4, n)` spec whose `n` is NULL share a group, which its rewriter then refuses
    ("expected to have same spec id, but got 0,1"; seed 219273507, 2026-12-07). The files are a
    valid table: icefloe rewrites them, and Java reads the same rows before and after."""
    name = new_table_name("pos_rewrite_specs")
    q = oracle.qualified(name)
    for statement in (
        f"CREATE TABLE {q} (id bigint, c string) USING iceberg TBLPROPERTIES ('format-version'='2', "
        "'write.update.mode'='merge-on-read', 'write.delete.mode'='merge-on-read')",
        f"INSERT INTO {q} VALUES (0, 'a'), (1, 'b'), (2, 'c')",
        f"ALTER TABLE {q} ADD COLUMN n int",
        f"ALTER TABLE {q} ADD PARTITION FIELD bucket(4, n)",
        f"UPDATE {q} SET c = 'x' WHERE id < 24",  # deletes of spec 0, new rows under spec 1
        f"UPDATE {q} SET c = NULL WHERE n IS NULL",  # deletes of both specs
    ):
        oracle.sql(statement)
    before = sorted(tuple(r) for r in oracle.spark.sql(f"SELECT * FROM {q}").collect())
    assert before == [(0, None, None), (1, None, None), (2, None, None)]
    with pytest.raises(Exception, match="expected to have same spec id"):
        oracle.sql(
            f"CALL {oracle.catalog}.system.rewrite_position_delete_files(table => '{name}', "
            "options => map('rewrite-all', 'true'))"
        )
    catalog.load_table(name).maintenance.rewrite_position_delete_files(rewrite_all=True)
    after = oracle.spark.sql(f"SELECT * FROM {q}").collect()
    assert sorted(tuple(r) for r in after) == before
    summary = catalog.load_table(name).current_snapshot().summary
    assert summary.operation.value == "replace", summary
