"""`fresh_world` copies a world built once a session: the copy must be what a build at its
place gives, or tests would run on a world no user has."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scout_tui.errors import UsageError
from scout_tui.sandbox.demo.files import HISTORY
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


def test_the_demo_made_again_in_its_folder_is_the_same_world_never_a_doubled_history(tmp_path):
    """`scout demo --dir D` twice: the second build makes the same commits anew (the day's
    cached run still stands for it); a repository the demo did not make is refused."""
    first = build_sample(tmp_path / "demo", TODAY)

    def files(base: Path) -> dict[str, bytes]:  # the cache's database is written anew
        return {name: text for name, text in _tree(base).items() if not name.startswith("cache")}

    head, made = _head(first.repo), files(first.base)
    again = build_sample(tmp_path / "demo", TODAY)
    assert _head(again.repo) == head and files(again.base) == made
    commits = subprocess.run(
        ["git", "-C", str(again.repo), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert int(commits) == 1 + len(HISTORY)
    mine = tmp_path / "mine" / "repo"
    mine.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(mine)], check=True)
    (mine / "keep.txt").write_text("mine\n")
    with pytest.raises(UsageError, match="a git repository the demo did not make"):
        build_sample(tmp_path / "mine", TODAY)
    assert (mine / "keep.txt").read_text() == "mine\n"
