"""The publish journal, as the state store keeps it: each day's steps of a publish under a
scope (the GitHub host, tracking issue and board), recorded as each is done, so a rerun
after a crash finishes what was begun and repeats nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from scout_tui.store.state import StateStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS journal (
    scope TEXT NOT NULL, day TEXT NOT NULL, step TEXT NOT NULL, data TEXT NOT NULL,
    at TEXT NOT NULL, PRIMARY KEY (scope, day, step));
"""


class Journal:
    def __init__(self, state: StateStore) -> None:
        self.state = state

    def day(self, scope: str, day: str) -> dict[str, dict[str, Any]]:
        """The steps recorded for `day`'s publish under `scope`."""
        with self.state.reading("journal", "read the publish journal") as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT step, data FROM journal WHERE scope = ? AND day = ?", (scope, day)
            ).fetchall()
        return {step: json.loads(data) for step, data in rows}

    def done_at(self, scope: str, day: str, step: str) -> datetime | None:
        """When `day`'s `step` under `scope` was recorded done; None: it was not."""
        with self.state.reading("journal", "read the publish journal") as db:
            if db is None:
                return None
            row = db.execute(
                "SELECT data, at FROM journal WHERE scope = ? AND day = ? AND step = ?",
                (scope, day, step),
            ).fetchone()
        if row is None or json.loads(row[0]).get("state") != "done":
            return None
        return datetime.fromisoformat(row[1])

    def steps(self, scope: str, prefix: str) -> dict[str, dict[str, Any]]:
        """The steps named `prefix…` of every day's publish under `scope`; a later day's
        record of a step wins."""
        with self.state.reading("journal", "read the publish journal") as db:
            if db is None:
                return {}
            rows = db.execute(
                "SELECT step, data FROM journal WHERE scope = ? AND step LIKE ? ORDER BY day, at",
                (scope, prefix + "%"),
            ).fetchall()
        return {step: json.loads(data) for step, data in rows}

    def items(self, scope: str) -> dict[str, str]:
        """The board items publishes under `scope` recorded adding, on any day: item id →
        the fingerprint it was added for."""
        with self.state.reading("journal", "read the publish journal") as db:
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

    def record(self, scope: str, day: str, step: str, data: dict[str, Any]) -> None:
        with self.state.writing(f"record publish step {step!r}", SCHEMA) as db:
            row = (scope, day, step, json.dumps(data), datetime.now(UTC).isoformat())
            db.execute("INSERT OR REPLACE INTO journal VALUES (?, ?, ?, ?, ?)", row)
