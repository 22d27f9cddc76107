"""Faults inside histories (issue 44): a random history of icefloe's writes and maintenance on a
table on the S3 server, every request of icefloe's going through the fault proxy
(tests/support/servers/fault_proxy.py: 503s before and 500s after the fact, delays, answers cut
part way). The catalog is a SQL catalog on Postgres, or the REST server with a second fault
proxy in front of it (lost, cut and refused catalog answers, commits included); Iceberg Java
(the same catalog and bucket, no proxy) reads the table after every step. A quarter of the steps
also run inside a failure window: every S3 PUT (or, on REST, every catalog POST) after the
first few fails, so that the step fails for good at a random point of its write or commit.

After every step, with the faults off:
- a step that returned: the table holds the model's rows after it;
- a step that raised `CommitStateUnknownException`: the rows before or after it, and main moved
  exactly when they are the rows after;
- a step that raised another icefloe error: main did not move, the rows before it;
- Java's rows are icefloe's (and the model's).
Every error names an object and shows no secret. Reads under the faults return the model's rows
or raise such an error. At the end, icefloe's orphan removal leaves exactly the files Java's
metadata tables reference (data and delete files, manifests, manifest lists, the metadata
files of the log), none missing. `make test` runs seed 44 on the SQL catalog and 4407 on REST
(one on each PySpark line); `make soak` its ICEFLOE_SOAK_SEEDS histories of
ICEFLOE_SOAK_STEPS steps, each on both catalogs.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import _io
from icefloe.catalog import SqlCatalog
from icefloe.exceptions import CommitStateUnknownException, IcefloeError
from icefloe.partitioning import PartitionField, PartitionSpec
from support.catalogs import REGION_ARROW as ARROW
from support.catalogs import REGIONS, Row
from support.s3_catalogs import set_java_catalog
from support.servers.fault_proxy import FaultProxy
from support.servers.s3 import SECRET_KEY, S3Server
from support.soak import seeds_from_env

pytestmark = [pytest.mark.spark, pytest.mark.interop]

Model = dict[int, Row]
# `make test`: seed 44 on the SQL catalog and 4407 on REST, 10 steps (one case per PySpark line);
# `make soak`: its seeds and steps, each on both catalogs.
SLICE = [(44, "sql"), (4407, "rest")]
CASES = [(s, c) for s in seeds_from_env([]) for c in ("sql", "rest")] or SLICE
STEPS = int(os.environ.get("ICEFLOE_SOAK_STEPS", "10"))
# Steps and how often each is drawn.
KINDS = {
    "append": 4,
    "overwrite": 1,
    "delete": 2,
    "update": 2,
    "upsert": 2,
    "compact": 1,
    "rewrite_manifests": 1,
    "expire": 1,
}


def region(i: int) -> str:
    return REGIONS[i % 3]


def arrow(rows: list[Row]) -> pa.Table:
    return pa.table(
        {"id": [r[0] for r in rows], "name": [r[1] for r in rows], "region": [r[2] for r in rows]},
        schema=ARROW,
    )


def as_rows(t: Any) -> list[Row]:
    if isinstance(t, pa.Table):
        cols = [t.column(c).to_pylist() for c in ("id", "name", "region")]
        return sorted(zip(*cols))
    return sorted((r["id"], r["name"], r["region"]) for r in t)


class FaultedHistory:
    """One seed's history: the icefloe table behind the proxy, Java's view of it, the model."""

    def __init__(self, seed: int, spark: Any, cat: Any, java: str, proxies: list[FaultProxy]) -> None:
        self.rng = random.Random(seed)
        self.seed, self.spark, self.cat, self.java, self.proxies = seed, spark, cat, java, proxies
        self.windows = random.Random(seed ^ 0x3A7)
        self.name = f"db.faulted_{uuid.uuid4().hex[:8]}"
        self.model: Model = {}
        self.next_id = 0
        self.log: list[str] = []
        self.errors: list[str] = []

    # ---- the steps: each returns the model it leaves when it lands, and the call ----
    def draw(self, step: int) -> tuple[str, Model, Callable[[], Any]]:
        rng, model = self.rng, self.model
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        if kind in ("delete", "update", "upsert") and not model:
            kind = "append"
        ids = sorted(model)
        if kind == "append":
            new = self.fresh(rng.randint(10, 60), f"a{step}")
            return kind, {**model, **{r[0]: r for r in new}}, lambda: self.table().append(arrow(new))
        if kind == "overwrite":
            r = rng.choice(REGIONS)
            new = [row for row in self.fresh(rng.randint(10, 40), f"o{step}") if row[2] == r]
            after = {i: row for i, row in model.items() if row[2] != r} | {row[0]: row for row in new}
            return kind, after, lambda: self.table().overwrite(arrow(new), f"region = '{r}'")
        if kind in ("delete", "update"):
            lo = rng.choice(ids)
            hi = lo + rng.randint(1, max(2, len(ids) // 3))
            where = f"id >= {lo} and id < {hi}"
            if kind == "delete":
                after = {i: row for i, row in model.items() if not lo <= i < hi}
                return kind + f" {where}", after, lambda: self.table().delete(where)
            name = f"u{step}"
            after = {i: ((i, name, row[2]) if lo <= i < hi else row) for i, row in model.items()}
            return kind + f" {where}", after, lambda: self.table().update(where, {"name": name})
        if kind == "upsert":
            changed = [(i, f"s{step}", region(i)) for i in rng.sample(ids, min(len(ids), rng.randint(1, 15)))]
            rows = changed + self.fresh(rng.randint(0, 15), f"s{step}")
            after = {**model, **{r[0]: r for r in rows}}
            return kind, after, lambda: self.table().upsert(arrow(rows), join_cols=["id"])
        if kind == "compact":
            return kind, model, lambda: self.table().maintenance.rewrite_data_files(min_input_files=2)
        if kind == "rewrite_manifests":
            return kind, model, lambda: self.table().maintenance.rewrite_manifests()
        keep = rng.randint(1, 3)
        return (
            kind + f" retain_last={keep}",
            model,
            lambda: self.table().maintenance.expire_snapshots(
                older_than=dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=1), retain_last=keep
            ),
        )

    def fresh(self, n: int, name: str) -> list[Row]:
        rows = [(i, name, region(i)) for i in range(self.next_id, self.next_id + n)]
        self.next_id += n
        return rows

    def table(self) -> Any:
        return self.cat.load_table(self.name)

    def check_error(self, e: BaseException, what: str) -> None:
        text = str(e)
        assert isinstance(e, IcefloeError), f"{what}: not an icefloe error: {e!r}"
        # an object (`s3://...`) or the catalog request (`REST POST v1/namespaces/...`)
        assert "s3://" in text or "REST " in text, f"{what}: the error names no object: {text}"
        assert SECRET_KEY not in text, f"{what}: the error shows the secret key"
        self.errors.append(f"{what}: {type(e).__name__}: {text[:160]}")

    def main_head(self) -> int | None:
        snap = self.table().current_snapshot()
        return None if snap is None else snap.snapshot_id

    def java_rows(self) -> list[Row]:
        return as_rows(self.spark.sql(f"SELECT id, name, region FROM {self.java}.{self.name}").collect())

    # ---- the history ----
    def create(self, properties: dict[str, str]) -> None:
        spec = PartitionSpec(PartitionField(3, 1000, "identity", "region"))
        with self.faults_off():
            self.cat.create_table(self.name, schema=ARROW, partition_spec=spec, properties=properties)

    def step(self, k: int) -> None:
        what, after, call = self.draw(k)
        where = f"seed {self.seed}, step {k}: {what}"
        with self.faults_off():
            before_head, before = self.main_head(), dict(self.model)
        outcome = "landed"
        window = self.window()
        if window:
            what += f" ({window[0]})"
            where += f" ({window[0]})"
        try:
            with window[1] if window else contextlib.nullcontext():
                call()
        except CommitStateUnknownException as e:
            self.check_error(e, where)
            outcome = "unknown"
        except IcefloeError as e:
            self.check_error(e, where)
            outcome = "failed"
        with self.faults_off():
            head = self.main_head()
            got = as_rows(self.table().scan().to_arrow())
            if outcome == "landed":
                assert got == sorted(after.values()), f"{where}: returned, but the rows are not its rows"
                self.model = after
            elif outcome == "failed":
                assert head == before_head, f"{where}: failed, yet main moved"
                assert got == sorted(before.values()), f"{where}: failed, yet the rows changed"
            else:
                assert got in (sorted(before.values()), sorted(after.values())), (
                    f"{where}: state unknown, and the rows are neither before nor after it"
                )
                self.model = after if got == sorted(after.values()) else before
                if before != after:
                    assert (head != before_head) == (self.model is after), f"{where}: main and rows disagree"
            assert self.java_rows() == got, f"{where}: Java reads other rows than icefloe"
        self.log.append(f"step {k}: {what}: {outcome}")
        self.read_under_faults(where)

    def faults_off(self) -> contextlib.ExitStack:
        stack = contextlib.ExitStack()
        for p in self.proxies:
            stack.enter_context(p.faults_off())
        return stack

    def window(self) -> tuple[str, Any] | None:
        """A failure window for a quarter of the steps: every S3 PUT, or (REST) every catalog
        POST, after the first few fails with 503."""
        rng = self.windows
        if rng.random() >= 0.25:
            return None
        proxy = rng.choice(self.proxies)
        method = "PUT" if proxy is self.proxies[0] else "POST"
        after = rng.randint(0, 6 if method == "PUT" else 1)
        return f"{method}s fail after {after}", proxy.fail_window(method, after)

    def read_under_faults(self, where: str) -> None:
        try:
            got = as_rows(self.table().scan().to_arrow())
        except IcefloeError as e:
            self.check_error(e, f"{where}, read")
            return
        assert got == sorted(self.model.values()), f"{where}: a read under faults returned other rows"

    def referenced(self) -> set[str]:
        q = f"{self.java}.{self.name}"
        rows = self.spark.sql(
            f"SELECT file_path AS f FROM {q}.all_files UNION SELECT path FROM {q}.all_manifests "
            f"UNION SELECT manifest_list FROM {q}.snapshots UNION SELECT file FROM {q}.metadata_log_entries"
        ).collect()
        return {r.f for r in rows if r.f is not None}

    def finish(self) -> None:
        """Without faults: orphan removal, then exactly the referenced files are left."""
        with self.faults_off():
            table = self.table()
            later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(minutes=1)
            table.maintenance.remove_orphan_files(older_than=later, allow_recent=True)
            on_store = {path for path, _ in _io.list_files(table.location())}
            referenced = self.referenced()
            extra = sorted(on_store - referenced)
            missing = sorted(referenced - on_store)
            assert not missing, f"seed {self.seed}: referenced files are gone: {missing[:5]}"
            assert not extra, f"seed {self.seed}: files nothing references are left: {extra[:5]}"
            assert self.java_rows() == sorted(self.model.values())


@pytest.fixture
def faulted(
    spark: Any, s3: S3Server, java_s3: tuple[SqlCatalog, str], request: pytest.FixtureRequest
) -> Iterator[Callable[[int, str], tuple[Any, str, list[FaultProxy]]]]:
    """`make(seed, catalog)`: icefloe's catalog through the fault proxies (S3 first, then the
    REST server's), and the Spark catalog of Java on the same tables without them."""
    proxies: list[FaultProxy] = []

    def proxy(upstream: str, seed: int, rate: float) -> FaultProxy:
        p = FaultProxy(upstream, rate=rate, seed=seed).__enter__()
        proxies.append(p)
        return p

    def make(seed: int, catalog: str) -> tuple[Any, str, list[FaultProxy]]:
        direct, java = java_s3
        s3_proxy = proxy(s3.endpoint, seed, 0.05)
        props = {**direct.properties, "s3.endpoint": s3_proxy.endpoint, "s3.retry.max-wait-ms": "2000"}
        if catalog == "sql":
            props.pop("type", None)
            # the same catalog name: the SQL catalog keys its rows by it, and Java reads them
            cat = icefloe.load_catalog(direct.name, type="sql", **props)
            ours = [s3_proxy]
        else:
            rest_uri = request.getfixturevalue("rest_uri")
            # a catalog request for every ~5 S3 requests, most of them under faults_off: 10%
            rest_proxy = proxy(rest_uri, seed + 1, 0.1)
            for key in ("uri", "type", "warehouse"):
                props.pop(key, None)
            # (the catalog's construction asks for its config: a 500 there fails it, as Java's
            # client fails; the history's faults start with its first step)
            with rest_proxy.faults_off():
                cat = icefloe.load_catalog(f"faulted{seed}", type="rest", uri=rest_proxy.endpoint, **props)
            java = f"restjava{uuid.uuid4().hex[:6]}"
            set_java_catalog(spark, java, s3, **{".type": "rest", ".uri": rest_uri})
            ours = [s3_proxy, rest_proxy]
        # Java's reads must see each commit, not its catalog's cached table.
        spark.conf.set(f"spark.sql.catalog.{java}.cache-enabled", "false")
        with ours[-1].faults_off():
            if not cat.namespace_exists("db"):
                cat.create_namespace("db")
        return cat, java, ours

    yield make
    for p in proxies:
        p.__exit__(None, None, None)


