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
import hashlib
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

import git

from scout_tui.errors import clean, redact, scrub
from scout_tui.model import Checkout
from scout_tui.source import objects
from scout_tui.source.blobs import BlobStore
from scout_tui.source.objects import _plain, _too_big, names_commits
from scout_tui.source.records import LINK, Entry
from scout_tui.source.whereabouts import GitWhereabouts

MAX_LINKS = 40  # symlinks followed in one path before it counts as a loop (Linux's limit)


MAX_REGREPPED = 500  # files differing from HEAD grepped by name; past it, the whole work tree


@dataclass(frozen=True)
class Hit:
    """A line `grep_words` found: its file, line number (from 1) and text."""

    path: str
    line: int
    text: str


class SourceTree(GitWhereabouts):
    """The checkout scanned: its work tree, or for a tree `at` a commit that commit's tree
    (the work-tree methods `read`, `lines`, `parse`, `exists`, `glob`, `grep_files`,
    `root_packages`, `real_path` and `leads_outside` then answer from it, never from the
    checkout); its history and objects as `GitHistory` reads them."""

    def __init__(
        self,
        path: Path,
        cancel: threading.Event | None = None,
        at: str | None = None,
        blobs: BlobStore | None = None,
    ) -> None:
        super().__init__(path, cancel, at, blobs)
        self._text: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._links: dict[str, str | None] = {}  # a symlink's blob id → its target
        self._globs: dict[tuple[str, str], list[str]] = {}

    def checkout(self) -> Checkout:
        return Checkout.of(str(self.root.resolve()), str(Path(self.repo.common_dir).resolve()))

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
            if status.st_size > objects.MAX_FILE_BYTES:
                self._skip(path, _too_big(status.st_size))
                return None
            with real.open(encoding="utf-8", errors="replace") as handle:
                text = handle.read(objects.MAX_FILE_BYTES + 1)  # it may grow after the stat
        except (OSError, ValueError):
            return None
        if len(text) > objects.MAX_FILE_BYTES:
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

    def grep_files(self, text: str) -> list[str]:
        """The Python files of the work tree (of the scanned commit, for a tree `at` one)
        that contain `text` (a fixed string)."""
        return sorted(path for path, _ in self._grep(("-l", "-z", "-F", "-e", text), ("*.py",)))

    def grep_words(self, words: list[str], pathspecs: tuple[str, ...] = ()) -> list[Hit]:
        """Every line of the scanned tree's files (those `pathspecs` match; all when none)
        holding one of `words` (identifiers) as a whole word, any kind of file: code, docs, configs,
        scripts. A file git cannot read (a blob missing from a partial clone) is left out,
        the others still answer. `pathspecs`: globs of paths (`*.py`)."""
        names = sorted({word for word in words if word.isidentifier()})
        hits = []
        # One alternation: git's fixed-string search slows with hundreds of `-e` patterns
        # under `-w` (seconds on a large repository); one extended regex does not. In
        # batches: one argument may not pass 128 KiB.
        for start in range(0, len(names), 1000):
            pattern = "(" + "|".join(names[start : start + 1000]) + ")"
            args = ("-I", "-n", "-w", "-E", "-z", "-e", pattern)
            for path, line in self._grep(args, pathspecs):
                number, _, text = line.partition("\0")
                if number.isdigit():
                    hits.append(Hit(path, int(number), scrub(text)))
        return hits

    def _grep(self, args: tuple[str, ...], pathspecs: tuple[str, ...]) -> list[tuple[str, str]]:
        """(path from the top, the rest of its record) for each record `git grep -z <args>`
        prints over the scanned tree's files that `pathspecs` match. The work tree is read
        as HEAD's commit (whose answer is kept by its id: tomorrow's rescan asks git
        nothing) plus, grepped as they are, the files that differ from it."""
        at, changed, skipped = self._grep_plan()
        differing = sorted(
            path
            for path in changed
            if not pathspecs or any(fnmatch.fnmatchcase(path, spec) for spec in pathspecs)
        )
        if len(differing) > MAX_REGREPPED:  # a long command line: the work tree at once
            return self._grep_run(args, [], pathspecs)
        records = self._grep_run(args, at, pathspecs)
        if at and self.at is None:
            records = [r for r in records if r[0] not in changed and r[0] not in skipped]
            if differing:  # each by its name, not as a pattern (a deleted one: no file)
                literal = tuple(f":(literal){path}" for path in differing)
                records += self._grep_run(args, [], literal)
        return records

    def _grep_run(
        self, args: tuple[str, ...], at: list[str], pathspecs: tuple[str, ...]
    ) -> list[tuple[str, str]]:
        kept = self.blobs.answers if at and names_commits(at[0]) else None
        command = (*args, *at, "--", *pathspecs)
        key = (*self._answers_scope(), "grep", *command) if kept is not None else ()
        found = kept.get(key) if kept is not None else None
        if not isinstance(found, str):
            with self._lock:
                try:
                    status, found, _ = self.repo.git.grep(
                        *command,
                        with_extended_output=True,
                        with_exceptions=False,
                        strip_newline_in_stdout=False,
                    )
                except git.GitCommandError:
                    return []
            found = redact(found)
            if kept is not None and status in (0, 1):  # all read: no blob was missing
                kept.put(key, found)
        prefix = f"{at[0]}:" if at else ""
        return [(path.removeprefix(prefix), rest) for path, rest in _records(found, "-l" in args)]

    def _grep_plan(self) -> tuple[list[str], frozenset[str], frozenset[str]]:
        """What a grep reads: the scanned commit; for the work tree, HEAD's commit id, the
        files that may differ from it (changed, added, deleted, assumed unchanged: grepped
        as they are), and those a sparse checkout skips (which a work-tree grep skips too);
        the work tree alone (no commit) when a filter or CRLF conversion rewrites what is
        checked out, or there is no commit yet."""
        if self.at is not None:
            return [self.at], frozenset(), frozenset()
        with self._lock:
            if not hasattr(self, "_plan"):
                self._plan = self._work_tree_plan()
            return self._plan

    def _work_tree_plan(self) -> tuple[list[str], frozenset[str], frozenset[str]]:
        git_ = self.repo.git
        _, configured, _ = git_.config(
            "--get-regexp",
            r"^filter\.|^core\.autocrlf$",
            with_extended_output=True,
            with_exceptions=False,
        )
        nothing: frozenset[str] = frozenset()
        if any(
            line.startswith("filter.") or line.split()[-1].lower() in ("true", "1", "yes", "on")
            for line in configured.splitlines()
            if line.strip()
        ):
            return [], nothing, nothing
        try:
            head = self.repo.head.commit.hexsha
            differ = git_.diff_index("--name-only", "-z", "--no-renames", "HEAD", "--")
            listed = git_.ls_files("-v", "-z")
        except (git.GitCommandError, ValueError):  # no commit yet
            return [], nothing, nothing
        entries = [entry for entry in listed.split("\0") if entry]
        skipped = {entry[2:] for entry in entries if entry.startswith("S ")}
        changed = {path for path in differ.split("\0") if path} - skipped
        changed |= {entry[2:] for entry in entries if entry[0] not in "HS"}
        return [head], frozenset(changed), frozenset(skipped)


def _records(out: str, names_only: bool) -> list[tuple[str, str]]:
    """`git grep -z` output as (path, rest) records: `-l` prints `path\\0` per file, `-n`
    prints `path\\0line\\0text\\n` per line (a path may hold a newline; a text cannot)."""
    if names_only:
        return [(path, "") for path in out.split("\0") if path]
    records = []
    position = 0
    while position < len(out):
        path_end = out.find("\0", position)
        if path_end < 0:
            break
        number_end = out.find("\0", path_end + 1)
        if number_end < 0:
            break
        line_end = out.find("\n", number_end + 1)
        line_end = len(out) if line_end < 0 else line_end
        records.append((out[position:path_end], out[path_end + 1 : line_end]))
        position = line_end + 1
    return records
