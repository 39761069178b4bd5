"""What git answered at commit ids, kept on disk between runs.

A git command whose every revision is a full commit id (a pickaxe from a commit, a grep
of a commit's tree, a first-parent chain) answers the same forever: commits never change.
Kept in the cache dir, a morning rescan at a commit already seen asks git nothing for it,
while everything the day changes (the window, ages, priors) is still worked out afresh:
nothing is kept by HEAD or by day. The key also holds what could make the same command
answer otherwise: the repository, its shallow boundary and git's version.

Values are JSON (never pickle: the cache is data, not code), zlib-compressed, and already
redacted — a token in a commit message never reaches the file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scout_tui.source.kept import KeptTable


class GitAnswers(KeptTable):
    """A persisted map from (repository, command) to what git said: git is asked instead
    when the table cannot be used."""

    TABLE = "answers"

    def __init__(self, path: Path | None) -> None:
        super().__init__(path)
        self.hits = 0

    def get(self, key: Sequence[str]) -> Any | None:
        with self._lock:
            db = self._connection()
            if db is None:
                return None
            try:
                row = db.execute("SELECT value FROM answers WHERE key = ?", (_digest(key),))
                found = row.fetchone()
            except sqlite3.Error:
                self._turn_off()
                return None
            if found is None:
                return None
            try:
                value = json.loads(zlib.decompress(found[0]))
            except (zlib.error, ValueError):
                return None  # damaged: asked again, then written anew
            self.hits += 1
            return value

    def put(self, key: Sequence[str], value: Any) -> None:
        data = zlib.compress(json.dumps(value, separators=(",", ":")).encode(), 1)
        with self._lock:
            db = self._connection()
            if db is None:
                return
            try:
                with db:
                    db.execute(
                        "INSERT OR REPLACE INTO answers (key, value, written) VALUES (?, ?, ?)",
                        (_digest(key), data, int(time.time())),
                    )
            except sqlite3.Error:
                self._turn_off()


def _digest(key: Sequence[str]) -> str:
    return hashlib.sha256("\0".join(key).encode("utf-8", "surrogatepass")).hexdigest()
