"""The commit loop every table change goes through: build new metadata from the base,
swap it in through the catalog, and on a conflict refresh, rebuild and retry with
exponential backoff (Iceberg's `commit.retry.*` table properties).

A build function takes the base metadata and returns `(new_metadata, files_written)`;
the files of an attempt that loses the swap are deleted before the next attempt.
Operations that must re-validate against what was committed in between (overwrite,
row delta) do so inside their build function, which sees the refreshed base.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icefloe import _native
from icefloe.exceptions import CommitConflictError, CommitStateUnknownException

if TYPE_CHECKING:
    from icefloe.table import Table

logger = logging.getLogger("icefloe")

BuildFn = Callable[[_native.TableMetadata], "tuple[_native.TableMetadata, list[str]]"]


class ProducerBuild:
    """A build function in two halves: `produce` (the snapshot producer: base metadata in,
    `(new_metadata, files_written)` out) and the validation of what was committed since the
    operation started (`_native.validate_commit`'s keyword arguments; none for an append,
    which conflicts with nothing). Called as a build function it validates when the base
    moved since `start_snapshot_id`, then produces, as every operation's own build did.

    A transaction that writes (`icefloe.table_transaction`) needs the halves apart: when its
    table moved since it began, each of its writes is validated against the commits made since
    the transaction's start (not against the staged snapshots of the writes before it, which
    the moved table does not have), then all are produced again on the moved table."""

    __slots__ = ("produce", "start_snapshot_id", "validation")

    def __init__(
        self,
        produce: BuildFn,
        start_snapshot_id: int | None = None,
        validation: dict[str, Any] | None = None,
    ) -> None:
        self.produce = produce
        self.start_snapshot_id = start_snapshot_id
        self.validation = validation

    def validate(self, base: _native.TableMetadata, since: int | None) -> None:
        """CommitConflictError when a snapshot of `base` committed after `since` conflicts."""
        if self.validation is not None and base.current_snapshot_id != since:
            _native.validate_commit(base, since, **self.validation)

    def __call__(self, base: _native.TableMetadata) -> tuple[_native.TableMetadata, list[str]]:
        self.validate(base, self.start_snapshot_id)
        return self.produce(base)


@dataclass(frozen=True)
class RetryPolicy:
    """`commit.retry.*` with Iceberg Java's defaults."""

    num_retries: int = 4
    min_wait_ms: int = 100
    max_wait_ms: int = 60_000
    total_timeout_ms: int = 1_800_000

    @staticmethod
    def from_properties(props: dict[str, str]) -> RetryPolicy:
        def num(key: str, default: int) -> int:
            try:
                return max(0, int(props.get(key, default)))
            except ValueError:
                return default

        return RetryPolicy(
            num_retries=num("commit.retry.num-retries", 4),
            min_wait_ms=num("commit.retry.min-wait-ms", 100),
            max_wait_ms=num("commit.retry.max-wait-ms", 60_000),
            total_timeout_ms=num("commit.retry.total-timeout-ms", 1_800_000),
        )

    def pause(self, attempt: int, start: float, what: object) -> bool:
        """After losing attempt `attempt` (1-based) of a commit begun at `start`
        (`time.monotonic()`): False when the retries or the total timeout are spent, else waits
        the backoff and returns True."""
        elapsed_ms = (time.monotonic() - start) * 1000
        if attempt > self.num_retries or elapsed_ms >= self.total_timeout_ms:
            return False
        wait = min(self.wait_ms(attempt), max(0.0, self.total_timeout_ms - elapsed_ms))
        logger.debug(
            "icefloe: commit to %s conflicted (attempt %d); retrying in %.0f ms", what, attempt, wait
        )
        time.sleep(wait / 1000)
        return True

    def wait_ms(self, retry: int) -> float:
        """Backoff before retry number `retry` (1-based): doubling from min-wait, capped at
        max-wait, with jitter so writers that collided do not collide again in step."""
        base = min(self.min_wait_ms * (2 ** (retry - 1)), self.max_wait_ms)
        return float(min(base * random.uniform(0.5, 1.5), self.max_wait_ms))


