"""Publishing from the console, off the event loop: the proposal (it reads the board and
today's comment), then the publish, each line of its progress posted as it happens."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from textual.message import Message

from scout_tui.errors import ScoutError, UsageError, redact
from scout_tui.model import RunResult, Section, TriageEntry
from scout_tui.session import Session
from scout_tui.triage import decisions as triage
from scout_tui.tui.messages import GitHubStatus, Proposed, Published, PublishNote
from scout_tui.tui.proposal import PublishProposal


class PublishController:
    def __init__(self, session: Session, post: Callable[[Message], object]) -> None:
        self.session = session
        self.post = post

    def propose(
        self, run: RunResult, reviewed: RunResult, entries: Mapping[str, TriageEntry]
    ) -> None:
        """What publishing `run` (or only its `reviewed` findings) would do: `Proposed`."""
        from scout_tui.github.api import GitHubError  # with GitHub's first answer

        session = self.session
        try:
            publisher = session.publisher()
            publisher.check_access()
            note = None
            try:
                items = session.board_items()
            except GitHubError as exc:
                items, note = None, str(exc)
            existing = publisher.todays_comment(run)
            comment = (
                f"edit today's comment ({existing.url})"
                if existing
                else "post a new report comment"
            )
            to_review = [f for f in run.findings if f.section is not Section.ALL_CLEAR]
            undecided = sum(1 for f in to_review if not triage.reviewed(entries.get(f.fingerprint)))
            proposal = PublishProposal(
                session.plan(run, items),
                session.plan(reviewed, items),
                session.publish_target(),
                comment,
                undecided,
                note,
                tuple(session.run_problems(run)),
                len(to_review) - undecided,
            )
            self.post(Proposed(proposal, None))
        except (GitHubError, ScoutError, UsageError) as exc:
            self.post(Proposed(None, redact(str(exc))))

    def publish(self, run: RunResult) -> None:
        """Publish `run`: a `PublishNote` per step, then `Published`."""
        from scout_tui.github.api import GitHubError  # with GitHub's first answer

        try:
            outcome = self.session.publisher(note=self._note).publish(run)
        except UsageError as exc:  # refused before anything was written (a day it cannot post)
            self.post(Published("Nothing published", f"**{redact(str(exc))}**"))
            return
        except (GitHubError, ScoutError) as exc:
            # Only a failure that may pass (5xx, rate limit, network) is worth another try.
            again = (
                "\n\nWhat was done is journaled: publish again to finish."
                if isinstance(exc, GitHubError) and exc.transient
                else ""
            )
            self.post(Published("Publish stopped", f"**{redact(str(exc))}**{again}"))
            return
        lines = [f"- {line}" for line in outcome.summary()]
        markdown = "\n".join(
            ["## Published", "", *lines, "", *self._github_view(), "", *self._comment_view(run)]
        )
        session = self.session
        self.post(Published("Published", markdown, session.published_at(run.date), session.filed()))

    def _note(self, line: str) -> None:
        self.post(PublishNote(redact(line)))

    def _github_view(self) -> list[str]:
        """The board as GitHub now holds it."""
        from scout_tui.github.api import GitHubError  # with GitHub's first answer

        config = self.session.config
        try:
            items = self.session.board_items()
        except GitHubError as exc:
            return [f"(the board cannot be read: {exc})"]
        lines = [
            f"## Board {config.board.owner}/projects/{config.board.number}",
            "",
            "| status | item |",
            "| --- | --- |",
        ]
        for item in items:
            title = item.title.replace("|", "\\|")
            lines.append(f"| {item.status or 'no status'} | {title} |")
        return lines

    def _comment_view(self, run: RunResult) -> list[str]:
        """The day's report comment as GitHub now holds it (read back, not as sent)."""
        from scout_tui.github.api import GitHubError  # with GitHub's first answer

        issue = self.session.config.project.tracking_issue
        try:
            comment = self.session.publisher().todays_comment(run)
        except (GitHubError, ScoutError) as exc:
            return [f"(the comment on #{issue} cannot be read: {redact(str(exc))})"]
        if comment is None:
            return [f"(no report comment of {run.date} on #{issue})"]
        return [f"## The comment on #{issue}, as GitHub holds it", "", comment.body]

    def check_github(self) -> None:
        """Whether GitHub answers, and the rate limit left: `GitHubStatus`."""
        from scout_tui.github.api import GitHubError  # with GitHub's first answer

        github, reason = self.session.github()
        if github is None:
            self.post(GitHubStatus(False, reason))
            return
        try:
            github.viewer()
        except GitHubError as exc:
            self.post(GitHubStatus(False, f"GitHub cannot be reached: {exc}"))
            return
        limit = github.rate_limit()
        self.post(GitHubStatus(True, f"rate {limit.remaining}/{limit.limit}" if limit else ""))
