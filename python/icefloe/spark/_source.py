"""The `icefloe` DataSource class (see `icefloe.spark.datasource`): schema, and the batch
and streaming readers and writers of a table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pyspark.sql.datasource import DataSource

from icefloe.spark.datasource import STREAM_READ_OPTIONS, SourceOptions


class IcefloeDataSource(DataSource):
    """`format("icefloe")`. `register` makes a subclass carrying the session's catalogs
    (`_catalogs`), which Spark pickles by value into its driver-side Python processes."""

    _catalogs: Mapping[str, Mapping[str, str]] = {}
    _push_filters = False
    # The parallelism batch reads size their splits for (`register`: the session's).
    _parallelism: int | None = None

    @classmethod
    def name(cls) -> str:
        return "icefloe"

    def source_options(self) -> SourceOptions:
        """The parsed options. Every method Spark calls in its driver-side Python processes
        starts here, so this also gives those processes the worker set-up executors get
        (`prepare_worker`: Spark reuses them, and without it each call pays PySpark's
        per-call zipimport re-read and full gc; measured in the README)."""
        from icefloe.spark._worker import prepare_worker

        prepare_worker()
        return SourceOptions.parse(dict(self.options), self._catalogs)

    def schema(self) -> Any:
        from icefloe.spark._arrow import spark_arrow_schema, spark_schema
        from icefloe.spark._source_read import table_scan

        opts = self.source_options()
        # The streaming source's options are checked here too (see `stream_options`).
        if any(k in opts.options for k in STREAM_READ_OPTIONS):
            from icefloe.spark._source_stream import stream_options

            stream_options(opts)
        scan = table_scan(opts.load_table(), opts)
        return spark_schema(spark_arrow_schema(json.loads(scan.projection().to_json())))

    def reader(self, schema: Any) -> Any:
        from icefloe.spark._source_read import BatchReader, FilteringBatchReader

        cls = FilteringBatchReader if self._push_filters else BatchReader
        return cls(self.source_options(), self._parallelism)

    def writer(self, schema: Any, overwrite: bool) -> Any:
        from icefloe.spark._source_write import BatchWriter

        return BatchWriter(self.source_options(), schema, overwrite)

    def streamWriter(self, schema: Any, overwrite: bool) -> Any:
        from icefloe.spark._source_write import StreamWriter

        return StreamWriter(self.source_options(), schema, overwrite)

    def streamReader(self, schema: Any) -> Any:
        from icefloe.spark._source_stream import StreamReader

        return StreamReader(self.source_options())


def source_class(
    catalogs: Mapping[str, Mapping[str, str]], push_filters: bool, parallelism: int | None = None
) -> type[IcefloeDataSource]:
    """A subclass of IcefloeDataSource carrying `catalogs` and the scan `parallelism`: a
    class made here is not importable by name, so cloudpickle sends it (and its settings)
    by value."""
    frozen = {name: dict(props) for name, props in catalogs.items()}
    attrs = {
        "_catalogs": frozen,
        "_push_filters": push_filters,
        "_parallelism": parallelism,
        "__module__": __name__ + "._session",
    }
    return type("IcefloeDataSource", (IcefloeDataSource,), attrs)
