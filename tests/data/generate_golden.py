# ruff: noqa: E501
"""Generate the golden files in tests/data/golden/ with Apache Iceberg Java (the oracle).

Run from the repository root:

    .venv/bin/python tests/data/generate_golden.py

It needs Java 17 (java + javac) and the iceberg-spark-runtime jar (``make oracle``; override the
path with ICEFLOE_ORACLE_JAR). It creates small tables through Iceberg Spark SQL in a Hadoop
catalog on a temporary warehouse, copies their metadata files (table metadata JSON, manifest
lists, manifests, a few Parquet files) into tests/data/golden/ under stable descriptive names, and
writes next to each Avro file a JSON with the content as Iceberg Java decodes it (read through the
Java API over py4j). Absolute paths inside the copied files are left as Java wrote them; in the
JSON files the temporary warehouse prefix is replaced by ``<warehouse>``. Single-value
serialization and transform vectors come from GoldenVectors.java (compiled and run here).

Snapshot ids, UUIDs and timestamps are random: re-running replaces every file with new values,
and the README is regenerated to match.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDEN = HERE / "golden"
DEFAULT_JAR = ROOT / ".cache/oracle/iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JAR = Path(os.environ.get("ICEFLOE_ORACLE_JAR", str(DEFAULT_JAR))).resolve()

README_ITEMS: list[tuple[str, str]] = []  # (file name, description) in generation order


def note(name: str, text: str) -> None:
    README_ITEMS.append((name, text))


# --------------------------------------------------------------------------------------------
# Single-value serialization and transforms (GoldenVectors.java)
# --------------------------------------------------------------------------------------------


def _h(s: str) -> str:
    return s.encode("utf-8").hex()


SER_VECTORS: list[tuple[str, str]] = (
    [("boolean", v) for v in ("true", "false")]
    + [("int", v) for v in ("0", "1", "-1", "34", "2147483647", "-2147483648")]
    + [("long", v) for v in ("0", "1", "-1", "34", "9223372036854775807", "-9223372036854775808")]
    + [("float", v) for v in ("0.0", "-0.0", "1.5", "-2.25", "NaN", "Infinity", "-Infinity")]
    + [("double", v) for v in ("0.0", "-0.0", "3.14", "-1.0E-300", "NaN", "Infinity", "-Infinity")]
    + [("date", v) for v in ("1970-01-01", "2017-11-16", "1969-12-31", "1900-01-01", "-719162")]
    + [("time", v) for v in ("00:00:00", "22:31:08", "23:59:59.999999")]
    + [
        ("timestamp", v)
        for v in (
            "1970-01-01T00:00:00",
            "2017-11-16T22:31:08",
            "1969-12-31T23:59:59.999999",
            "1900-01-01T00:00:00",
        )
    ]
    + [
        ("timestamptz", v)
        for v in (
            "2017-11-16T22:31:08+00:00",
            "2017-11-16T14:31:08-08:00",
            "1969-12-31T23:59:59.999999+00:00",
        )
    ]
    + [("string", _h(v)) for v in ("", "iceberg", "héllo wörld", "日本語", "😀 emoji", "a\x00b")]
    + [("uuid", v) for v in ("f79c3e09-677c-4bbd-a479-3f349cb785e7", "00000000-0000-0000-0000-000000000000")]
    + [("binary", v) for v in ("", "00010203", "ff")]
    + [("fixed[4]", "00010203")]
    + [("decimal(3, 0)", v) for v in ("0", "-128", "128", "127", "-129", "999")]
    + [("decimal(4, 2)", v) for v in ("14.20", "-14.20", "0.00", "10.65")]
    + [("decimal(9, 2)", v) for v in ("0.00", "1.28", "-1.28", "-0.01", "9999999.99", "-9999999.99")]
    + [
        ("decimal(38, 10)", v)
        for v in (
            "0E-10",
            "1.0000000000",
            "-1.0000000000",
            "9999999999999999999999999999.9999999999",
            "-9999999999999999999999999999.9999999999",
        )
    ]
)

HASH_VECTORS: list[tuple[str, str]] = [
    ("int", "34"),
    ("long", "34"),
    ("date", "2017-11-16"),
    ("time", "22:31:08"),
    ("timestamp", "2017-11-16T22:31:08"),
    ("timestamptz", "2017-11-16T14:31:08-08:00"),
    ("string", _h("iceberg")),
    ("string", _h("日本語")),
    ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ("binary", "00010203"),
    ("fixed[4]", "00010203"),
    ("decimal(4, 2)", "14.20"),
    ("decimal(3, 0)", "-128"),
    ("decimal(3, 0)", "128"),
    ("int", "-1"),
    ("long", "-1"),
]

TEMPORAL_VALUES = {
    "date": ["2017-11-16", "1970-01-01", "1969-12-31", "1969-01-01", "1900-02-28", "2000-02-29"],
    "timestamp": [
        "2017-11-16T22:31:08",
        "1970-01-01T00:00:00",
        "1969-12-31T23:59:59.999999",
        "1969-12-31T23:00:00",
        "1900-01-01T00:00:00",
        "-1",
    ],
    "timestamptz": [
        "2017-11-16T22:31:08+00:00",
        "2017-11-16T23:31:08+01:00",
        "1969-12-31T23:59:59.999999+00:00",
    ],
}


def transform_vectors() -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for t, v in HASH_VECTORS:
        out.append(("bucket[16]", t, v))
        out.append(("bucket[1000]", t, v))
    for v in ("iceberg", "ice", "", "日本語テキスト", "😀😀😀😀😀", "aé😀bc"):
        out.append(("truncate[4]", "string", _h(v)))
    out.append(("truncate[16]", "string", _h("abcdefghijklmnopqrstuvwxyz")))
    for t in ("int", "long"):
        for v in ("0", "1", "9", "10", "-1", "-10", "-11", "123"):
            out.append(("truncate[10]", t, v))
    for v in ("10.65", "-10.65", "0.00", "0.49"):
        out.append(("truncate[50]", "decimal(4, 2)", v))
    out.append(("truncate[4]", "binary", "0001020304"))
    for t, vals in TEMPORAL_VALUES.items():
        for v in vals:
            for tr in ("year", "month", "day") + (("hour",) if t != "date" else ()):
                out.append((tr, t, v))
    # identity: mostly for the partition-path human strings
    ident = [
        ("string", _h("a b/c=d")),
        ("int", "-5"),
        ("long", "5"),
        ("date", "1969-12-31"),
        ("timestamp", "2017-11-16T22:31:08.000001"),
        ("timestamptz", "2017-11-16T22:31:08+00:00"),
        ("boolean", "true"),
        ("decimal(9, 2)", "-1.28"),
        ("binary", "00010203"),
        ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ]
    out += [("identity", t, v) for t, v in ident]
    return out


def run_vectors(workdir: Path) -> None:
    classes = workdir / "classes"
    classes.mkdir()
    subprocess.run(
        ["javac", "-nowarn", "-cp", str(JAR), "-d", str(classes), str(HERE / "GoldenVectors.java")],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    requests: list[tuple[str, str, str]] = [("ser", t, v) for t, v in SER_VECTORS]
    requests += [("hash", t, v) for t, v in HASH_VECTORS]
    requests += transform_vectors()
    stdin = "".join(f"{op}\t{t}\t{v}\n" for op, t, v in requests)
    res = subprocess.run(
        ["java", "-cp", f"{JAR}{os.pathsep}{classes}", "GoldenVectors"],
        input=stdin.encode("utf-8"),
        capture_output=True,
        check=True,
    )
    lines = res.stdout.decode("utf-8").splitlines()
    assert len(lines) == len(requests), (len(lines), len(requests))

    def show(t: str, v: str) -> str:
        # human-readable input (strings are passed to Java as hex)
        if t == "string":
            return bytes.fromhex(v).decode("utf-8")
        return v

    ser, hashes, transforms = [], [], []
    for (op, t, v), line in zip(requests, lines):
        parts = line.split("\t")
        if parts[0] != "ok":
            raise RuntimeError(f"Java failed on {op} {t} {v!r}: {parts[1:]}")
        if op == "ser":
            ser.append({"type": t, "value": show(t, v), "bytes_hex": parts[1]})
        elif op == "hash":
            hashes.append({"type": t, "value": show(t, v), "murmur3_32": int(parts[1])})
        else:
            transforms.append(
                {
                    "transform": op,
                    "source_type": t,
                    "value": show(t, v),
                    "result": parts[1],
                    "result_hex": parts[2],
                    "human_string": parts[3],
                    "result_type": parts[4],
                }
            )
    doc = {
        "generated_by": "tests/data/GoldenVectors.java via generate_golden.py (Iceberg Java 1.10.2)",
        "value_encoding": (
            "value is the input in text form: numbers as text; date/time/timestamp as ISO text (Iceberg "
            "Literal parsing) or, when an integer, days / microseconds; timestamptz with an offset; "
            "binary and fixed as hex; strings as text; decimals as text at the type's scale"
        ),
        "single_value": ser,
        "murmur3_hash": hashes,
        "transforms": transforms,
        "notes": {
            "single_value": "org.apache.iceberg.types.Conversions.toByteBuffer(type, value), as hex",
            "murmur3_hash": "org.apache.iceberg.util.BucketUtil.hash(value) (signed 32-bit)",
            "transforms": (
                "Transforms.fromString(transform).bind(type).apply(value); result as text (days for day, "
                "months/years/hours since epoch, binary results as hex), result_hex = Conversions."
                "toByteBuffer(result type, result), human_string = transform.toHumanString(result type, "
                "result) which is the partition path form"
            ),
        },
    }
    write_json(GOLDEN / "single_value_and_transforms.json", doc)
    note(
        "single_value_and_transforms.json",
        f"{len(ser)} single-value serialization vectors (`Conversions.toByteBuffer`), {len(hashes)} murmur3 "
        f"hashes (`BucketUtil.hash`, incl. the spec's bucket test values), {len(transforms)} transform "
        "results (`Transforms.fromString(t).bind(type).apply(v)`: bucket[16], bucket[1000], truncate[4]/[16] "
        "on strings incl. non-ASCII and surrogate pairs, truncate[10] on int/long incl. negatives, "
        "truncate[50] on decimal, truncate[4] on binary, year/month/day/hour on dates and timestamps "
        "before and after 1970, identity) with result bytes and the human (partition path) string. "
        "Computed by `GoldenVectors.java` run against the oracle jar.",
    )


# --------------------------------------------------------------------------------------------
# Spark tables and their metadata
# --------------------------------------------------------------------------------------------


def jiter(iterable: Any) -> Any:
    """Iterate a java.lang.Iterable through py4j."""
    it = iterable.iterator()
    while it.hasNext():
        yield it.next()


def write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


class Dumper:
    def __init__(self, spark: Any, warehouse: str) -> None:
        self.spark = spark
        self.jvm = spark._jvm
        self.warehouse = warehouse
        conf = spark._jsc.hadoopConfiguration()
        self.catalog = self.jvm.org.apache.iceberg.hadoop.HadoopCatalog(conf, "file://" + warehouse)
        self.golden_name_of: dict[str, str] = {}  # original full path -> golden file name

    def rel(self, path: str | None) -> str | None:
        if path is None:
            return None
        for prefix in ("file://" + self.warehouse, "file:" + self.warehouse, self.warehouse):
            if path.startswith(prefix):
                return "<warehouse>" + path[len(prefix) :]
        return path

    def local(self, path: str) -> str:
        for prefix in ("file://", "file:"):
            if path.startswith(prefix):
                return path[len(prefix) :]
        return path

    def table(self, ident: str) -> Any:
        tid = self.jvm.org.apache.iceberg.catalog.TableIdentifier.parse(ident)
        return self.catalog.loadTable(tid)

    def bytes_of(self, buf: Any) -> str | None:
        if buf is None:
            return None
        return bytes(self.jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buf)).hex()

    def readable(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, str)):
            return value
        if isinstance(value, float):
            return repr(value)  # keeps NaN / -0.0 / inf visible
        if isinstance(value, decimal.Decimal):
            return str(value)
        if hasattr(value, "getClass"):
            cls = value.getClass().getName()
            if "ByteBuffer" in cls:
                return self.bytes_of(value)
            return str(value.toString())
        return str(value)

    def int_map(self, m: Any) -> dict[str, int] | None:
        if m is None:
            return None
        return {str(k): int(m[k]) for k in sorted(m.keySet())}

    def bytes_map(self, m: Any) -> dict[str, str] | None:
        if m is None:
            return None
        return {str(k): self.bytes_of(m[k]) for k in sorted(m.keySet())}

    def readable_bounds(self, m: Any, schema: Any) -> dict[str, Any] | None:
        if m is None:
            return None
        out = {}
        conv = self.jvm.org.apache.iceberg.types.Conversions
        for k in sorted(m.keySet()):
            t = schema.findType(int(k))
            if t is None:
                if int(k) == 2147483546:
                    t = self.jvm.org.apache.iceberg.types.Types.StringType.get()
                elif int(k) == 2147483545:
                    t = self.jvm.org.apache.iceberg.types.Types.LongType.get()
                else:
                    continue
            value = self.readable(conv.fromByteBuffer(t, m[k]))
            out[str(k)] = self.rel(value) if int(k) == 2147483546 else value
        return out

    def manifest_file_doc(self, m: Any) -> dict[str, Any]:
        parts = m.partitions()
        return {
            "path": self.rel(m.path()),
            "golden_file": self.golden_name_of.get(m.path()),
            "length": m.length(),
            "partition_spec_id": m.partitionSpecId(),
            "content": m.content().id(),
            "content_name": m.content().toString(),
            "sequence_number": m.sequenceNumber(),
            "min_sequence_number": m.minSequenceNumber(),
            "added_snapshot_id": m.snapshotId(),
            "added_files_count": m.addedFilesCount(),
            "existing_files_count": m.existingFilesCount(),
            "deleted_files_count": m.deletedFilesCount(),
            "added_rows_count": m.addedRowsCount(),
            "existing_rows_count": m.existingRowsCount(),
            "deleted_rows_count": m.deletedRowsCount(),
            "partitions": None
            if parts is None
            else [
                {
                    "contains_null": p.containsNull(),
                    "contains_nan": p.containsNaN(),
                    "lower_bound": self.bytes_of(p.lowerBound()),
                    "upper_bound": self.bytes_of(p.upperBound()),
                }
                for p in parts
            ],
            "key_metadata": self.bytes_of(m.keyMetadata()),
        }

    def partition_doc(self, spec: Any, part: Any) -> list[dict[str, Any]]:
        out = []
        ptype = spec.partitionType()
        lit = self.jvm.org.apache.iceberg.expressions.Literal
        obj_cls = self.jvm.java.lang.Object._java_lang_class
        for i, field in enumerate(spec.fields()):
            rtype = ptype.fields().get(i).type()
            value = part.get(i, obj_cls)
            if value is None:
                hexv = None
            elif hasattr(value, "getClass"):
                hexv = self.bytes_of(value) if "ByteBuffer" in value.getClass().getName() else None
            else:
                converted = lit.of(value).to(rtype)
                hexv = None if converted is None else self.bytes_of(converted.toByteBuffer())
            out.append(
                {
                    "name": field.name(),
                    "field_id": field.fieldId(),
                    "source_id": field.sourceId(),
                    "transform": field.transform().toString(),
                    "result_type": rtype.toString(),
                    "value": self.readable(value),
                    "value_hex": hexv,
                }
            )
        return out

    def entry_doc(self, table: Any, e: Any) -> dict[str, Any]:
        f = e.file()
        spec = table.specs()[f.specId()]
        schema = table.schema()
        content = f.content().id()
        doc = {
            "status": e.status().id(),
            "status_name": e.status().toString(),
            "snapshot_id": e.snapshotId(),
            "sequence_number": e.dataSequenceNumber(),
            "file_sequence_number": e.fileSequenceNumber(),
            "data_file": {
                "content": content,
                "file_path": self.rel(f.location()),
                "file_format": f.format().toString(),
                "spec_id": f.specId(),
                "partition": self.partition_doc(spec, f.partition()),
                "record_count": f.recordCount(),
                "file_size_in_bytes": f.fileSizeInBytes(),
                "column_sizes": self.int_map(f.columnSizes()),
                "value_counts": self.int_map(f.valueCounts()),
                "null_value_counts": self.int_map(f.nullValueCounts()),
                "nan_value_counts": self.int_map(f.nanValueCounts()),
                "lower_bounds": self.bytes_map(f.lowerBounds()),
                "upper_bounds": self.bytes_map(f.upperBounds()),
                "lower_bounds_readable": self.readable_bounds(f.lowerBounds(), schema),
                "upper_bounds_readable": self.readable_bounds(f.upperBounds(), schema),
                "key_metadata": self.bytes_of(f.keyMetadata()),
                "split_offsets": None if f.splitOffsets() is None else [int(x) for x in f.splitOffsets()],
                "equality_ids": None
                if f.equalityFieldIds() is None
                else [int(x) for x in f.equalityFieldIds()],
                "sort_order_id": f.sortOrderId(),
            },
        }
        if content != 0:
            doc["data_file"]["referenced_data_file"] = self.rel(f.referencedDataFile())
        return doc

    def copy(self, src: str, name: str) -> None:
        shutil.copyfile(self.local(src), GOLDEN / name)
        self.golden_name_of[src] = name

    def dump_table(
        self, ident: str, prefix: str, describe: str, metadata_name: str | None = None
    ) -> dict[str, Any]:
        """Copy metadata JSON, manifest lists and manifests of every snapshot; write expected JSONs."""
        table = self.table(ident)
        ops = table.operations()
        meta = ops.current()
        metadata_name = metadata_name or f"{prefix}_metadata.json"
        self.copy(meta.metadataFileLocation(), metadata_name)
        snapshots = list(jiter(table.snapshots()))
        index: dict[str, Any] = {"table": ident, "metadata": metadata_name, "snapshots": []}
        snap_no = {s.snapshotId(): k for k, s in enumerate(snapshots, start=1)}
        # name the manifests by the snapshot that added them
        manifests: dict[str, Any] = {}
        for s in snapshots:
            for m in s.allManifests(table.io()):
                manifests.setdefault(m.path(), m)
        for path, m in manifests.items():
            kind = "data" if m.content().id() == 0 else "deletes"
            base = path.rsplit("-", 1)[-1].removesuffix(".avro")  # m0, m1, ...
            name = f"{prefix}_snap{snap_no.get(m.snapshotId(), 0)}_{kind}_{base}.avro"
            self.copy(path, name)
            reader_cls = self.jvm.org.apache.iceberg.ManifestFiles
            if m.content().id() == 0:
                reader = reader_cls.read(m, table.io(), table.specs())
            else:
                reader = reader_cls.readDeleteManifest(m, table.io(), table.specs())
            try:
                entries = [self.entry_doc(table, e) for e in jiter(reader.entries())]
            finally:
                reader.close()
            spec = table.specs()[m.partitionSpecId()]
            write_json(
                GOLDEN / name.replace(".avro", ".json"),
                {
                    "golden_file": name,
                    "note": (
                        "Decoded by Iceberg Java (ManifestFiles.read / readDeleteManifest, entries()). "
                        "snapshot_id and sequence numbers are after inheritance from the manifest list "
                        "(the Avro may hold null for ADDED entries). Paths: <warehouse> = temp warehouse."
                    ),
                    "manifest": self.manifest_file_doc(m),
                    "partition_spec": json.loads(
                        self.jvm.org.apache.iceberg.PartitionSpecParser.toJson(spec)
                    ),
                    "entries": entries,
                },
            )
            ents = ", ".join(
                f"{e['status_name']} {e['data_file']['file_path'].rsplit('/', 1)[-1]} "
                f"({e['data_file']['record_count']} rows)"
                for e in entries
            )
            note(
                name,
                f"manifest of `{ident}` added by snapshot {snap_no.get(m.snapshotId(), 0)} (id {m.snapshotId()}), "
                f"content={m.content().id()} ({kind}), spec {m.partitionSpecId()}, {len(entries)} entries: {ents}. "
                f"Expected decoding: `{name.replace('.avro', '.json')}`.",
            )
        for k, s in enumerate(snapshots, start=1):
            name = f"{prefix}_snap{k}_manifest_list.avro"
            self.copy(s.manifestListLocation(), name)
            mlist = [self.manifest_file_doc(m) for m in s.allManifests(table.io())]
            sdoc = {
                "snapshot_id": s.snapshotId(),
                "parent_snapshot_id": s.parentId(),
                "sequence_number": s.sequenceNumber(),
                "timestamp_ms": s.timestampMillis(),
                "operation": s.operation(),
                "summary": dict(s.summary()),
                "schema_id": s.schemaId(),
            }
            write_json(
                GOLDEN / name.replace(".avro", ".json"),
                {
                    "golden_file": name,
                    "path": self.rel(s.manifestListLocation()),
                    "note": "Decoded by Iceberg Java (Snapshot.allManifests). Paths: <warehouse> = temp warehouse.",
                    "snapshot": sdoc,
                    "manifests": mlist,
                },
            )
            index["snapshots"].append({"n": k, **sdoc, "manifest_list": name})
            note(
                name,
                f"manifest list of `{ident}` snapshot {k} (id {s.snapshotId()}, parent {s.parentId()}, "
                f"seq {s.sequenceNumber()}, {s.operation()}), {len(mlist)} manifests: "
                + ", ".join(f"{x['golden_file']}" for x in mlist)
                + f". Expected decoding: `{name.replace('.avro', '.json')}`.",
            )
        schemas = list(meta.schemas())
        refs = {str(k): str(v.toString()) for k, v in dict(meta.refs()).items()}
        note(
            metadata_name,
            f"{describe} Final `vN.metadata.json` of `{ident}` (format-version {meta.formatVersion()}): "
            f"{len(schemas)} schema(s) (ids {[sc.schemaId() for sc in schemas]}), current schema "
            f"{meta.currentSchemaId()} `{compact_schema(meta.schema())}`, "
            f"spec {json.dumps(json.loads(self.jvm.org.apache.iceberg.PartitionSpecParser.toJson(meta.spec())))}, "
            f"sort order `{meta.sortOrder().toString().strip()}`, refs {refs}, snapshots "
            + ", ".join(
                f"{k}: id {s.snapshotId()} ({s.operation()}, +{s.summary().get('added-records')} rows)"
                for k, s in enumerate(snapshots, start=1)
            )
            + ".",
        )
        return index


def compact_schema(schema: Any) -> str:
    return ", ".join(
        f"{f.fieldId()}: {f.name()} {f.type().toString()}{'' if f.isOptional() else ' required'}"
        for f in schema.columns()
    )


def make_spark(warehouse: str) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("icefloe-golden")
        .config("spark.jars", str(JAR))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config("spark.sql.catalog.g", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.g.type", "hadoop")
        .config("spark.sql.catalog.g.warehouse", "file://" + warehouse)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def json_value(v: Any) -> Any:
    """A typed JSON rendering of a Spark Row value (as Iceberg Java returned it)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return v.isoformat()
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return [[json_value(k), json_value(x)] for k, x in v.items()]
    if isinstance(v, list):
        return [json_value(x) for x in v]
    if hasattr(v, "asDict"):
        return {k: json_value(x) for k, x in v.asDict(recursive=False).items()}
    raise TypeError(type(v))


