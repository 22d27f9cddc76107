"""The differential soak (issue 44): random histories run by icefloe and by Iceberg Java side
by side, every step's result read by both engines and compared.

A history is drawn from a seed: a schema (a long key `id` and columns of every primitive kind
Spark SQL can write; struct, list and map columns are added mid-history), a partition spec of
random transforms, a format version (1, 2 or 3), write modes (copy-on-write or merge-on-read),
then steps: appends of rows drawn from the edges (NaN, -0.0, infinities, nulls, integer
extremes, full-precision decimals, empty and non-BMP strings, pre-1970 and far-future
instants), DELETE / UPDATE / MERGE, upserts (Java's twin: a MERGE INTO on the key), dynamic
partition overwrites, schema evolution (add, rename, drop, promote), partition evolution, a v2
-> v3 upgrade, writes and deletes on a branch, fast-forwards of `main` to it, tags, sort
orders, compaction (bin-pack and sort), position delete rewrites, manifest rewrites, snapshot
expiry, a DELETE racing an append (two icefloe writers at once; Java's twin does one after the
other), rollbacks of main to an older ancestor, cherry-picks (of the branch's head or of a
snapshot a rollback left off main), orphan-file removal after stray files are planted in the
data folder, and an icefloe append in its own process killed with SIGKILL 0-40 ms after it is
ready to write.

Each step has two implementations: Iceberg Java's Spark SQL (or its procedures) on the oracle
session, and icefloe's table API. `run_history` applies every step to three tables: one that
only Java writes, one that only icefloe writes (the twins), and one shared table where each
step's engine is drawn at random: Java, icefloe's table API, or `icefloe.spark`'s functions
(Spark tasks writing the files of appends, overwrites, DELETE, UPDATE, MERGE and upserts).
After each step Java and icefloe read all three tables, and the six reads must hold the same
rows; so must the reads of every branch and tag. A step one engine refuses must be refused by
the other too (then the tables stay as they were); a rollback or an orphan removal neither
may refuse. Beyond the rows: after a rollback main's head is the chosen snapshot on all three
tables; after a cherry-pick each table fast-forwarded or re-applied it alike (the same
operation and added-records, the new snapshot on main's previous head naming its source);
after an orphan removal or an expiry the planted files are gone and every file the table
references (Java's `all_files`, `all_manifests`, `snapshots` and `metadata_log_entries`) is
still there. After a killed append the Java twin and the shared table take the same rows
exactly when the killed write committed, and after icefloe's orphan removal the killed
writer's table holds exactly the files Java's metadata tables reference. After every step the
three tables agree on their schema, partition spec, sort order and format version, on main's
head operation for appends and rewrites, and on whether main holds data files. PyIceberg,
DuckDB's `iceberg` extension and Sail read the icefloe twin and the shared table too, after
the last step (`make soak`: after every step), and return Java's rows wherever they support
the table's features (`readers`).

The package's rooms: `values` (column kinds, edge values, literals), `history` (the
generator), `engines` (each step by Java, icefloe and `icefloe.spark`), `targets` (the
snapshots a rollback or a cherry-pick acts on, alike on the three tables), `files` (planted
orphans, the files a table references), `kill` (the killed writer), `metadata` (what the
tables' metadata must agree on), `readers` (the other readers and what each supports),
`runner` (a history on three tables, compared after every step), `shrink` (a failing history
cut to a shortest one failing alike, saved as JSON).

`make soak` runs many seeds with long histories, shrinking and saving any failure
(`make soak-history HISTORY=<file>` reruns one); `make test` runs a fixed-seed slice.
"""

import os
import random

from support.soak.history import History, generate
from support.soak.runner import run_history

__all__ = ["History", "generate", "run_history", "seeds_from_env"]


def seeds_from_env(default: list[int]) -> list[int]:
    """ICEFLOE_SOAK_SEEDS: a comma-separated list of seeds, or a count of seeds drawn from
    ICEFLOE_SOAK_BASE_SEED (the same on every xdist worker, which must collect alike); else
    `default` (the slice `make test` runs)."""
    given = os.environ.get("ICEFLOE_SOAK_SEEDS", "")
    if "," in given or given.startswith("="):
        return [int(s) for s in given.strip("=").split(",") if s]
    if given:
        rng = random.Random(int(os.environ.get("ICEFLOE_SOAK_BASE_SEED", "0")))
        return [rng.randrange(1 << 30) for _ in range(int(given))]
    return default
