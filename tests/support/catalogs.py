"""The catalog factory: the properties (for ``icefloe.load_catalog(**props)``, in this process or
in a worker) and the catalog of one kind, on fresh storage under a test's ``tmp_path``.

Kinds: ``filesystem`` (Iceberg's HadoopCatalog layout), ``sql`` / ``sqlite`` (the SQL catalog on
a sqlite file), ``postgres`` (the SQL catalog on a fresh database of the run's Postgres server)
and ``rest`` (the REST client against the run's Apache Iceberg RESTCatalogServer, its
warehouse on the S3 test server)."""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import icefloe
import pyarrow as pa
import pytest
from icefloe.catalog import Catalog

from support.servers.postgres import new_database

KINDS = ("filesystem", "sqlite", "postgres", "rest")


def catalog_props(
    kind: str,
    tmp_path: Path,
    *,
    postgres: str = "",
    rest_uri: str = "",
    s3: Any = None,
    warehouse: str | None = None,
) -> dict[str, str]:
    """The properties of a catalog of `kind` on fresh storage: its warehouse `warehouse` (by
    default `tmp_path/wh`), a sqlite file in `tmp_path`, a new database of the Postgres server
    `postgres` (its URI), or the REST server `rest_uri`. With `s3` (an S3Server) the catalog's
    FileIO gets that server's properties (a REST catalog always does)."""
    wh = warehouse if warehouse is not None else str(tmp_path / "wh")
    extra = s3.properties() if s3 is not None else {}
    if kind == "filesystem":
        return {"name": "fs", "type": "filesystem", "warehouse": wh, **extra}
    if kind in ("sql", "sqlite"):
        uri = f"sqlite:///{tmp_path}/catalog.db"
        return {"name": "sql", "type": "sql", "uri": uri, "warehouse": wh, **extra}
    if kind == "postgres":
        if not postgres:
            raise ValueError(
                "a postgres catalog needs the URI of the Postgres server (the `postgres` fixture)"
            )
        return {"name": "sql", "type": "sql", "uri": new_database(postgres), "warehouse": wh, **extra}
    if kind == "rest":
        if not rest_uri or s3 is None:
            raise ValueError("a rest catalog needs the `rest_uri` and `s3` fixtures")
        return {"name": "rest", "type": "rest", "uri": rest_uri, **extra}
    raise ValueError(f"unknown catalog kind {kind!r}: expected one of {KINDS} (or 'sql' for sqlite)")


def catalog_props_for(
    request: pytest.FixtureRequest, kind: str, tmp_path: Path, s3: Any = None, warehouse: str | None = None
) -> dict[str, str]:
    """`catalog_props` with the servers `kind` needs taken from the run's fixtures (`postgres`,
    and `s3` and `rest_uri` for a REST catalog), started on first use."""
    postgres = request.getfixturevalue("postgres") if kind == "postgres" else ""
    rest_uri = ""
    if kind == "rest":
        s3 = s3 if s3 is not None else request.getfixturevalue("s3")
        rest_uri = request.getfixturevalue("rest_uri")
    return catalog_props(kind, tmp_path, postgres=postgres, rest_uri=rest_uri, s3=s3, warehouse=warehouse)


def new_catalog(
    request: pytest.FixtureRequest,
    kind: str,
    tmp_path: Path,
    namespace: str | None = None,
    s3: Any = None,
    warehouse: str | None = None,
) -> tuple[dict[str, str], Catalog]:
    """A catalog of `kind` (see `catalog_props_for`) and its properties, with `namespace`
    created when given."""
    props = catalog_props_for(request, kind, tmp_path, s3=s3, warehouse=warehouse)
    catalog = icefloe.load_catalog(**props)
    if namespace is not None:
        catalog.create_namespace(namespace)
    return props, catalog


# A two-column table (id, name) the REST catalog tests write.
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])


# The tables of the fault tests: rows spread over three identity partitions.
REGION_ARROW = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("name", pa.string()),
        pa.field("region", pa.string()),
    ]
)
REGIONS = ("eu", "us", "ap")
Row = tuple[int, str, str]


def rows(ids: range) -> pa.Table:
    return pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids]}, schema=ARROW)


