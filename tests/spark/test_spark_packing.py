"""Packing work rows into Spark tasks (`icefloe.spark._session`): the groups
`pack_by_weight` forms and the writer task ids `packed_row_task_id` hands out. No Spark
needed: the packing is plain Python, and outside a task the attempt number is 0."""

from __future__ import annotations

import itertools

import pytest
from icefloe.spark._session import pack_by_weight, packed_row_task_id


def test_largest_first_into_the_lightest_group() -> None:
    # Largest first into the lightest: 9 -> g0, 7 -> g1, 5 -> g1 (7 < 9), 4 -> g0 (9 < 12),
    # 3 -> g1 (12 < 13).
    groups = pack_by_weight([5, 9, 3, 7, 4], 2)
    totals = sorted(sum([5, 9, 3, 7, 4][i] for i in g) for g in groups)
    assert totals == [13, 15]
    assert groups == [[1, 4], [0, 2, 3]]


@pytest.mark.parametrize("bins", [1, 2, 3, 8])
def test_every_index_once_no_empty_group_ascending_within(bins: int) -> None:
    weights = [(i * 37) % 11 for i in range(17)]
    groups = pack_by_weight(weights, bins)
    assert sorted(itertools.chain.from_iterable(groups)) == list(range(17))
    assert len(groups) == min(bins, 17)
    assert all(g and g == sorted(g) for g in groups)
    # LPT's bound: within 4/3 of the best split, which is at least the mean and the largest item.
    heaviest = max(sum(weights[i] for i in g) for g in groups)
    assert heaviest <= 4 / 3 * max(sum(weights) / len(groups), max(weights))


def test_fewer_rows_than_bins_and_none() -> None:
    assert pack_by_weight([3, 1], 8) == [[0], [1]]
    assert pack_by_weight([], 4) == []


def test_row_task_ids_are_distinct_per_row() -> None:
    """Several rows of one Spark task write files named by task id: each row gets its own."""
    ids = [packed_row_task_id(row, 50) for row in range(50)]
    assert len(set(ids)) == 50
