"""What a REST server's answers configure in the client, as Iceberg Java 1.12's
RESTSessionCatalog reads them: the path `prefix`, the `namespace-separator`, the `endpoints`
(HEAD for the exists checks only when listed) and the `storage-credentials` of a loaded or
created table.

Apache Iceberg's RESTCatalogServer (1.11) answers with no prefix, the `%2E` separator, every
endpoint and no credentials; other servers (Polaris, Unity, Gravitino, ...) answer otherwise. So a small
rewriting proxy stands in front of the real server and plays such a server: it changes the
/v1/config answer and the loadTable / createTable answers, and maps the requests back to what
the real server understands (requests a server of that shape would not route are answered
404, HEAD 405 when it has no HEAD endpoints). Every other byte is the real server's.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import icefloe
import icefloe.spark
import pytest
from icefloe import _io, _native
from icefloe.catalog import RestCatalog
from support.catalogs import ARROW, rows
from support.rest_proxy import Json, ServerShapeProxy
from support.servers.s3 import BUCKET, REGION, SECRET_KEY, S3Server


@pytest.fixture
def shaped(rest_uri: str) -> Iterator[Callable[..., ServerShapeProxy]]:
    made: list[ServerShapeProxy] = []

    def make(**kwargs: Any) -> ServerShapeProxy:
        made.append(ServerShapeProxy(rest_uri, **kwargs))
        return made[-1]

    yield make
    for p in made:
        p.close()


def _catalog(proxy: ServerShapeProxy, props: dict[str, str]) -> RestCatalog:
    c = icefloe.load_catalog(f"shaped{uuid.uuid4().hex[:6]}", type="rest", uri=proxy.uri, **props)
    assert isinstance(c, RestCatalog)
    return c


def _fresh_table(cat: RestCatalog, prefix: str) -> tuple[str, Any]:
    """A new namespace `<prefix>_<hex>` and its table `t` (schema ARROW): (namespace, table)."""
    ns = f"{prefix}_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(ns)
    return ns, cat.create_table((ns, "t"), schema=ARROW)


def _ids(table: Any) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def test_a_prefix_with_a_slash_goes_into_paths_as_it_is(shaped: Any, s3: S3Server) -> None:
    """`prefix: cat/one` (a `catalogs/<name>` style server): Java's ResourcePaths and
    PyIceberg send /v1/cat/one/namespaces/..., not cat%2Fone."""
    proxy = shaped(prefix="cat/one")
    cat = _catalog(proxy, s3.properties())
    ns = f"p_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.t", schema=ARROW).append(rows(range(3)))
    assert _ids(cat.load_table(f"{ns}.t")) == [0, 1, 2]
    assert cat.list_tables(ns) == [(ns, "t")]
    assert cat.table_exists(f"{ns}.t") and cat.namespace_exists(ns)
    cat.rename_table(f"{ns}.t", f"{ns}.u")
    cat.drop_table(f"{ns}.u")
    paths = proxy.paths()
    assert len(paths) > 8
    assert all(p.split(" ", 1)[1].startswith("/v1/cat/one/") for p in paths), paths


@pytest.mark.parametrize("endpoints", ["no-head", "absent"])
def test_exists_checks_head_only_when_the_server_lists_it(shaped: Any, s3: S3Server, endpoints: str) -> None:
    """A server whose /v1/config does not list the HEAD endpoints (or lists no endpoints:
    Java's defaults have no HEAD) answers HEAD with 405: table_exists and namespace_exists
    load the table / namespace instead (a 404 is False), as Java does. The real server lists
    them: HEAD is sent."""
    ns = f"h_{uuid.uuid4().hex[:8]}"
    direct = shaped()
    cat = _catalog(direct, s3.properties())
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.t", schema=ARROW)
    for proxy in (direct, shaped(endpoints=endpoints)):
        c = cat if proxy is direct else _catalog(proxy, s3.properties())
        proxy.seen.clear()
        assert c.table_exists(f"{ns}.t") is True
        assert c.table_exists(f"{ns}.missing") is False
        assert c.table_exists(f"{ns}_missing.t") is False
        assert c.namespace_exists(ns) is True
        assert c.namespace_exists(f"{ns}_missing") is False
        methods = {p.split(" ", 1)[0] for p in proxy.paths()}
        assert methods == ({"HEAD"} if proxy is direct else {"GET"}), proxy.seen


def test_the_servers_namespace_separator_joins_nested_levels(shaped: Any, s3: S3Server) -> None:
    """`namespace-separator: %1F` in /v1/config (Java's default; Iceberg 1.11's own server
    answers %2E): nested namespaces go into paths as `a%1Fb` and into the `parent` query as
    `a<US>b` (Java's RESTUtil), never with %2E."""
    proxy = shaped(separator="%1F")
    cat = _catalog(proxy, s3.properties())
    top = f"s_{uuid.uuid4().hex[:8]}"
    nested = (top, "sb")
    cat.create_namespace(top)
    cat.create_namespace(nested, {"owner": "tests"})
    cat.create_namespace((*nested, "sc"))
    assert cat.list_namespaces(top) == [nested]
    assert cat.list_namespaces(nested) == [(*nested, "sc")]
    assert cat.namespace_exists(nested) and cat.load_namespace_properties(nested)["owner"] == "tests"
    cat.update_namespace_properties(nested, updates={"k": "v"})
    cat.create_table((*nested, "t"), schema=ARROW).append(rows(range(4)))
    assert cat.list_tables(nested) == [(*nested, "t")]
    assert cat.table_exists((*nested, "t"))
    assert _ids(cat.load_table((*nested, "t"))) == [0, 1, 2, 3]
    cat.drop_table((*nested, "t"))
    cat.drop_namespace((*nested, "sc"))
    assert not cat.namespace_exists((*nested, "sc"))
    paths = proxy.paths()
    assert any(f"/namespaces/{top}%1Fsb/tables/t" in p.replace("%1f", "%1F") for p in paths), paths
    assert any(f"parent={top}%1Fsb" in p.replace("%1f", "%1F") for p in paths), paths
    assert not any("%2E" in p.upper() for p in paths), paths


# Settings that reach no storage: the catalog's own and the `config` of the load answer, so
# a read only works with the right storage credential. The retry count keeps a wrong one
# from waiting (the good ones set it back).
_DEAD = {
    "s3.endpoint": "http://127.0.0.1:1",
    "s3.region": REGION,
    "s3.path-style-access": "true",
    "s3.access-key-id": "dead-key",
    "s3.secret-access-key": "dead-secret-Do-Not-Print",
    "s3.retry.num-retries": "0",
}


def test_storage_credentials_of_a_loaded_table(shaped: Any, s3: S3Server, spark: Any) -> None:
    """loadTable / createTable vend the storage settings as `storage-credentials` only (the
    `config` and the catalog's own settings reach no storage): as Java's S3FileIO, the
    credential with the longest prefix matching a path serves it, over `config`, on the
    driver and in Spark tasks; no secret shows in a repr."""
    ns = f"c_{uuid.uuid4().hex[:8]}"
    good = {**s3.properties(), "s3.retry.num-retries": "3"}

    def vend(result: Json) -> Json:
        location = result["metadata"]["location"]
        result["config"] = dict(_DEAD)
        result["storage-credentials"] = [
            {"prefix": "s3://", "config": dict(_DEAD)},
            {"prefix": f"s3://{BUCKET}/rest/{ns}", "config": dict(_DEAD)},
            {"prefix": location, "config": good},
            {"prefix": f"{location}/data", "config": {**good, "s3.retry.max-wait-ms": "1234"}},
        ]
        return result

    proxy = shaped(vend=vend)
    cat = _catalog(proxy, _DEAD)
    cat.create_namespace(ns)
    created = cat.create_table(f"{ns}.t", schema=ARROW)
    created.append(rows(range(5)))
    t = cat.load_table(f"{ns}.t")
    t.append(rows(range(5, 8)))
    assert _ids(t.refresh()) == list(range(8))
    assert sorted(r.id for r in icefloe.spark.read(spark, t).collect()) == list(range(8))

    location = t.location()
    data = _native.file_io_properties(f"{location}/data/x.parquet")
    meta = _native.file_io_properties(f"{location}/metadata/x.avro")
    assert data["s3.endpoint"] == meta["s3.endpoint"] == s3.endpoint
    assert data.get("s3.retry.max-wait-ms") == "1234" and "s3.retry.max-wait-ms" not in meta
    assert t.io_properties["s3.endpoint"] == s3.endpoint
    shown = " ".join(
        [repr(cat), repr(t), repr(t.io_config), repr(_io.IoConfig.current()), repr(data), repr(meta)]
    )
    assert "***" in shown
    assert SECRET_KEY not in shown and _DEAD["s3.secret-access-key"] not in shown


@pytest.mark.parametrize("advertised", [True, False])
def test_idempotency_keys_make_lost_answers_safe_to_retry(
    shaped: Any, s3: S3Server, advertised: bool
) -> None:
    """`idempotency-key-lifetime` in /v1/config (Iceberg 1.11's RESTCatalogServer honours the
    `Idempotency-Key` header): every mutation carries a UUIDv7 key, and a create and a commit
    whose answers are lost are retried with the same key and answered with the first attempt's
    result, applied once. Without the advertisement no key is sent (as Java) and a lost create
    is an error."""
    lose = lambda r: r.startswith("POST ") and ("/tables" in r or "/namespaces" in r)  # noqa: E731
    proxy = shaped(idempotency=advertised, lose_first=lose)
    cat = _catalog(proxy, s3.properties())
    ns = f"i_{uuid.uuid4().hex[:8]}"
    if not advertised:
        with pytest.raises(Exception, match="failed"):
            cat.create_namespace(ns)  # applied, its answer lost
        assert cat.namespace_exists(ns)
        assert all(key is None for _, key in proxy.keys), proxy.keys
        return
    cat.create_namespace(ns)
    table = cat.create_table((ns, "t"), schema=ARROW)
    table.append(rows(range(3)))
    table.append(rows(range(3, 5)))
    loaded = cat.load_table((ns, "t"))
    assert _ids(loaded) == [0, 1, 2, 3, 4]
    assert len(loaded.snapshots()) == 2  # each commit applied once
    posts = [(r, k) for r, k in proxy.keys if r.startswith("POST ")]
    assert all(k is not None and uuid.UUID(k).version == 7 for _, k in posts), posts
    # Each lost request was sent again with its key: the same key twice in a row.
    retried = [a for a, b in zip(posts, posts[1:]) if a == b]
    assert len(retried) >= 3, posts  # the namespace, the table, its commits
    assert len({k for _, k in posts}) == len(posts) - len(retried)
    gets = [k for r, k in proxy.keys if r.startswith(("GET ", "HEAD "))]
    assert all(k is None for k in gets)


def test_unchanged_tables_load_as_not_modified(shaped: Any, s3: S3Server) -> None:
    """Freshness-aware loading (Iceberg 1.11's server sends an ETag with each loadTable answer
    and answers `If-None-Match` with 304): loading an unchanged table again costs a 304, and
    its rows and metadata are the same; after a commit by another client the next load gets the
    new version (200)."""
    proxy = shaped()
    cat = _catalog(proxy, s3.properties())
    other = _catalog(proxy, s3.properties())
    ns = f"f_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(ns)
    cat.create_table((ns, "t"), schema=ARROW).append(rows(range(3)))
    first = cat.load_table((ns, "t"))
    again = cat.load_table((ns, "t"))
    assert again.metadata_location == first.metadata_location and _ids(again) == [0, 1, 2]
    other.load_table((ns, "t")).append(rows(range(3, 5)))
    moved = cat.load_table((ns, "t"))
    assert moved.metadata_location != first.metadata_location and _ids(moved) == [0, 1, 2, 3, 4]
    loads = [
        status
        for r, status in proxy.statuses
        if r.startswith("GET ") and r.endswith(f"/namespaces/{ns}/tables/t")
    ]
    # cat: 200, 304, then 200 for the new version (other: 200 once).
    assert loads.count(304) == 1 and loads[:2] == [200, 304], loads
    assert loads[-1] == 200


def test_scan_and_commit_reports_reach_the_server(shaped: Any, s3: S3Server) -> None:
    """After each commit and each scan plan the client reports a `commit-report` /
    `scan-report` (Java's RESTMetricsReporter). Iceberg 1.11's server parses each with Java's
    ReportMetricsRequestParser (204; a body it cannot parse is an HTTP 500); the counters are the
    snapshot's and the plan's. `rest-metrics-reporting-enabled=false` sends none."""
    proxy = shaped()
    cat = _catalog(proxy, s3.properties())
    ns, table = _fresh_table(cat, "m")
    table.append(rows(range(3)))
    table.append(rows(range(3, 5)))
    scan = cat.load_table((ns, "t")).scan(row_filter="id >= 3", selected_fields=("id",))
    planned = len(list(scan.plan_files()))
    statuses = [st for r, st in proxy.statuses if r.endswith("/metrics")]
    assert statuses and all(st == 204 for st in statuses), statuses
    commits = [r for r in proxy.reports if r["report-type"] == "commit-report"]
    scans = [r for r in proxy.reports if r["report-type"] == "scan-report"]
    assert [c["operation"] for c in commits] == ["append", "append"]
    assert commits[0]["table-name"] == f"{cat.name}.{ns}.t"
    assert commits[1]["metrics"]["added-records"] == {"unit": "count", "value": 2}
    assert commits[1]["metrics"]["total-records"] == {"unit": "count", "value": 5}
    assert commits[1]["metrics"]["attempts"] == {"unit": "count", "value": 1}
    assert commits[1]["snapshot-id"] == cat.load_table((ns, "t")).metadata.current_snapshot_id
    last = scans[-1]
    assert last["projected-field-names"] == ["id"] and last["filter"]["type"] == "gt-eq"
    assert last["metrics"]["result-data-files"] == {"unit": "count", "value": planned}
    assert last["metrics"]["total-planning-duration"]["time-unit"] == "nanoseconds"

    quiet = _catalog(proxy, {**s3.properties(), "rest-metrics-reporting-enabled": "false"})
    sent = len(proxy.reports)
    quiet.load_table((ns, "t")).append(rows(range(5, 6)))
    assert len(list(quiet.load_table((ns, "t")).scan().plan_files())) == 3
    assert len(proxy.reports) == sent


def test_statistics_files_reach_the_server(shaped: Any, s3: S3Server) -> None:
    """A statistics file registered by `compute_table_stats` is a `set-statistics` update of
    the REST commit (Iceberg's server keeps it: another client loads it); expiring its snapshot
    sends `remove-statistics`."""
    proxy = shaped()
    cat = _catalog(proxy, s3.properties())
    ns, table = _fresh_table(cat, "st")
    table.append(rows(range(10)))
    stats = table.maintenance.compute_table_stats()
    assert stats is not None
    other = _catalog(proxy, s3.properties())
    listed = other.load_table((ns, "t")).statistics()
    assert [(f.snapshot_id, f.statistics_path) for f in listed] == [
        (stats.snapshot_id, stats.statistics_path)
    ]
    assert listed[0].ndv == stats.ndv and max(stats.ndv.values()) == 10
    table.append(rows(range(10, 12)))
    table.maintenance.expire_snapshots(snapshot_ids=[stats.snapshot_id])
    assert other.load_table((ns, "t")).statistics() == []


def test_partition_statistics_reach_the_server(shaped: Any, s3: S3Server) -> None:
    """A partition statistics file registered by `compute_partition_stats` is a
    `set-partition-statistics` update of the REST commit (Iceberg's server keeps it: another
    client loads it and reads its rows); expiring its snapshot sends
    `remove-partition-statistics` and deletes the file."""
    proxy = shaped()
    cat = _catalog(proxy, s3.properties())
    ns, table = _fresh_table(cat, "pst")
    with table.update_spec() as u:
        u.add_identity("name")
    table = cat.load_table((ns, "t"))
    table.append(rows(range(4)))
    stats = table.maintenance.compute_partition_stats()
    assert stats is not None
    other = _catalog(proxy, s3.properties()).load_table((ns, "t"))
    assert [(f.snapshot_id, f.statistics_path) for f in other.partition_statistics()] == [
        (stats.snapshot_id, stats.statistics_path)
    ]
    assert sorted(r["partition"]["name"] for r in other.maintenance.partition_stats()) == [
        "n0",
        "n1",
        "n2",
        "n3",
    ]
    table = cat.load_table((ns, "t"))
    table.append(rows(range(4, 5)))
    cat.load_table((ns, "t")).maintenance.expire_snapshots(snapshot_ids=[stats.snapshot_id])
    assert _catalog(proxy, s3.properties()).load_table((ns, "t")).partition_statistics() == []
    assert not _native.io_exists(stats.statistics_path)
