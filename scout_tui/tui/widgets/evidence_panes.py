"""The finding under the cursor, beside the tree: its detail, its diff and its CI log (or
its repro's output). A pane with nothing to show is hidden, unless it is the one zoomed."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical

from scout_tui.tui.view import Row
from scout_tui.tui.widgets.detail_pane import DetailPane
from scout_tui.tui.widgets.diff_pane import DiffPane
from scout_tui.tui.widgets.log_pane import LogPane, ReproRun


class EvidencePanes(Vertical):
    def compose(self) -> ComposeResult:
        yield DetailPane(id="detail")
        yield DiffPane(id="diff")
        yield LogPane(id="log")

    def on_mount(self) -> None:
        self.query_one(DiffPane).display = False
        self.query_one(LogPane).display = False

    def show(
        self,
        row: Row | None,
        empty: str,
        run: ReproRun | None,
        has_log: bool,
        experiment: str,
        zoomed: str | None,
    ) -> None:
        """`row`'s finding (`empty` says why there is none); `run`: its repro's run, when
        it has one; `has_log`: a CI log is kept for it."""
        self.query_one(DetailPane).show(row, empty)
        finding = row.finding if row else None
        diff, log = self.query_one(DiffPane), self.query_one(LogPane)
        diff.display = diff.show(finding) or zoomed == "diff"
        log.show_run(run)
        log.display = log.show(finding, experiment, has_log) or run is not None or zoomed == "log"
