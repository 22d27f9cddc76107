"""The differential soak (issue 44, tests/support/soak/): random histories run by icefloe
and by Iceberg Java side by side, on twin tables and on one shared table whose every step is
done by a randomly chosen engine, with icefloe writers killed mid-write (support.soak.kill);
after each step Java and icefloe read all three tables alike and the tables' metadata agrees.

`make test` runs a fixed-seed slice (the seeds in SEEDS, STEPS steps each); `make soak` runs
`ICEFLOE_SOAK_SEEDS` random seeds (or a comma-separated list) of `ICEFLOE_SOAK_STEPS` steps.
A failure names the seed and the step; rerun it with ICEFLOE_SOAK_SEEDS==<seed> (a bare
number is a count of seeds). With ICEFLOE_SOAK_SHRINK=<runs> (`make soak` sets it) a failing
history is first cut down to a shortest one that fails the same way (support.soak.shrink) and
saved as JSON under ICEFLOE_SOAK_OUT; ICEFLOE_SOAK_HISTORY=<file> reruns it. PyIceberg, DuckDB
and Sail read the icefloe twin and the shared table after the last step, or after every step
with ICEFLOE_SOAK_READERS=each (`make soak`; `off` skips them: support.soak.readers)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from support.oracle import Oracle
from support.soak import History, generate, run_history, seeds_from_env
from support.soak.shrink import StepFailed, from_json, save, shrink

pytestmark = [pytest.mark.spark, pytest.mark.interop]


# Between them, at 18 steps, every kind of step but the v1 start, a sort compaction and a
# cherry-pick that re-applies (this slice's one fast-forwards); 160 adds a struct and a map
# column and kills two writers.
SEEDS = seeds_from_env([160, 3171])
STEPS = int(os.environ.get("ICEFLOE_SOAK_STEPS", "18"))
# ICEFLOE_SOAK_HISTORY: saved histories (comma-separated JSON files, as the shrinker writes
# them) to run instead of the seeds.
SAVED = [Path(p) for p in os.environ.get("ICEFLOE_SOAK_HISTORY", "").split(",") if p]


def _history(case: int | Path) -> History:
    return from_json(case.read_text()) if isinstance(case, Path) else generate(case, STEPS)


@pytest.mark.parametrize("case", SAVED or SEEDS, ids=str)
def test_a_random_history_reads_alike_on_java_icefloe_and_shared_tables(
    spark: Any, oracle: Oracle, catalog: Any, tmp_path: Path, case: int | Path
) -> None:
    history = _history(case)
    log: list[str] = []
    try:
        run_history(spark, oracle, catalog, tmp_path, history, log)
    except StepFailed as failure:
        budget = int(os.environ.get("ICEFLOE_SOAK_SHRINK", "0"))
        if budget <= 0:
            raise

        # ICEFLOE_SOAK_SHRINK (make soak): cut the history down to a shortest one failing alike
        def fails(h: History) -> StepFailed | None:
            try:
                run_history(spark, oracle, catalog, tmp_path, h, [])
            except StepFailed as e:
                return e
            except Exception:  # a cut the runner cannot run (a rollback before any snapshot): not it
                return None
            return None

        small, last, runs = shrink(history, fails, failure, budget)
        saved = save(small, Path(os.environ.get("ICEFLOE_SOAK_OUT", "soak-failures")).absolute())
        raise StepFailed(
            f"{failure}\n\nshrunk in {runs} runs to {len(small.steps)} of {len(history.steps)} steps, "
            f"failing as: {last}\nsaved to {saved}; rerun it with ICEFLOE_SOAK_HISTORY={saved}",
            last.index,
            last.kind,
            last.where,
        ) from failure
    finally:
        print(
            f"history of seed {history.seed}: format v{history.version}, {history.props}, partitioned by "
            f"{[p[1] for p in history.partition]}, columns {[(c.name, c.kind) for c in history.ddl_columns]}"
        )
        print("\n".join(log))
