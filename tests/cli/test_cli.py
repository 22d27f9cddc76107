"""The `icefloe` command, run as a user runs it: the installed console script in a
subprocess, against real tables. Output (rich text and `--json`), exit codes, the config
file (`~/.icefloe.yaml`, PyIceberg's `~/.pyiceberg.yaml`), errors on stderr without a
traceback unless `--verbose`. snapshots / history / refs are compared with Iceberg Java's
metadata tables of the same table (the filesystem catalog shares the oracle's warehouse)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import icefloe
import pytest
import yaml
from icefloe.partitioning import PartitionField, PartitionSpec
from support.cli import SCHEMA, rows, run, run_json


@pytest.fixture
def wh(tmp_path: Path) -> tuple[Path, icefloe.Catalog]:
    """A fresh filesystem warehouse with `db.events` (two appends) and an empty `db.other`."""
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    t = cat.create_table("db.events", schema=SCHEMA)
    t.append(rows(3))
    t.append(rows(2, 3, "b"))
    cat.create_table("db.other", schema=SCHEMA)
    return warehouse, cat


def test_console_script_runs_and_shows_its_version() -> None:
    assert run("version").stdout.strip() == icefloe.__version__
    assert run_json("version") == {"version": icefloe.__version__}
    assert "expire-snapshots" in run("--help").stdout


def test_list_namespaces_and_tables(wh: tuple[Path, icefloe.Catalog]) -> None:
    warehouse, _ = wh
    assert run("--warehouse", str(warehouse), "list").stdout.split() == ["db"]
    assert sorted(run("--warehouse", str(warehouse), "list", "db").stdout.split()) == [
        "db.events",
        "db.other",
    ]
    assert run_json("--warehouse", str(warehouse), "list") == ["db"]
    assert sorted(run_json("--warehouse", str(warehouse), "list", "db")) == ["db.events", "db.other"]


def test_describe_table_and_namespace(wh: tuple[Path, icefloe.Catalog]) -> None:
    warehouse, cat = wh
    t = cat.load_table("db.events")
    text = run("--warehouse", str(warehouse), "describe", "db.events").stdout
    for expected in ("Table format version", t.metadata_location, "Current schema", "id: required long"):
        assert expected in text, f"{expected!r} not in:\n{text}"
    for s in t.snapshots():
        assert str(s.snapshot_id) in text
    doc = run_json("--warehouse", str(warehouse), "describe", "db.events")
    assert doc["identifier"] == ["db", "events"]
    assert doc["metadata_location"] == t.metadata_location
    assert doc["metadata"]["table-uuid"] == t.metadata.table_uuid
    assert doc["metadata"]["current-snapshot-id"] == t.metadata.current_snapshot_id
    # Namespace properties live in a SQL catalog (the filesystem catalog has none).
    uri = f"sqlite:///{warehouse.parent / 'ns.db'}"
    sql = icefloe.load_catalog("default", uri=uri, warehouse=str(warehouse.parent / "sqlwh"))
    sql.create_namespace("sales", {"owner": "ana"})
    assert run_json("--uri", uri, "describe", "sales")["owner"] == "ana"
    assert "ana" in run("--uri", uri, "describe", "sales").stdout
    missing = run("--uri", uri, "describe", "nope", check=1)
    assert "NoSuchNamespaceError" in missing.stderr


def test_schema_spec_uuid_location(tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    cat = icefloe.load_catalog("local", warehouse=str(warehouse))
    cat.create_namespace("db")
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform="identity", name="kind"))
    t = cat.create_table("db.p", schema=SCHEMA, partition_spec=spec)
    w = ("--warehouse", str(warehouse))
    text = run(*w, "schema", "db.p").stdout
    assert "id" in text and "long" in text and "kind" in text and "string" in text
    assert run_json(*w, "schema", "db.p") == json.loads(t.schema().to_json())
    assert run_json(*w, "spec", "db.p") == json.loads(t.spec().to_json())
    assert "identity" in run(*w, "spec", "db.p").stdout
    assert run(*w, "uuid", "db.p").stdout.strip() == t.metadata.table_uuid
    assert run_json(*w, "uuid", "db.p") == {"uuid": t.metadata.table_uuid}
    assert run(*w, "location", "db.p").stdout.strip() == t.location()


@pytest.mark.spark
@pytest.mark.interop
def test_snapshots_history_and_refs_match_java_metadata_tables(
    catalog: icefloe.Catalog, warehouse: Path, oracle: Any, table_name: str
) -> None:
    t = catalog.create_table(table_name, schema=SCHEMA)
    t.append(rows(3))
    t.append(rows(2, 3, "b"))
    t.overwrite(rows(1, 10, "c"), "kind = 'a'")
    q = oracle.qualified(table_name)
    oracle.sql(f"ALTER TABLE {q} CREATE TAG first_tag AS OF VERSION {t.snapshots()[0].snapshot_id}")
    oracle.sql(f"ALTER TABLE {q} CREATE BRANCH audit RETAIN 7 DAYS")
    w = ("--warehouse", str(warehouse))

    java = oracle.snapshots(table_name)
    ours = run_json(*w, "snapshots", table_name)
    assert [s["snapshot_id"] for s in ours] == [s["snapshot_id"] for s in java]
    for o, j in zip(ours, java):
        assert o["parent_id"] == j["parent_id"]
        assert o["operation"] == j["operation"]
        assert o["manifest_list"] == j["manifest_list"]
        assert o["summary"] == j["summary"]
        assert o["committed_at"].startswith(j["committed_at"].strftime("%Y-%m-%dT%H:%M:%S")), (o, j)

    java_hist = [r.asDict() for r in oracle.sql(f"SELECT * FROM {oracle.qualified(table_name)}.history")]
    ours_hist = run_json(*w, "history", table_name)
    key = lambda r: r["snapshot_id"]  # noqa: E731
    assert sorted(
        [(r["snapshot_id"], r["parent_id"], r["is_current_ancestor"]) for r in ours_hist], key=lambda x: x[0]
    ) == sorted(
        [(r["snapshot_id"], r["parent_id"], r["is_current_ancestor"]) for r in java_hist], key=lambda x: x[0]
    )
    assert sorted(ours_hist, key=key)[0]["made_current_at"]

    java_refs = sorted(
        (r.asDict() for r in oracle.sql(f"SELECT * FROM {oracle.qualified(table_name)}.refs")),
        key=lambda r: r["name"],
    )
    ours_refs = run_json(*w, "refs", table_name)
    assert ours_refs == java_refs
    tags = run_json(*w, "list-refs", table_name, "--type", "tag")
    assert [r["name"] for r in tags] == ["first_tag"]
    text = run(*w, "snapshots", table_name).stdout
    assert "append" in text and "overwrite" in text and str(java[-1]["snapshot_id"]) in text
    assert "audit" in run(*w, "refs", table_name).stdout


def test_properties_get_set_remove(wh: tuple[Path, icefloe.Catalog]) -> None:
    warehouse, cat = wh
    w = ("--warehouse", str(warehouse))
    assert (
        run(*w, "properties", "set", "db.events", "owner", "ana").stdout.strip()
        == "Set owner=ana on db.events"
    )
    assert cat.load_table("db.events").properties["owner"] == "ana"
    # PyIceberg's words: `properties set table IDENT NAME VALUE`.
    run(*w, "properties", "set", "table", "db.events", "write.format.default", "parquet")
    assert run(*w, "properties", "get", "db.events", "owner").stdout.strip() == "ana"
    assert run_json(*w, "properties", "get", "table", "db.events", "owner") == "ana"
    got = run_json(*w, "properties", "get", "db.events")
    assert got == cat.load_table("db.events").properties
    assert got["owner"] == "ana" and got["write.format.default"] == "parquet"
    assert "owner" in run(*w, "properties", "get", "db.events").stdout

    out = run(*w, "properties", "remove", "db.events", "owner").stdout.strip()
    assert out == "Property owner removed from db.events"
    assert "owner" not in cat.load_table("db.events").properties
    before = cat.load_table("db.events").metadata_location
    missing = run(*w, "properties", "remove", "db.events", "owner", check=1)
    assert "Property owner does not exist on db.events" in missing.stderr
    assert "Traceback" not in missing.stderr and missing.stdout == ""
    assert cat.load_table("db.events").metadata_location == before  # nothing committed
    nope = run(*w, "properties", "get", "db.events", "nope", check=1)
    assert "Could not find property nope on table db.events" in nope.stderr

    fs = run(*w, "properties", "set", "namespace", "db", "team", "data", check=1)
    assert "does not store namespace properties" in fs.stderr and "Traceback" not in fs.stderr
    uri = f"sqlite:///{warehouse.parent / 'ns.db'}"
    sql = icefloe.load_catalog("default", uri=uri, warehouse=str(warehouse.parent / "sqlwh"))
    sql.create_namespace("sales")
    u = ("--uri", uri)
    assert run(*u, "properties", "set", "namespace", "sales", "team", "data").stdout.strip() == (
        "Updated team on sales"
    )
    assert sql.load_namespace_properties("sales")["team"] == "data"
    assert run(*u, "properties", "get", "namespace", "sales", "team").stdout.strip() == "data"
    assert run_json(*u, "properties", "get", "namespace", "sales")["team"] == "data"
    run(*u, "properties", "remove", "namespace", "sales", "team")
    assert "team" not in sql.load_namespace_properties("sales")
    gone = run(*u, "properties", "remove", "namespace", "sales", "team", check=1)
    assert "Property team does not exist on sales" in gone.stderr


def test_errors_go_to_stderr_with_exit_codes(wh: tuple[Path, icefloe.Catalog], tmp_path: Path) -> None:
    warehouse, _ = wh
    w = ("--warehouse", str(warehouse))
    p = run(*w, "schema", "db.missing", check=1)
    assert p.stdout == ""
    assert "NoSuchTableError" in p.stderr and "db.missing" in p.stderr
    assert "Traceback" not in p.stderr
    v = run("--verbose", *w, "schema", "db.missing", check=1)
    assert "Traceback" in v.stderr and "NoSuchTableError" in v.stderr
    j = run("--json", *w, "schema", "db.missing", check=1)
    err = json.loads(j.stderr.strip().splitlines()[-1])
    assert err["type"] == "NoSuchTableError" and "db.missing" in err["message"]
    assert j.stdout == ""
    # No catalog at all (empty home, no flags).
    home = tmp_path / "home"
    home.mkdir()
    n = run("list", home=home, check=1)
    assert "no catalog" in n.stderr and "Traceback" not in n.stderr
    # A malformed command line: argparse's usage error, exit 2.
    assert run(*w, "no-such-command", check=2).returncode == 2
    assert run(*w, "rollback", "db.events", "not-a-number", check=2).returncode == 2
    bad_time = run(*w, "expire-snapshots", "db.events", "--older-than", "yesterday-ish", check=1)
    assert "cannot read time 'yesterday-ish'" in bad_time.stderr


def test_catalogs_from_config_files(wh: tuple[Path, icefloe.Catalog], tmp_path: Path) -> None:
    warehouse, _ = wh
    home = tmp_path / "home"
    home.mkdir()
    # A SQL catalog (sqlite) with its own table, named in PyIceberg's file.
    sql_wh = tmp_path / "sqlwh"
    uri = f"sqlite:///{tmp_path / 'cat.db'}"
    sql = icefloe.load_catalog("lake", uri=uri, warehouse=str(sql_wh))
    sql.create_namespace("sales")
    sql.create_table("sales.orders", schema=SCHEMA).append(rows(4))
    (home / ".pyiceberg.yaml").write_text(
        yaml.safe_dump({"catalog": {"lake": {"uri": uri, "warehouse": str(sql_wh)}}})
    )
    (home / ".icefloe.yaml").write_text(
        yaml.safe_dump({"catalog": {"default": {"warehouse": str(warehouse)}}})
    )
    assert run_json("list", home=home) == ["db"]
    assert run_json("--catalog", "lake", "list", "sales", home=home) == ["sales.orders"]
    snaps = run_json("--catalog", "lake", "snapshots", "sales.orders", home=home)
    assert len(snaps) == 1 and snaps[0]["summary"]["added-records"] == "4"
    # default-catalog picks the catalog when --catalog is not given.
    (home / ".icefloe.yaml").write_text(
        yaml.safe_dump({"default-catalog": "lake", "catalog": {"default": {"warehouse": str(warehouse)}}})
    )
    assert run_json("list", home=home) == ["sales"]
    # Flags override the file; --warehouse alone is the filesystem catalog there.
    assert run_json("--warehouse", str(warehouse), "list", home=home) == ["db"]
    # PyIceberg's environment variables name catalogs too.
    env = {"PYICEBERG_CATALOG__ENVCAT__WAREHOUSE": str(warehouse)}
    assert run_json("--catalog", "envcat", "list", "db", home=home, env=env) == ["db.events", "db.other"]
    unknown = run("--catalog", "nope", "list", home=home, check=1)
    assert "catalog 'nope' is not configured" in unknown.stderr
    (home / ".icefloe.yaml").write_text("catalog: [unclosed")
    broken = run("list", home=home, check=1)
    assert "cannot parse config file" in broken.stderr and "Traceback" not in broken.stderr


def test_text_tables_show_whole_values(wh: tuple[Path, icefloe.Catalog]) -> None:
    warehouse, cat = wh
    t = cat.load_table("db.events")
    text = run("--warehouse", str(warehouse), "snapshots", "db.events").stdout
    for s in t.snapshots():
        assert str(s.snapshot_id) in text
        assert s.manifest_list is not None and s.manifest_list in text  # never cut short
    hist = run("--warehouse", str(warehouse), "history", "db.events").stdout
    assert "is_current_ancestor" in hist and "True" in hist


def test_environment_settings_are_read_as_pyicebergs_config(monkeypatch: pytest.MonkeyPatch) -> None:
    """`PYICEBERG_CATALOG__<NAME>__<KEY>` names the keys PyIceberg's Config gives for the same
    environment (`__` in a key is `.`, `_` is `-`): S3 settings given this way reached the
    catalog as `s3-access_key_id` and the like, unknown keys, and the command went to AWS."""
    from icefloe.cli import _env_properties
    from pyiceberg.utils.config import Config

    for k in list(os.environ):
        if k.upper().startswith(("PYICEBERG_", "ICEFLOE_")):
            monkeypatch.delenv(k)
    env = {
        "PYICEBERG_CATALOG__ENVCAT__S3__ENDPOINT": "http://localhost:9000",
        "PYICEBERG_CATALOG__ENVCAT__S3__ACCESS_KEY_ID": "key",
        "PYICEBERG_CATALOG__ENVCAT__S3__PATH_STYLE_ACCESS": "true",
        "pyiceberg_catalog__envcat__warehouse": "s3://b/wh",
        "PYICEBERG_CATALOG__OTHER__URI": "http://elsewhere",
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    expected = {
        "s3.endpoint": "http://localhost:9000",
        "s3.access-key-id": "key",
        "s3.path-style-access": "true",
        "warehouse": "s3://b/wh",
    }
    assert _env_properties("envcat") == expected
    assert Config().get_catalog_config("envcat") == expected
    monkeypatch.setenv("ICEFLOE_CATALOG__ENVCAT__S3__ENDPOINT", "http://icefloe:9000")  # ours wins
    assert _env_properties("ENVCAT")["s3.endpoint"] == "http://icefloe:9000"
