"""`fresh_world` copies a world built once a session: the copy must be what a build at its
place gives, or tests would run on a world no user has."""

from __future__ import annotations

import subprocess
from pathlib import Path

from scout_tui.sandbox.demo.sample import build_sample

from .conftest import TODAY, copy_sample


def _tree(base: Path) -> dict[str, bytes]:
    """Every file but git's own, its text with `base` said as BASE."""
    return {
        str(path.relative_to(base)): path.read_bytes().replace(str(base).encode(), b"BASE")
        for path in sorted(base.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(base).parts
    }


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout


def test_a_copied_world_is_the_world_a_build_there_makes(tmp_path, _fresh_template):
    built = build_sample(tmp_path / "built-at-a-longer-path", TODAY)
    copied = copy_sample(_fresh_template, tmp_path / "copied")
    assert _tree(copied.base) == _tree(built.base)
    assert b"BASE" in _tree(copied.base)["scout.toml"]  # its paths moved with it
    assert _head(copied.repo) == _head(built.repo)
    assert copied.torch_root == copied.base / "site-packages" / "torch"
