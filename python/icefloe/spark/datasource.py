"""The Spark data source `icefloe` (PySpark >= 4.0, Python Data Source API).

    icefloe.spark.register(spark)
    spark.read.format("icefloe").options(warehouse="/wh").load("db.table")
    df.write.format("icefloe").mode("append").save("db.table")
    spark.readStream.format("icefloe").load("db.table")

The driver-side methods (`schema`, planning, `commit`) run in Python processes Spark starts
on the driver, not in the user's process: everything they need travels in the data source's
options and in the catalogs `register` captured from the session's configuration
(`icefloe.catalog.<name>.<property>`). Reads and writes run in Rust on the executors, as
the `icefloe.spark` functions do; the driver commits one snapshot per write.

Table names: `db.table` in the catalog named by the `catalog` option (default `default`),
or `name.db.table` when `name` is a catalog registered for the session. Options that are
not read or write options are catalog properties (`warehouse`, `uri`, `type`, `s3.*`, ...),
merged over the session's properties of that catalog.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icefloe.exceptions import ValidationError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from icefloe.table import Table

__all__ = ["CONF_PREFIX", "SourceOptions", "register"]

# Session configuration of catalogs: `icefloe.catalog.<name>.<property>`.
CONF_PREFIX = "icefloe.catalog."

# Options of reads, writes and streams; every other option is a catalog property.
READ_OPTIONS = frozenset(
    {
        "snapshot-id",
        "as-of-timestamp",
        "branch",
        "tag",
        "start-snapshot-id",
        "end-snapshot-id",
        "split-size",
        "selected-fields",
    }
)
WRITE_OPTIONS = frozenset({"overwrite-mode", "overwrite-filter", "replacewhere", "snapshot-property"})
# The streaming source's own options (checked by `_source_stream.stream_options`).
STREAM_READ_OPTIONS = (
    "max-files-per-trigger",
    "max-records-per-trigger",
    "streaming-max-files-per-micro-batch",  # Iceberg Java's names of the two limits
    "streaming-max-rows-per-micro-batch",
    "stream-from-timestamp",
    "streaming-skip-overwrite-snapshots",
    "streaming-skip-delete-snapshots",
)
STREAM_OPTIONS = frozenset(
    {
        *STREAM_READ_OPTIONS,
        "query-id",
        "checkpointlocation",
        "upsert-enabled",
        "key-columns",
        "delete-column",
    }
)
_NOT_CATALOG = READ_OPTIONS | WRITE_OPTIONS | STREAM_OPTIONS | {"path", "catalog"}


@dataclass(frozen=True)
class SourceOptions:
    """A data source's options, split: the table's catalog (name, properties), the table
    identifier, and the read/write/stream options (keys lower-case, as Spark gives them)."""

    catalog_name: str
    catalog_properties: Mapping[str, str]
    identifier: str
    options: Mapping[str, str]

    @staticmethod
    def parse(options: Mapping[str, str], session_catalogs: Mapping[str, Mapping[str, str]]) -> SourceOptions:
        opts = {str(k).lower(): str(v) for k, v in options.items()}
        path = opts.get("path")
        if not path:
            raise ValidationError(
                'the icefloe data source needs a table name: load("db.table") or save("db.table")'
            )
        parts = path.split(".")
        name = opts.get("catalog")
        if name is None and len(parts) >= 3 and parts[0] in session_catalogs:
            name, path = parts[0], ".".join(parts[1:])
        name = name or "default"
        props = dict(session_catalogs.get(name, {}))
        props.update(
            {
                k: v
                for k, v in opts.items()
                if not k.startswith("snapshot-property.") and k not in _NOT_CATALOG
            }
        )
        if not props:
            known = ", ".join(sorted(session_catalogs)) or "none"
            if opts.get("catalog") is None and len(parts) >= 3:
                # `load("nocat.db.t")`: most likely a catalog name that was never registered.
                raise ValidationError(
                    f"{parts[0]!r} in {opts['path']!r} is not a catalog registered for the session "
                    f"(registered: {known}): set spark.conf '{CONF_PREFIX}{parts[0]}.warehouse' "
                    f"(or uri/type) before icefloe.spark.register(spark); for a table in a nested "
                    f"namespace of the default catalog, set '{CONF_PREFIX}default.*'"
                )
            raise ValidationError(
                f"no properties for catalog {name!r} of table {path!r}: set spark.conf "
                f"'{CONF_PREFIX}{name}.warehouse' (or uri/type) before icefloe.spark.register(spark), "
                f"or pass them as options (catalogs registered for the session: {known})"
            )
        rest = {k: v for k, v in opts.items() if k in READ_OPTIONS | WRITE_OPTIONS | STREAM_OPTIONS}
        rest.update({k: v for k, v in opts.items() if k.startswith("snapshot-property.")})
        return SourceOptions(name, props, path, rest)

    def load_table(self) -> Table:
        from icefloe.catalog import load_catalog

        return load_catalog(self.catalog_name, **self.catalog_properties).load_table(self.identifier)

    def int_option(self, key: str) -> int | None:
        value = self.options.get(key)
        if value is None or value == "":
            return None
        try:
            return int(value)
        except ValueError:
            raise ValidationError(f"option {key!r} must be an integer, found {value!r}") from None

    def bool_option(self, key: str) -> bool:
        value = self.options.get(key, "false").strip().lower()
        if value not in ("true", "false"):
            raise ValidationError(f"option {key!r} must be true or false, found {value!r}")
        return value == "true"

    def snapshot_properties(self) -> dict[str, str]:
        """`snapshot-property.<key>` options: properties of the snapshots a write commits."""
        prefix = "snapshot-property."
        return {k[len(prefix) :]: v for k, v in self.options.items() if k.startswith(prefix)}


def session_catalogs(spark: SparkSession) -> dict[str, dict[str, str]]:
    """The catalogs configured in the session: `icefloe.catalog.<name>.<property>`."""
    conf: Any = getattr(spark.conf, "getAll")  # noqa: B009 (a property from PySpark 4.0 on)
    if callable(conf):  # a method before PySpark 4.0's property
        conf = conf()
    found: dict[str, dict[str, str]] = {}
    for key, value in dict(conf).items():
        if key.startswith(CONF_PREFIX):
            name, _, prop = key[len(CONF_PREFIX) :].partition(".")
            if name and prop:
                found.setdefault(name, {})[prop] = value
    return found


# Sessions `register` ran in (weakly held, so a later session given a dead one's id() is
# never taken for it) and what each was registered with.
_REGISTERED: weakref.WeakKeyDictionary[Any, tuple[dict[str, dict[str, str]], bool, int]] = (
    weakref.WeakKeyDictionary()
)
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
# Where Spark keeps what a Python reader planned while filters were pushed (see
# `pushdown_is_scan_scoped`).
_SCAN_BUILDER = "org.apache.spark.sql.execution.datasources.v2.python.PythonScanBuilder"


def pushdown_is_scan_scoped(spark: SparkSession) -> bool:
    """Whether this Spark keeps the read a Python reader planned in `pushFilters` with the
    one scan that pushed the filters.

    Spark 4.1.0 to 4.3.0 (every release with Python filter pushdown) store it on the
    DataFrame's data source object (`PythonDataSourceV2.setReadInfo`), which every scan of
    that DataFrame shares: a second query on the DataFrame (or on a temp view of it) that
    pushes nothing reads the files the first query's filter kept, and two scans of one plan
    (a union, a self-join, a subquery) both read the files of whichever pushed last. Rows
    are lost silently (icefloe issue 39). Spark's fix keeps the read with the scan
    (`PythonScanBuilder.readInfo`); filters are pushed only where that field exists. Under
    Spark Connect (no JVM in this process) nothing can be checked, and nothing is pushed."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return False
    try:
        fields = jvm.java.lang.Class.forName(_SCAN_BUILDER).getDeclaredFields()
        return any(str(f.getName()) == "readInfo" for f in fields)
    except Exception:
        return False


