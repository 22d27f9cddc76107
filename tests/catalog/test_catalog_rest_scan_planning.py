"""Server-side scan planning of the REST catalog (`POST .../plan`, `GET`/`DELETE .../plan/{id}`,
`POST .../tasks`) against Iceberg 1.11's own planning (CatalogHandlers behind
RESTCatalogAdapter): tests/java/PlanningRestServer.java serves the adapter with a planning
behaviour chosen by table properties (synchronous or asynchronous, N file scan tasks per plan
task, a delayed or failing plan).

Each read is checked three ways on the same table: icefloe with the server's plan, icefloe with
its own plan from the manifests, and Iceberg Java (Spark, its REST catalog on the same server,
planning locally and on the server)
— filters (residuals), projection, a snapshot id, partitions, position deletes, deletion
vectors (v3) and equality deletes. A recording proxy (`ServerShapeProxy`) in front of the
server counts the planning requests, proving the server planned; with the endpoints not
listed, icefloe plans locally.
"""

from __future__ import annotations

import datetime as dt
import http.client
import tempfile
import urllib.parse
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pyarrow as pa
import pytest
from icefloe import _native
from icefloe.catalog import RestCatalog
from icefloe.exceptions import NoSuchPlanError, NotSupportedError, ScanPlanningError
from icefloe.partitioning import PartitionField, PartitionSpec
from support.java import JAVA_SOURCES, java_command
from support.oracle import assert_same_rows, canonical_rows_from_spark
from support.rest_proxy import Json, ServerShapeProxy
from support.servers.rest import rest_classpath, run_rest
from support.servers.s3 import BUCKET, S3Server

pytestmark = [pytest.mark.interop]

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("cat", pa.string()),
        pa.field("d", pa.date32()),
    ]
)


def batch(ids: range) -> pa.Table:
    return pa.table(
        {
            "id": list(ids),
            "name": [f"n{i}" for i in ids],
            "cat": ["a" if i % 3 else "b" for i in ids],
            "d": [dt.date(2024, 1, 1 + i % 4) for i in ids],
        },
        schema=SCHEMA,
    )


@pytest.fixture(scope="module")
def planning_uri(s3: S3Server) -> Iterator[str]:
    """Iceberg 1.11's REST adapter with per-table planning behaviour, on the `s3` warehouse."""
    command = java_command(JAVA_SOURCES / "PlanningRestServer.java", rest_classpath(), heap="512m")
    with tempfile.TemporaryDirectory() as d:
        yield from run_rest(Path(d), s3, f"s3://{BUCKET}/restplan", command=command)


@pytest.fixture
def proxy(planning_uri: str) -> Iterator[ServerShapeProxy]:
    p = ServerShapeProxy(planning_uri)
    yield p
    p.close()


def rest_catalog(uri: str, s3: S3Server, **props: str) -> RestCatalog:
    c = icefloe.load_catalog(f"plan{uuid.uuid4().hex[:6]}", type="rest", uri=uri, **s3.properties(), **props)
    assert isinstance(c, RestCatalog)
    return c


@pytest.fixture
def server(proxy: ServerShapeProxy, s3: S3Server) -> RestCatalog:
    """icefloe planning on the server (the catalog property, as Java's)."""
    return rest_catalog(proxy.uri, s3, **{"scan-planning-mode": "server"})


@pytest.fixture
def local(planning_uri: str, s3: S3Server) -> RestCatalog:
    """icefloe planning from the manifests (the default mode)."""
    return rest_catalog(planning_uri, s3)


@dataclass
class Java:
    """Iceberg Java's Spark catalogs on the planning server: `name` plans locally, `name`srv
    plans on the server (Java 1.12's RESTTableScan), through `proxy`, which counts its requests."""

    name: str
    proxy: ServerShapeProxy


