"""Table properties read as Iceberg Java reads them (`PropertyUtil`)."""

from __future__ import annotations

from collections.abc import Mapping

WAP_ENABLED = "write.wap.enabled"


def property_as_bool(properties: Mapping[str, str], key: str, default: bool) -> bool:
    """Java's `PropertyUtil.propertyAsBoolean`: `Boolean.parseBoolean` of the value when it
    is set, so "true" in any case is true and anything else false (" true" too: Java does
    not trim); `default` when it is not set."""
    value = properties.get(key)
    return default if value is None else value.lower() == "true"


def wap_enabled(properties: Mapping[str, str]) -> bool:
    """Whether a table with these properties takes part in write-audit-publish
    (`write.wap.enabled`, off by default): Spark's `spark.wap.branch` / `spark.wap.id`
    apply, and a write whose summary carries a `wap.id` is staged."""
    return property_as_bool(properties, WAP_ENABLED, False)
