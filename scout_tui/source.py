"""The checkout being scanned: files, parsed ASTs and git history, each read once.

Collectors share one SourceTree, so a file that three collectors look at is read and
`ast.parse`d once (keyed by path for the work tree, by blob id for history).
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import git

DIFF_LIMIT = 256 * 1024


class NotARepository(Exception):
    pass


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    summary: str
    author: str
    date: datetime
    files: tuple[str, ...]


class SourceTree:
    def __init__(self, path: Path) -> None:
        try:
            self.repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise NotARepository(f"not a git repository: {path}") from None
        if self.repo.bare or self.repo.working_tree_dir is None:
            raise NotARepository(f"a bare repository has no checkout to scan: {path}")
        self.root = Path(self.repo.working_tree_dir)
        self._lock = threading.RLock()
        self._text: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._blob_text: dict[tuple[str, str], str | None] = {}
        self._blob_trees: dict[str, ast.Module | None] = {}

    # -- the work tree, as it is -------------------------------------------------------
    def read(self, path: str) -> str | None:
        with self._lock:
            if path not in self._text:
                try:
                    self._text[path] = (self.root / path).read_text(
                        encoding="utf-8", errors="replace"
                    )
                except (OSError, ValueError):
                    self._text[path] = None
            return self._text[path]

    def parse(self, path: str) -> ast.Module | None:
        with self._lock:
            if path not in self._trees:
                text = self.read(path)
                self._trees[path] = _parse(text, path)
            return self._trees[path]

    def exists(self, path: str) -> bool:
        return (self.root / path).exists()

    def glob(self, directory: str, pattern: str = "*.py") -> list[str]:
        base = self.root / directory
        if not base.is_dir():
            return []
        return sorted(
            str(p.relative_to(self.root))
            for p in base.rglob(pattern)
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(base).parts)
        )

    # -- history ---------------------------------------------------------------------
    def commit_before(self, moment: datetime) -> str | None:
        """The newest commit on HEAD at or before `moment`."""
        with self._lock:
            try:
                out = self.repo.git.rev_list("-1", f"--before={moment.isoformat()}", "HEAD")
            except git.GitCommandError:
                return None
        return out.strip() or None

    def read_at(self, commit: str, path: str) -> str | None:
        with self._lock:
            key = (commit, path)
            if key not in self._blob_text:
                try:
                    blob = self.repo.commit(commit).tree / path
                    self._blob_text[key] = blob.data_stream.read().decode("utf-8", "replace")
                    self._blob_trees.setdefault(blob.hexsha, None)
                except (KeyError, ValueError, git.BadName):
                    self._blob_text[key] = None
            return self._blob_text[key]

    def parse_at(self, commit: str, path: str) -> ast.Module | None:
        with self._lock:
            try:
                blob_id = (self.repo.commit(commit).tree / path).hexsha
            except (KeyError, ValueError, git.BadName):
                return None
            if self._blob_trees.get(blob_id) is None:
                self._blob_trees[blob_id] = _parse(self.read_at(commit, path), path)
            return self._blob_trees[blob_id]

    def log(self, since: str | None, until: str | None, paths: list[str]) -> list[CommitInfo]:
        """Commits after `since` up to `until` (commit ids) touching any of `paths`, newest
        first, each with the files it touched among `paths`: one `git log` in all."""
        if until is None:
            return []
        rev = f"{since}..{until}" if since else until
        with self._lock:
            out = self.repo.git.log(
                "--format=%x1e%H%x1f%an%x1f%ct%x1f%s", "--name-only", "--no-renames", rev,
                "--", *paths,
            )  # fmt: skip
        commits = []
        for record in out.split("\x1e")[1:]:
            header, _, names = record.partition("\n")
            sha, author, stamp, summary = header.split("\x1f", 3)
            commits.append(
                CommitInfo(
                    sha=sha,
                    summary=summary,
                    author=author,
                    date=datetime.fromtimestamp(int(stamp), UTC),
                    files=tuple(sorted(n for n in names.splitlines() if n.strip())),
                )
            )
        return commits

    def diff_range(self, base: str, head: str, paths: list[str]) -> str:
        """`git diff base head -- paths`, cut at DIFF_LIMIT characters."""
        with self._lock:
            text = self.repo.git.diff(base, head, "--", *paths)
        if len(text) > DIFF_LIMIT:
            text = text[:DIFF_LIMIT] + f"\n... (diff cut at {DIFF_LIMIT} characters)\n"
        return text

    def files_at(self, commit: str, directory: str) -> list[str]:
        """Names of the files directly under `directory` at `commit`."""
        with self._lock:
            try:
                tree = self.repo.commit(commit).tree / directory.rstrip("/")
            except (KeyError, ValueError, git.BadName):
                return []
            return sorted(child.name for child in tree.blobs)

    def since_when(self, path: str, holds: Callable[[str], bool]) -> CommitInfo | None:
        """The commit from which `holds(text of path)` has been true without a break, walking
        the file's history back from HEAD; None when it does not hold at HEAD."""
        found = None
        for commit in self.log(None, "HEAD", [path]):  # newest first
            text = self.read_at(commit.sha, path)
            if text is None or not holds(text):
                break
            found = commit
        return found

    def subdirs_at(self, commit: str, directory: str) -> list[str]:
        """Names of the directories directly under `directory` at `commit`."""
        with self._lock:
            try:
                tree = self.repo.commit(commit).tree / directory.rstrip("/")
            except (KeyError, ValueError, git.BadName):
                return []
            return sorted(child.name for child in tree.trees)


def _parse(text: str | None, path: str) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError):
        return None
