"""`make wheel` builds an abi3 wheel that installs into a fresh venv and imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import icefloe

ROOT = Path(__file__).resolve().parent.parent


def test_abi3_wheel_installs_into_fresh_venv(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    maturin = Path(sys.executable).parent / "maturin"
    subprocess.run([str(maturin), "build", "--release", "-q", "-o", str(out)], cwd=ROOT, check=True)
    wheels = list(out.glob("icefloe-*.whl"))
    assert len(wheels) == 1, wheels
    assert "abi3" in wheels[0].name, wheels[0].name

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheels[0])], check=True)
    code = (
        "import icefloe, pyarrow as pa, icefloe._native as n;"
        "s = n.schema_from_arrow(pa.schema([pa.field('a', pa.int64(), nullable=False)]));"
        "print(icefloe.__version__, n.schema_to_arrow(s).field('a').type)"
    )
    res = subprocess.run([str(py), "-c", code], cwd=tmp_path, check=True, capture_output=True, text=True)
    assert res.stdout.split() == [icefloe.__version__, "int64"]
    # The console script, with the dependencies the wheel declares (rich, pyyaml).
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
