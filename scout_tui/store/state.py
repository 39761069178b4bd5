"""The user's own data: triage decisions with their undo history, and the publish journal.

Not a cache: it lives under the platform *data* dir (or `--state-dir` / SCOUT_STATE_DIR),
`scout cache clear` and cache recovery never touch it, and a damaged store is reported and
left exactly as it is, never moved or rebuilt.

One SQLite file. Every change is one IMMEDIATE transaction, so the console, a cron publish
and `scout triage` serialize their writes instead of racing; a decision is read and written
inside the same transaction that records it in the history. The history is append-only:
each action records, per fingerprint, the entry before and after; undo and redo are rows
of their own, so both work across restarts and the log says who did what, in order.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import platformdirs

from scout_tui.errors import ScoutError
from scout_tui.model import Checkout, TriageEntry

STATE_FILE = "state.sqlite3"
BUSY_TIMEOUT_MS = 10_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS scopes (
    scope TEXT PRIMARY KEY, checkout TEXT NOT NULL, experiment TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    scope TEXT NOT NULL, fingerprint TEXT NOT NULL, entry TEXT NOT NULL,
    PRIMARY KEY (scope, fingerprint));
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, at TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('do', 'undo', 'redo')), target INTEGER,
    label TEXT NOT NULL, changes TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS history_by_scope ON history (scope, id);
CREATE TABLE IF NOT EXISTS journal (
    scope TEXT NOT NULL, day TEXT NOT NULL, step TEXT NOT NULL, data TEXT NOT NULL,
    at TEXT NOT NULL, PRIMARY KEY (scope, day, step));
"""


