"""The real GitHub: PyGithub for REST, its requester's GraphQL calls for Projects v2 (which
PyGithub has no classes for).

Two PyGithub clients share the token: one for reads, one for writes, paced by PyGithub
(`seconds_between_writes`: GitHub asks for a second between mutations). Neither retries:
PyGithub's `GithubRetry` and urllib3's retries are off (`retry=None`), so every request is
sent by the one retry layer here (`_retrying`), which sees what GitHub answered: 5xx and
GraphQL's transient errors are retried with backoff, rate limits (403/429 secondary limits,
`x-ratelimit-remaining: 0`, GraphQL `RATE_LIMITED`) are waited out — never longer than
`max_rate_limit_wait` — and a connection that cannot be made marks GitHub unreachable for
the rest of the run. A write that may have happened (a 5xx, a lost answer) is retried only
when doing it twice is harmless, or after `applied` looked for its result (a create must
not happen twice).

Every answer is redacted before it is cached and scrubbed (`errors.scrub_data`) before it
is used: an issue comment or a log holding a token, or a control character, stops here.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, TypeVar
from urllib.parse import urlencode

import requests
import urllib3
from github import Auth, Github
from github.Requester import Requester
from pydantic import BaseModel

from scout_tui import __version__
from scout_tui.config.models import GithubConfig
from scout_tui.errors import RedactingWriter, redact, register_secret, scrub_data
from scout_tui.github.api import (
    ArchivedItem,
    Board,
    BoardItem,
    Comment,
    GitHubError,
    IssueState,
    Job,
    RateLimit,
    RateLimited,
    WorkflowRun,
)
from scout_tui.store.cache import Cache

# PyGithub logs warnings; with no handler configured Python prints them on stderr (and over
# the console's screen). What matters reaches the user as one error line.
logging.getLogger("github").addHandler(logging.NullHandler())
logging.getLogger("github").propagate = False

T = TypeVar("T")
PAGE = 100
_NETWORK_ERRORS = (
    requests.exceptions.RequestException,
    urllib3.exceptions.HTTPError,
    http.client.HTTPException,
    ConnectionError,
    TimeoutError,
)

# GitHub's transient GraphQL failure ("… This may be the result of a timeout, or it could be
# a GitHub bug"): worth another try, as a 5xx is.
_TRANSIENT_GRAPHQL = "something went wrong while executing your query"

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
ARCHIVED = "The item is archived"  # GitHub's refusal of any change to an archived item
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


class Cached(BaseModel):
    """A GET's last answer: revalidated with its ETag (a 304 costs no rate limit), or kept
    for good when it cannot change any more (a merged pull request, a finished run's jobs)."""

    etag: str | None = None
    body: str
    final: bool = False


class _Again(Exception):  # a signal inside the retry layer, never raised out of it
    """An attempt worth another: after `wait` seconds when GitHub rate-limited it, else after
    the backoff. `unsure`: the request reached GitHub and may have been carried out."""

    def __init__(
        self, error: GitHubError, *, wait: float | None = None, unsure: bool = False
    ) -> None:
        super().__init__(str(error))
        self.error, self.wait, self.unsure = error, wait, unsure


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: dict[str, str]  # names in lower case, as PyGithub gives them
    text: str
    data: Any


def _lacked(what: str) -> GitHubError:
    """An answer that is not what was asked: a null node, a missing id, a cursor that
    does not move on."""
    return GitHubError(redact(f"GitHub's answer lacked {what}"))


def _need(data: Any, key: str, what: str) -> Any:
    value = data.get(key) if isinstance(data, dict) else None
    if value is None or value == "":
        raise _lacked(what)
    return value


def _never_connected(exc: BaseException) -> bool:
    """Refused, no such host, connect timeout: the request never reached GitHub (a dropped
    connection or a read timeout did)."""
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    reason = exc.args[0] if exc.args else None
    if isinstance(reason, urllib3.exceptions.MaxRetryError):
        reason = reason.reason
    # NewConnectionError (refused, DNS) is a ConnectTimeoutError in urllib3
    return isinstance(reason, urllib3.exceptions.ConnectTimeoutError)


def _timed_out(exc: BaseException) -> bool:
    return "timeout" in type(exc).__name__.lower() or "timed out" in str(exc)


def _message(data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    message = str(data.get("message") or "")
    if isinstance(data.get("errors"), list):  # "Validation Failed" alone hides GitHub's why
        said = "; ".join(
            str(e.get("message")) if isinstance(e, dict) else str(e)
            for e in data["errors"][:2]
            if not isinstance(e, dict) or e.get("message")
        )
        message = ": ".join(filter(None, [message, said]))
    return message


class GitHubClient:
    def __init__(
        self,
        api_url: str,
        token: str,
        settings: GithubConfig,
        cache: Cache | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        register_secret(token)
        self.api_url = api_url.rstrip("/")
        self._settings = settings
        self._sleep, self._clock = sleep, clock
        common: dict[str, Any] = dict(
            auth=Auth.Token(token),
            base_url=self.api_url,
            timeout=max(1, round(settings.timeout)),
            user_agent=f"scout-tui/{__version__}",
            per_page=PAGE,
            seconds_between_requests=None,
            # No retries below `_retrying`: `None` is PyGithub's "no GithubRetry", which
            # leaves requests' HTTPAdapter at its default, urllib3's Retry(0, read=False).
            retry=None,
        )
        self._reads = Github(**common, seconds_between_writes=None)
        self._writes = Github(**common, seconds_between_writes=settings.mutation_interval or None)
        self._viewer: str | None = None
        # Why a request is not sent at all: GitHub unreachable ("*", for the whole run), or
        # a resource ("core", "graphql", "search") rate-limited until a time.
        self._blocked: dict[str, GitHubError] = {}
        self._cache = cache
        # The cache is shared by every token of this API: the key holds no token, and an
        # answer is only ever reused after GitHub says 304 for this token, or for good when
        # it is final (and public data of the repository).
        self._prefix = f"github {self.api_url} "

    # -- the one retry layer --------------------------------------------------------------
    def _once(
        self,
        requester: Requester,
        verb: str,
        url: str,
        doing: str,
        *,
        params: dict | None = None,
        body: Any = None,
        headers: dict | None = None,
    ) -> _Answer:
        """One request: the answer, or `_Again` when another try may help, or the error."""
        try:
            status, answer_headers, text = requester.requestJson(
                verb, url, parameters=params, headers=headers, input=body
            )
        except _NETWORK_ERRORS as exc:
            if _never_connected(exc):
                error = GitHubError(
                    redact(f"cannot reach GitHub at {self.api_url} ({doing}): connection failed"),
                    transient=True,
                )
                self._blocked["*"] = error
                raise error from None
            kind = "timed out" if _timed_out(exc) else "connection dropped"
            error = GitHubError(redact(f"GitHub did not answer {doing}: {kind}"), transient=True)
            raise _Again(error, unsure=True) from None
        text = redact(text) if text else text
        try:
            data = json.loads(text) if text else None
        except ValueError:
            data = text
        if status < 400:
            return _Answer(status, answer_headers, text, data)
        message = _message(data)
        if status == 401:
            refused = f"GitHub refused the token ({status} {message or 'Bad credentials'})"
            raise GitHubError(redact(refused), status=status)
        error = GitHubError(
            redact(
                " ".join(f"GitHub answered {status} to {doing}: {message or 'no message'}".split())
            ),
            status=status,
            transient=status >= 500,
        )
        if status == 429 or (
            status == 403
            and (
                "retry-after" in answer_headers
                or Requester.isRateLimitError(message)
                or answer_headers.get("x-ratelimit-remaining") == "0"
            )
        ):
            error.transient = True
            raise _Again(error, wait=self._rate_wait(answer_headers))
        if status >= 500:
            raise _Again(error, unsure=True)
        raise error

    def _rate_wait(self, headers: dict[str, str]) -> float:
        """GitHub's documented order: `Retry-After`; else, when none are left, until
        `x-ratelimit-reset`; else a secondary limit's minute (`secondary_rate_wait`)."""
        after = str(headers.get("retry-after") or "").strip()
        if after.isdigit():
            return float(after)
        reset = str(headers.get("x-ratelimit-reset") or "").strip()
        if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
            return max(1.0, float(reset) - self._clock())
        return self._settings.secondary_rate_wait

    def _retrying(
        self,
        doing: str,
        resource: str,
        once: Callable[[], T],
        *,
        safe: bool = True,
        applied: Callable[[], T | None] | None = None,
    ) -> T:
        """`once` until it answers: 5xx and lost answers after the backoff (a write that may
        have happened only when `safe`, or when `applied` finds no result of it), rate
        limits after GitHub's wait — never more than `max_rate_limit_wait` in all."""
        backoff, waited = self._settings.backoff, 0.0
        for attempt in range(self._settings.retries + 1):
            self._fail_fast(resource)
            try:
                return once()
            except _Again as again:
                error, wait, unsure = again.error, again.wait, again.unsure
            if unsure and not safe:
                found = applied() if applied is not None else None
                if found is not None:
                    return found
                if applied is None:
                    raise error
            if wait is not None and waited + wait > self._settings.max_rate_limit_wait:
                until = datetime.fromtimestamp(self._clock() + wait, UTC)
                self._blocked[resource] = limited = RateLimited(
                    f"GitHub rate-limited {doing} until {until:%H:%M} UTC, longer than "
                    f"[github] max_rate_limit_wait ({self._settings.max_rate_limit_wait:g} s)",
                    until,
                )
                raise limited
            if attempt == self._settings.retries:
                if attempt:
                    raise GitHubError(
                        f"{str(error).rstrip('.')}, again after retrying",
                        status=error.status,
                        transient=True,
                    )
                raise error
            if wait is None:
                wait, backoff = backoff, backoff * 2
            else:
                waited += wait
            self._sleep(wait)
        raise AssertionError("unreachable")

    def new_run(self) -> None:
        """A long-lived client (the console's) asks again when a new run starts."""
        self._blocked.clear()

    def _fail_fast(self, resource: str) -> None:
        """GitHub unreachable, or this resource still rate-limited: said again, not asked."""
        blocked = self._blocked.get("*") or self._blocked.get(resource)
        if isinstance(blocked, RateLimited) and blocked.until.timestamp() <= self._clock():
            self._blocked.pop(resource, None)
        elif blocked is not None:
            raise blocked

    def _request(
        self,
        requester: Requester,
        verb: str,
        url: str,
        doing: str,
        *,
        params: dict | None = None,
        body: Any = None,
        headers: dict | None = None,
        safe: bool = True,
    ) -> _Answer:
        resource = "search" if url.startswith("/search/") else "core"
        return self._retrying(
            doing,
            resource,
            lambda: self._once(
                requester, verb, url, doing, params=params, body=body, headers=headers
            ),
            safe=safe,
        )

    def _graphql_once(self, requester: Requester, query: str, variables: dict, doing: str) -> dict:
        answer = self._once(
            requester,
            "POST",
            requester.graphql_url,
            doing,
            body={"query": query, "variables": variables},
        )
        data = answer.data if isinstance(answer.data, dict) else {}
        errors = [
            e if isinstance(e, dict) else {"message": str(e)} for e in data.get("errors") or []
        ]
        if errors:
            said = "; ".join(str(e.get("message", "")) for e in errors)
            if any(str(e.get("message", "")).startswith(ARCHIVED) for e in errors):
                raise ArchivedItem(redact(f"GitHub refused {doing}: {said}"))
            not_found = all(e.get("type") == "NOT_FOUND" for e in errors)
            error = GitHubError(
                redact(f"GitHub GraphQL refused {doing}: {said}"), status=404 if not_found else None
            )
            if any(e.get("type") == "RATE_LIMITED" for e in errors):
                error.transient = True
                raise _Again(error, wait=self._rate_wait(answer.headers))
            if any(
                str(e.get("message", "")).lower().startswith(_TRANSIENT_GRAPHQL) for e in errors
            ):
                error.transient = True
                raise _Again(error, unsure=True)
            raise error
        if not isinstance(data.get("data"), dict):
            raise _lacked(f"its data ({doing})")
        return scrub_data(data["data"])

    def _graphql(
        self, requester: Requester, query: str, variables: dict, doing: str, *, safe: bool = True
    ) -> dict:
        return self._retrying(
            doing,
            "graphql",
            lambda: self._graphql_once(requester, query, variables, doing),
            safe=safe,
        )

    # -- reads through the cache ------------------------------------------------------------
    def _get(
        self,
        url: str,
        params: dict | None = None,
        doing: str = "",
        final: Callable[[Any], bool] | None = None,
    ) -> Any:
        """A GET through the cache: If-None-Match with the stored ETag, 304 → the stored
        answer; a final answer is not asked for again."""
        params = params or {}
        key = self._prefix + url + ("?" + urlencode(sorted(params.items())) if params else "")
        cached = self._cache.get_value(key, Cached) if self._cache else None
        if cached is not None and cached.final:
            return scrub_data(json.loads(cached.body))
        headers = {"If-None-Match": cached.etag} if cached and cached.etag else None
        answer = self._request(
            self._r, "GET", url, doing or f"GET {url}", params=params, headers=headers
        )
        if answer.status == 304 and cached is not None:
            return scrub_data(json.loads(cached.body))
        if self._cache is not None and answer.text:
            keep = Cached(
                etag=answer.headers.get("etag"),
                body=answer.text,
                final=bool(final and final(answer.data)),
            )
            self._cache.put_value(key, keep)
        return scrub_data(answer.data)

    def _pages(
        self,
        url: str,
        params: dict | None = None,
        doing: str = "",
        items: str | None = None,
        limit: int | None = None,
    ) -> list[Any]:
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

    # -- who and how much ----------------------------------------------------------------------
    def viewer(self) -> str:
        """From GraphQL, which answers GitHub App installation tokens too (REST `/user`
        refuses them); asked once per client."""
        if self._viewer is None:
            data = self._graphql(self._r, _VIEWER, {}, "asking GitHub who the token is")
            self._viewer = str(_need(data.get("viewer"), "login", "the token's login (viewer)"))
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
            id=int(_need(data, "id", "the comment's id")),
            author=author,
            body=data.get("body") or "",
            created_at=_time(_need(data, "created_at", "the comment's created_at")),
            updated_at=_time(_need(data, "updated_at", "the comment's updated_at")),
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
                str(_need(o, "name", "a status option's name")): str(
                    _need(o, "id", "a status option's id")
                )
                for o in field.get("options") or []
            }
            return Board(
                id=str(_need(project, "id", f"board {owner}/{number}'s id")),
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
            page = _need(
                _need(data, "node", f"{name} (node {board.id} is null)"),
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
                        id=str(_need(node, "id", f"an item id on {name}")),
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
                raise _lacked(
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
            item = _need(data.get("addProjectV2DraftIssue"), "projectItem", "the new draft")
            database_id = item.get("fullDatabaseId")
            return BoardItem(
                id=str(_need(item, "id", "the new draft's id")),
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
                id=int(_need(r, "id", "a workflow run's id")),
                number=int(r.get("run_number") or 0),
                status=r.get("status") or "",
                conclusion=r.get("conclusion"),
                created_at=_time(_need(r, "created_at", "a run's created_at")),
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
                id=int(_need(j, "id", "a job's id")),
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
        except _NETWORK_ERRORS as exc:  # the log's own host, not GitHub's API
            kind = "timed out" if _timed_out(exc) else f"failed ({type(exc).__name__})"
            raise GitHubError(redact(f"{doing}: the download {kind}"), transient=True) from None
        writer.close()
        return writer.written

    def _state(self, repo: str, data: dict) -> IssueState:
        pull = data.get("pull_request") or {}
        merged_at = data.get("merged_at") or pull.get("merged_at")
        return IssueState(
            repo=repo,
            number=int(_need(data, "number", "an issue's number")),
            title=data.get("title", ""),
            state=data.get("state", ""),
            is_pull=bool(pull) or "merged" in data,
            merged=bool(merged_at),
            merged_at=_maybe_time(merged_at),
            created_at=_time(_need(data, "created_at", "an issue's created_at")),
            updated_at=_time(_need(data, "updated_at", "an issue's updated_at")),
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

    def search_issues(self, query: str, limit: int) -> list[IssueState]:
        items = self._pages(
            "/search/issues", {"q": query}, f"searching {query!r}", items="items", limit=limit
        )
        return [
            self._state(str(d.get("repository_url", "")).split("/repos/", 1)[-1], d) for d in items
        ]
