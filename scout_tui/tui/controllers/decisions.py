"""Decisions recorded one at a time, in order, by one thread: each job ends in exactly one
`Decided` (or `Opened`) message, so the screen knows how many are still on their way."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from datetime import date, datetime

from textual.message import Message

from scout_tui.errors import ScoutError, redact
from scout_tui.model import Finding, RunResult, Section, TriageEntry
from scout_tui.session import Session
from scout_tui.store.state import StateError
from scout_tui.triage import decisions as triage
from scout_tui.triage.store import Action, Change
from scout_tui.tui.edit_document import Edited
from scout_tui.tui.messages import (
    CheckoutStale,
    Decided,
    DecidedElsewhere,
    Opened,
    PublishedElsewhere,
)

# Verbs that a badge says well enough: no toast for one finding (a toast costs a layout).
QUIET_VERBS = {"accepted", "demoted", "promoted", "dropped"}
WATCH_EVERY = 0.5  # seconds between looks at the store for another session's decisions


class DecisionQueue:
    def __init__(self, session: Session, post: Callable[[Message], object]) -> None:
        self.session = session
        self.post = post
        self.pending = 0
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._running, self._ended = threading.Event(), threading.Event()  # the worker's run
        self._worker_thread: int | None = None
        self._seen: int | None = None  # the store's version once this session's jobs ran
        self._day: date | None = None  # the run's day, once open: its publish is watched
        # When its report went out and the drafts filed from here, as last seen.
        self._published: tuple[datetime | None, frozenset[str]] = (None, frozenset())

    # -- on the event loop ----------------------------------------------------------------
    def open(self, run: RunResult | None, load_cached: bool) -> None:
        """Read the day's cached run (when `load_cached`) and the decisions."""
        self._queue(lambda: self._opened(run, load_cached))

    def read_whole_run(self) -> None:
        """The day's cached run, after its glance is on screen (an `Opened` follows, as for
        `open`). Asked once the glance is painted: pydantic's validation holds the GIL."""
        self._queue(lambda: self._opened(None, True))

    def _opened(self, run: RunResult | None, load_cached: bool) -> None:
        found, entries, error, notice, published = run, {}, None, None, None
        filed: frozenset[str] = frozenset()
        try:
            found = self.session.cached_run() if load_cached else run
            notice = self.session.kept_apart_notice(found)
            entries = self.session.review.decisions()
            if found is not None:
                published = self.session.published_at(found.date)
                filed = self.session.filed()
                self._day, self._published = found.date, (published, filed)
        except (StateError, ScoutError) as exc:  # the run is still shown, undecided
            error = redact(str(exc))
        self.post(Opened(found, entries, error, notice, published, filed))

    def check_checkout(self) -> None:
        """Say when the checkout is much older than today. Asked once the tree is painted:
        it reads git, and GitPython's import would hold the GIL through the first paint."""

        def job() -> None:
            with contextlib.suppress(ScoutError):
                if stale := self.session.stale_checkout():
                    self.post(CheckoutStale(stale))

        self._jobs.put(job)

    def decide(
        self, act: Callable[[], list[Change] | str], verb: str, select: str | None = None
    ) -> None:
        """Run `act` (a session call) in turn; say what it did in `verb`'s words."""

        def job() -> None:
            done = act()
            if isinstance(done, str):
                said = done
            elif not done:
                said = "nothing changed"
            elif verb in QUIET_VERBS and len(done) == 1:
                said = ""
            else:
                said = f"{verb} {len(done)} finding(s)"
            self.post(Decided(self.session.review.decisions(), said, select=select))

        self._queue(job)

    # The reviewer's decisions, each a session call recorded in turn.
    def accept(self, findings: list[Finding]) -> None:
        self.decide(lambda: self.session.review.accept(findings), "accepted")

    def move(self, findings: list[Finding], up: bool) -> None:
        def move() -> list[Change] | str:
            changes, stuck = self.session.review.move(findings, up)
            if stuck and not changes:
                if all(f.section is Section.ALL_CLEAR for f in findings):
                    return "an All Clear line does not move"
                return f"already at the {'top' if up else 'bottom'}"
            return changes

        self.decide(move, "promoted" if up else "demoted")

    def drop(self, findings: list[Finding], reason: str) -> None:
        self.decide(lambda: self.session.review.drop(findings, reason), "dropped")

    def merge(self, parts: list[Finding], into: Finding, select: str) -> None:
        def merge() -> list[Change] | str:
            notes = self.session.merge_notes(parts, into)  # what the merge loses, said
            changes = self.session.review.merge(parts, into)
            if not notes or not changes:
                return changes
            return f"merged {len(changes)} finding(s); " + "; ".join(notes)

        self.decide(merge, "merged", select=select)

    def edit(self, original: Finding, shown: Finding, edited: Edited) -> None:
        """`original` edited into what the reviewer typed over the `shown` finding."""
        self.decide(
            lambda: self.session.review.edit(
                original,
                title=edited.title,
                body=edited.body,
                priority=edited.priority,
                set_priority=edited.priority != shown.priority,
            ),
            "edited",
            select=shown.fingerprint,
        )

    def undo(self) -> None:
        self._step(self.session.review.undo, "undid", "undo")

    def redo(self) -> None:
        self._step(self.session.review.redo, "redid", "redo")

    def _step(self, step: Callable[[], Action | None], done: str, op: str) -> None:
        """Undo or redo, said; the cursor goes to the finding it changed (the first of
        them), which may be far from where the reviewer is now."""
        origin = self.session.options.origin

        def job() -> None:
            action = step()
            select = action.changes[0].fingerprint if action and action.changes else None
            said = undo_said(action, done, op, origin)
            self.post(Decided(self.session.review.decisions(), said, select=select))

        self._queue(job)

    def handled(self) -> None:
        """The screen has shown one job's message."""
        self.pending -= 1

    def close(self, wait: float = 30.0) -> None:
        """The worker ends once the jobs already queued are recorded (each a whole
        transaction), waited for: a decision shown is a decision kept, however soon `q`
        follows it."""
        self._jobs.put(None)
        if self._running.is_set() and not self._in_worker():
            self._ended.wait(wait)

    def _queue(self, job: Callable[[], None]) -> None:
        self.pending += 1
        self._jobs.put(job)

    # -- in the worker's thread -----------------------------------------------------------
    def run(self, cancelled: Callable[[], bool]) -> None:
        """Until `close`, or cancelled (the app exits, however it exits) with no job left:
        the jobs queued before either are recorded first."""
        self._running.set()
        self._worker_thread = threading.get_ident()
        try:
            self._record(cancelled)
        finally:
            self._ended.set()

    def _in_worker(self) -> bool:
        return threading.get_ident() == self._worker_thread

    def _record(self, cancelled: Callable[[], bool]) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=WATCH_EVERY)
            except queue.Empty:
                if cancelled():
                    return
                self._watch()
                continue
            if job is None:
                return
            try:
                job()
                self._seen = self._version()
            except (triage.TriageError, StateError, ScoutError) as exc:
                self.post(Decided(self._read_back(), redact(str(exc)), "error"))
            except Exception as exc:  # never lose the console to one bad decision
                self.post(
                    Decided(self._read_back(), redact(f"{type(exc).__name__}: {exc}"), "error")
                )

    def _version(self) -> int | None:
        try:
            return self.session.review.version()
        except (StateError, ScoutError):
            return None

    def _watch(self) -> None:
        """Between jobs: whether another session changed the decisions since this one last
        looked; if so, what the store holds now, to show at once."""
        if self._seen is None:  # not open yet: the first read is the job's
            return
        self._watch_publish()
        version = self._version()
        if version is None or version == self._seen:
            return
        self._seen = version
        entries = self._read_back()
        if entries is not None:
            self.post(DecidedElsewhere(entries, "decisions changed in another session"))

    def _watch_publish(self) -> None:
        if self._day is None:
            return
        published = self.session.published_at(self._day)
        if published is None:
            return
        seen = (published, self.session.filed())  # drafts are filed after the comment
        if seen != self._published:
            self._published = seen
            self.post(PublishedElsewhere(*seen))

    def _read_back(self) -> dict[str, TriageEntry] | None:
        try:
            return self.session.review.decisions()
        except (StateError, ScoutError):
            return None


def undo_said(action: Action | None, done: str, op: str, origin: str | None = None) -> str:
    """What an undo or redo did; whose action it was when another session made it."""
    if action is None:
        return f"nothing to {op}"
    said = f"{done}: {action.label}"
    if action.origin and action.origin != origin:
        said += f" — made by {action.origin} at {action.at.astimezone():%H:%M}"
    return said
