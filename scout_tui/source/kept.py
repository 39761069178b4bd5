"""A table in the cache dir that runs keep from one to the next (git's answers at commit
ids, the facts read in each blob). Any SQLite trouble turns it off for the process: the
work is done again instead, nothing is lost."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from pathlib import Path

KEPT_DAYS = 14  # a row not written again within this many days is dropped


class KeptTable:
    """One SQLite table of `(key TEXT PRIMARY KEY, value BLOB, written INTEGER)`, named by
    `TABLE`. Thread-safe; a forked process opens its own connection."""

    TABLE = ""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = -1
        self._off = path is None

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

    def _open(self, path: Path) -> sqlite3.Connection:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=5, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            with db:
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {self.TABLE} "
                    "(key TEXT PRIMARY KEY, value BLOB NOT NULL, written INTEGER NOT NULL)"
                )
                db.execute(
                    f"DELETE FROM {self.TABLE} WHERE written < ?",
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
