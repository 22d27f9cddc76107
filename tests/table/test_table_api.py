"""Table API in process, on both catalogs: append, scan, time travel, validation, cleanup."""

from __future__ import annotations

import os
from pathlib import Path

import icefloe
import pyarrow as pa
import pytest
from icefloe import (
    IdentityTransform,
    Operation,
    PartitionField,
    PartitionSpec,
    Table,
)
from icefloe.catalog import Catalog
from icefloe.exceptions import CommitConflictError, CommitStateUnknownException, ValidationError
from icefloe.expressions import And, EqualTo, GreaterThan, In, IsNull, LessThan, NotNull

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("score", pa.float64()),
        pa.field("category", pa.string()),
    ]
)


def batch(ids: range, category: str = "a") -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "name": [None if i % 5 == 0 else f"name-{i}" for i in ids],
            "score": [i / 2 for i in ids],
            "category": [category] * len(ids),
        },
        schema=SCHEMA,
    )


@pytest.fixture(params=["filesystem", "sql"])
def any_catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    if request.param == "filesystem":
        cat = icefloe.load_catalog("fs", warehouse=str(tmp_path / "wh"))
    else:
        cat = icefloe.load_catalog(
            "sql", type="sql", uri=f"sqlite:///{tmp_path}/cat.db", warehouse=str(tmp_path / "wh")
        )
    cat.create_namespace("db")
    return cat


@pytest.fixture
def table(any_catalog: Catalog) -> Table:
    return any_catalog.create_table("db.t", schema=SCHEMA)


def data_files_on_disk(t: Table) -> list[str]:
    root = Path(t.location()) / "data"
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if not f.startswith("."))


def sorted_ids(t: pa.Table) -> list[int]:
    return sorted(t.column("id").to_pylist())


def test_append_and_scan_round_trip(table: Table, any_catalog: Catalog) -> None:
    table.append(batch(range(0, 10)))
    table.append(batch(range(10, 25), "b").to_batches(max_chunksize=4))  # a list of batches
    table.append(batch(range(25, 30), "c").to_reader())
    out = table.scan().to_arrow()
    assert out.num_rows == 30
    assert out.schema.names == ["id", "name", "score", "category"]
    assert out.sort_by("id").equals(
        pa.concat_tables([batch(range(0, 10)), batch(range(10, 25), "b"), batch(range(25, 30), "c")])
        .cast(out.schema)
        .sort_by("id")
    )

    snaps = table.snapshots()
    assert len(snaps) == 3
    assert [s.sequence_number for s in snaps] == [1, 2, 3]
    assert snaps[0].parent_snapshot_id is None
    assert [s.parent_snapshot_id for s in snaps[1:]] == [snaps[0].snapshot_id, snaps[1].snapshot_id]
    current = table.current_snapshot()
    assert current is not None and current.snapshot_id == snaps[-1].snapshot_id
    assert current.summary.operation == Operation.APPEND and current.summary["operation"] == "append"
    assert current.summary["added-records"] == "5"
    assert current.summary["total-records"] == "30"
    assert current.manifest_list and Path(current.manifest_list.replace("file://", "")).exists()
    assert current.schema_id == 0
    assert table.snapshot_by_id(snaps[0].snapshot_id) == snaps[0]
    assert table.snapshot_by_id(12345) is None
    assert [h.snapshot_id for h in table.history()] == [s.snapshot_id for s in snaps]

    # Another process's view of the table sees the same thing.
    loaded = any_catalog.load_table("db.t")
    assert loaded.metadata_location == table.metadata_location
    assert loaded.scan().count() == 30


def test_time_travel(table: Table) -> None:
    table.append(batch(range(0, 3)))
    first = table.current_snapshot()
    table.append(batch(range(3, 8)))
    assert first is not None
    assert sorted_ids(table.scan(snapshot_id=first.snapshot_id).to_arrow()) == [0, 1, 2]
    assert table.scan(snapshot_id=first.snapshot_id).count() == 3
    assert table.scan().count() == 8
    with pytest.raises(ValidationError, match="424242"):
        table.scan(snapshot_id=424242)


