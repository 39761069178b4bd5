"""The real GitHub: PyGithub for REST, its requester's GraphQL calls for Projects v2 (which
PyGithub has no classes for).

Two PyGithub clients share the token. Reads (GET, and GraphQL queries, which are POSTs) go
through one that PyGithub's own `GithubRetry` retries on 5xx, primary and secondary rate
limits (honouring Retry-After and X-RateLimit-Reset, with bounded waits), timeouts and
dropped connections. Writes go through one paced by PyGithub (`seconds_between_writes`,
GitHub asks for a second between mutations) whose `GithubRetry` retries only what is safe
for any write: a rate-limit refusal and a connection that never got through. A write whose
answer was lost may have happened: it is retried here, and a create (a comment, a draft)
is first looked for with `applied` so that a rerun never makes two.

Every answer is redacted before it is cached and scrubbed (`errors.scrub_data`) before it
is used: an issue comment or a log holding a token, or a control character, stops here.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, BinaryIO, TypeVar
from urllib.parse import urlencode

import requests
import urllib3
from github import Auth, Github, GithubException
from github.GithubRetry import GithubRetry
from github.Requester import Requester
from pydantic import BaseModel

from scout_tui import __version__
from scout_tui.cache import Cache
from scout_tui.config import GithubConfig
from scout_tui.errors import RedactingWriter, redact, register_secret, scrub_data
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

# PyGithub logs each retry as a warning; with no handler configured Python prints them on
# stderr (and over the console's screen). What matters reaches the user as one error line.
logging.getLogger("github").addHandler(logging.NullHandler())
logging.getLogger("github").propagate = False

T = TypeVar("T")
PAGE = 100
_NETWORK_ERRORS = (requests.exceptions.RequestException, urllib3.exceptions.HTTPError,
                   http.client.HTTPException, ConnectionError, TimeoutError)  # fmt: skip

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
          id fullDatabaseId
          creator { login }
          content {
            __typename
            ... on DraftIssue { title body }
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
    projectItem { id fullDatabaseId creator { login } }
  }
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
    """An Actor's login; None for a deleted account (GitHub answers null)."""
    return str(actor["login"]) if actor and actor.get("login") else None


class Cached(BaseModel):
    """A GET's last answer: revalidated with its ETag (a 304 costs no rate limit), or kept
    for good when it cannot change any more (a merged pull request, a finished run's jobs)."""

    etag: str | None = None
    body: str
    final: bool = False