@pytest.fixture(scope="module")
def java(spark: Any, planning_uri: str, s3: S3Server) -> Iterator[Java]:
    name = f"javaplan{uuid.uuid4().hex[:6]}"
    proxy = ServerShapeProxy(planning_uri)
    conf = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".type": "rest",
        **{f".{k}": v for k, v in s3.java_properties().items()},
    }
    for k, v in conf.items():
        spark.conf.set(f"spark.sql.catalog.{name}{k}", v)
        spark.conf.set(f"spark.sql.catalog.{name}srv{k}", v)
    spark.conf.set(f"spark.sql.catalog.{name}.uri", planning_uri)
    spark.conf.set(f"spark.sql.catalog.{name}srv.uri", proxy.uri)
    spark.conf.set(f"spark.sql.catalog.{name}srv.scan-planning-mode", "server")
    yield Java(name, proxy)
    proxy.close()


def new_table(
    cat: RestCatalog,
    props: dict[str, str] | None = None,
    spec: PartitionSpec | None = None,
    appends: int = 4,
) -> tuple[str, Any]:
    """A fresh namespace and its table `t` (SCHEMA), `appends` appends of 5 rows (one file each)."""
    ns = f"p_{uuid.uuid4().hex[:8]}"
    cat.create_namespace(ns)
    t = cat.create_table((ns, "t"), schema=SCHEMA, partition_spec=spec, properties=props or {})
    for i in range(appends):
        t.append(batch(range(5 * i, 5 * i + 5)))
    return ns, t.refresh()


def planning_requests(proxy: ServerShapeProxy, since: int) -> list[str]:
    """The scan planning requests after the `since`-th request, as `METHOD tail` (`tail`: the
    path after the table's)."""
    out = []
    for r in proxy.paths()[since:]:
        method, path = r.split(" ", 1)
        tail = path.split("/tables/", 1)[-1].split("/", 1)
        if len(tail) == 2 and tail[1].startswith(("plan", "tasks")):
            out.append(f"{method} {tail[1].split('/')[0]}")
    return out


def three_ways(
    proxy: ServerShapeProxy,
    server: RestCatalog,
    local: RestCatalog,
    spark: Any,
    java: Java,
    ns: str,
    java_sql: str,
    java_server_plan: bool = True,
    **scan: Any,
) -> tuple[pa.Table, list[str]]:
    """The rows of `scan` read with the server's plan (`to_arrow` and the batch reader), equal
    to icefloe's own plan and to Java's `java_sql` (`{t}`: the table); and the planning requests
    the server's read made."""
    before = len(proxy.paths())
    planned = server.load_table((ns, "t")).scan(**scan)
    got = planned.to_arrow()
    requests = planning_requests(proxy, before)
    assert requests and requests[0] == "POST plan", requests
    batches = planned.to_arrow_batch_reader().read_all()
    assert_same_rows(batches, got, context="batch reader and to_arrow of the server's plan")
    mine = local.load_table((ns, "t")).scan(**scan).to_arrow()
    assert_same_rows(got, mine, context="server's plan and icefloe's own plan")
    expected = spark.sql(java_sql.format(t=f"{java.name}.{ns}.t"))
    assert_same_rows(got, expected, context="server's plan and Java")
    if not java_server_plan:
        return got, requests
    before = len(java.proxy.paths())
    java_server = spark.sql(java_sql.format(t=f"{java.name}srv.{ns}.t"))
    java_rows = canonical_rows_from_spark(java_server.collect(), java_server.schema)
    assert "POST plan" in planning_requests(java.proxy, before), "Java planned on the server"
    assert_same_rows(got, java_rows, context="server's plan and Java's read of it")
    return got, requests


