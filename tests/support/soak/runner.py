"""The soak's runner (see `support.soak`): a history applied to a Java twin, an icefloe twin
and a shared table, and the reads of all three by both engines compared after every step."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name
from support.soak.engines import Engines
from support.soak.history import History


def run_history(
    spark: Any, oracle: Oracle, catalog: Any, tmp: Path, history: History, log: list[str]
) -> None:
    """Runs `history` on the Java twin, the icefloe twin and a shared table (a random engine
    per step), comparing the six reads after every step. AssertionError names the seed and
    the step on the first difference."""
    engines = Engines(spark, oracle, catalog, tmp)
    java_t, ours_t, shared_t = (new_table_name(f"soak_{k}") for k in ("java", "ours", "shared"))
    for name in (java_t, ours_t, shared_t):
        engines.create(name, history)
    pick = random.Random(history.seed ^ 0x5EED)
    for i, step in enumerate(history.steps):
        columns = step.columns
        where = f"seed {history.seed}, step {i}: {step}"
        shared_engine = pick.choice(["java", "icefloe", "icefloe.spark"])
        errors = {}
        for engine, name in (("java", java_t), ("icefloe", ours_t), (shared_engine, shared_t)):
            try:
                run = {
                    "java": engines.java,
                    "icefloe": engines.icefloe,
                    "icefloe.spark": engines.spark_functions,
                }
                run[engine](name, step, columns)
                errors[(engine, name)] = None
            except Exception as e:  # a refusal by one engine must be one by the other
                errors[(engine, name)] = f"{type(e).__name__}: {str(e)[:400]}"
        java_err, ours_err = errors[("java", java_t)], errors[("icefloe", ours_t)]
        log.append(f"{where} [shared: {shared_engine}] java: {java_err or 'ok'}; icefloe: {ours_err or 'ok'}")
        assert (java_err is None) == (ours_err is None), (
            f"{where}: one engine refused\n  java: {java_err}\n  icefloe: {ours_err}"
        )
        if java_err is None:
            assert errors[(shared_engine, shared_t)] is None, (
                f"{where}: the shared table's step failed: {errors}"
            )
        expected = oracle.df(java_t)
        for name in (java_t, ours_t, shared_t):
            assert_same_rows(oracle.df(name), expected, context=f"{where}: Java reads {name}")
            assert_same_rows(
                catalog.load_table(name).scan().to_arrow(), expected, context=f"{where}: icefloe reads {name}"
            )
        _compare_refs(oracle, catalog, (java_t, ours_t, shared_t), where)


def _compare_refs(oracle: Oracle, catalog: Any, names: tuple[str, str, str], where: str) -> None:
    """The branches and tags of the Java twin exist on the other two tables, and the six reads
    of each (Java's `VERSION AS OF`, icefloe's `scan(ref=...)`) hold the same rows."""
    refs = sorted(r for r in catalog.load_table(names[0]).refs() if r != "main")
    for name in names[1:]:
        found = sorted(r for r in catalog.load_table(name).refs() if r != "main")
        assert found == refs, f"{where}: {name} has refs {found}, the Java twin {refs}"
    for ref in refs:
        expected = oracle.spark.sql(f"SELECT * FROM {oracle.qualified(names[0])} VERSION AS OF '{ref}'")
        for name in names:
            got = oracle.spark.sql(f"SELECT * FROM {oracle.qualified(name)} VERSION AS OF '{ref}'")
            assert_same_rows(got, expected, context=f"{where}: Java reads {name} at {ref}")
            ours = catalog.load_table(name).scan(ref=ref).to_arrow()
            assert_same_rows(ours, expected, context=f"{where}: icefloe reads {name} at {ref}")
