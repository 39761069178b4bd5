"""A CI failure's evidence: its classification, the traceback with the experiment's frames
highlighted, the regression-range table and the repro command (selectable, for terminals
that ignore OSC 52)."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static, TextArea

from scout_tui.model import Finding

CLASSES = ("recurring", "intermittent", "new failure", "no recent success")


def classification_lines(finding: Finding) -> list[str]:
    """The per-test lines of a CI finding's body that carry its class."""
    return [line.strip(" -") for line in finding.body.splitlines()
            if any(word in line for word in CLASSES)]  # fmt: skip


def traceback_text(finding: Finding, experiment: str) -> Text:
    frames = {(f.path, f.line) for f in finding.evidence.frames if f.in_experiment}
    text = Text()
    for line in (finding.evidence.traceback or "").splitlines():
        ours = (experiment and f"/{experiment}/" in line.replace("\\", "/")) or any(
            f"{path}\", line {number}" in line for path, number in frames
        )  # fmt: skip
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

    def compose(self):
        yield Static(id="log-body")
        yield TextArea("", read_only=True, id="repro", show_line_numbers=False)

    def show(self, finding: Finding | None, experiment: str) -> bool:
        """True when the finding has log evidence (the pane is shown only then)."""
        evidence = finding.evidence if finding is not None else None
        if finding is None or evidence is None or not (
            evidence.traceback or evidence.repro or evidence.regression or evidence.error
        ):
            return False
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
        if evidence.repro:
            parts.append(Text("Repro (c copies it):", style="bold"))
        self.shown = Group(*parts)
        self.query_one(Static).update(self.shown)
        repro = self.query_one(TextArea)
        repro.display = bool(evidence.repro)
        repro.load_text(evidence.repro or "")
        self.scroll_home(animate=False)
        return True
