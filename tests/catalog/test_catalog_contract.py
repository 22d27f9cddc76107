"""The catalog contract, written once and run over every catalog icefloe has: the filesystem
catalog (Iceberg's HadoopCatalog layout), the SQL catalog on sqlite and on a real Postgres
(Iceberg's JdbcCatalog schema), and the REST client against Apache Iceberg's own
RESTCatalogServer (the warehouse on the S3 test server).

Every catalog must: create, list, load and drop namespaces (with PyIceberg's exception names
for the errors); create, load, list and drop tables (rename where the catalog can, a clear
NotSupportedError where it cannot); commit as a compare-and-swap (of two tables loaded from one
version, the second commit is a CommitConflictError that leaves nothing behind); purge a
table's files; and read back what it appended. Catalog-specific behaviour (file layouts, version
hints, JDBC tables, OAuth2, Java interleaving, process races) stays in test_catalog_<kind>.py.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from icefloe import LongType, NestedField, Schema, StringType
from icefloe.catalog import FilesystemCatalog, RestCatalog, SqlCatalog
from icefloe.exceptions import (
    CommitConflictError,
    NamespaceAlreadyExistsError,
    NamespaceNotEmptyError,
    NoSuchNamespaceError,
    NoSuchTableError,
    NotSupportedError,
    TableAlreadyExistsError,
)
from support.catalogs import KINDS, files_under, new_catalog
from support.servers.s3 import S3Server

ARROW_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


def rows(n: int, start: int = 0) -> pa.Table:
    ids = range(start, start + n)
    return pa.table(
        {"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]},
        schema=ARROW_SCHEMA,
    )


@dataclass
class Contract:
    """One catalog under test and what it differs in."""

    kind: str
    catalog: Any
    s3: S3Server | None = None

    @property
    def can_rename(self) -> bool:
        return self.kind != "filesystem"

    @property
    def strict_namespaces(self) -> bool:
        """A table needs an existing namespace and a namespace with children cannot be dropped.
        The REST server's catalog (Iceberg Java's JdbcCatalog without `jdbc.strict-mode`)
        checks neither: that is the server's behaviour, not the client's."""
        return self.kind != "rest"

    @property
    def has_namespace_properties(self) -> bool:
        return self.kind != "filesystem"

    def files_under(self, location: str) -> set[str]:
        """Every file under a table's location (local folder or S3 prefix)."""
        return files_under(location, self.s3)

    def file_exists(self, path: str) -> bool:
        if self.s3 is None:
            return Path(path.removeprefix("file://")).exists()
        parent = path.rsplit("/", 1)[0]
        return path in self.files_under(parent)


@pytest.fixture(params=KINDS)
def contract(request: pytest.FixtureRequest, tmp_path: Path) -> Contract:
    kind = request.param
    s3 = request.getfixturevalue("s3") if kind == "rest" else None
    _props, cat = new_catalog(request, kind, tmp_path, s3=s3)
    expected = {"filesystem": FilesystemCatalog, "rest": RestCatalog}.get(kind, SqlCatalog)
    assert isinstance(cat, expected), (kind, type(cat))
    return Contract(kind, cat, s3)


@pytest.fixture
def ns() -> str:
    """A fresh namespace name (the REST server is shared by the whole run)."""
    return f"ns_{uuid.uuid4().hex[:8]}"


def test_namespaces(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    other = f"{ns}_other"
    assert not cat.namespace_exists(ns)
    cat.create_namespace(ns)
    cat.create_namespace((ns, "inner"))
    cat.create_namespace(other)
    mine = [n for n in cat.list_namespaces() if n[0] in (ns, other)]
    assert sorted(mine) == [(ns,), (other,)]
    assert cat.list_namespaces(ns) == [(ns, "inner")]
    assert cat.namespace_exists(ns) and cat.namespace_exists(f"{ns}.inner")
    assert not cat.namespace_exists(ns[:-1])  # no prefix matching
    with pytest.raises(NamespaceAlreadyExistsError):
        cat.create_namespace(ns)
    cat.create_namespace_if_not_exists(ns)
    if contract.strict_namespaces:
        with pytest.raises(NamespaceNotEmptyError):
            cat.drop_namespace(ns)  # holds ns.inner
    cat.drop_namespace((ns, "inner"))
    cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA)
    with pytest.raises(NamespaceNotEmptyError):
        cat.drop_namespace(ns)  # holds ns.t
    cat.drop_table(f"{ns}.t")
    cat.drop_namespace(ns)
    assert [n for n in cat.list_namespaces() if n[0] in (ns, other)] == [(other,)]
    assert not cat.namespace_exists(ns)
    with pytest.raises(NoSuchNamespaceError):
        cat.drop_namespace(ns)
    with pytest.raises(NoSuchNamespaceError):
        cat.load_namespace_properties(ns)
    with pytest.raises(NoSuchNamespaceError):
        cat.list_tables(ns)


