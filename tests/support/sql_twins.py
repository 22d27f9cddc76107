"""The catalogs of `icefloe.spark.sql`'s twin tests (tests/spark/test_spark_sql.py and the
documentation pages' Writes and Queries examples): one warehouse both engines query, and twin
tables written by Java's Spark SQL and by icefloe.spark.sql, compared through Java's API."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark

from support.catalogs import java_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows, compared_properties, java_identifier, java_metadata


class SqlTwins:
    """A test module's catalogs: `icefloe.spark.sql` with them, Java's SQL, Java's tables.
    `q`: queries (Java's and icefloe's catalog on one warehouse); `j`: Java's twin (Spark) and
    icefloe's twin (icefloe) under one name; `k`: Spark's catalog on icefloe's twin's warehouse.
    Spark keeps a catalog once loaded, so each module names its own."""

    def __init__(self, spark: Any, root: Path, q: str, j: str, k: str) -> None:
        self.spark = spark
        self.q, self.j, self.k = q, j, k
        Q, J, K = q, j, k
        self.wh = {Q: root / "q", J: root / "j", K: root / "k"}
        for path in self.wh.values():
            path.mkdir()
        for name in (Q, J, K):
            set_java_catalog(
                spark,
                name,
                java_catalog_conf("filesystem", {"warehouse": str(self.wh[name])}, self.wh[name], None),
            )
        self.catalogs = {
            Q: icefloe.load_catalog(Q, type="filesystem", warehouse=str(self.wh[Q])),
            J: icefloe.load_catalog(J, type="filesystem", warehouse=str(self.wh[K])),
        }
        self._java: dict[str, Any] = {}

    def ice(self, text: str) -> Any:
        return icefloe.spark.sql(self.spark, text, catalogs=self.catalogs)

    def java(self, text: str) -> Any:
        return self.spark.sql(text)

    def both(self, text: str) -> None:
        """A twin-table statement: Java's on `sqlj`, icefloe's on its `sqlj`."""
        self.java(text).collect()
        self.ice(text).collect()

    def setup(self, text: str) -> None:
        """Java runs `text` (naming `sqlj`) on both twins."""
        self.java(text).collect()
        self.java(text.replace(f"{self.j}.", f"{self.k}.")).collect()

    def java_table(self, catalog: str, ident: str) -> Any:
        if catalog not in self._java:
            conf = self.spark._jsc.hadoopConfiguration()
            jvm = self.spark._jvm
            self._java[catalog] = jvm.org.apache.iceberg.hadoop.HadoopCatalog(
                conf, f"file://{self.wh[catalog]}"
            )
        return self._java[catalog].loadTable(java_identifier(ident))

    def assert_same_table(self, ident: str, columns: str = "*") -> None:
        """`sqlj.<ident>` (Java's twin) and icefloe's twin hold the same rows, read by Java
        and by icefloe, and have the same schema, spec and properties."""
        java_rows = self.java(f"SELECT {columns} FROM {self.j}.{ident}")
        assert_same_rows(
            self.java(f"SELECT {columns} FROM {self.k}.{ident}"), java_rows, context="Java reads"
        )
        assert_same_rows(
            self.ice(f"SELECT {columns} FROM {self.j}.{ident}"), java_rows, context="icefloe reads"
        )
        self.assert_same_metadata(ident)

    def assert_same_metadata(self, ident: str) -> None:
        java, ours = self.java_table(self.j, ident), self.java_table(self.k, ident)
        assert str(ours.schema().toString()) == str(java.schema().toString())
        assert str(ours.spec().toString()) == str(java.spec().toString())
        jm, om = java_metadata(java), java_metadata(ours)
        assert compared_properties(om) == compared_properties(jm)
        assert om["format-version"] == jm["format-version"]


def timestamp_text(value: Any) -> str:
    """A Spark timestamp as the text `TIMESTAMP AS OF '...'` takes (UTC when zoned)."""
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f") if value.tzinfo else str(value)
