"""Apache Iceberg Java (the oracle) as seen from the tests, plus a sound row comparison.

``Oracle`` wraps the session's Spark catalog ``oracle`` (Iceberg ``SparkCatalog``, type ``hadoop``)
and the Iceberg Java API reached over py4j. ``canonical_*`` / ``assert_same_rows`` compare rows
from Arrow tables, Spark DataFrames and collected Spark rows in one canonical form:

- NaN equals NaN; -0.0 and +0.0 are different; +-inf are values like any other;
- decimals are exact, scale included (14.20 is not 14.2);
- timestamps become UTC microseconds since the epoch (naive values are taken as UTC: the
  suite runs with TZ=UTC and Spark session time zone UTC), dates become days since the epoch;
- binary values compare as bytes, strings as str;
- structs compare field by field (by name), lists element by element, maps as sorted
  (key, value) pairs;
- rows are sorted canonically before comparing, so the order rows come back in never matters.

The conversion is driven by the declared type (Arrow type or Spark type), never by guessing from
Python values: an Arrow struct and a Spark map are both ``dict``s in Python, for example.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

CATALOG = "oracle"


def side_jar(runtime_jar: str, pattern: str) -> str | None:
    """The jar matching `pattern` (`iceberg-aws-bundle-*.jar`, `sqlite-jdbc-*.jar`, ...) that
    `make oracle` puts next to the runtime jar: for Iceberg's own artifacts the one of the
    runtime's version when present (one Iceberg on the classpath), else the newest."""
    folder = Path(runtime_jar).parent
    version = re.search(r"-(\d+\.\d+\.\d+)\.jar$", runtime_jar)
    if version and pattern.startswith("iceberg-"):
        same = folder / pattern.replace("*", version.group(1))
        if same.is_file():
            return str(same)
    jars = sorted(
        folder.glob(pattern), key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p.name)]
    )
    return str(jars[-1]) if jars else None


def oracle_session_conf(warehouse: Any) -> dict[str, str]:
    """The Spark settings every session with the oracle needs (the test suite's and the
    benchmarks'): Iceberg Java's SQL extensions, the ``oracle`` catalog (a HadoopCatalog on
    ``warehouse``) with its table cache off (icefloe commits behind Spark's back, so a cached
    table would be stale), Arrow for PySpark, UTC, no UI."""
    return {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{CATALOG}.type": "hadoop",
        f"spark.sql.catalog.{CATALOG}.warehouse": f"file://{warehouse}",
        f"spark.sql.catalog.{CATALOG}.cache-enabled": "false",
    }


_EPOCH_NAIVE = dt.datetime(1970, 1, 1)
_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_EPOCH_DATE = dt.date(1970, 1, 1)

# Canonical tags: values of different kinds never compare with each other except through the tag.
_NULL, _BOOL, _INT, _FLOAT, _DEC, _STR, _BYTES, _DATE, _TS, _STRUCT, _LIST, _MAP = range(12)


# ------------------------------------------------------------------------------------------------
# canonical values
# ------------------------------------------------------------------------------------------------


def _canon_float(v: float) -> tuple[Any, ...]:
    v = float(v)
    if math.isnan(v):
        return (_FLOAT, 1, 0.0, 0.0)
    return (_FLOAT, 0, v, math.copysign(1.0, v))


def _canon_decimal(v: decimal.Decimal) -> tuple[Any, ...]:
    return (_DEC, v, v.as_tuple().exponent)


def _micros(v: dt.datetime) -> int:
    if v.tzinfo is None:
        return (v - _EPOCH_NAIVE) // dt.timedelta(microseconds=1)
    return (v - _EPOCH_UTC) // dt.timedelta(microseconds=1)


