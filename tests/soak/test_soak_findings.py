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