def test_filters_projection_and_a_snapshot_id(
    proxy: Any, server: Any, local: Any, spark: Any, java: Java
) -> None:
    """A filter the server leaves as each file's residual, a projection and a time travel by
    snapshot id: the same rows three ways. The server's tasks carry the residual (icefloe
    applies it: the rows a file holds outside the filter are not returned)."""
    ns, t = new_table(local)
    first = t.snapshots()[1].snapshot_id
    got, requests = three_ways(
        proxy, server, local, spark, java, ns,
        "SELECT name, id FROM {t} WHERE id >= 3 AND name <> 'n7'",
        row_filter="id >= 3 and name != 'n7'", selected_fields=("name", "id"),
    )  # fmt: skip
    assert sorted(got.column("id").to_pylist()) == [i for i in range(3, 20) if i != 7]
    # Synchronous, one plan task: no /tasks request; the plan is released once read.
    assert requests == ["POST plan", "DELETE plan"], requests
    tasks = server.load_table((ns, "t")).scan(row_filter="id >= 3 and name != 'n7'").plan_files()
    assert len(tasks) == 4 and all(task.residual is not None for task in tasks)
    three_ways(
        proxy, server, local, spark, java, ns,
        f"SELECT * FROM {{t}} VERSION AS OF {first} WHERE id < 8", snapshot_id=first, row_filter="id < 8",
    )  # fmt: skip
    before = len(proxy.paths())
    assert len(server.load_table((ns, "t")).scan(snapshot_id=first).plan_files()) == 2
    sent = [r for r in proxy.paths()[before:] if r.endswith("/plan")]
    assert len(sent) == 1


def test_a_partitioned_table(proxy: Any, server: Any, local: Any, spark: Any, java: Java) -> None:
    """Partitioned by identity(cat) and day(d): the server prunes partitions (a filter on the
    partition columns leaves the files of one day and category; the identity part leaves no
    residual, the day part stays one, as Java's strict projection of a day transform), partition
    values reach the reader and a filter on another column stays a residual."""
    spec = PartitionSpec(PartitionField(3, 1000, "identity", "cat"), PartitionField(4, 1001, "day", "d_day"))
    ns, _t = new_table(local, spec=spec)
    got, _ = three_ways(
        proxy, server, local, spark, java, ns,
        "SELECT * FROM {t} WHERE cat = 'a' AND d = DATE'2024-01-02'",
        row_filter="cat = 'a' and d = '2024-01-02'",
    )  # fmt: skip
    assert got.num_rows == 4
    tasks = server.load_table((ns, "t")).scan(row_filter="cat = 'a' and d = '2024-01-02'").plan_files()
    assert len(tasks) == 4
    residuals = {task.residual for task in tasks}
    assert len(residuals) == 1 and '"d"' in str(residuals) and '"cat"' not in str(residuals), residuals
    assert {tuple(task.file.partition[:1]) for task in tasks} == {("a",)}
    three_ways(
        proxy, server, local, spark, java, ns, "SELECT cat, id FROM {t} WHERE id > 11",
        row_filter="id > 11", selected_fields=("cat", "id"),
    )  # fmt: skip


@pytest.mark.parametrize("version", [2, 3])
def test_position_deletes_and_deletion_vectors(
    proxy: Any, server: Any, local: Any, spark: Any, java: Java, version: int
) -> None:
    """Merge-on-read deletes: position-delete files (v2) and deletion vectors (v3) come with
    the server's tasks (`delete-files` referred to by index) and are applied."""
    props = {"format-version": str(version), "write.delete.mode": "merge-on-read"}
    ns, t = new_table(local, props)
    t.delete("id in (1, 6, 7, 18)")
    t.refresh().delete("id = 2")
    tasks = server.load_table((ns, "t")).scan().plan_files()
    deletes = [d for task in tasks for d in task.delete_files]
    assert deletes, "the server's tasks carry the delete files"
    assert {d.file_format for d in deletes} == ({"PUFFIN"} if version == 3 else {"PARQUET"})
    # Iceberg 1.11.0's server refers each task to the last DV of a shared Puffin file
    # (apache/iceberg#17497): icefloe repairs the reference, Java's reader refuses it.
    dvs_shared = version == 3
    got, _ = three_ways(proxy, server, local, spark, java, ns, "SELECT * FROM {t}", not dvs_shared)
    assert sorted(got.column("id").to_pylist()) == [i for i in range(20) if i not in (1, 2, 6, 7, 18)]
    three_ways(
        proxy, server, local, spark, java, ns, "SELECT id FROM {t} WHERE name > 'n1'", not dvs_shared,
        row_filter="name > 'n1'", selected_fields=("id",),
    )  # fmt: skip
    three_ways(
        proxy, server, local, spark, java, ns, "SELECT id, _file, _pos FROM {t} WHERE id > 4", not dvs_shared,
        row_filter="id > 4", selected_fields=("id", "_file", "_pos"),
    )  # fmt: skip
    assert server.load_table((ns, "t")).scan().count() == 15
    if dvs_shared:
        with pytest.raises(Exception, match="DV is expected to reference"):
            spark.sql(f"SELECT * FROM {java.name}srv.{ns}.t").collect()