def test_selected_fields_and_row_filter(table: Table) -> None:
    table.append(batch(range(0, 20)))
    table.append(batch(range(20, 40), "b"))

    picked = table.scan(selected_fields=("name", "id")).to_arrow()
    assert picked.schema.names == ["name", "id"]  # the order asked for, as Spark's select
    assert picked.num_rows == 40

    # The filter reads a column that is not selected; it is dropped from the output.
    out = table.scan(
        row_filter=And(GreaterThan("score", 5.0), EqualTo("category", "b")), selected_fields=("id",)
    ).to_arrow()
    assert out.schema.names == ["id"]
    assert sorted_ids(out) == list(range(20, 40))

    assert sorted_ids(table.scan(row_filter=IsNull("name")).to_arrow()) == [0, 5, 10, 15, 20, 25, 30, 35]
    assert table.scan(row_filter=NotNull("name")).count() == 32
    assert table.scan(row_filter=In("id", [1, 21, 99])).count() == 2
    assert table.scan(row_filter=LessThan("id", 0)).to_arrow().num_rows == 0
    assert table.scan(row_filter=EqualTo("ID", 3), case_sensitive=False).count() == 1

    # The scan keeps the filter bound: exact names and typed literals, ready for executors.
    scan = table.scan(row_filter=EqualTo("ID", 3), case_sensitive=False)
    assert scan.row_filter.referenced_columns() == {"id"}
    assert batch(range(5)).filter(scan.row_filter.to_pyarrow()).num_rows == 1

    with pytest.raises(ValidationError, match="'nope'"):
        table.scan(selected_fields=("id", "nope")).to_arrow()
    with pytest.raises(ValidationError, match="'nope'"):
        table.scan(row_filter=EqualTo("nope", 1))
    assert table.scan(row_filter="id > 3").row_filter.referenced_columns() == {"id"}


def test_limit_batches_and_tasks(table: Table) -> None:
    table.append(batch(range(0, 10)))
    table.append(batch(range(10, 20)))
    assert table.scan(limit=5).to_arrow().num_rows == 5
    assert table.scan(limit=15).to_arrow().num_rows == 15
    assert table.scan(limit=0).to_arrow().num_rows == 0
    assert table.scan(limit=7).count() == 7

    reader = table.scan(selected_fields=("id",), row_filter=GreaterThan("id", 4)).to_batches()
    assert isinstance(reader, pa.RecordBatchReader)
    assert sorted_ids(reader.read_all()) == list(range(5, 20))
    assert table.scan(limit=12).to_batches().read_all().num_rows == 12

    tasks = table.scan().plan_files()
    assert len(tasks) == 2
    for task in tasks:
        assert task.file.record_count == 10
        assert task.file.file_path.endswith(".parquet")
        assert task.file.file_format == "PARQUET"
        assert task.file.file_size_in_bytes == os.path.getsize(task.file.file_path.replace("file://", ""))
        assert task.file.partition == []
        assert task.start == 0 and task.length > 0
        assert '"file"' in task.to_json()

    df = table.scan(selected_fields=("id",)).to_pandas()
    assert len(df) == 20


def test_empty_table_scan(table: Table) -> None:
    assert table.scan().plan_files() == []
    out = table.scan().to_arrow()
    assert out.num_rows == 0 and out.schema.names == ["id", "name", "score", "category"]
    assert table.scan().count() == 0
    assert table.scan().to_batches().read_all().num_rows == 0


