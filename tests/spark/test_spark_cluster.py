"""icefloe on a real Spark cluster, not one JVM: a standalone master and two workers, each its
own process with its own working and local folders, and a driver in a process of its own.

The warehouse is on the S3 server (the `s3` fixture); the catalog (sqlite) and every
temporary folder of the driver live in one folder that the workers cannot see: each worker
starts in a mount namespace of its own where that folder is an empty tmpfs (`unshare -m`,
as root), so its executors, and the Python workers they fork, find nothing of the driver
there. Whatever a task needs must travel in the task (its plan, the table metadata, the
storage settings as an `IoConfig`).

In the cluster the driver runs `icefloe.spark.append` (partitioned by identity and day),
`icefloe.spark.read` with a filter, `icefloe.spark.delete` (merge-on-read: position deletes),
`icefloe.spark.merge` (merge-on-read), `icefloe.spark.upsert` (equality deletes),
`icefloe.spark.update` (merge-on-read) and `icefloe.spark.overwrite` (dynamic partition
overwrite), and checks each result against a model kept in Python. With Hadoop's S3A
connector on the cluster (`spark.jars`: hadoop-aws and its AWS SDK, shipped to the executors),
it also reads the S3 table's delete-free files through Spark's Parquet source on the
executors, with the catalog's storage settings in that read's options (nothing on the
session's or the executors' Hadoop configuration), and the rest in Rust. Proof that the work ran
off the driver: Spark's own record of every task (executor id and host, from the driver's
status REST API) names only the two executors, and probe tasks report their process
ancestry (a JVM running `CoarseGrainedExecutorBackend`), their working folder (under a
worker's folder) and an empty view of the driver's folder. Then this process reads the
table in process (icefloe) and Iceberg Java (JdbcCatalog on the same sqlite file, S3FileIO)
reads it on the suite's Spark session: the same rows.

Afterwards no file any of these processes left (the workers' and executors' folders, logs,
shuffle and block-manager files, the driver's folders) holds the S3 secret key, although
every task carried it: the driver gets its settings on stdin, not in a file.

The driver is support/workers/cluster_driver.py (`python -m support.workers.cluster_driver < config.json`).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.catalogs import java_jdbc_s3_catalog_conf, set_java_catalog
from support.session import s3a_jars
from support.workers.cluster_driver import TABLE, files_holding, rows_of

# ------------------------------------------------------------------------------------------------
# the driver (run as a script in its own process)
# ------------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------------
# the cluster (master + 2 workers) and the test
# ------------------------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# A private mount namespace, in which a tmpfs then hides a folder ("$0") from the command ("$@").
HIDE = ["unshare", "-m", "--propagation", "private", "sh", "-c"]


def _can_hide(folder: Path) -> bool:
    """Whether a process can be started with `folder` hidden under an empty tmpfs."""
    if not shutil.which("unshare"):
        return False
    probe = subprocess.run(
        [*HIDE, 'mount -t tmpfs icefloe-hidden "$0" && ls -A "$0"', str(folder)],
        capture_output=True,
        text=True,
    )
    return probe.returncode == 0 and probe.stdout.strip() == ""


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not listen on {port} within 120 s") from None
            time.sleep(0.3)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run_cluster(root: Path, hidden: Path | None) -> Iterator[str]:
    """A standalone master and 2 workers (1 core, 1 GB each) as processes of their own, each
    in its own folder under `root`; the workers see `hidden` as an empty folder. Yields the
    master's URL; stops them all."""
    from pyspark.find_spark_home import _find_spark_home

    spark_home = _find_spark_home()
    spark_class = str(Path(spark_home) / "bin" / "spark-class")
    base_env = dict(
        os.environ,
        SPARK_HOME=spark_home,
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_DAEMON_MEMORY="256m",
        PYSPARK_PYTHON=sys.executable,
        TZ="UTC",
    )
    procs: list[tuple[subprocess.Popen[bytes], Any]] = []
    try:
        port = _free_port()
        master_dir = root / "master"
        master_dir.mkdir()
        log = master_dir / "master.log"
        out = open(log, "wb")
        master = subprocess.Popen(
            [
                spark_class,
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--webui-port",
                "0",
            ],
            cwd=master_dir,
            env=base_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        procs.append((master, out))
        _wait_port(port, master, log, "the Spark master")
        url = f"spark://127.0.0.1:{port}"
        for w in range(2):
            wdir = root / f"worker-{w}"
            (wdir / "work").mkdir(parents=True)
            (wdir / "local").mkdir()
            env = dict(base_env, SPARK_LOCAL_DIRS=str(wdir / "local"), SPARK_WORKER_DIR=str(wdir / "work"))
            cmd = [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                "1g",
                "--work-dir",
                str(wdir / "work"),
                "--webui-port",
                "0",
                url,
            ]
            if hidden is not None:
                cmd = [*HIDE, 'mount -t tmpfs icefloe-hidden "$0" && exec "$@"', str(hidden), *cmd]
            wlog = open(wdir / "worker.log", "wb")
            worker = subprocess.Popen(
                cmd, cwd=wdir, env=env, stdout=wlog, stderr=subprocess.STDOUT, start_new_session=True
            )
            procs.append((worker, wlog))
        yield url
    finally:
        for p, f in reversed(procs):
            _stop(p)
            f.close()


pytestmark = [pytest.mark.spark, pytest.mark.slow]


@pytest.fixture(scope="module")
def cluster_dirs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return tmp_path_factory.mktemp("cluster-driver"), tmp_path_factory.mktemp("cluster-nodes")


def test_icefloe_on_a_standalone_cluster_with_s3(
    s3: Any, cluster_dirs: tuple[Path, Path], spark: Any
) -> None:
    import icefloe
    from support.oracle import assert_same_rows
    from support.servers.s3 import BUCKET

    driver_root, nodes_root = cluster_dirs
    hide = _can_hide(driver_root)
    prefix = f"s3://{BUCKET}/cluster-{uuid.uuid4().hex[:8]}"
    catalog_name = f"cluster{uuid.uuid4().hex[:6]}"
    result_path = nodes_root / "result.json"  # the driver writes it; only this process reads it
    for url in run_cluster(nodes_root, driver_root if hide else None):
        config = {
            "master": url,
            "driver_root": str(driver_root),
            "warehouse": f"{prefix}/wh",
            "catalog_name": catalog_name,
            "s3": s3.properties(),
            "result": str(result_path),
            "nodes_root": str(nodes_root),
            "s3a_jars": s3a_jars(),
        }
        (driver_root / "tmp").mkdir()
        env = dict(os.environ, TZ="UTC", TMPDIR=str(driver_root / "tmp"), SPARK_LOCAL_IP="127.0.0.1")
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # tests/: support.workers
        env.pop("SPARK_HOME", None)
        log = driver_root / "driver.log"
        with open(log, "wb") as out:
            proc = subprocess.run(
                [sys.executable, "-m", "support.workers.cluster_driver"],
                input=json.dumps(config).encode(),
                cwd=driver_root,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=480,
            )
        assert proc.returncode == 0, log.read_text()[-8000:]
    result = json.loads(result_path.read_text())

    print("cluster steps (name, rows, seconds since the executors were up):", result["steps"])
    print("slowest stages (id, name, tasks, seconds):", result["tasks"]["slowest_stages"])
    steps = [s[0] for s in result["steps"]]
    assert steps == [
        "executors up",
        "append",
        "read eu id<1000",
        "delete merge-on-read",
        "merge",
        "upsert",
        "update",
        "overwrite partitions",
        "read, tasks as RDD rows",
        "read of the S3 table, Spark's S3A reader and Rust",
        "read of a local table, Spark's Parquet source and Rust",
    ]
    # The S3 table's files are small: by default they take the Rust reader (S3A's requests per
    # file cost more than Spark's reader saves on them) ...
    reasons = result["s3_reasons"]
    assert len(reasons) == 2 and "deletes" in reasons, reasons
    assert any(r.startswith("small files on S3") for r in reasons), reasons
    # ... and without that rule the delete-free ones took Spark's Parquet source through S3A on
    # the executors (as s3a://, listed from the plan: no S3 request per file on the driver),
    # the ones with deletes the Rust reader; the rows were the model's (the step above).
    s3a = result["s3a_paths"]
    print("S3 table read paths:", len(s3a["spark"]), "Spark,", s3a["rust"])
    assert s3a["spark"] and all(f.startswith(f"{prefix}/wh/") for f in s3a["spark"]), s3a["spark"]
    assert s3a["rust"] == ["deletes"], s3a["rust"]
    assert "Scan parquet" in s3a["plan"] and "MetadataLogFileIndex" in s3a["plan"], s3a["plan"]
    assert s3.properties()["s3.secret-access-key"] not in s3a["plan"]
    print("local table read paths:", result["local_paths"])
    assert result["merge"]["updated"] > 0 and result["merge"]["inserted"] > 0, result["merge"]

    # Every task Spark ran ran in one of the two executors, never in the driver ...
    tasks = result["tasks"]
    assert set(tasks["tasks_by_executor"]) == {"0", "1"}, tasks
    assert sum(tasks["tasks_by_executor"].values()) > 20, tasks
    workers = [e for e in tasks["executors"] if e["id"] != "driver"]
    assert len(workers) == 2, tasks
    # ... and the probe tasks ran in executor JVMs, from the workers' folders, blind to the driver's.
    probe = result["probe"]
    assert {p["executor"] for p in probe} <= {"0", "1"} and all(p["executor"] for p in probe), probe
    assert result["driver_pid"] not in {p["pid"] for p in probe}
    for p in probe:
        assert p["cwd"].startswith(str(nodes_root / "worker-")), p
        if hide:
            assert json.loads(p["driver_root_seen"]) == [] and not p["catalog_db_visible"], p
    if not hide:
        print("NOTE: could not hide the driver's folder from the workers (unshare -m needs root)")

    # The secret travelled in every task, but no process wrote it to a file: not while the
    # application ran (executors' block-manager and shuffle files, their Python files, logs)...
    running = result["scan_while_running"]
    assert any("/blockmgr-" in f for f in running["files"]), running["files"]
    assert sum(f.endswith("/stderr") for f in running["files"]) == 2, running["files"]
    assert running["holding"] == []
    # ... nor after it (what is left: logs).
    after = files_holding(s3.properties()["s3.secret-access-key"], str(driver_root), str(nodes_root))
    assert after["files"] and after["holding"] == []

    # The same table, read in this process and by Iceberg Java (JdbcCatalog on the sqlite file, S3FileIO).
    expected = [tuple(r) for r in result["expected"]]
    cat = icefloe.load_catalog(
        catalog_name,
        type="sql",
        uri=f"sqlite:///{driver_root}/catalog.db",
        warehouse=f"{prefix}/wh",
        **s3.properties(),
    )
    table = cat.load_table(TABLE)
    assert table.metadata_location == result["metadata_location"]
    assert rows_of(table.scan().to_arrow()) == expected
    java = set_java_catalog(
        spark,
        catalog_name,
        java_jdbc_s3_catalog_conf(f"jdbc:sqlite:{driver_root}/catalog.db", f"{prefix}/wh", s3),
    )
    java_rows = spark.sql(f"SELECT id, region, amount, ts, name FROM {java}.{TABLE}")
    assert_same_rows(java_rows, table.scan().to_arrow(), context="Java reading the cluster's table")
    assert java_rows.count() == len(expected)
