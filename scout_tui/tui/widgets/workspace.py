"""The console's body: the filter (hidden until `/`) and the findings tree on the left, the
finding's panes on the right; `z` shows the focused one alone."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input

from scout_tui.session import Session
from scout_tui.tui.widgets.finding_panes import FindingPanes
from scout_tui.tui.widgets.findings_tree import FindingsTree

# The panes zoom hides for each pane it shows alone.
ZOOM_HIDES = {
    "tree": ["#right"],
    "detail": ["#left", "#diff", "#log"],
    "diff": ["#left", "#detail", "#log"],
    "log": ["#left", "#detail", "#diff"],
}


class Workspace(Horizontal):
    def __init__(self, session: Session, **kwargs) -> None:
        super().__init__(**kwargs)
        self.session = session
        self.zoomed: str | None = None  # the id of the pane zoomed with z

    def compose(self) -> ComposeResult:
        with Vertical(id="left"):
            box = Input(
                placeholder="filter: words, p0 p1 p2 new carried dropped unreviewed", id="filter"
            )
            box.display = False  # until `/`
            yield box
            yield FindingsTree(id="tree")
        yield FindingPanes(self.session, id="right")

    # -- the filter -----------------------------------------------------------------------------
    @property
    def filtering(self) -> bool:
        """The filter is shown (escape clears it)."""
        return self.query_one("#filter", Input).display

    def open_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        # Focused now, not after the keys already read: `/abc` typed in one burst (over
        # SSH it often comes so) is a filter's text, never `a` accepting.
        self.screen.set_focus(box)

    def show_filter(self, text: str) -> None:
        """The filter's text, kept in view while it filters."""
        box = self.query_one("#filter", Input)
        box.value = text
        box.display = bool(text.strip())

    # -- zoom -----------------------------------------------------------------------------------
    def zoom(self) -> None:
        """The focused pane alone, when one is focused."""
        focused = self.screen.focused
        for pane_id in ZOOM_HIDES:
            pane = self.query_one(f"#{pane_id}")
            if focused is not None and (focused is pane or pane in focused.ancestors):
                self.zoomed = pane_id
        if self.zoomed is None:
            return
        for selector in ZOOM_HIDES[self.zoomed]:
            self.query_one(selector).add_class("zoom-hidden")
        if self.zoomed == "tree":
            self.query_one("#left").add_class("zoom-full")

    def unzoom(self) -> None:
        self.zoomed = None
        for widget in self.query(".zoom-hidden, .zoom-full"):
            widget.remove_class("zoom-hidden", "zoom-full")
