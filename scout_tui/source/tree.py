"""The checkout being scanned: files, parsed ASTs and git history, each read once.

Collectors share one SourceTree, so a file that three collectors look at is read and
`ast.parse`d once (keyed by path for the work tree, by blob id for history). Every text it
returns (files, blobs, commit subjects and authors, diffs) is `scrub`bed: no token, no
control characters.

A SourceTree made `at` a commit reads that commit's tree from git instead of the work tree
(a dated run: the day as it was, whatever the checkout holds now). Its blobs go through a
`BlobStore`, which runs over the same history can share: a blob is read and parsed once.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import hashlib
import os
import re
import stat
import subprocess
import threading
import weakref
from collections.abc import Callable, Hashable, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Literal, TypeVar

import git

from scout_tui.analysis.python import pyast
from scout_tui.errors import Cancelled, clean, scrub
from scout_tui.model import Checkout
from scout_tui.source.blame import Origin, Stopped, replay
from scout_tui.source.blobs import BlobStore
from scout_tui.source.records import (
    LINK,
    LOG_FORMAT,
    SUBMODULE,
    CommitInfo,
    Entry,
    Fate,
    NotARepository,
    TreeIndex,
    commits_of,
    touches,
)

T = TypeVar("T")
DIFF_LIMIT = 256 * 1024
# Past any source file or doc: a bigger file is data, or hostile, and is not read.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_RENAME_DEPTH = 8
FEW_PATHS = 64  # up to this many, name the files to `git log`; past it, their folders
MAX_LINKS = 40  # symlinks followed in one path before it counts as a loop (Linux's limit)


_SHA = re.compile(r"[0-9a-f]{40}")


class SourceTree:
    """`cancel`, when set, stops every long step: the next read or parse raises Cancelled,
    and a running history replay stops at its next commit (its git process is killed).

    `at`, when set, is the commit scanned: the work-tree methods (`read`, `lines`, `parse`,
    `exists`, `glob`, `grep_files`, `root_packages`, `real_path`, `leads_outside`) answer
    from its tree, never from the checkout, and "HEAD" means it. `blobs` is the store of
    blob texts, trees and commit indexes; one made for this tree when not given."""

    def __init__(
        self,
        path: Path,
        cancel: threading.Event | None = None,
        at: str | None = None,
        blobs: BlobStore | None = None,
    ) -> None:
        try:
            self.repo = git.Repo(path, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise NotARepository(f"not a git repository: {path}") from None
        if self.repo.bare or self.repo.working_tree_dir is None:
            raise NotARepository(f"a bare repository has no checkout to scan: {path}")
        self.root = Path(self.repo.working_tree_dir)
        self._real_root = self.root.resolve()
        self._lock = threading.RLock()
        self.blobs = blobs if blobs is not None else BlobStore()
        self.at: str | None = None
        if at is not None:
            try:
                self.at = self.repo.git.rev_parse(
                    "--verify", "--end-of-options", f"{at}^{{commit}}"
                )
            except git.GitCommandError:
                raise NotARepository(f"{self.root} has no commit {at!r}") from None
        self._tip = self.at or "HEAD"  # what "HEAD" means for this tree
        self._text: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._blob_text: dict[tuple[str, str], str | None] = {}
        self._blob_ids: dict[tuple[str, str], str | None] = {}
        self._links: dict[str, str | None] = {}  # a symlink's blob id → its target
        self._index: TreeIndex | None = self._tree_index() if self.at else None
        self._globs: dict[tuple[str, str], list[str]] = {}
        self._skipped: dict[str, str] = {}  # path → why it was not read or parsed
        self._untold: list[str] = []  # of those, the ones no collector has said yet
        self._cat: subprocess.Popen[bytes] | None = None
        self._cancel = cancel or threading.Event()

    def _check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled

    # -- identity ----------------------------------------------------------------------
    def checkout(self) -> Checkout:
        return Checkout.of(str(self.root.resolve()), str(Path(self.repo.common_dir).resolve()))

    def head(self) -> str | None:
        """HEAD's commit (the scanned one, for a tree `at` a commit); None in a repository
        with no commits yet."""
        if self.at is not None:
            return self.at
        with self._lock:
            try:
                return self.repo.head.commit.hexsha
            except ValueError:
                return None

    def first_commit_date(self, path: str | None = None) -> datetime | None:
        """When the history of HEAD (of `path` in it, when given) begins."""
        limit = ["--", path] if path else ["--max-parents=0"]

        def walk(revs: str) -> datetime | None:
            with self._lock:
                try:
                    out = self.repo.git.log("--format=%ct", revs, *limit)
                except git.GitCommandError:
                    return None
            stamps = [int(line) for line in out.split() if line.isdigit()]
            return datetime.fromtimestamp(min(stamps), UTC) if stamps else None

        def earliest(known: datetime | None, between: datetime | None) -> datetime | None:
            return min((d for d in (known, between) if d is not None), default=None)

        return self._walk(("first-commit", path), self._tip, [path or "."], walk, earliest)

    # -- history walks, carried from one run to the next --------------------------------
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

    def _commit_id(self, rev: str) -> str | None:
        """The commit id `rev` names ("HEAD" is the scanned commit), or None."""
        if rev == "HEAD" or rev == self._tip:
            return self.head()
        if _SHA.fullmatch(rev):
            return rev
        with self._lock:
            try:
                return str(
                    self.repo.git.rev_parse("--verify", "--end-of-options", f"{rev}^{{commit}}")
                )
            except git.GitCommandError:
                return None

    def _touched(self, old: str, new: str) -> frozenset[str] | None:
        """The files the commits after `old` up to `new` touched (a merge's files against
        each parent); None when `old` is not an ancestor of `new`."""
        on_chain = any(sha == old for sha, _ in self._first_parents(new))  # (listed once)
        with self._lock:
            try:
                if not on_chain:
                    self.repo.git.merge_base("--is-ancestor", old, new)
                out = self.repo.git.log(
                    "-m", "--name-only", "--no-renames", "--format=", f"{old}..{new}"
                )
            except git.GitCommandError:
                return None
        return frozenset(line for line in out.splitlines() if line)

    # -- the work tree, as it is -------------------------------------------------------
    def read(self, path: str) -> str | None:
        self._check()
        with self._lock:
            if path not in self._text:
                if self.at is not None:
                    entry = self._file_at(path)
                    self._text[path] = self._stored_text(entry.blob, path) if entry else None
                else:
                    real = self._contained(path)
                    self._text[path] = self._read_file(real, path) if real is not None else None
            return self._text[path]

    def _read_file(self, real: Path, path: str) -> str | None:
        try:
            status = real.stat()
            if not stat.S_ISREG(status.st_mode):
                return None  # a folder, a device, a FIFO (reading one waits forever)
            if status.st_size > MAX_FILE_BYTES:
                self._skip(path, _too_big(status.st_size))
                return None
            with real.open(encoding="utf-8", errors="replace") as handle:
                text = handle.read(MAX_FILE_BYTES + 1)  # it may grow after the stat
        except (OSError, ValueError):
            return None
        if len(text) > MAX_FILE_BYTES:
            self._skip(path, _too_big(len(text)))
            return None
        return scrub(text)

    def lines(self, path: str) -> list[str]:
        """The work-tree file's lines (split once: asked for again for each line quoted)."""
        with self._lock:
            if path not in self._lines:
                self._lines[path] = (self.read(path) or "").split("\n")
            return self._lines[path]

    def parse(self, path: str) -> ast.Module | None:
        """The work-tree file's AST. Keyed by git blob id, so a file unchanged since HEAD
        is parsed once whether it is asked for from the work tree or from a commit."""
        self._check()
        with self._lock:
            if path not in self._trees:
                text = self.read(path)
                if text is None:
                    self._trees[path] = None
                elif self.at is not None:
                    entry = self._file_at(path)
                    assert entry is not None  # it was read
                    self._trees[path] = self._parse(entry.blob, text, path)
                else:
                    data = text.encode("utf-8", "surrogateescape")
                    blob_id = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                    self._trees[path] = self._parse(blob_id, text, path)
            return self._trees[path]

    def _parse(self, blob: str, text: str | None, path: str) -> ast.Module | None:
        """The one place a file is parsed (once per blob, in the store): one that `ast`
        cannot take is skipped (as if absent) and noted, so the run says so once and every
        collector goes on."""
        if text is None:
            return None

        def load() -> ast.Module | None:
            try:
                return pyast.parse(text, path)
            except pyast.Unparsable as exc:
                self.blobs.note(blob, str(exc))
                return None

        tree = self.blobs.tree(blob, load)
        why = self.blobs.why(blob)
        if tree is None and why is not None:
            self._skip(path, why)
        return tree

    def _stored_text(self, blob: str, path: str) -> str | None:
        """The blob's scrubbed text, read once into the store; None (noted) when too big."""

        def load() -> str | None:
            found = self._cat_file(blob)
            if found is None:
                return None
            _, data, size = found
            if data is None:
                self.blobs.note(blob, _too_big(size))
                return None
            return scrub(data.decode("utf-8", "replace"))

        text = self.blobs.text(blob, load)
        why = self.blobs.why(blob)
        if text is None and why is not None:
            self._skip(path, why)
        return text

    def _skip(self, path: str, why: str) -> None:
        with self._lock:
            if path not in self._skipped:
                self._skipped[path] = why
                self._untold.append(path)

    def unreadable(self, path: str) -> bool:
        """Whether a version of `path` was skipped (too big, or unparsable): then its absence
        from a parse says nothing, and no check of it may claim a thing is gone."""
        with self._lock:
            return path in self._skipped

    def untold_skipped(self) -> list[tuple[str, str]]:
        """(path, why) of the files skipped (too big, or unparsable) since the last call."""
        with self._lock:
            told, self._untold = self._untold, []
            return [(path, self._skipped[path]) for path in told]

    def exists(self, path: str) -> bool:
        if self.at is not None:
            return self._kind_at(path) is not None
        real = self._contained(path)
        return real is not None and real.exists()

    def leads_outside(self, path: str) -> bool:
        """Whether `path` is there but, through a symlink, leads out of the checkout."""
        if self.at is not None:
            resolved, through_link = self._resolve(path)
            return resolved is None and through_link
        return os.path.lexists(self.root / path) and self._contained(path) is None

    def _contained(self, path: str) -> Path | None:
        """Where `path` leads once symlinks are followed, when that is inside the checkout
        (and not in its `.git`); None when it leaves: a link to `/etc/passwd`, `~/.ssh` or
        `../../elsewhere` is never read, so what it holds never reaches a report."""
        try:
            real = (self.root / path).resolve()
            inside = real.relative_to(self._real_root).parts
        except (OSError, ValueError, RuntimeError):
            return None
        return None if inside[:1] == (".git",) else real

    def root_packages(self) -> set[str]:
        """The Python packages at the work tree's top (folders with an `__init__.py`)."""
        if self.at is not None:
            assert self._index is not None
            tops = {path.split("/", 1)[0] for path in self._index.files}
            return {
                name
                for name in tops
                if _plain(name) and self._kind_at(f"{name}/__init__.py") == "file"
            }
        return {
            p.name for p in self.root.iterdir() if (p / "__init__.py").is_file() and _plain(p.name)
        }

    def real_path(self, path: str) -> str | None:
        """The work-tree file `path` names once symlinks are followed, relative to the
        root; None when it is missing or outside the repository."""
        if self.at is not None:
            resolved, _ = self._resolve(path)
            if resolved is None or self._kind_at(resolved) is None:
                return None
            return resolved or "."
        real = self._contained(path)
        if real is None or not real.exists():
            return None
        return real.relative_to(self._real_root).as_posix()

    def glob(self, directory: str, pattern: str = "*.py") -> list[str]:
        """Files under `directory` matching `pattern`, hidden ones and those whose symlink
        leaves the checkout left out (`rglob` does not descend into linked folders)."""
        if self.at is not None:  # asked for by most collectors: listed once
            key = (directory, pattern)
            with self._lock:
                if key not in self._globs:
                    self._globs[key] = self._glob_at(directory, pattern)
                return list(self._globs[key])
        base = self.root / directory
        if self._contained(directory) is None or not base.is_dir():
            return []
        found = []
        for file in base.rglob(pattern):
            path = str(file.relative_to(self.root))
            if any(
                part.startswith(".") or clean(part) != part for part in file.relative_to(base).parts
            ):
                continue  # hidden, or a name that would drive the terminal
            if file.is_file() and (not file.is_symlink() or self._contained(path)):
                found.append(path)
        return sorted(found)

    # -- the scanned commit's tree, for a SourceTree `at` a commit ---------------------
    def _tree_index(self) -> TreeIndex:
        assert self.at is not None
        return self.blobs.index(self.at, functools.partial(self._list_tree, self.at))

    def _list_tree(self, commit: str) -> TreeIndex:
        listing = subprocess.run(
            ["git", "ls-tree", "-r", "-z", "--full-tree", commit],
            cwd=self.root,
            capture_output=True,
            check=True,
        )
        return TreeIndex.of(listing.stdout)

    def _listed(self, commit: str) -> TreeIndex | None:
        """`commit`'s index when listed already (the scanned commit, or one a run before
        scanned); None otherwise."""
        return self._index if commit == self.at else self.blobs.known_index(commit)

    def _resolve(self, path: str) -> tuple[str | None, bool]:
        """Where `path` leads in the scanned tree once its symlinks are followed (relative
        to the top, "" for the top itself), as `_contained` does in the work tree: None
        when it leaves the repository, enters `.git`, or loops. The flag: a symlink was
        on the way (a path that leaves through one is there, but not read)."""
        assert self._index is not None
        files = self._index.files
        pending = path.split("/")[::-1]
        done: list[str] = []
        links = 0
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if not done:
                    return None, links > 0
                done.pop()
                continue
            entry = files.get("/".join([*done, part]))
            if entry is None or entry.mode != LINK:
                done.append(part)
                continue
            links += 1
            target = self._link_target(entry.blob) if links <= MAX_LINKS else None
            if target is None:
                return None, True
            if target.startswith("/"):
                target = self._under_root(target)
                if target is None:
                    return None, True
                done = []
            pending.extend(target.split("/")[::-1])
        if done[:1] == [".git"]:
            return None, links > 0
        return "/".join(done), links > 0

    def _under_root(self, target: str) -> str | None:
        """An absolute link's target relative to the top, when it points into the checkout."""
        for root in (self.root, self._real_root):
            try:
                return PurePosixPath(target).relative_to(root.as_posix()).as_posix()
            except ValueError:
                continue
        return None

    def _link_target(self, blob: str) -> str | None:
        if blob not in self._links:
            found = self._cat_file(blob)
            data = found[1] if found else None
            self._links[blob] = data.decode("utf-8", "surrogateescape") if data else None
        return self._links[blob]

    def _kind_at(self, path: str) -> Literal["file", "dir"] | None:
        """What `path` is in the scanned tree, symlinks followed inside it; a submodule is
        not there (its files are another repository's)."""
        resolved, _ = self._resolve(path)
        if resolved is None:
            return None
        assert self._index is not None
        if resolved in self._index.dirs:
            return "dir"
        entry = self._index.files.get(resolved)
        return "file" if entry is not None and entry.regular else None

    def _file_at(self, path: str) -> Entry | None:
        """The scanned tree's file `path` leads to (symlinks followed inside the tree)."""
        resolved, _ = self._resolve(path)
        assert self._index is not None
        entry = self._index.files.get(resolved) if resolved is not None else None
        return entry if entry is not None and entry.regular else None

    def _glob_at(self, directory: str, pattern: str) -> list[str]:
        """`glob` in the scanned tree: the same names the work tree's `rglob` gives."""
        assert self._index is not None
        resolved, _ = self._resolve(directory)
        if resolved is None or resolved not in self._index.dirs:
            return []
        prefix = f"{resolved}/" if resolved else ""
        found = []
        for path, entry in self._index.files.items():
            if not path.startswith(prefix):
                continue
            relative = path[len(prefix) :]
            parts = relative.split("/")
            if not fnmatch.fnmatchcase(parts[-1], pattern):
                continue
            if any(part.startswith(".") or clean(part) != part for part in parts):
                continue  # hidden, or a name that would drive the terminal
            if entry.regular or (entry.mode == LINK and self._file_at(path) is not None):
                found.append(str(PurePosixPath(directory) / relative))
        return sorted(found)

    # -- history ---------------------------------------------------------------------
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
        with self._lock:
            try:
                out = self.repo.git.rev_list("--first-parent", "--format=%ct", tip)
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

    def _cat_file(self, spec: str) -> tuple[str, bytes | None, int] | None:
        """(blob id, bytes, size) of the blob `spec` names (`commit:path`, or a blob id),
        through one long-lived `git cat-file`; the bytes are None when it is over
        MAX_FILE_BYTES (not read). None when `spec` names no blob."""
        if "\n" in spec:
            return None
        with self._lock:
            if self._cat is None or self._cat.poll() is not None:
                self._cat = subprocess.Popen(
                    ["git", "cat-file", "--batch"],
                    cwd=self.root,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                weakref.finalize(self, _stop, self._cat)
            assert self._cat.stdin is not None and self._cat.stdout is not None
            self._cat.stdin.write(f"{spec}\n".encode())
            self._cat.stdin.flush()
            header = self._cat.stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob" or int(header[2]) > MAX_FILE_BYTES:
                if len(header) == 3:  # a tree, a commit, a blob too big: skip its body
                    _discard(self._cat.stdout, int(header[2]) + 1)
                    if header[1] == b"blob":
                        return header[0].decode(), None, int(header[2])
                return None
            data = self._cat.stdout.read(int(header[2]))
            self._cat.stdout.read(1)
            return header[0].decode(), data, len(data)

    def _blob_id(self, commit: str, path: str) -> str | None:
        """`path`'s blob id at `commit`: from the commit's index when one is known (the
        scanned commit, or one a run before scanned), else from git."""
        index = self._listed(commit)
        if index is not None:
            entry = index.files.get(path)
            return entry.blob if entry is not None and entry.mode != SUBMODULE else None
        if "\n" in commit or "\n" in path:
            return None
        found = self._cat_file(f"{commit}:{path}")
        if found is None:
            return None
        blob, data, _ = found
        if data is not None:  # read already: into the store, not read twice
            raw = data
            self.blobs.text(blob, lambda: scrub(raw.decode("utf-8", "replace")))
        return blob

    def read_at(self, commit: str, path: str) -> str | None:
        self._check()
        with self._lock:
            key = (commit, path)
            if key not in self._blob_text:
                blob = self._blob_id(commit, path)
                self._blob_ids[key] = blob
                self._blob_text[key] = self._stored_text(blob, path) if blob else None
            return self._blob_text[key]

    def parse_at(self, commit: str, path: str) -> ast.Module | None:
        with self._lock:
            text = self.read_at(commit, path)
            blob_id = self._blob_ids.get((commit, path))
            if blob_id is None:
                return None
            return self._parse(blob_id, text, path)

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
        with self._lock:
            out = self.repo.git.log(
                "--format=%x1e%H%x1f%an%x1f%ct%x1f%s",
                "--name-only",
                "--no-renames",
                rev,
                "--",
                *paths,
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
            with self._lock:
                out = self.repo.git.log(
                    "--diff-filter=A",
                    "--name-only",
                    "--format=%x1e%H",
                    head,
                    "--",
                    *_covering_dirs(pending),
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
            with self._lock:  # one process for all the commits that added these files
                status = self.repo.git.show("-M", "--name-status", "--format=", *sorted(commits))
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
        return {path: origins[path] for path in paths if path in origins}

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

    def _tree_at(self, commit: str, directory: str) -> git.Tree | None:
        try:
            return self.repo.commit(commit).tree / directory.rstrip("/")
        except (KeyError, ValueError, git.BadName):
            return None

    def files_at(self, commit: str, directory: str) -> list[str]:
        """Names of the files directly under `directory` at `commit`."""
        with self._lock:
            tree = self._tree_at(commit, directory)
            return sorted(child.name for child in tree.blobs if _plain(child.name)) if tree else []

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
            with self._lock:
                out = self.repo.git.log("--diff-filter=D", LOG_FORMAT, "-1", head, "--", path)
        except git.GitCommandError:  # a shallow or partial clone: blobs it does not hold
            return Fate("unknown")
        gone = commits_of(out)
        if not gone:
            return Fate("never")
        with self._lock:
            status = self.repo.git.show("-M", "--name-status", "--format=", gone[0].sha)
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
            with self._lock:
                out = self.repo.git.log(*option, LOG_FORMAT, "-1", revs, "--", path)
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
        with self._lock:
            try:
                out = self.repo.git.grep(
                    "-l", "-E", rf"^\s*(async\s+)?(class|def)\s+{outer}\b", head, "--", "*.py"
                )
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
        with self._lock:
            out = self.repo.git.diff("--name-only", "--no-renames", base, head)
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
        with self._lock:
            try:
                out = self.repo.git.grep(
                    "-z", "-o", "-E", r"^\s*(async\s+)?(def|class)\s+\w+", head, "--", *pathspecs
                )
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

    def _index_of(self, commit: str) -> TreeIndex | None:
        """`commit`'s file index (from the store, or `git ls-tree` once)."""
        if commit == self.at:
            return self._index
        try:
            return self.blobs.index(commit, functools.partial(self._list_tree, commit))
        except subprocess.CalledProcessError:
            return None

    def grep_files(self, text: str) -> list[str]:
        """The Python files of the work tree (of the scanned commit, for a tree `at` one)
        that contain `text` (a fixed string)."""
        at = [self.at] if self.at is not None else []
        with self._lock:
            try:
                out = self.repo.git.grep("-l", "-F", "-e", text, *at, "--", "*.py")
            except git.GitCommandError:  # git grep exits 1 when nothing matches
                return []
        prefix = f"{self.at}:" if self.at is not None else ""
        return sorted(line.removeprefix(prefix) for line in out.splitlines() if line)

    def changed_files(self, commit: str, directory: str) -> list[str]:
        """The files under `directory` that `commit` changed (deleted ones included)."""
        with self._lock:
            out = self.repo.git.show("--name-only", "--format=", commit, "--", directory)
        return [line for line in out.splitlines() if line.strip()]

    def python_files_at(self, commit: str, directory: str) -> list[str]:
        """Every `.py` file under `directory` at `commit`, however deep."""
        index = self._listed(commit)
        if index is not None:  # listed already (a replay's day before)
            top = directory.strip("/") in ("", ".")
            prefix = directory.strip("/") + "/"
            return sorted(
                path
                for path in index.files
                if path.endswith(".py") and (top or path.startswith(prefix))
            )
        with self._lock:
            out = self.repo.git.ls_tree("-r", "--name-only", commit, "--", directory)
        return sorted(line for line in out.splitlines() if line.endswith(".py"))

    def subdirs_at(self, commit: str, directory: str) -> list[str]:
        """Names of the directories directly under `directory` at `commit`."""
        with self._lock:
            tree = self._tree_at(commit, directory)
            return sorted(child.name for child in tree.trees if _plain(child.name)) if tree else []

    def shallow_roots(self) -> frozenset[str]:
        """The commits where this clone's history is cut (a `--depth` clone's boundary,
        grafts): what lies before them is not here, so no age or "since" may rest on them."""
        if not hasattr(self, "_shallow"):
            roots: set[str] = set()
            for name in ("shallow", "info/grafts"):  # both kept in the common git dir
                path = Path(self.repo.common_dir) / name
                try:
                    text = path.read_text(encoding="ascii", errors="replace")
                except OSError:
                    continue
                roots |= {line.split()[0] for line in text.splitlines() if line.strip()}
            self._shallow = frozenset(roots)
        return self._shallow

    def first_parent_range(self, base: str, head: str) -> list[CommitInfo]:
        """The commits after `base` up to `head` on `head`'s first-parent chain, oldest
        first: the states the branch was in, one after another."""
        with self._lock:
            try:
                out = self.repo.git.log(
                    "--first-parent", "--reverse", LOG_FORMAT, f"{base}..{head}"
                )
            except git.GitCommandError:
                return []
        return commits_of(out)

    def is_ancestor(self, older: str, newer: str) -> bool:
        """Whether `older` is `newer` or one of its ancestors."""
        with self._lock:
            try:
                self.repo.git.merge_base("--is-ancestor", older, newer)
            except git.GitCommandError:
                return False
        return True

    def has_commit(self, sha: str) -> bool:
        """Whether `sha` names a commit this repository holds (a report's `head` may come
        from another clone, or from before a force-push)."""
        with self._lock:
            try:
                return self.repo.git.cat_file("-t", sha).strip() == "commit"
            except git.GitCommandError:
                return False


def _plain(name: str) -> bool:
    """A name that would drive a terminal (control or bidi characters) names no file scout
    reads: git trees and folders are written by other people."""
    return clean(name) == name


_HUNK = re.compile(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


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


def _too_big(size: int) -> str:
    return f"{size:,} bytes, over the {MAX_FILE_BYTES // 2**20} MiB scout reads"


def _discard(stream: IO[bytes], size: int) -> None:
    """Read past `size` bytes without holding them."""
    while size > 0:
        chunk = stream.read(min(size, 1 << 20))
        if not chunk:
            return
        size -= len(chunk)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait()
