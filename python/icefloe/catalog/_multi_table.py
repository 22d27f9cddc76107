"""`catalog.commit_transaction(tx1, tx2, ...)`: the open transactions of several tables of one
catalog committed atomically (Iceberg's multi-table commit; Java's
`RESTSessionCatalog.commitTransaction`, the REST spec's `POST /v1/{prefix}/transactions/commit`).

Each transaction (`table.transaction()`, writes included) gives the build of its one commit
(`Transaction._begin_commit`); every attempt runs each build on its table's current version,
then the catalog swaps all tables' new metadata in one operation (`Catalog._commit_tables`:
one database transaction in the SQL catalog, one request to the REST catalog; the filesystem
catalog cannot and refuses before anything is written). On a conflict every table is refreshed
and the builds run again, as a single table's commit retries (`icefloe.commit.retry`): a
transaction whose table moved has its writes validated against what landed since it began, so a
conflicting change fails the whole commit and nothing lands. On a failure each transaction
deletes the files its writes made (`Transaction._end_commit`); on an unknown outcome they stay.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from icefloe import _native
from icefloe.commit.retry import RetryPolicy, report_commit
from icefloe.exceptions import CommitConflictError, CommitStateUnknownException, ValidationError

if TYPE_CHECKING:
    from icefloe.catalog._base import Catalog
    from icefloe.commit.retry import BuildFn
    from icefloe.commit.target import CommitBase
    from icefloe.table import Table
    from icefloe.table_transaction import Transaction


def _check(catalog: Catalog, transactions: list[Transaction]) -> None:
    """ValidationError, before anything is committed, for what cannot be one commit."""
    from icefloe.table_transaction import Transaction

    if not transactions:
        raise ValidationError("commit_transaction needs at least one table transaction")
    seen: set[tuple[str, ...]] = set()
    for tx in transactions:
        if not isinstance(tx, Transaction):
            raise ValidationError(
                "commit_transaction takes table transactions (table.transaction()), found "
                f"{type(tx).__name__}"
            )
        table = tx._table
        if table.catalog is not catalog:
            raise ValidationError(
                f"the transaction of {table} belongs to catalog {table.catalog.name!r}, not "
                f"{catalog.name!r}: one atomic commit covers the tables of one catalog"
            )
        if table.identifier in seen:
            raise ValidationError(
                f"two transactions of table {'.'.join(table.identifier)}: stage its changes in one"
            )
        seen.add(table.identifier)


def commit_transactions(catalog: Catalog, transactions: list[Transaction]) -> list[Table]:
    """See the module doc."""
    _check(catalog, transactions)
    catalog._check_multi_table_commit()  # before any transaction is closed (filesystem: refused)
    begun = [(tx, *tx._begin_commit()) for tx in transactions]
    try:
        _commit_all(catalog, [(tx._table, build) for tx, build, _ in begun if build is not None])
    except BaseException as e:
        for tx, _build, replayed in begun:
            tx._end_commit(replayed, e)
        raise
    for tx, _build, replayed in begun:
        tx._end_commit(replayed, None)
    return [tx._table for tx in transactions]


def _commit_all(catalog: Catalog, work: list[tuple[Table, BuildFn]]) -> None:
    """The retry loop of `icefloe.commit.retry.commit_with_retry`, over several tables."""
    if not work:
        return
    start = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        changes: list[tuple[CommitBase, _native.TableMetadata]] = []
        written: list[str] = []
        try:
            for table, build in work:
                seen = table.metadata
                table._target.check(seen)
                new_metadata, files = build(seen)
                written.extend(files)
                base = table._commit_base()
                changes.append((base, table._target.to_commit(base.metadata, new_metadata)))
            committed = catalog._commit_tables(changes)
        except CommitStateUnknownException:
            raise  # the files may be live: keep them
        except CommitConflictError as e:
            _native.delete_files(written)
            names = ", ".join(str(t) for t, _ in work)
            if not RetryPolicy.from_properties(work[0][0].metadata.properties).pause(attempt, start, names):
                raise CommitConflictError(
                    f"multi-table commit of {names} failed after {attempt} attempt(s): {e}"
                ) from e
            for table, _ in work:
                table.refresh()
            continue
        except Exception:
            _native.delete_files(written)
            raise
        for (table, _), (base, _new), metadata in zip(work, changes, committed):
            table._set_metadata(metadata)
            report_commit(table, base.metadata, metadata, attempt, int((time.monotonic() - start) * 1e9))
        return
