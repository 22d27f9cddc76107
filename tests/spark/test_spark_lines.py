"""`one_spark_line(4)` moves a version-independent test from the PySpark 3.5 pass to the
PySpark 4 pass (tests/conftest.py): it must sit in a file that pass runs (the Makefile's
SPARK4_TESTS), else it would run nowhere."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _spark4_files() -> set[Path]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(r"^SPARK4_TESTS := (.*?)(?<!\\)\n", text, re.S | re.M)
    assert block, "SPARK4_TESTS not found in the Makefile"
    files: set[Path] = set()
    for entry in block.group(1).replace("\\\n", " ").split():
        path = ROOT / entry
        files.update(path.rglob("test_*.py") if path.is_dir() else [path])
    return files


def test_one_spark_line_4_only_in_the_spark4_pass() -> None:
    spark4 = _spark4_files()
    assert ROOT / "tests" / "spark" / "test_spark_sql.py" in spark4  # the parse found the list
    marked = {p for p in (ROOT / "tests").rglob("test_*.py") if "one_spark_line(4)" in p.read_text()}
    marked.discard(Path(__file__).resolve())
    assert marked, "no test is marked one_spark_line(4): this check would prove nothing"
    assert marked <= spark4, f"marked one_spark_line(4) but not run by the PySpark 4 pass: {marked - spark4}"