def build_tables(spark: Any, d: Dumper) -> None:
    sql = spark.sql
    sql("CREATE NAMESPACE IF NOT EXISTS g.db")

    # ---- v1 / v2 partitioned (identity on string + day(ts)), two snapshots each
    for fv in (1, 2):
        t = f"g.db.v{fv}_part"
        sql(
            f"CREATE TABLE {t} (id bigint, category string, ts timestamp, value double) USING iceberg "
            f"PARTITIONED BY (category, days(ts)) TBLPROPERTIES ('format-version'='{fv}')"
        )
        sql(
            f"INSERT INTO {t} VALUES (1, 'a', TIMESTAMP'2024-01-01 10:00:00', 1.5), "
            f"(2, 'a', TIMESTAMP'2024-01-01 23:59:59', CAST('NaN' AS double)), "
            f"(3, 'b', TIMESTAMP'2024-01-02 00:00:00', -0.0), (4, null, null, null)"
        )
        sql(
            f"INSERT INTO {t} VALUES (5, 'b', TIMESTAMP'1969-12-31 23:00:00', 2.5), (6, 'c', TIMESTAMP'2024-02-29 12:00:00', 3.0)"
        )
        d.dump_table(
            f"db.v{fv}_part",
            f"v{fv}",
            f"Format v{fv} table `CREATE TABLE (id bigint, category string, ts timestamp, value double) "
            "PARTITIONED BY (category, days(ts))`; INSERT 1 = 4 rows (ids 1-4: partitions a/2024-01-01 x2, "
            "b/2024-01-02, null/null; value has NaN and -0.0), INSERT 2 = 2 rows (ids 5, 6: b/1969-12-31, c/2024-02-29).",
        )

    # ---- v2 with every transform, a sort order, a branch and a tag
    t = "g.db.v2_transforms"
    sql(
        f"CREATE TABLE {t} (id bigint, category string, s string, n int, d date, ts_ntz timestamp_ntz, "
        "ts timestamp, ts2 timestamp) USING iceberg "
        "PARTITIONED BY (category, bucket(16, id), truncate(4, s), truncate(10, n), years(d), months(ts_ntz), "
        "days(ts), hours(ts2)) TBLPROPERTIES ('format-version'='2')"
    )
    sql(
        f"ALTER TABLE {t} WRITE ORDERED BY category ASC NULLS FIRST, id DESC NULLS LAST, days(ts) DESC NULLS LAST"
    )
    sql(
        f"INSERT INTO {t} VALUES (1, 'x', 'iceberg', 17, DATE'2017-11-16', TIMESTAMP_NTZ'2017-11-16 22:31:08', "
        "TIMESTAMP'2017-11-16 22:31:08', TIMESTAMP'2017-11-16 22:31:08'), "
        "(2, 'y', 'héllo wörld', -1, DATE'1969-12-31', TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', "
        "TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP'1969-12-31 23:59:59.999999')"
    )
    snap1 = spark.sql(f"SELECT snapshot_id FROM {t}.snapshots ORDER BY committed_at").collect()[0][0]
    sql(f"INSERT INTO {t} VALUES (3, null, null, null, null, null, null, null)")
    sql(f"ALTER TABLE {t} CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    sql(f"ALTER TABLE {t} CREATE TAG first_load AS OF VERSION {snap1} RETAIN 365 DAYS")
    d.dump_table(
        "db.v2_transforms",
        "v2_all_transforms",
        "Format v2 table (id bigint, category string, s string, n int, d date, ts_ntz timestamp_ntz, "
        "ts timestamp, ts2 timestamp) PARTITIONED BY (category, bucket(16, id), truncate(4, s), truncate(10, n), "
        "years(d), months(ts_ntz), days(ts), hours(ts2)); `WRITE ORDERED BY category ASC NULLS FIRST, id DESC "
        "NULLS LAST, days(ts) DESC NULLS LAST` (sort order 1, the data files carry sort_order_id 1); INSERT 1 = 2 rows "
        "(2017-11-16 22:31:08 and 1969-12-31 23:59:59.999999 values, non-ASCII string), INSERT 2 = 1 row with "
        "all partition sources null; then `CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS` "
        "(at the current snapshot) and `CREATE TAG first_load AS OF VERSION <snapshot 1> RETAIN 365 DAYS`.",
        metadata_name="v2_all_transforms_metadata.json",
    )

    # ---- schema evolution
    t = "g.db.v2_evolution"
    sql(
        f"CREATE TABLE {t} (id int, name string, price float) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    sql(f"INSERT INTO {t} VALUES (1, 'one', 1.5), (2, 'two', null)")
    sql(f"ALTER TABLE {t} ADD COLUMN note string")
    sql(f"ALTER TABLE {t} RENAME COLUMN name TO full_name")
    sql(f"ALTER TABLE {t} ALTER COLUMN id TYPE bigint")
    sql(f"ALTER TABLE {t} ALTER COLUMN price TYPE double")
    sql(f"INSERT INTO {t} VALUES (3000000000, 'three', 2.25, 'added later')")
    d.dump_table(
        "db.v2_evolution",
        "v2_schema_evolution",
        "Format v2 table created as (id int, name string, price float), INSERT 2 rows, then `ADD COLUMN note "
        "string`, `RENAME COLUMN name TO full_name`, `ALTER COLUMN id TYPE bigint`, `ALTER COLUMN price TYPE "
        "double` (one schema per change), then INSERT 1 row (id 3000000000). The first data file has "
        "int/float bounds for the promoted columns (4-byte bounds read as long/double).",
        metadata_name="v2_schema_evolution_metadata.json",
    )

    # ---- merge-on-read position deletes
    t = "g.db.v2_deletes"
    sql(
        f"CREATE TABLE {t} (id bigint, category string, payload string) USING iceberg PARTITIONED BY (category) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read', "
        "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')"
    )
    sql(
        f"INSERT INTO {t} VALUES (1, 'a', 'p1'), (2, 'a', 'p2'), (3, 'a', 'p3'), (4, 'b', 'p4'), (5, 'b', 'p5'), "
        "(6, 'b', 'p6')"
    )
    sql(f"DELETE FROM {t} WHERE id IN (2, 5)")
    d.dump_table(
        "db.v2_deletes",
        "v2_deletes",
        "Format v2 table (id bigint, category string, payload string) PARTITIONED BY (category) with "
        "'write.delete.mode'='merge-on-read'; INSERT 6 rows (ids 1-3 in a, 4-6 in b), then `DELETE WHERE id IN "
        "(2, 5)` (snapshot 2, operation `delete`) which writes one position-delete file per partition "
        "(file-scoped: referenced_data_file is null but the file_path bounds 2147483546 are equal) and a "
        "delete manifest (content=1). Rows after the delete: `v2_deletes_rows.json`.",
        metadata_name="v2_deletes_metadata.json",
    )
    table = d.table("db.v2_deletes")
    scan_rows = sorted(tuple(r) for r in spark.sql(f"SELECT * FROM {t}").collect())
    for k, m in enumerate(
        [m for m in table.currentSnapshot().allManifests(table.io()) if m.content().id() == 1], start=1
    ):
        reader = d.jvm.org.apache.iceberg.ManifestFiles.readDeleteManifest(m, table.io(), table.specs())
        try:
            for j, f in enumerate(jiter(reader), start=1):
                name = f"v2_deletes_position_delete_{k}_{j}.parquet"
                d.copy(f.location(), name)
                note(
                    name,
                    f"position-delete Parquet file written by Java for `DELETE WHERE id IN (2, 5)`, partition "
                    f"{f.partition().toString()}, {f.recordCount()} row(s) (file_path, pos) pointing at "
                    f"{d.rel(f.referencedDataFile()) or 'the data file in its bounds'}.",
                )
        finally:
            reader.close()
    write_json(
        GOLDEN / "v2_deletes_rows.json",
        {
            "note": "rows Java returns for the current snapshot (after deletes), sorted",
            "rows": [list(r) for r in scan_rows],
        },
    )
    note("v2_deletes_rows.json", "rows Iceberg Java returns for `v2_deletes` after the DELETE.")

    # ---- Parquet data file with every type Spark can write
    t = "g.db.all_types"
    sql(
        f"CREATE TABLE {t} (b boolean, i int, l bigint, f float, d double, dec9 decimal(9,2), "
        "dec38 decimal(38,10), dt date, ts timestamp, ts_ntz timestamp_ntz, s string, bin binary, "
        "st struct<a: int, b: string, inner: struct<x: double>>, arr array<int>, m map<string, int>, "
        "arr_st array<struct<x: int, y: string>>, m_arr map<int, array<string>>) USING iceberg "
        "TBLPROPERTIES ('format-version'='2')"
    )
    spark.sql(
        f"""INSERT INTO {t} SELECT /*+ COALESCE(1) */ * FROM VALUES
        (true, 1, 1, CAST(1.5 AS float), 2.5, CAST(14.20 AS decimal(9,2)),
         CAST('12345678901234567890.0123456789' AS decimal(38,10)), DATE'2024-02-29',
         TIMESTAMP'2024-02-29 12:34:56.789012', TIMESTAMP_NTZ'2024-02-29 12:34:56.789012', 'héllo wörld 日本語',
         X'00010203', named_struct('a', 1, 'b', 'x', 'inner', named_struct('x', 1.0D)), array(1, 2, 3),
         map('k1', 1, 'k2', 2), array(named_struct('x', 1, 'y', 'a')), map(1, array('a', 'b'))),
        (false, -2147483648, -9223372036854775808, CAST('NaN' AS float), CAST('NaN' AS double),
         CAST(-9999999.99 AS decimal(9,2)), CAST('-9999999999999999999999999999.9999999999' AS decimal(38,10)),
         DATE'1969-12-31', TIMESTAMP'1969-12-31 23:59:59.999999', TIMESTAMP_NTZ'1900-01-01 00:00:00',
         '', X'', named_struct('a', null, 'b', null, 'inner', null), array(), map(),
         array(named_struct('x', null, 'y', null), null), map(2, array(), 3, null)),
        (null, 2147483647, 9223372036854775807, CAST('-0.0' AS float), CAST('-0.0' AS double),
         CAST(0 AS decimal(9,2)), CAST(0 AS decimal(38,10)), DATE'1900-01-01', TIMESTAMP'1900-01-01 00:00:00',
         TIMESTAMP_NTZ'1969-12-31 23:59:59.999999', '😀 emoji and a string longer than sixteen chars', X'FF',
         null, array(null, 4), map('k', null), null, null),
        (null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null, null),
        (true, 0, 0, CAST('Infinity' AS float), CAST('-Infinity' AS double), CAST(0.01 AS decimal(9,2)),
         CAST(1 AS decimal(38,10)), DATE'1970-01-01', TIMESTAMP'1970-01-01 00:00:00',
         TIMESTAMP_NTZ'1970-01-01 00:00:00', 'a', X'00', named_struct('a', 5, 'b', 'y', 'inner', named_struct('x', CAST('NaN' AS double))),
         array(5), map('z', 26), array(), map())
        AS v(b, i, l, f, d, dec9, dec38, dt, ts, ts_ntz, s, bin, st, arr, m, arr_st, m_arr)"""
    )
    table = d.table("db.all_types")
    files = list(jiter(table.currentSnapshot().addedDataFiles(table.io())))
    assert len(files) == 1, f"expected one data file, got {len(files)}"
    d.dump_table(
        "db.all_types",
        "all_types",
        "Format v2 unpartitioned table with every primitive Spark can write plus struct/array/map nesting "
        "(see all_types_rows.json); one INSERT of 5 rows written as one Parquet file (all_types.parquet).",
        metadata_name="all_types_metadata.json",
    )
    d.copy(files[0].location(), "all_types.parquet")
    rows = spark.sql(f"SELECT * FROM {t}").collect()
    cols = spark.table(t).columns
    write_json(
        GOLDEN / "all_types_rows.json",
        {
            "note": (
                "rows of all_types.parquet as Iceberg Java returns them (session TZ UTC), in file order. "
                "floats as Python repr (NaN, -0.0, inf); decimals as text; timestamps as ISO UTC "
                "without offset (both ts=timestamptz and ts_ntz=timestamp); binary as hex; maps as "
                "[[key, value], ...]; structs as objects"
            ),
            "schema": json.loads(d.jvm.org.apache.iceberg.SchemaParser.toJson(table.schema())),
            "columns": cols,
            "rows": [[json_value(v) for v in r] for r in rows],
        },
    )
    note(
        "all_types.parquet",
        "Parquet data file written by Iceberg Java (Spark INSERT) for `all_types` (Parquet field ids on every "
        "node incl. list elements and map keys/values): b boolean, i int, l bigint, f float, d double, "
        "dec9 decimal(9,2), dec38 decimal(38,10), dt date, ts timestamp (Iceberg timestamptz), ts_ntz "
        "timestamp_ntz (Iceberg timestamp), s string, bin binary, st struct<a int, b string, inner "
        "struct<x double>>, arr array<int>, m map<string,int>, arr_st array<struct<x int, y string>>, "
        "m_arr map<int, array<string>>. 5 rows: extremes, NaN, +-0.0, +-Infinity, pre-1970 dates and "
        "timestamps, non-ASCII strings, empty string/binary/list/map, nested nulls, an all-null row. "
        "Rows as Java reads them: `all_types_rows.json`; Java's metrics for it: the entry in "
        "`all_types_snap1_data_m0.json`; schema: `all_types_metadata.json`.",
    )
    note(
        "all_types_rows.json",
        "rows of all_types.parquet as Iceberg Java returns them, plus the Iceberg schema JSON.",
    )


def write_readme() -> None:
    lines = [
        "# Golden files from Apache Iceberg Java 1.10.2",
        "",
        "Generated by `tests/data/generate_golden.py` (run `.venv/bin/python tests/data/generate_golden.py` from the",
        "repository root; it needs Java 17 and the oracle jar from `make oracle`). Do not edit by hand: re-running",
        "regenerates every file (snapshot ids, UUIDs and timestamps change) and this README.",
        "",
        "Tables were created by Iceberg Spark SQL in a Hadoop catalog on a temporary warehouse (session time",
        "zone UTC). Files copied verbatim keep the absolute paths Java wrote (e.g. `file:/tmp/tmpXXXX/db/...`):",
        "those are data. In every JSON file the warehouse prefix is replaced by `<warehouse>`, so compare",
        "paths by suffix (`/db/<table>/...`). Manifest lists refer to manifests by their original names; the",
        "`golden_file` field in the JSONs maps each original manifest path to its file here.",
        "",
        "Naming: `<prefix>_metadata.json` (final table metadata), `<prefix>_snap<k>_manifest_list.avro`",
        "(manifest list of the k-th snapshot, oldest first), `<prefix>_snap<k>_<data|deletes>_m<j>.avro`",
        "(manifest `-m<j>.avro` added by the k-th snapshot). Each `.avro` has a `.json` twin with the content",
        "as Iceberg Java decodes it:",
        "",
        "- manifest list JSON: `snapshot` (id, parent, sequence number, summary) and `manifests`: path,",
        "  golden_file, length, partition_spec_id, content, sequence_number, min_sequence_number,",
        "  added_snapshot_id, added/existing/deleted files and rows counts, partitions (field summaries:",
        "  contains_null, contains_nan, lower/upper bound as hex), key_metadata.",
        "- manifest JSON: `manifest` (as above), `partition_spec`, and `entries`: status (0 existing, 1 added,",
        "  2 deleted), snapshot_id, sequence_number, file_sequence_number (after inheritance), and",
        "  `data_file`: content, file_path, file_format, spec_id, partition (per field: name, field_id,",
        "  transform, result_type, value, value_hex = single-value serialization), record_count,",
        "  file_size_in_bytes, column_sizes, value_counts, null_value_counts, nan_value_counts,",
        "  lower_bounds/upper_bounds (hex, keyed by field id as string) plus `*_readable` (decoded by Java),",
        "  key_metadata, split_offsets, equality_ids, sort_order_id, referenced_data_file (delete files).",
        "",
        "## Files",
        "",
    ]
    for name, text in README_ITEMS:
        lines.append(f"- `{name}`: {text}")
    lines.append("")
    (GOLDEN / "README.md").write_text("\n".join(lines), encoding="utf-8")


def main() -> int:
    if not JAR.is_file():
        print(f"oracle jar not found: {JAR} (run `make oracle` or set ICEFLOE_ORACLE_JAR)", file=sys.stderr)
        return 2
    os.environ["TZ"] = "UTC"
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if GOLDEN.exists():
        shutil.rmtree(GOLDEN)
    GOLDEN.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="icefloe-golden-") as tmp:
        run_vectors(Path(tmp))
        warehouse = os.path.join(tmp, "warehouse")
        os.mkdir(warehouse)
        spark = make_spark(warehouse)
        try:
            build_tables(spark, Dumper(spark, warehouse))
        finally:
            spark.stop()
    write_readme()
    total = sum(p.stat().st_size for p in GOLDEN.iterdir())
    print(f"wrote {len(list(GOLDEN.iterdir()))} files, {total} bytes, to {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
