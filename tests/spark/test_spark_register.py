"""`icefloe.spark.register` on the PySpark of this run: a clear error before PySpark 4.0,
a working `format("icefloe")` from 4.0 on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import icefloe.spark
import pyarrow as pa
import pytest
from icefloe.exceptions import ValidationError
from support.session import PYSPARK_MAJOR, new_table_name

pytestmark = [pytest.mark.spark]


def test_register(spark: Any, catalog: Any, warehouse: Path) -> None:
    if PYSPARK_MAJOR < 4:
        with pytest.raises(ValidationError, match=r"PySpark 4\.0 or newer"):
            icefloe.spark.register(spark)
        return
    name = new_table_name("reg")
    table = catalog.create_table(name, pa.schema([pa.field("id", pa.int64())]))
    table.append(pa.table({"id": [1, 2]}))
    icefloe.spark.register(spark)
    df = spark.read.format("icefloe").option("warehouse", str(warehouse)).option("catalog", "opts").load(name)
    assert sorted(r.id for r in df.collect()) == [1, 2]
