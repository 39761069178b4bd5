"""The user's own data in one SQLite file: this module owns the file — its connections, its
schema version and migrations, the recovery of a write a killed process left, its locks.
The tables belong to the code that uses them: triage's decisions and their undo history
(`triage/store.py`), the publish journal (`publish/journal.py`); each passes its own
schema when it writes.

Not a cache: it lives under the platform *data* dir (or `--state-dir` / SCOUT_STATE_DIR),
`scout cache clear` and cache recovery never touch it, and a damaged store is reported and
left exactly as it is, never moved or rebuilt.

Every change is one IMMEDIATE transaction, so the console, a cron publish and `scout
triage` serialize their writes instead of racing.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import platformdirs

from scout_tui.errors import ScoutError

STATE_FILE = "state.sqlite3"
BUSY_TIMEOUT_MS = 10_000
# The file's layout, in `PRAGMA user_version`. A store written before versions were kept
# reads 0: its tables are version 1's. Each migration takes the file one version up.
SCHEMA_VERSION = 2


def _history_origin(db: sqlite3.Connection) -> None:
    """2: each history row says which session made it (`scout triage (pid …)`, `the
    console (pid …)`), so an undo can say whose action it undid. A store that has no
    history yet gets the column when its table is made."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(history)")}
    if columns and "origin" not in columns:
        db.execute("ALTER TABLE history ADD COLUMN origin TEXT")


# version → what makes it from the one before: SQL, or a function of the connection
MIGRATIONS: dict[int, str | Callable[[sqlite3.Connection], None]] = {
    1: "",
    2: _history_origin,
}


def default_state_dir() -> Path:
    configured = os.environ.get("SCOUT_STATE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("scout-tui", appauthor=False))


class StateError(ScoutError):
    """The state store cannot be read or written; the message says why and what to do."""


class StateStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or default_state_dir()
        self.path = self.directory / STATE_FILE
        self._checked = False

    def _check_integrity(self, db: sqlite3.Connection) -> None:
        """Once per store: a damaged file is refused before anything is read from it or
        written to it (SQLite can read around a damaged page without noticing)."""
        if self._checked:
            return
        rows = db.execute("PRAGMA quick_check").fetchall()
        verdict = "; ".join(str(row[0]) for row in rows[:2])
        if verdict != "ok":
            raise StateError(
                f"the state store {self.path} is damaged ({verdict}); it is left "
                "as it is: move it away or use --state-dir"
            )
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StateError(
                f"the state store {self.path} was written by a newer scout (layout "
                f"{version}; this one reads up to {SCHEMA_VERSION}): upgrade scout-tui"
            )
        self._checked = True

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Up to SCHEMA_VERSION, one migration at a time, inside the write's transaction."""
        version = db.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version + 1, SCHEMA_VERSION + 1):
            migration = MIGRATIONS[step]
            if callable(migration):
                migration(db)
            elif migration:
                db.executescript(migration)
        if version < SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- connections ------------------------------------------------------------------
    def _fail(self, doing: str, exc: BaseException) -> StateError:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.OperationalError):
            return StateError(
                f"the state store {self.path} is unreadable ({detail}); it is left "
                "as it is: move it away or use --state-dir"
            )
        if (
            "readonly" in detail.lower()
            or "read-only" in detail.lower()
            or (isinstance(exc, PermissionError))
        ):
            if self.hot_journal.exists():
                return StateError(
                    f"cannot {doing}: the state store {self.path} has an unfinished "
                    f"write ({self.hot_journal}) that only a writable store can "
                    "roll back: make its folder writable, or use --state-dir"
                )
            return StateError(f"cannot {doing}: the state store {self.path} is read-only")
        return StateError(f"cannot {doing}: the state store {self.path}: {detail}")

    @property
    def hot_journal(self) -> Path:
        """SQLite's rollback journal: left behind by a process killed during a write."""
        return self.path.with_name(self.path.name + "-journal")

    @contextmanager
    def reading(self, table: str, doing: str) -> Iterator[sqlite3.Connection | None]:
        """A connection for reading `table`; None when there is no store yet, or no such
        table in it (nothing of it written). Read-write where the store can be written, so
        that SQLite rolls back a write a killed process left half done; read-only only on
        read-only media."""
        if not self.path.exists():
            yield None
            return
        writable = os.access(self.path, os.W_OK) and os.access(self.directory, os.W_OK)
        try:
            db = sqlite3.connect(
                f"file:{self.path}?mode={'rw' if writable else 'ro'}",
                uri=True,
                timeout=BUSY_TIMEOUT_MS / 1000,
            )
        except sqlite3.Error as exc:
            raise self._fail(doing, exc) from None
        try:
            self._check_integrity(db)
            tables = db.execute("SELECT count(*) FROM sqlite_master WHERE name = ?", (table,))
            yield db if tables.fetchone()[0] else None
        except sqlite3.Error as exc:
            raise self._fail(doing, exc) from None
        finally:
            db.close()

    @contextmanager
    def writing(self, doing: str, schema: str) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction, committed when the block ends, rolled back on error;
        `schema`: the writer's tables (`CREATE TABLE IF NOT EXISTS …`)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise self._fail(doing, exc) from None
        try:
            self._check_integrity(db)
            db.execute("PRAGMA synchronous = FULL")
            db.executescript(schema)
            db.execute("BEGIN IMMEDIATE")
            try:
                self._migrate(db)
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._fail(doing, exc) from None
        finally:
            db.close()

    @contextmanager
    def lock(
        self,
        name: str,
        what: str,
        wait: float = 0.0,
        waiting: Callable[[str], None] = lambda message: None,
    ) -> Iterator[None]:
        """An exclusive lock across processes (a cron publish and the console's), held for
        the block. A second holder waits up to `wait` seconds for the first to let go
        (`waiting` says so, once), then is refused."""
        path = self.directory / f"{name}.lock"
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(path, "a+")  # noqa: SIM115
        except OSError as exc:
            raise self._fail(what, exc) from None
        try:
            deadline, said = time.monotonic() + wait, False
            while not _locked(handle):
                if time.monotonic() >= deadline:
                    waited = f", after {wait:.0f} s of waiting" if wait else ""
                    raise StateError(
                        f"cannot {what}: another scout is doing it right now ({path}{waited})"
                    )
                if not said:
                    waiting(f"waiting for another scout to finish: {what} ({path})")
                    said = True
                time.sleep(LOCK_POLL)
            yield
        finally:
            handle.close()


LOCK_POLL = 0.2  # seconds between tries at a lock another scout holds


def _locked(handle: IO[str]) -> bool:
    """Whether the exclusive lock on `handle` was taken (False: another process holds it)."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