def test_equality_deletes(proxy: Any, server: Any, local: Any, spark: Any, java: Java) -> None:
    """A merge-on-read upsert writes equality deletes on `id`: the server attaches them to the
    older files only, and the replaced rows are gone."""
    props = {"format-version": "2", "write.merge.mode": "merge-on-read", "write.upsert.enabled": "true"}
    ns, t = new_table(local, props)
    new = {"id": [3, 12], "name": ["u3", "u12"], "cat": ["c", "c"], "d": [dt.date(2024, 2, 1)] * 2}
    t.upsert(pa.table(new, schema=SCHEMA), join_cols=["id"])
    tasks = server.load_table((ns, "t")).scan().plan_files()
    kinds = {int(d.content) for task in tasks for d in task.delete_files}
    assert kinds == {2}, kinds
    got, _ = three_ways(proxy, server, local, spark, java, ns, "SELECT * FROM {t}")
    names = dict(zip(got.column("id").to_pylist(), got.column("name").to_pylist()))
    assert len(names) == 20 and names[3] == "u3" and names[12] == "u12"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_several_plan_tasks(proxy: Any, server: Any, local: Any, spark: Any, java: Java, mode: str) -> None:
    """One file scan task per plan task: the plan (or, async, the polled result) holds the
    first and names the next plan task; each `POST .../tasks` answer names the one after."""
    props = {"test.plan.tasks-per-plan-task": "1", "test.plan.async": str(mode == "async").lower()}
    ns, _t = new_table(local, props, appends=5)
    got, requests = three_ways(proxy, server, local, spark, java, ns, "SELECT * FROM {t} WHERE id <> 4",
                               row_filter="id != 4")  # fmt: skip
    assert got.num_rows == 24
    assert requests.count("POST tasks") == 4, requests
    if mode == "async":
        assert requests[:2] == ["POST plan", "GET plan"], requests
    assert requests[-1] == "DELETE plan"


def test_an_async_plan_is_polled_until_completed(
    proxy: Any, server: Any, local: Any, spark: Any, java: Java
) -> None:
    """A plan answered `submitted` that completes 1.5 s later: polled (after 1 s, then 2 s)
    until completed, then read."""
    props = {"test.plan.async": "true", "test.plan.async-delay-ms": "1500"}
    ns, _t = new_table(local, props)
    _got, requests = three_ways(proxy, server, local, spark, java, ns, "SELECT * FROM {t}")
    assert requests[0] == "POST plan" and requests.count("GET plan") >= 2, requests
    assert requests[-1] == "DELETE plan"


def test_spark_reads_the_servers_plan(proxy: Any, server: Any, spark: Any, java: Java) -> None:
    """icefloe's Spark read takes the server's tasks too: files with deletes (or a residual)
    in the Rust reader, the other files in Spark's Parquet source."""
    from icefloe.spark.read import plan_read

    props = {"format-version": "2", "write.delete.mode": "merge-on-read"}
    ns, t = new_table(server, props)
    t.delete("id in (0, 19)")
    for row_filter, where in ((None, ""), ("id > 2", " WHERE id > 2")):
        before = len(proxy.paths())
        table = server.load_table((ns, "t"))
        plan = plan_read(spark, table, row_filter=row_filter)
        assert "POST plan" in planning_requests(proxy, before)
        if row_filter is None:
            # The files with deletes take the Rust reader for that reason (this session's Spark
            # has no S3 file system, so the others take it too).
            reasons = sorted(plan.rust_files.values())
            assert reasons.count("deletes") == 2 and len(reasons) == 4, plan.rust_files
        df = icefloe.spark.read(spark, table, row_filter=row_filter)
        assert_same_rows(
            df, spark.sql(f"SELECT * FROM {java.name}.{ns}.t{where}"), context=f"Spark read{where}"
        )


