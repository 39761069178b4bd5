"""One forward pass over history gives what `git blame` gives, renames included."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

import git

from scout_tui.source.tree import SourceTree

WHO = [git.Actor("Ann", "ann@example.com"), git.Actor("Bob", "bob@example.com")]


def commit(repo: git.Repo, message: str, number: int) -> None:
    repo.git.add(A=True)
    stamp = f"{int(datetime(2026, 1, 1 + number, tzinfo=UTC).timestamp())} +0000"
    who = WHO[number % 2]
    repo.index.commit(message, author=who, committer=who, author_date=stamp, commit_date=stamp)


def git_blame(root, path):
    out = subprocess.run(
        ["git", "blame", "--line-porcelain", "HEAD", "--", path],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    hexdigits = set("0123456789abcdef")
    return [
        line.split()[0]
        for line in out.splitlines()
        if len(line) > 41 and line[40] == " " and set(line[:40]) <= hexdigits
    ]


def test_replay_matches_git_blame(tmp_path):
    repo = git.Repo.init(tmp_path, initial_branch="main")
    old = tmp_path / "old_dir" / "mod.py"
    old.parent.mkdir()
    old.write_text("".join(f"line {n}\n" for n in range(20)))
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "other.py").write_text("a\nb\nc\n")
    commit(repo, "create", 0)
    lines = old.read_text().splitlines(keepends=True)
    lines[3] = "changed 3\n"
    lines.insert(10, "inserted\n")
    del lines[15:17]
    old.write_text("".join(lines))
    commit(repo, "edit", 1)
    repo.git.mv("old_dir/mod.py", "exp/mod.py")  # a rename, which blame follows
    commit(repo, "move", 2)
    moved = tmp_path / "exp" / "mod.py"
    moved.write_text("# TODO: header\n" + moved.read_text().replace("line 12\n", "twelve\n"))
    (tmp_path / "exp" / "other.py").write_text("a\nB\nc\nd\n")
    commit(repo, "edit again", 3)

    source = SourceTree(tmp_path)
    origins = source.blame_many(["exp/mod.py", "exp/other.py"], "HEAD")
    for path in ("exp/mod.py", "exp/other.py"):
        assert [o.commit for o in origins[path]] == git_blame(tmp_path, path), path
    assert origins["exp/mod.py"][0].author == "Bob"  # the header line, from "edit again"
    assert source.former_names(["exp/mod.py"], "HEAD") == {"old_dir/mod.py"}