def register(spark: SparkSession) -> None:
    """Registers the data source `icefloe` in the session (PySpark >= 4.0), with the
    catalogs configured in its `icefloe.catalog.<name>.<property>` settings at this moment
    (call it again after changing them; calling it again without a change does nothing).
    Batch reads size their splits for the session's parallelism at this moment too (the
    task slots or `spark.sql.shuffle.partitions`, whichever is larger), as
    `icefloe.spark.read` and Iceberg's Spark scans do; option `split-size` overrides it.

    Spark's filters are pushed into planning only on a Spark that keeps what a reader
    planned with the scan that pushed them (`pushdown_is_scan_scoped`; no release up to
    4.3.0 does). There this turns on `spark.sql.python.filterPushdown.enabled` unless the
    session set it to false. Elsewhere every filter stays Spark's, and each query of a
    DataFrame reads all of its files: use the `icefloe.spark` functions (`read` with a
    `row_filter`) to prune files by a filter."""
    import pyspark

    major = int(pyspark.__version__.split(".")[0])
    if major < 4:
        raise ValidationError(
            f"format('icefloe') needs PySpark 4.0 or newer (this is {pyspark.__version__}); "
            "on PySpark 3.5 use the icefloe.spark functions (read, append, overwrite, ...)"
        )
    push_filters = pushdown_is_scan_scoped(spark)
    if push_filters and spark.conf.get(PUSHDOWN_CONF, None) is None:
        # Spark refuses a reader with pushFilters while Python filter pushdown is off.
        spark.conf.set(PUSHDOWN_CONF, "true")
    push_filters = push_filters and str(spark.conf.get(PUSHDOWN_CONF, "true")).lower() == "true"
    catalogs = session_catalogs(spark)
    # Spark's driver-side Python processes cannot ask the session: the parallelism batch
    # reads size their splits for (as icefloe.spark.read does) travels with the class.
    from icefloe.spark._session import scan_parallelism

    parallelism = scan_parallelism(spark)
    if _REGISTERED.get(spark) == (catalogs, push_filters, parallelism):
        return
    from icefloe.spark._source import source_class

    spark.dataSource.register(source_class(catalogs, push_filters, parallelism))  # type: ignore[attr-defined]
    _REGISTERED[spark] = (catalogs, push_filters, parallelism)