def test_a_failed_plan_is_a_clear_error(proxy: Any, server: Any, local: Any) -> None:
    """Planning that fails on the server (0 tasks per plan task): asynchronously, the polled
    status `failed` raises ScanPlanningError naming the plan; synchronously, the server's error."""
    ns, _t = new_table(local, {"test.plan.tasks-per-plan-task": "0", "test.plan.async": "true"})
    with pytest.raises(ScanPlanningError, match=r"remote scan planning failed for plan async-"):
        server.load_table((ns, "t")).scan().to_arrow()
    ns, _t = new_table(local, {"test.plan.tasks-per-plan-task": "0"})
    with pytest.raises(Exception, match=r"REST POST .*/plan: HTTP (400|500)"):
        server.load_table((ns, "t")).scan().to_arrow()


def _delete_upstream(upstream: str, path: str) -> None:
    u = urllib.parse.urlsplit(upstream)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request("DELETE", path)
    conn.getresponse().read()
    conn.close()


def test_cancelled_and_unknown_plans_are_clear_errors(planning_uri: str, s3: S3Server, local: Any) -> None:
    """Another client cancels the plan: polling an async plan then finds it `cancelled`
    (ScanPlanningError), and the plan tasks of a cancelled sync plan are gone (NoSuchPlanError);
    a plan id the server never made is a NoSuchPlanError."""

    def cancelling(request: str, result: Json) -> Json:
        if request.startswith("POST ") and request.endswith("/plan") and result.get("plan-id"):
            path = urllib.parse.urlsplit(request.split(" ", 1)[1]).path
            _delete_upstream(planning_uri, f"{path}/{result['plan-id']}")
        return result

    p = ServerShapeProxy(planning_uri, answer=cancelling)
    try:
        cat = rest_catalog(p.uri, s3, **{"scan-planning-mode": "server"})
        props = {"test.plan.async": "true", "test.plan.async-delay-ms": "1500"}
        ns, _t = new_table(local, props)
        with pytest.raises(ScanPlanningError, match=r"cancelled for plan async-"):
            cat.load_table((ns, "t")).scan().to_arrow()
        ns, _t = new_table(local, {"test.plan.tasks-per-plan-task": "1"})
        with pytest.raises(NoSuchPlanError, match=r"/tasks: HTTP 404 NoSuchPlanTaskException"):
            cat.load_table((ns, "t")).scan().to_arrow()
    finally:
        p.close()

    def unknown(request: str, result: Json) -> Json:
        if request.endswith("/plan") and result.get("status") == "completed":
            return {"status": "submitted", "plan-id": "no-such-plan"}
        return result

    p = ServerShapeProxy(planning_uri, answer=unknown)
    try:
        cat = rest_catalog(p.uri, s3, **{"scan-planning-mode": "server"})
        ns, _t = new_table(local)
        with pytest.raises(NoSuchPlanError, match=r"plan/no-such-plan: HTTP 404 NoSuchPlanIdException"):
            cat.load_table((ns, "t")).scan().to_arrow()
    finally:
        p.close()


