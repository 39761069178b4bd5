"""The real GitHub: PyGithub for REST, its requester's GraphQL calls for Projects v2 (which
PyGithub has no classes for). Every request goes through `transport.Transport`'s one retry
layer.

Every answer is redacted before it is cached and scrubbed (`errors.scrub_data`) before it
is used: an issue comment or a log holding a token, or a control character, stops here.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import IO, Any

import requests

from scout_tui.errors import RedactingWriter, redact, scrub_data
from scout_tui.github.api import (
    Board,
    BoardItem,
    Comment,
    GitHubError,
    IssueState,
    Job,
    RateLimit,
    WorkflowRun,
)
from scout_tui.github.transport import (
    NETWORK_ERRORS,
    PAGE,
    Cached,
    Transport,
    lacked,
    need,
    timed_out,
)

_BOARD = """
query($owner: String!, $number: Int!, $status: String!) {
  %s(login: $owner) {
    projectV2(number: $number) {
      id number title
      field(name: $status) { ... on ProjectV2SingleSelectField { id options { id name } } }
    }
  }
}"""
_ITEMS = """
query($id: ID!, $after: String, $status: String!) {
  node(id: $id) {
    ... on ProjectV2 {
      items(first: 100, after: $after) {
        nodes {
          id fullDatabaseId isArchived
          creator { __typename login }
          content {
            __typename
            ... on DraftIssue { id title body }
            ... on Issue { title body }
            ... on PullRequest { title body }
          }
          fieldValueByName(name: $status) { ... on ProjectV2ItemFieldSingleSelectValue { name } }
        }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}"""
_ADD_DRAFT = """
mutation($project: ID!, $title: String!, $body: String!) {
  addProjectV2DraftIssue(input: {projectId: $project, title: $title, body: $body}) {
    projectItem { id fullDatabaseId creator { __typename login } }
  }
}"""
_DELETE_ITEM = """
mutation($project: ID!, $item: ID!) {
  deleteProjectV2Item(input: {projectId: $project, itemId: $item}) { deletedItemId }
}"""
_ITEM_STATUS = """
query($id: ID!, $status: String!) {
  node(id: $id) {
    ... on ProjectV2Item {
      fieldValueByName(name: $status) { ... on ProjectV2ItemFieldSingleSelectValue { name } }
    }
  }
}"""
_UPDATE_DRAFT = """
mutation($draft: ID!, $body: String!) {
  updateProjectV2DraftIssue(input: {draftIssueId: $draft, body: $body}) { draftIssue { id } }
}"""
_VIEWER = "query { viewer { login id } }"
_SET_STATUS = """
mutation($project: ID!, $item: ID!, $field: ID!, $option: String!) {
  updateProjectV2ItemFieldValue(input: {projectId: $project, itemId: $item, fieldId: $field,
                                        value: {singleSelectOptionId: $option}}) {
    projectV2Item { id }
  }
}"""


def _time(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def _maybe_time(value: Any) -> datetime | None:
    return _time(value) if value else None


def _login(actor: dict | None) -> str | None:
    """An Actor's login as REST and `viewer` give it; None for a deleted account (GitHub
    answers null). GraphQL names a Bot `name` where REST and an App token's `viewer` say
    `name[bot]`."""
    if not actor or not actor.get("login"):
        return None
    login = str(actor["login"])
    return (
        f"{login}[bot]"
        if actor.get("__typename") == "Bot" and not login.endswith("[bot]")
        else login
    )


class GitHubClient(Transport):
    """What scout asks of GitHub: who the token is, the tracking issue's comments, the board
    and its drafts, and what the GitHub collectors read."""

    # -- who and how much ----------------------------------------------------------------------
    def viewer(self) -> str:
        """From GraphQL, which answers GitHub App installation tokens too (REST `/user`
        refuses them); asked once per client."""
        if self._viewer is None:
            data = self._graphql(self._r, _VIEWER, {}, "asking GitHub who the token is")
            self._viewer = str(need(data.get("viewer"), "login", "the token's login (viewer)"))
        return self._viewer

    def scopes(self) -> list[str] | None:
        """A classic token's OAuth scopes, from the `X-OAuth-Scopes` of an answer; None for
        the tokens that have none (fine-grained, GitHub App installation)."""
        self.viewer()
        scopes = self._r.oauth_scopes
        return None if scopes is None else [s.strip() for s in scopes if s.strip()]

    def rate_limit(self) -> RateLimit | None:
        """From the last answer's headers: costs no request."""
        remaining, limit = self._r.rate_limiting
        if limit < 0:
            return None
        reset = self._r.rate_limiting_resettime
        return RateLimit(remaining, limit, datetime.fromtimestamp(reset, UTC) if reset else None)

    # -- the tracking issue --------------------------------------------------------------------
    def _comment(self, data: Any) -> Comment:
        author = str((data.get("user") or {}).get("login", ""))
        return Comment(
            id=int(need(data, "id", "the comment's id")),
            author=author,
            body=data.get("body") or "",
            created_at=_time(need(data, "created_at", "the comment's created_at")),
            updated_at=_time(need(data, "updated_at", "the comment's updated_at")),
            url=data.get("html_url", ""),
        )

    def comments(self, repo: str, issue: int, since: datetime | None) -> list[Comment]:
        params = {"since": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")} if since else {}
        url = f"/repos/{repo}/issues/{issue}/comments"
        doing = f"listing the comments of {repo}#{issue}"
        return [self._comment(data) for data in self._pages(url, params, doing)]

    def create_comment(
        self, repo: str, issue: int, body: str, applied: Callable[[], Comment | None] | None = None
    ) -> Comment:
        url = f"/repos/{repo}/issues/{issue}/comments"
        doing = f"commenting on {repo}#{issue}"
        return self._retrying(
            doing,
            "core",
            lambda: self._comment(
                scrub_data(self._once(self._w, "POST", url, doing, body={"body": body}).data)
            ),
            safe=False,
            applied=applied,
        )

    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        url = f"/repos/{repo}/issues/comments/{comment_id}"
        answer = self._request(
            self._w, "PATCH", url, f"editing comment {comment_id} on {repo}", body={"body": body}
        )  # the same edit twice is the same edit
        return self._comment(scrub_data(answer.data))

    def delete_comment(self, repo: str, comment_id: int) -> None:
        url = f"/repos/{repo}/issues/comments/{comment_id}"
        try:  # deleting twice deletes once: safe to send again
            self._request(self._w, "DELETE", url, f"deleting comment {comment_id} on {repo}")
        except GitHubError as exc:
            if exc.status != 404:  # 404: gone, by a retry whose first answer was lost
                raise

    # -- the board ------------------------------------------------------------------------------
    def board(self, owner: str, number: int, status_field: str) -> Board:
        variables = {"owner": owner, "number": number, "status": status_field}
        for kind, path in (("organization", "orgs"), ("user", "users")):
            try:
                data = self._graphql(
                    self._r, _BOARD % kind, variables, f"looking up board {owner}/{number}"
                )
            except GitHubError as exc:
                if "Could not resolve" in str(exc):  # GraphQL's NOT_FOUND: not an organization
                    continue
                raise
            project = (data.get(kind) or {}).get("projectV2")
            if not project:
                continue
            field = project.get("field") or {}
            options = {
                str(need(o, "name", "a status option's name")): str(
                    need(o, "id", "a status option's id")
                )
                for o in field.get("options") or []
            }
            return Board(
                id=str(need(project, "id", f"board {owner}/{number}'s id")),
                owner=owner,
                owner_type=path,
                number=number,
                title=project.get("title", ""),
                status_field_id=field.get("id"),
                status_options=options,
            )
        raise GitHubError(
            f"no project {number} of {owner} on {self.api_url} (or the token "
            "cannot see it: it needs the read:project or project scope)"
        )

    def board_items(self, board: Board, status_field: str) -> list[BoardItem]:
        """Every item, page by page; a page cursor that comes back is an error, not a loop."""
        name = f"board {board.owner}/{board.number}"
        items: list[BoardItem] = []
        after = None
        cursors: set[str] = set()
        while True:
            variables = {"id": board.id, "after": after, "status": status_field}
            data = self._graphql(self._r, _ITEMS, variables, f"listing the items of {name}")
            page = need(
                need(data, "node", f"{name} (node {board.id} is null)"),
                "items",
                f"the items of {name}",
            )
            for node in page.get("nodes") or []:
                if not node:
                    continue
                content = node.get("content") or {}
                status = (node.get("fieldValueByName") or {}).get("name")
                database_id = node.get("fullDatabaseId")
                items.append(
                    BoardItem(
                        id=str(need(node, "id", f"an item id on {name}")),
                        database_id=int(database_id) if database_id else None,
                        title=content.get("title", ""),
                        body=content.get("body", ""),
                        status=status,
                        creator=_login(node.get("creator")),
                        content_type=content.get("__typename", ""),
                        archived=bool(node.get("isArchived")),
                        draft_id=content.get("id"),
                    )
                )
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return items
            after = info.get("endCursor")
            if not after or after in cursors:
                raise lacked(
                    f"a new page cursor for the items of {name} (endCursor "
                    f"{after!r} again after {len(cursors) + 1} pages)"
                )
            cursors.add(after)

    def add_draft(
        self,
        board: Board,
        title: str,
        body: str,
        applied: Callable[[], BoardItem | None] | None = None,
    ) -> BoardItem:
        doing = f"adding a draft to board {board.owner}/{board.number}"
        variables = {"project": board.id, "title": title, "body": body}

        def add() -> BoardItem:
            data = self._graphql_once(self._w, _ADD_DRAFT, variables, doing)
            item = need(data.get("addProjectV2DraftIssue"), "projectItem", "the new draft")
            database_id = item.get("fullDatabaseId")
            return BoardItem(
                id=str(need(item, "id", "the new draft's id")),
                database_id=int(database_id) if database_id else None,
                title=title,
                body=body,
                status=None,
                creator=_login(item.get("creator")),
            )

        return self._retrying(doing, "graphql", add, safe=False, applied=applied)

    def set_status(self, board: Board, item_id: str, option_id: str) -> None:
        if board.status_field_id is None:
            raise GitHubError(f"board {board.owner}/{board.number} has no status field")
        variables = {
            "project": board.id,
            "item": item_id,
            "field": board.status_field_id,
            "option": option_id,
        }
        # the same status twice is the same status: safe to send again
        self._graphql(self._w, _SET_STATUS, variables, "setting a board item's status")

    def item_status(self, board: Board, item_id: str, status_field: str) -> str | None:
        """One item's Status, read fresh (by id: a new item is found at once)."""
        data = self._graphql(
            self._r,
            _ITEM_STATUS,
            {"id": item_id, "status": status_field},
            "reading a board item's status",
        )
        return ((data.get("node") or {}).get("fieldValueByName") or {}).get("name")

    def delete_item(self, board: Board, item_id: str) -> None:
        try:  # removing twice removes once: safe to send again
            self._graphql(
                self._w,
                _DELETE_ITEM,
                {"project": board.id, "item": item_id},
                f"removing an item from board {board.owner}/{board.number}",
            )
        except GitHubError as exc:
            if "Could not resolve" not in str(exc):  # gone, by a retry whose answer was lost
                raise

    def update_draft(self, draft_id: str, body: str) -> None:
        # the same body twice is the same body: safe to send again
        self._graphql(
            self._w, _UPDATE_DRAFT, {"draft": draft_id, "body": body}, "updating a draft's body"
        )

    # -- what the GitHub collectors read -------------------------------------------------------
    def workflow_runs(
        self, repo: str, workflow: str, branch: str, event: str, limit: int
    ) -> list[WorkflowRun]:
        name = workflow.rsplit("/", 1)[-1]
        url = f"/repos/{repo}/actions/workflows/{name}/runs"

        data = self._get(
            url,
            {"branch": branch, "event": event, "per_page": min(PAGE, limit)},
            f"listing the runs of {name}",
        )
        return [
            WorkflowRun(
                id=int(need(r, "id", "a workflow run's id")),
                number=int(r.get("run_number") or 0),
                status=r.get("status") or "",
                conclusion=r.get("conclusion"),
                created_at=_time(need(r, "created_at", "a run's created_at")),
                head_sha=r.get("head_sha", ""),
                url=r.get("html_url", ""),
            )
            for r in (data or {}).get("workflow_runs", [])
        ]

    def run_jobs(self, repo: str, run_id: int) -> list[Job]:
        url = f"/repos/{repo}/actions/runs/{run_id}/jobs"
        jobs = self._pages(url, None, f"listing the jobs of run {run_id}", items="jobs")
        return [
            Job(
                id=int(need(j, "id", "a job's id")),
                name=j.get("name", ""),
                conclusion=j.get("conclusion"),
                url=j.get("html_url", ""),
            )
            for j in jobs
        ]

    def job_log(self, repo: str, job_id: int, into: IO[bytes]) -> int:
        """Stream a job's log into a file, redacted on the way (a token split across two
        chunks too); the redirect target gets no token."""
        doing = f"downloading the log of job {job_id}"
        answer = self._request(self._r, "GET", f"/repos/{repo}/actions/jobs/{job_id}/logs", doing)
        location = answer.headers.get("location")
        if answer.status != 302 or not location:
            raise GitHubError(f"{doing}: GitHub answered {answer.status}", status=answer.status)
        writer = RedactingWriter(into)
        try:
            with requests.get(location, stream=True, timeout=self._settings.timeout) as response:
                response.raise_for_status()
                for chunk in response.iter_content(1024 * 1024):
                    writer.write(chunk)
        except NETWORK_ERRORS as exc:  # the log's own host, not GitHub's API
            kind = "timed out" if timed_out(exc) else f"failed ({type(exc).__name__})"
            raise GitHubError(redact(f"{doing}: the download {kind}"), transient=True) from None
        writer.close()
        return writer.written

    def _state(self, repo: str, data: dict) -> IssueState:
        pull = data.get("pull_request") or {}
        merged_at = data.get("merged_at") or pull.get("merged_at")
        return IssueState(
            repo=repo,
            number=int(need(data, "number", "an issue's number")),
            title=data.get("title", ""),
            state=data.get("state", ""),
            is_pull=bool(pull) or "merged" in data,
            merged=bool(merged_at),
            merged_at=_maybe_time(merged_at),
            created_at=_time(need(data, "created_at", "an issue's created_at")),
            updated_at=_time(need(data, "updated_at", "an issue's updated_at")),
            closed_at=_maybe_time(data.get("closed_at")),
            author=str((data.get("user") or {}).get("login", "")),
            url=data.get("html_url", ""),
        )

    def issue_state(self, repo: str, number: int) -> IssueState:
        """A merged pull request cannot change: kept for good."""

        def merged(data: Any) -> bool:
            return bool((data.get("pull_request") or {}).get("merged_at"))

        data = self._get(
            f"/repos/{repo}/issues/{number}", None, f"looking up {repo}#{number}", final=merged
        )
        return self._state(repo, data)

    def reviews(self, repo: str, number: int) -> int:
        """How many reviews a pull request has had."""
        return len(
            self._pages(
                f"/repos/{repo}/pulls/{number}/reviews",
                None,
                f"listing the reviews of {repo}#{number}",
            )
        )

    def commit_author(self, repo: str, sha: str) -> str | None:
        """The GitHub login of a commit's author (None when GitHub does not know one):
        a commit never changes, so it is kept for good."""
        missing = f"{self._prefix}unknown commit {repo} {sha} {datetime.now(UTC).date()}"
        if self._cache is not None and self._cache.get_value(missing, Cached) is not None:
            return None  # asked today already: not pushed, or not GitHub's
        try:
            data = self._get(
                f"/repos/{repo}/commits/{sha}",
                None,
                f"looking up commit {sha[:12]}",
                final=lambda d: True,
            )
        except GitHubError as exc:
            if exc.status in (404, 422) and self._cache is not None:
                self._cache.put_value(missing, Cached(body="null", final=True))
            raise
        return ((data or {}).get("author") or {}).get("login")

    def commits_between(self, repo: str, old: str, new: str) -> int:
        """How many commits `new` has that `old` has not (GitHub's compare): two commits'
        answer never changes, so it is kept for good."""
        data = self._get(
            f"/repos/{repo}/compare/{old}...{new}",
            None,
            f"comparing {old[:12]}...{new[:12]}",
            final=lambda d: True,
        )
        return int((data or {}).get("total_commits") or 0)

    def search_issues(self, query: str, limit: int) -> list[IssueState]:
        items = self._pages(
            "/search/issues", {"q": query}, f"searching {query!r}", items="items", limit=limit
        )
        return [
            self._state(str(d.get("repository_url", "")).split("/repos/", 1)[-1], d) for d in items
        ]
