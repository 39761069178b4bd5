"""A repro run from the console: its process group, and its output gathered for the log
pane. Lines are queued by the reading thread and taken by the screen ten times a second: a
chatty training run must not flood the event loop with a message per line."""

from __future__ import annotations

import queue
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message

from scout_tui.model import Finding
from scout_tui.repro.process import GRACE, ProcessGroup
from scout_tui.tui.messages import ReproEnded
from scout_tui.tui.widgets.log_pane import REPRO_LINES, ReproRun

if TYPE_CHECKING:
    from scout_tui.analysis.ci.repro import ReproArgv


class ReproController:
    def __init__(self, post: Callable[[Message], object]) -> None:
        self.post = post
        self.run: ReproRun | None = None  # the last repro run from the console
        self.group: ProcessGroup | None = None
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()

    @property
    def running(self) -> bool:
        return self.group is not None

    def start(self, finding: Finding, repro: ReproArgv, workdir: Path) -> ProcessGroup:
        """Start it (OSError: it could not start); `read` it in a worker."""
        self.group = ProcessGroup(repro.argv, workdir, env=repro.env)
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
