"""The rewrite of files a delete / overwrite filter partly matches (`icefloe.write.overwrite`):
a first pass over the filter's columns decides, and a partly matching file is streamed
through the writer batch by batch, never held whole."""

from __future__ import annotations

import json
from pathlib import Path

import icefloe
import pyarrow as pa
import pyarrow.compute as pc
from icefloe import _native
from icefloe.expressions import as_row_filter
from icefloe.write.overwrite import RowMatch, kept_rows

ROWS = 200_000


def _table(tmp_path: Path, ids: list[int]) -> icefloe.Table:
    cat = icefloe.load_catalog("t", uri=f"sqlite:///{tmp_path / 'c.db'}", warehouse=str(tmp_path / "wh"))
    cat.create_namespace("db")
    data = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "payload": pa.array([f"row-{i}-" + "x" * (i % 17) for i in ids]),
            "amount": pa.array([i * 0.5 for i in ids]),
        }
    )
    table = cat.create_table("db.t", schema=data.schema)
    table.append(data)
    return cat.load_table("db.t")


def _partial(table: icefloe.Table, row_filter: str) -> tuple[list[str], RowMatch]:
    bound = as_row_filter(row_filter).bind(table.schema())
    whole, partial = _native.plan_row_removal(table.metadata, bound.to_json())
    assert whole == []
    return partial, RowMatch.of(table, bound)


def test_a_partly_matching_file_streams_its_kept_rows_in_bounded_batches(tmp_path: Path) -> None:
    table = _table(tmp_path, list(range(ROWS)))
    partial, match = _partial(table, "id IN (7, 70000, 199999) OR payload = 'row-5-xxxxx'")
    # The first pass reads only the columns the filter names.
    assert [f["name"] for f in json.loads(match.match_json)["fields"]] == ["id", "payload"]
    assert [f["name"] for f in json.loads(match.read_json)["fields"]] == ["id", "payload", "amount"]
    assert len(partial) == 1
    found = kept_rows(partial[0], match)
    assert found is not None
    path, rest = found
    assert path == table.scan().plan_files()[0].file_path
    assert isinstance(rest, pa.RecordBatchReader)
    sizes = [b.num_rows for b in rest]
    assert len(sizes) > 1 and max(sizes) <= 65536, sizes
    assert sum(sizes) == ROWS - 4

    table.delete("id IN (7, 70000, 199999) OR payload = 'row-5-xxxxx'")
    got = icefloe.load_catalog("t", uri=f"sqlite:///{tmp_path / 'c.db'}").load_table("db.t").scan().to_arrow()
    assert got.num_rows == ROWS - 4
    assert pc.sum(pc.is_in(got.column("id"), pa.array([5, 7, 70000, 199999]))).as_py() == 0
    assert got.column("amount").to_pylist()[:6] == [0.0, 0.5, 1.0, 1.5, 2.0, 3.0]


def test_a_file_no_row_or_every_row_of_which_matches_is_not_rewritten(tmp_path: Path) -> None:
    # Stats cannot prove `id != 5` for ids 0..9 without 5 (5 lies between min and max):
    # the file is read, every row matches, and it is removed whole.
    table = _table(tmp_path, [0, 1, 2, 3, 4, 6, 7, 8, 9])
    partial, match = _partial(table, "id != 5")
    found = kept_rows(partial[0], match)
    assert found is not None and found[1] is None
    partial, match = _partial(table, "id = 5")
    assert kept_rows(partial[0], match) is None
    before = table.metadata.current_snapshot_id
    table.delete("id = 5")  # matches nothing: no commit
    assert table.metadata.current_snapshot_id == before
