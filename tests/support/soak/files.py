"""The soak's file checks (see `support.soak`): stray files planted in a table's data folder
before an orphan removal, and the files a table references, which a removal or an expiry
must leave in place."""

from __future__ import annotations

import os
import time
from pathlib import Path
from urllib.parse import urlparse

from support.oracle import Oracle

# Every file under the table's location is dated this far back before an orphan removal, whose
# `older_than` is ORPHAN_OLDER_THAN_DAYS ago (Java's procedure refuses less than a day): all the
# table's files are then candidates, and each one it references must be kept.
ORPHAN_AGE_DAYS = 10
ORPHAN_OLDER_THAN_DAYS = 3


def local_path(location: str) -> Path:
    """The local path of a `file:` location (the soak's warehouse is a local folder)."""
    parsed = urlparse(location)
    assert parsed.scheme in ("", "file"), f"not a local location: {location}"
    return Path(parsed.path)


def plant_orphans(location: str, count: int) -> list[Path]:
    """Writes `count` stray files in the data folder at `location`, and one more in its first
    partition folder (if it has one), then dates every file under `location` ORPHAN_AGE_DAYS
    back. Returns the planted files."""
    root = local_path(location)
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    planted = [data / f"soak-stray-{k}.parquet" for k in range(count)]
    folders = sorted(p for p in data.iterdir() if p.is_dir())
    if folders:
        planted.append(folders[0] / "soak-stray-in-partition.parquet")
    for p in planted:
        p.write_bytes(b"PAR1 not a table's file PAR1")
    old = time.time() - ORPHAN_AGE_DAYS * 86400
    for folder, _, names in os.walk(root):
        for n in names:
            os.utime(Path(folder) / n, (old, old))
    return planted


def referenced_files(oracle: Oracle, name: str) -> set[str]:
    """Every file the table references, as Java's metadata tables list them: each snapshot's
    manifest list, the manifests, the data and delete files of every snapshot, and the
    metadata files of the log (the current one included)."""
    q = oracle.qualified(name)
    rows = oracle.spark.sql(
        f"SELECT file_path AS f FROM {q}.all_files UNION SELECT path FROM {q}.all_manifests "
        f"UNION SELECT manifest_list FROM {q}.snapshots UNION SELECT file FROM {q}.metadata_log_entries"
    ).collect()
    return {r.f for r in rows if r.f is not None}


def missing_files(oracle: Oracle, name: str) -> list[str]:
    """The files the table references that are not on disk."""
    return sorted(f for f in referenced_files(oracle, name) if not local_path(f).exists())
