"""Generate the Puffin / deletion-vector golden files in tests/data/golden/ with Iceberg Java.

Run from the repository root:

    .venv/bin/python tests/data/golden_puffin.py

Like generate_golden.py it needs Java 17 and the oracle jar (``make oracle``). It creates one
format-v3 merge-on-read table with a single data file of 70,000 rows (ids 0..69999 in order, so
a row's position is its id) and deletes rows three times; each DELETE makes Iceberg Java write a
new Puffin file whose deletion vector holds every position deleted so far (v3 keeps one DV per
data file and merges the previous one into it):

- ``v3_dv_array``: ids 3, 17, 42, 99, 65536, 69999 (array containers under two 16-bit keys);
- ``v3_dv_run``: adds 20..69 (50 consecutive ids: a run container);
- ``v3_dv_bitmap``: adds every odd id below 10,000 (more than 4,096 values: a bitmap container).

Each ``.puffin`` is copied verbatim (it holds Java's absolute data-file paths) and gets a ``.json``
twin with what Java says about it: the footer as Java's PuffinReader parses it, the ``delete_files``
rows (content_offset, content_size_in_bytes, record_count, referenced_data_file) and the deleted
positions from the ``position_deletes`` metadata table. The warehouse prefix is written as
``<warehouse>`` in the JSON. Re-running replaces the files (paths and snapshot ids change).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from typing import Any

from golden_common import GOLDEN, JAR, jiter, write_json
from golden_tables import make_spark

TABLE = "g.db.dv"
ROWS = 70_000
DELETES = [
    ("v3_dv_array", "id IN (3, 17, 42, 99, 65536, 69999)"),
    ("v3_dv_run", "id BETWEEN 20 AND 69"),
    ("v3_dv_bitmap", "id < 10000 AND id % 2 = 1"),
]


def footer_doc(spark: Any, local_path: str, rel: Any) -> dict[str, Any]:
    """The footer of a Puffin file as Iceberg Java's PuffinReader reads it."""
    jvm = spark._jvm
    input_file = jvm.org.apache.iceberg.Files.localInput(local_path)
    reader = jvm.org.apache.iceberg.puffin.Puffin.read(input_file).build()
    try:
        meta = reader.fileMetadata()
        blobs = []
        for b in jiter(meta.blobs()):
            blobs.append(
                {
                    "type": b.type(),
                    "fields": [int(f) for f in jiter(b.inputFields())],
                    "snapshot_id": int(b.snapshotId()),
                    "sequence_number": int(b.sequenceNumber()),
                    "offset": int(b.offset()),
                    "length": int(b.length()),
                    "compression_codec": b.compressionCodec(),
                    "properties": {k: rel(v) for k, v in dict(b.properties()).items()},
                }
            )
        return {"blobs": blobs, "properties": dict(meta.properties())}
    finally:
        reader.close()


def main() -> None:
    if not JAR.exists():
        sys.exit(f"oracle jar not found: {JAR} (run `make oracle`)")
    warehouse = tempfile.mkdtemp(prefix="icefloe-puffin-")
    spark = make_spark(warehouse)

    def rel(path: Any) -> Any:
        if not isinstance(path, str):
            return path
        for prefix in ("file://" + warehouse, "file:" + warehouse, warehouse):
            if path.startswith(prefix):
                return "<warehouse>" + path[len(prefix) :]
        return path

    try:
        spark.sql(
            f"CREATE TABLE {TABLE} (id bigint, data string) USING iceberg "
            "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
        )
        # One partition, in id order: one data file in which row position == id.
        spark.range(0, ROWS, 1, 1).selectExpr("id", "concat('row-', id) AS data").writeTo(TABLE).append()
        seen: set[str] = set()
        for name, where in DELETES:
            spark.sql(f"DELETE FROM {TABLE} WHERE {where}")
            files = spark.sql(
                f"SELECT file_path, file_format, record_count, file_size_in_bytes, referenced_data_file, "
                f"content_offset, content_size_in_bytes FROM {TABLE}.delete_files"
            ).collect()
            new = [f for f in files if f.file_path not in seen]
            puffins = sorted({f.file_path for f in new})
            if len(puffins) != 1:
                sys.exit(f"{name}: expected one new Puffin file, Java wrote {puffins}")
            puffin = puffins[0]
            seen.add(puffin)
            rows = spark.sql(
                f"SELECT file_path, pos, delete_file_path FROM {TABLE}.position_deletes"
            ).collect()
            local = puffin.removeprefix("file:").removeprefix("//")
            dvs = []
            for f in sorted(new, key=lambda f: f.content_offset):
                positions = sorted(
                    r.pos
                    for r in rows
                    if r.delete_file_path == puffin and r.file_path == f.referenced_data_file
                )
                dvs.append(
                    {
                        "referenced_data_file": rel(f.referenced_data_file),
                        "content_offset": f.content_offset,
                        "content_size_in_bytes": f.content_size_in_bytes,
                        "record_count": f.record_count,
                        "positions": positions,
                    }
                )
            doc = {
                "description": f"Puffin file Iceberg Java 1.10.2 wrote for `DELETE FROM db.dv WHERE {where}` "
                f"(format v3, merge-on-read; one data file of {ROWS} rows, position == id)",
                "path": rel(puffin),
                "file_format": files[0].file_format,
                "file_size_in_bytes": new[0].file_size_in_bytes,
                "footer": footer_doc(spark, local, rel),
                "deletion_vectors": dvs,
            }
            shutil.copyfile(local, GOLDEN / f"{name}.puffin")
            write_json(GOLDEN / f"{name}.json", doc)
            summary = [(d["content_offset"], d["content_size_in_bytes"], d["record_count"]) for d in dvs]
            print(
                f"{name}.puffin: {new[0].file_size_in_bytes} bytes, DVs (offset, size, cardinality) {summary}"
            )
    finally:
        spark.stop()
        shutil.rmtree(warehouse, ignore_errors=True)


if __name__ == "__main__":
    main()
