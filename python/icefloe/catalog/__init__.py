"""Catalogs: where tables are found and where commits swap their metadata pointer.

`load_catalog("local", warehouse="/data/wh")` gives the filesystem catalog (Iceberg's
HadoopCatalog layout); `load_catalog("db", type="sql", uri="sqlite:///cat.db",
warehouse="/data/wh")` the SQL catalog (Iceberg's JdbcCatalog schema).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from icefloe.catalog._base import Catalog, Identifier, Properties, PropertiesUpdateSummary
from icefloe.catalog.filesystem import FilesystemCatalog
from icefloe.exceptions import NotSupportedError, ValidationError

if TYPE_CHECKING:
    from icefloe.catalog.rest import RestCatalog
    from icefloe.catalog.sql import SqlCatalog

__all__ = [
    "Catalog",
    "FilesystemCatalog",
    "Identifier",
    "Properties",
    "PropertiesUpdateSummary",
    "RestCatalog",
    "SqlCatalog",
    "load_catalog",
]

# The REST and SQL catalogs are imported when first used (`load_catalog` of their type, or
# the names `RestCatalog` / `SqlCatalog` from this module): with HTTP, TLS and the SQL
# drivers' modules they were ~50 ms of every `import icefloe` (2026-12-07, -X importtime),
# which a Spark executor's Python worker pays too.
_LAZY = {"RestCatalog": "icefloe.catalog.rest", "SqlCatalog": "icefloe.catalog.sql"}
_TYPES: dict[str, str] = {
    "filesystem": "FilesystemCatalog",
    "hadoop": "FilesystemCatalog",
    "sql": "SqlCatalog",
    "rest": "RestCatalog",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def load_catalog(name: str = "default", **properties: str) -> Catalog:
    """A catalog named `name` configured by `properties`.

    `type` picks the implementation: `filesystem` (alias `hadoop`; the default when a
    `warehouse` is given without a `uri`), `sql` (the default when `uri` is a `sqlite:` or
    `postgresql:` URI) or `rest` (the default for an `http(s):` URI).
    """
    kind = properties.get("type")
    if kind is None:
        uri = properties.get("uri")
        if uri is None:
            if not properties.get("warehouse"):
                raise ValidationError(
                    f"catalog {name!r}: give a 'warehouse' folder (filesystem catalog) or a 'uri' "
                    "(e.g. type='sql', uri='sqlite:///catalog.db')"
                )
            kind = "filesystem"
        elif str(uri).split(":", 1)[0].split("+", 1)[0].lower() in ("sqlite", "postgresql", "postgres"):
            kind = "sql"
        elif str(uri).split(":", 1)[0].lower() in ("http", "https"):
            kind = "rest"
        else:
            raise NotSupportedError(
                f"catalog {name!r}: cannot infer the catalog type from uri {uri!r}; "
                "supported types are 'filesystem', 'sql' (sqlite, postgresql) and 'rest' (http, https)"
            )
    cls_name = _TYPES.get(str(kind).lower())
    if cls_name is None:
        raise NotSupportedError(
            f"catalog {name!r}: type {kind!r} is not supported (supported: filesystem, sql, rest)"
        )
    cls: type[Catalog] = FilesystemCatalog if cls_name == "FilesystemCatalog" else __getattr__(cls_name)
    return cls(name, **{k: v for k, v in properties.items() if k != "type"})