def commit_with_retry(table: Table, build: BuildFn) -> _native.TableMetadata:
    """Runs `build` against the metadata the table's operations see and swaps the result in
    through its commit target (`icefloe.commit.target`: main, a branch, a guarded view); on
    CommitConflictError refreshes the table and retries per the table's retry policy.
    Updates `table` (and every view of it) to the committed version and returns its metadata."""
    start = time.monotonic()
    attempt = 0
    target = table._target
    while True:
        attempt += 1
        seen = table.metadata
        target.check(seen)
        new_metadata, written = build(seen)
        try:
            base = table._commit_base()
            committed = table._catalog._commit_table(base, target.to_commit(base.metadata, new_metadata))
        except CommitStateUnknownException:
            raise  # the files may be live: keep them
        except CommitConflictError as e:
            _native.delete_files(written)
            if not RetryPolicy.from_properties(table.metadata.properties).pause(attempt, start, table):
                raise CommitConflictError(_gave_up(table, attempt, e)) from e
            table.refresh()
            continue
        except Exception:
            # An ordinary error means the swap did not happen. An interrupt (KeyboardInterrupt,
            # SystemExit) may have landed after it: keep the files, orphans are harmless.
            _native.delete_files(written)
            raise
        table._set_metadata(committed)
        _delete_removed_metadata_files(base.metadata, committed)
        report_commit(table, base.metadata, committed, attempt, int((time.monotonic() - start) * 1e9))
        return committed


def _gave_up(table: Table, attempts: int, cause: Exception) -> str:
    """The message of a commit that ran out of retries, naming the snapshot it lost to."""
    try:
        current = table._catalog.load_table(table.identifier).metadata.current_snapshot_id
    except Exception:  # naming the winner is best effort
        current = None
    winner = f"; the table is now at snapshot {current}" if current is not None else ""
    return f"commit to {table} failed after {attempts} attempt(s): {cause}{winner}"


def _delete_removed_metadata_files(base: _native.TableMetadata, committed: _native.TableMetadata) -> None:
    """`write.metadata.delete-after-commit.enabled`: deletes the metadata files that fell
    out of `metadata-log` (trimmed to `write.metadata.previous-versions-max`) with this
    commit, as Iceberg Java's table operations do. Best effort."""
    if committed.properties.get("write.metadata.delete-after-commit.enabled", "false").lower() != "true":
        return
    before = {str(e["metadata-file"]) for e in base.metadata_log()}
    if base.metadata_location:
        before.add(base.metadata_location)
    after = {str(e["metadata-file"]) for e in committed.metadata_log()}
    if committed.metadata_location:
        after.add(committed.metadata_location)
    removed = sorted(before - after)
    if removed:
        try:
            _native.delete_files(removed)
        except Exception as e:
            logger.warning("icefloe: could not delete old metadata files %s: %s", removed, e)


def report_commit(
    table: Table,
    base: _native.TableMetadata,
    committed: _native.TableMetadata,
    attempts: int,
    duration_ns: int,
) -> None:
    """Hands the table's catalog a `commit-report` for each snapshot the commit added (a REST
    catalog sends them; see `icefloe._metrics_reports`)."""
    if not table.catalog._metrics_reporting():
        return  # built only for a catalog that sends them (a snapshot list is a dict per snapshot)
    from icefloe._metrics_reports import commit_report

    known = {s.get("snapshot-id") for s in base.snapshots()}
    name = ".".join((table.catalog.name, *table.identifier))
    for snapshot in committed.snapshots():
        if snapshot.get("snapshot-id") not in known:
            table.catalog._report_metrics(table, commit_report(name, snapshot, attempts, duration_ns))
