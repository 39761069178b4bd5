"""What git says, as data: commits, where a path went, tree listings, and which paths a
commit touched."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from scout_tui.errors import scrub

LINK, SUBMODULE = "120000", "160000"  # git tree modes


class NotARepository(Exception):
    pass


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    summary: str
    author: str
    date: datetime
    files: tuple[str, ...]


@dataclass(frozen=True)
class Fate:
    """What became of a file or a definition that is not where scout.toml says it is."""

    # unknown: history unreadable; later: not yet there (a later commit adds it)
    kind: Literal["moved", "removed", "never", "unknown", "later"]
    commit: CommitInfo | None = None  # the commit that moved, removed or added it
    moved_to: str | None = None  # its one new home, when there is exactly one


@dataclass(frozen=True)
class Entry:
    mode: str  # 100644, 100755: a file; 120000: a symlink; 160000: a submodule
    blob: str

    @property
    def regular(self) -> bool:
        return self.mode.startswith("100")


@dataclass(frozen=True)
class TreeIndex:
    """A commit's files (`git ls-tree -r`: path → mode and blob id) and the folders
    that hold them ("" is the top)."""

    files: dict[str, Entry]
    dirs: frozenset[str]

    @classmethod
    def of(cls, listing: bytes) -> TreeIndex:
        files: dict[str, Entry] = {}
        dirs = {""}
        for record in listing.split(b"\0"):
            head, tab, name = record.partition(b"\t")
            fields = head.split()
            if not tab or len(fields) != 3:
                continue
            path = name.decode("utf-8", "surrogateescape")  # as os names an undecodable file
            files[path] = Entry(fields[0].decode(), fields[2].decode())
            parts = path.split("/")
            dirs.update("/".join(parts[:n]) for n in range(1, len(parts)))
        return cls(files, frozenset(dirs))


def touches(files: frozenset[str], paths: Sequence[str]) -> bool:
    """Whether any of `files` is one of `paths` or lies under one ("." is everything)."""
    for path in paths:
        path = path.strip("/")
        if path in ("", "."):
            if files:
                return True
            continue
        if path in files or any(f.startswith(path + "/") for f in files):
            return True
    return False


LOG_FORMAT = "--format=%x1e%H%x1f%an%x1f%ct%x1f%s"


def commits_of(out: str) -> list[CommitInfo]:
    found = []
    for record in out.split("\x1e")[1:]:
        header = record.partition("\n")[0]
        sha, author, stamp, summary = header.split("\x1f", 3)
        found.append(
            CommitInfo(
                sha, scrub(summary), scrub(author), datetime.fromtimestamp(int(stamp), UTC), ()
            )
        )
    return found
