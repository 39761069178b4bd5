"""The local GitHub-compatible server: a real HTTP server on 127.0.0.1.

GitHub's JSON shapes and status codes, `Link` pagination, ETags and 304s (a 304 costs no
rate limit, as on GitHub), token checks with `X-OAuth-Scopes`, rate-limit headers, and
faults on demand for the tests: fail the Nth request or every request matching a text
with 500, 502, each rate-limit answer GitHub gives (secondary limits with and without
Retry-After, a primary limit as a 403 or a 429, GraphQL's `RATE_LIMITED`), GraphQL's
transient "Something went wrong", a timeout, a dropped connection or a hang — optionally
*after* applying it (the change happened, the response is lost), the case a crash-safe
publish must survive — or answer it wrongly (a page cursor that repeats, a null node).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from scout_tui.sandbox.github import rest
from scout_tui.sandbox.github.graphql_api import BoardTiming, GraphQLApi
from scout_tui.sandbox.github.responses import Response
from scout_tui.sandbox.github.world import World

# KIND → what the request gets. `=S` sets the seconds a rate limit names (default 1).
FAULT_KINDS = {
    "500": "500 Server Error",
    "502": "502 Bad Gateway",
    "ratelimit": "403 secondary rate limit with Retry-After: S",
    "secondary": "403 secondary rate limit with no Retry-After",
    "primary": "403 primary rate limit: x-ratelimit-remaining 0, x-ratelimit-reset in S s",
    "429": "429 with x-ratelimit-remaining 0, x-ratelimit-reset in S s",
    "graphql-ratelimit": "200 with a RATE_LIMITED error, x-ratelimit-reset in S s",
    "graphql-timeout": '200 with GitHub\'s transient "Something went wrong … timeout"',
    "timeout": "no answer until the client gives up",
    "drop": "the connection closed, no answer",
    "hang": "no answer until the server stops",
    "repeat-cursor": "the answer, with every pageInfo's endCursor the one asked with",
    "null-node": "the GraphQL answer, with its top-level fields null",
}
# Kinds that answer (wrongly) rather than fail: the request is carried out.
_REWRITES = ("repeat-cursor", "null-node")
# Kinds that may follow the change (`-after`): the others refuse before doing anything.
_AFTER = ("500", "502", "graphql-timeout", "timeout", "drop", "hang")
_SECONDS = ("ratelimit", "primary", "429", "graphql-ratelimit")
TIMEOUT_FAULT_SECONDS = 30.0
PRIMARY_LIMIT = "API rate limit exceeded for user ID 1."
SECONDARY_LIMIT = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)
GRAPHQL_TIMEOUT = (
    "Something went wrong while executing your query. This may be the result of "
    "a timeout, or it could be a GitHub bug. Please include `0A1B:2C3D:4E5F` "
    "when reporting this issue."
)


class FaultError(ValueError):
    pass


@dataclass
class Fault:
    """`N:KIND` (the Nth request), or `TEXT:KIND` (every request whose description —
    `METHOD /path` plus, for GraphQL, the operation's top-level fields — contains TEXT).
    A rate limit's KIND may carry `=S` (the seconds it names); KIND may end in `-after`
    (applied, then failed) and `*K` (only the first K matches)."""

    kind: str
    nth: int | None = None
    text: str | None = None
    after: bool = False
    remaining: int | None = None
    seconds: int = 1

    @classmethod
    def parse(cls, spec: str) -> Fault:
        target, sep, kind = spec.rpartition(":")
        if not sep or not target:
            raise FaultError(f"--fault {spec!r}: expected N:KIND or TEXT:KIND")
        remaining = None
        if "*" in kind:
            kind, _, count = kind.partition("*")
            if not count.isdigit():
                raise FaultError(f"--fault {spec!r}: *K needs a number")
            remaining = int(count)
        after = kind.endswith("-after")
        kind = kind.removesuffix("-after")
        kind, _, seconds = kind.partition("=")
        if kind not in FAULT_KINDS:
            raise FaultError(
                f"--fault {spec!r}: KIND is one of {', '.join(FAULT_KINDS)} "
                f"(optionally -after: {', '.join(_AFTER)})"
            )
        if after and kind not in _AFTER:
            raise FaultError(f"--fault {spec!r}: only {', '.join(_AFTER)} can follow the change")
        if seconds and (kind not in _SECONDS or not seconds.isdigit()):
            raise FaultError(f"--fault {spec!r}: =S (whole seconds) is for {', '.join(_SECONDS)}")
        where = {"nth": int(target)} if target.isdigit() else {"text": target}
        return cls(kind, **where, after=after, remaining=remaining, seconds=int(seconds or 1))

    def matches(self, number: int, description: str) -> bool:
        if self.remaining is not None and self.remaining <= 0:
            return False
        hit = number == self.nth if self.nth is not None else self.text in description  # type: ignore[operator]
        if hit and self.remaining is not None:
            self.remaining -= 1
        return hit


@dataclass
class Logged:
    number: int
    method: str
    path: str
    description: str
    status: int | None = None
    fault: str | None = None
    cost: bool = True  # counted against the rate limit (a 304 is not, as on GitHub)


class LocalGitHub:
    """Serve `world` on 127.0.0.1:`port` (0: a free one). Use as a context manager, or
    `serve_forever()` from the command line."""

    def __init__(
        self,
        world: World,
        *,
        port: int = 0,
        state_file: Path | None = None,
        faults: Iterable[Fault] = (),
        fault_timeout: float = TIMEOUT_FAULT_SECONDS,
        timing: BoardTiming | None = None,
        on_request: Callable[[Logged], None] | None = None,
    ) -> None:
        self.world = world
        self.state_file = state_file
        self.faults = list(faults)
        self.fault_timeout = fault_timeout
        self.timing = timing or BoardTiming()
        # Called with each request before it is answered, outside the world's lock: a test
        # holds requests there (a barrier between two clients).
        self.on_request = on_request
        self.log: list[Logged] = []
        self.lock = threading.RLock()
        self._stopping = threading.Event()
        self._count = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LocalGitHub:
        self._thread = threading.Thread(
            target=self._server.serve_forever, daemon=True, name="local-github"
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve_forever(self) -> None:
        try:
            self._server.serve_forever()
        finally:
            self.stop()

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def requests_matching(self, text: str) -> list[Logged]:
        return [entry for entry in self.log if text in entry.description]

    def saved(self) -> None:
        if self.state_file is not None:
            self.world.save(self.state_file)

    # -- one request ----------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes: without this, Nagle and the
            # client's delayed ACK hold each answer ~40 ms, as no real GitHub does
            disable_nagle_algorithm = True
            server_version = "scout-local-github/1"

            def log_message(self, format: str, *args: Any) -> None:
                return  # quiet: the request log is `server.log`

            def do_GET(self) -> None:
                server._serve(self, "GET")

            def do_POST(self) -> None:
                server._serve(self, "POST")

            def do_PATCH(self) -> None:
                server._serve(self, "PATCH")

            def do_DELETE(self) -> None:
                server._serve(self, "DELETE")

        return Handler

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = None
        description = f"{method} {parts.path}"
        if parts.path.endswith("/graphql") and isinstance(payload, dict):
            description += " " + " ".join(_graphql_fields(str(payload.get("query", ""))))
        if parts.path.startswith("/_logs/"):  # the plain-text log a 302 points at: no auth
            self._send(handler, rest.job_log(self.world, parts.path), None)
            return
        with self.lock:
            self._count += 1
            entry = Logged(self._count, method, parts.path, description)
            self.log.append(entry)
            fault = next((f for f in self.faults if f.matches(entry.number, description)), None)
        if fault is not None and not fault.after and fault.kind not in _REWRITES:
            entry.fault = fault.kind
            self._fail(handler, fault)
            return
        if self.on_request is not None:
            self.on_request(entry)
        with self.lock:
            self.timing.run_automation(self.world)
            response = self._answer(handler, method, parts.path, parse_qs(parts.query), payload)
            if method != "GET" and response.status < 400:
                self.saved()
        entry.status = response.status
        if fault is not None and fault.kind in _REWRITES:
            entry.fault = fault.kind
            _rewrite(response, fault.kind, payload)
        elif fault is not None:
            entry.fault = fault.kind + "-after"
            self._fail(handler, fault)
            return
        self._send(handler, response, handler.headers.get("If-None-Match"))
        entry.status, entry.cost = response.status, response.cost

    def _answer(
        self,
        handler: BaseHTTPRequestHandler,
        method: str,
        path: str,
        query: dict[str, list[str]],
        payload: Any,
    ) -> Response:
        token = _token(handler.headers.get("Authorization", ""))
        if token is None:
            return Response(
                401, {"message": "Requires authentication", "documentation_url": rest.DOCS}
            )
        known = self.world.login_for(token)
        if known is None:
            return Response(401, {"message": "Bad credentials", "documentation_url": rest.DOCS})
        headers = {}
        if known.scopes is not None:
            headers["X-OAuth-Scopes"] = ", ".join(known.scopes)
        if path.endswith("/graphql") and method == "POST":
            if not isinstance(payload, dict) or "query" not in payload:
                response = Response(400, {"message": "Problems parsing JSON"})
            elif (
                known.scopes is not None
                and not {"project", "read:project"} & set(known.scopes)
                and "projectv2" in str(payload["query"]).lower()
            ):  # `viewer` needs no scope
                response = Response(
                    200,
                    {
                        "errors": [
                            {
                                "type": "INSUFFICIENT_SCOPES",
                                "message": "Your token has not been granted the required "
                                "scopes to execute this query. The 'project' field requires "
                                "one of the following scopes: "
                                "['read:project'].",
                            }
                        ]
                    },
                )
            else:
                api = GraphQLApi(self.world, known.login, self.url, lambda: None, self.timing)
                response = Response(
                    200,
                    api.execute(
                        payload["query"], payload.get("variables"), payload.get("operationName")
                    ),
                )
        else:
            response = rest.route(self.world, known, method, path, query, payload, self.url)
        response.headers.update(headers)
        return response

    def _send(
        self, handler: BaseHTTPRequestHandler, response: Response, if_none_match: str | None
    ) -> None:
        if isinstance(response.body, Path):  # a big file: streamed, never read whole
            self._stream(handler, response.body)
            return
        if isinstance(response.body, (bytes, str)):
            data = response.body.encode() if isinstance(response.body, str) else response.body
            content_type = "text/plain; charset=utf-8"
        elif response.body is None:
            data, content_type = b"", "application/json; charset=utf-8"
        else:
            data = json.dumps(response.body, default=str).encode()
            content_type = "application/json; charset=utf-8"
        status, headers = response.status, dict(response.headers)
        if status == 200 and handler.command == "GET" and content_type.startswith("application"):
            etag = f'W/"{hashlib.sha1(data).hexdigest()}"'
            headers["ETag"] = etag
            if if_none_match and etag in [t.strip() for t in if_none_match.split(",")]:
                status, data, response.cost = 304, b"", False
                response.status = 304
        if response.cost and status not in (401,):
            self.world.rate_limit = max(0, self.world.rate_limit - 1)
        headers.setdefault("X-RateLimit-Limit", "5000")
        headers.setdefault("X-RateLimit-Remaining", str(self.world.rate_limit))
        headers.setdefault("X-RateLimit-Reset", str(int(time.time()) + 3600))
        headers.setdefault("X-RateLimit-Used", str(5000 - self.world.rate_limit))
        headers.setdefault("X-RateLimit-Resource", "core")
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        if data and handler.command != "HEAD":
            handler.wfile.write(data)

    def _stream(self, handler: BaseHTTPRequestHandler, path: Path) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain; charset=utf-8")
        handler.send_header("Content-Length", str(path.stat().st_size))
        handler.end_headers()
        with path.open("rb") as source:
            shutil.copyfileobj(source, handler.wfile, 1024 * 1024)

    def _fail(self, handler: BaseHTTPRequestHandler, fault: Fault) -> None:
        response = _refusal(fault)
        if response is not None:
            self._send(handler, response, None)
            return
        if fault.kind == "timeout":
            self._stopping.wait(self.fault_timeout)
        elif fault.kind == "hang":
            self._stopping.wait()
        _drop(handler)


def _refusal(fault: Fault) -> Response | None:
    """The answer GitHub gives for a fault kind that answers (None: it does not)."""
    exhausted = {
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": str(int(time.time()) + fault.seconds),
    }
    if fault.kind in ("500", "502"):
        message = "Server Error" if fault.kind == "500" else "Bad Gateway"
        return Response(int(fault.kind), {"message": message}, cost=False)
    if fault.kind in ("ratelimit", "secondary"):
        wait = {"Retry-After": str(fault.seconds)} if fault.kind == "ratelimit" else {}
        return Response(
            403, {"message": SECONDARY_LIMIT, "documentation_url": rest.DOCS}, wait, cost=False
        )
    if fault.kind in ("primary", "429"):
        return Response(
            403 if fault.kind == "primary" else 429,
            {"message": PRIMARY_LIMIT, "documentation_url": rest.DOCS},
            exhausted,
            cost=False,
        )
    if fault.kind == "graphql-ratelimit":
        return Response(
            200,
            {"errors": [{"type": "RATE_LIMITED", "message": PRIMARY_LIMIT}]},
            {**exhausted, "X-RateLimit-Resource": "graphql"},
            cost=False,
        )
    if fault.kind == "graphql-timeout":
        return Response(200, {"data": None, "errors": [{"message": GRAPHQL_TIMEOUT}]})
    return None


def _rewrite(response: Response, kind: str, payload: Any) -> None:
    """A GraphQL answer made wrong as GitHub has made it: the page cursor asked with comes
    back as the next one (`repeat-cursor`), or the asked-for objects are null (`null-node`)."""
    data = response.body.get("data") if isinstance(response.body, dict) else None
    if not isinstance(data, dict):
        return
    if kind == "null-node":
        response.body["data"] = dict.fromkeys(data)
        return
    variables = (payload or {}).get("variables") or {}
    pending = [data]
    while pending:
        node = pending.pop()
        if isinstance(node, list):
            pending += node
        elif isinstance(node, dict):
            info = node.get("pageInfo")
            if isinstance(info, dict):
                info["hasNextPage"] = True
                info["endCursor"] = variables.get("after") or info.get("endCursor") or "MQ"
            pending += [v for k, v in node.items() if k != "pageInfo"]


def _drop(handler: BaseHTTPRequestHandler) -> None:
    """Close the connection with no response at all."""
    handler.close_connection = True
    with contextlib.suppress(OSError):
        handler.connection.shutdown(socket.SHUT_RDWR)


def _token(header: str) -> str | None:
    scheme, _, value = header.partition(" ")
    if scheme.lower() in ("token", "bearer") and value.strip():
        return value.strip()
    return None


_FIELD = re.compile(r"\{\s*(\w+)")


def _graphql_fields(query: str) -> list[str]:
    """The operation's kind and first top-level field, for fault matching and the log."""
    kind = "mutation" if query.lstrip().startswith("mutation") else "query"
    match = _FIELD.search(query)
    return [kind, match.group(1)] if match else [kind]
