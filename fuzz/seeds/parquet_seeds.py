"""Writes the seed inputs of the `parquet_read` and `delete_file` fuzz targets.

The data file of every `parquet_read` seed is Iceberg Java's all-types golden file
(`tests/data/golden/all_types.parquet`); the position-delete seeds are Java's golden
delete files and files naming the target's data file (`memory://fuzz/data/data.parquet`);
the equality-delete seeds carry Iceberg field ids for each key set the targets use.
Framing (see `rust/fuzz.rs`): a flags byte, the data file and the position-delete file
each behind a little-endian u32 length, then the equality-delete file.

Run from the repository root: `.venv/bin/python fuzz/seeds/parquet_seeds.py`.
"""

from __future__ import annotations

import io
import struct
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

GOLDEN = Path("tests/data/golden")
CORPUS = Path("fuzz/corpus")
DATA_FILE = "memory://fuzz/data/data.parquet"


def field(name: str, typ: pa.DataType, fid: int, nullable: bool = True) -> pa.Field:
    return pa.field(name, typ, nullable=nullable, metadata={"PARQUET:field_id": str(fid)})


def parquet(table: pa.Table, **kwargs: object) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, **kwargs)  # type: ignore[arg-type]
    return buf.getvalue()


def position_deletes(positions: list[int]) -> bytes:
    schema = pa.schema([field("file_path", pa.string(), 2147483546, False), field("pos", pa.int64(), 2147483545, False)])
    return parquet(pa.table({"file_path": [DATA_FILE] * len(positions), "pos": positions}, schema=schema))


def equality_deletes(key: str) -> bytes:
    cols = {
        "l": (pa.int64(), 3, [1, None, 9223372036854775807]),
        "s": (pa.string(), 11, ["a", "", None]),
        "i": (pa.int32(), 2, [1, 0, None]),
        "dec9": (pa.decimal128(9, 2), 6, [Decimal("14.20"), None]),
    }
    names = ["i", "s"] if key == "i,s" else [key]
    n = min(len(cols[k][2]) for k in names)
    schema = pa.schema([field(k, cols[k][0], cols[k][1]) for k in names])
    return parquet(pa.table({k: cols[k][2][:n] for k in names}, schema=schema), compression="zstd")


def frame(flags: int, data: bytes, pos: bytes, eq: bytes) -> bytes:
    return bytes([flags]) + struct.pack("<I", len(data)) + data + struct.pack("<I", len(pos)) + pos + eq


def main() -> None:
    data = (GOLDEN / "all_types.parquet").read_bytes()
    java_pos = (GOLDEN / "v2_deletes_position_delete_1_1.parquet").read_bytes()
    pos = position_deletes([0, 2, 4])
    keys = ["l", "s", "i,s", "dec9"]  # EQUALITY_IDS order: flags bits 2-3
    seeds: dict[str, bytes] = {"plain": frame(0, data, b"", b"")}
    for i, key in enumerate(keys):
        eq = equality_deletes(key)
        seeds[f"pos_eq_{key.replace(',', '_')}"] = frame(1 | 2 | (i << 2), data, pos, eq)
        seeds[f"eq_only_deleted_{key.replace(',', '_')}"] = frame(2 | (i << 2) | 128, data, b"", eq)
    seeds["java_pos_residual"] = frame(1 | 16, data, java_pos, b"")
    seeds["pos_projected"] = frame(1 | 64, data, pos, b"")
    seeds["split_projected"] = frame(1 | 32 | 64, data, pos, b"")
    seeds["residual_projected"] = frame(2 | 16 | 64, data, b"", equality_deletes("l"))
    out = CORPUS / "parquet_read"
    out.mkdir(parents=True, exist_ok=True)
    for name, blob in seeds.items():
        (out / name).write_bytes(blob)
    out = CORPUS / "delete_file"
    out.mkdir(parents=True, exist_ok=True)
    (out / "java_position").write_bytes(java_pos)
    (out / "position").write_bytes(pos)
    for key in keys:
        (out / f"equality_{key.replace(',', '_')}").write_bytes(equality_deletes(key))


if __name__ == "__main__":
    main()
