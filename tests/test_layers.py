"""The layering contract places every package and top-level module of scout_tui."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_every_module_has_a_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [layers] = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    placed = {name for layer in layers for name in re.split(r"\s*[|:]\s*", layer)}
    package = ROOT / "scout_tui"
    present = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    present |= {p.name for p in package.iterdir() if (p / "__init__.py").exists()}
    assert present == placed
