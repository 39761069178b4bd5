"""The local GitHub-compatible server: a real HTTP server on 127.0.0.1.

GitHub's JSON shapes and status codes, `Link` pagination, ETags and 304s (a 304 costs no
rate limit, as on GitHub), token checks with `X-OAuth-Scopes`, rate-limit headers, and
faults on demand for the tests: fail the Nth request or every request matching a text
with 500, 502, a secondary rate limit (403 with Retry-After), a timeout, a dropped
connection or a hang — optionally *after* applying it (the change happened, the response
is lost), the case a crash-safe publish must survive.
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

from scout_tui.github.server import rest
from scout_tui.github.server.graphql_api import BoardTiming, GraphQLApi
from scout_tui.github.server.responses import Response
from scout_tui.github.server.world import World

FAULT_KINDS = ("500", "502", "ratelimit", "timeout", "drop", "hang")
TIMEOUT_FAULT_SECONDS = 30.0


class FaultError(ValueError):
    pass


@dataclass
class Fault:
    """`N:KIND` (the Nth request), or `TEXT:KIND` (every request whose description —
    `METHOD /path` plus, for GraphQL, the operation's top-level fields — contains TEXT).
    KIND may end in `-after` (applied, then failed) and `*K` (only the first K matches)."""

    kind: str
    nth: int | None = None
    text: str | None = None
    after: bool = False
    remaining: int | None = None

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
        if kind not in FAULT_KINDS:
            raise FaultError(f"--fault {spec!r}: KIND is one of {', '.join(FAULT_KINDS)} "
                             "(optionally -after)")  # fmt: skip
        if target.isdigit():
            return cls(kind, nth=int(target), after=after, remaining=remaining)
        return cls(kind, text=target, after=after, remaining=remaining)

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
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True,
                                        name="local-github")  # fmt: skip
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
        if fault is not None and not fault.after:
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
        if fault is not None:
            entry.fault = fault.kind + "-after"
            self._fail(handler, fault)
            return
        self._send(handler, response, handler.headers.get("If-None-Match"))
        entry.status, entry.cost = response.status, response.cost

    def _answer(self, handler: BaseHTTPRequestHandler, method: str, path: str,
                query: dict[str, list[str]], payload: Any) -> Response:  # fmt: skip
        token = _token(handler.headers.get("Authorization", ""))
        if token is None:
            return Response(401, {"message": "Requires authentication",
                                  "documentation_url": rest.DOCS})  # fmt: skip
        known = self.world.login_for(token)
        if known is None:
            return Response(401, {"message": "Bad credentials", "documentation_url": rest.DOCS})
        headers = {}
        if known.scopes is not None:
            headers["X-OAuth-Scopes"] = ", ".join(known.scopes)
        if path.endswith("/graphql") and method == "POST":
            if not isinstance(payload, dict) or "query" not in payload:
                response = Response(400, {"message": "Problems parsing JSON"})
            elif (known.scopes is not None and not {"project", "read:project"} & set(known.scopes)
                  and "projectv2" in str(payload["query"]).lower()):  # `viewer` needs no scope
                response = Response(200, {"errors": [{
                    "type": "INSUFFICIENT_SCOPES",
                    "message": "Your token has not been granted the required scopes to execute "
                    "this query. The 'project' field requires one of the following scopes: "
                    "['read:project'].",
                }]})  # fmt: skip
            else:
                api = GraphQLApi(self.world, known.login, self.url, lambda: None, self.timing)
                response = Response(200, api.execute(payload["query"], payload.get("variables"),
                                                     payload.get("operationName")))  # fmt: skip
        else:
            response = rest.route(self.world, known, method, path, query, payload, self.url)
        response.headers.update(headers)
        return response

    def _send(self, handler: BaseHTTPRequestHandler, response: Response,
              if_none_match: str | None) -> None:  # fmt: skip
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
        if fault.kind in ("500", "502"):
            message = "Server Error" if fault.kind == "500" else "Bad Gateway"
            self._send(handler, Response(int(fault.kind), {"message": message}, cost=False), None)
        elif fault.kind == "ratelimit":
            self._send(handler, Response(403, {
                "message": "You have exceeded a secondary rate limit. Please wait a few "
                "minutes before you try again.", "documentation_url": rest.DOCS,
            }, {"Retry-After": "1"}, cost=False), None)  # fmt: skip
        else:
            if fault.kind == "timeout":
                self._stopping.wait(self.fault_timeout)
            elif fault.kind == "hang":
                self._stopping.wait()
            _drop(handler)


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
