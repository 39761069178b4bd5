"""Where a publish goes (its journal key), what it did, and how it can stop."""

from __future__ import annotations

from dataclasses import dataclass, field

from scout_tui.config.models import Config
from scout_tui.errors import UsageError
from scout_tui.github.api import Comment, GitHubError


class PublishError(GitHubError):
    """Publishing cannot go on; the journal keeps what was done for the rerun."""


class DateRefused(UsageError):
    """The run's date is not one publishing posts under: nothing was written."""


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
        return cls(
            api_url.rstrip("/"),
            web_url.rstrip("/"),
            project.repo,
            project.tracking_issue,
            board.owner,
            board.number,
        )

    @property
    def journal_scope(self) -> str:
        return (
            f"publish {self.api_url} {self.repo}#{self.issue} "
            f"{self.board_owner}/projects/{self.board_number}"
        )


@dataclass
class Outcome:
    comment: Comment | None = None
    comment_posted: bool = False
    drafts_added: list[str] = field(default_factory=list)  # titles
    drafts_found: list[str] = field(default_factory=list)  # already on the board (reruns)
    duplicates: list[str] = field(default_factory=list)  # an item with the same title exists
    status_lines: list[str] = field(default_factory=list)  # titles of drafts given one
    archived: list[str] = field(default_factory=list)  # scout's drafts left alone: archived
    copies_removed: int = 0  # scout's own copies, another box's being older

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
            lines.append(f"{len(self.duplicates)} already on the board (no new draft)")
        if self.archived:
            lines.append(f"{len(self.archived)} archived draft(s) left as they are")
        if self.copies_removed:
            lines.append(
                f"{self.copies_removed} copy(ies) removed: another publish had made them first"
            )
        if self.status_lines:
            lines.append(f"{len(self.status_lines)} status line(s) added to existing drafts")
        return lines
