"""Which checkout a folder is in, from one `git rev-parse`: what a session needs before
anything is read from git. GitPython and the history readers (a fifth of the console's
start) load when a run reads the tree, not when the console opens a cached one."""

from __future__ import annotations

import subprocess
from pathlib import Path

from scout_tui.model import Checkout


def find_checkout(path: Path) -> Checkout:
    """The checkout holding `path`, as `SourceTree(path).checkout()` names it. Anything
    git's plumbing does not answer plainly (a bare repository, a path inside `.git`, an
    ownership refusal, no git on PATH) is left to SourceTree, which says why."""
    try:
        answer = subprocess.run(
            [
                "git",
                "-C",
                str(path),
                "rev-parse",
                "--path-format=absolute",
                "--show-toplevel",
                "--git-common-dir",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        answer = None
    lines = answer.stdout.splitlines() if answer is not None and answer.returncode == 0 else []
    if len(lines) != 2 or not all(Path(line).is_absolute() for line in lines):
        from scout_tui.source.tree import SourceTree

        return SourceTree(path).checkout()
    root, common_dir = lines
    return Checkout.of(str(Path(root).resolve()), str(Path(common_dir).resolve()))
