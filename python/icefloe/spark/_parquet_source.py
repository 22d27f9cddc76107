"""The half of `icefloe.spark.read` that Spark's own Parquet source reads.

A planned data file with no deletes is a plain Parquet file: Spark's vectorized Parquet
reader reads it as Iceberg does when it resolves columns by Iceberg's field ids
(`spark.sql.parquet.fieldId.read.enabled`), fills a column the file lacks with nulls and is
given exactly the files of the plan. Spark then prunes columns, pushes filters into row
groups, feeds whole-stage code generation without Arrow-to-row conversion, and sizes the
relation from the files' bytes, none of which it can do through `mapInArrow`.

Everything else takes icefloe's Rust reader (`icefloe.spark.read`): every rule under which
Spark's reader would read differently from Iceberg is listed here and in docs/spark.md.

Per file (`FileScanTask::plain_parquet_blocker` in Rust): delete files attached (positions,
deletion vectors, equality deletes), a residual filter left to apply, not Parquet, encrypted,
a part of a file, an identity partition source column the file's metrics do not name (a file
added by `add_files` or a migration may hold it only in its partition tuple), a location
Spark's Hadoop file systems cannot open (S3 without an S3A connector), S3 storage settings S3A
cannot take or a bucket S3A opened with other settings (`_s3a`), a path Spark would read as a
glob, cannot parse or would normalize, a file name Spark skips as hidden (`_x`, `.x`), or (per
scan) files on S3 whose mean size is too small for Spark's reader to pay its requests per file.

Spark is handed the files as a file stream sink log with the plan's paths and sizes
(`_logged_files_frame`): no status call per file on the driver. Over Spark Connect
the server is handed paths, and asked once per bucket whether its S3A opens it
(`_connect_opens_bucket`): the client cannot look into the server's JVM.

Per scan (`scan_blocker`): turned off (`icefloe.read.spark-parquet.enabled=false`), a
table name mapping (its files may lack field ids), a variant, geometry or geography column in
any schema of the table (Spark 3.5's Parquet library cannot open such a file's footer), a
projected metadata column, a projected
type Spark shows differently from the Parquet column (uuid, fixed, time, nanosecond
timestamps, variant, unknown, geometry, geography), a projected field with an
`initial-default`, a projected field whose type changed in the schema history (a promotion
Spark's reader may not widen), or a projected name that an older schema gave to another
field id (Spark's row-group filters match columns by name).
"""

from __future__ import annotations

import re
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from icefloe._reserved_fields import FIRST_RESERVED_FIELD_ID
from icefloe.spark._arrow import spark_type
from icefloe.spark._s3a import S3A_SCHEMES, bucket_of, s3a_options, s3a_path
from icefloe.spark._session import is_connect
from icefloe.types import IcebergType, PrimitiveType

if TYPE_CHECKING:
    from collections.abc import Mapping

    from pyspark.sql import DataFrame, SparkSession

    from icefloe.schema import Schema
    from icefloe.table import Table

__all__ = ["ENABLED_CONF", "PlainFiles", "parquet_frame", "scan_blocker", "split_files"]

ENABLED_CONF = "icefloe.read.spark-parquet.enabled"
# Spark's Parquet source resolves columns by the `parquet.field.id` of the read schema.
FIELD_ID_KEY = "parquet.field.id"
FIELD_ID_CONF = "spark.sql.parquet.fieldId.read.enabled"
# Over this many paths Spark lists them in a Spark job of its own (one task per path, up to
# 10,000): 0.53 s for 100 local files on the quiet 2-core machine, against 0.06 s on the driver
# (0.5 s for 5,000 files: ~0.1 ms a file; 23 s against 1.3 s for 100 under load). The plan's
# paths are files, so the driver's listing is a status call or two per file.
LISTING_THRESHOLD_CONF = "spark.sql.sources.parallelPartitionDiscovery.threshold"
SERIAL_LISTING = str(2**31 - 1)
# A scan's files on S3 take Spark's reader only when their mean size is at least this: per file
# Spark's S3A reader sends 4 HEADs and 3 GETs (Hadoop 3.3, PySpark 3.5; 1 HEAD and 3 GETs on
# Hadoop 3.4, PySpark 4.1) where the Rust reader sends 1 or 2 GETs, which outweighs Spark's column
# pruning for small files. Measured on the S3 test server, a 1-of-10-column sum, medians of 5
# (docs/spark.md): Spark against Rust 1.7 s / 0.9 s over 64 files of 1 MB, 1.5 s / 1.7 s over 16
# of 8 MB, 1.2 s / 2.2 s over 4 of 32 MB on PySpark 3.5 (2.6 / 1.7, 2.7 / 2.5, 1.0 / 2.3 on 4.1).
S3_MIN_MEAN_CONF = "icefloe.read.spark-parquet.s3-min-mean-file-bytes"
S3_MIN_MEAN_FILE_BYTES = 8 << 20
# Over Spark Connect the server is given the files as paths (the file list of
# `_logged_files_frame` is a folder of the client's): its file index sends a status call or two
# and a listing per file before the query starts. The crossover measured there is the same
# (`make bench-connect-s3`, PySpark 4.1, medians): Spark against Rust 2.15 s / 0.99 s over 64
# files of 1 MiB, 0.72 / 0.80 over 16 of 8 MiB, 0.31 / 0.55 over 4 of 32 MiB.

