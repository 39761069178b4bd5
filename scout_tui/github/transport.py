"""The one retry layer between scout and GitHub: every request is sent here (`_retrying`),
which sees what GitHub answered: 5xx and GraphQL's transient errors are retried with
backoff, rate limits (403/429 secondary limits, `x-ratelimit-remaining: 0`, GraphQL
`RATE_LIMITED`) are waited out — never longer than `max_rate_limit_wait` — and a connection
that cannot be made marks GitHub unreachable for the rest of the run. A write that may have
happened (a 5xx, a lost answer) is retried only when doing it twice is harmless, or after
`applied` looked for its result (a create must not happen twice). GETs go through the cache
with their ETags.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlencode

import requests
import urllib3
from github import Auth, Github
from github.Requester import Requester
from pydantic import BaseModel

from scout_tui import __version__
from scout_tui.config.models import GithubConfig
from scout_tui.errors import redact, register_secret, scrub_data
from scout_tui.github.api import (
    ArchivedItem,
    GitHubError,
    RateLimited,
    Unreachable,
)
from scout_tui.store.cache import Cache

# PyGithub logs warnings; with no handler configured Python prints them on stderr (and over
# the console's screen). What matters reaches the user as one error line.
logging.getLogger("github").addHandler(logging.NullHandler())
logging.getLogger("github").propagate = False

T = TypeVar("T")
PAGE = 100
NETWORK_ERRORS = (
    requests.exceptions.RequestException,
    urllib3.exceptions.HTTPError,
    http.client.HTTPException,
    ConnectionError,
    TimeoutError,
)

ARCHIVED = "The item is archived"  # GitHub's refusal of any change to an archived item
# GitHub's transient GraphQL failure ("… This may be the result of a timeout, or it could be
# a GitHub bug"): worth another try, as a 5xx is.
_TRANSIENT_GRAPHQL = "something went wrong while executing your query"


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


def lacked(what: str) -> GitHubError:
    """An answer that is not what was asked: a null node, a missing id, a cursor that
    does not move on."""
    return GitHubError(redact(f"GitHub's answer lacked {what}"))


def need(data: Any, key: str, what: str) -> Any:
    value = data.get(key) if isinstance(data, dict) else None
    if value is None or value == "":
        raise lacked(what)
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


def timed_out(exc: BaseException) -> bool:
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


class Transport:
    """Two PyGithub clients sharing the token (reads; writes, paced), and the retry layer
    every call of `GitHubClient` goes through."""

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
        self._answered = False  # whether GitHub has answered anything this run
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
        except NETWORK_ERRORS as exc:
            # Never connected, or connected and never answered before anything of this run
            # was: GitHub is unreachable, and every later call says so at once instead of
            # waiting out its own timeout.
            silent = timed_out(exc) and not self._answered
            if _never_connected(exc) or silent:
                how = (
                    f"no answer in {self._settings.timeout:g} s" if silent else "connection failed"
                )
                unreachable = Unreachable(
                    redact(f"cannot reach GitHub at {self.api_url} ({doing}): {how}"),
                    redact(f"{self.api_url}: {how}"),
                )
                self._blocked["*"] = unreachable
                raise unreachable from None
            kind = "timed out" if timed_out(exc) else "connection dropped"
            error = GitHubError(redact(f"GitHub did not answer {doing}: {kind}"), transient=True)
            raise _Again(error, unsure=True) from None
        self._answered = True
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
        self._answered = False

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
            raise lacked(f"its data ({doing})")
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
