"""A repro run from the console: its process group, and its output gathered for the log
pane. Lines are queued by the reading thread and taken by the screen ten times a second: a
chatty training run must not flood the event loop with a message per line."""

from __future__ import annotations

import queue
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from scout_tui.errors import ScoutError
from scout_tui.model import Finding
from scout_tui.repro.lock import BoxLock
from scout_tui.repro.process import GRACE, ProcessGroup
from scout_tui.tui.messages import ReproEnded
from scout_tui.tui.widgets.log_pane import REPRO_LINES, ReproRun

if TYPE_CHECKING:
    from scout_tui.analysis.ci.repro import ReproArgv


class ReproController:
    def __init__(self, post: Callable[[Message], object], state_dir: Path) -> None:
        self.post = post
        self.state_dir = state_dir
        self._box: BoxLock | None = None
        self.run: ReproRun | None = None  # the last repro run from the console
        self.group: ProcessGroup | None = None
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()

    @property
    def running(self) -> bool:
        return self.group is not None

    def start(self, finding: Finding, repro: ReproArgv, workdir: Path) -> ProcessGroup:
        """Start it (OSError: it could not start, or another run holds the box's GPUs);
        `read` it in a worker."""
        box = BoxLock(self.state_dir, f"a repro from the console: {repro.display()[:80]}")
        try:
            box.acquire()
        except ScoutError as exc:
            raise OSError(str(exc)) from None
        try:
            self.group = ProcessGroup(repro.argv, workdir, env=repro.env)
        except BaseException:
            box.release()
            raise
        self._box = box
        self.run = ReproRun(finding.fingerprint, repro.display())
        return self.group

    def read(self, group: ProcessGroup) -> None:
        """In a worker's thread: every line of its output, then `ReproEnded`."""
        for line in group.lines():
            self._lines.put(line)
        self.post(ReproEnded(group.wait(), group.cancelled))

    def drain(self) -> list[str]:
        """The lines read since the last drain, kept on the run (its last REPRO_LINES)."""
        lines: list[str] = []
        while True:
            try:
                lines.append(self._lines.get_nowait())
            except queue.Empty:
                break
        if self.run is None or not lines:
            return []
        self.run.lines = (self.run.lines + lines)[-REPRO_LINES:]
        return lines

    def ended(self, message: ReproEnded) -> str | None:
        """The run as ended; what to say about it (None: there was no run)."""
        self.drain()
        self.group = None
        if self._box is not None:
            self._box.release()
            self._box = None
        run = self.run
        if run is None:
            return None
        run.running, run.returncode = False, message.returncode
        run.stopped = message.stopped  # said once, on the run's status line above its output
        return "stopped" if message.stopped else f"ended: exit status {message.returncode}"

    def stop(self, grace: float = GRACE) -> None:
        """Stop the whole process group (blocking: from a worker, or at exit)."""
        if self.group is not None:
            self.group.stop(grace=grace)
