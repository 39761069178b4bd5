"""What the rest of scout needs from GitHub, as one small protocol, and the plain values it
deals in. `client.GitHubClient` is the real one (PyGithub over HTTP); everything above the
GitHub layer sees only this."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import IO, Protocol

from scout_tui.errors import ScoutError


class GitHubError(ScoutError):
    """A GitHub call that failed, in one line (the token never in it). `transient`: worth
    another try (5xx, rate limits, timeouts, dropped connections)."""

    def __init__(self, message: str, *, status: int | None = None, transient: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient


class RateLimited(GitHubError):
    """GitHub asked for a longer wait than `[github] max_rate_limit_wait`: a collector is
    skipped, a publish stops; nothing more is asked of that API until `until`."""

    def __init__(self, message: str, until: datetime) -> None:
        super().__init__(message, transient=True)
        self.until = until


class Unreachable(GitHubError):
    """GitHub cannot be reached at all this run (no connection, or no answer to the first
    request): every later call fails at once with it, and a collector is skipped for it."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message, transient=True)
        self.why = (
            why  # "http://host: connection failed", said in "skipped — GitHub unreachable (…)"
        )


class ArchivedItem(GitHubError):
    """GitHub refuses any change to an archived board item."""


@dataclass(frozen=True)
class Comment:
    id: int
    author: str
    body: str
    created_at: datetime
    updated_at: datetime
    url: str


@dataclass(frozen=True)
class Board:
    """A Projects v2 board and its status field, looked up fresh on every run."""

    id: str
    owner: str
    owner_type: str  # "orgs" or "users", as in the board's web address
    number: int
    title: str
    status_field_id: str | None
    status_options: dict[str, str]  # option name → option id


@dataclass(frozen=True)
class BoardItem:
    id: str
    database_id: int | None  # the number in a board item link
    title: str
    body: str
    status: str | None
    creator: str | None = None  # the login that added it to the board
    content_type: str = "DraftIssue"  # or Issue, PullRequest (GraphQL's type names)
    archived: bool = False
    draft_id: str | None = None  # a draft's own id (DI_…), which updates its body


@dataclass(frozen=True)
class RateLimit:
    remaining: int
    limit: int
    reset: datetime | None


@dataclass(frozen=True)
class WorkflowRun:
    id: int
    number: int
    status: str
    conclusion: str | None
    created_at: datetime
    head_sha: str
    url: str


@dataclass(frozen=True)
class Job:
    id: int
    name: str
    conclusion: str | None
    url: str


@dataclass(frozen=True)
class IssueState:
    repo: str
    number: int
    title: str
    state: str  # open | closed
    is_pull: bool
    merged: bool
    merged_at: datetime | None
    created_at: datetime
    updated_at: datetime
    closed_at: datetime | None
    author: str
    url: str


def as_of(state: IssueState, until: datetime) -> IssueState:
    """The issue or pull request as it stood at `until` (a past day's run): merged or
    closed later is still open then."""
    merged = state.merged and state.merged_at is not None and state.merged_at < until
    closed = state.state != "open" and (state.closed_at is None or state.closed_at < until)
    if merged == state.merged and closed == (state.state != "open"):
        return state
    return replace(
        state,
        state="closed" if closed else "open",
        merged=merged,
        merged_at=state.merged_at if merged else None,
        closed_at=state.closed_at if closed else None,
    )


class GitHub(Protocol):
    api_url: str

    # who and how much
    def viewer(self) -> str: ...  # the token's login (an App's is `name[bot]`)
    def scopes(self) -> list[str] | None: ...  # None: a token without OAuth scopes
    def rate_limit(self) -> RateLimit | None: ...
    def new_run(self) -> None: ...  # forget that GitHub was unreachable or rate-limited

    # the tracking issue
    def comments(self, repo: str, issue: int, since: datetime | None) -> list[Comment]: ...
    def create_comment(
        self, repo: str, issue: int, body: str, applied: Callable[[], Comment | None] | None = None
    ) -> Comment: ...
    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment: ...
    def delete_comment(self, repo: str, comment_id: int) -> None: ...

    # the board
    def board(self, owner: str, number: int, status_field: str) -> Board: ...
    def board_items(self, board: Board, status_field: str) -> list[BoardItem]: ...
    def add_draft(
        self,
        board: Board,
        title: str,
        body: str,
        applied: Callable[[], BoardItem | None] | None = None,
    ) -> BoardItem: ...
    def set_status(self, board: Board, item_id: str, option_id: str) -> None: ...
    def item_status(self, board: Board, item_id: str, status_field: str) -> str | None: ...
    def delete_item(self, board: Board, item_id: str) -> None: ...
    def update_draft(self, draft_id: str, body: str) -> None: ...

    # what the GitHub collectors read
    def workflow_runs(
        self, repo: str, workflow: str, branch: str, event: str, limit: int
    ) -> list[WorkflowRun]: ...
    def run_jobs(self, repo: str, run_id: int) -> list[Job]: ...
    def job_log(self, repo: str, job_id: int, into: IO[bytes]) -> int: ...
    def issue_state(self, repo: str, number: int) -> IssueState: ...
    def reviews(self, repo: str, number: int) -> int: ...
    def commit_author(self, repo: str, sha: str) -> str | None: ...
    def commits_between(self, repo: str, old: str, new: str) -> int: ...  # compare's total
    def search_issues(self, query: str, limit: int) -> list[IssueState]: ...


def board_item_url(web_url: str, board: Board, item: BoardItem) -> str:
    """The link GitHub's board shows for an item (`itemId` is its full database id); the
    board's own link when GitHub gave no database id (`fullDatabaseId` may be null)."""
    board_url = f"{web_url.rstrip('/')}/{board.owner_type}/{board.owner}/projects/{board.number}"
    if item.database_id is None:
        return board_url
    return f"{board_url}?pane=issue&itemId={item.database_id}"
