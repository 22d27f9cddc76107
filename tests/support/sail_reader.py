"""Sail (PyPI `pysail`, a Spark-compatible engine in Rust) as a second reader of Iceberg tables:
its Spark Connect server started in this process on a free port, and a PySpark Connect client
session (`pyspark.sql.connect`, which needs `grpcio`, `grpcio-status` and
`googleapis-common-protos`) reading `spark.read.format("iceberg").load(<table location>)`.

Sail finds a table's current metadata itself from its location (the newest
`metadata/vN.metadata.json`, as a filesystem catalog lays it out); it does not take a metadata
file's path. Rows come back as the Arrow table the server sent, no pandas or Row conversion
in between. The client session is the Connect one only (no `SPARK_CONNECT_MODE_ENABLED`), so the
classic Spark session of the same process is untouched."""

from __future__ import annotations

from typing import Any

import pyarrow as pa


def version() -> str:
    import pysail

    return str(pysail.__version__)


class SailReader:
    """A running Sail server and a Connect session on it; `close()` stops both."""

    def __init__(self) -> None:
        from pysail.spark import SparkConnectServer
        from pyspark.sql.connect.session import SparkSession as ConnectSession

        self._server = SparkConnectServer("127.0.0.1", 0)
        self._server.start(background=True)
        address = self._server.listening_address
        if address is None:
            raise RuntimeError("the Sail Spark Connect server did not start")
        host, port = address
        self.remote = f"sc://{host}:{port}"
        self.session: Any = ConnectSession.builder.remote(self.remote).create()
        self.session.conf.set("spark.sql.session.timeZone", "UTC")

    def dataframe(self, location: str) -> Any:
        return self.session.read.format("iceberg").load(location)

    def read_iceberg(self, location: str) -> pa.Table:
        """The rows of the table at `location` (its folder, not a metadata file)."""
        df = self.dataframe(location)
        client = self.session.client
        table, _schema = client.to_table(df._plan.to_proto(client))
        return table

    def close(self) -> None:
        try:
            self.session.stop()
        finally:
            self._server.stop()
