"""A repro from the console, as one flow: copied (`c`), or asked first (the command and
where it runs), run in its own process group, its output taken ten times a second, stopped
whole by a second `r`. Not drawn: the screen shows the output (`Output`) where the finding
is under the cursor, and follows the run's state (`Changed`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.message import Message
from textual.timer import Timer
from textual.widget import Widget

from scout_tui.model import Finding
from scout_tui.repro.process import GRACE, ProcessGroup
from scout_tui.session import Session
from scout_tui.tui.controllers.repro import ReproController
from scout_tui.tui.messages import ReproEnded
from scout_tui.tui.widgets.log_pane import ReproRun

if TYPE_CHECKING:
    from scout_tui.analysis.ci.repro import ReproArgv

DRAIN_EVERY = 0.1  # seconds between takes of the output


class ReproFlow(Widget):
    DEFAULT_CSS = "ReproFlow { display: none; }"

    @dataclass
    class Output(Message):
        """Lines the run wrote since the last take."""

        run: ReproRun
        lines: list[str]

    class Changed(Message):
        """The run started or ended: the panes show it again."""

    def __init__(self, session: Session) -> None:
        super().__init__(id="repro-flow")
        self.session = session
        self.controller = ReproController(self.post_message, session.state.directory)
        self._timer: Timer | None = None

    @property
    def run(self) -> ReproRun | None:
        """The last repro run from the console."""
        return self.controller.run

    def toggle(self, finding: Finding | None) -> None:
        """`r`: stop the running repro, else ask to run the finding's (asking which test
        first when it has several)."""
        if self.controller.running:
            self.notify("stopping the repro and everything it started…", timeout=3)
            self.run_worker(self.controller.stop, thread=True, group="repro-stop")
            return
        if finding is None:
            return
        if self.session.workdir() is None:  # nowhere to run any of them: said before asking
            self._ask(finding, None)
            return
        self._with_test(finding, "Run the repro", lambda test: self._ask(finding, test))

    def copy(self, finding: Finding) -> None:
        """`c`: the command `r` would run to the reviewer's clipboard."""
        self._with_test(finding, "Copy the repro", lambda test: self._copy(finding, test))

    def _with_test(self, finding: Finding, doing: str, then: Callable[[str | None], None]) -> None:
        from scout_tui.tui.screens.repro import PickTest  # its modal, when it opens

        tests = list(finding.evidence.repros)
        if len(tests) < 2:
            then(None)
            return
        self.app.push_screen(
            PickTest(tests, doing), lambda test: then(test) if test is not None else None
        )

    def _ask(self, finding: Finding, test: str | None) -> None:
        from scout_tui.analysis.ci.repro import ReproError
        from scout_tui.tui.screens.repro import ConfirmRepro

        try:
            repro, workdir = self.session.repro(finding, test)
        except ReproError as exc:
            self.notify(f"no repro to run: {exc}", severity="warning", timeout=8)
            return

        def answered(run: bool | None) -> None:
            if run:
                self._start(finding, repro, workdir)

        self.app.push_screen(ConfirmRepro(repro.display(), str(workdir)), answered)

    def _copy(self, finding: Finding, test: str | None) -> None:
        from scout_tui.analysis.ci.repro import ReproError

        repro = finding.evidence.repros.get(test) if test else finding.evidence.repro
        if self.session.bundle is not None:  # what `r` would run, never the bundle's string
            try:
                repro = self.session.derived_repro(finding, test).display()
            except ReproError:
                repro = None
        if not repro:
            self.notify("this finding has no repro command", severity="warning", timeout=2)
            return
        self.app.copy_to_clipboard(repro)
        which = f" of {test}" if test else ""
        self.notify(
            f"repro{which} copied: {repro} (OSC 52; in tmux: set -g set-clipboard on)",
            timeout=4,
        )

    def _start(self, finding: Finding, repro: ReproArgv, workdir: Path) -> None:
        try:
            group = self.controller.start(finding, repro, workdir)
        except OSError as exc:
            self.notify(f"cannot start the repro: {exc}", severity="error", timeout=8)
            return
        self._timer = self.set_interval(DRAIN_EVERY, self._drain)
        self._read(group)
        self.post_message(self.Changed())

    @work(thread=True, group="repro", exit_on_error=False)
    def _read(self, group: ProcessGroup) -> None:
        self.controller.read(group)

    def _drain(self) -> None:
        lines = self.controller.drain()
        if lines and self.controller.run is not None:
            self.post_message(self.Output(self.controller.run, lines))

    def on_repro_ended(self, message: ReproEnded) -> None:
        self._drain()
        if self._timer is not None:
            self._timer.stop()
        said = self.controller.ended(message)
        if said is not None:
            ok = message.returncode == 0
            self.notify(f"repro {said}", severity="information" if ok else "warning", timeout=5)
        self.post_message(self.Changed())

    def stop(self, grace: float = GRACE) -> None:
        """Stop the whole process group (blocking: at exit)."""
        self.controller.stop(grace=grace)
