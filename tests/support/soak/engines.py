"""The soak's step implementations (see `support.soak`): each step by Iceberg Java's Spark SQL
(or its procedures) on the oracle session, by icefloe's table API, or by `icefloe.spark`'s
functions."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from support.oracle import Oracle
from support.soak.files import ORPHAN_OLDER_THAN_DAYS, plant_orphans
from support.soak.history import BRANCH, History, Step
from support.soak.values import ICEBERG_TYPES, KINDS, NESTED_TYPES, UTC, Column, arrow_rows, sql_literal


class Engines:
    """The step implementations: Java's Spark SQL on the oracle session, and icefloe."""

    def __init__(self, spark: Any, oracle: Oracle, catalog: Any, tmp: Path) -> None:
        self.spark, self.oracle, self.catalog, self.tmp = spark, oracle, catalog, tmp
        self.files = 0
        self.planted: dict[str, list[Path]] = {}  # table -> the stray files its last orphan step planted
        # table -> the snapshot of the step running now (a rollback's or a cherry-pick's: the
        # runner chooses it alike on the three tables, see support.soak.targets)
        self.targets: dict[str, int] = {}
        # table -> whether `id` is its identifier field: icefloe's upserts then name no key
        self.keyed: dict[str, bool] = {}

    def _source_view(self, data: pa.Table) -> str:
        """The rows as a temp view Spark reads from Parquet (NaN, -0.0 and nulls kept apart)."""
        self.files += 1
        path = self.tmp / f"src-{self.files}.parquet"
        pq.write_table(data, path)
        view = f"soak_src_{self.files}"
        self.spark.read.parquet(str(path)).createOrReplaceTempView(view)
        return view

    def _plant(self, name: str, count: int) -> None:
        self.planted[name] = plant_orphans(self.catalog.load_table(name).location(), count)

    def create(self, name: str, history: History) -> None:
        def ddl(c: Any) -> str:
            not_null = " NOT NULL" if history.identifier and c.name == "id" else ""
            return f"{c.name} {KINDS[c.kind][0]}{not_null}"

        cols = ", ".join(ddl(c) for c in history.ddl_columns)
        part = f" PARTITIONED BY ({', '.join(p[1] for p in history.partition)})" if history.partition else ""
        props = ", ".join(f"'{k}'='{v}'" for k, v in history.props.items())
        q = self.oracle.qualified(name)
        self.oracle.sql(f"CREATE TABLE {q} ({cols}) USING iceberg{part} TBLPROPERTIES ({props})")
        if history.identifier:
            self.oracle.sql(f"ALTER TABLE {q} SET IDENTIFIER FIELDS id")
        self.keyed[name] = history.identifier

    def java(self, name: str, step: Step, columns: list[Column]) -> None:
        q = self.oracle.qualified(name)
        a = step.args
        sql = self.oracle.sql
        if step.kind in ("append", "append_java"):
            view = self._source_view(arrow_rows(a["rows"], columns))
            sql(f"INSERT INTO {q} SELECT {', '.join(c.name for c in columns)} FROM {view}")
        elif step.kind == "upgrade":
            sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('format-version'='{a['version']}')")
        elif step.kind == "set_property":
            sql(f"ALTER TABLE {q} SET TBLPROPERTIES ('{a['key']}'='{a['value']}')")
        elif step.kind == "delete":
            sql(f"DELETE FROM {q} WHERE {a['where']}")
        elif step.kind == "update":
            sql(f"UPDATE {q} SET {a['column']} = {sql_literal(a['value'], a['kind'])} WHERE {a['where']}")
        elif step.kind in ("merge", "upsert"):  # Java has no upsert: its MERGE INTO on the key is one
            view = self._source_view(arrow_rows(a["rows"], columns))
            deletes = (
                f"WHEN MATCHED AND s.id < {a['delete_below']} THEN DELETE " if step.kind == "merge" else ""
            )
            sql(
                f"MERGE INTO {q} t USING {view} s ON t.id = s.id {deletes}"
                "WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
            )
        elif step.kind == "dynamic_overwrite":
            view = self._source_view(arrow_rows(a["rows"], columns))
            self.spark.table(view).select(*[c.name for c in columns]).writeTo(q).overwritePartitions()
        elif step.kind == "add_column":
            sql(f"ALTER TABLE {q} ADD COLUMN {a['name']} {KINDS[a['kind']][0]}")
        elif step.kind == "rename_column":
            sql(f"ALTER TABLE {q} RENAME COLUMN {a['old']} TO {a['new']}")
        elif step.kind == "drop_column":
            sql(f"ALTER TABLE {q} DROP COLUMN {a['name']}")
        elif step.kind == "promote":
            sql(f"ALTER TABLE {q} ALTER COLUMN {a['name']} TYPE {KINDS[a['kind']][0]}")
        elif step.kind == "add_partition_field":
            sql(f"ALTER TABLE {q} ADD PARTITION FIELD {a['spark']}")
        elif step.kind == "compact":
            sql(
                f"CALL {self.oracle.catalog}.system.rewrite_data_files(table => '{name}', "
                "options => map('rewrite-all', 'true'))"
            )
        elif step.kind == "rewrite_manifests":
            sql(f"CALL {self.oracle.catalog}.system.rewrite_manifests('{name}')")
        elif step.kind == "branch_append":
            sql(f"ALTER TABLE {q} CREATE BRANCH IF NOT EXISTS {BRANCH}")
            view = self._source_view(arrow_rows(a["rows"], columns))
            sql(f"INSERT INTO {q}.branch_{BRANCH} SELECT {', '.join(c.name for c in columns)} FROM {view}")
        elif step.kind == "branch_delete":
            sql(f"DELETE FROM {q}.branch_{BRANCH} WHERE {a['where']}")
        elif step.kind == "concurrent":  # Java's twin: one after the other
            sql(f"DELETE FROM {q} WHERE {a['where']}")
            view = self._source_view(arrow_rows(a["rows"], columns))
            sql(f"INSERT INTO {q} SELECT {', '.join(c.name for c in columns)} FROM {view}")
        elif step.kind == "fast_forward":
            sql(f"CALL {self.oracle.catalog}.system.fast_forward('{name}', 'main', '{BRANCH}')")
        elif step.kind == "tag":
            sql(f"ALTER TABLE {q} CREATE TAG {a['name']}")
        elif step.kind == "rewrite_position_deletes":
            sql(
                f"CALL {self.oracle.catalog}.system.rewrite_position_delete_files(table => '{name}', "
                "options => map('rewrite-all', 'true'))"
            )
        elif step.kind == "sort_order":
            sql(f"ALTER TABLE {q} WRITE ORDERED BY {a['column']} {a['direction']} {a['nulls']}")
        elif step.kind == "sort_compact":
            sql(
                f"CALL {self.oracle.catalog}.system.rewrite_data_files(table => '{name}', "
                f"strategy => 'sort', sort_order => '{a['order']}', options => map('rewrite-all', 'true'))"
            )
        elif step.kind == "rollback":
            sql(f"CALL {self.oracle.catalog}.system.rollback_to_snapshot('{name}', {self.targets[name]})")
        elif step.kind == "cherrypick":
            sql(f"CALL {self.oracle.catalog}.system.cherrypick_snapshot('{name}', {self.targets[name]})")
        elif step.kind == "remove_orphans":
            self._plant(name, a["count"])
            older = (dt.datetime.now(UTC) - dt.timedelta(days=ORPHAN_OLDER_THAN_DAYS)).replace(tzinfo=None)
            sql(
                f"CALL {self.oracle.catalog}.system.remove_orphan_files(table => '{name}', "
                f"older_than => TIMESTAMP '{older.isoformat(sep=' ', timespec='seconds')}')"
            )
        elif step.kind == "expire":
            sql(
                f"CALL {self.oracle.catalog}.system.expire_snapshots(table => '{name}', "
                f"older_than => TIMESTAMP '9999-12-31 00:00:00', retain_last => {a['retain_last']})"
            )
        else:
            raise AssertionError(step.kind)

    def spark_functions(self, name: str, step: Step, columns: list[Column]) -> None:
        """The step through `icefloe.spark`'s functions (Spark tasks write the files) where it
        has one: appends, dynamic overwrites, DELETE, UPDATE, MERGE and upserts, on `main` or
        the branch; every other step through icefloe's table API."""
        import icefloe.spark as ispark

        a = step.args
        if step.kind not in SPARK_FUNCTION_STEPS:
            self.icefloe(name, step, columns)
            return
        t = self.catalog.load_table(name)
        names = [c.name for c in columns]

        def frame() -> Any:
            return self.spark.table(self._source_view(arrow_rows(a["rows"], columns))).select(*names)

        if step.kind == "append":
            ispark.append(frame(), t)
        elif step.kind == "branch_append":
            if BRANCH not in t.refs():
                current = t.current_snapshot()
                with t.manage_snapshots() as ms:
                    ms.create_branch(current.snapshot_id if current else -1, BRANCH)
            ispark.append(frame(), t, branch=BRANCH)
        elif step.kind == "dynamic_overwrite":
            ispark.overwrite(frame(), t)
        elif step.kind == "delete":
            ispark.delete(self.spark, t, a["where"])
        elif step.kind == "branch_delete":
            ispark.delete(self.spark, t, a["where"], branch=BRANCH)
        elif step.kind == "update":
            ispark.update(self.spark, t, a["where"], {a["column"]: sql_literal(a["value"], a["kind"])})
        elif step.kind == "merge":
            m = ispark.merge(frame(), t, "target.id = source.id")
            m.when_matched_delete(f"source.id < {a['delete_below']}").when_matched_update_all()
            m.when_not_matched_insert_all().execute()
        elif step.kind == "upsert":
            ispark.upsert(frame(), t, join_cols=None if self.keyed.get(name) else ["id"])
        else:
            raise AssertionError(step.kind)

    def icefloe(self, name: str, step: Step, columns: list[Column]) -> None:
        if step.kind == "append_java":  # the rows of a v1 table, which icefloe does not write
            self.java(name, step, columns)
            return
        t = self.catalog.load_table(name)
        a = step.args
        if step.kind == "upgrade":
            with t.transaction() as tx:
                tx.upgrade_table_version(a["version"])
        elif step.kind == "set_property":
            with t.transaction() as tx:
                tx.set_properties({a["key"]: a["value"]})
        elif step.kind == "append":
            t.append(arrow_rows(a["rows"], columns))
        elif step.kind == "delete":
            t.delete(a["where"])
        elif step.kind == "update":
            t.update(a["where"], {a["column"]: a["value"]})
        elif step.kind == "merge":
            m = t.merge(arrow_rows(a["rows"], columns), "target.id = source.id")
            m.when_matched_delete(f"source.id < {a['delete_below']}").when_matched_update_all()
            m.when_not_matched_insert_all().execute()
        elif step.kind == "upsert":
            t.upsert(arrow_rows(a["rows"], columns), join_cols=None if self.keyed.get(name) else ["id"])
        elif step.kind == "dynamic_overwrite":
            t.dynamic_partition_overwrite(arrow_rows(a["rows"], columns))
        elif step.kind in ("add_column", "rename_column", "drop_column", "promote"):
            with t.update_schema() as u:
                if step.kind == "add_column":
                    u.add_column(a["name"], NESTED_TYPES.get(a["kind"]) or ICEBERG_TYPES[a["kind"]])
                elif step.kind == "rename_column":
                    u.rename_column(a["old"], a["new"])
                elif step.kind == "drop_column":
                    u.delete_column(a["name"])
                else:
                    u.update_column(a["name"], ICEBERG_TYPES[a["kind"]])
        elif step.kind == "add_partition_field":
            with t.update_spec() as s:
                s.add_field(a["column"], a["icefloe"])
        elif step.kind == "compact":
            t.maintenance.rewrite_data_files(rewrite_all=True)
        elif step.kind == "rewrite_manifests":
            t.maintenance.rewrite_manifests()
        elif step.kind == "branch_append":
            if BRANCH not in t.refs():
                current = t.current_snapshot()
                with t.manage_snapshots() as ms:
                    ms.create_branch(current.snapshot_id if current else -1, BRANCH)
            t.append(arrow_rows(a["rows"], columns), branch=BRANCH)
        elif step.kind == "branch_delete":
            t.delete(a["where"], branch=BRANCH)
        elif step.kind == "concurrent":
            _race(
                lambda: self.catalog.load_table(name).delete(a["where"]),
                lambda: self.catalog.load_table(name).append(arrow_rows(a["rows"], columns)),
            )
        elif step.kind == "fast_forward":
            with t.manage_snapshots() as ms:
                ms.fast_forward("main", BRANCH)
        elif step.kind == "tag":
            current = t.current_snapshot()
            with t.manage_snapshots() as ms:
                ms.create_tag(current.snapshot_id if current else -1, a["name"])
        elif step.kind == "rewrite_position_deletes":
            t.maintenance.rewrite_position_delete_files(rewrite_all=True)
        elif step.kind == "sort_order":
            with t.replace_sort_order() as o:
                add = o.asc if a["direction"] == "ASC" else o.desc
                add(a["column"], null_order=a["nulls"].lower().replace(" ", "-"))
        elif step.kind == "sort_compact":
            t.maintenance.rewrite_data_files(strategy="sort", sort_order=a["order"], rewrite_all=True)
        elif step.kind == "rollback":
            with t.manage_snapshots() as ms:
                ms.rollback_to_snapshot(self.targets[name])
        elif step.kind == "cherrypick":
            with t.manage_snapshots() as ms:
                ms.cherrypick_snapshot(self.targets[name])
        elif step.kind == "remove_orphans":
            self._plant(name, a["count"])
            t.maintenance.remove_orphan_files(
                older_than=dt.datetime.now(UTC) - dt.timedelta(days=ORPHAN_OLDER_THAN_DAYS)
            )
        elif step.kind == "expire":
            t.maintenance.expire_snapshots(
                older_than=dt.datetime(9999, 12, 31, tzinfo=UTC), retain_last=a["retain_last"]
            )
        else:
            raise AssertionError(step.kind)


def _race(*writes: Any) -> None:
    """Runs the writes in threads released together; raises the first error."""
    gate = threading.Barrier(len(writes))
    errors: list[BaseException] = []

    def run(write: Any) -> None:
        gate.wait()
        try:
            write()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(w,)) for w in writes]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]


SPARK_FUNCTION_STEPS = (
    "append",
    "branch_append",
    "dynamic_overwrite",
    "delete",
    "branch_delete",
    "update",
    "merge",
    "upsert",
)
