"""A reviewer's decisions as the state store keeps them: per scope (a checkout and an
experiment), each finding's entry, and the history that makes undo and redo work across
restarts and processes. The history is append-only: each action records, per fingerprint,
the entry before and after; undo and redo are rows of their own, so the log says who did
what, in order. A decision is read and written inside the transaction that records it."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from scout_tui.model import Checkout, TriageEntry
from scout_tui.store.state import StateStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS scopes (
    scope TEXT PRIMARY KEY, checkout TEXT NOT NULL, experiment TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    scope TEXT NOT NULL, fingerprint TEXT NOT NULL, entry TEXT NOT NULL,
    PRIMARY KEY (scope, fingerprint));
CREATE TABLE IF NOT EXISTS history (
    id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, at TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('do', 'undo', 'redo')), target INTEGER,
    label TEXT NOT NULL, changes TEXT NOT NULL, origin TEXT);
CREATE INDEX IF NOT EXISTS history_by_scope ON history (scope, id);
"""


@dataclass(frozen=True)
class Change:
    fingerprint: str
    before: TriageEntry | None
    after: TriageEntry | None

    def to_json(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint,
            "before": _dumped(self.before),
            "after": _dumped(self.after),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Change:
        return cls(data["fingerprint"], _loaded(data["before"]), _loaded(data["after"]))


def _dumped(entry: TriageEntry | None) -> dict[str, Any] | None:
    return entry.model_dump(mode="json") if entry else None


def _loaded(data: dict[str, Any] | None) -> TriageEntry | None:
    return TriageEntry.model_validate(data) if data else None


@dataclass(frozen=True)
class Action:
    """One row of the history: what was done (or undone, or redone)."""

    id: int
    op: str
    label: str
    changes: tuple[Change, ...]
    at: datetime
    origin: str | None = None  # the session that made it; None: before sessions were kept


def scope_of(checkout: Checkout, experiment: str) -> str:
    return f"{checkout.id}:{experiment}"


class DecisionStore:
    def __init__(self, state: StateStore, origin: str | None = None) -> None:
        """`origin`: this session, as its history rows name it (`scout triage (pid 7)`)."""
        self.state = state
        self.origin = origin

    def version(self, scope: str) -> int:
        """The scope's latest history row: it grows with every decision, undo and redo of
        any session, so a console sees another's change by reading one number."""
        with self.state.reading("history", "read decisions") as db:
            if db is None:
                return 0
            row = db.execute(
                "SELECT coalesce(max(id), 0) FROM history WHERE scope = ?", (scope,)
            ).fetchone()
        return int(row[0])

    def decisions(self, scope: str) -> dict[str, TriageEntry]:
        with self.state.reading("decisions", "read decisions") as db:
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
        with self.state.writing(f"record {label!r}", SCHEMA) as db:
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
                _append(db, scope, "do", None, label, changes, self.origin)
        return changes

    def undo(self, scope: str) -> Action | None:
        return self._step(scope, "undo")

    def redo(self, scope: str) -> Action | None:
        return self._step(scope, "redo")

    def _step(self, scope: str, op: str) -> Action | None:
        with self.state.writing(op, SCHEMA) as db:
            undoable, redoable = _stacks(db, scope)
            stack = undoable if op == "undo" else redoable
            if not stack:
                return None
            target = _action(db, stack[-1])
            for change in target.changes:
                _store(
                    db, scope, change.fingerprint, change.before if op == "undo" else change.after
                )
            _append(db, scope, op, target.id, target.label, list(target.changes), self.origin)
            return target

    def history(self, scope: str) -> list[Action]:
        with self.state.reading("decisions", "read decisions") as db:
            if db is None:
                return []
            rows = db.execute(
                "SELECT id FROM history WHERE scope = ? ORDER BY id", (scope,)
            ).fetchall()
            return [_action(db, row[0]) for row in rows]

    def standing(self, since: datetime) -> list[Action]:
        """Every scope's actions from `since` on that still stand (not undone), oldest
        first: what the reviewers decided, for `scout stats`."""
        with self.state.reading("decisions", "read decisions") as db:
            if db is None:
                return []
            scopes = [row[0] for row in db.execute("SELECT DISTINCT scope FROM history")]
            actions = [_action(db, i) for scope in scopes for i in _stacks(db, scope)[0]]
        return sorted((a for a in actions if a.at >= since), key=lambda a: (a.at, a.id))


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
    origin: str | None,
) -> None:
    db.execute(
        "INSERT INTO history (scope, at, op, target, label, changes, origin) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            scope,
            datetime.now(UTC).isoformat(),
            op,
            target,
            label,
            json.dumps([change.to_json() for change in changes]),
            origin,
        ),
    )


def _action(db: sqlite3.Connection, action_id: int) -> Action:
    # `*`: a store not yet brought up to version 2 (read before its first write) has no
    # `origin` column, and its actions were made by nobody scout can name.
    cursor = db.execute("SELECT * FROM history WHERE id = ?", (action_id,))
    names = [column[0] for column in cursor.description]
    row = dict(zip(names, cursor.fetchone(), strict=True))
    return Action(
        action_id,
        row["op"],
        row["label"],
        tuple(Change.from_json(c) for c in json.loads(row["changes"])),
        datetime.fromisoformat(row["at"]),
        row.get("origin"),
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
