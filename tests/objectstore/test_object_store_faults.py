"""Tables on S3 through a faulty network: a proxy (tests/support/servers/fault_proxy.py) in front of
the S3 server fails (503 before / 500 after the fact), delays, or cuts part way through the
answer 5% of the requests at random, during appends (in process and on Spark), reads and a
merge-on-read delete.

- Every read that succeeds returns exactly the rows committed; every failure is an icefloe
  exception naming the object (an s3:// location) and never showing the secret key.
- Afterwards, without faults: every file any snapshot references (data and delete files,
  manifests, manifest lists) exists with its recorded size, and no object under the data or
  metadata folder is left that no snapshot references (an aborted write leaves nothing).
- A write whose PUTs all fail (from the start, after its data files, after its manifest)
  raises naming an object and leaves no object behind.
"""

from __future__ import annotations

import io
import json
import uuid
import zlib
from collections.abc import Iterator
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe import _io, _native
from icefloe.catalog import FilesystemCatalog
from icefloe.exceptions import CommitStateUnknownException, IcefloeError
from icefloe.scan import FileScanTask
from icefloe.table import Table
from support.catalogs import REGION_ARROW as ARROW
from support.catalogs import REGIONS, Row
from support.servers.fault_proxy import KINDS, FaultProxy
from support.servers.s3 import BUCKET, SECRET_KEY, S3Server


def rows(ids: range) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "name": [f"n{i}" for i in ids],
            "region": [REGIONS[i % 3] for i in ids],
        },
        schema=ARROW,
    )


def as_rows(t: pa.Table) -> list[Row]:
    cols = [t.column(c).to_pylist() for c in ("id", "name", "region")]
    return sorted(zip(*cols))


@pytest.fixture
def proxy(s3: S3Server) -> Iterator[FaultProxy]:
    with FaultProxy(s3.endpoint, rate=0.05, seed=20260514) as p:
        yield p


def catalog_through(proxy: FaultProxy, s3: S3Server, **extra: str) -> FilesystemCatalog:
    props = dict(s3.properties(), **{"s3.endpoint": proxy.endpoint}, **extra)
    warehouse = f"s3://{BUCKET}/faults-{uuid.uuid4().hex[:10]}/wh"
    cat = icefloe.load_catalog(
        f"faults{uuid.uuid4().hex[:6]}", type="filesystem", warehouse=warehouse, **props
    )
    assert isinstance(cat, FilesystemCatalog)
    return cat


def check_error(e: BaseException, failures: list[str]) -> None:
    """A failure under faults: an icefloe exception naming the object, with no secret."""
    text = str(e)
    assert isinstance(e, IcefloeError), repr(e)
    assert "s3://" in text, f"the error names no object: {text}"
    assert SECRET_KEY not in text
    failures.append(f"{type(e).__name__}: {text[:300]}")


def new_table(cat: FilesystemCatalog, name: str) -> Table:
    spec = icefloe.partitioning.PartitionSpec(
        icefloe.partitioning.PartitionField(3, 1000, "identity", "region")
    )
    for _ in range(5):  # even creating may meet a fault it cannot see past
        try:
            if not cat.namespace_exists("db"):
                cat.create_namespace("db")
            if not cat.table_exists(f"db.{name}"):
                cat.create_table(
                    f"db.{name}",
                    schema=ARROW,
                    partition_spec=spec,
                    properties={
                        "write.delete.mode": "merge-on-read",
                        "commit.manifest.min-count-to-merge": "4",
                    },
                )
            return cat.load_table(f"db.{name}")
        except IcefloeError as e:
            check_error(e, [])
    raise AssertionError("could not create the table through the faults")


class Expected:
    """The rows committed so far, kept in step with what each operation reports."""

    def __init__(self) -> None:
        self.rows: dict[int, Row] = {}
        self.failures: list[str] = []
        self.reads = 0

    def append(self, cat: FilesystemCatalog, name: str, batch: int, data: pa.Table, write: Any) -> None:
        try:
            write(data, {"batch": str(batch)})
        except CommitStateUnknownException as e:
            check_error(e, self.failures)
            if not landed(cat, name, batch):
                return
        except IcefloeError as e:
            check_error(e, self.failures)
            return
        self.rows.update((r[0], r) for r in as_rows(data))

    def read(self, cat: FilesystemCatalog, name: str, read: Any = None) -> None:
        try:
            t = cat.load_table(f"db.{name}")
            got = as_rows(t.scan().to_arrow() if read is None else read(t))
        except IcefloeError as e:
            check_error(e, self.failures)
            return
        assert got == sorted(self.rows.values())
        self.reads += 1


