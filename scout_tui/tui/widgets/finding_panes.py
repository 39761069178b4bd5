"""The finding's panes beside the tree: its detail, its diff and its log (with the output
of a repro run for it), the last two shown only when the finding has some; and where its
evidence leads: its link in a browser (`o`), its whole CI log (`l`)."""

from __future__ import annotations

import os
import sys
import webbrowser
from collections.abc import Mapping

from textual.app import ComposeResult
from textual.containers import Vertical

from scout_tui.analysis.text.markdown import plain
from scout_tui.model import Finding
from scout_tui.session import Session
from scout_tui.tui.view import Row
from scout_tui.tui.widgets.detail_pane import DetailPane
from scout_tui.tui.widgets.diff_pane import DiffPane
from scout_tui.tui.widgets.log_pane import LogPane, ReproRun

TEXT_BROWSERS = {"lynx", "w3m", "links", "elinks", "www-browser"}


def graphical_browser(env: Mapping[str, str], platform: str) -> bool:
    """Whether `o` may start a browser: a display (X, Wayland, a Mac or Windows desktop)
    and not a text browser, which would draw over the console."""
    if env.get("BROWSER", "").split(os.pathsep)[0].rsplit("/", 1)[-1] in TEXT_BROWSERS:
        return False
    if platform in ("darwin", "win32"):
        return not env.get("SSH_CONNECTION")
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


class FindingPanes(Vertical):
    def __init__(self, session: Session, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session = session
        self._experiment = session.experiment

    def compose(self) -> ComposeResult:
        yield DetailPane(id="detail")
        diff, log = DiffPane(id="diff"), LogPane(id="log")
        diff.display = log.display = False  # until a finding has a diff, a log
        yield diff
        yield log

    def show(self, row: Row | None, empty: str, run: ReproRun | None, zoomed: str | None) -> None:
        """`row`'s finding (`empty` said when None), and `run`, a repro run for it; a pane
        `zoomed` shows even when it has nothing to."""
        self.query_one(DetailPane).show(row, empty)
        finding = row.finding if row else None
        diff, log = self.query_one(DiffPane), self.query_one(LogPane)
        # Shown inline, a pane would show through zoom's class: a zoom on another pane
        # hides it here too.
        diff.display = (diff.show(finding) or zoomed == "diff") and zoomed in (None, "diff")
        log.show_run(run)
        has_log = self.session.logs.has_log(finding)  # no disk here: this runs per cursor move
        log.display = (
            log.show(finding, self._experiment, has_log) or run is not None or zoomed == "log"
        ) and zoomed in (None, "log")

    def open_url(self, finding: Finding) -> None:
        urls = (
            ([finding.board.url] if finding.board and finding.board.url else [])
            + finding.evidence.urls
            + ([finding.evidence.compare_url] if finding.evidence.compare_url else [])
        )
        if not urls:
            self.notify("this finding has no link", severity="warning", timeout=2)
            return
        url = urls[0]
        if graphical_browser(os.environ, sys.platform):
            self.run_worker(lambda: webbrowser.open(url), thread=True)
            self.notify(f"opening {url}", timeout=3)
        else:  # over SSH: no browser here; the URL to the reviewer's own clipboard
            self.app.copy_to_clipboard(url)
            self.notify(f"no display: copied (OSC 52) {url}", timeout=8)

    def open_log(self, finding: Finding) -> None:
        kept = self.session.logs.log_file(finding)
        if kept is None:
            self.notify("no CI log kept for this finding", severity="warning", timeout=3)
            return
        from scout_tui.tui.screens.log_viewer import LogViewer

        self.app.push_screen(
            LogViewer(
                kept.path,
                experiment=self._experiment,
                title=plain(finding.title),
                root_offset=kept.root_offset,
            )
        )
