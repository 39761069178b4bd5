"""What the console's start costs before its first paint: a session names its checkout with
one `git rev-parse` (the same checkout GitPython names, so the cache and the state store key
it alike), and neither GitPython nor markdown-it is imported until the tree is on screen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scout_tui.source.checkout import find_checkout
from scout_tui.source.records import NotARepository
from scout_tui.source.tree import SourceTree


def git(repo: Path, *args: str) -> None:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
    }
    env |= {"GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q")
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "deeper" / "a.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_the_checkout_is_the_one_gitpython_names(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "worktree"
    git(repo, "worktree", "add", "-q", str(worktree))
    link = tmp_path / "link"
    link.symlink_to(repo)
    places = [repo, repo / "sub", repo / "sub" / "deeper", worktree, link / "sub"]
    for place in places:
        assert find_checkout(place) == SourceTree(place).checkout(), place
    # A worktree is its own checkout of the same repository.
    assert find_checkout(worktree).git_dir == find_checkout(repo).git_dir
    assert find_checkout(worktree).id != find_checkout(repo).id


def test_what_rev_parse_does_not_answer_is_said_as_before(repo: Path, tmp_path: Path) -> None:
    nothing = tmp_path / "plain"
    nothing.mkdir()
    with pytest.raises(NotARepository, match="not a git repository"):
        find_checkout(nothing)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(NotARepository, match="bare repository has no checkout"):
        find_checkout(bare)
    # Inside `.git`, plumbing says "not a work tree"; GitPython names the checkout.
    assert find_checkout(repo / ".git") == SourceTree(repo / ".git").checkout()


def test_the_start_imports_neither_gitpython_nor_markdown_it(sample_world) -> None:
    """Everything the console imports and builds before the run is read, in a fresh
    process: the session, the app, its screen."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from scout_tui.session import Session, SessionOptions\n"
        "from scout_tui.tui.app import ScoutApp\n"
        f"options = SessionOptions(repo=Path({str(sample_world.repo)!r}), "
        f"config=Path({str(sample_world.config)!r}), offline=True)\n"
        "session = Session(options)\n"
        "ScoutApp(session, load_cached=True)\n"
        "print(sorted(m for m in ('git', 'markdown_it', 'github') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    assert done.stdout.strip() == "[]", done.stdout