def test_namespace_properties(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    if not contract.has_namespace_properties:
        with pytest.raises(NotSupportedError):
            cat.create_namespace(ns, {"owner": "me"})
        assert not cat.namespace_exists(ns)  # the refusal left nothing behind
        return
    cat.create_namespace(ns, {"owner": "me", "keep": "k"})
    props = cat.load_namespace_properties(ns)
    assert props["owner"] == "me" and props["keep"] == "k"
    summary = cat.update_namespace_properties(ns, removals={"owner", "gone"}, updates={"a": "1"})
    assert summary.removed == ["owner"] and summary.missing == ["gone"] and summary.updated == ["a"]
    props = cat.load_namespace_properties(ns)
    assert "owner" not in props and props["a"] == "1" and props["keep"] == "k"


def test_create_load_list_drop_tables(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    cat.create_namespace(ns)
    t = cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA, properties={"owner": "me"})
    assert t.identifier == (ns, "t")
    assert t.properties["owner"] == "me"
    assert t.current_snapshot() is None and t.snapshots() == []
    assert [f.name for f in t.schema().fields] == ["id", "name"]
    assert t.schema().find_field("id").required and not t.schema().find_field("name").required
    assert t.spec().is_unpartitioned()
    assert contract.file_exists(t.metadata_location)

    schema = Schema(NestedField(1, "a", LongType(), required=True), NestedField(2, "b", StringType()))
    t2 = cat.create_table((ns, "t2"), schema=schema)
    assert t2.schema().fields == schema.fields

    assert cat.list_tables(ns) == [(ns, "t"), (ns, "t2")]
    assert [n for n in cat.list_namespaces() if n[0] == ns] == [(ns,)]  # a table is not a namespace
    assert cat.table_exists(f"{ns}.t") and not cat.table_exists(f"{ns}.nope")
    loaded = cat.load_table(f"{ns}.t")
    assert loaded.metadata_location == t.metadata_location
    assert loaded.metadata.table_uuid == t.metadata.table_uuid

    with pytest.raises(TableAlreadyExistsError):
        cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA)
    assert (
        cat.create_table_if_not_exists(f"{ns}.t", schema=ARROW_SCHEMA).metadata_location
        == t.metadata_location
    )
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns}.nope")
    if contract.strict_namespaces:
        with pytest.raises(NoSuchNamespaceError):
            cat.create_table(f"{ns}_nons.t", schema=ARROW_SCHEMA)

    cat.drop_table(f"{ns}.t2")
    assert cat.list_tables(ns) == [(ns, "t")]
    assert not cat.table_exists(f"{ns}.t2")
    with pytest.raises(NoSuchTableError):
        cat.load_table(f"{ns}.t2")
    with pytest.raises(NoSuchTableError):
        cat.drop_table(f"{ns}.t2")


def test_rename_table(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    cat.create_namespace(ns)
    cat.create_namespace(f"{ns}2")
    t = cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA)
    t.append(rows(3))
    if not contract.can_rename:
        with pytest.raises(NotSupportedError, match="rename"):
            cat.rename_table(f"{ns}.t", f"{ns}2.moved")
        assert cat.list_tables(ns) == [(ns, "t")] and cat.list_tables(f"{ns}2") == []
        assert cat.load_table(f"{ns}.t").scan().count() == 3
        return
    cat.create_table(f"{ns}.t2", schema=ARROW_SCHEMA)
    renamed = cat.rename_table(f"{ns}.t", f"{ns}2.moved")
    assert renamed.identifier == (f"{ns}2", "moved")
    assert renamed.scan().count() == 3
    assert not cat.table_exists(f"{ns}.t")
    assert cat.list_tables(f"{ns}2") == [(f"{ns}2", "moved")]
    assert cat.load_table(f"{ns}2.moved").metadata.table_uuid == t.metadata.table_uuid
    with pytest.raises(TableAlreadyExistsError):
        cat.rename_table(f"{ns}.t2", f"{ns}2.moved")
    with pytest.raises(NoSuchTableError):
        cat.rename_table(f"{ns}.nope", f"{ns}2.x")
    with pytest.raises(NoSuchNamespaceError):
        cat.rename_table(f"{ns}.t2", f"{ns}_nons.x")
    assert cat.list_tables(ns) == [(ns, "t2")]


def test_commit_is_a_compare_and_swap(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA, properties={"commit.retry.num-retries": "0"})
    a = cat.load_table(f"{ns}.t")
    b = cat.load_table(f"{ns}.t")
    a.append(rows(1))
    before = contract.files_under(a.location())
    assert a.metadata_location in before  # the listing sees the table's files
    with pytest.raises(CommitConflictError):
        b.append(rows(1, 100))
    # The loser's data file, manifest, manifest list and metadata file are gone.
    assert contract.files_under(a.location()) == before
    now = cat.load_table(f"{ns}.t")
    assert now.metadata_location == a.metadata_location
    assert len(now.snapshots()) == 1
    assert now.scan().to_arrow().column("id").to_pylist() == [0]


