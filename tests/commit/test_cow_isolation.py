"""Copy-on-write DELETE and UPDATE honour `write.delete.isolation-level` /
`write.update.isolation-level` as Java's `CopyOnWriteOperation` does: at `serializable` (the
default) a concurrent append of rows that may match the condition is a conflict; at
`snapshot` only concurrent deletes are (`commitWithSnapshotIsolation` validates no
conflicting data), so the operation commits and the concurrent rows stay, as Java reads them.
The interleaving is made with a stale table object and a Java INSERT in between."""

from __future__ import annotations

from typing import Any

import icefloe.spark
import pytest
from icefloe.exceptions import CommitConflictError
from support.oracle import Oracle
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]

OPS = {
    "Table.delete": lambda spark, t: t.delete("v < 10"),
    "icefloe.spark.delete": lambda spark, t: icefloe.spark.delete(spark, t, "v < 10"),
    "Table.update": lambda spark, t: t.update("v < 10", {"v": -1}),
    "icefloe.spark.update": lambda spark, t: icefloe.spark.update(spark, t, "v < 10", {"v": "-1"}),
}


@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("isolation", ["serializable", "snapshot"])
def test_copy_on_write_isolation_levels(oracle: Oracle, catalog: Any, op: str, isolation: str) -> None:
    name = new_table_name("cow_iso")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id bigint, v int) USING iceberg TBLPROPERTIES ("
        "'write.delete.mode'='copy-on-write', 'write.update.mode'='copy-on-write', "
        f"'write.delete.isolation-level'='{isolation}', 'write.update.isolation-level'='{isolation}')"
    )
    oracle.sql(f"INSERT INTO {q} SELECT id, CAST(id AS int) FROM range(0, 10)")
    stale = catalog.load_table(name)  # the operation starts from this version ...
    oracle.sql(f"INSERT INTO {q} VALUES (100, 5)")  # ... a concurrent append that matches commits
    before = len(oracle.snapshots(name))
    if isolation == "serializable":
        with pytest.raises(CommitConflictError):
            OPS[op](oracle.spark, stale)
        assert len(oracle.snapshots(name)) == before
        return
    OPS[op](oracle.spark, stale)
    rows = sorted((r.id, r.v) for r in oracle.df(name).collect())
    expected = [(100, 5)] if "delete" in op else [(i, -1) for i in range(10)] + [(100, 5)]
    assert rows == expected
