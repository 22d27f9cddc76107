"""The suite's Spark sessions write local files through tests/java/NioLocalFileSystem.java
(permissions set by java.nio, not a `chmod` process a file): the same files, with the
permission bits Hadoop's own local file system gives them."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any


def test_local_files_get_hadoops_permissions_without_a_process(spark: Any, tmp_path: Path) -> None:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    path = jvm.org.apache.hadoop.fs.Path(f"file://{tmp_path}/sub/data.bin")
    fs = path.getFileSystem(conf)
    assert fs.getClass().getName() == "NioLocalFileSystem"
    out = fs.create(path, True)
    out.write(7)
    out.close()
    # Hadoop's umask (`fs.permissions.umask-mode`, 022 unless set), not the process's.
    umask = int(conf.get("fs.permissions.umask-mode", "022"), 8)
    assert stat.S_IMODE((tmp_path / "sub" / "data.bin").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "sub" / ".data.bin.crc").stat().st_mode) == 0o666 & ~umask
    assert stat.S_IMODE((tmp_path / "sub").stat().st_mode) == 0o777 & ~umask
    # An explicit permission, as Hadoop's setPermission takes it.
    fs.setPermission(path, jvm.org.apache.hadoop.fs.permission.FsPermission.createImmutable(0o640))
    assert stat.S_IMODE((tmp_path / "sub" / "data.bin").stat().st_mode) == 0o640
    assert fs.open(path).read() == 7