def default_state_dir() -> Path:
    configured = os.environ.get("SCOUT_STATE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_data_dir("scout-tui", appauthor=False))


class StateError(ScoutError):
    """The state store cannot be read or written; the message says why and what to do."""


@dataclass(frozen=True)
class Change:
    fingerprint: str
    before: TriageEntry | None
    after: TriageEntry | None

    def to_json(self) -> dict:
        dump = lambda e: e.model_dump(mode="json") if e else None  # noqa: E731
        return {
            "fingerprint": self.fingerprint,
            "before": dump(self.before),
            "after": dump(self.after),
        }

    @classmethod
    def from_json(cls, data: dict) -> Change:
        load = lambda d: TriageEntry.model_validate(d) if d else None  # noqa: E731
        return cls(data["fingerprint"], load(data["before"]), load(data["after"]))


@dataclass(frozen=True)
class Action:
    """One row of the history: what was done (or undone, or redone)."""

    id: int
    op: str
    label: str
    changes: tuple[Change, ...]
    at: datetime


def scope_of(checkout: Checkout, experiment: str) -> str:
    return f"{checkout.id}:{experiment}"


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
        self._checked = True

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
    def _reading(self) -> Iterator[sqlite3.Connection | None]:
        """A connection for reading; None when there is no store yet (nothing decided).
        Read-write where the store can be written, so that SQLite rolls back a write a
        killed process left half done; read-only only on read-only media."""
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
            raise self._fail("read decisions", exc) from None
        try:
            self._check_integrity(db)
            tables = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'decisions'")
            yield db if tables.fetchone()[0] else None  # an empty file: nothing decided yet
        except sqlite3.Error as exc:
            raise self._fail("read decisions", exc) from None
        finally:
            db.close()

    @contextmanager
    def _writing(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed when the block ends, rolled back on error."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise self._fail(doing, exc) from None
        try:
            self._check_integrity(db)
            db.execute("PRAGMA synchronous = FULL")
            db.executescript(_SCHEMA)
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise self._fail(doing, exc) from None
        finally:
            db.close()

    # -- decisions --------------------------------------------------------------------
    def decisions(self, scope: str) -> dict[str, TriageEntry]:
        with self._reading() as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT fingerprint, entry FROM decisions WHERE scope = ?", (scope,)
            ).fetchall()
        return {fingerprint: TriageEntry.model_validate_json(entry) for fingerprint, entry in rows}

    def change(
        self,
        scope: str,
        label: str,
        fingerprints: Sequence[str],
        decide: Callable[[str, TriageEntry | None, dict[str, TriageEntry]], TriageEntry | None],
        *,
        checkout: Checkout | None = None,
        experiment: str = "",
    ) -> list[Change]:
        """Apply `decide(fingerprint, current entry, all entries)` to each fingerprint, and
        record the changes as one undoable action. Nothing changed → nothing recorded."""
        with self._writing(f"record {label!r}") as db:
            if checkout is not None:
                db.execute(
                    "INSERT OR IGNORE INTO scopes VALUES (?, ?, ?)",
                    (scope, checkout.path, experiment),
                )
            current = _decisions(db, scope)
            changes = []
            for fingerprint in fingerprints:
                before = current.get(fingerprint)
                after = decide(fingerprint, before, current)
                if after is not None:
                    after = after.model_copy(update={"updated": datetime.now(UTC)})
                if _same(before, after):
                    continue
                changes.append(Change(fingerprint, before, after))
                _store(db, scope, fingerprint, after)
                if after is None:
                    current.pop(fingerprint, None)
                else:
                    current[fingerprint] = after
            if changes:
                _append(db, scope, "do", None, label, changes)
        return changes

    def undo(self, scope: str) -> Action | None:
        return self._step(scope, "undo")

    def redo(self, scope: str) -> Action | None:
        return self._step(scope, "redo")

    def _step(self, scope: str, op: str) -> Action | None:
        with self._writing(op) as db:
            undoable, redoable = _stacks(db, scope)
            stack = undoable if op == "undo" else redoable
            if not stack:
                return None
            target = _action(db, stack[-1])
            for change in target.changes:
                _store(
                    db, scope, change.fingerprint, change.before if op == "undo" else change.after
                )
            _append(db, scope, op, target.id, target.label, list(target.changes))
            return target

    def history(self, scope: str) -> list[Action]:
        with self._reading() as db:
            if db is None:
                return []
            rows = db.execute(
                "SELECT id FROM history WHERE scope = ? ORDER BY id", (scope,)
            ).fetchall()
            return [_action(db, row[0]) for row in rows]

    @contextmanager
    def lock(self, name: str, what: str) -> Iterator[None]:
        """An exclusive lock across processes (a cron publish and the console's), held for
        the block; a second holder is refused at once, not made to wait."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = open(self.directory / f"{name}.lock", "a+")  # noqa: SIM115
        except OSError as exc:
            raise self._fail(what, exc) from None
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StateError(
                    f"cannot {what}: another scout is doing it right now "
                    f"({self.directory / (name + '.lock')})"
                ) from None
            yield
        finally:
            handle.close()

    # -- the publish journal ------------------------------------------------------------
    def journal(self, scope: str, day: str) -> dict[str, dict]:
        with self._reading() as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT step, data FROM journal WHERE scope = ? AND day = ?", (scope, day)
            ).fetchall()
        return {step: json.loads(data) for step, data in rows}

    def journal_steps(self, scope: str, prefix: str) -> dict[str, dict]:
        """The steps named `prefix…` of every day's publish under `scope`; a later day's
        record of a step wins."""
        with self._reading() as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT step, data FROM journal WHERE scope = ? AND step LIKE ? ORDER BY day, at",
                (scope, prefix + "%"),
            ).fetchall()
        return {step: json.loads(data) for step, data in rows}

    def journaled_items(self, scope: str) -> dict[str, str]:
        """The board items publishes under `scope` recorded adding, on any day: item id →
        the fingerprint it was added for."""
        with self._reading() as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT step, data FROM journal WHERE scope = ? AND step LIKE 'draft %'", (scope,)
            ).fetchall()
        return {
            str(item): step.removeprefix("draft ")
            for step, data in rows
            if (item := json.loads(data).get("item"))
        }

    def record_step(self, scope: str, day: str, step: str, data: dict) -> None:
        with self._writing(f"record publish step {step!r}") as db:
            row = (scope, day, step, json.dumps(data), datetime.now(UTC).isoformat())
            db.execute("INSERT OR REPLACE INTO journal VALUES (?, ?, ?, ?, ?)", row)


def _same(before: TriageEntry | None, after: TriageEntry | None) -> bool:
    if before is None or after is None:
        return before is after
    return before.model_dump(exclude={"updated"}) == after.model_dump(exclude={"updated"})


def _decisions(db: sqlite3.Connection, scope: str) -> dict[str, TriageEntry]:
    rows = db.execute("SELECT fingerprint, entry FROM decisions WHERE scope = ?", (scope,))
    return {fingerprint: TriageEntry.model_validate_json(entry) for fingerprint, entry in rows}


def _store(db: sqlite3.Connection, scope: str, fingerprint: str, entry: TriageEntry | None) -> None:
    if entry is None:
        db.execute(
            "DELETE FROM decisions WHERE scope = ? AND fingerprint = ?", (scope, fingerprint)
        )
    else:
        db.execute(
            "INSERT OR REPLACE INTO decisions VALUES (?, ?, ?)",
            (scope, fingerprint, entry.model_dump_json()),
        )


def _append(
    db: sqlite3.Connection,
    scope: str,
    op: str,
    target: int | None,
    label: str,
    changes: list[Change],
) -> None:
    db.execute(
        "INSERT INTO history (scope, at, op, target, label, changes) VALUES (?, ?, ?, ?, ?, ?)",
        (
            scope,
            datetime.now(UTC).isoformat(),
            op,
            target,
            label,
            json.dumps([change.to_json() for change in changes]),
        ),
    )


def _action(db: sqlite3.Connection, action_id: int) -> Action:
    op, label, changes, at = db.execute(
        "SELECT op, label, changes, at FROM history WHERE id = ?", (action_id,)
    ).fetchone()
    return Action(
        action_id,
        op,
        label,
        tuple(Change.from_json(c) for c in json.loads(changes)),
        datetime.fromisoformat(at),
    )


def _stacks(db: sqlite3.Connection, scope: str) -> tuple[list[int], list[int]]:
    """The undo and redo stacks, replayed from the history: an action undoes the latest
    action not undone; a new action empties the redo stack, as in any editor."""
    undoable: list[int] = []
    redoable: list[int] = []
    for action_id, op, target in db.execute(
        "SELECT id, op, target FROM history WHERE scope = ? ORDER BY id", (scope,)
    ):
        if op == "do":
            undoable.append(action_id)
            redoable.clear()
        elif op == "undo" and undoable and undoable[-1] == target:
            redoable.append(undoable.pop())
        elif op == "redo" and redoable and redoable[-1] == target:
            undoable.append(redoable.pop())
    return undoable, redoable
