"""Fixtures of the PySpark 4 tests (the test files are collected only on PySpark 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe.spark
import pytest


@pytest.fixture(scope="module")
def source(spark: Any, warehouse: Path) -> Any:
    """The session with the `icefloe` data source registered and the session catalog
    `local` (icefloe's filesystem catalog on the oracle's warehouse)."""
    spark.conf.set("icefloe.catalog.local.type", "filesystem")
    spark.conf.set("icefloe.catalog.local.warehouse", str(warehouse))
    icefloe.spark.register(spark)
    return spark
