"""The soak's runner (see `support.soak`): a history applied to a Java twin, an icefloe twin
and a shared table, and the reads of all three by both engines compared after every step."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from support.oracle import Oracle, assert_same_rows
from support.session import new_table_name
from support.soak import readers
from support.soak.engines import Engines
from support.soak.files import missing_files
from support.soak.history import History, Step
from support.soak.kill import assert_no_leftovers, killed_append
from support.soak.metadata import compare as compare_metadata
from support.soak.shrink import StepFailed
from support.soak.targets import StepHeads
from support.soak.values import arrow_rows

# Steps Java refuses wrongly, by the refusal's words (each pinned in tests/soak/test_soak_findings.py).
JAVA_BUGS = {"rewrite_position_deletes": "expected to have same spec id"}


def run_history(
    spark: Any, oracle: Oracle, catalog: Any, tmp: Path, history: History, log: list[str]
) -> None:
    """Runs `history` on the Java twin, the icefloe twin and a shared table (a random engine
    per step), comparing the six reads, the refs and the metadata that must agree
    (`support.soak.metadata`) after every step. The first difference raises StepFailed, naming
    the seed and the step."""
    engines = Engines(spark, oracle, catalog, tmp)
    java_t, ours_t, shared_t = (new_table_name(f"soak_{k}") for k in ("java", "ours", "shared"))
    for name in (java_t, ours_t, shared_t):
        engines.create(name, history)
    pick = random.Random(history.seed ^ 0x5EED)
    heads = StepHeads((java_t, ours_t, shared_t))
    for i, step in enumerate(history.steps):
        columns = step.columns
        where = f"seed {history.seed}, step {i}: {step}"
        try:
            shared_engine = pick.choice(["java", "icefloe", "icefloe.spark"])
            run_step, killed = step, ""
            if step.kind == "rollback":
                engines.targets = heads.rollback_targets(catalog, step.args["depth"])
            elif step.kind == "cherrypick":
                engines.targets = heads.cherrypick_targets(catalog, step.args["pick"])
            if step.kind in ("rollback", "cherrypick") and not engines.targets:
                run_step = Step("nothing", step.args, columns)  # no snapshot on main to act on
            errors: dict[tuple[str, str], str | None] = {}
            if step.kind == "killed_append":
                # icefloe's writer killed on its twin; the Java twin and the shared table then take
                # the same rows as a plain append exactly when the killed write committed
                rows = arrow_rows(step.args["rows"], columns)
                committed, killed = killed_append(catalog, ours_t, rows, tmp, step.args["delay"])
                run_step = Step("append" if committed else "nothing", step.args, columns)
            for engine, name in (("java", java_t), ("icefloe", ours_t), (shared_engine, shared_t)):
                if run_step.kind == "nothing" or (step.kind == "killed_append" and name == ours_t):
                    errors[(engine, name)] = None
                    continue
                try:
                    run = {
                        "java": engines.java,
                        "icefloe": engines.icefloe,
                        "icefloe.spark": engines.spark_functions,
                    }
                    run[engine](name, run_step, columns)
                    errors[(engine, name)] = None
                except Exception as e:  # a refusal by one engine must be one by the other
                    errors[(engine, name)] = f"{type(e).__name__}: {str(e)[:400]}"
            java_err, ours_err = errors[("java", java_t)], errors[("icefloe", ours_t)]
            bug = JAVA_BUGS.get(step.kind)
            if bug and java_err and bug in java_err and ours_err is None:
                # Java is wrong here (tests/soak/test_soak_findings.py): icefloe's step stands,
                # and so does the shared table's whichever engine ran it; the rows still agree
                log.append(f"    Java's known bug ({bug}): its twin keeps its files, the rows agree")
                java_err = None
                if (err := errors[(shared_engine, shared_t)]) and bug in err:
                    errors[(shared_engine, shared_t)] = None
            targets = f" [targets: {engines.targets}]" if step.kind in ("rollback", "cherrypick") else ""
            outcome = f"java: {java_err or 'ok'}; icefloe: {ours_err or 'ok'}"
            log.append(f"{where} [shared: {shared_engine}]{targets} {killed or outcome}")
            assert (java_err is None) == (ours_err is None), (
                f"{where}: one engine refused\n  java: {java_err}\n  icefloe: {ours_err}"
            )
            # A rollback to an ancestor and an orphan removal are always allowed: a refusal by both is a bug
            assert java_err is None or step.kind not in ("rollback", "remove_orphans"), f"{where}: {outcome}"
            if java_err is None:
                assert errors[(shared_engine, shared_t)] is None, (
                    f"{where}: the shared table's step failed: {errors}"
                )
            expected = oracle.df(java_t)
            for name in (java_t, ours_t, shared_t):
                assert_same_rows(oracle.df(name), expected, context=f"{where}: Java reads {name}")
                ours = catalog.load_table(name).scan().to_arrow()
                assert_same_rows(ours, expected, context=f"{where}: icefloe reads {name}")
            _compare_refs(oracle, catalog, (java_t, ours_t, shared_t), where)
            before = heads.main[-1] if heads.main else dict.fromkeys(heads.names)
            now = {n: catalog.load_table(n).current_snapshot() for n in heads.names}
            moved = all(s is not None and s.snapshot_id != before[n] for n, s in now.items())
            compare_metadata(catalog, heads.names, step.kind, moved, where)
            if step.kind == "killed_append":
                assert_no_leftovers(oracle, catalog, ours_t, where)
            if java_err is None and run_step.kind != "nothing":
                note = _check_step(oracle, catalog, engines, heads, step, where)
                if note:
                    log.append(f"    {note}")
            if readers.WHEN == "each" or (readers.WHEN == "end" and i == len(history.steps) - 1):
                readers.check(catalog, [ours_t, shared_t], expected, where, log, javas=frozenset([shared_t]))
            heads.record(catalog, step.kind)
        except AssertionError as e:  # the step's place, for the shrinker (support.soak.shrink)
            raise StepFailed(str(e), i, step.kind, where) from e


def _check_step(
    oracle: Oracle, catalog: Any, engines: Engines, heads: StepHeads, step: Step, where: str
) -> str | None:
    """What a rollback, a cherry-pick, an orphan removal or an expiry did, beyond the rows:
    main's new head on each table, and the files each table references and holds."""
    names = heads.names
    if step.kind == "rollback":
        for name in names:
            head = catalog.load_table(name).current_snapshot()
            assert head is not None and head.snapshot_id == engines.targets[name], (
                f"{where}: {name} rolled back to {head}, not to {engines.targets[name]}"
            )
        moved = any(engines.targets[n] != heads.main[-1][n] for n in names)
        return "rollback: main moved back" if moved else "rollback: to main's head (no older state to go to)"
    elif step.kind == "cherrypick":
        # Each table fast-forwarded to the picked snapshot, or re-applied it as a new snapshot
        # on main's previous head recording it as its source: the same way, with the same
        # operation and added-records, on all three.
        outcomes = {}
        for name in names:
            t = catalog.load_table(name)
            head, source = t.current_snapshot(), t.snapshot_by_id(engines.targets[name])
            assert head is not None and source is not None, f"{where}: {name} lost the picked snapshot"
            if head.snapshot_id == source.snapshot_id:
                outcomes[name] = (
                    "fast-forward",
                    str(head.summary.operation),
                    head.summary.get("added-records"),
                )
                continue
            assert head.parent_snapshot_id == heads.main[-1][name], (
                f"{where}: {name}'s cherry-pick {head} is not on main's previous head {heads.main[-1][name]}"
            )
            assert head.summary.get("source-snapshot-id") == str(source.snapshot_id), (
                f"{where}: {name}'s cherry-pick {head} does not name its source {source.snapshot_id}"
            )
            outcomes[name] = ("re-applied", str(head.summary.operation), head.summary.get("added-records"))
        assert len(set(outcomes.values())) == 1, f"{where}: the cherry-picks differ: {outcomes}"
        return f"cherry-pick: {outcomes[names[0]]}"
    elif step.kind in ("remove_orphans", "expire"):
        for name in names:
            kept = [str(p) for p in engines.planted.pop(name, []) if p.exists()]
            assert not kept, f"{where}: the orphan removal on {name} kept the planted files {kept}"
            missing = missing_files(oracle, name)
            assert not missing, f"{where}: {name} references files no longer there: {missing[:5]}"
    return None


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