def test_identity_partitioned_table(any_catalog: Catalog) -> None:
    cat_id = 4  # field ids are assigned 1..n in schema order
    spec = PartitionSpec(PartitionField(cat_id, 1000, IdentityTransform(), "category"))
    t = any_catalog.create_table("db.p", schema=SCHEMA, partition_spec=spec)
    assert t.spec() == spec
    t.append(pa.concat_tables([batch(range(0, 6), "x"), batch(range(6, 10), "y")]))
    tasks = t.scan().plan_files()
    assert sorted(task.file.partition[0] for task in tasks) == ["x", "y"]
    assert sorted(task.file.record_count for task in tasks) == [4, 6]
    out = t.scan(row_filter=EqualTo("category", "y")).to_arrow()
    assert sorted_ids(out) == [6, 7, 8, 9]
    assert set(out.column("category").to_pylist()) == {"y"}


def test_invalid_appends_name_each_column_and_leave_nothing(table: Table) -> None:
    table.append(batch(range(0, 2)))
    before_snapshots = len(table.snapshots())
    before_files = data_files_on_disk(table)
    before_location = table.metadata_location

    missing_required = pa.table({"name": ["x"], "score": [1.0], "category": ["a"]})
    with pytest.raises(ValidationError, match=r"\bid\b"):
        table.append(missing_required)

    wrong_types = pa.table(
        {
            "id": pa.array([1], pa.int64()),
            "name": pa.array([1], pa.int64()),
            "score": ["x"],
            "category": ["a"],
        }
    )
    with pytest.raises(ValidationError) as err:
        table.append(wrong_types)
    assert "name" in str(err.value) and "score" in str(err.value)

    unknown = batch(range(1)).append_column("extra", pa.array([1]))
    with pytest.raises(ValidationError, match="extra"):
        table.append(unknown)

    nullable_schema = SCHEMA.set(0, pa.field("id", pa.int64(), nullable=True))
    null_in_required = pa.table(
        {
            "id": pa.array([1, None, 3], pa.int64()),
            "name": ["a", "b", "c"],
            "score": [1.0, 2.0, 3.0],
            "category": ["a"] * 3,
        },
        schema=nullable_schema,
    )
    with pytest.raises(ValidationError, match="id"):
        table.append(null_in_required)

    with pytest.raises(ValidationError):
        table.append("not arrow")  # type: ignore[arg-type]

    table.refresh()
    assert len(table.snapshots()) == before_snapshots
    assert table.metadata_location == before_location
    assert data_files_on_disk(table) == before_files


def test_failed_commit_deletes_data_and_commit_files(any_catalog: Catalog) -> None:
    any_catalog.create_table("db.c", schema=SCHEMA, properties={"commit.retry.num-retries": "0"})
    a = any_catalog.load_table("db.c")
    b = any_catalog.load_table("db.c")
    a.append(batch(range(3)))
    meta_dir = Path(a.metadata_location.replace("file://", "")).parent
    meta_before = sorted(p.name for p in meta_dir.iterdir() if not p.name.endswith(".metadata.json"))
    with pytest.raises(CommitConflictError):
        b.append(batch(range(3, 6)))
    assert data_files_on_disk(a) == sorted(t.file.file_path for t in a.scan().plan_files())
    meta_after = sorted(p.name for p in meta_dir.iterdir() if not p.name.endswith(".metadata.json"))
    assert meta_after == meta_before
    # The winner's rows only.
    assert sorted_ids(any_catalog.load_table("db.c").scan().to_arrow()) == [0, 1, 2]


def test_conflicting_append_retries(any_catalog: Catalog) -> None:
    any_catalog.create_table("db.r", schema=SCHEMA, properties={"commit.retry.min-wait-ms": "1"})
    a = any_catalog.load_table("db.r")
    b = any_catalog.load_table("db.r")
    a.append(batch(range(0, 3)))
    b.append(batch(range(3, 6)))  # stale base: conflicts once, refreshes, retries
    assert b.current_snapshot() is not None
    assert len(b.snapshots()) == 2
    assert sorted_ids(any_catalog.load_table("db.r").scan().to_arrow()) == list(range(6))
    snaps = b.snapshots()
    assert snaps[1].parent_snapshot_id == snaps[0].snapshot_id
    assert [s.sequence_number for s in snaps] == [1, 2]


