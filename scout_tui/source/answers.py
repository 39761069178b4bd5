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

import contextlib
import hashlib
import json
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

KEPT_DAYS = 14  # an answer not written again within this many days is dropped


class GitAnswers:
    """A persisted map from (repository, command) to what git said. Thread-safe; a forked
    process opens its own connection. Any SQLite trouble turns it off for the process:
    git is asked instead, nothing is lost."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = -1
        self._off = path is None
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

    def _connection(self) -> sqlite3.Connection | None:
        if self._off or self.path is None:
            return None
        if self._db is not None and self._pid == os.getpid():
            return self._db
        self._db = None  # a forked child never uses its parent's connection
        try:
            db = self._open(self.path)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError):  # locked, read-only: left alone
                self._turn_off()
                return None
            try:  # not a database, or damaged: made anew, once
                for name in (self.path.name, f"{self.path.name}-wal", f"{self.path.name}-shm"):
                    self.path.with_name(name).unlink(missing_ok=True)
                db = self._open(self.path)
            except (sqlite3.Error, OSError):
                self._turn_off()
                return None
        except (sqlite3.Error, OSError):
            self._turn_off()
            return None
        self._db, self._pid = db, os.getpid()
        return db

    @staticmethod
    def _open(path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=5, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            with db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS answers "
                    "(key TEXT PRIMARY KEY, value BLOB NOT NULL, written INTEGER NOT NULL)"
                )
                db.execute(
                    "DELETE FROM answers WHERE written < ?",
                    (int(time.time()) - KEPT_DAYS * 86400,),
                )
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _turn_off(self) -> None:
        self._off = True
        if self._db is not None and self._pid == os.getpid():
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None


def _digest(key: Sequence[str]) -> str:
    return hashlib.sha256("\0".join(key).encode("utf-8", "surrogatepass")).hexdigest()
