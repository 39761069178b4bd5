"""A repository's objects, read through git: commits by id, blobs (one long-lived
`git cat-file --batch`), trees and their file indexes, each text and parse kept in a
`BlobStore` that the runs over one history share. Every text it returns is `scrub`bed.
The base of `SourceTree`: its history (`GitHistory`) and its scanned tree build on it."""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import git

from scout_tui.analysis.python import pyast
from scout_tui.errors import Cancelled, clean, redact, scrub
from scout_tui.source.blobs import BlobStore
from scout_tui.source.facts import PARSES
from scout_tui.source.records import SUBMODULE, NotARepository, TreeIndex

# Past any source file or doc: a bigger file is data, or hostile, and is not read.
MAX_FILE_BYTES = 16 * 1024 * 1024

_SHA = re.compile(r"[0-9a-f]{40}")
_SHA_RANGE = re.compile(r"[0-9a-f]{40}(\.\.[0-9a-f]{40})?")


_VERSION: list[str] = []  # git's version, asked once per process


def _git_version(repo: git.Repo) -> str:
    if not _VERSION:
        _VERSION.append(".".join(map(str, repo.git.version_info)))
    return _VERSION[0]


def names_commits(rev: str) -> bool:
    """Whether `rev` is a commit id, or a range of two: what git answers alike forever."""
    return _SHA_RANGE.fullmatch(rev) is not None


class GitObjects:
    """`cancel`, when set, stops every long step: the next read or parse raises Cancelled.
    `at`: the commit scanned ("HEAD" means it). `blobs`: the store of blob texts, trees and
    commit indexes; one made for this repository when not given."""

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
        self._blob_text: dict[tuple[str, str], str | None] = {}
        self._blob_ids: dict[tuple[str, str], str | None] = {}
        self._index: TreeIndex | None = self._tree_index() if self.at else None
        self._skipped: dict[str, str] = {}  # path → why it was not read or parsed
        self._untold: list[str] = []  # of those, the ones no collector has said yet
        self._cat: subprocess.Popen[bytes] | None = None
        self._cancel = cancel or threading.Event()

    def _check(self) -> None:
        if self._cancel.is_set():
            raise Cancelled

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

    def _git_at(self, revs: Sequence[str], command: str, *args: str) -> str:
        """`git <command> <args>`, under the lock. When every revision it reads (`revs`,
        which `args` must name) is a commit id or a range of them, its answer depends on
        nothing else: it is kept on disk, and a later run (tomorrow's, at a commit already
        seen) reads it instead of asking git. Raises git.GitCommandError as git does."""
        kept = self.blobs.answers if revs and all(map(names_commits, revs)) else None
        key = (*self._answers_scope(), command, *args) if kept is not None else ()
        if kept is not None:
            found = kept.get(key)
            if isinstance(found, str):
                return found
        with self._lock:
            out = redact(getattr(self.repo.git, command.replace("-", "_"))(*args))
        if kept is not None:
            kept.put(key, out)
        return out

    def _answers_scope(self) -> tuple[str, ...]:
        """What else decides git's answer at a commit: the repository (a shallow clone's
        history is cut, a graft rewires it) and git's version (how it prints)."""
        if not hasattr(self, "_scope"):
            with self._lock:
                version = _git_version(self.repo)
            self._scope = (
                str(Path(self.repo.common_dir).resolve()),
                ",".join(sorted(self.shallow_roots())),
                version,
            )
        return self._scope

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

    def _parse(self, blob: str, text: str | None, path: str) -> ast.Module | None:
        """The one place a file is parsed (once per blob, in the store): one that `ast`
        cannot take is skipped (as if absent) and noted, so the run says so once and every
        collector goes on. A blob an earlier run parsed is parsed again only when an
        analysis looks into it that no kept fact answers (`pyast.Module`)."""
        if text is None:
            return None
        facts = self.blobs.facts

        def parse() -> ast.Module:
            return pyast.parse(text, path)

        def load() -> ast.Module | None:
            why = facts.get(blob, PARSES)
            if why == "":
                return pyast.kept_module(blob, facts, parse)
            if isinstance(why, str):
                self.blobs.note(blob, why)
                return None
            try:
                tree = parse()
            except pyast.Unparsable as exc:
                facts.put(blob, PARSES, str(exc))
                self.blobs.note(blob, str(exc))
                return None
            facts.put(blob, PARSES, "")
            return pyast.keep_facts_of(tree, blob, facts)

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

    def _index_of(self, commit: str) -> TreeIndex | None:
        """`commit`'s file index (from the store, or `git ls-tree` once)."""
        if commit == self.at:
            return self._index
        try:
            return self.blobs.index(commit, functools.partial(self._list_tree, commit))
        except subprocess.CalledProcessError:
            return None

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