def landed(cat: FilesystemCatalog, name: str, batch: int) -> bool:
    """Whether the append marked `batch` made it (after CommitStateUnknownException)."""
    t = cat.load_table(f"db.{name}")
    return any(s.summary.additional_properties.get("batch") == str(batch) for s in t.snapshots())


# ---- a minimal Avro object-container reader (manifest lists) ----
def _long(b: io.BytesIO) -> int:
    shift = n = 0
    while True:
        byte = b.read(1)[0]
        n |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (n >> 1) ^ -(n & 1)


def _decode(schema: Any, b: io.BytesIO, names: dict[str, Any]) -> Any:
    if isinstance(schema, list):  # union
        return _decode(schema[_long(b)], b, names)
    if isinstance(schema, str):
        if schema in names:
            return _decode(names[schema], b, names)
        schema = {"type": schema}
    t = schema["type"]
    if t == "null":
        return None
    if t == "boolean":
        return b.read(1) == b"\x01"
    if t in ("int", "long"):
        return _long(b)
    if t in ("float", "double"):
        return b.read(4 if t == "float" else 8)
    if t in ("bytes", "string"):
        raw = b.read(_long(b))
        return raw.decode() if t == "string" else raw
    if t == "fixed":
        return b.read(schema["size"])
    if t == "enum":
        return schema["symbols"][_long(b)]
    if t in ("array", "map"):
        out: list[Any] = []
        while (n := _long(b)) != 0:
            if n < 0:
                n = -n
                _long(b)  # block size
            for _ in range(n):
                key = b.read(_long(b)).decode() if t == "map" else None
                item = _decode(schema["values" if t == "map" else "items"], b, names)
                out.append((key, item) if t == "map" else item)
        return dict(out) if t == "map" else out
    if t == "record":
        names[schema["name"]] = schema
        return {f["name"]: _decode(f["type"], b, names) for f in schema["fields"]}
    if isinstance(t, (dict, list)) or t in names:
        return _decode(t, b, names)
    raise AssertionError(f"unexpected Avro type {t!r}")


def avro_records(data: bytes) -> list[dict[str, Any]]:
    b = io.BytesIO(data)
    assert b.read(4) == b"Obj\x01"
    meta = _decode({"type": "map", "values": "bytes"}, b, {})
    schema = json.loads(meta["avro.schema"])
    codec = meta.get("avro.codec", b"null")
    sync = b.read(16)
    out = []
    while b.tell() < len(data):
        count, size = _long(b), _long(b)
        block = b.read(size)
        assert b.read(16) == sync
        if codec == b"deflate":
            block = zlib.decompress(block, -15)
        else:
            assert codec == b"null", codec
        bb = io.BytesIO(block)
        out += [_decode(schema, bb, {}) for _ in range(count)]
    return out


def check_files(table: Table) -> dict[str, int]:
    """Every file a snapshot references exists with its recorded size; no data or metadata
    object is left that none references. Returns counts of what was checked."""
    objects = dict(_io.list_files(table.location()))
    referenced: set[str] = set()
    checked = {"manifest lists": 0, "manifests": 0, "data files": 0, "delete files": 0}
    for snap in table.snapshots():
        assert snap.manifest_list in objects, f"missing manifest list {snap.manifest_list}"
        referenced.add(snap.manifest_list)
        checked["manifest lists"] += 1
        for m in avro_records(_io.read_bytes(snap.manifest_list)):
            path, length = m["manifest_path"], m["manifest_length"]
            assert objects.get(path) == length, f"manifest {path}: {objects.get(path)} bytes, not {length}"
            referenced.add(path)
            checked["manifests"] += 1
        for text in _native.plan_files(table.metadata, snap.snapshot_id):
            task = FileScanTask(text)
            for f, kind in [(task.file, "data files")] + [(d, "delete files") for d in task.delete_files]:
                size = objects.get(f.file_path)
                assert size == f.file_size_in_bytes, (
                    f"{f.file_path}: {size} bytes, not {f.file_size_in_bytes}"
                )
                if f.file_path not in referenced:
                    checked[kind] += 1
                referenced.add(f.file_path)
    data = table.location().rstrip("/") + "/data/"  # the default layout
    meta = table.location().rstrip("/") + "/metadata/"
    left = [p for p in objects if p.startswith(data) and p not in referenced]
    assert not left, f"objects no snapshot references: {left}"
    left_avro = [p for p in objects if p.startswith(meta) and p.endswith(".avro") and p not in referenced]
    assert not left_avro, f"manifests no snapshot references: {left_avro}"
    return checked


