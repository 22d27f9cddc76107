"""After a SUCCESSFUL Spark write, files of task attempts that are not in the commit are
deleted (issue 5). The shared session is local[2], where Spark never retries a task
(`local[N]` means maxFailures = 1) and one session per run is the rule, so the failed attempt
is simulated: a second Spark job writes, on the executors, a file with the same write id and
another task attempt id and reports nothing to the driver — exactly what a failed or
speculative attempt leaves behind. The driver then commits through the hook `append` uses."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pytest
from icefloe.partitioning import PartitionField, PartitionSpec
from icefloe.spark.write import write_on_executors
from support.session import new_table_name

pytestmark = [pytest.mark.spark]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("region", pa.string())])


def test_orphans_of_other_attempts_deleted_after_commit(spark: Any, oracle: Any, catalog: Any) -> None:
    # (`oracle` creates the shared namespace.)
    spec = PartitionSpec(PartitionField(2, 1000, "identity", "region"))
    table = catalog.create_table(new_table_name("gc"), schema=SCHEMA, partition_spec=spec)
    df = spark.createDataFrame([(i, ["eu", "us"][i % 2]) for i in range(20)], "id bigint, region string")
    write_id = table._new_write_id()
    descriptors = write_on_executors(df.repartition(2), table, write_id)
    assert descriptors

    metadata_json = table.metadata.to_json()

    def failed_attempt(batches: Any) -> Any:
        from icefloe import _native

        md = _native.TableMetadata.from_json(metadata_json)
        for b in batches:
            _native.write_data_files(
                md, pa.Table.from_batches([b]).to_reader(), write_id, 10_000 + b.num_rows
            )
        return iter([])

    df.coalesce(1).mapInArrow(failed_attempt, "id bigint").collect()
    data_dir = os.path.join(table.location().removeprefix("file:"), "data")

    def ours() -> set[str]:
        return {os.path.join(d, f) for d, _, fs in os.walk(data_dir) for f in fs if write_id in f}

    orphans = ours() - {table_path(d) for d in descriptors}
    assert orphans, "the simulated failed attempt left files"
    snap = table._commit_data_files(descriptors, write_id=write_id)
    assert snap is not None and snap.summary["added-records"] == "20"
    assert ours() == {table_path(d) for d in descriptors}, "only committed files remain"
    assert table.scan().count() == 20


def table_path(descriptor: str) -> str:
    import json

    p = str(json.loads(descriptor)["file_path"])
    return p.removeprefix("file:")