class GitHubClient:
    def __init__(self, api_url: str, token: str, settings: GithubConfig,
                 cache: Cache | None = None) -> None:  # fmt: skip
        register_secret(token)
        self.api_url = api_url.rstrip("/")
        self._settings = settings
        common: dict[str, Any] = dict(
            auth=Auth.Token(token), base_url=self.api_url, timeout=max(1, round(settings.timeout)),
            user_agent=f"scout-tui/{__version__}", per_page=PAGE, seconds_between_requests=None,
        )  # fmt: skip
        waits = {
            "backoff_factor": settings.backoff / 2,
            "secondary_rate_wait": settings.secondary_rate_wait,
            "max_rate_limit_wait": settings.max_rate_limit_wait,
        }
        self._reads = Github(**common, seconds_between_writes=None,
                             retry=GithubRetry(total=settings.retries, **waits))  # fmt: skip
        self._writes = Github(
            **common, seconds_between_writes=settings.mutation_interval or None,
            # Rate-limit refusals (403 + Retry-After) and failed connects only: a 5xx or a
            # lost answer may mean the write happened (see `_write`).
            retry=GithubRetry(total=settings.retries, read=0, status_forcelist=[], **waits),
        )  # fmt: skip
        self._viewer: str | None = None
        self._cache = cache
        # The cache is shared by every token of this API: the key holds no token, and an
        # answer is only ever reused after GitHub says 304 for this token, or for good when
        # it is final (and public data of the repository).
        self._prefix = f"github {self.api_url} "

    def _get(self, url: str, params: dict | None = None, doing: str = "",
             final: Callable[[Any], bool] | None = None) -> Any:  # fmt: skip
        """A GET through the cache: If-None-Match with the stored ETag, 304 → the stored
        answer; a final answer is not asked for again."""
        params = params or {}
        key = self._prefix + url + ("?" + urlencode(sorted(params.items())) if params else "")
        cached = self._cache.get_value(key, Cached) if self._cache else None
        if cached is not None and cached.final:
            return scrub_data(json.loads(cached.body))
        headers = {"If-None-Match": cached.etag} if cached and cached.etag else None

        def call() -> tuple[int, dict, str]:
            return self._r.requestJson("GET", url, parameters=params, headers=headers)

        status, answer_headers, body = self._read(doing or f"GET {url}", call)
        if status == 304 and cached is not None:
            return scrub_data(json.loads(cached.body))
        body = redact(body) if body else body
        if status >= 400:
            try:
                data = json.loads(body) if body else None
            except ValueError:
                data = body
            raise self._error(self._r.createException(status, answer_headers, data),
                              doing or f"GET {url}")  # fmt: skip
        data = json.loads(body) if body else None
        if self._cache is not None:
            etag = answer_headers.get("etag") or answer_headers.get("ETag")
            self._cache.put_value(key, Cached(etag=etag, body=body,
                                              final=bool(final and final(data))))  # fmt: skip
        return scrub_data(data)

    def _pages(self, url: str, params: dict | None = None, doing: str = "",
               items: str | None = None, limit: int | None = None) -> list[Any]:  # fmt: skip
        """Every page of a list (`items`: the key holding it, for wrapped lists), each
        page revalidated on its own."""
        found: list[Any] = []
        page = 1
        while True:
            data = self._get(url, {**(params or {}), "per_page": PAGE, "page": page}, doing)
            chunk = (data or {}).get(items, []) if items else (data or [])
            found += chunk
            if len(chunk) < PAGE or (limit is not None and len(found) >= limit):
                return found[:limit] if limit is not None else found
            page += 1

    @property
    def _r(self) -> Requester:
        return self._reads.requester

    @property
    def _w(self) -> Requester:
        return self._writes.requester

    # -- errors ---------------------------------------------------------------------------
    def _error(self, exc: BaseException, doing: str) -> GitHubError:
        if isinstance(exc, GitHubError):
            return exc
        if isinstance(exc, GithubException):
            data = exc.data if isinstance(exc.data, dict) else {}
            message = str(data.get("message") or "")
            said = [str(e.get("message") if isinstance(e, dict) else e)
                    for e in (data.get("errors") or [])[:2]
                    if not isinstance(e, dict) or e.get("message")]  # fmt: skip
            if said:  # "Validation Failed" alone hides why: GitHub's reasons are in errors[]
                message = ": ".join(filter(None, [message, "; ".join(said)]))
            status = exc.status
            rate_limited = status in (403, 429) and Requester.isRateLimitError(message)
            retry_after = (exc.headers or {}).get("retry-after") or (exc.headers or {}).get(
                "Retry-After"
            )
            text = f"GitHub answered {status} to {doing}: {message or 'no message'}"
            if status == 401:
                text = f"GitHub refused the token ({status} {message or 'Bad credentials'})"
            wait = float(retry_after) if str(retry_after or "").isdigit() else None
            return GitHubError(redact(" ".join(text.split())), status=status,
                               transient=status >= 500 or rate_limited, retry_after=wait)
        if isinstance(exc, requests.exceptions.RetryError):  # GithubRetry gave up on statuses
            answered = re.search(r"too many (\d{3}) error", str(exc))
            status = int(answered.group(1)) if answered else None
            if status in (403, 429):
                text = (f"GitHub rate-limited {doing} (answered {status}, a secondary rate "
                        "limit) until scout stopped retrying: wait a few minutes, then run it "
                        "again")  # fmt: skip
            elif status:
                text = f"GitHub answered {status} to {doing}, again after retrying"
            else:
                text = f"GitHub kept failing {doing}, again after retrying"
            return GitHubError(redact(text), status=status, transient=True)
        if isinstance(exc, _NETWORK_ERRORS):
            kind = "timed out" if "timeout" in type(exc).__name__.lower() or "timed out" in str(
                exc
            ) else "connection failed"
            return GitHubError(redact(f"cannot reach GitHub at {self.api_url} ({doing}): {kind}"),
                               transient=True)  # fmt: skip
        return GitHubError(redact(f"{doing}: {type(exc).__name__}: {exc}"))

    def _read(self, doing: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except Exception as exc:
            raise self._error(exc, doing) from None

    def _write(self, doing: str, call: Callable[[], T],
               applied: Callable[[], T | None] | None = None) -> T:  # fmt: skip
        """A write, tried again on transient failures; when it may have happened, `applied`
        looks for its result first (a create must not happen twice)."""
        wait = self._settings.backoff
        for attempt in range(self._settings.retries + 1):
            try:
                return call()
            except Exception as exc:
                error = self._error(exc, doing)
                if not error.transient or attempt == self._settings.retries:
                    raise error from None
            if applied is not None:
                found = applied()
                if found is not None:
                    return found
            time.sleep(error.retry_after if error.retry_after is not None else wait)
            wait *= 2
        raise AssertionError("unreachable")

    def _graphql(self, requester: Requester, query: str, variables: dict,
                 doing: str) -> dict:  # fmt: skip
        _, data = requester.graphql_query(query, variables)
        if data.get("errors"):
            raise GitHubError(redact(f"GitHub GraphQL refused {doing}: "
                                     + "; ".join(e.get("message", "") for e in data["errors"])))
        return scrub_data(data["data"])

    # -- who and how much ----------------------------------------------------------------------
    def viewer(self) -> str:
        """From GraphQL, which answers GitHub App installation tokens too (REST `/user`
        refuses them); asked once per client."""
        if self._viewer is None:
            data = self._read("asking GitHub who the token is", lambda: self._graphql(
                self._r, _VIEWER, {}, "the token's identity"))  # fmt: skip
            self._viewer = str(data["viewer"]["login"])
        return self._viewer

    def scopes(self) -> list[str] | None:
        self.viewer()  # an answer carries X-OAuth-Scopes
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
    def _comment(self, data: dict) -> Comment:
        author = str((data.get("user") or {}).get("login", ""))
        return Comment(id=int(data["id"]), author=author, body=data.get("body") or "",
                       created_at=_time(data["created_at"]),
                       updated_at=_time(data["updated_at"]), url=data.get("html_url", ""))

    def comments(self, repo: str, issue: int, since: datetime | None) -> list[Comment]:
        params = {"since": since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")} if since else {}
        url = f"/repos/{repo}/issues/{issue}/comments"
        doing = f"listing the comments of {repo}#{issue}"
        return [self._comment(data) for data in self._pages(url, params, doing)]

    def create_comment(self, repo: str, issue: int, body: str,
                       applied: Callable[[], Comment | None] | None = None) -> Comment:  # fmt: skip
        url = f"/repos/{repo}/issues/{issue}/comments"
        def post() -> Comment:
            return self._comment(self._w.requestJsonAndCheck("POST", url, input={"body": body})[1])

        return self._write(f"commenting on {repo}#{issue}", post, applied)

    def edit_comment(self, repo: str, comment_id: int, body: str) -> Comment:
        url = f"/repos/{repo}/issues/comments/{comment_id}"
        return self._write(  # the same edit twice is the same edit
            f"editing comment {comment_id} on {repo}",
            lambda: self._comment(self._w.requestJsonAndCheck("PATCH", url,
                                                              input={"body": body})[1]),
        )  # fmt: skip

    # -- the board ------------------------------------------------------------------------------
    def board(self, owner: str, number: int, status_field: str) -> Board:
        variables = {"owner": owner, "number": number, "status": status_field}
        for kind, path in (("organization", "orgs"), ("user", "users")):
            try:
                _, data = self._r.graphql_query(_BOARD % kind, variables)
                data = scrub_data(data)
            except GithubException as exc:
                if exc.status in (400, 404) and "Could not resolve" in str(exc.data):
                    continue
                raise self._error(exc, f"looking up board {owner}/{number}") from None
            except _NETWORK_ERRORS as exc:
                raise self._error(exc, f"looking up board {owner}/{number}") from None
            project = ((data.get("data") or {}).get(kind) or {}).get("projectV2")
            if not project:
                continue
            field = project.get("field") or {}
            options = {o["name"]: o["id"] for o in field.get("options", [])}
            return Board(id=project["id"], owner=owner, owner_type=path, number=number,
                         title=project.get("title", ""), status_field_id=field.get("id"),
                         status_options=options)
        raise GitHubError(f"no project {number} of {owner} on {self.api_url} (or the token "
                          "cannot see it: it needs the read:project or project scope)")  # fmt: skip

    def board_items(self, board: Board, status_field: str) -> list[BoardItem]:
        items: list[BoardItem] = []
        after = None
        while True:
            variables = {"id": board.id, "after": after, "status": status_field}
            data = self._read(f"listing the items of board {board.owner}/{board.number}",
                              lambda v=variables: self._graphql(self._r, _ITEMS, v,
                                                                "the board items"))  # fmt: skip
            page = (data.get("node") or {}).get("items") or {}
            for node in page.get("nodes") or []:
                if not node:
                    continue
                content = node.get("content") or {}
                status = (node.get("fieldValueByName") or {}).get("name")
                database_id = node.get("fullDatabaseId")
                items.append(BoardItem(id=node["id"],
                                       database_id=int(database_id) if database_id else None,
                                       title=content.get("title", ""), body=content.get("body", ""),
                                       status=status, creator=_login(node.get("creator")),
                                       content_type=content.get("__typename", "")))  # fmt: skip
            info = page.get("pageInfo") or {}
            if not info.get("hasNextPage"):
                return items
            after = info.get("endCursor")

    def add_draft(self, board: Board, title: str, body: str,
                  applied: Callable[[], BoardItem | None] | None = None) -> BoardItem:  # fmt: skip
        def add() -> BoardItem:
            data = self._graphql(self._w, _ADD_DRAFT, {"project": board.id, "title": title,
                                                       "body": body}, "adding a draft")  # fmt: skip
            item = data["addProjectV2DraftIssue"]["projectItem"]
            database_id = item.get("fullDatabaseId")
            return BoardItem(id=item["id"], database_id=int(database_id) if database_id else None,
                             title=title, body=body, status=None,
                             creator=_login(item.get("creator")))  # fmt: skip

        return self._write(f"adding a draft to board {board.owner}/{board.number}", add, applied)

    def set_status(self, board: Board, item_id: str, option_id: str) -> None:
        if board.status_field_id is None:
            raise GitHubError(f"board {board.owner}/{board.number} has no status field")
        variables = {"project": board.id, "item": item_id, "field": board.status_field_id,
                     "option": option_id}  # fmt: skip
        self._write(  # the same status twice is the same status
            "setting a board item's status",
            lambda: self._graphql(self._w, _SET_STATUS, variables, "setting a status"),
        )

    # -- what the GitHub collectors read -------------------------------------------------------
    def workflow_runs(self, repo: str, workflow: str, branch: str, event: str,
                      limit: int) -> list[WorkflowRun]:  # fmt: skip
        name = workflow.rsplit("/", 1)[-1]
        url = f"/repos/{repo}/actions/workflows/{name}/runs"

        data = self._get(url, {"branch": branch, "event": event, "per_page": min(PAGE, limit)},
                         f"listing the runs of {name}")  # fmt: skip
        return [
            WorkflowRun(id=int(r["id"]), number=int(r.get("run_number") or 0),
                        status=r.get("status") or "", conclusion=r.get("conclusion"),
                        created_at=_time(r["created_at"]), head_sha=r.get("head_sha", ""),
                        url=r.get("html_url", ""))
            for r in (data or {}).get("workflow_runs", [])
        ]  # fmt: skip

    def run_jobs(self, repo: str, run_id: int) -> list[Job]:
        url = f"/repos/{repo}/actions/runs/{run_id}/jobs"
        jobs = self._pages(url, None, f"listing the jobs of run {run_id}", items="jobs")
        return [Job(id=int(j["id"]), name=j.get("name", ""), conclusion=j.get("conclusion"),
                    url=j.get("html_url", "")) for j in jobs]  # fmt: skip

    def job_log(self, repo: str, job_id: int, into: BinaryIO) -> int:
        """Stream a job's log into a file, redacted on the way (a token split across two
        chunks too); the redirect target gets no token."""
        doing = f"downloading the log of job {job_id}"
        status, headers, _ = self._read(doing, lambda: self._r.requestJson(
            "GET", f"/repos/{repo}/actions/jobs/{job_id}/logs"))  # fmt: skip
        location = headers.get("location") or headers.get("Location")
        if status != 302 or not location:
            raise GitHubError(f"{doing}: GitHub answered {status}", status=status)
        writer = RedactingWriter(into)
        try:
            with requests.get(location, stream=True, timeout=self._settings.timeout) as response:
                response.raise_for_status()
                for chunk in response.iter_content(1024 * 1024):
                    writer.write(chunk)
        except _NETWORK_ERRORS as exc:
            raise self._error(exc, doing) from None
        writer.close()
        return writer.written

    def _state(self, repo: str, data: dict) -> IssueState:
        pull = data.get("pull_request") or {}
        merged_at = data.get("merged_at") or pull.get("merged_at")
        return IssueState(repo=repo, number=int(data["number"]), title=data.get("title", ""),
                          state=data.get("state", ""), is_pull=bool(pull) or "merged" in data,
                          merged=bool(merged_at), merged_at=_maybe_time(merged_at),
                          created_at=_time(data["created_at"]),
                          updated_at=_time(data["updated_at"]),
                          closed_at=_maybe_time(data.get("closed_at")),
                          author=str((data.get("user") or {}).get("login", "")),
                          url=data.get("html_url", ""))  # fmt: skip

    def issue_state(self, repo: str, number: int) -> IssueState:
        """A merged pull request cannot change: kept for good."""
        def merged(data: Any) -> bool:
            return bool((data.get("pull_request") or {}).get("merged_at"))

        data = self._get(f"/repos/{repo}/issues/{number}", None, f"looking up {repo}#{number}",
                         final=merged)
        return self._state(repo, data)

    def reviews(self, repo: str, number: int) -> int:
        """How many reviews a pull request has had."""
        return len(self._pages(f"/repos/{repo}/pulls/{number}/reviews", None,
                               f"listing the reviews of {repo}#{number}"))  # fmt: skip

    def commit_author(self, repo: str, sha: str) -> str | None:
        """The GitHub login of a commit's author (None when GitHub does not know one):
        a commit never changes, so it is kept for good."""
        missing = f"{self._prefix}unknown commit {repo} {sha} {datetime.now(UTC).date()}"
        if self._cache is not None and self._cache.get_value(missing, Cached) is not None:
            return None  # asked today already: not pushed, or not GitHub's
        try:
            data = self._get(f"/repos/{repo}/commits/{sha}", None,
                             f"looking up commit {sha[:12]}", final=lambda d: True)  # fmt: skip
        except GitHubError as exc:
            if exc.status in (404, 422) and self._cache is not None:
                self._cache.put_value(missing, Cached(body="null", final=True))
            raise
        return ((data or {}).get("author") or {}).get("login")

    def search_issues(self, query: str, limit: int) -> list[IssueState]:
        items = self._pages("/search/issues", {"q": query}, f"searching {query!r}",
                            items="items", limit=limit)  # fmt: skip
        return [self._state(str(d.get("repository_url", "")).split("/repos/", 1)[-1], d)
                for d in items]  # fmt: skip