def test_appends_reads_and_deletes_through_faults(proxy: FaultProxy, s3: S3Server) -> None:
    cat = catalog_through(proxy, s3, **{"s3.retry.max-wait-ms": "2000"})
    t = new_table(cat, "t")
    exp = Expected()
    for k in range(18):
        t = cat.load_table("db.t")
        exp.append(cat, "t", k, rows(range(k * 40, k * 40 + 40)), lambda d, p, t=t: t.append(d, p))
        if k % 3 == 2:
            exp.read(cat, "t")
    # A merge-on-read delete of rows spread over many files (position deletes).
    try:
        cat.load_table("db.t").delete("id >= 30 and id < 410")
        exp.rows = {i: r for i, r in exp.rows.items() if not 30 <= i < 410}
    except IcefloeError as e:
        check_error(e, exp.failures)
    for k in range(18, 21):
        t = cat.load_table("db.t")
        exp.append(cat, "t", k, rows(range(k * 40, k * 40 + 40)), lambda d, p, t=t: t.append(d, p))
        exp.read(cat, "t")
    faults = proxy.faults()
    with proxy.faults_off():
        exp.read(cat, "t")
        t = cat.load_table("db.t")
        assert any(s.summary.operation == "delete" for s in t.snapshots()), "the delete did not commit"
        checked = check_files(t)
    print(f"\nfaults {faults} of {proxy.counts['requests']} requests; {dict(proxy.faults_by_method)}")
    print(f"reads checked {exp.reads}; files checked {checked}; failures {exp.failures}")
    assert all(faults[k] > 0 for k in KINDS), faults
    assert exp.reads >= 6 and len(exp.rows) > 300
    assert checked["delete files"] > 0


@pytest.mark.spark
def test_spark_appends_and_reads_through_faults(spark: Any, proxy: FaultProxy, s3: S3Server) -> None:
    import icefloe.spark as ispark

    cat = catalog_through(proxy, s3, **{"s3.retry.max-wait-ms": "2000"})
    new_table(cat, "s")
    exp = Expected()
    for k in range(3):
        df = spark.createDataFrame(rows(range(k * 100, k * 100 + 100)).to_pandas()).repartition(2)
        t = cat.load_table("db.s")
        exp.append(
            cat,
            "s",
            k,
            rows(range(k * 100, k * 100 + 100)),
            lambda _d, p, t=t, df=df: ispark.append(df, t, p),
        )
        exp.read(cat, "s")
    exp.read(cat, "s", read=lambda t: pa.Table.from_pandas(ispark.read(spark, t).toPandas()))
    faults = proxy.faults()
    with proxy.faults_off():
        exp.read(cat, "s")
        checked = check_files(cat.load_table("db.s"))
    print(f"\nfaults {faults} of {proxy.counts['requests']} requests; files checked {checked}")
    print(f"failures {exp.failures}")
    assert sum(faults.values()) > 0
    assert exp.reads >= 3 and len(exp.rows) >= 200


