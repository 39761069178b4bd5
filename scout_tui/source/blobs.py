"""What a replay's days share: blob texts, parsed trees and what was derived from them,
and history walks carried from one commit to a later one."""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from scout_tui.source.answers import GitAnswers
from scout_tui.source.facts import FileFacts
from scout_tui.source.records import TreeIndex

T = TypeVar("T")
KEPT_PER_WALK = 4  # answers kept per walk: a day's head, the prior report's, a few more


class BlobStore:
    """What runs over one history share, keyed by what git names them by: each blob's
    scrubbed text and parsed tree (and why it was not read or parsed, when it was not),
    and each commit's file index. A file unchanged across 30 dated runs is read and parsed
    once. Thread-safe; process-local (a forked process works on its own copy). `answers`:
    what git said at commit ids, and `facts`: what the analyses read in each blob, both
    kept on disk from run to run (none: nothing kept)."""

    def __init__(self, answers: GitAnswers | None = None, facts: FileFacts | None = None) -> None:
        self.answers = answers if answers is not None else GitAnswers(None)
        self.facts = facts if facts is not None else FileFacts(None)
        self._lock = threading.Lock()
        self._text: dict[str, str | None] = {}
        self._trees: dict[str, ast.Module | None] = {}
        self._notes: dict[str, str] = {}  # blob id → why it was not read or parsed
        self._indexes: dict[str, TreeIndex] = {}
        self._derived: dict[Hashable, Any] = {}
        self.walks = Walks()

    def derived(self, key: Hashable, load: Callable[[], T]) -> T:
        """What an analysis made of blobs, loaded once: `key` names the analysis, the blob
        ids it read and the configuration it used (so nothing else can change it)."""
        return self._kept(self._derived, key, load)

    def text(self, blob: str, load: Callable[[], str | None]) -> str | None:
        return self._kept(self._text, blob, load)

    def tree(self, blob: str, load: Callable[[], ast.Module | None]) -> ast.Module | None:
        return self._kept(self._trees, blob, load)

    def index(self, commit: str, load: Callable[[], TreeIndex]) -> TreeIndex:
        return self._kept(self._indexes, commit, load)

    def _kept(self, table: dict[Any, T], key: Hashable, load: Callable[[], T]) -> T:
        """`table[key]`, loaded once. `load` runs outside the lock (a parse takes long); of
        two threads that loaded the same key at once, the first one's result is kept: they
        are equal."""
        with self._lock:
            if key in table:
                return table[key]
        loaded = load()
        with self._lock:
            return table.setdefault(key, loaded)

    def known_derived(self, key: Hashable) -> Any:
        with self._lock:
            return self._derived.get(key)

    def known_index(self, commit: str) -> TreeIndex | None:
        with self._lock:
            return self._indexes.get(commit)

    def note(self, blob: str, why: str) -> None:
        with self._lock:
            self._notes.setdefault(blob, why)

    def why(self, blob: str) -> str | None:
        with self._lock:
            return self._notes.get(blob)

    def parsed(self) -> dict[str, ast.Module | None]:
        """Every tree parsed so far, by blob id."""
        with self._lock:
            return dict(self._trees)


class Walks:
    """Answers of history walks (a pickaxe, a file's first commit, a blame), shared by the
    runs over one history. An answer found at one commit still holds at a descendant when
    no commit in between touched the paths the walk reads; when one did, the walk covers
    only the commits in between (for walks that extend), or runs again. A day of a replay
    costs its own commits, not the whole history again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._answers: dict[Hashable, dict[str, Any]] = {}  # walk → commit → answer
        self._between: dict[tuple[str, str], frozenset[str] | None] = {}

    def known(self, key: Hashable) -> list[tuple[str, Any]]:
        """The commits this walk has answers at, latest first."""
        with self._lock:
            return list(self._answers.get(key, {}).items())[::-1]

    def keep(self, key: Hashable, commit: str, answer: Any) -> None:
        with self._lock:
            answers = self._answers.setdefault(key, {})
            answers.pop(commit, None)
            answers[commit] = answer
            while len(answers) > KEPT_PER_WALK:
                del answers[next(iter(answers))]

    def touched(
        self, old: str, new: str, load: Callable[[], frozenset[str] | None]
    ) -> frozenset[str] | None:
        """The files the commits after `old` up to `new` touched; None when `old` is not
        an ancestor of `new` (then nothing carries over)."""
        with self._lock:
            if (old, new) in self._between:
                return self._between[(old, new)]
        found = load()
        with self._lock:
            return self._between.setdefault((old, new), found)