def files_under(location: str, s3: Any | None) -> set[str]:
    """Every file under a table's location: a local folder, or a prefix of the S3 test server
    (`s3`, None for local catalogs)."""
    if s3 is None:
        path = location.removeprefix("file://")
        return {os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs}
    from pyarrow import fs

    props = s3.properties()
    s3fs = fs.S3FileSystem(
        access_key=props["s3.access-key-id"],
        secret_key=props["s3.secret-access-key"],
        region=props["s3.region"],
        endpoint_override=urlparse(s3.endpoint).netloc,
        scheme="http",
    )
    parsed = urlparse(location)
    infos = s3fs.get_file_info(
        fs.FileSelector(f"{parsed.netloc}{parsed.path}", recursive=True, allow_not_found=True)
    )
    return {f"s3://{i.path}" for i in infos if i.type == fs.FileType.File}


def java_catalog_conf(kind: str, props: dict[str, str], tmp_path: Path, s3: Any) -> dict[str, str]:
    """The Spark catalog settings (keys after `spark.sql.catalog.<name>`) under which Iceberg
    Java opens the same catalog as an icefloe catalog of `kind` with `props`."""
    conf = {"": "org.apache.iceberg.spark.SparkCatalog", ".cache-enabled": "false"}
    if kind == "filesystem":
        return {**conf, ".type": "hadoop", ".warehouse": f"file://{props['warehouse']}"}
    if kind in ("sqlite", "postgres"):
        if kind == "sqlite":
            uri = f"jdbc:sqlite:{tmp_path}/catalog.db"
        else:
            uri = f"jdbc:postgresql://{props['uri'].split('@', 1)[1]}"
            conf[".jdbc.user"] = "postgres"
        return {
            **conf,
            ".catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
            ".uri": uri,
            ".jdbc.schema-version": "V1",
            ".warehouse": f"file://{props['warehouse']}",
        }
    return {**conf, ".type": "rest", ".uri": props["uri"], **_java_s3_file_io(s3)}


def java_jdbc_s3_catalog_conf(jdbc_uri: str, warehouse: str, s3: Any) -> dict[str, str]:
    """Iceberg Java's JdbcCatalog over a warehouse on the S3 server (S3FileIO)."""
    return {
        "": "org.apache.iceberg.spark.SparkCatalog",
        ".cache-enabled": "false",
        ".catalog-impl": "org.apache.iceberg.jdbc.JdbcCatalog",
        ".uri": jdbc_uri,
        ".jdbc.schema-version": "V1",
        ".warehouse": warehouse,
        **_java_s3_file_io(s3),
    }


def _java_s3_file_io(s3: Any) -> dict[str, str]:
    props = s3.properties()
    return {
        ".io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        ".s3.endpoint": props["s3.endpoint"],
        ".s3.path-style-access": "true",
        ".s3.access-key-id": props["s3.access-key-id"],
        ".s3.secret-access-key": props["s3.secret-access-key"],
        ".client.region": props["s3.region"],
    }


def set_java_catalog(spark: Any, name: str, conf: dict[str, str]) -> str:
    """Names `conf` (from `java_catalog_conf` / `java_jdbc_s3_catalog_conf`) `name` in Spark."""
    for k, v in conf.items():
        spark.conf.set(f"spark.sql.catalog.{name}{k}", v)
    return name


def twin_catalog(
    request: Any, kind: str, tmp_path: Path, spark: Any, prefix: str
) -> tuple[Catalog, str, Any | None]:
    """An icefloe catalog of `kind` and Iceberg Java's Spark catalog on the same tables, both
    named `<prefix><hex>` (JdbcCatalog keys its rows by catalog name: one name for both);
    `(catalog, name, s3)`, `s3` the S3 test server of a REST catalog (None otherwise)."""
    s3 = request.getfixturevalue("s3") if kind == "rest" else None
    props = catalog_props_for(request, kind, tmp_path, s3=s3)
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    props.pop("name")
    catalog = icefloe.load_catalog(name, **props)
    set_java_catalog(spark, name, java_catalog_conf(kind, props, tmp_path, s3))
    return catalog, name, s3


@dataclass
class TwinEnv:
    """One catalog kind of `twin_catalog`: icefloe's catalog, the name of Iceberg Java's Spark
    catalog on the same tables, and the S3 test server of a REST catalog (None otherwise).
    Test files subclass it with their own views of Java's side."""

    kind: str
    catalog: Catalog
    spark: Any
    java: str  # the Spark catalog's name
    s3: Any = None

    def files_under(self, location: str) -> set[str]:
        return files_under(location, self.s3)

    def new_namespace(self) -> str:
        name = f"ns_{uuid.uuid4().hex[:8]}"
        self.catalog.create_namespace(name)
        return name
