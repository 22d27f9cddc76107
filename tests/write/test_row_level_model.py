"""A randomized model test of row-level changes on a table in the shared warehouse: 150
batches of mixed inserts, updates and deletes of random keys, each batch randomly an upsert
(equality deletes), an in-process MERGE (position deletes), a merge-on-read DELETE, or (a
few) an `icefloe.spark.merge`. A dict is the model; at checkpoints icefloe in process, icefloe
on Spark and Iceberg Java read exactly the rows it predicts."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import icefloe.spark
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from icefloe import BucketTransform, PartitionField, PartitionSpec
from support.oracle import Oracle, assert_same_rows
from support.row_level_data import ARROW, SCHEMA

pytestmark = [pytest.mark.spark, pytest.mark.interop]

PROPS = {
    "format-version": "2",
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
    # 150 small commits leave ~150 tiny data files and as many delete files. With the default
    # 4 MB open cost a Spark read plans ~40 tasks of four files each (as Java does), and each
    # task costs a Python worker round trip; a small open cost packs them into a few tasks.
    "read.split.open-file-cost": "65536",
}
KEYS = 160  # the key space: small, so batches keep hitting existing keys
BATCHES = 150
SPARK_MERGES = 6
REGIONS = ("eu", "us", "ap")

Model = dict[int, tuple[str, float]]


def _arrow(rows: list[tuple[int, str, float]]) -> pa.Table:
    return pa.table(
        {
            "id": pa.array([r[0] for r in rows], pa.int64()),
            "region": pa.array([r[1] for r in rows], pa.string()),
            "amount": pa.array([r[2] for r in rows], pa.float64()),
        },
        schema=ARROW,
    )


def _expected(model: Model) -> pa.Table:
    return _arrow([(k, r, a) for k, (r, a) in sorted(model.items())])


def _source_rows(rng: random.Random, step: int, max_rows: int) -> list[tuple[int, str, float]]:
    """Distinct random keys (a MERGE source may match a target row once); about a quarter
    with a negative amount, which the MERGE clauses read as 'delete'."""
    keys = rng.sample(range(KEYS), rng.randrange(1, max_rows + 1))
    return [
        (k, rng.choice(REGIONS), (-1.0 if rng.random() < 0.25 else 1.0) * float(step * 100 + j + 1))
        for j, k in enumerate(keys)
    ]


def _apply_merge(model: Model, rows: list[tuple[int, str, float]], add: bool) -> None:
    """The MERGE the test runs: matched and negative -> delete; matched -> update (the
    source's row, or with `add` the amounts summed and the target's region kept); not
    matched and not negative -> insert."""
    for k, region, amount in rows:
        if k in model:
            if amount < 0:
                del model[k]
            elif add:
                model[k] = (model[k][0], model[k][1] + amount)
            else:
                model[k] = (region, amount)
        elif amount >= 0:
            model[k] = (region, amount)


@pytest.mark.slow
def test_random_upserts_merges_and_deletes_match_a_dict_model(
    spark: Any, oracle: Oracle, catalog: Any, table_name: str
) -> None:
    spec = PartitionSpec(PartitionField(1, 1000, BucketTransform(4), "id_bucket"))
    t = catalog.create_table(table_name, schema=SCHEMA, partition_spec=spec, properties=PROPS)
    rng = random.Random(20240611)
    spark_steps = set(rng.sample(range(BATCHES), SPARK_MERGES))
    model: Model = {}
    ops: Counter[str] = Counter()

    def check(step: int) -> None:
        expected = _expected(model)
        t.refresh()
        assert_same_rows(t.scan().to_arrow(), expected, context=f"icefloe in process, after batch {step}")
        assert_same_rows(
            icefloe.spark.read(spark, t), expected, context=f"icefloe on Spark, after batch {step}"
        )
        assert_same_rows(oracle.df(table_name), expected, context=f"Iceberg Java, after batch {step}")

    for step in range(BATCHES):
        r = rng.random()
        if step in spark_steps:
            rows = _source_rows(rng, step, 6)
            add = rng.random() < 0.5
            source = spark.createDataFrame(rows, "id bigint, region string, amount double")
            m = icefloe.spark.merge(source, t, "target.id = source.id").when_matched_delete(
                condition="source.amount < 0"
            )
            if add:
                m = m.when_matched_update({"amount": "target.amount + source.amount"})
            else:
                m = m.when_matched_update_all()
            m.when_not_matched_insert_all(condition="source.amount >= 0").execute()
            _apply_merge(model, rows, add)
            ops["spark merge"] += 1
        elif r < 0.12 and model:
            lo = rng.randrange(0, KEYS)
            hi = lo + rng.randrange(1, 12)
            t.delete(f"id >= {lo} and id < {hi}")
            model = {k: v for k, v in model.items() if not lo <= k < hi}
            ops["delete"] += 1
        elif r < 0.55:
            # Upsert: a new row per key (repeated keys in a batch: the last one wins).
            keys = [rng.randrange(0, KEYS) for _ in range(rng.randrange(1, 9))]
            rows = [(k, rng.choice(REGIONS), float(step * 100 + j)) for j, k in enumerate(keys)]
            t.upsert(_arrow(rows))
            for k, region, amount in rows:
                model[k] = (region, amount)
            ops["upsert"] += 1
        else:
            rows = _source_rows(rng, step, 8)
            add = rng.random() < 0.5
            m = t.merge(_arrow(rows), "target.id = source.id").when_matched_delete(
                condition="source.amount < 0"
            )
            if add:
                m = m.when_matched_update({"amount": pc.field("target.amount") + pc.field("source.amount")})
            else:
                m = m.when_matched_update_all()
            m.when_not_matched_insert_all(condition="source.amount >= 0").execute()
            _apply_merge(model, rows, add)
            ops["merge"] += 1
        if step % 50 == 49 or step == BATCHES - 1:
            check(step)

    assert ops["spark merge"] == SPARK_MERGES
    # Every kind of batch ran often (the seed's mix: ~43% upserts, ~43% merges, ~10% deletes).
    assert min(ops["upsert"], ops["merge"]) > BATCHES // 4 and ops["delete"] > BATCHES // 20, ops
    summary = t.current_snapshot().summary.additional_properties
    # Both kinds of delete files are live at the end: the model held through both.
    assert int(summary["total-equality-deletes"]) > 0, summary
    assert int(summary["total-position-deletes"]) > 0, summary
