"""A repository's history, asked of git: logs, renames, blame, pickaxe, the fate of a
path or a definition, what changed between two commits. A walk from the whole history
(a file's log, its blame, a pickaxe) is kept in the `BlobStore` and extended, not redone,
when the head moves on (a replay's next day, tomorrow's run)."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from typing import TypeVar

import git

from scout_tui.analysis.python import pyast
from scout_tui.errors import Cancelled, scrub
from scout_tui.source.blame import Origin, Stopped, origins_of, plain_origins, replay
from scout_tui.source.objects import GitObjects, names_commits
from scout_tui.source.records import LOG_FORMAT, CommitInfo, Fate, commits_of, touches

T = TypeVar("T")
DIFF_LIMIT = 256 * 1024
MAX_RENAME_DEPTH = 8
FEW_PATHS = 64  # up to this many, name the files to `git log`; past it, their folders

_HUNK = re.compile(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


class GitHistory(GitObjects):
    """The history of HEAD (of the scanned commit, for a tree `at` one); a running blame
    replay stops at its next commit when `cancel` is set (its git process is killed)."""

    def first_commit_date(self, path: str | None = None) -> datetime | None:
        """When the history of HEAD (of `path` in it, when given) begins."""
        limit = ["--", path] if path else ["--max-parents=0"]

        def walk(revs: str) -> datetime | None:
            try:
                out = self._git_at([revs], "log", "--format=%ct", revs, *limit)
            except git.GitCommandError:
                return None
            stamps = [int(line) for line in out.split() if line.isdigit()]
            return datetime.fromtimestamp(min(stamps), UTC) if stamps else None

        def earliest(known: datetime | None, between: datetime | None) -> datetime | None:
            return min((d for d in (known, between) if d is not None), default=None)

        return self._walk(("first-commit", path), self._tip, [path or "."], walk, earliest)

    def _walk(
        self,
        key: Hashable,
        head: str,
        paths: Sequence[str],
        walk: Callable[[str], T],
        extend: Callable[[T, T], T] | None = None,
    ) -> T:
        """`walk(head)`, answered from the store when it can be: an answer at an ancestor
        of `head` holds when no commit since touched `paths`; else, with `extend`, it is
        joined with `walk("ancestor..head")` (the commits in between only)."""
        commit = self._commit_id(head)
        if commit is None:
            return walk(head)
        walks = self.blobs.walks
        for known, answer in walks.known(key):
            if known == commit:
                return answer
            touched = walks.touched(known, commit, functools.partial(self._touched, known, commit))
            if touched is None:
                continue
            if not touches(touched, paths):
                found = answer
            elif extend is not None:
                found = extend(answer, walk(f"{known}..{commit}"))
            else:
                break
            walks.keep(key, commit, found)
            return found
        found = walk(commit)
        walks.keep(key, commit, found)
        return found

    def _touched(self, old: str, new: str) -> frozenset[str] | None:
        """The files the commits after `old` up to `new` touched (a merge's files against
        each parent); None when `old` is not an ancestor of `new`."""
        on_chain = any(sha == old for sha, _ in self._first_parents(new))  # (listed once)
        with self._lock:
            try:
                if not on_chain:
                    self.repo.git.merge_base("--is-ancestor", old, new)
                out = self._git_at(
                    [f"{old}..{new}"],
                    "log",
                    *("-m", "--name-only", "--no-renames", "--format=", f"{old}..{new}"),
                )
            except git.GitCommandError:
                return None
        return frozenset(line for line in out.splitlines() if line)

    def committed_at(self, sha: str) -> datetime | None:
        """When `sha` was committed (its committer date); None when git cannot say."""
        try:
            out = self._git_at([sha], "log", "-1", "--format=%ct", sha)
        except git.GitCommandError:
            return None
        stamp = out.strip()
        return datetime.fromtimestamp(int(stamp), UTC) if stamp.isdigit() else None

    def commit_before(self, moment: datetime) -> str | None:
        """The commit HEAD's branch was at, at `moment`: the newest by committer date on
        HEAD's first-parent chain at or before it (a merged branch's own commits are not
        what the branch held that day)."""
        tip = self._commit_id(self._tip)
        if tip is None:
            return None
        stamp = moment.timestamp()
        return next((sha for sha, when in self._first_parents(tip) if when <= stamp), None)

    def _first_parents(self, tip: str) -> Sequence[tuple[str, int]]:
        """`tip`'s first-parent chain, newest first, with committer times. Listed once for
        the store: a commit on a chain already listed (a replay's days) is read from it."""
        chains: dict[str, tuple[list[tuple[str, int]], dict[str, int]]]
        chains = self.blobs.derived(("first-parent chains",), dict)
        for chain, position in list(chains.values()):
            if tip in position:
                return chain[position[tip] :]
        try:
            out = self._git_at([tip], "rev-list", "--first-parent", "--format=%ct", tip)
        except git.GitCommandError:
            return []
        lines = out.split()  # "commit <sha>", then its time, for each commit
        chain = [
            (lines[n + 1], int(lines[n + 2]))
            for n in range(0, len(lines) - 2, 3)
            if lines[n] == "commit" and lines[n + 2].isdigit()
        ]
        chains[tip] = (chain, {sha: n for n, (sha, _) in enumerate(chain)})
        return chain

    def log(self, since: str | None, until: str | None, paths: list[str]) -> list[CommitInfo]:
        """Commits after `since` up to `until` (commit ids) touching any of `paths`, newest
        first, each with the files it touched among `paths`: one `git log` in all."""
        if until is None:
            return []
        self._check()
        if since is None:  # a file's whole history: carried from run to run
            return self._walk(
                ("log", tuple(paths)),
                until,
                paths,
                lambda revs: self._log(revs, paths),
                lambda known, newer: newer + known,
            )
        return self._log(f"{since}..{until}", paths)

    def _log(self, rev: str, paths: list[str]) -> list[CommitInfo]:
        out = self._git_at(
            [rev],
            "log",
            *("--format=%x1e%H%x1f%an%x1f%ct%x1f%s", "--name-only", "--no-renames", rev),
            *("--", *paths),
        )
        commits = []
        for record in out.split("\x1e")[1:]:
            header, _, names = record.partition("\n")
            sha, author, stamp, summary = header.split("\x1f", 3)
            commits.append(
                CommitInfo(
                    sha=sha,
                    summary=scrub(summary),
                    author=scrub(author),
                    date=datetime.fromtimestamp(int(stamp), UTC),
                    files=tuple(sorted(n for n in names.splitlines() if n.strip())),
                )
            )
        return commits

    def former_names(self, paths: list[str], head: str) -> set[str]:
        """Every name these files had before a rename, following chains (renames are what
        `git blame` follows). Cheap: a path-limited log of when each file was added, then
        rename detection only in those few commits."""
        names: set[str] = set()
        pending = sorted(set(paths))
        for _ in range(MAX_RENAME_DEPTH):
            if not pending:
                break
            out = self._git_at(
                [head],
                "log",
                *("--diff-filter=A", "--name-only", "--format=%x1e%H", head),
                *("--", *_covering_dirs(pending)),
            )
            added_in: dict[str, str] = {}
            for record in out.split("\x1e")[1:]:
                sha, _, files = record.partition("\n")
                for name in files.split("\n"):
                    added_in.setdefault(name.strip(), sha.strip())  # newest add first
            commits = {added_in[path] for path in pending if path in added_in}
            found: list[str] = []
            if not commits:
                break
            # One process for all the commits that added these files.
            ordered = sorted(commits)
            status = self._git_at(ordered, "show", "-M", "--name-status", "--format=", *ordered)
            for line in status.splitlines():
                fields = line.split("\t")
                renamed = len(fields) == 3 and fields[0].startswith("R")
                if renamed and fields[2] in pending and fields[1] not in names:
                    names.add(fields[1])
                    found.append(fields[1])
            pending = found
        return names

    def blame_many(self, paths: list[str], head: str) -> dict[str, list[Origin]]:
        """Line origins of each path at `head`, from one forward pass over the history of
        those paths and of the names they had before renames."""
        if not paths:
            return {}
        self._check()
        commit = self._commit_id(head)
        if commit is None:
            return self._blame(paths, head)
        found: dict[str, list[Origin]] = {}
        pending = []
        walks = self.blobs.walks
        for path in paths:  # a file no commit touched since an earlier blame is blamed alike
            for known, answer in walks.known(("blame", path)):
                touched = walks.touched(
                    known, commit, functools.partial(self._touched, known, commit)
                )
                if known == commit or (touched is not None and not touches(touched, [path])):
                    found[path] = answer
                    break
            else:
                pending.append(path)
        blamed = self._blame(pending, commit) if pending else {}
        for path in pending:
            found[path] = blamed.get(path, [])
        for path in paths:
            walks.keep(("blame", path), commit, found[path])
        return {path: found[path] for path in paths if found[path] or path in blamed}

    def _blame(self, paths: list[str], head: str) -> dict[str, list[Origin]]:
        # Git matches a few directories far faster than hundreds of file names (then the
        # replay covers the other files in them too, and the result keeps only `paths`).
        scope = set(paths) if len(paths) <= FEW_PATHS else _covering_dirs(paths)
        names = sorted(scope | self.former_names(paths, head))
        # At a commit, the replay's answer is kept on disk, as `_git_at` keeps git's.
        kept = self.blobs.answers if names_commits(head) else None
        key = (*self._answers_scope(), "blame", head, *names, "\0", *paths)
        if kept is not None and (found := kept.get(key)) is not None:
            known = origins_of(found)
            if known is not None:
                return known
        command = [
            *("git", "log", "--reverse", "--format=%x1e%H%x1f%an%x1f%at", "-p"),
            *("--unified=0", "-M", "--no-color", "--no-ext-diff", head, "--", *names),
        ]
        process = subprocess.Popen(
            command, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert process.stdout is not None
        try:
            origins = replay(process.stdout, should_stop=self._cancel.is_set)
        except Stopped:
            raise Cancelled from None
        finally:
            if self._cancel.is_set():
                process.kill()
            process.stdout.close()
            process.wait()
        blamed = {path: origins[path] for path in paths if path in origins}
        if kept is not None and process.returncode == 0:  # a partial answer is not kept
            kept.put(key, plain_origins(blamed))
        return blamed

    def diff_range(self, base: str, head: str, paths: list[str]) -> str:
        """`git diff base head -- paths`, cut at DIFF_LIMIT characters. Past the cut git is
        stopped, unread: a diff of a 4 GB file costs what its first lines cost."""
        command = ["git", "diff", base, head, "--", *paths]
        process = subprocess.Popen(
            command, cwd=self.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stdout is not None and process.stderr is not None
        most = DIFF_LIMIT * 4  # bytes that hold DIFF_LIMIT characters, whatever they are
        data = process.stdout.read(most + 1)
        cut = len(data) > most
        if cut:
            process.kill()
        process.stdout.close()
        error = process.stderr.read().decode("utf-8", "replace")
        process.stderr.close()
        if process.wait() != 0 and not cut:
            raise git.GitCommandError(command, process.returncode, error)
        text = data.decode("utf-8", "surrogateescape")
        text = scrub(text if cut else text.removesuffix("\n"))  # as GitPython gave it
        if len(text) > DIFF_LIMIT:
            text = text[:DIFF_LIMIT] + f"\n... (diff cut at {DIFF_LIMIT} characters)\n"
        return text

    def since_when(self, path: str, holds: Callable[[str], bool]) -> CommitInfo | None:
        """The commit from which `holds(text of path)` has been true without a break, walking
        the file's history back from HEAD; None when it does not hold at HEAD."""
        found = None
        for commit in self.log(None, self._tip, [path]):  # newest first
            text = self.read_at(commit.sha, path)
            if text is None or not holds(text):
                break
            if commit.sha in self.shallow_roots():
                return None  # it may hold from before the cut: since when is not known
            found = commit
        return found

    def path_fate(self, path: str, head: str) -> Fate:
        """A file missing at `head`: moved (git's rename detection, in the commit that
        removed it), removed, or never in the history of `head`."""
        return self._walk(
            ("path-fate", path), head, [path], lambda revs: self._path_fate(path, revs)
        )

    def _path_fate(self, path: str, head: str) -> Fate:
        try:
            out = self._git_at([head], "log", "--diff-filter=D", LOG_FORMAT, "-1", head, "--", path)
        except git.GitCommandError:  # a shallow or partial clone: blobs it does not hold
            return Fate("unknown")
        gone = commits_of(out)
        if not gone:
            return Fate("never")
        sha = gone[0].sha
        status = self._git_at([sha], "show", "-M", "--name-status", "--format=", sha)
        for line in status.splitlines():
            fields = line.split("\t")
            if len(fields) == 3 and fields[0].startswith("R") and fields[1] == path:
                return Fate("moved", gone[0], fields[2])
        return Fate("removed", gone[0])

    def definition_fate(self, path: str, qualname: str, head: str) -> Fate:
        """A class or function missing from `path` at `head` (the file is there): the last
        commit that changed how often the file defines it (git's pickaxe), and where it is
        defined now when exactly one file of `head` does."""
        outer, _, _ = qualname.partition(".")
        name = qualname.rsplit(".", 1)[-1]
        missing_outer = pyast_defines(self.parse_at(head, path), outer) is False
        needle = f"class {outer}" if missing_outer else f"def {name}"
        try:
            changed = self.pickaxe(needle, path, head)
        except git.GitCommandError:  # a shallow or partial clone: blobs it does not hold
            return Fate("unknown")
        if changed is None:
            return Fate("never")
        homes = self.definitions(qualname, head, exclude=path)
        if len(homes) == 1:
            return Fate("moved", changed, homes[0])
        return Fate("removed", changed)

    def pickaxe(self, needle: str, path: str, head: str, moves: bool = False) -> CommitInfo | None:
        """The last commit up to `head` that changed how often `path` holds `needle`
        (`git log -S`): where a name was added or removed; with `moves`, also one that
        moved it within the file (`-G`: a diff line holds it). Raises git.GitCommandError
        when the history cannot be read."""
        option = ("-G", re.escape(needle)) if moves else ("-S", needle)

        def walk(revs: str) -> CommitInfo | None:
            out = self._git_at([revs], "log", *option, LOG_FORMAT, "-1", revs, "--", path)
            found = commits_of(out)
            return found[0] if found else None

        return self._walk(
            ("pickaxe", needle, path, moves),
            head,
            [path],
            walk,
            lambda known, newer: newer or known,
        )

    def definitions(self, qualname: str, head: str, exclude: str = "") -> list[str]:
        """The Python files of `head` that define `qualname` (`Class.method`, `function`)."""
        outer = qualname.partition(".")[0]
        pattern = rf"^\s*(async\s+)?(class|def)\s+{outer}\b"
        try:
            out = self._git_at([head], "grep", "-l", "-E", pattern, head, "--", "*.py")
        except git.GitCommandError:  # git grep exits 1 when nothing matches
            return []
        paths = [line.split(":", 1)[1] for line in out.splitlines() if ":" in line]
        return [
            p
            for p in paths
            if p != exclude and pyast.find(self.parse_at(head, p), qualname) is not None
        ]

    def changed_between(self, base: str, head: str) -> set[str]:
        """Every file some commit changed from `base` to `head` (deleted ones included)."""
        indexes = [self._listed(base), self._listed(head)]
        if indexes[0] is not None and indexes[1] is not None:  # both listed already
            before, after = indexes[0].files, indexes[1].files
            return {
                path for path in before.keys() | after.keys() if before.get(path) != after.get(path)
            }
        out = self._git_at([base, head], "diff", "--name-only", "--no-renames", base, head)
        return {line for line in out.splitlines() if line.strip()}

    def changed_lines(self, commit: str, path: str) -> list[tuple[int, int]]:
        """The line ranges (first, last, in the commit's version) that `commit` changed in
        `path`; a pure deletion counts as the line it happened at."""
        with self._lock:
            out = self.repo.git.diff("-U0", "--no-color", commit + "^", commit, "--", path)
        ranges = []
        for match in _HUNK.finditer(out):
            start, count = int(match.group(1)), int(match.group(2) or 1)
            ranges.append((start, start + max(count, 1) - 1))
        return ranges

    def defined_names(self, head: str) -> set[str]:
        """Every function and class name the Python files of `head` define, from `git grep`
        (no parse); per blob, so a later commit greps only the files it changed."""
        commit = self._commit_id(head)
        index = self._index_of(commit) if commit is not None else None
        if commit is None or index is None:
            return self._grep_names(head, ["*.py"]).get(None, set())
        files = {
            path: entry.blob
            for path, entry in index.files.items()
            if entry.regular and path.endswith(".py")
        }
        names: set[str] = set()
        pending = []
        for path, blob in files.items():
            known = self.blobs.known_derived(("defined-names", blob))
            if known is None:
                pending.append(path)
            else:
                names |= known
        if pending:
            grepped = self._grep_names(commit, ["*.py"] if len(pending) > FEW_PATHS else pending)
            for path in pending:
                found = frozenset(grepped.get(path, ()))
                self.blobs.derived(
                    ("defined-names", files[path]), functools.partial(frozenset, found)
                )
                names |= found
        return names

    def _grep_names(self, head: str, pathspecs: list[str]) -> dict[str | None, set[str]]:
        """The def and class names `git grep` finds at `head`, by file (None: all, when
        the files cannot be told apart)."""
        pattern = r"^\s*(async\s+)?(def|class)\s+\w+"
        try:
            out = self._git_at([head], "grep", "-z", "-o", "-E", pattern, head, "--", *pathspecs)
        except git.GitCommandError:
            return {}
        found: dict[str | None, set[str]] = {}
        prefix = f"{head}:"
        for line in out.splitlines():
            where, _, match = line.partition("\0")
            if match.strip():
                name = match.split()[-1]
                found.setdefault(where.removeprefix(prefix), set()).add(name)
                found.setdefault(None, set()).add(name)
        return found

    def changed_files(self, commit: str, directory: str) -> list[str]:
        """The files under `directory` that `commit` changed (deleted ones included)."""
        out = self._git_at([commit], "show", "--name-only", "--format=", commit, "--", directory)
        return [line for line in out.splitlines() if line.strip()]

    def first_parent_range(self, base: str, head: str) -> list[CommitInfo]:
        """The commits after `base` up to `head` on `head`'s first-parent chain, oldest
        first: the states the branch was in, one after another."""
        revs = f"{base}..{head}"
        try:
            out = self._git_at([revs], "log", "--first-parent", "--reverse", LOG_FORMAT, revs)
        except git.GitCommandError:
            return []
        return commits_of(out)


def pyast_defines(module: ast.Module | None, name: str) -> bool | None:
    """Whether the module defines `name` at its top level; None when it cannot be read."""
    if module is None:
        return None
    return any(
        isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name == name
        for node in module.body
    )


def _covering_dirs(paths: list[str]) -> set[str]:
    parents = sorted({path.rsplit("/", 1)[0] if "/" in path else path for path in paths})
    kept: list[str] = []
    for parent in parents:  # sorted: a directory comes before the ones nested in it
        if not any(parent == k or parent.startswith(k + "/") for k in kept):
            kept.append(parent)
    return set(kept)