# The object Spark Connect's server is asked for once per bucket (`_connect_opens_bucket`).
S3A_PROBE_KEY = ".icefloe-s3a-probe"
# Spark's file stream sink log: a directory whose `_spark_metadata` log lists files (path, size)
# is read by Spark's MetadataLogFileIndex without a status call per file.
_SINK_LOG_DIR = "_spark_metadata"
_SINK_LOG_IGNORED_CONF = "spark.sql.streaming.fileStreamSink.ignoreMetadata"
# Types Spark shows differently from their Parquet column (or not at all).
_OTHER_TYPES = re.compile(
    r"^(uuid|fixed\[\d+\]|time|timestamp_ns|timestamptz_ns|variant|unknown|geometry.*|geography.*)$"
)
# Parquet logical types newer than the Parquet library of Spark 3.5 (its footer reader fails
# with a NullPointerException on them, even when the column is not read).
_NEW_PARQUET_TYPES = re.compile(r"^(variant|geometry.*|geography.*)$")
# Characters that make Spark glob a path, and a colon Hadoop's Path cannot parse in a name.
_GLOB = re.compile(r"[{}\[\]*?\\]")


def enabled(spark: SparkSession) -> bool:
    value = spark.conf.get(ENABLED_CONF, "true")
    return str(value).strip().lower() != "false"


def _fields(schema: Schema) -> Any:
    """(full dotted name, field, its primitive type's JSON name or None) of every field of
    `schema`, nested ones included (`a.b`, `l.element`, `m.key`, `m.value`)."""
    for name in schema.column_names:
        f = schema.find_field(name)
        t: IcebergType = f.field_type
        yield name, f, str(t) if isinstance(t, PrimitiveType) else None


def scan_blocker(spark: SparkSession, table: Table, projection: Schema) -> str | None:
    """Why no file of this scan may take Spark's Parquet source (see the module docstring);
    None when the files may, each by its own rules."""
    if not enabled(spark):
        return f"turned off ({ENABLED_CONF}=false)"
    if table.properties.get("schema.name-mapping.default"):
        return "the table has a name mapping (its files may lack field ids)"
    history: dict[int, set[IcebergType]] = {}
    names: dict[str, set[int]] = {}
    for schema in table.schemas().values():
        for name, f, primitive in _fields(schema):
            if primitive is not None and _NEW_PARQUET_TYPES.match(primitive):
                # Spark's Parquet library fails on the file's footer, whatever is projected.
                return (
                    f"the table's files may hold {primitive} column {name} (a Parquet type Spark cannot open)"
                )
            if primitive is not None:
                history.setdefault(f.field_id, set()).add(f.field_type)
            names.setdefault(name, set()).add(f.field_id)
    for name, f, primitive in _fields(projection):
        if f.field_id >= FIRST_RESERVED_FIELD_ID:
            return f"metadata column {name} is selected"
        if primitive is not None and _OTHER_TYPES.match(primitive):
            return f"column {name} has type {primitive}, which Spark shows differently"
        if f.initial_default is not None:
            return f"column {name} has an initial default"
        if len(history.get(f.field_id, set()) - {f.field_type}) > 0:
            changed = sorted(str(t) for t in history[f.field_id])
            return f"column {name} (field id {f.field_id}) changed type: {changed}"
        if len(names.get(name, set()) - {f.field_id}) > 0:
            return f"column name {name} was used by another field id in an older schema"
    return None