def _canon_timestamp(v: Any) -> tuple[Any, ...]:
    if isinstance(v, int):
        return (_TS, v)
    if hasattr(v, "to_pydatetime") and hasattr(v, "value"):  # pandas.Timestamp (ns)
        ns = int(v.value)
        if ns % 1000:
            raise AssertionError(f"timestamp {v!r} has sub-microsecond precision")
        return (_TS, ns // 1000)
    assert isinstance(v, dt.datetime), f"not a timestamp: {v!r}"
    return (_TS, _micros(v))


def _canon_date(v: Any) -> tuple[Any, ...]:
    if isinstance(v, dt.datetime):
        raise AssertionError(f"expected a date, got a datetime: {v!r}")
    assert isinstance(v, dt.date), f"not a date: {v!r}"
    return (_DATE, (v - _EPOCH_DATE).days)


def canonical_arrow_value(v: Any, t: pa.DataType) -> tuple[Any, ...]:
    """Canonical form of a Python value produced by ``to_pylist()`` for Arrow type ``t``."""
    if v is None:
        return (_NULL,)
    if pa.types.is_boolean(t):
        return (_BOOL, bool(v))
    if pa.types.is_integer(t):
        return (_INT, int(v))
    if pa.types.is_floating(t):
        return _canon_float(v)
    if pa.types.is_decimal(t):
        return _canon_decimal(v)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or _is_string_view(t):
        return (_STR, str(v))
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return (_BYTES, bytes(v))
    if _is_binary_view(t):
        return (_BYTES, bytes(v))
    if pa.types.is_date(t):
        return _canon_date(v)
    if pa.types.is_timestamp(t):
        return _canon_timestamp(v)
    if pa.types.is_struct(t):
        return (_STRUCT, tuple((f.name, canonical_arrow_value(v.get(f.name), f.type)) for f in t))
    if pa.types.is_map(t):
        pairs = v.items() if isinstance(v, dict) else v
        return (
            _MAP,
            tuple(
                sorted(
                    (canonical_arrow_value(k, t.key_type), canonical_arrow_value(x, t.item_type))
                    for k, x in pairs
                )
            ),
        )
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or _is_list_view(t):
        return (_LIST, tuple(canonical_arrow_value(x, t.value_type) for x in v))
    if pa.types.is_dictionary(t):
        return canonical_arrow_value(v, t.value_type)
    raise TypeError(f"no canonical form for Arrow type {t}")


def _is_string_view(t: pa.DataType) -> bool:
    f = getattr(pa.types, "is_string_view", None)
    return bool(f and f(t))


def _is_binary_view(t: pa.DataType) -> bool:
    f = getattr(pa.types, "is_binary_view", None)
    return bool(f and f(t))


def _is_list_view(t: pa.DataType) -> bool:
    f = getattr(pa.types, "is_list_view", None)
    g = getattr(pa.types, "is_large_list_view", None)
    return bool((f and f(t)) or (g and g(t)))


def canonical_spark_value(v: Any, t: Any) -> tuple[Any, ...]:
    """Canonical form of a value of a collected Spark ``Row`` for Spark SQL type ``t``."""
    from pyspark.sql import types as T

    if v is None:
        return (_NULL,)
    if isinstance(t, T.BooleanType):
        return (_BOOL, bool(v))
    if isinstance(t, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return (_INT, int(v))
    if isinstance(t, (T.FloatType, T.DoubleType)):
        return _canon_float(v)
    if isinstance(t, T.DecimalType):
        return _canon_decimal(v)
    if isinstance(t, T.StringType):
        return (_STR, str(v))
    if isinstance(t, T.BinaryType):
        return (_BYTES, bytes(v))
    if isinstance(t, T.DateType):
        return _canon_date(v)
    if isinstance(t, (T.TimestampType, T.TimestampNTZType)):
        return _canon_timestamp(v)
    if isinstance(t, T.StructType):
        return (_STRUCT, tuple((f.name, canonical_spark_value(v[f.name], f.dataType)) for f in t.fields))
    if isinstance(t, T.ArrayType):
        return (_LIST, tuple(canonical_spark_value(x, t.elementType) for x in v))
    if isinstance(t, T.MapType):
        return (
            _MAP,
            tuple(
                sorted(
                    (canonical_spark_value(k, t.keyType), canonical_spark_value(x, t.valueType))
                    for k, x in v.items()
                )
            ),
        )
    raise TypeError(f"no canonical form for Spark type {t}")


# ------------------------------------------------------------------------------------------------
# canonical rows
# ------------------------------------------------------------------------------------------------


class CanonicalRows:
    """Sorted canonical rows plus the column names they came with."""

    def __init__(self, columns: Sequence[str], rows: Iterable[tuple[Any, ...]]) -> None:
        self.columns = list(columns)
        self.rows = sorted(rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"CanonicalRows(columns={self.columns}, {len(self.rows)} rows)"


def canonical_rows_from_arrow(table: pa.Table | pa.RecordBatch) -> CanonicalRows:
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    schema = table.schema
    cols = [table.column(i).to_pylist() for i in range(table.num_columns)]
    rows = (
        tuple(canonical_arrow_value(cols[c][r], schema.field(c).type) for c in range(table.num_columns))
        for r in range(table.num_rows)
    )
    return CanonicalRows(schema.names, rows)


def canonical_rows_from_spark(rows: Sequence[Any], schema: Any) -> CanonicalRows:
    """``rows``: collected ``Row``s (or tuples in schema order); ``schema``: a Spark StructType."""
    fields = schema.fields
    out = (tuple(canonical_spark_value(r[i], f.dataType) for i, f in enumerate(fields)) for r in rows)
    return CanonicalRows([f.name for f in fields], out)


def rows_per_filter(spark: Any, source: str, filters: Sequence[str]) -> list[CanonicalRows]:
    """The rows of `source` (a table or view name) under each of `filters` (Spark SQL), in one
    Spark job: a UNION ALL of one filtered scan per filter, each pushing its own filter (a query
    per filter cost a Spark job each)."""
    from pyspark.sql.types import StructType

    query = " UNION ALL ".join(
        f"SELECT {i} AS __filter, * FROM {source} WHERE {w}" for i, w in enumerate(filters)
    )
    df = spark.sql(query)
    schema = StructType(df.schema.fields[1:])
    groups: list[list[tuple[Any, ...]]] = [[] for _ in filters]
    for row in df.collect():
        groups[row[0]].append(tuple(row)[1:])
    return [canonical_rows_from_spark(g, schema) for g in groups]


def canonical_rows(data: Any) -> CanonicalRows:
    """Canonical rows of an Arrow Table / RecordBatch, a Spark DataFrame or a CanonicalRows."""
    if isinstance(data, CanonicalRows):
        return data
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return canonical_rows_from_arrow(data)
    if hasattr(data, "collect") and hasattr(data, "schema"):  # Spark DataFrame
        return canonical_rows_from_spark(data.collect(), data.schema)
    raise TypeError(f"cannot take canonical rows of {type(data)}")


def _show(row: tuple[Any, ...]) -> str:
    return repr(tuple(_plain(v) for v in row))


def _plain(v: tuple[Any, ...]) -> Any:
    """A readable rendering of a canonical value for failure messages."""
    tag = v[0]
    if tag == _NULL:
        return None
    if tag == _FLOAT:
        return float("nan") if v[1] else v[2]
    if tag == _DEC:
        return v[1]
    if tag == _DATE:
        return ("date", v[1], str(_EPOCH_DATE + dt.timedelta(days=v[1])))
    if tag == _TS:
        return ("ts_us", v[1], str(_EPOCH_NAIVE + dt.timedelta(microseconds=v[1])))
    if tag == _STRUCT:
        return {k: _plain(x) for k, x in v[1]}
    if tag == _LIST:
        return [_plain(x) for x in v[1]]
    if tag == _MAP:
        return {repr(_plain(k)): _plain(x) for k, x in v[1]}
    return v[1]


def assert_same_rows(actual: Any, expected: Any, *, check_columns: bool = True, context: str = "") -> None:
    """Assert ``actual`` and ``expected`` hold the same multiset of rows (and column names)."""
    a = canonical_rows(actual)
    e = canonical_rows(expected)
    where = f" ({context})" if context else ""
    if check_columns:
        assert a.columns == e.columns, f"column names differ{where}: {a.columns} != {e.columns}"
    if a.rows == e.rows:
        return
    missing = [r for r in e.rows if r not in a.rows]
    extra = [r for r in a.rows if r not in e.rows]
    lines = [f"rows differ{where}: actual {len(a.rows)} rows, expected {len(e.rows)} rows"]
    if missing:
        lines.append("expected but missing:")
        lines += ["  " + _show(r) for r in missing[:10]]
    if extra:
        lines.append("returned but not expected:")
        lines += ["  " + _show(r) for r in extra[:10]]
    if not missing and not extra:
        lines.append("same distinct rows, different multiplicities")
    raise AssertionError("\n".join(lines))


# ------------------------------------------------------------------------------------------------
# the oracle
# ------------------------------------------------------------------------------------------------


def _jiter(iterable: Any) -> Iterable[Any]:
    it = iterable.iterator()
    while it.hasNext():
        yield it.next()


def java_metadata(table: Any) -> dict[str, Any]:
    """The current metadata of Java's `table` (a py4j `org.apache.iceberg.Table` of the running
    SparkContext's JVM) as Iceberg's own JSON, parsed: one round trip. Walking it call by call
    costs one per value, and iterating a Java collection ends in an exception that PySpark
    converts with ~13 class lookups (the twin tests' metadata checks spent most of their py4j
    time there)."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    assert jvm is not None, "no SparkContext: Java's table lives in its JVM"
    text = jvm.org.apache.iceberg.TableMetadataParser.toJson(table.operations().current())
    parsed: dict[str, Any] = json.loads(text)
    return parsed


_JAVA_CLASSES: dict[str, Any] = {}


def java_identifier(ident: str) -> Any:
    """Java's `TableIdentifier` for `ident` (`db.t`). The class is looked up once: each
    `_jvm.a.b.c` walk is a py4j round trip and a class lookup a part."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    assert jvm is not None, "no SparkContext: Java's classes live in its JVM"
    if _JAVA_CLASSES.get("jvm") is not jvm:  # a new SparkContext: its own gateway
        _JAVA_CLASSES.clear()
        _JAVA_CLASSES.update(jvm=jvm, TableIdentifier=jvm.org.apache.iceberg.catalog.TableIdentifier)
    return _JAVA_CLASSES["TableIdentifier"].parse(ident)


def compared_properties(meta: dict[str, Any]) -> dict[str, str]:
    """The properties of a table's metadata (`java_metadata`) that twin tables must share: all
    but the Parquet codec, whose default the engines write differently."""
    return {k: v for k, v in meta.get("properties", {}).items() if k != "write.parquet.compression-codec"}


def java_plan(scan: Any) -> list[tuple[str, tuple[str, ...]]]:
    """(data file, its delete files sorted) of each task Java's `scan` (a py4j
    `org.apache.iceberg.TableScan` of the running SparkContext's JVM) plans.

    Each task crosses py4j as one JSON string (Iceberg's own `ScanTaskParser`): walking a task's
    objects call by call (file, location, deletes, ...) cost ~7 round trips a task, which made
    Java's side of a 1,000-task plan ~20x slower than its planning."""
    from pyspark import SparkContext

    jvm = SparkContext._jvm
    assert jvm is not None, "no SparkContext: Java's scan lives in its JVM"
    tasks = scan.planFiles()
    try:
        listed = jvm.org.apache.iceberg.relocated.com.google.common.collect.Lists.newArrayList(tasks)
        to_json = jvm.org.apache.iceberg.ScanTaskParser.toJson
        out = []
        for i in range(listed.size()):
            task = listed.get(i)
            try:
                doc = json.loads(to_json(task))
            except Exception:  # a Py4JJavaError, or PySpark's conversion of it
                # The parser writes every file with the task's spec and refuses a delete file of
                # another spec (after partition evolution): walk that task call by call.
                out.append((task.file().location(), tuple(sorted(d.location() for d in task.deletes()))))
                continue
            deletes = tuple(sorted(f["file-path"] for f in doc.get("delete-files", [])))
            out.append((doc["data-file"]["file-path"], deletes))
        return out
    finally:
        tasks.close()


def _plainify(v: Any) -> Any:
    """Spark Row values -> plain Python (Rows become dicts, recursively)."""
    if hasattr(v, "asDict"):
        return {k: _plainify(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, dict):
        return {k: _plainify(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plainify(x) for x in v]
    if isinstance(v, bytearray):
        return bytes(v)
    return v


class Oracle:
    """Iceberg Java on the test's SparkSession: SQL, metadata tables, and the Java API via py4j.

    Table names are ``"ns.table"`` identifiers inside the ``oracle`` catalog (whose warehouse is
    the session's ``warehouse`` folder, shared with icefloe's filesystem catalog).
    """

    def __init__(self, spark: Any, warehouse: str, catalog: str = CATALOG) -> None:
        self.spark = spark
        self.warehouse = str(warehouse)
        self.catalog = catalog
        self._jcatalog: Any = None

    # -- SQL ----------------------------------------------------------------------------------
    def qualified(self, table: str) -> str:
        return table if table.startswith(self.catalog + ".") else f"{self.catalog}.{table}"

    def sql(self, stmt: str) -> list[Any]:
        """Run a statement and return its collected rows."""
        return self.spark.sql(stmt).collect()

    def df(
        self,
        table: str,
        snapshot_id: int | None = None,
        columns: Sequence[str] | None = None,
        where: str | None = None,
    ) -> Any:
        """A DataFrame of the table read by Iceberg Java (optionally at a snapshot, projected, filtered)."""
        cols = ", ".join(f"`{c}`" for c in columns) if columns else "*"
        stmt = f"SELECT {cols} FROM {self.qualified(table)}"
        if snapshot_id is not None:
            stmt += f" VERSION AS OF {int(snapshot_id)}"
        if where:
            stmt += f" WHERE {where}"
        return self.spark.sql(stmt)

    def spark_filtered(self, table: str, where: str, columns: Sequence[str] | None = None) -> Any:
        """`where` applied by Spark itself to Java's unfiltered rows: the rows are made a local
        DataFrame first, so nothing is pushed into Iceberg (SQL's answer, whatever either
        engine prunes)."""
        full = self.df(table, columns=columns)
        return self.spark.createDataFrame(full.collect(), full.schema).where(where)

    def canonical(
        self,
        table: str,
        snapshot_id: int | None = None,
        columns: Sequence[str] | None = None,
        where: str | None = None,
    ) -> CanonicalRows:
        """The rows Java returns, in canonical form (see ``assert_same_rows``)."""
        return canonical_rows(self.df(table, snapshot_id, columns, where))

    def rows(
        self,
        table: str,
        snapshot_id: int | None = None,
        columns: Sequence[str] | None = None,
        where: str | None = None,
    ) -> list[tuple[Any, ...]]:
        """The rows Java returns, as tuples of Python values, sorted canonically."""
        df = self.df(table, snapshot_id, columns, where)
        schema = df.schema
        collected = df.collect()
        keyed = [
            (tuple(canonical_spark_value(r[i], f.dataType) for i, f in enumerate(schema.fields)), tuple(r))
            for r in collected
        ]
        keyed.sort(key=lambda kv: kv[0])
        return [r for _, r in keyed]

    def snapshots(self, table: str) -> list[dict[str, Any]]:
        """Rows of ``<t>.snapshots`` as dicts (``summary`` is a dict), oldest first (metadata order)."""
        order = {s.snapshotId(): i for i, s in enumerate(_jiter(self.java_table(table).snapshots()))}
        rows = [_plainify(r) for r in self.sql(f"SELECT * FROM {self.qualified(table)}.snapshots")]
        rows.sort(key=lambda r: order[r["snapshot_id"]])
        return rows

    def files(self, table: str, snapshot_id: int | None = None) -> list[dict[str, Any]]:
        """Rows of ``<t>.files`` (live data and delete files) as dicts, incl. ``readable_metrics``."""
        stmt = f"SELECT * FROM {self.qualified(table)}.files"
        if snapshot_id is not None:
            stmt += f" VERSION AS OF {int(snapshot_id)}"
        rows = [_plainify(r) for r in self.sql(stmt)]
        rows.sort(key=lambda r: r["file_path"])
        return rows

    def data_files(self, table: str, snapshot_id: int | None = None) -> list[dict[str, Any]]:
        return [f for f in self.files(table, snapshot_id) if f["content"] == 0]

    def snapshot_ids(self, table: str) -> list[int]:
        return [s["snapshot_id"] for s in self.snapshots(table)]

    def current_snapshot_id(self, table: str) -> int | None:
        snap = self.java_table(table).currentSnapshot()
        return None if snap is None else snap.snapshotId()

    # -- Java API ------------------------------------------------------------------------------
    @property
    def jvm(self) -> Any:
        return self.spark._jvm

    def java_catalog(self) -> Any:
        """An ``org.apache.iceberg.hadoop.HadoopCatalog`` on the shared warehouse (no caching)."""
        if self._jcatalog is None:
            conf = self.spark._jsc.hadoopConfiguration()
            self._jcatalog = self.jvm.org.apache.iceberg.hadoop.HadoopCatalog(
                conf, "file://" + self.warehouse
            )
        return self._jcatalog

    def java_table(self, table: str) -> Any:
        """A freshly loaded ``org.apache.iceberg.Table`` for ``"ns.table"``."""
        name = table[len(self.catalog) + 1 :] if table.startswith(self.catalog + ".") else table
        tid = self.jvm.org.apache.iceberg.catalog.TableIdentifier.parse(name)
        return self.java_catalog().loadTable(tid)

    def java_table_at(self, metadata_location: str) -> Any:
        """A read-only ``org.apache.iceberg.Table`` from a metadata JSON file (any catalog)."""
        jvm = self.jvm
        io = jvm.org.apache.iceberg.hadoop.HadoopFileIO(self.spark._jsc.hadoopConfiguration())
        ops = jvm.org.apache.iceberg.StaticTableOperations(metadata_location, io)
        return jvm.org.apache.iceberg.BaseTable(ops, metadata_location)

    def metadata_location(self, table: str) -> str:
        return self.java_table(table).operations().current().metadataFileLocation()

    def plan_file_paths(self, table: str, snapshot_id: int | None = None) -> list[str]:
        """Data file paths Java's planner returns for a full scan."""
        scan = self.java_table(table).newScan()
        if snapshot_id is not None:
            scan = scan.useSnapshot(int(snapshot_id))
        return sorted(path for path, _deletes in java_plan(scan))