def test_write_hooks_for_spark(table: Table) -> None:
    from icefloe import _native

    write_id = table._new_write_id()
    assert len(write_id) == 32
    descriptors = _native.write_data_files(table.metadata, batch(range(4)).to_reader(), write_id, 7)
    assert descriptors
    written = data_files_on_disk(table)
    assert written and all(write_id in p for p in written)
    # A file some failed task wrote that the driver never heard of:
    stray = Path(written[0]).with_name(f"00099-{write_id}-00000.parquet")
    stray.write_bytes(b"partial")
    snap = table._commit_data_files(descriptors, {"app": "test"})
    assert snap is not None and snap.summary["app"] == "test"
    assert table.scan().count() == 4
    deleted = table._abort_write(write_id)
    assert str(stray) in deleted and not stray.exists()
    assert table._commit_data_files([]) == snap  # nothing to commit, no empty snapshot


@pytest.mark.parametrize("committing", [False, True])
@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt, CommitStateUnknownException])
def test_the_write_scope_discards_a_failed_write_as_its_phase_allows(
    table: Table, committing: bool, error: type[BaseException]
) -> None:
    """`_pending_write.abort_on_failure`, the scope every write aborts through: while files
    are written, any error (an interrupt too) deletes the write's files, named or only
    carrying its write id; around a commit, an interrupt or an unknown outcome keeps them
    (the catalog swap may have happened), an ordinary error deletes them."""
    from icefloe import _native
    from icefloe.write import pending as _pending_write

    write_id = _pending_write.new_write_id()
    named = list(_native.write_data_files(table.metadata, batch(range(4)).to_reader(), write_id, 7))
    unnamed = _native.write_data_files(table.metadata, batch(range(4, 8)).to_reader(), write_id, 8)
    assert named and unnamed and len([p for p in data_files_on_disk(table) if write_id in p]) == 2
    with pytest.raises(error):
        with _pending_write.abort_on_failure(table, write_id, named, committing=committing):
            raise error("failed")
    kept = committing and error is not ValueError
    assert len([p for p in data_files_on_disk(table) if write_id in p]) == (2 if kept else 0)


def test_table_accessors(any_catalog: Catalog) -> None:
    t = any_catalog.create_table("db.acc", schema=SCHEMA, properties={"format-version": "2", "k": "v"})
    assert t.format_version == 2
    assert t.properties["k"] == "v"
    assert "format-version" not in t.properties
    assert list(t.schemas()) == [0]
    assert list(t.specs()) == [0]
    assert t.name() == ("db", "acc")
    assert "db.acc" in repr(t)


def test_retry_policy() -> None:
    from icefloe.commit.retry import RetryPolicy

    p = RetryPolicy.from_properties({})
    assert (p.num_retries, p.min_wait_ms, p.max_wait_ms, p.total_timeout_ms) == (4, 100, 60_000, 1_800_000)
    p = RetryPolicy.from_properties(
        {"commit.retry.num-retries": "7", "commit.retry.min-wait-ms": "10", "commit.retry.max-wait-ms": "50"}
    )
    assert p.num_retries == 7
    for retry in range(1, 10):
        base = min(10 * 2 ** (retry - 1), 50)
        assert base * 0.5 <= p.wait_ms(retry) <= min(base * 1.5, 50)
    assert RetryPolicy.from_properties({"commit.retry.num-retries": "x"}).num_retries == 4


def test_total_timeout_stops_retrying(any_catalog: Catalog) -> None:
    any_catalog.create_table(
        "db.to",
        schema=SCHEMA,
        properties={"commit.retry.num-retries": "100", "commit.retry.total-timeout-ms": "0"},
    )
    a = any_catalog.load_table("db.to")
    b = any_catalog.load_table("db.to")
    a.append(batch(range(2)))
    with pytest.raises(CommitConflictError):
        b.append(batch(range(2, 4)))
    assert any_catalog.load_table("db.to").scan().count() == 2