@dataclass
class PlainFiles:
    """The files of a plan that Spark's Parquet source reads: (path, size, records) each, and
    the Hadoop options of the read (S3A settings of their buckets, see `_s3a`)."""

    files: list[tuple[str, int, int]] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)

    @property
    def size_in_bytes(self) -> int:
        return sum(size for _path, size, _records in self.files)


_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
# (application id, scheme) -> whether Spark's Hadoop configuration has a file system for it
_SCHEMES: dict[tuple[str, str], bool] = {}
# (application id, bucket) -> the S3A options Spark's reader first read the bucket with: Hadoop
# keeps that bucket's file system, so other settings for it take the Rust reader (see `_s3a`).
_S3A_BUCKETS: dict[tuple[str, str], dict[str, str]] = {}
# (application id, bucket) -> "" when a Spark Connect server's S3A opened the bucket, else why not
_CONNECT_BUCKETS: dict[tuple[str, str], str] = {}
# Spark Connect session id -> the server's application id
_CONNECT_APPS: dict[str, str] = {}


def _application_id(spark: SparkSession) -> str:
    """The Spark application (one driver JVM, one Hadoop file system cache) of `spark`; over
    Spark Connect the server's, asked once per session."""
    if not is_connect(spark):
        return str(spark.sparkContext.applicationId)
    session = str(getattr(spark, "session_id", id(spark)))
    app = _CONNECT_APPS.get(session)
    if app is None:
        app = _CONNECT_APPS[session] = str(spark.conf.get("spark.app.id", None) or session)
    return app


def _spark_opens(spark: SparkSession, scheme: str) -> bool:
    """Whether Spark's Hadoop file systems open `scheme` (checked once per application). Over
    Spark Connect the client cannot ask the server's JVM: only local files qualify here, and
    S3 is asked per bucket (`_connect_opens_bucket`)."""
    if scheme == "file":
        return True
    if is_connect(spark):
        return False
    sc = spark.sparkContext
    key = (sc.applicationId, scheme)
    known = _SCHEMES.get(key)
    if known is None:
        jvm: Any = sc._jvm
        try:
            jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(scheme, sc._jsc.hadoopConfiguration())
            known = True
        except Exception:  # py4j raises Py4JJavaError for an UnsupportedFileSystemException
            known = False
        _SCHEMES[key] = known
    return known


def split_files(
    spark: SparkSession,
    candidates: list[tuple[str, int, int]],
    io_properties: Mapping[str, str] | None = None,
) -> tuple[PlainFiles, list[tuple[str, str]]]:
    """`candidates` (files the plan's rules allow) split by where they live: the ones Spark
    opens, and (path, reason) for the others. `io_properties` are the table's storage
    settings: files on S3 are read through Spark's S3A connector with them (`_s3a`)."""
    plain = PlainFiles()
    refused: list[tuple[str, str]] = []
    buckets: dict[str, dict[str, str] | str] = {}
    for c in candidates:
        path = c[0]
        m = _SCHEME.match(path)
        scheme = m.group(1).lower() if m else "file"
        rest = path[m.end() if m else 0 :]
        if _GLOB.search(path) or ":" in rest or "//" in rest.removeprefix("//"):
            refused.append((path, "a path Spark would glob or cannot parse (or would normalize: //)"))
            continue
        if path.rsplit("/", 1)[-1].startswith(("_", ".")):
            refused.append((path, "a file name Spark's file sources skip (starting with _ or .)"))
            continue
        if scheme in S3A_SCHEMES:
            connect = is_connect(spark)
            if not connect and not _spark_opens(spark, "s3a"):
                refused.append((path, f"Spark has no file system for {scheme}:"))
                continue
            bucket = bucket_of(path)
            if bucket not in buckets:
                found = _bucket_options(spark, bucket, io_properties or {})
                if connect and not isinstance(found, str):
                    found = _connect_opens_bucket(spark, bucket, found)
                buckets[bucket] = found
            options = buckets[bucket]
            if isinstance(options, str):
                refused.append((path, options))
                continue
        elif scheme != "file" and _unmapped_settings(scheme, io_properties or {}):
            # Only S3's settings are handed to Spark's file system (`_s3a`); with the session's
            # own settings Spark could not read what the catalog's settings reach.
            refused.append((path, f"the table's storage settings for {scheme}: are not passed to Spark"))
            continue
        elif not _spark_opens(spark, scheme):
            refused.append((path, f"Spark has no file system for {scheme}:"))
            continue
        plain.files.append(c)
    on_s3 = [c for c in plain.files if _scheme(c[0]) in S3A_SCHEMES]
    min_mean = _s3_min_mean_file_bytes(spark) if on_s3 else 0
    if on_s3 and sum(size for _p, size, _r in on_s3) < min_mean * len(on_s3):
        # Per file Spark's S3A reader sends 7 requests (Hadoop 3.3; 4 on 3.4) where the Rust
        # reader sends 1 or 2: below this mean size the Rust reader reads them faster.
        why = (
            f"small files on S3 (mean under {min_mean} bytes, {S3_MIN_MEAN_CONF}): the Rust reader is faster"
        )
        refused += [(c[0], why) for c in on_s3]
        plain.files = [c for c in plain.files if _scheme(c[0]) not in S3A_SCHEMES]
    elif on_s3:
        for options in buckets.values():
            if not isinstance(options, str):
                plain.options.update(options)
    return plain, refused


