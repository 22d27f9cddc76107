"""Twin tables for `icefloe.spark.sql`'s DDL tests (tests/spark/test_spark_sql_ddl.py and the
documentation pages' examples, tests/spark/test_spark_sql_docs_ddl.py): the same statement text
run by Iceberg Java's Spark SQL on one table and by icefloe on its twin.

Twin tables are set up by Java with the same statements in two warehouses: Spark catalog
`ddlj` (Java's twin) and icefloe catalog `ddlj` (icefloe's twin, also Spark catalog `ddlk` for
Java's reads of it). A statement runs through Java on the one and through icefloe on the
other; the tables are then compared through Java's API: schema (identifier fields included),
spec, sort order, properties, format version, refs (by the position of their snapshot in the
table's history, since snapshot ids differ between twins) and rows read by both engines.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from pathlib import Path
from typing import Any

import icefloe
import icefloe.spark
import pytest

from support.catalogs import java_catalog_conf, set_java_catalog
from support.oracle import assert_same_rows, compared_properties, java_identifier, java_metadata

# The default catalog names. Spark keeps a catalog once it has loaded it, so each test file
# that makes twins in a session gives them names of its own.
J = "ddlj"  # Java's twin (Spark) and icefloe's twin (icefloe) under one name
K = "ddlk"  # Spark catalog on icefloe's twin warehouse: Java reads what icefloe wrote


class Twins:
    def __init__(self, spark: Any, root: Path, j: str = J, k: str = K) -> None:
        self.spark = spark
        self.j, self.k = j, k
        self.wh = {j: root / "j", k: root / "k"}
        for name, path in self.wh.items():
            path.mkdir()
            set_java_catalog(
                spark, name, java_catalog_conf("filesystem", {"warehouse": str(path)}, path, None)
            )
        self.catalogs = {j: icefloe.load_catalog(j, type="filesystem", warehouse=str(self.wh[k]))}
        self._java: dict[str, Any] = {}
        self.java(f"CREATE NAMESPACE IF NOT EXISTS {self.j}.db")
        self.java(f"CREATE NAMESPACE IF NOT EXISTS {self.k}.db")

    def ice(self, text: str) -> Any:
        return icefloe.spark.sql(self.spark, text, catalogs=self.catalogs)

    def java(self, text: str) -> Any:
        return self.spark.sql(text)

    def both(self, text: str) -> tuple[Any, Any]:
        """Java's statement on `ddlj`, icefloe's on its `ddlj`: (Java's rows, icefloe's DataFrame)."""
        return self.java(text).collect(), self.ice(text)

    def setup(self, text: str) -> None:
        self.java(text).collect()
        self.java(text.replace(f"{self.j}.", f"{self.k}.")).collect()

    def _hadoop_catalog(self, catalog: str) -> Any:
        """Java's HadoopCatalog on the twin's warehouse (made once)."""
        if catalog not in self._java:
            conf = self.spark._jsc.hadoopConfiguration()
            self._java[catalog] = self.spark._jvm.org.apache.iceberg.hadoop.HadoopCatalog(
                conf, f"file://{self.wh[catalog]}"
            )
        return self._java[catalog]

    def java_table(self, catalog: str, ident: str) -> Any:
        return self._hadoop_catalog(catalog).loadTable(java_identifier(ident))

    def exists(self, catalog: str, ident: str) -> bool:
        """Whether Java's catalog on the twin's warehouse has the table."""
        return bool(self._hadoop_catalog(catalog).tableExists(java_identifier(ident)))

    def twin(
        self,
        columns: str = "id bigint NOT NULL, region string NOT NULL, amount int, st struct<a: int, b: string>",
        rest: str = "",
    ) -> str:
        """A fresh `db.<name>` in both twins with two snapshots of three rows each."""
        name = f"db.t_{uuid.uuid4().hex[:8]}"
        self.setup(f"CREATE TABLE {self.j}.{name} ({columns}) USING iceberg {rest}")
        self.setup(
            f"INSERT INTO {self.j}.{name} VALUES (1, 'eu', 1, named_struct('a', 1, 'b', 'x')), "
            "(2, 'us', 2, null), (3, 'eu', 3, null)"
        )
        self.setup(
            f"INSERT INTO {self.j}.{name} VALUES (4, 'us', null, null), (5, 'apac', 5, null), "
            "(6, 'eu', 6, null)"
        )
        return name

    @staticmethod
    def refs(meta: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
        """Refs of a table's metadata (`java_metadata`) by name: (type, position of the snapshot
        by sequence number, retention)."""
        order = sorted((s.get("sequence-number", 0), s["snapshot-id"]) for s in meta.get("snapshots", []))
        position = {sid: i for i, (_seq, sid) in enumerate(order)}
        return {
            name: (
                ref["type"],
                position.get(ref["snapshot-id"]),
                ref.get("min-snapshots-to-keep"),
                ref.get("max-snapshot-age-ms"),
                ref.get("max-ref-age-ms"),
            )
            for name, ref in meta.get("refs", {}).items()
        }

    def assert_same_metadata(self, ident: str) -> None:
        java, ours = self.java_table(self.j, ident), self.java_table(self.k, ident)
        assert str(ours.schema().toString()) == str(java.schema().toString())
        assert str(ours.spec().toString()) == str(java.spec().toString())
        assert str(ours.sortOrder().toString()) == str(java.sortOrder().toString())
        jm, om = java_metadata(java), java_metadata(ours)

        def identifier_fields(meta: dict[str, Any]) -> set[int]:
            (schema,) = [s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"]]
            return set(schema.get("identifier-field-ids", []))

        # Field ids: the schemas' text (ids included) is equal above.
        assert identifier_fields(om) == identifier_fields(jm)
        assert compared_properties(om) == compared_properties(jm)
        assert om["format-version"] == jm["format-version"]
        assert self.refs(om) == self.refs(jm)

        def operations(meta: dict[str, Any]) -> list[str]:
            return [s.get("summary", {}).get("operation") for s in meta.get("snapshots", [])]

        assert operations(om) == operations(jm)

    def assert_same_table(self, ident: str) -> None:
        java_rows = self.java(f"SELECT * FROM {self.j}.{ident}")
        assert_same_rows(self.java(f"SELECT * FROM {self.k}.{ident}"), java_rows, context="Java reads")
        assert_same_rows(self.ice(f"SELECT * FROM {self.j}.{ident}"), java_rows, context="icefloe reads")
        self.assert_same_metadata(ident)

    def refused(
        self, ident: str, text: str, java_match: str, ice_error: type[Exception], ice_match: str
    ) -> None:
        """`text` refused by Java (a message matching `java_match`) and by icefloe (`ice_error`
        matching `ice_match`), and the twins still alike."""
        with pytest.raises(Exception, match=java_match):
            self.java(text).collect()
        with pytest.raises(ice_error, match=ice_match):
            self.ice(text)
        self.assert_same_table(ident)

    # ---- the documentation pages' examples (tests/spark/test_spark_sql_docs_*.py) ----
    def metadata_file(self, ident: str) -> str | None:
        """icefloe's twin's current metadata file, or None when there is no such table."""
        try:
            return str(self.java_table(self.k, ident).operations().current().metadataFileLocation())
        except Exception:
            return None

    def alike(self, ident: str, java_text: str, ice_text: str | None = None) -> bool:
        """Java's statement on its twin, icefloe's (the same text unless given) on its own: both
        ran and the twins are alike, or both refused and icefloe's twin is unchanged. True when
        both ran."""
        try:
            self.java(java_text).collect()
            java_error: Exception | None = None
        except Exception as e:  # Spark's AnalysisException, Java's exceptions through py4j
            java_error = e
        before = self.metadata_file(ident)
        try:
            self.ice(java_text if ice_text is None else ice_text)
            ice_error: Exception | None = None
        except Exception as e:
            ice_error = e
        if java_error is not None:
            assert ice_error is not None, f"Java refused {java_text!r} ({java_error}); icefloe ran it"
            assert self.metadata_file(ident) == before, f"icefloe refused {java_text!r} but changed the table"
            return False
        assert ice_error is None, f"Java ran {java_text!r}; icefloe refused it: {ice_error!r}"
        self.assert_same_metadata(ident)
        return True

    def page(
        self, ident: str, statements: list[str], names: tuple[str, ...] = ("prod.db.sample",), **subs: Any
    ) -> list[bool]:
        """A documentation page's statements on its table (`names`, as the page writes it; here
        the twins' `ident`), each `alike`; `{name}` placeholders take each twin's own value of
        `subs` (a pair: Java's, icefloe's). Whether each ran."""
        ran = []
        for text in statements:
            text = self.on_twin(text, ident, names)
            java = text.format(**{k: v[0] for k, v in subs.items()})
            ours = text.format(**{k: v[1] for k, v in subs.items()})
            ran.append(self.alike(ident, java, ours))
        return ran

    def on_twin(self, text: str, ident: str, names: tuple[str, ...]) -> str:
        """A page's statement with its table's names (`prod.db.sample`, `db.sample`) made the
        twins' table, in one pass (a longer name first)."""
        pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        return re.sub(rf"\b(?:{pattern})\b", f"{self.j}.{ident}", text)

    def snapshot_ids(self, ident: str) -> tuple[list[int], list[int]]:
        """Each twin's snapshot ids in commit order: (Java's, icefloe's)."""

        def ids(catalog: str) -> list[int]:
            table = self.java_table(catalog, ident)
            return [
                int(s.snapshotId()) for s in sorted(table.snapshots(), key=lambda s: int(s.sequenceNumber()))
            ]

        return ids(self.j), ids(self.k)

    # ---- procedures: `CALL` on both twins, result rows compared by snapshot position ----
    def history_ids(self, catalog: str, ident: str) -> list[int]:
        """The twin's (`catalog`: `j` Java's, `k` icefloe's) snapshot ids in commit order."""
        table = self.java_table(catalog, ident)
        return [int(s.snapshotId()) for s in sorted(table.snapshots(), key=lambda s: int(s.sequenceNumber()))]

    def history_times(self, catalog: str, ident: str) -> list[int]:
        """The twin's snapshots' commit times (epoch milliseconds) in commit order."""
        table = self.java_table(catalog, ident)
        return [
            int(s.timestampMillis()) for s in sorted(table.snapshots(), key=lambda s: int(s.sequenceNumber()))
        ]

    def changelog_rows(self, catalog: str, ident: str, query: str) -> list[str]:
        """A changelog query's rows (a view of `create_changelog_view`, `<table>.changes`),
        each commit snapshot by its position in the twin's history, sorted."""
        position = {s: i for i, s in enumerate(self.history_ids(catalog, ident))}
        rows = self.spark.sql(query).collect()
        return sorted(
            repr({**r.asDict(), "_commit_snapshot_id": position[r["_commit_snapshot_id"]]}) for r in rows
        )

    @staticmethod
    def timestamp_literal(millis: int) -> str:
        at = dt.datetime.fromtimestamp(millis / 1000, dt.timezone.utc)
        return f"TIMESTAMP '{at.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}'"

    def call(
        self, ident: str, template: str, compare: tuple[str, ...] | None = None, **per_side: Any
    ) -> tuple[list[Any], list[Any]]:
        """`template` run by Java on its twin and by icefloe on its own, with per-side values
        (`{s1}`: the second snapshot's id, `{t2}`: a time between the second and third snapshot,
        `{t}`: the table's full name, `{tn}` its name in the catalog; `per_side` values are
        pairs: Java's, icefloe's); the result columns must match, and the values (those in
        `compare`, or all), snapshot ids compared by their position in each twin's history.
        Both sides' rows."""
        sides = {}
        for catalog, side in ((self.j, 0), (self.k, 1)):
            ids, times = self.history_ids(catalog, ident), self.history_times(catalog, ident)
            values: dict[str, Any] = {f"s{i}": s for i, s in enumerate(ids)}
            values |= {f"t{i}": self.timestamp_literal(times[i] - 1) for i in range(len(times))}
            values |= {k: v[side] for k, v in per_side.items()}
            sides[catalog] = template.format(t=f"{self.j}.{ident}", tn=ident, **values)
        java_df = self.java(sides[self.j])
        java_rows = java_df.collect()
        ours_df = self.ice(sides[self.k])
        ours_rows = ours_df.collect()
        assert ours_df.schema.simpleString() == java_df.schema.simpleString()
        after = {c: self.history_ids(c, ident) for c in (self.j, self.k)}

        def norm(rows: list[Any], catalog: str) -> list[tuple[Any, ...]]:
            position = {s: f"S{i}" for i, s in enumerate(after[catalog])}
            keys = tuple(java_df.columns) if compare is None else compare
            return sorted(tuple(position.get(r[k], r[k]) for k in keys) for r in rows)

        assert norm(ours_rows, self.k) == norm(java_rows, self.j), sides[self.j]
        self.assert_same_metadata(ident)
        return java_rows, ours_rows