@pytest.mark.parametrize("endpoints", ["no-plan", "absent"])
def test_without_the_endpoints_icefloe_plans_locally(
    planning_uri: str, s3: S3Server, local: Any, endpoints: str
) -> None:
    """A server that does not list the planning endpoints (or lists none: Java's defaults hold
    none of them): the scan plans from the manifests, with the same rows; nothing is sent to
    `/plan`. The default mode (`client`) plans locally too."""
    ns, t = new_table(local)
    expected = t.scan(row_filter="id > 4").to_arrow()
    p = ServerShapeProxy(planning_uri, endpoints=endpoints)
    try:
        for props in ({"scan-planning-mode": "server"}, {}):
            cat = rest_catalog(p.uri, s3, **props)
            assert_same_rows(cat.load_table((ns, "t")).scan(row_filter="id > 4").to_arrow(), expected)
        assert planning_requests(p, 0) == []
    finally:
        p.close()


def test_the_tables_server_config_chooses_the_mode(planning_uri: str, s3: S3Server, local: Any) -> None:
    """`scan-planning-mode` in a loadTable answer's `config` wins over the catalog's (as in
    Java): `server` there plans on the server for a catalog that did not ask; a server that
    asks but does not list the endpoint is an error, as Java's."""

    def server_mode(result: Json) -> Json:
        result.setdefault("config", {})["scan-planning-mode"] = "server"
        return result

    ns, t = new_table(local)
    expected = t.scan().to_arrow()
    p = ServerShapeProxy(planning_uri, vend=server_mode)
    q = ServerShapeProxy(planning_uri, vend=server_mode, endpoints="no-plan")
    try:
        cat = rest_catalog(p.uri, s3, **{"scan-planning-mode": "client"})
        assert_same_rows(cat.load_table((ns, "t")).scan().to_arrow(), expected)
        assert planning_requests(p, 0)[:1] == ["POST plan"]
        refused = rest_catalog(q.uri, s3)
        with pytest.raises(NotSupportedError, match="requires server-side scan planning"):
            refused.load_table((ns, "t")).scan().to_arrow()
    finally:
        p.close()
        q.close()


def test_an_unknown_planning_mode_is_refused(planning_uri: str, s3: S3Server, local: Any) -> None:
    ns, _t = new_table(local, appends=1)
    cat = rest_catalog(planning_uri, s3, **{"scan-planning-mode": "remote"})
    with pytest.raises(
        Exception, match="invalid scan planning mode 'remote': valid values are client, server"
    ):
        cat.load_table((ns, "t")).scan().to_arrow()


def test_the_request_names_the_scan(server: Any, local: Any) -> None:
    """The PlanTableScanRequest: the snapshot the scan resolved, the selected and filtered
    columns, the filter, case sensitivity (the fields Java's RESTTableScan sends)."""
    from icefloe.catalog._rest_scan_planning import plan_request

    ns, t = new_table(local, appends=2)
    first = t.snapshots()[0].snapshot_id
    table = server.load_table((ns, "t"))
    request = plan_request(table.scan(row_filter="id > 1", selected_fields=("name",), case_sensitive=False))
    assert request["snapshot-id"] == t.metadata.current_snapshot_id
    assert request["use-snapshot-schema"] is False
    assert sorted(request["select"]) == ["id", "name"]
    assert request["filter"] == {"type": "gt", "term": "id", "value": 1}
    assert request["case-sensitive"] is False
    old = plan_request(table.scan(snapshot_id=first))
    assert old["snapshot-id"] == first and old["use-snapshot-schema"] is True and "filter" not in old


def test_a_transactions_staged_snapshots_plan_locally(proxy: Any, server: Any, local: Any) -> None:
    """A transaction's writes read its staged snapshots, which the server does not have: they
    plan from the manifests; a scan of a committed snapshot plans on the server."""
    ns, _t = new_table(local, {"format-version": "2", "write.delete.mode": "merge-on-read"}, appends=2)
    table = server.load_table((ns, "t"))
    before = len(proxy.paths())
    with table.transaction() as tx:
        tx.append(batch(range(10, 12)))
        tx.delete("id = 1 or id = 11")  # a committed row and one appended in this transaction
    assert planning_requests(proxy, before) == []
    got = server.load_table((ns, "t")).scan().to_arrow()
    assert sorted(got.column("id").to_pylist()) == [0, *range(2, 11)]
    assert planning_requests(proxy, before)[:1] == ["POST plan"]


