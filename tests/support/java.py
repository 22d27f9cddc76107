"""The one way the tests (and the benchmarks and the golden generator) compile and run a small
Java program against Iceberg Java: `compile_java` builds a `.java` source against a classpath
into a cache folder keyed by that classpath (recompiled when the source is newer than its
class), `java_command` is the `java` line that runs it."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JAVA_SOURCES = ROOT / "tests" / "java"
CACHE = ROOT / ".cache" / "java"


def spark_jars_classpath() -> str:
    """PySpark's own jars as a classpath entry (`<pyspark>/jars/*`)."""
    import pyspark

    return f"{Path(pyspark.__file__).parent / 'jars'}/*"


def compile_java(source: Path, classpath: str, cache: Path = CACHE) -> Path:
    """The folder holding the classes of `source` compiled against `classpath`:
    `cache/<classpath digest>`, compiled once (and again when the source is newer than its
    class). A compile error raises with javac's output."""
    digest = hashlib.sha1(classpath.encode()).hexdigest()[:12]
    out = cache / digest
    cls = out / f"{source.stem}.class"
    out.mkdir(parents=True, exist_ok=True)
    # Test processes run side by side (pytest-xdist workers, the two PySpark passes): one
    # compiles while the others wait, so none loads a class file being written.
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not cls.exists() or cls.stat().st_mtime < source.stat().st_mtime:
            _javac(source, classpath, out)
    return out


def _javac(source: Path, classpath: str, out: Path) -> None:
    proc = subprocess.run(
        ["javac", "-nowarn", "-cp", classpath, "-d", str(out), str(source)],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"javac {source} against {classpath} failed:\n{proc.stdout}{proc.stderr}")


def java_command(source: Path, classpath: str, heap: str = "2g", cache: Path = CACHE) -> list[str]:
    """The `java` command running the main class of `source` (named after the file), compiled
    by `compile_java` against `classpath` and run with it."""
    out = compile_java(source, classpath, cache)
    return ["java", f"-Xmx{heap}", "-cp", f"{out}{os.pathsep}{classpath}", source.stem]


def java_core_helper(class_name: str) -> list[str]:
    """The `java` command running tests/java/<class_name>.java, a small program on Iceberg
    Java's core API, compiled against the oracle jar and Spark's jars."""
    from support.session import oracle_jar

    classpath = f"{oracle_jar()}{os.pathsep}{spark_jars_classpath()}"
    return java_command(JAVA_SOURCES / f"{class_name}.java", classpath)
