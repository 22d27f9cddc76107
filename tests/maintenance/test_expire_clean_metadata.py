"""`expire_snapshots(clean_expired_metadata=True)` against Iceberg Java 1.12's procedure of the
same option: after the expiry, the partition specs no retained snapshot's manifests use and the
schemas no retained snapshot names are dropped (never the default spec or the current schema),
in the same commit; and on its own, when nothing expires. Twins in time on one table restored
between the engines, then through the REST catalog (Java's server applies the
`remove-partition-specs` / `remove-schemas` updates icefloe sends)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import icefloe
import pyarrow as pa
import pytest
from icefloe.types import StringType
from support.catalogs import ARROW, catalog_props, rows
from support.oracle import Oracle, assert_same_rows
from support.servers.s3 import S3Server
from support.session import new_table_name

pytestmark = [pytest.mark.spark, pytest.mark.interop]


def _state(catalog: Any, name: str) -> dict[str, Any]:
    md = json.loads(catalog.load_table(name).metadata.to_json())
    return {
        "specs": sorted(s["spec-id"] for s in md["partition-specs"]),
        "schemas": sorted(s["schema-id"] for s in md["schemas"]),
        "default-spec-id": md["default-spec-id"],
        "current-schema-id": md["current-schema-id"],
        "snapshots": sorted(s["snapshot-id"] for s in md.get("snapshots", [])),
    }


def _java_expire(oracle: Oracle, name: str, **args: Any) -> None:
    parts = [f"table => '{name}'"] + [f"{k} => {v}" for k, v in args.items()]
    oracle.sql(f"CALL oracle.system.expire_snapshots({', '.join(parts)})")


def test_clean_expired_metadata_drops_what_java_drops(
    spark: Any, oracle: Oracle, catalog: Any, warehouse: Path, tmp_path: Path
) -> None:
    name = new_table_name("clean_md")
    q = oracle.qualified(name)
    oracle.sql(
        f"CREATE TABLE {q} (id BIGINT, region STRING) USING iceberg TBLPROPERTIES ('format-version'='2')"
    )
    oracle.sql(f"INSERT INTO {q} VALUES (1, 'eu'), (2, 'us')")  # spec 0, schema 0
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD region")
    oracle.sql(f"INSERT INTO {q} VALUES (3, 'eu')")  # spec 1
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN note STRING")  # schema 1
    oracle.sql(f"ALTER TABLE {q} ADD PARTITION FIELD bucket(4, id)")  # spec 2, the default
    # Every row rewritten under spec 2, then one more append: the last snapshot's manifests
    # are all of spec 2 (the overwrite's deleted-entry manifests are not carried on).
    oracle.sql(f"INSERT OVERWRITE {q} SELECT * FROM {q}")
    oracle.sql(f"INSERT INTO {q} VALUES (5, 'us', 'y')")
    oracle.sql(f"ALTER TABLE {q} ADD COLUMN extra INT")  # schema 2, no snapshot has it
    initial = _state(catalog, name)
    assert (len(initial["specs"]), len(initial["schemas"]), len(initial["snapshots"])) == (3, 3, 4)
    root = warehouse / "db" / name.split(".")[1]
    backup = tmp_path / "backup"
    shutil.copytree(root, backup)

    def restore() -> None:
        shutil.rmtree(root)
        shutil.copytree(backup, root)

    now = "TIMESTAMP '2999-01-01 00:00:00'"
    # Expire all but the last snapshot; then on its own, a clean with nothing to expire.
    for args in (
        {"older_than": now, "retain_last": 1, "clean_expired_metadata": "true"},
        {"older_than": now, "retain_last": 1, "clean_expired_metadata": "false"},
    ):
        restore()
        ours = catalog.load_table(name).maintenance.expire_snapshots(
            older_than=2**62, retain_last=1, clean_expired_metadata=args["clean_expired_metadata"] == "true"
        )
        assert ours.expired_snapshot_ids
        mine = _state(catalog, name)
        again = catalog.load_table(name).maintenance.expire_snapshots(
            older_than=2**62, retain_last=1, clean_expired_metadata=True
        )
        assert not again.expired_snapshot_ids
        mine_after = _state(catalog, name)
        assert_same_rows(oracle.df(name), catalog.load_table(name).scan().to_arrow(), context="after icefloe")

        restore()
        _java_expire(oracle, name, **args)
        java = _state(catalog, name)
        _java_expire(oracle, name, older_than=now, retain_last=1, clean_expired_metadata="true")
        java_after = _state(catalog, name)
        assert_same_rows(oracle.df(name), catalog.load_table(name).scan().to_arrow(), context="after Java")

        assert (mine, mine_after) == (java, java_after), args
        # The last snapshot's spec (2) and schema (1) and the current schema (2) are left.
        assert (java_after["specs"], java_after["schemas"]) == ([2], [1, 2])

    # Through SQL, the same.
    import icefloe.spark

    restore()
    call = (
        f"CALL ice.system.expire_snapshots(table => '{name}', older_than => {now}, retain_last => 1, "
        "clean_expired_metadata => true)"
    )
    (row,) = icefloe.spark.sql(spark, call, catalogs={"ice": catalog}).collect()
    state = _state(catalog, name)
    assert (state["specs"], state["schemas"]) == ([2], [1, 2])
    assert row["deleted_manifest_lists_count"] == 3  # of the 4 snapshots, all but the last


@pytest.fixture
def rest(rest_uri: str, s3: S3Server, tmp_path: Path) -> Any:
    return icefloe.load_catalog(**catalog_props("rest", tmp_path, rest_uri=rest_uri, s3=s3))


def test_clean_expired_metadata_through_the_rest_catalog(rest: Any) -> None:
    ns = f"ns_{uuid.uuid4().hex[:8]}"
    rest.create_namespace(ns)
    t = rest.create_table(f"{ns}.t", schema=ARROW)
    t.append(rows(range(3)))
    with t.update_spec() as u:
        u.add_field("name")
    t.overwrite(rows(range(6)), overwrite_filter="id >= 0")  # every row rewritten under spec 1
    with t.update_schema() as s:
        s.add_column("extra", StringType())
    t.append(pa.table({"id": [6], "name": ["n6"], "extra": ["e"]}, schema=t.schema().as_arrow()))
    result = t.maintenance.expire_snapshots(older_than=2**62, retain_last=1, clean_expired_metadata=True)
    assert len(result.expired_snapshot_ids) == 2  # of the 3 snapshots
    md = json.loads(rest.load_table(f"{ns}.t").metadata.to_json())
    # The server applied the removals: the last snapshot's spec (1) and schema (1) are left.
    assert [s["spec-id"] for s in md["partition-specs"]] == [1]
    assert [s["schema-id"] for s in md["schemas"]] == [1]
    assert sorted(rest.load_table(f"{ns}.t").scan().to_arrow().column("id").to_pylist()) == list(range(7))
