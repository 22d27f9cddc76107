"""`make lint`: every module and package of python/icefloe (and of each package a contract
layers inside, such as icefloe/write) sits in one layer of its import-linter contract in
pyproject.toml, so a new module cannot stay outside the layering
(import-linter checks only the modules its layers name)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "icefloe"


def main() -> int:
    """Each layers contract's container (`icefloe`, `icefloe.write`) against its modules."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    failed = False
    for contract in config["contracts"]:
        if contract["type"] != "layers":
            continue
        for container in contract["containers"]:
            named: list[str] = []
            for layer in contract["layers"]:
                named += [m.strip() for m in re.split(r"[:|]", layer)]
            package = PACKAGE.parent.joinpath(*container.split("."))
            present = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
            present |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
            missing = sorted(present - set(named))
            unknown = sorted(set(named) - present)
            twice = sorted({m for m in named if named.count(m) > 1})
            found = (("in no layer", missing), ("named but absent", unknown), ("in two layers", twice))
            for what, names in found:
                if names:
                    print(f"{container} modules {what} of the importlinter layers: {', '.join(names)}")
                    failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
