"""A pytest plugin that records when each test ran, for measuring where `make test`'s time
goes: `make test PYTEST_ARGS="-p support.timeline" ICEFLOE_TEST_TIMELINE=<dir>` writes one JSON
line per test (node id, start and end, epoch seconds) to `<dir>/<pass>-<worker>.jsonl`, the
pass named by the PySpark line (`p35`, `p41`). `.ci/timeline_report.py <dir>` turns the files
into each test file's share of the machine's two cores. Without the variable it records
nothing."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import IO, Any

import pytest

_out: IO[str] | None = None


def _file() -> IO[str] | None:
    global _out
    folder = os.environ.get("ICEFLOE_TEST_TIMELINE")
    if not folder:
        return None
    if _out is None:
        import pyspark

        line = "p" + "".join(pyspark.__version__.split(".")[:2])
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        os.makedirs(folder, exist_ok=True)
        _out = open(os.path.join(folder, f"{line}-{worker}.jsonl"), "a", buffering=1)
    return _out


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Iterator[None]:
    start = time.time()
    yield
    out = _file()
    if out is not None:
        out.write(json.dumps({"id": item.nodeid, "t0": start, "t1": time.time()}) + "\n")


def pytest_unconfigure(config: pytest.Config) -> None:
    global _out
    if _out is not None:
        _out.close()
        _out = None
