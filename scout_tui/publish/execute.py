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
- Status: set to the Backlog option, ids looked up fresh from the board, for the drafts
  this publish made and for drafts scout created that have no status yet — never Ready, a
  status someone chose is left alone, and an item scout did not create is never touched;
- the links: the comment is edited once more when its body differs.
Each step is journaled in the state store before and after, keyed by API URL, repository,
tracking issue, board and report date, so a demo never marks a real publish done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from scout_tui.config import Config
from scout_tui.github.api import Board, BoardItem, Comment, GitHub, GitHubError, board_item_url
from scout_tui.model import BoardRef, Finding, RunResult
from scout_tui.publish.merge import Merged, merge_edits
from scout_tui.publish.plan import PublishPlan, build_plan, draft_body, draft_title, wants_draft
from scout_tui.report.board import BoardIndex, Scout, board_index, normalized_title
from scout_tui.report.render import COMMENT_LIMIT, ReportTooLong, report_marker
from scout_tui.state import StateStore

SCOPES_TO_COMMENT = {"repo", "public_repo"}
SCOPES_FOR_BOARDS = {"project"}


class PublishError(GitHubError):
    """Publishing cannot go on; the journal keeps what was done for the rerun."""


@dataclass
class Target:
    """Where a publish goes; its journal key."""

    api_url: str
    web_url: str
    repo: str
    issue: int
    board_owner: str
    board_number: int

    @classmethod
    def of(cls, config: Config, api_url: str, web_url: str) -> Target:
        project, board = config.project, config.board
        return cls(api_url.rstrip("/"), web_url.rstrip("/"), project.repo,
                   project.tracking_issue, board.owner, board.number)

    @property
    def journal_scope(self) -> str:
        return (f"publish {self.api_url} {self.repo}#{self.issue} "
                f"{self.board_owner}/projects/{self.board_number}")  # fmt: skip


@dataclass
class Outcome:
    comment: Comment | None = None
    comment_posted: bool = False
    drafts_added: list[str] = field(default_factory=list)  # titles
    drafts_found: list[str] = field(default_factory=list)  # already on the board (reruns)
    duplicates: list[str] = field(default_factory=list)  # an item with the same title exists
    statuses_set: int = 0
    links_edited: bool = False

    def summary(self) -> list[str]:
        lines = []
        if self.comment is not None:
            verb = "posted" if self.comment_posted else "updated"
            lines.append(f"report comment {verb}: {self.comment.url}")
        if self.drafts_added:
            lines.append(f"{len(self.drafts_added)} Backlog draft(s) added")
        if self.drafts_found:
            lines.append(f"{len(self.drafts_found)} draft(s) already on the board")
        if self.duplicates:
            lines.append(f"{len(self.duplicates)} skipped as duplicates of board items")
        return lines


def plan_against_board(config: Config, run: RunResult, report: str,
                       items: list[BoardItem] | None,
                       scout: Scout | None) -> PublishPlan:  # fmt: skip
    """The plan, with board items (when known) as duplicates rather than new drafts."""
    index = board_index(items, scout) if items is not None else None
    titles = {key: item.id for key, item in index.by_key().items()} if index is not None else {}
    return build_plan(config, run.date, report, run.findings, titles)


