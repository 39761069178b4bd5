"""A CI failure's evidence: its classification, the traceback with the experiment's frames
highlighted, the regression-range table and the repro command (selectable, for terminals
that ignore OSC 52)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Log, Static

from scout_tui.analysis.text.markdown import plain
from scout_tui.model import Finding

if TYPE_CHECKING:
    from textual.widgets import TextArea

REPRO_LINES = 5000  # the output kept on screen: the end of a long run is what matters


@dataclass
class ReproRun:
    """A repro started from the console: its command, output so far and how it ended."""

    fingerprint: str
    command: str
    lines: list[str] = field(default_factory=list)
    running: bool = True
    returncode: int | None = None
    stopped: bool = False

    def status_line(self) -> str:
        if self.running:
            return f"$ {self.command}\nrunning… (r stops it and its workers)"
        if self.stopped:
            return f"$ {self.command}\nstopped (its whole process group); its output:"
        return f"$ {self.command}\nexited with status {self.returncode}; its output:"


CLASSES = ("recurring", "intermittent", "new failure", "no recent success")


def classification_lines(finding: Finding) -> list[str]:
    """The per-test lines of a CI finding's body that carry its class."""
    return [
        plain(line.strip(" -"))
        for line in finding.body.splitlines()
        if any(word in line for word in CLASSES)
    ]


def traceback_text(finding: Finding, experiment: str) -> Text:
    frames = {(f.path, f.line) for f in finding.evidence.frames if f.in_experiment}
    text = Text()
    for line in (finding.evidence.traceback or "").splitlines():
        ours = (experiment and f"/{experiment}/" in line.replace("\\", "/")) or any(
            f'{path}", line {number}' in line for path, number in frames
        )
        text.append(line + "\n", style="bold yellow" if ours else "")
    return text


def regression_table(finding: Finding) -> Table | None:
    rows = finding.evidence.regression
    if not rows:
        return None
    table = Table(title="Regression range", expand=False)
    table.add_column("Nightly")
    table.add_column("Status")
    table.add_column("PyTorch commit")
    for row in rows:
        style = "red" if row.status == "fail" else "green"
        table.add_row(row.nightly, Text(row.status, style=style), (row.commit or "unknown")[:12])
    return table


class LogPane(VerticalScroll, can_focus=True):
    BORDER_TITLE = "Log"
    shown: Group | None = None  # what the pane shows above the repro command
    _run_shown: ReproRun | None = None  # the repro whose output the pane shows
    _showing: tuple[str, str, bool] | None = None  # the finding shown (its body), whether l opens

    def compose(self):
        yield Static(id="repro-status")
        yield Log(id="repro-output", max_lines=REPRO_LINES, auto_scroll=True)
        yield Static(id="log-body")  # the repro's own area comes with the first repro

    def on_mount(self) -> None:
        self.show_run(None)

    def show_run(self, run: ReproRun | None) -> None:
        """A repro's output above the evidence, for the finding it was run for."""
        status, output = self.query_one("#repro-status", Static), self.query_one(Log)
        status.display = output.display = run is not None
        if run is None:
            return
        if run is not self._run_shown:  # a run started: its output in view, at the top
            self._run_shown = run
            self.scroll_home(animate=False)
        status.update(
            Text(
                run.status_line(),
                style="bold" if run.running else "bold red" if run.returncode else "bold green",
            )
        )
        output.clear()
        output.write_lines(run.lines)

    def append_run_output(self, run: ReproRun, lines: list[str]) -> None:
        self.query_one(Log).write_lines(lines)
        self.query_one("#repro-status", Static).update(Text(run.status_line(), style="bold"))

    def show(self, finding: Finding | None, experiment: str, log: bool = False) -> bool:
        """True when the finding has log evidence (the pane is shown only then). `log`: the
        whole CI log is kept here (l opens it)."""
        evidence = finding.evidence if finding is not None else None
        if (
            finding is None
            or evidence is None
            or not (evidence.traceback or evidence.repro or evidence.regression or evidence.error)
        ):
            self._showing = None
            return False
        showing = (finding.fingerprint, finding.body, log)
        if showing == self._showing:  # the same again (a zoom): kept as scrolled
            return True
        self._showing = showing
        parts: list = []
        classes = classification_lines(finding)
        if classes:
            parts.append(Text("\n".join(classes), style="bold"))
        if evidence.error:
            parts.append(Text(f"Error: {evidence.error}", style="red"))
        if evidence.traceback:
            parts.append(traceback_text(finding, experiment))
        table = regression_table(finding)
        if table is not None:
            parts.append(table)
        if evidence.compare_url:
            parts.append(Text(evidence.compare_url, style="underline"))
        if log:
            parts.append(Text("l opens the whole log (search, jump between failures)", style="dim"))
        if evidence.repro:
            parts.append(Text("Repro (c copies it, r runs it):", style="bold"))
        self.shown = Group(*parts)
        self.query_one("#log-body", Static).update(self.shown)
        if evidence.repro or self.query("#repro"):
            repro = self._repro_area()
            repro.display = bool(evidence.repro)
            repro.load_text(evidence.repro or "")
        self.scroll_home(animate=False)
        return True

    def _repro_area(self) -> TextArea:
        """Where the repro command shows, selectable: made with the first repro shown (a
        TextArea costs the console's start what no first screen needs)."""
        from textual.widgets import TextArea

        found = self.query(TextArea)
        if found:
            return found.first()
        repro = TextArea("", read_only=True, id="repro", show_line_numbers=False)
        repro.can_focus = False  # no stop for tab where no key works: `c` copies it
        self.mount(repro)
        return repro
