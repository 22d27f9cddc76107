"""Installs a built icefloe wheel into the running venv the way `maturin develop` installs the
checkout: the wheel's metadata and `icefloe` command, its native module copied into
`python/icefloe/`, and `python/` on the venv's path (a .pth), so edits to the Python package
take effect without a rebuild.

`make release` builds one release wheel (the manylinux wheel of `make dist`) and installs it
with this script; the wheel test installs the same file into fresh venvs. One release build
of the crate serves both, where `maturin develop --release` plus the wheel's own build made
two (about ten minutes each on CI's two cores).

Usage: python .ci/install_editable.py <wheel> <python source folder>
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path


def main() -> None:
    wheel, source = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
    # First, as pip's uninstall of an earlier install may remove files it recorded.
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)]
    subprocess.run(pip, check=True)
    # The wheel's copy of the package would shadow the checkout (site-packages comes before
    # the .pth entries on sys.path): keep its metadata and command, drop the package.
    purelib = Path(sysconfig.get_paths()["purelib"])
    shutil.rmtree(purelib / "icefloe", ignore_errors=True)
    (purelib / "icefloe.pth").write_text(f"{source}\n")
    with zipfile.ZipFile(wheel) as zf:
        natives = [n for n in zf.namelist() if n.startswith("icefloe/_native") and n.endswith(".so")]
        if len(natives) != 1:
            raise SystemExit(f"{wheel}: expected one icefloe/_native*.so, found {natives}")
        target = source / "icefloe" / Path(natives[0]).name
        # A new file renamed over the old one: running processes keep the module they
        # loaded (rewriting it in place would crash them) and new ones never see half a file.
        partial = target.with_suffix(".so.partial")
        with zf.open(natives[0]) as src, open(partial, "wb") as dst:
            shutil.copyfileobj(src, dst)
        partial.chmod(0o755)
        os.replace(partial, target)
    print(f"installed {wheel.name} editable: {target}")


if __name__ == "__main__":
    main()
