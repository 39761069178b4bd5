"""A whole CI log, full screen: huge logs need the room. It opens on the root-cause line
(or the first failure, or the end), with `/` to search and `f`/`g`/`n` to jump."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static

from scout_tui.analysis.ci.logindex import LogIndex
from scout_tui.tui.widgets.key_footer import KeyFooter
from scout_tui.tui.widgets.log_view import LogView


def human_size(size: int) -> str:
    if size < 1000:
        return f"{size} B"
    if size < 1000**2:
        return f"{size / 1000:.1f} KB"
    return f"{size / 1000**2:.1f} MB"


class LogViewer(Screen[None]):
    BINDING_GROUP_TITLE = "Log viewer"
    BINDINGS = [
        Binding("escape,q", "close", "Close", id="log_viewer_close"),
        Binding("slash", "open_search", "Search", id="log_viewer_search"),
    ]
    DEFAULT_CSS = """
    LogViewer { layout: vertical; }
    LogViewer #log-viewer-header { height: 1; padding: 0 1; background: $panel; }
    LogViewer #log-viewer-message { height: 1; padding: 0 1; color: $error; display: none; }
    LogViewer #log-viewer-message.-shown { display: block; }
    LogViewer LogView { height: 1fr; }
    LogViewer #log-viewer-search { display: none; }
    LogViewer #log-viewer-search.-open { display: block; }
    """

    def __init__(
        self, path: Path, *, experiment: str, title: str, root_offset: int | None = None
    ) -> None:
        super().__init__()
        self.path = Path(path)
        self.experiment = experiment
        self.log_title = title  # not `title`: Screen's own reactive overrides the app's
        self.root_offset = root_offset
        self.index = LogIndex(self.path)
        self.size_text = ""
        self.progress_text = "scanning…"
        self.status_text = ""  # the last search's outcome
        self.where_text = ""  # where the last jump landed: "failure 2 of 5 · line 1,234"

    def compose(self) -> ComposeResult:
        yield Static(self._header(), id="log-viewer-header")
        yield Static("", id="log-viewer-message")
        yield LogView(
            self.index,
            experiment=self.experiment,
            root_offset=self.root_offset,
            id="log-viewer-view",
        )
        yield Input(
            placeholder="Search the log (case-insensitive), enter to find, escape to close",
            id="log-viewer-search",
        )
        yield KeyFooter()

    def on_mount(self) -> None:
        self.query_one(LogView).focus()

    def on_unmount(self) -> None:
        self.index.close()  # once the workers are done with it

    # -- the header line ------------------------------------------------------------------
    def _header(self) -> Text:
        parts = [
            self.log_title,
            self.where_text,
            self.status_text,
            self.size_text,
            self.progress_text,
        ]
        header = Text(" · ".join(part for part in parts if part), no_wrap=True, end="")
        header.stylize("bold", 0, len(self.log_title))
        return header

    def _show_header(self) -> None:
        self.query_one("#log-viewer-header", Static).update(self._header())

    def on_log_view_scan_progress(self, message: LogView.ScanProgress) -> None:
        self.progress_text = f"scanning… {message.fraction:.0%}"
        self._show_header()

    def on_log_view_scanned(self, message: LogView.Scanned) -> None:
        self.size_text = human_size(message.size)
        self.progress_text = f"{message.line_count:,} lines"
        self._show_header()

    def on_log_view_failures_found(self, message: LogView.FailuresFound) -> None:
        count = len(message.lines)
        self.progress_text += f" · {count:,} failure line{'s' * (count != 1)}"
        self._show_header()

    def on_log_view_moved(self, message: LogView.Moved) -> None:
        view, line = self.query_one(LogView), message.line
        if line in view.failures_at:
            self.where_text = (
                f"failure {view.failures_at[line] + 1} of {len(view.failures)} · line {line + 1:,}"
            )
        else:
            self.where_text = f"line {line + 1:,} of {view.index.line_count:,}"
        self._show_header()

    def on_log_view_scan_failed(self, message: LogView.ScanFailed) -> None:
        self.progress_text = ""
        self._show_header()
        shown = self.query_one("#log-viewer-message", Static)
        shown.update(Text(message.error))
        shown.add_class("-shown")
        self.query_one(LogView).display = False

    def on_log_view_search_finished(self, message: LogView.SearchFinished) -> None:
        if message.error:
            self.status_text = message.error
        elif message.line is None:
            self.status_text = f"no match for {message.text!r}"
            # In a notification too: a narrow header cuts it.
            self.notify(self.status_text, severity="warning", timeout=3, markup=False)
        else:
            self.status_text = f"found {message.text!r}"
        self._show_header()

    # -- search and close -------------------------------------------------------------------
    def action_open_search(self) -> None:
        view = self.query_one(LogView)
        if not view.scanned:
            return
        search = self.query_one("#log-viewer-search", Input)
        search.add_class("-open")
        search.value = view.search_text
        search.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        text = message.value
        self._close_search()
        if text:
            self.status_text = f"searching {text!r}…"
            self._show_header()
            self.query_one(LogView).search(text)

    def _close_search(self) -> None:
        self.query_one("#log-viewer-search", Input).remove_class("-open")
        self.query_one(LogView).focus()

    def action_close(self) -> None:
        if self.query_one("#log-viewer-search", Input).has_class("-open"):
            self._close_search()  # escape in the search box closes only the box
        else:
            self.dismiss(None)
