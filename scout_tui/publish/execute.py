"""Publish a triaged run (SPEC §2.4): the report comment, one Backlog draft per new Action
Item, the comment edited to link them.

Every step first looks at what GitHub already holds, so a rerun after a crash anywhere —
even after a write whose answer was lost — ends with exactly one comment, one draft per
item, all in Backlog, all linked:
- the comment: today's, by the token's user, carrying scout's report marker, is edited;
  anyone else's (the old agent's) is never touched; otherwise one is posted;
- a draft: scout's own draft (created by the token's identity or journaled here) whose
  body carries the finding's fingerprint marker is that finding's draft; any item with the
  same normalized title is a duplicate; otherwise one is added;
- Status: set to the Backlog option, ids looked up fresh from the board, for every draft
  scout added whose status step is not journaled as done — whatever the board shows, as a
  board's automation gives new items a status of its own — and for scout's drafts with no
  status; read once more after, and set again if an automation moved it. A status someone
  chose is otherwise left alone, an item scout did not create is never touched, and an
  archived item (GitHub refuses any change to one) is skipped with a note;
- status lines: scout's draft of a carried finding whose situation changed gets one dated
  line, once per change (its marker in the draft, its step in the journal);
- the links: the comment is edited once more when its body differs.
A run posts under its own date: today's or yesterday's (a reviewer west of UTC triages
after UTC midnight); an older run only edits the comment whose marker carries its date; a
run dated after today publishes nothing.
Each step is journaled in the state store before and after, keyed by API URL, repository,
tracking issue, board and report date (so a demo never marks a real publish done), and the
journal is read back on every run: it is the truth of what scout did.

Several boxes may publish at once (a cron job and a reviewer, each with its own state):
just before each create scout reads what GitHub holds, and just after it reads again; when
another box's copy exists (the same date marker, the same fingerprint marker), the older
one stays and scout removes its own. A read right after a create can miss the new item: where
scout has reason to think something is there (journaled, or a write whose answer was lost),
it reads again for up to `[github] consistency_wait` before concluding it is not.
"""

from __future__ import annotations

import time as clock
from collections.abc import Callable
from datetime import date, timedelta
from typing import TypeVar

from scout_tui.config.models import Config
from scout_tui.errors import UsageError
from scout_tui.github.api import (
    ArchivedItem,
    Board,
    BoardItem,
    Comment,
    GitHub,
    board_item_url,
)
from scout_tui.history.baseline import today_utc
from scout_tui.model import BoardRef, Finding, RunResult
from scout_tui.publish.comment import ReportComment
from scout_tui.publish.journal import Journal
from scout_tui.publish.plan import (
    draft_body,
    draft_title,
    material_change,
    status_lines,
    updatable_drafts,
    wants_draft,
    with_status_line,
)
from scout_tui.publish.target import DateRefused, Outcome, PublishError, Target
from scout_tui.report.board import (
    BoardIndex,
    Scout,
    board_index,
    normalized_title,
    scout_fingerprint,
)
from scout_tui.report.render import COMMENT_LIMIT
from scout_tui.store.state import StateStore

SCOPES_TO_COMMENT = {"repo", "public_repo"}
PUBLISH_LOCK_WAIT = 600.0  # seconds: a whole publish, paced writes and consistency waits
SCOPES_FOR_BOARDS = {"project"}
CONSISTENCY_READS = 3  # spread over [github] consistency_wait
T = TypeVar("T")


def _status_line_step(fingerprint: str) -> str:
    return f"status-line {fingerprint}"


