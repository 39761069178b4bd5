"""A command run in a process group of its own, its output read line by line, and stopped
as a whole.

A repro is `NGPU=8 ./run_train.sh …`: a shell that starts torchrun, which starts one worker
per GPU. Those workers are grandchildren of ours: terminating the shell alone leaves them
running on the GPUs. So the command leads a new session (its own process group), and
stopping it signals the whole group: SIGTERM, then SIGKILL for what is still alive after a
grace period. It runs as an argv list, never through a shell: a command comes from a CI log
(see analysis/repro.py for the shapes scout runs).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scout_tui.errors import SECRET_VARIABLES

GRACE = 5.0  # seconds between SIGTERM and SIGKILL: torchrun forwards SIGTERM to its workers
_RUNNING: weakref.WeakSet[ProcessGroup] = weakref.WeakSet()
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def stop_all(grace: float = 2.0) -> None:
    """Stop every group this process started that still runs: the last line of defence
    when the process ends (a hangup, an exception past the console)."""
    for group in list(_RUNNING):
        if group.alive():
            group.stop(grace)


class ProcessGroup:
    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        environment = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
        for name in SECRET_VARIABLES:  # a repro needs no GitHub token: nightly code runs here
            environment.pop(name, None)
        self.argv = argv
        self.cancelled = False
        self._lock = threading.Lock()
        # A Ctrl-C while the command starts would leave it running with no one to stop
        # it (the caller never gets the group): its handler waits until the group is known.
        # (Not a blocked signal mask: the command would inherit it and ignore SIGTERM.)
        with _stops_deferred() as deferred:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            self.pgid = self.process.pid  # the session leader's pid is the group's id
            _RUNNING.add(self)
        try:
            deferred.deliver()  # a Ctrl-C that came meanwhile acts now
        except BaseException:
            self.stop(grace=2.0)
            raise

    def lines(self) -> Iterator[str]:
        """The output (stdout and stderr together) as it comes, until the command ends."""
        assert self.process.stdout is not None
        for raw in iter(self.process.stdout.readline, b""):
            yield raw.decode("utf-8", "replace").rstrip("\r\n")
        self.process.stdout.close()

    def rest(self, wait: float = 1.0) -> list[str]:
        """Once stopped: the lines it wrote that were not read yet, to the pipe's end, or
        for at most `wait` seconds (a process that left the group may still hold the pipe)."""
        out = self.process.stdout
        if out is None or out.closed:
            return []
        lines: list[str] = []

        def read() -> None:
            try:
                for raw in iter(out.readline, b""):
                    lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
            except (OSError, ValueError):  # closed under it: what was read stands
                return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(wait)
        return list(lines)

    def wait(self) -> int:
        return self.process.wait()

    def stop(self, grace: float = GRACE) -> None:
        """Stop the command and everything it started: the whole group, SIGTERM first."""
        with self._lock:
            self.cancelled = True
            if not self._signal(signal.SIGTERM):
                return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            if not self.alive():
                return
            time.sleep(0.05)
        self._signal(signal.SIGKILL)

    def alive(self) -> bool:
        """Whether any process of the group is still running (the leader may have exited
        before its children)."""
        self.process.poll()
        try:
            os.killpg(self.pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return _group_has_runners(self.pgid)

    def _signal(self, signum: int) -> bool:
        try:
            os.killpg(self.pgid, signum)
        except ProcessLookupError:
            return False
        return True


class _Deferred:
    def __init__(self) -> None:
        self.caught: list[int] = []
        self.previous: dict[int, Any] = {}

    def hold(self, signum: int, frame: object) -> None:
        self.caught.append(signum)

    def deliver(self) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous = {}
        for signum in self.caught:
            signal.raise_signal(signum)  # to the handler that was there before
        self.caught = []


@contextlib.contextmanager
def _stops_deferred() -> Iterator[_Deferred]:
    """Ctrl-C, SIGTERM and SIGHUP kept while the block runs, to be delivered after it
    (`deliver`); in another thread than the main one, where no handler runs: nothing to do."""
    deferred = _Deferred()
    if threading.current_thread() is threading.main_thread():
        for signum in _STOPS:
            handler = signal.getsignal(signum)
            if handler is not signal.SIG_IGN and handler is not None:
                deferred.previous[signum] = handler
                signal.signal(signum, deferred.hold)
    try:
        yield deferred
    except BaseException:
        for held, handler in deferred.previous.items():
            signal.signal(held, handler)
        raise


def _group_has_runners(pgid: int) -> bool:
    """Zombies (exited, not yet reaped by their new parent) answer killpg but run nothing."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True  # no /proc to ask: assume the worst
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid pgrp …: comm may hold spaces and parentheses.
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False