def test_a_lost_race_is_refreshed_and_retried(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    cat.create_namespace(ns)
    cat.create_table(f"{ns}.r", schema=ARROW_SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    a, b = cat.load_table(f"{ns}.r"), cat.load_table(f"{ns}.r")
    a.append(rows(3))
    b.append(rows(3, 3))  # its base is stale: the swap fails, it refreshes and retries
    now = cat.load_table(f"{ns}.r")
    assert sorted(now.scan().to_arrow().column("id").to_pylist()) == list(range(6))
    snaps = now.snapshots()
    assert len(snaps) == 2 and snaps[1].parent_snapshot_id == snaps[0].snapshot_id


def test_purge_deletes_files(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    cat.create_namespace(ns)
    t = cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA)
    t.append(rows(5))
    t.append(rows(5, 5))
    data_files = [task.file.file_path for task in t.scan().plan_files()]
    assert len(data_files) == 2 and all(contract.file_exists(p) for p in data_files)
    assert t.metadata_location in contract.files_under(t.location())
    cat.purge_table(f"{ns}.t")
    assert not cat.table_exists(f"{ns}.t")
    assert contract.files_under(t.location()) == set()
    if contract.s3 is None:
        assert not Path(t.metadata_location).parent.exists()  # the metadata folder too
    with pytest.raises(NoSuchTableError):
        cat.purge_table(f"{ns}.t")


def test_purge_keeps_data_files_when_gc_is_disabled(contract: Contract, ns: str) -> None:
    """With `gc.enabled=false` a purge deletes no data file, as Iceberg Java's
    `CatalogUtil.dropTableData` (HadoopCatalog, JdbcCatalog, the REST server's purge): the
    files may be another table's, as they are here (Java's `snapshot` procedure and
    `add_files` make such tables)."""
    cat = contract.catalog
    cat.create_namespace(ns)
    source = cat.create_table(f"{ns}.src", schema=ARROW_SCHEMA)
    source.append(rows(5))
    shared = [task.file.file_path for task in source.scan().plan_files()]
    t = cat.create_table(f"{ns}.snap", schema=ARROW_SCHEMA, properties={"gc.enabled": "false"})
    t.add_files(shared)
    cat.purge_table(f"{ns}.snap")
    assert not cat.table_exists(f"{ns}.snap")
    assert all(contract.file_exists(p) for p in shared)
    assert cat.load_table(f"{ns}.src").scan().count() == 5


def test_purge_leaves_a_shared_metadata_folder_to_the_other_tables(contract: Contract, ns: str) -> None:
    """Tables may share the folder `write.metadata.path` names (their files have unique
    names): a purge deletes its own files there, not the folder, as Iceberg Java's
    `CatalogUtil.dropTableData`."""
    cat = contract.catalog
    cat.create_namespace(ns)
    shared = cat.create_table(f"{ns}.probe", schema=ARROW_SCHEMA).location() + "_metadata"
    props = {"write.metadata.path": shared}
    cat.create_table(f"{ns}.a", schema=ARROW_SCHEMA, properties=props).append(rows(3))
    before = contract.files_under(shared)
    assert before
    cat.create_table(f"{ns}.b", schema=ARROW_SCHEMA, properties=props).append(rows(2, 3))
    assert contract.files_under(shared) > before
    cat.purge_table(f"{ns}.b")
    assert contract.files_under(shared) == before
    assert cat.load_table(f"{ns}.a").scan().count() == 3


def test_append_and_scan_round_trip(contract: Contract, ns: str) -> None:
    cat = contract.catalog
    cat.create_namespace(ns)
    t = cat.create_table(f"{ns}.t", schema=ARROW_SCHEMA)
    t.append(rows(3))
    first = t.current_snapshot()
    assert first is not None
    t.append(rows(2, 3))
    again = cat.load_table(f"{ns}.t")
    assert again.metadata_location == t.metadata_location
    got = again.scan().to_arrow().sort_by("id")
    assert got.schema == ARROW_SCHEMA
    assert got.to_pydict() == rows(5).to_pydict()
    snaps = again.snapshots()
    assert [s.summary["operation"] for s in snaps] == ["append", "append"]
    assert snaps[0].snapshot_id == first.snapshot_id and snaps[1].parent_snapshot_id == first.snapshot_id
    assert again.current_snapshot().snapshot_id == snaps[1].snapshot_id
    assert again.scan(snapshot_id=first.snapshot_id).to_arrow().column("id").to_pylist() == [0, 1, 2]