def test_a_plan_unfinished_in_time_is_cancelled(proxy: Any, s3: S3Server, local: Any) -> None:
    """`rest-scan-planning.poll-timeout-ms`: a plan still `submitted` when the next wait would
    pass it raises ScanPlanningError, and the plan is cancelled on the server."""
    ns, _t = new_table(local, {"test.plan.async": "true", "test.plan.async-delay-ms": "4000"}, appends=1)
    cat = rest_catalog(
        proxy.uri, s3, **{"scan-planning-mode": "server", "rest-scan-planning.poll-timeout-ms": "1500"}
    )
    before = len(proxy.paths())
    with pytest.raises(
        ScanPlanningError, match=r"did not complete within configured limits \(timeout=1500 ms"
    ):
        cat.load_table((ns, "t")).scan().to_arrow()
    assert planning_requests(proxy, before) == ["POST plan", "GET plan", "GET plan", "DELETE plan"]


@pytest.mark.parametrize("version", [2, 3])
def test_row_level_writes_read_the_servers_plan(
    proxy: Any, server: Any, local: Any, spark: Any, java: Java, version: int
) -> None:
    """icefloe's own deletes and upserts plan their reads on the server too: position deletes
    (v2) and deletion vectors merged with the file's earlier one (v3) written from the server's
    tasks give the rows Java reads."""
    props = {"format-version": str(version), "write.delete.mode": "merge-on-read"}
    props["write.update.mode"] = "merge-on-read"
    ns, _t = new_table(local, props)
    table = server.load_table((ns, "t"))
    before = len(proxy.paths())
    table.delete("id in (1, 6)")
    table.refresh().delete("id in (2, 7, 16)")  # files holding an earlier delete's rows
    table.refresh().update("id = 3", {"name": "updated"})
    assert planning_requests(proxy, before).count("POST plan") == 3
    got = server.load_table((ns, "t")).scan().to_arrow()
    assert_same_rows(got, spark.sql(f"SELECT * FROM {java.name}.{ns}.t"), context="after icefloe's writes")
    assert sorted(got.column("id").to_pylist()) == [i for i in range(20) if i not in (1, 2, 6, 7, 16)]
    assert dict(zip(got.column("id").to_pylist(), got.column("name").to_pylist()))[3] == "updated"


def test_column_stats_and_storage_credentials_of_a_plan(planning_uri: str, s3: S3Server, local: Any) -> None:
    """`include_column_stats` asks for the stats of the projected columns (`stats-fields`), and
    the `storage-credentials` of a plan answer are registered for their prefix, as a loaded
    table's are (Java gives the scan a FileIO with them)."""
    ns, t = new_table(local, appends=2)
    location = t.location()

    def vend(request: str, result: Json) -> Json:
        if request.endswith("/plan") and result.get("status") == "completed":
            cred = {**s3.properties(), "s3.retry.max-wait-ms": "4321"}
            result["storage-credentials"] = [{"prefix": f"{location}/data", "config": cred}]
        return result

    p = ServerShapeProxy(planning_uri, answer=vend)
    try:
        cat = rest_catalog(p.uri, s3, **{"scan-planning-mode": "server"})
        table = cat.load_table((ns, "t"))
        plain = table.scan(selected_fields=("id",)).plan_files()
        assert all(not task.file.value_counts for task in plain)
        with_stats = table.scan(selected_fields=("id",), include_column_stats=True).plan_files()
        assert all(task.file.value_counts.get(1) == 5 for task in with_stats)
        assert all(task.file.lower_bounds.get(1) for task in with_stats)
        assert _native.file_io_properties(f"{location}/data/x.parquet").get("s3.retry.max-wait-ms") == "4321"
        assert table.scan().to_arrow().num_rows == 10
    finally:
        p.close()
