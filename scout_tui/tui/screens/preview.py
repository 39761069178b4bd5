"""`p`: the report exactly as it will be published, rendered."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown


class PreviewScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,p", "close", "Close", id="preview_close")]

    def __init__(self, markdown: str, title: str = "Report preview") -> None:
        super().__init__()
        self.markdown = markdown
        self.title_text = title

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide tall") as scroll:
            scroll.border_title = self.title_text
            yield Markdown(self.markdown)

    def action_close(self) -> None:
        self.dismiss(None)
