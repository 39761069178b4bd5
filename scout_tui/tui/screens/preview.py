"""`p`: the report exactly as it will be published, rendered. The screen opens at once;
a report that takes time to make (thousands of findings, cut to GitHub's limit) is made in
a thread, and shown as one Rich Markdown renderable: no widget per paragraph to lay out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich.console import ConsoleRenderable
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static

from scout_tui.errors import ScoutError, UsageError
from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.widgets.key_footer import KeyFooter


def comment_markdown(markdown: str) -> ConsoleRenderable:
    from scout_tui.tui.comment_markdown import CommentMarkdown  # markdown-it: on first use

    return CommentMarkdown(markdown)


class PreviewScreen(Modal[None]):
    BINDINGS = [Binding("escape,q,p", "close", "Close", id="preview_close")]

    @dataclass
    class Made(Message):
        """The report, or why there is none."""

        markdown: str | None
        error: str | None = None

    def __init__(self, markdown: str | Callable[[], str], title: str = "Report preview") -> None:
        """`markdown`: the text, or how to make it (called in a thread)."""
        super().__init__()
        self.markdown = markdown if isinstance(markdown, str) else ""
        self._make = None if isinstance(markdown, str) else markdown
        self.title_text = title

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide tall") as scroll:
            scroll.border_title = self.title_text
            shown = comment_markdown(self.markdown) if self._make is None else Text("Rendering…")
            yield Static(shown, id="preview-text")
        yield KeyFooter()  # this modal's keys, over the tree's (which do nothing here)

    def on_mount(self) -> None:
        if self._make is not None:
            self._made(self._make)

    @work(thread=True, exit_on_error=False)
    def _made(self, make: Callable[[], str]) -> None:
        try:
            self.post_message(self.Made(make()))
        except (ScoutError, UsageError) as exc:
            self.post_message(self.Made(None, str(exc)))

    def on_preview_screen_made(self, message: Made) -> None:
        text = self.query_one("#preview-text", Static)
        if message.markdown is None:
            text.update(Text(f"No preview: {message.error}", style="bold"))
            return
        self.markdown = message.markdown
        text.update(comment_markdown(message.markdown))

    def action_close(self) -> None:
        self.answer(None)
