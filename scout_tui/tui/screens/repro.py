"""Before a repro runs: what it will start, where, on how many GPUs. It may take every GPU
of the box, so it is asked, never assumed."""

from __future__ import annotations

import re

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from scout_tui.errors import visible

_NGPU = re.compile(r"(?:^|\s)NGPU=(\d+)")


def gpus_asked(command: str) -> str:
    found = _NGPU.search(command)
    return f"{found.group(1)} GPU(s)" if found else "as many GPUs as its script defaults to"


class ConfirmRepro(ModalScreen[bool]):
    BINDINGS = [
        Binding("y,enter", "run", "Run", id="repro_run"),
        Binding("n,escape", "cancel", "Cancel", id="repro_cancel"),
    ]

    def __init__(self, command: str, cwd: str) -> None:
        super().__init__()
        self.command, self.cwd = command, cwd

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Run this repro here?", classes="dialog-title")
            # Literal text, never markup: the command is data.
            yield Static(Text(f"$ {visible(self.command)}"), id="repro-command")
            yield Static(Text(f"in {visible(self.cwd)}"))
            yield Static(
                f"It starts {gpus_asked(self.command)} on this machine, and may "
                "take every GPU it has."
            )
            yield Static(
                "Output streams into the log pane; r stops it (the whole process "
                "group: torchrun's workers too)."
            )
            yield Label("y/enter runs · n/escape cancels")

    def action_run(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)
