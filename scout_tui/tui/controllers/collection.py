"""A collection in a child process, its events read line by line.

Parsing Python holds the GIL: in a child (`scout collect --events`) it leaves the console's
event loop free and uses the other core. The child leads its own process group, so a
cancel reaches it and every collector it forked. Nothing here touches a widget: a thread
worker posts its events as messages.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import ValidationError
from textual.message import Message

from scout_tui.errors import redact
from scout_tui.github.auth import token_variable
from scout_tui.session import SessionOptions
from scout_tui.tui.messages import CollectionEnded, CollectionEvent

if TYPE_CHECKING:
    from scout_tui.collect.events import Event

STDERR_KEPT = 40  # last lines of the child's stderr, for the error it ends with


def collect_command(options: SessionOptions, recollect: bool = True) -> list[str]:
    args = [sys.executable, "-m", "scout_tui", "collect", "--events", "--repo", str(options.repo)]
    for flag, value in (
        ("--config", options.config),
        ("--cache-dir", options.cache_dir),
        ("--state-dir", options.state_dir),
        ("--prior", options.prior_dir),
        ("--api-url", options.api_url),
    ):
        if value is not None:
            args += [flag, str(value)]
    if options.as_of is not None:
        args += ["--date", options.as_of.isoformat()]
    if options.offline:
        args.append("--offline")
    for name in options.only or ():
        args += ["--only", name]
    return args


@dataclass
class Ended:
    """How the child ended: its exit code and, when it failed, its last error line."""

    returncode: int
    error: str | None


class Collection:
    def __init__(self, options: SessionOptions, api_url: str) -> None:
        self.options = options
        self.api_url = api_url  # the session's: where options.token is for
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: list[str] = []
        self._cancelled = threading.Event()
        self.ended: Ended | None = None

    def events(self) -> Iterator[Event]:
        """Start the child and yield its events as they come; `ended` is set at the end."""
        from scout_tui.collect.events import from_json_line

        env = dict(os.environ)
        if self.options.token:  # the demo's token; otherwise the child finds the user's
            env[token_variable(self.api_url)] = self.options.token
        env.setdefault("SCOUT_PROCESSES", "2")
        self._process = subprocess.Popen(
            collect_command(self.options),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        drain = threading.Thread(target=self._read_stderr, daemon=True)
        drain.start()
        assert self._process.stdout is not None
        for line in self._process.stdout:
            try:
                yield from_json_line(line)
            except ValidationError:
                continue  # not an event (a library printing): never fatal
        code = self._process.wait()
        drain.join(5)
        error = None
        if code != 0 and not self._cancelled.is_set():
            lines = [line for line in self._stderr if line.startswith("scout: error:")]
            error = lines[-1] if lines else (self._stderr or [f"exit code {code}"])[-1]
            error = redact(error.removeprefix("scout: error: "))
        self.ended = Ended(code, error)

    def post_events(self, post: Callable[[Message], object]) -> None:
        """In a worker's thread: each event as `CollectionEvent`, then `CollectionEnded`."""
        try:
            for event in self.events():
                post(CollectionEvent(event))
        except OSError as exc:
            post(CollectionEnded(f"cannot start the collection: {exc}", False))
            return
        post(CollectionEnded(self.ended.error if self.ended else None, self.cancelled))

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for raw in self._process.stderr:
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())
            del self._stderr[:-STDERR_KEPT]

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """SIGTERM to the child's process group: the run winds down and reports the
        collectors that did not finish as cancelled."""
        self._cancelled.set()
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)

    def kill(self) -> None:
        """The console is quitting: nothing of the run may outlive it."""
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(5)
