"""Shared state of the golden-file generator: paths, the oracle jar, README notes, JSON output."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
GOLDEN = HERE / "golden"
DEFAULT_JAR = ROOT / ".cache/oracle/iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
JAR = Path(os.environ.get("ICEFLOE_ORACLE_JAR", str(DEFAULT_JAR))).resolve()

README_ITEMS: list[tuple[str, str]] = []  # (file name, description) in generation order


def note(name: str, text: str) -> None:
    README_ITEMS.append((name, text))


def write_json(path: Path, doc: Any) -> None:
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


def jiter(iterable: Any) -> Any:
    """Iterate a java.lang.Iterable through py4j."""
    it = iterable.iterator()
    while it.hasNext():
        yield it.next()
