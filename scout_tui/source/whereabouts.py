"""Where a file or a definition that scout.toml names lives at the scanned commit, when
it is not where scout.toml says: followed forward (it moved before the scanned commit) or
back from the checkout's HEAD (scout.toml is written for today; a past day is scanned)."""

from __future__ import annotations

import re

import git

from scout_tui.analysis.python import pyast
from scout_tui.source.history import MAX_RENAME_DEPTH, GitHistory, pyast_defines
from scout_tui.source.records import LOG_FORMAT, CommitInfo, Fate, commits_of


def under(path: str, prefixes: list[str]) -> bool:
    """Whether `path` is one of `prefixes` or in one ("" is everything)."""
    return any(
        not p.strip("/") or path == p.rstrip("/") or path.startswith(p.rstrip("/") + "/")
        for p in prefixes
    )


class GitWhereabouts(GitHistory):
    def checkout_head(self) -> str | None:
        """The checkout's own HEAD: the commit scout.toml is written for (the scanned one
        is older on a dated run)."""
        with self._lock:
            try:
                return self.repo.head.commit.hexsha
            except ValueError:
                return None

    def _later(self, head: str) -> tuple[str, str] | None:
        """(scanned commit, checkout HEAD) when the checkout has history after the
        scanned commit; None otherwise."""
        at, tip = self._commit_id(head), self.checkout_head()
        return (at, tip) if at is not None and tip is not None and at != tip else None

    def earlier_path(self, path: str, head: str) -> Fate:
        """A file missing at `head` that a later commit has: where it was at `head` (git's
        rename detection, following it back from the checkout's HEAD; "moved", `moved_to`
        the name it had, `commit` the rename), not there yet ("later", `commit` the one
        that added it), or neither ("never")."""
        span = self._later(head)
        if span is None:
            return Fate("never")
        at, tip = span
        key = ("earlier-path", path, at, tip)
        return self.blobs.derived(key, lambda: self._earlier_path(path, at, tip))

    def _earlier_path(self, path: str, at: str, tip: str) -> Fate:
        with self._lock:
            if self._blob_id(tip, path) is None:
                return Fate("never")  # not at the checkout's HEAD either: not this case
        # Walked a rename at a time (the commit that added the name, then git's rename
        # detection in that one commit): `git log --follow` reads every blob on its way and
        # stops at the first one a partial clone lacks.
        name, renamed = path, None
        for _ in range(MAX_RENAME_DEPTH):
            try:
                revs = f"{at}..{tip}"
                out = self._git_at(
                    [revs], "log", "--diff-filter=A", LOG_FORMAT, "-1", revs, "--", name
                )
            except git.GitCommandError:
                return Fate("unknown")
            added = commits_of(out)
            if not added:  # there all along under this name
                if renamed is None or self.read_at(at, name) is None:
                    return Fate("never")  # changed only: another ref's history
                return Fate("moved", renamed, name)
            old = self._renamed_from(added[0].sha, name)
            if old is None:
                return Fate("later", added[0])
            name, renamed = old, added[0]
        return Fate("unknown")

    def _renamed_from(self, commit: str, path: str) -> str | None:
        """The name `commit` renamed to `path` (git's rename detection), if it did."""
        try:
            status = self._git_at([commit], "show", "-M", "--name-status", "--format=", commit)
        except git.GitCommandError:  # a blob the clone lacks: counted as added
            return None
        for line in status.splitlines():
            fields = line.split("\t")
            if len(fields) == 3 and fields[0].startswith("R") and fields[2] == path:
                return fields[1]
        return None

    def earlier_definition(self, path: str, qualname: str, head: str, within: list[str]) -> Fate:
        """A class or function that `path` defines at the checkout's HEAD but not at
        `head`: where it was defined at `head` (exactly one other file under `within`;
        "moved", `commit` the first after `head` that added it to `path`), not yet defined
        ("later"), or neither."""
        span = self._later(head)
        if span is None or pyast.find(self.parse_at(span[1], path), qualname) is None:
            return Fate("never")
        at, tip = span
        commit = self._first_adding(path, qualname, at, tip)
        homes = [p for p in self.definitions(qualname, at, exclude=path) if under(p, within)]
        if len(homes) == 1:
            return Fate("moved", commit, homes[0])
        return Fate("later", commit) if commit is not None else Fate("never")

    def _first_adding(self, path: str, qualname: str, at: str, tip: str) -> CommitInfo | None:
        """The first commit after `at` up to `tip` that changed how often `path` defines
        the outer name of `qualname` (where it arrived there)."""
        outer, _, rest = qualname.partition(".")
        defined = pyast_defines(self.parse_at(at, path), outer)
        name = rest.rsplit(".", 1)[-1] if defined and rest else outer
        needle = rf"(class|def)\s+{re.escape(name)}\b"
        try:
            revs = f"{at}..{tip}"
            out = self._git_at(
                [revs], "log", "-S", needle, "--pickaxe-regex", LOG_FORMAT, revs, "--", path
            )
        except git.GitCommandError:
            return None
        found = commits_of(out)
        return found[-1] if found else None  # oldest last

    def moved_definition(self, path: str, qualname: str, head: str, within: list[str]) -> Fate:
        """`definition_fate`, with the new home looked for only under `within` (a name
        defined once in the core paths, not a copy elsewhere)."""
        fate = self.definition_fate(path, qualname, head)
        if fate.kind != "moved" or fate.moved_to is None or under(fate.moved_to, within):
            return fate
        return Fate("removed", fate.commit)
