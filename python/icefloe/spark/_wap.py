"""Spark's write-audit-publish session settings, read as Iceberg Java's SparkWriteConf and
SparkReadConf read them, so `icefloe.spark` writes and reads in a WAP session land where
Java's do. Both apply only to a table with `write.wap.enabled=true`:

- `spark.wap.branch`: writes go to that branch (a write naming another branch is an error),
  and reads without a snapshot, ref or time read it once it exists;
- `spark.wap.id`: each write's snapshot is staged with that `wap.id` (no ref moves; publish
  it with `manage_snapshots().cherrypick_snapshot`).

Setting both is an error, as in Java."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from icefloe._table_properties import wap_enabled
from icefloe.exceptions import ValidationError
from icefloe.write.branch import on_branch

if TYPE_CHECKING:
    from icefloe.table import Table

WAP_BRANCH = "spark.wap.branch"
WAP_ID = "spark.wap.id"


def _conf(spark: Any, key: str) -> str | None:
    value = spark.conf.get(key, None)
    return value if value else None


def write_target(
    spark: Any, table: Table, branch: str | None, snapshot_properties: dict[str, str] | None
) -> tuple[Table, dict[str, str] | None]:
    """The table (a view of the branch the write goes to) and the snapshot properties a
    write in this session commits with."""
    if wap_enabled(table.properties):
        wap_id, wap_branch = _conf(spark, WAP_ID), _conf(spark, WAP_BRANCH)
        if wap_id is not None and wap_branch is not None:
            raise ValidationError(
                f"Cannot set both WAP ID and branch, but got ID [{wap_id}] and branch [{wap_branch}]"
            )
        if wap_branch is not None:
            if branch is not None and branch != wap_branch:
                raise ValidationError(
                    f"Cannot write to both branch and WAP branch, but got branch [{branch}] and "
                    f"WAP branch [{wap_branch}]"
                )
            branch = wap_branch
        if wap_id is not None and "wap.id" not in (snapshot_properties or {}):
            snapshot_properties = {**(snapshot_properties or {}), "wap.id": wap_id}
    return on_branch(table, branch), snapshot_properties


def read_ref(spark: Any, table: Table) -> str | None:
    """The branch a read that names no snapshot, ref or time reads in this session: the WAP
    branch once it exists, else None (the current snapshot)."""
    if not wap_enabled(table.properties):
        return None
    wap_branch = _conf(spark, WAP_BRANCH)
    return wap_branch if wap_branch is not None and wap_branch in table.refs() else None