@pytest.mark.parametrize("after", [0, 3, 5])
def test_write_whose_puts_fail_leaves_nothing(proxy: FaultProxy, s3: S3Server, after: int) -> None:
    """All PUTs fail (503) from the `after`-th of the write on: before any data file, after
    the data files (the manifest fails), after the manifest and manifest list (the commit's
    conditional create fails)."""
    proxy.rate = 0.0
    cat = catalog_through(proxy, s3, **{"s3.retry.num-retries": "2", "s3.retry.min-wait-ms": "10"})
    t = new_table(cat, "w")
    t.append(rows(range(0, 30)))
    before = dict(_io.list_files(t.location()))
    with proxy.fail_window("PUT", after=after), pytest.raises(IcefloeError) as e:
        t.append(rows(range(30, 60)))  # three data files (one per region)
    text = str(e.value)
    assert "s3://" in text and SECRET_KEY not in text, text
    assert proxy.counts["window"] > 0
    after_objects = dict(_io.list_files(t.location()))
    new = sorted(set(after_objects) - set(before))
    assert new == [], f"the failed write left {new}"
    t = cat.load_table("db.w")
    assert as_rows(t.scan().to_arrow()) == as_rows(rows(range(0, 30)))
    check_files(t)


# ---- one lost answer at a time, where object_store alone gets it wrong ----
@pytest.mark.parametrize("fault", ["cut", "error_500"])
def test_commit_whose_answer_is_lost_commits_once(proxy: FaultProxy, s3: S3Server, fault: str) -> None:
    """The commit's conditional PUT takes effect, its answer is lost; the client retries and
    meets its own object (412). That is this commit's success, not a lost race: committing
    again would add the rows twice and delete files the first commit references."""
    proxy.rate = 0.0
    cat = catalog_through(proxy, s3)
    t = new_table(cat, "c")
    t.append(rows(range(0, 30)))
    proxy.inject(fault, "PUT", path_contains=".metadata.json", header="If-None-Match")
    t.append(rows(range(30, 60)))
    assert proxy.counts[f"injected {fault}"] == 1
    t = cat.load_table("db.c")
    assert len(t.snapshots()) == 2
    assert as_rows(t.scan().to_arrow()) == as_rows(rows(range(0, 60)))
    check_files(t)


def test_listing_cut_short_is_resumed(proxy: FaultProxy, s3: S3Server) -> None:
    proxy.rate = 0.0
    cat = catalog_through(proxy, s3)
    t = new_table(cat, "l")
    for k in range(3):
        t.append(rows(range(k * 10, k * 10 + 10)))
    whole = _io.list_files(t.location())
    proxy.inject("cut", "GET", path_contains="list-type=2", count=2)
    assert _io.list_files(t.location()) == whole
    assert proxy.counts["injected cut"] == 2


def test_abort_whose_delete_answers_are_lost_leaves_nothing(proxy: FaultProxy, s3: S3Server) -> None:
    """A write fails after some of its files were uploaded; the answers of the deletes that
    abort it are lost (they took effect or not): nothing of it may remain."""
    proxy.rate = 0.0
    cat = catalog_through(proxy, s3)
    new_table(cat, "x")  # the namespace
    t = cat.create_table("db.a", schema=ARROW, properties={"write.target-file-size-bytes": "2048"})

    def batches() -> Iterator[pa.RecordBatch]:
        yield from rows(range(6000)).to_batches(max_chunksize=300)
        raise ValueError("the source failed half way")

    puts = proxy.counts["forwarded"]
    proxy.inject("cut", "POST", path_contains="?delete", count=6)
    with pytest.raises(Exception, match="half way"):
        t.append(pa.RecordBatchReader.from_batches(ARROW, batches()))
    assert proxy.counts["forwarded"] - puts > 6, "no file was uploaded before the failure"
    assert proxy.counts["injected cut"] == 6
    assert _io.list_files(f"{t.location()}/data") == []


def test_large_file_whose_completion_answer_is_lost(proxy: FaultProxy, s3: S3Server) -> None:
    """A multipart upload (a file past 8 MiB) whose CompleteMultipartUpload took effect but
    lost its answer: the retry finds no upload, the object is there, the write stands."""
    import os

    proxy.rate = 0.0
    cat = catalog_through(proxy, s3)
    new_table(cat, "x")  # the namespace
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("blob", pa.binary())])
    t = cat.create_table("db.big", schema=schema)
    data = pa.table({"id": pa.array([1, 2], pa.int64()), "blob": [os.urandom(5 << 20), os.urandom(5 << 20)]})
    proxy.inject("cut", "POST", path_contains="uploadId=")
    t.append(data)
    assert proxy.counts["injected cut"] == 1
    t = cat.load_table("db.big")
    assert t.scan().to_arrow().column("blob").to_pylist() == data.column("blob").to_pylist()
    check_files(t)