class Publisher:
    def __init__(self, github: GitHub, state: StateStore, config: Config, target: Target,
                 render: Callable[..., str],  # (run, room=0): room for a person's text
                 note: Callable[[str], None] = lambda message: None) -> None:  # fmt: skip
        self.github, self.state, self.config, self.target = github, state, config, target
        self.render, self.note = render, note
        self.said: set[str] = set()

    # -- the journal ------------------------------------------------------------------------
    def _record(self, day: str, step: str, **data: object) -> None:
        self.state.record_step(self.target.journal_scope, day, step, dict(data))

    def scout(self) -> Scout:
        """Who scout is on the board: the token's identity and what this journal added."""
        return Scout(self.github.viewer(), self.state.journaled_items(self.target.journal_scope))

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
            raise PublishError("the token cannot publish: it lacks the scope "
                               + " and the scope ".join(missing)
                               + " (`gh auth refresh -s project`, or a new token)")  # fmt: skip

    def publish(self, run: RunResult) -> Outcome:
        """`run` is triaged: what is in it is published."""
        with self.state.lock("publish", "publish"):
            return self._publish(run)

    def _publish(self, run: RunResult) -> Outcome:
        day = run.date.isoformat()
        outcome = Outcome()
        self.check_access()
        viewer = self.github.viewer()
        status_field = self.config.board.status_field
        board = self.github.board(self.target.board_owner, self.target.board_number, status_field)
        backlog = board.status_options.get(self.config.board.backlog_option)
        if backlog is None:
            options = ", ".join(board.status_options) or "none"
            raise PublishError(f"board {board.owner}/{board.number} has no {status_field!r} "
                               f"option {self.config.board.backlog_option!r} (options: {options})")
        scout = self.scout()
        index = board_index(self.github.board_items(board, status_field), scout)

        # 1. The comment, with the board links already known.
        findings = [self._linked(f, board, index) for f in run.findings]
        linked = run.model_copy(update={"findings": findings})
        body = self.render(linked)
        self._record(day, "comment", state="started")
        comment, outcome.comment_posted = self._comment(linked, body, viewer)
        outcome.comment = comment
        self._record(day, "comment", state="done", id=comment.id, url=comment.url)

        # 2. One draft per new Action Item that has none; 3. Backlog where scout owns it.
        for position, finding in enumerate(findings):
            if not wants_draft(finding.model_copy(update={"board": None})):
                continue
            title = draft_title(self.config, finding)
            ours = index.drafts.get(finding.fingerprint)  # only ever a draft scout created
            if ours is None and normalized_title(title) in index.titles:
                outcome.duplicates.append(title)  # someone filed it already: linked, untouched
                continue
            created = ours is None
            if ours is None:
                step = f"draft {finding.fingerprint}"
                self._record(day, step, state="started")
                ours = self.github.add_draft(
                    board, title, draft_body(self.config, finding, run.date, comment.url),
                    applied=lambda fp=finding.fingerprint: self._find_draft(board, fp, scout),
                )  # fmt: skip
                self._record(day, step, state="done", item=ours.id, database_id=ours.database_id)
                outcome.drafts_added.append(title)
            else:
                outcome.drafts_found.append(title)
            status = ours.status
            if status is None or (created and status != self.config.board.backlog_option):
                step = f"status {finding.fingerprint}"
                self._record(day, step, state="started")
                self.github.set_status(board, ours.id, backlog)
                self._record(day, step, state="done", option=backlog)
                outcome.statuses_set += 1
                status = self.config.board.backlog_option
            url = board_item_url(self.target.web_url, board, ours)
            findings[position] = finding.model_copy(
                update={"board": BoardRef(item_id=ours.id, url=url, status=status)}
            )

        # 4. The comment, linked.
        linked = run.model_copy(update={"findings": findings})
        final, rendered = self._kept_edits(linked, comment, self.render(linked))
        if final is not None and final != comment.body:
            self._record(day, "links", state="started")
            comment = self.github.edit_comment(self.target.repo, comment.id, final)
            self._record(day, "rendered", body=rendered)
            outcome.comment = comment
            outcome.links_edited = True
        self._record(day, "links", state="done")
        return outcome

    def _last_written(self, day: str) -> str | None:
        """What scout itself rendered when it last wrote today's comment: the merge's base."""
        return self.state.journal(self.target.journal_scope, day).get("rendered", {}).get("body")

    def _kept_edits(self, run: RunResult, theirs: Comment,
                    ours: str) -> tuple[str | None, str]:  # fmt: skip
        """`ours` with what a person did to today's comment kept, within GitHub's limit,
        and scout's own part of it (the next merge's base); None (said) when their edit and
        scout's conflict: the comment is left as it is."""
        base = self._last_written(run.date.isoformat())
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
        said = (f"today's comment was edited by hand and {why}: scout left it as it is "
                f"({theirs.url})")  # fmt: skip
        if merged.body is None and said not in self.said:  # once, not at each step
            self.said.add(said)
            self.note(said)
        return merged.body, ours

    def _linked(self, finding: Finding, board: Board, index: BoardIndex) -> Finding:
        """The finding with its board item, when the board has one for it."""
        item = index.drafts.get(finding.fingerprint)
        if item is None and wants_draft(finding.model_copy(update={"board": None})):
            item = index.titles.get(normalized_title(draft_title(self.config, finding)))
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

    def _comment(self, run: RunResult, body: str, viewer: str) -> tuple[Comment, bool]:
        """Today's comment by us, edited; or a new one (never twice, never someone else's).
        True when posted now."""
        mine = self._todays_comment(run, viewer)
        day = run.date.isoformat()
        if mine is not None:
            merged, rendered = self._kept_edits(run, mine, body)
            if merged is None or mine.body == merged:
                return mine, False
            edited = self.github.edit_comment(self.target.repo, mine.id, merged)
            self._record(day, "rendered", body=rendered)
            return edited, False
        posted = self.github.create_comment(
            self.target.repo, self.target.issue, body,
            applied=lambda: self._todays_comment(run, viewer),
        )
        self._record(day, "rendered", body=body)
        return posted, True

    def todays_comment(self, run: RunResult) -> Comment | None:
        """The comment a publish of `run` would edit (the token user's, with today's
        marker), or None: it would post one."""
        return self._todays_comment(run, self.github.viewer())

    def _todays_comment(self, run: RunResult, viewer: str) -> Comment | None:
        since = datetime.combine(run.date - timedelta(days=1), time(), UTC)
        marker = report_marker(run.date)
        for comment in self.github.comments(self.target.repo, self.target.issue, since):
            if comment.author == viewer and marker in comment.body:
                return comment
        return None