# Storage-setting prefixes (FileIO property names) of the schemes other than S3.
_SETTINGS_OF = {
    "gs": "gcs.",
    "abfs": "adls.",
    "abfss": "adls.",
    "wasb": "adls.",
    "wasbs": "adls.",
    "az": "adls.",
}


def _unmapped_settings(scheme: str, io_properties: Mapping[str, str]) -> bool:
    """Whether the table has storage settings for `scheme` that Spark's reader would not get."""
    prefix = _SETTINGS_OF.get(scheme)
    return prefix is not None and any(k.startswith(prefix) for k in io_properties)


def _scheme(path: str) -> str:
    m = _SCHEME.match(path)
    return m.group(1).lower() if m else "file"


def _s3_min_mean_file_bytes(spark: SparkSession) -> int:
    from icefloe.spark._session import conf_bytes

    return conf_bytes(spark, S3_MIN_MEAN_CONF, S3_MIN_MEAN_FILE_BYTES)


def _connect_opens_bucket(spark: SparkSession, bucket: str, options: dict[str, str]) -> dict[str, str] | str:
    """`options` when Spark's S3A opens `bucket` with them, else why not: asked once per
    application and bucket by analysing a read of one object (`S3A_PROBE_KEY`) with them. The
    analysis opens the bucket's file system and asks for the object's status (a HEAD and a
    LIST): a path not found is S3A at work; no file system for s3a (no connector on the
    server's classpath), or any other error (the endpoint, the credentials), leaves the bucket's
    files to the Rust reader. Used over Spark Connect, where the client cannot ask the server's
    JVM; the same read in a classic session answers the same."""
    key = (_application_id(spark), bucket)
    known = _CONNECT_BUCKETS.get(key)
    if known is None:
        reader = spark.read.schema("probe int").options(**options)
        try:
            # Classic PySpark resolves the path here; Spark Connect's server when it analyses.
            reader.parquet(f"s3a://{bucket}/{S3A_PROBE_KEY}").schema  # noqa: B018
            known = ""
        except Exception as e:  # an analysis error, of classic PySpark or of Spark Connect
            text = str(e)
            if "PATH_NOT_FOUND" in text or "Path does not exist" in text:
                known = ""
            elif "No FileSystem for scheme" in text or "S3AFileSystem not found" in text:
                known = "Spark has no file system for s3a: (no S3A connector in its classpath)"
            else:
                first = next((line.strip() for line in text.splitlines() if line.strip()), type(e).__name__)
                known = f"Spark's S3A could not open bucket {bucket}: {first[:300]}"
        _CONNECT_BUCKETS[key] = known
    return options if known == "" else known


def _bucket_options(
    spark: SparkSession, bucket: str, io_properties: Mapping[str, str]
) -> dict[str, str] | str:
    """The S3A options that read `bucket` with `io_properties`, or why Spark's reader cannot."""
    options = s3a_options(io_properties, bucket)
    if isinstance(options, str):
        return options
    key = (_application_id(spark), bucket)
    first = _S3A_BUCKETS.setdefault(key, options)
    if first != options:
        return f"Spark's S3A file system of bucket {bucket} was opened with other storage settings"
    return options


