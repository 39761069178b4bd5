"""Drop asks why: the reason is remembered, so the finding is not proposed again."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.widgets.key_footer import KeyFooter


class DropReason(Modal[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="drop_cancel")]

    def __init__(self, what: str) -> None:
        super().__init__()
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(f"Drop {self.what}: why? It is remembered."))
            yield Label("enter drops · escape cancels", id="drop-hint")
            yield Input(placeholder="e.g. not our code; fixed upstream", id="reason")
        yield KeyFooter()  # this dialog's keys, not the tree's behind it

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.value.strip():
            self.answer(event.value.strip())
        else:  # said in the dialog itself: a toast would sit behind it
            self.query_one("#drop-hint", Label).update(
                Text("a drop needs a reason: type why (escape cancels)", style="bold yellow")
            )
            self.declined()

    def action_cancel(self) -> None:
        self.answer(None)
