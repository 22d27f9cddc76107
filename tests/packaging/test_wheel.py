"""The wheel a user installs: the x86_64 manylinux abi3 wheel of `make dist`, installed into
fresh venvs with PySpark 3.5, 4.0 and the newest 4.x on PyPI (4.3), runs a Spark write and
read from the installed package alone (no checkout on the path); on PySpark 4 also through
`format("icefloe")`. Where an Iceberg runtime exists for that Spark (3.5: the oracle of this
run; 4.0: Iceberg 1.11.0, the newest built for it) Iceberg Java reads the table afterwards on
the same session. PySpark 4.1 has the whole Spark-facing suite (`make test-spark4`); Spark 4.2
and 4.3 have no Iceberg runtime on Maven Central yet, so there icefloe is checked on its own.

The wheel is the one `make release` built and installed for the suite (zig as the linker,
`maturin build --zig`, as `make dist` does), which `make test-python` passes in
ICEFLOE_TEST_WHEEL; without it the test builds one itself. The venvs install from pip's
cache, each once.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import icefloe
import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = "x86_64-unknown-linux-gnu"
MANYLINUX = "manylinux_2_28"
# Each venv gets one PySpark line and the pandas it supports; pip's cache serves the wheels.
SPARK_LINES = {
    "pyspark35": ["pyspark>=3.5,<3.6", "pandas>=1.5,<3"],
    "pyspark40": ["pyspark>=4.0,<4.1", "pandas>=2.2,<3"],
    "pyspark43": ["pyspark>=4.3,<4.4", "pandas>=2.2,<3"],
}
VERSION_PREFIX = {"pyspark35": "3.5.", "pyspark40": "4.0.", "pyspark43": "4.3."}


def oracle_jar_for(line: str) -> str:
    """Iceberg Java's Spark runtime for the venv's Spark (`make oracle` fetches it), or ""."""
    if line == "pyspark35":
        return os.environ["ICEFLOE_ORACLE_JAR"]
    if line == "pyspark40":
        jar = Path(os.environ["ICEFLOE_ORACLE_JAR"]).parent / "iceberg-spark-runtime-4.0_2.13-1.11.0.jar"
        assert jar.is_file(), f"{jar} is missing: run `make oracle`"
        return str(jar)
    return ""


pytestmark = [pytest.mark.timeout(1800), pytest.mark.slow]


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment of a user's shell: no PYTHONPATH, no venv of ours."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("ICEFLOE_TEST_WHEEL")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            _bin("maturin"),
            "build",
            "--release",
            "-q",
            "--zig",
            "--target",
            TARGET,
            "--compatibility",
            MANYLINUX,
            "-o",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        env=_clean_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"),
    )
    wheels = list(out.glob("icefloe-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venvs(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """One fresh venv per PySpark line with the wheel and its dependencies, installed in
    parallel: by uv where `make test` passes its path (ICEFLOE_TEST_UV: the installer that
    made the suite's venvs, whose cache holds the wheels it built from PySpark's source
    releases), else by pip."""
    root = tmp_path_factory.mktemp("venvs")
    uv = os.environ.get("ICEFLOE_TEST_UV")
    procs = {}
    for name, reqs in SPARK_LINES.items():
        venv = root / name
        if uv:  # a venv without pip (nothing here runs it): 0.7 s against `-m venv`'s 6
            subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
        else:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        log = open(root / f"{name}.log", "w")
        py = str(venv / "bin" / "python")
        if uv:
            # From uv's cache alone when it has everything (.ci/uv_pip_install says why: else
            # PySpark is built from its source release again for each venv)
            cmd = ["bash", str(ROOT / ".ci" / "uv_pip_install"), uv, py, str(wheel), *reqs]
        else:
            # No bytecode compiled up front (9 of pip's 14 CPU s a venv): the test imports little.
            pip = [py, "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check"]
            cmd = [*pip, str(wheel), *reqs]
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=_clean_env())
        procs[name] = (venv, log, proc)
    # Every install waited for (and its log closed) before any failure is reported, so a failed
    # one leaves no pip running into the next test.
    codes = {}
    for name, (_venv, log, proc) in procs.items():
        try:
            codes[name] = proc.wait(timeout=1200)
        except subprocess.TimeoutExpired:
            proc.kill()
            codes[name] = proc.wait()
        log.close()
    for name, rc in codes.items():
        assert rc == 0, f"pip install into {name} failed:\n{(root / f'{name}.log').read_text()[-4000:]}"
    yield {name: venv for name, (venv, _log, _proc) in procs.items()}
    shutil.rmtree(root, ignore_errors=True)


def test_wheel_is_manylinux_abi3(wheel: Path) -> None:
    version = re.escape(icefloe.__version__)
    assert re.fullmatch(rf"icefloe-{version}-cp39-abi3-.*{MANYLINUX}_x86_64.*\.whl", wheel.name), wheel.name
    shown = subprocess.run(
        [_bin("auditwheel"), "show", str(wheel)], check=True, capture_output=True, text=True
    )
    text = " ".join(shown.stdout.split())
    assert f'consistent with the following platform tag: "{MANYLINUX}_x86_64"' in text, shown.stdout
    checked = subprocess.run([_bin("twine"), "check", "--strict", str(wheel)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def _run_in_venv(
    line: str, venv: Path, run_dir: Path, name: str, script: str, args: list[str], timeout: int
) -> dict[str, Any]:
    """Runs `script` with the venv's interpreter from `run_dir` (a user's shell: nothing of
    the checkout on the path); its last stdout line is a JSON object, returned, whose
    `pyspark` is the venv's line."""
    py = venv / "bin" / "python"
    path = run_dir / name
    path.write_text(script)
    env = _clean_env(PYSPARK_PYTHON=str(py), PYSPARK_DRIVER_PYTHON=str(py), TZ="UTC")
    res = subprocess.run(
        [str(py), str(path), *args], cwd=run_dir, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert res.returncode == 0, f"{line}: {name} failed\n{res.stdout[-3000:]}\n{res.stderr[-6000:]}"
    got: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["pyspark"].startswith(VERSION_PREFIX[line]), got
    return got


# The streaming triggers from the installed package (PySpark 4: the smoke script calls it on
# its own session): each run's batches.
STREAM = r"""
def stream_runs(spark, warehouse, checkpoint):
    catalog = icefloe.load_catalog("smoke", warehouse=warehouse)
    table = catalog.create_table("db.stream", schema=pa.schema([pa.field("id", pa.int64())]))

    def append(start):  # one snapshot adding one file of 10 rows
        table.append(pa.table({"id": pa.array(range(start, start + 10), pa.int64())}))

    for start in range(0, 50, 10):
        append(start)
    spark.conf.set("icefloe.catalog.smoke.warehouse", warehouse)
    icefloe.spark.register(spark)
    runs = []

    def run(trigger, during=None):
        seen = []

        def sink(df, batch_id):
            seen.append(sorted(r[0] for r in df.collect()))
            if during is not None and len(seen) == 1:
                during()  # a commit while the query runs

        query = (
            spark.readStream.format("icefloe").option("max-files-per-trigger", "2")
            .load("smoke.db.stream").writeStream.foreachBatch(sink)
            .option("checkpointLocation", checkpoint).trigger(**{trigger: True}).start()
        )
        query.awaitTermination(300)
        assert not query.isActive, f"the {trigger} query did not stop"
        runs.append(seen)

    run("availableNow", during=lambda: append(100))
    append(110)
    append(120)
    run("once")
    run("availableNow")
    return runs
"""


# Runs inside the venv's interpreter, from an empty folder: everything it imports comes from
# the venv. Prints one JSON line.
SMOKE = r"""
import json, os, sys
import pyarrow as pa
import pyspark
import icefloe, icefloe.spark
from icefloe.expressions import GreaterThanOrEqual
from pyspark.sql import SparkSession
{stream_runs}
venv, warehouse, checkout, oracle_jar, checkpoint = sys.argv[1:6]
assert os.path.realpath(icefloe.__file__).startswith(os.path.realpath(venv) + os.sep), icefloe.__file__
assert not any(p and os.path.realpath(p).startswith(checkout) for p in sys.path), sys.path

builder = (
    SparkSession.builder.master("local[2]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
)
if oracle_jar:  # Iceberg Java's catalog on the same warehouse, for its read at the end
    builder = (
        builder.config("spark.jars", oracle_jar)
        .config("spark.sql.catalog.java", "org.apache.iceberg.spark.SparkCatalog")
        .config("spark.sql.catalog.java.type", "hadoop")
        .config("spark.sql.catalog.java.warehouse", warehouse)
        .config("spark.sql.catalog.java.cache-enabled", "false")
    )
spark = builder.getOrCreate()
catalog = icefloe.load_catalog("smoke", warehouse=warehouse)
catalog.create_namespace("db")
schema = pa.schema([
    pa.field("id", pa.int64(), nullable=False),
    pa.field("name", pa.string()),
    pa.field("amount", pa.float64()),
    pa.field("day", pa.date32()),
])
table = catalog.create_table("db.events", schema=schema)
with table.update_spec() as spec:
    spec.add_identity("day")
df = spark.range(1000).selectExpr(
    "id", "concat('n', cast(id AS string)) AS name", "cast(id AS double) / 2 AS amount",
    "date_add(DATE'2026-01-01', cast(id % 3 AS int)) AS day",
)
icefloe.spark.append(df, table)
table = catalog.load_table("db.events")
back = icefloe.spark.read(spark, table)
got = sorted(tuple(r) for r in back.collect())
want = sorted(tuple(r) for r in df.collect())
filtered = icefloe.spark.read(spark, table, row_filter=GreaterThanOrEqual("id", 990)).count()
snapshot = table.current_snapshot()
source = None
if int(pyspark.__version__.split(".")[0]) >= 4:  # the data source, from the installed package
    icefloe.spark.register(spark)
    opts = {"warehouse": warehouse}
    read = spark.read.format("icefloe").options(**opts).load("db.events")
    more = spark.range(1000, 1100).selectExpr(
        "id", "concat('n', cast(id AS string)) AS name", "cast(id AS double) / 2 AS amount",
        "date_add(DATE'2026-01-01', cast(id % 3 AS int)) AS day",
    )
    source_equal = sorted(tuple(r) for r in read.collect()) == want
    more.write.format("icefloe").options(**opts).mode("append").save("db.events")
    after = spark.read.format("icefloe").options(**opts).load("db.events").filter("id >= 1090").count()
    source = {"read_equal": source_equal, "filtered_after_append": after}
    table = catalog.load_table("db.events")
in_process = table.scan().to_arrow()
java = describe = None
if oracle_jar:
    row = spark.sql("SELECT count(*), sum(id), sum(amount) FROM java.db.events").collect()[0]
    java = [row[0], row[1], row[2]]
    # DESCRIBE EXTENDED as Java's SparkTable gives it on this Spark line (the only PySpark 4.0
    # session of make test): the rows of Java's and icefloe.spark.sql's, in order
    text = "DESCRIBE TABLE EXTENDED java.db.events"
    java_rows = [list(r) for r in spark.sql(text).collect()]
    ice_rows = [list(r) for r in icefloe.spark.sql(spark, text, catalogs={"java": catalog}).collect()]
    describe = {"equal": java_rows == ice_rows, "java": java_rows, "icefloe": ice_rows}
runs = None
if checkpoint:  # PySpark 4: the streaming triggers, on the same session
    runs = stream_runs(spark, warehouse, checkpoint)
print(json.dumps({
    "runs": runs,
    "source": source,
    "java": java,
    "describe": describe,
    "in_process_amount": sum(in_process.column("amount").to_pylist()),
    "pyspark": pyspark.__version__,
    "icefloe": icefloe.__version__,
    "equal": got == want,
    "rows": len(got),
    "filtered": filtered,
    "added_records": snapshot.summary["added-records"],
    "added_files": snapshot.summary["added-data-files"],
    "in_process_rows": in_process.num_rows,
    "in_process_sum": sum(in_process.column("id").to_pylist()),
}))
spark.stop()
"""


# The smoke script's result per PySpark line: run once, for the smoke test and the streaming test.
_SMOKE_RESULTS: dict[str, dict[str, Any]] = {}


def _smoke(line: str, venvs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Runs the smoke script in `line`'s venv (on PySpark 4 with the streaming triggers on the
    same session: one Spark driver per venv) and returns its JSON line."""
    if line not in _SMOKE_RESULTS:
        venv = venvs[line]
        base = tmp_path_factory.mktemp(f"smoke_{line}")
        run_dir = base / "cwd"
        run_dir.mkdir()
        checkpoint = "" if line == "pyspark35" else str(base / "ck")
        args = [str(venv), str(base / "wh"), str(ROOT), oracle_jar_for(line), checkpoint]
        script = SMOKE.replace("{stream_runs}", STREAM)
        _SMOKE_RESULTS[line] = _run_in_venv(line, venv, run_dir, "smoke.py", script, args, timeout=900)
    return _SMOKE_RESULTS[line]


@pytest.mark.spark
@pytest.mark.parametrize("line", sorted(SPARK_LINES))
def test_installed_wheel_spark_smoke(
    line: str, venvs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    got = _smoke(line, venvs, tmp_path_factory)
    spark4 = line != "pyspark35"
    rows = 1100 if spark4 else 1000  # the data source appends ids 1000..1099 on PySpark 4
    want = {
        "icefloe": icefloe.__version__,
        "equal": True,
        "rows": 1000,
        "filtered": 10,
        "added_records": "1000",
        "in_process_rows": rows,
        "in_process_sum": sum(range(rows)),
        "source": {"read_equal": True, "filtered_after_append": 10} if spark4 else None,
    }
    assert {k: got[k] for k in want} == want, got
    assert int(got["added_files"]) >= 3, got  # one file per `day` partition at least
    if oracle_jar_for(line):
        assert got["java"] == [rows, sum(range(rows)), got["in_process_amount"]], got
        assert got["in_process_amount"] == sum(range(rows)) / 2, got
        assert got["describe"]["equal"], got["describe"]
        statistics = [r for r in got["describe"]["java"] if r[0] == "Statistics"]
        assert len(statistics) == (1 if spark4 else 0), got["describe"]  # Spark 4 asks the scan
    else:
        assert got["java"] is None, got


@pytest.mark.spark
@pytest.mark.parametrize("line", ["pyspark40", "pyspark43"])
def test_installed_wheel_streaming_triggers(
    line: str, venvs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`trigger(availableNow=True)` reads what the table held when the query started, in
    batches of at most `max-files-per-trigger` files, and stops; `trigger(once=True)` reads
    everything in one batch; a restart goes on from the checkpoint. PySpark >= 4.2 (here 4.3)
    gives Python sources read limits; PySpark 4.0 does not, so there each run takes one
    bounded batch, still each row exactly once."""
    runs = _smoke(line, venvs, tmp_path_factory)["runs"]

    def ids(*starts: int) -> list[int]:
        return [i for s in starts for i in range(s, s + 10)]

    if line == "pyspark43":
        # The commit made during the first run (ids 100..109) waits for the next run.
        assert runs[0] == [ids(0, 10), ids(20, 30), ids(40)], runs
        assert runs[1] == [ids(100, 110, 120)], runs  # once: everything, limits or not
        assert runs[2] == [], runs
    else:
        batches = [b for run in runs for b in run]
        assert all(len(b) <= 20 for b in batches), runs
        flat = [i for b in batches for i in b]
        assert flat == ids(0, 10, 20, 30, 40, 100, 110, 120)[: len(flat)], runs
        assert [len(run) for run in runs] == [1, 1, 1], runs


def test_installed_wheel_cli(venvs: dict[str, Path], tmp_path: Path) -> None:
    """The console script with the dependencies the wheel declares (rich, pyyaml)."""
    venv = venvs["pyspark35"]
    cli = subprocess.run(
        [str(venv / "bin" / "icefloe"), "version"], cwd=tmp_path, check=True, capture_output=True, text=True
    )
    assert cli.stdout.strip() == icefloe.__version__
    home = tmp_path / "home"
    home.mkdir()
    (home / ".icefloe.yaml").write_text(f"catalog:\n  default:\n    warehouse: {tmp_path / 'wh'}\n")
    listed = subprocess.run(
        [str(venv / "bin" / "icefloe"), "--json", "list"],
        cwd=tmp_path,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
        text=True,
    )
    assert listed.stdout.strip() == "[]"