@pytest.mark.parametrize(("seed", "catalog"), CASES)
def test_faulted_history(
    spark: Any, faulted: Callable[[int, str], tuple[Any, str, list[FaultProxy]]], seed: int, catalog: str
) -> None:
    cat, java, proxies = faulted(seed, catalog)
    history = FaultedHistory(seed, spark, cat, java, proxies)
    rng = random.Random(seed ^ 0xFA17)
    mode = rng.choice(["copy-on-write", "merge-on-read"])
    history.create(
        {
            "format-version": rng.choice(["2", "3"]),
            "write.delete.mode": mode,
            "write.update.mode": mode,
            "write.merge.mode": mode,
            "commit.manifest.min-count-to-merge": "4",
        }
    )
    t0 = time.perf_counter()
    for k in range(STEPS):
        history.step(k)
    history.finish()
    faults = [p.faults() for p in proxies]
    print(f"\nseed {seed}, {catalog} ({mode}), {time.perf_counter() - t0:.0f} s:", *history.log, sep="\n  ")
    print(
        f"faults {faults} of {[p.counts['requests'] for p in proxies]} requests; errors seen:",
        *history.errors,
        sep="\n  ",
    )
    # Faults happened on every proxy (random ones or a failure window), and the history left
    # rows to compare.
    met = [sum(f.values()) + p.counts["window"] for f, p in zip(faults, proxies)]
    assert all(n >= 1 for n in met) and sum(met) >= 5, (faults, met)
    assert history.model, "the history left no rows to read"