def field_id_schema(projection: dict[str, Any]) -> Any:
    """The Spark schema of `projection` (Iceberg schema JSON) as `icefloe.spark.read` shows
    it, each struct field carrying its Iceberg field id for Spark's Parquet source."""
    from pyspark.sql.types import ArrayType, MapType, StructField, StructType

    def to_type(t: Any, name: str) -> Any:
        if isinstance(t, str):
            return spark_type(t, name)
        kind = t["type"]
        if kind == "struct":
            return StructType([to_field(f, f"{name}.{f['name']}") for f in t["fields"]])
        if kind == "list":
            return ArrayType(to_type(t["element"], f"{name}.element"), True)
        return MapType(to_type(t["key"], f"{name}.key"), to_type(t["value"], f"{name}.value"), True)

    def to_field(f: dict[str, Any], name: str) -> Any:
        return StructField(f["name"], to_type(f["type"], name), True, {FIELD_ID_KEY: f["id"]})

    return StructType([to_field(f, f["name"]) for f in projection["fields"]])


def parquet_frame(spark: SparkSession, files: PlainFiles, projection: dict[str, Any]) -> DataFrame:
    """Spark's Parquet source over exactly `files`, columns resolved by field id.

    Dates and timestamps are read as written (proleptic Gregorian, Iceberg's calendar): the
    rebase modes are CORRECTED, since Iceberg's files carry no Spark version and Spark's
    default would refuse dates before 1582.

    On classic Spark the files are a file list (`_logged_files_frame`), built on the JVM's
    reader directly: each py4j call costs ~0.5 ms on a loaded 2-core machine, and PySpark's
    reader spends ~15 of them on the schema's active-session lookup, a path list and the
    listing setting. Over Spark Connect the server gets paths. A relation over a file list is
    kept per session (`_RELATIONS`): the same files read again with the same schema take a new
    DataFrame of it in one call."""
    spark.conf.set(FIELD_ID_CONF, "true")
    schema = field_id_schema(projection)
    options = {"datetimeRebaseMode": "CORRECTED", "int96RebaseMode": "CORRECTED", **files.options}
    if is_connect(spark):
        # The server builds the file index when it analyses the plan, after this returns.
        spark.conf.set(LISTING_THRESHOLD_CONF, SERIAL_LISTING)
        return spark.read.schema(schema).options(**options).parquet(*_paths(files))
    jspark = spark._jsparkSession
    schema_json = schema.json()
    key = _relation_key(files, schema_json, options)
    relation = _cached_relation(spark, key)
    if relation is not None:
        return _classic_frame(jspark.baseRelationToDataFrame(relation), spark)
    if _sink_log_read(spark):
        jreader = jspark.read().format("parquet").schema(jspark.parseDataType(schema_json))
        for name, value in options.items():  # this read's Hadoop settings (S3A per bucket), not the session's
            jreader = jreader.option(name, value)
        jdf = _logged_files_frame(jreader, files)
        _keep_relation(spark, key, jdf)
        return _classic_frame(jdf, spark)
    old = spark.conf.get(LISTING_THRESHOLD_CONF, None)
    spark.conf.set(LISTING_THRESHOLD_CONF, SERIAL_LISTING)
    try:
        # the file index is built here, on the driver: a status call or two per file
        return spark.read.schema(schema).options(**options).parquet(*_paths(files))
    finally:
        if old is None:
            spark.conf.unset(LISTING_THRESHOLD_CONF)
        else:
            spark.conf.set(LISTING_THRESHOLD_CONF, old)


# The relations Spark's Parquet source resolved over a file list (`_logged_files_frame`), per
# session, newest last. A read of the same files with the same schema and options (a snapshot
# read again: a query over a temporary view, a dashboard's refresh, a benchmark's rounds) gets a
# new DataFrame of the same relation, with columns of its own (`baseRelationToDataFrame`, as
# Spark's reader ends), without a file index built again: about half of a small read's driver
# time (nine py4j calls and the index, against one call). The files of a plan never change, so a
# relation never goes stale; Spark's session catalog keeps its tables' relations the same way.
# Only reads of up to `_RELATION_MAX_FILES` files are kept: a larger read amortizes the index.
_RELATIONS: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[Any, ...], Any]] = weakref.WeakKeyDictionary()
_RELATIONS_PER_SESSION = 16
_RELATION_MAX_FILES = 2_000


def _relation_key(files: PlainFiles, schema_json: str, options: dict[str, str]) -> tuple[Any, ...] | None:
    if len(files.files) > _RELATION_MAX_FILES:
        return None
    return (
        tuple((path, size) for path, size, _records in files.files),
        schema_json,
        tuple(sorted(options.items())),
    )


