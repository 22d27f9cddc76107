"""`make lint`: every top-level module and package of python/icefloe sits in one layer of the
import-linter contract in pyproject.toml, so a new module cannot stay outside the layering
(import-linter checks only the modules its layers name)."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "icefloe"


def main() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    named: list[str] = []
    for contract in config["contracts"]:
        if contract["type"] == "layers":
            for layer in contract["layers"]:
                named += [m.strip() for m in re.split(r"[:|]", layer)]
    present = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    present |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    missing = sorted(present - set(named))
    unknown = sorted(set(named) - present)
    twice = sorted({m for m in named if named.count(m) > 1})
    for what, names in (("in no layer", missing), ("named but absent", unknown), ("in two layers", twice)):
        if names:
            print(f"icefloe modules {what} of pyproject's importlinter layers: {', '.join(names)}")
    return 1 if missing or unknown or twice else 0


if __name__ == "__main__":
    sys.exit(main())
