"""Dumping Iceberg tables through py4j: copy their metadata files into golden/ and write
the JSON twin of each manifest list and manifest as Iceberg Java decodes it."""

# ruff: noqa: E501  (SQL and descriptions are kept on one line each)
from __future__ import annotations

import decimal
import json
import shutil
from typing import Any

from golden_common import GOLDEN, jiter, note, write_json


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