def _cached_relation(spark: SparkSession, key: tuple[Any, ...] | None) -> Any:
    """The JVM relation kept for `key` in `spark`'s session, or None."""
    if key is None:
        return None
    try:
        kept = _RELATIONS.get(spark)
    except TypeError:  # a session that cannot be weakly referenced keeps nothing
        return None
    if kept is None:
        return None
    try:  # (another thread's read may drop the key in between: then it is built again)
        kept.move_to_end(key)
        return kept[key]
    except KeyError:
        return None


def _keep_relation(spark: SparkSession, key: tuple[Any, ...] | None, jdf: Any) -> None:
    """Keeps the relation of `jdf` (a Dataset analysed to one `LogicalRelation`) under `key`."""
    if key is None:
        return
    try:
        relation = jdf.queryExecution().analyzed().relation()
    except Exception:  # not a LogicalRelation: nothing to keep
        return
    try:
        kept = _RELATIONS.setdefault(spark, OrderedDict())
    except TypeError:
        return
    kept[key] = relation
    while len(kept) > _RELATIONS_PER_SESSION:
        try:
            kept.popitem(last=False)
        except KeyError:  # emptied by another thread
            break


def _paths(files: PlainFiles) -> list[str]:
    """The files as the paths Spark's file sources take (`s3://` as `s3a://`)."""
    return [s3a_path(path) for path, _size, _records in files.files]


def _classic_frame(jdf: Any, spark: SparkSession) -> DataFrame:
    """A classic PySpark DataFrame of the JVM Dataset `jdf`."""
    try:
        from pyspark.sql.classic.dataframe import DataFrame as Classic  # PySpark >= 4
    except ImportError:
        from pyspark.sql import DataFrame as Classic
    return Classic(jdf, spark)


def _sink_log_read(spark: SparkSession) -> bool:
    return str(spark.conf.get(_SINK_LOG_IGNORED_CONF, "false")).strip().lower() != "true"


# What a URI's path keeps as it is (java.net.URI's unreserved and punctuation characters of a
# path); everything else is percent-encoded (UTF-8), as Hadoop's Path makes its URI.
_URI_PATH_SAFE = "-_.!~*'();:@&=+$,/"


def _file_uri(path: str) -> str:
    """The URI Hadoop's `new Path(path).toUri()` gives a plan path (`s3://` as `s3a://`)."""
    from urllib.parse import quote

    from icefloe._io import is_local, local_path

    if is_local(path):
        return "file://" + quote(local_path(path), safe=_URI_PATH_SAFE)
    scheme = _scheme(path)
    authority, slash, key = path[len(scheme) + 1 :].removeprefix("//").partition("/")
    scheme = "s3a" if scheme in S3A_SCHEMES else scheme
    return f"{scheme}://{authority}{slash}{quote(key, safe=_URI_PATH_SAFE)}"


def _logged_files_frame(jreader: Any, files: PlainFiles) -> Any:
    """The JVM Dataset of Spark's Parquet source (`jreader`, a JVM DataFrameReader) over
    `files` listed in a file stream sink log (a local temporary directory), so that Spark's
    file index takes the plan's paths and sizes as they are: no status call per file on the
    driver (on S3 three requests a file: a HEAD for the existence check, a HEAD and a LIST for
    the listing; locally two system calls) and one path to pass over py4j, not one per file.
    `recursiveFileLookup` keeps Spark from inferring Hive partitions from Iceberg's `k=v` paths.
    The index reads the log when it is made, here, and never again (its refresh is a no-op),
    so the directory is removed at once."""
    import json
    import shutil
    import tempfile
    from pathlib import Path

    root = Path(tempfile.mkdtemp(prefix="icefloe-files-"))
    try:
        (root / _SINK_LOG_DIR).mkdir()
        lines = ["v1"]
        for path, size, _records in files.files:
            status = {
                "path": _file_uri(path),
                "size": size,
                "isDir": False,
                "modificationTime": 0,
                "blockReplication": 1,
                "blockSize": 32 << 20,
                "action": "add",
            }
            lines.append(json.dumps(status, separators=(",", ":")))
        (root / _SINK_LOG_DIR / "0").write_text("\n".join(lines), encoding="utf-8")
        return jreader.option("recursiveFileLookup", "true").load(root.as_uri())
    finally:
        shutil.rmtree(root, ignore_errors=True)
