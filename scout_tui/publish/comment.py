"""The day's report comment on the tracking issue, as a publish writes it: which comment is
scout's (the token user's, carrying the day's report marker; anyone else's is never
touched), posted once however many boxes publish (the older copy stays, scout removes its
own), and edited with a person's edits to it kept (merged against what scout last wrote)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import Protocol

from scout_tui.github.api import Comment, GitHub
from scout_tui.history.parse import carries_report_marker
from scout_tui.model import RunResult
from scout_tui.publish.journal import Journal
from scout_tui.publish.merge import Merged, merge_edits
from scout_tui.publish.target import Outcome, Target
from scout_tui.report.render import COMMENT_LIMIT, ReportTooLong


class Record(Protocol):
    """Journals a step of the day's publish (the publisher's journal)."""

    def __call__(self, day: str, step: str, **data: object) -> None: ...


class Look(Protocol):
    """What `read` finds, read again for a while when scout expects it there."""

    def __call__(self, read: Callable[[], Comment | None], expected: bool) -> Comment | None: ...


class ReportComment:
    def __init__(
        self,
        github: GitHub,
        target: Target,
        journal: Journal,
        record: Record,
        look: Look,
        render: Callable[..., str],  # (run, room=0): room for a person's text
        note: Callable[[str], None],
    ) -> None:
        self.github, self.target, self.journal = github, target, journal
        self.record, self.look = record, look
        self.render, self.note = render, note
        self.said: set[str] = set()

    def last_written_body(self, day: date) -> str | None:
        """The report of `day` as scout itself last rendered it for the comment (None: it
        wrote none): the base against which a person's edits of the comment are told apart
        (never the merged body GitHub holds, or a person's lines would count as scout's)."""
        steps = self.journal.day(self.target.journal_scope, day.isoformat())
        return (steps.get("rendered") or steps.get("comment") or {}).get("body")

    def write(
        self, run: RunResult, body: str, viewer: str, journaled: bool, outcome: Outcome
    ) -> tuple[Comment, bool]:
        """Today's comment by us, edited; or a new one (never twice, never someone else's).
        True when posted now."""
        day = run.date.isoformat()

        def find() -> Comment | None:
            return self.of(run.date, viewer)

        mine = self.look(find, expected=journaled)
        posted = mine is None
        rendered = body
        if mine is None:
            self.record(day, "comment", state="started")
            made = self.github.create_comment(
                self.target.repo,
                self.target.issue,
                body,
                applied=lambda: self.look(find, expected=True),
            )
            mine = self._oldest(run, viewer, made, outcome)
        else:
            merged, rendered = self.kept_edits(run, mine, body)
            if merged is None:  # a person's edit and scout's conflict: left as it is
                return mine, False
            if mine.body != merged:
                mine = self.github.edit_comment(self.target.repo, mine.id, merged)
        self.record(day, "comment", state="done", id=mine.id, url=mine.url, body=mine.body)
        self.record(day, "rendered", body=rendered)
        return mine, posted

    def kept_edits(self, run: RunResult, theirs: Comment, ours: str) -> tuple[str | None, str]:
        """`ours` with what a person did to today's comment kept, within GitHub's limit,
        and scout's own part of it (the next merge's base); None (said) when their edit and
        scout's conflict: the comment is left as it is."""
        base = self.last_written_body(run.date)
        merged = merge_edits(base, theirs.body, ours)
        why = merged.conflict
        if merged.body is not None and len(merged.body) > COMMENT_LIMIT:
            try:  # scout's part cut further, to make room for the person's
                ours = self.render(run, room=len(merged.body) - len(ours))
                merged = merge_edits(base, theirs.body, ours)
            except ReportTooLong:
                merged = Merged(None)
            if merged.body is None or len(merged.body) > COMMENT_LIMIT:
                merged, why = Merged(None), "what was added leaves scout's report no room"
        said = (
            f"today's comment was edited by hand and {why}: scout left it as it is ({theirs.url})"
        )
        if merged.body is None and said not in self.said:  # once, not at each step
            self.said.add(said)
            self.note(said)
        return merged.body, ours

    def _oldest(self, run: RunResult, viewer: str, made: Comment, outcome: Outcome) -> Comment:
        """Read again after the post: when another box posted today's comment too, the
        older stays and scout removes its own."""
        copies = self.all_of(run.date, viewer)
        copies += [] if any(c.id == made.id for c in copies) else [made]
        oldest = min(copies, key=lambda c: (c.created_at, c.id))
        if oldest.id != made.id:
            self.github.delete_comment(self.target.repo, made.id)
            outcome.copies_removed += 1
        return oldest

    def of(self, day: date, viewer: str | None = None) -> Comment | None:
        return next(iter(self.all_of(day, viewer)), None)

    def all_of(self, day: date, viewer: str | None = None) -> list[Comment]:
        """The token user's comments with `day`'s report marker, oldest first."""
        since = datetime.combine(day - timedelta(days=1), time(), UTC)
        viewer = viewer or self.github.viewer()
        comments = self.github.comments(self.target.repo, self.target.issue, since)
        return [c for c in comments if c.author == viewer and carries_report_marker(c.body, day)]