class Publisher:
    def __init__(
        self,
        github: GitHub,
        state: StateStore,
        config: Config,
        target: Target,
        render: Callable[..., str],  # (run, room=0): room for a person's text
        note: Callable[[str], None] = lambda message: None,
        today: date | None = None,
    ) -> None:
        self.github, self.state, self.config, self.target = github, state, config, target
        self.journal = Journal(state)
        self.render, self.note = render, note
        self._steps: dict[
            str, dict[str, object]
        ] = {}  # every day's draft and status steps, read back
        self._set_at: dict[str, float] = {}  # items given Backlog in this publish: when
        self.today = today  # None: today, UTC
        self.report_comment = ReportComment(
            github, target, self.journal, self._record, self._look, render, note
        )

    # -- the journal ------------------------------------------------------------------------
    def _record(self, day: str, step: str, **data: object) -> None:
        self.journal.record(self.target.journal_scope, day, step, dict(data))
        self._steps[step] = dict(data)

    def last_written_body(self, day: date) -> str | None:
        """The report of `day` as scout itself last rendered it for the comment."""
        return self.report_comment.last_written_body(day)

    def _look(self, read: Callable[[], T | None], expected: bool) -> T | None:
        """What `read` finds; when scout has reason to think it is there, read again for up to
        `[github] consistency_wait` before concluding it is not (GitHub can miss a new item
        for a while)."""
        found = read()
        pause = self.config.github.consistency_wait / CONSISTENCY_READS
        for _ in range(CONSISTENCY_READS if expected else 0):
            if found is not None:
                break
            clock.sleep(pause)
            found = read()
        return found

    def journaled_status_lines(self, day: str) -> frozenset[str]:
        """The status lines (their digests) this state dir wrote for the day's run."""
        steps = self.journal.day(self.target.journal_scope, day)
        return frozenset(
            str(data["digest"])
            for step, data in steps.items()
            if step.startswith(_status_line_step(""))
            and data.get("state") == "done"
            and data.get("digest")
        )

    def scout(self) -> Scout:
        """Who scout is on the board: the token's identity and what this journal added."""
        return Scout(self.github.viewer(), self.journal.items(self.target.journal_scope))

    def check_access(self) -> None:
        """Before anything is written: can this token comment and write the board?"""
        scopes = self.github.scopes()
        if scopes is None:
            return  # a fine-grained token: GitHub does not say; a refusal will
        missing = []
        if not SCOPES_TO_COMMENT & set(scopes):
            missing.append("repo (or public_repo), to comment on the tracking issue")
        if not SCOPES_FOR_BOARDS & set(scopes):
            missing.append("project, to add drafts to the board")
        if missing:
            raise PublishError(
                "the token cannot publish: it lacks the scope "
                + " and the scope ".join(missing)
                + " (`gh auth refresh -s project`, or a new token)"
            )

    def check_day(self, day: date) -> None:
        """DateRefused unless a run of `day` may post or edit under its date."""
        today = self.today or today_utc()
        if day > today:
            raise DateRefused(
                f"the run is dated {day}, after today ({today}, UTC): "
                "nothing is published under a day to come"
            )
        if day >= today - timedelta(days=1) or self.report_comment.of(day) is not None:
            return
        raise DateRefused(
            f"the run of {day} has no report comment of its own on "
            f"#{self.target.issue} to edit, and a report older than yesterday is "
            "never posted anew: publish today's run (without --date)"
        )

    def publish(self, run: RunResult) -> Outcome:
        """`run` is triaged: what is in it is published."""
        # A second publish from this state dir (cron beside a reviewer) waits for the first,
        # then finds its work journaled: it edits, never posts twice.
        with self.state.lock("publish", "publish", PUBLISH_LOCK_WAIT, self.note):
            return self._publish(run)

    def _publish(self, run: RunResult) -> Outcome:
        if run.cancelled:  # what a cancel left unlooked-at would be said as all clear
            raise UsageError(
                "the run was cancelled before every collector ended: a cancelled run is "
                "never published (collect the day again)"
            )
        day = run.date.isoformat()
        outcome = Outcome()
        self.check_access()
        self.check_day(run.date)
        viewer = self.github.viewer()
        status_field = self.config.board.status_field
        board = self.github.board(self.target.board_owner, self.target.board_number, status_field)
        backlog = board.status_options.get(self.config.board.backlog_option)
        if backlog is None:
            options = ", ".join(board.status_options) or "none"
            raise PublishError(
                f"board {board.owner}/{board.number} has no {status_field!r} "
                f"option {self.config.board.backlog_option!r} (options: {options})"
            )
        scope = self.target.journal_scope
        today = self.journal.day(scope, day)
        self._steps = {
            **self.journal.steps(scope, "draft "),
            **self.journal.steps(scope, "status "),
        }
        scout = self.scout()
        items = self._without_copies(
            board, self.github.board_items(board, status_field), scout, outcome
        )
        index = board_index(items, scout)

        # 1. The comment, with the board links already known.
        findings = [self._linked(f, board, index) for f in run.findings]
        linked = run.model_copy(update={"findings": findings})
        body = self.render(linked)
        comment, outcome.comment_posted = self.report_comment.write(
            linked, body, viewer, "comment" in today, outcome
        )
        outcome.comment = comment

        # 2. One draft per new Action Item that has none; 3. Backlog where scout owns it.
        for position, finding in enumerate(findings):
            if wants_draft(finding.model_copy(update={"board": None})):
                ours = self._draft(run, board, index, scout, finding, comment.url, outcome)
            elif f"draft {finding.fingerprint}" in self._steps:  # added on an earlier day
                ours = index.drafts.get(finding.fingerprint)
            else:
                continue
            if ours is None:
                continue
            status = self._backlog(day, board, backlog, finding.fingerprint, ours, outcome)
            url = board_item_url(self.target.web_url, board, ours)
            findings[position] = finding.model_copy(
                update={"board": BoardRef(item_id=ours.id, url=url, status=status)}
            )

        outcome.status_lines = self._add_status_lines(run, board, scout)
        self._backlog_again(board, backlog)

        # 4. The comment, linked.
        linked = run.model_copy(update={"findings": findings})
        final, rendered = self.report_comment.kept_edits(linked, comment, self.render(linked))
        if final is not None and final != comment.body:
            self._record(day, "links", state="started")
            comment = self.github.edit_comment(self.target.repo, comment.id, final)
            self._record(
                day, "comment", state="done", id=comment.id, url=comment.url, body=comment.body
            )
            self._record(day, "rendered", body=rendered)
            outcome.comment = comment
        self._record(day, "links", state="done")
        return outcome

    def _draft(
        self,
        run: RunResult,
        board: Board,
        index: BoardIndex,
        scout: Scout,
        finding: Finding,
        comment_url: str,
        outcome: Outcome,
    ) -> BoardItem | None:
        """The finding's draft: scout's own, found or added now; None: an item someone
        filed is its duplicate."""
        fingerprint, title = finding.fingerprint, draft_title(self.config, finding)
        step = f"draft {fingerprint}"

        def find() -> BoardItem | None:
            return self._find_draft(board, fingerprint, scout)

        ours = index.drafts.get(fingerprint)
        if ours is None and step in self._steps:  # scout added it, or began to: look harder
            ours = self._look(find, expected=True)
        if ours is None and index.filed_by_hand(title) is not None:
            outcome.duplicates.append(title)  # someone filed it already: linked, untouched
            return None
        if ours is None:
            ours = find()  # another box may have added it since the board was read
        if ours is not None:
            outcome.drafts_found.append(title)
            return ours
        self._record(run.date.isoformat(), step, state="started")
        made = self.github.add_draft(
            board,
            title,
            draft_body(self.config, finding, run.date, comment_url),
            applied=lambda: self._look(find, expected=True),
        )
        kept = self._oldest_draft(board, fingerprint, scout, made, outcome)
        self._record(
            run.date.isoformat(), step, state="done", item=kept.id, database_id=kept.database_id
        )
        outcome.drafts_added.append(title)
        return kept

    def _without_copies(
        self, board: Board, items: list[BoardItem], scout: Scout, outcome: Outcome
    ) -> list[BoardItem]:
        """The board's items, scout's own newer copies of one draft removed: an add whose
        answer was lost, read back after the consistency wait, leaves two. Only true copies
        (the same fingerprint and title) go; the oldest stays."""
        groups: dict[tuple[str, str], list[BoardItem]] = {}
        for item in items:
            fingerprint = scout_fingerprint(item, scout)
            if fingerprint is not None:
                groups.setdefault((fingerprint, normalized_title(item.title)), []).append(item)
        removed = set()
        for copies in groups.values():
            copies.sort(key=lambda i: (i.database_id is None, i.database_id or 0))
            for copy in copies[1:]:
                self.github.delete_item(board, copy.id)
                removed.add(copy.id)
                outcome.copies_removed += 1
        return [item for item in items if item.id not in removed]

    def _oldest_draft(
        self, board: Board, fingerprint: str, scout: Scout, made: BoardItem, outcome: Outcome
    ) -> BoardItem:
        """Read again after the add: when another box added the same finding's draft, the
        older stays and scout removes its own."""
        items = self.github.board_items(board, self.config.board.status_field)
        copies = [i for i in items if scout_fingerprint(i, scout) == fingerprint]
        copies += [] if any(c.id == made.id for c in copies) else [made]
        oldest = min(copies, key=lambda i: (i.database_id is None, i.database_id or 0))
        if oldest.id != made.id:
            self.github.delete_item(board, made.id)
            outcome.copies_removed += 1
        return oldest

    def _backlog(
        self,
        day: str,
        board: Board,
        backlog: str,
        fingerprint: str,
        item: BoardItem,
        outcome: Outcome,
    ) -> str | None:
        """The draft's Status once scout has done its part."""
        name = self.config.board.backlog_option
        added = f"draft {fingerprint}" in self._steps
        done = self._steps.get(f"status {fingerprint}", {}).get("state") == "done"
        if item.status is not None and (not added or done):
            return item.status  # someone's choice, or scout's Backlog that someone moved
        if item.archived:
            return self._archived(item, outcome)
        step = f"status {fingerprint}"
        self._record(day, step, state="started")
        try:
            self.github.set_status(board, item.id, backlog)
            # A board's automation can move a new item after scout set it: once more.
            field_name = self.config.board.status_field
            if self.github.item_status(board, item.id, field_name) != name:
                self.github.set_status(board, item.id, backlog)
        except ArchivedItem:  # archived since the board was read
            return self._archived(item, outcome)
        self._record(day, step, state="done", option=backlog)
        self._set_at.setdefault(item.id, clock.monotonic())
        return name

    def _backlog_again(self, board: Board, backlog: str) -> None:
        """A board's automation may move a new item seconds after scout set Backlog, after the
        read-back: once `[github] consistency_wait` has passed since the last set, the items
        set in this publish are read once more and any moved is set back (its step is done,
        so a later run would take the move for a person's)."""
        if not self._set_at:
            return
        waited = clock.monotonic() - max(self._set_at.values())
        clock.sleep(max(0.0, self.config.github.consistency_wait - waited))
        name, field_name = self.config.board.backlog_option, self.config.board.status_field
        for item in self.github.board_items(board, field_name):
            if item.id in self._set_at and item.status != name and not item.archived:
                self.github.set_status(board, item.id, backlog)

    def _archived(self, item: BoardItem, outcome: Outcome) -> str | None:
        """GitHub refuses any change to an archived item: left as it is, said, never a stop."""
        outcome.archived.append(item.title)
        self.note(
            f"board item {item.title!r} is archived: GitHub refuses changes to it, so "
            "its Status is left as it is"
        )
        return item.status

    def _add_status_lines(self, run: RunResult, board: Board, scout: Scout) -> list[str]:
        """One dated line on each of scout's drafts whose finding changed materially, read
        fresh from the board (another box may have written it), journaled by digest."""
        if not any(material_change(finding) for finding in run.findings):
            return []  # nothing changed: no board read
        day = run.date.isoformat()
        journaled = self.journaled_status_lines(day)
        drafts = board_index(
            self.github.board_items(board, self.config.board.status_field), scout
        ).drafts
        added = []
        for line in status_lines(
            self.config, run.date, run.findings, updatable_drafts(drafts), journaled
        ):
            item = drafts[line.fingerprint]
            if item.archived:
                continue  # GitHub refuses changes to it; its Status step says so
            body = with_status_line(item.body, line)
            if len(body) > COMMENT_LIMIT:  # a person's text filled the draft: never a stop
                self.note(f"board item {item.title!r} is too long for its status line: not added")
                continue
            step = _status_line_step(line.fingerprint)
            self._record(day, step, state="started", digest=line.digest)
            try:
                self.github.update_draft(str(item.draft_id), body)
            except ArchivedItem:  # archived since the board was read
                self.note(f"board item {item.title!r} is archived: its status line is not added")
                continue
            self._record(day, step, state="done", digest=line.digest)
            added.append(line.title)
        return added

    def _linked(self, finding: Finding, board: Board, index: BoardIndex) -> Finding:
        """The finding with its board item, when the board has one for it."""
        item = index.item_for(
            finding.fingerprint,
            draft_title(self.config, finding),
            by_title=wants_draft(finding.model_copy(update={"board": None})),
        )
        if item is None:
            return finding.model_copy(update={"board": None})
        url = board_item_url(self.target.web_url, board, item)
        return finding.model_copy(
            update={"board": BoardRef(item_id=item.id, url=url, status=item.status)}
        )

    def _find_draft(self, board: Board, fingerprint: str, scout: Scout) -> BoardItem | None:
        """After a lost answer: did the draft get made?"""
        items = self.github.board_items(board, self.config.board.status_field)
        return board_index(items, scout).drafts.get(fingerprint)

    def todays_comment(self, run: RunResult) -> Comment | None:
        """The comment a publish of `run` would edit (the token user's, with its day's
        marker), or None: it would post one."""
        return self.report_comment.of(run.date)
