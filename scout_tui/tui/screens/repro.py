"""Before a repro runs: what it will start, where, on how many GPUs. It may take every GPU
of the box, so it is asked, never assumed."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Label, OptionList, Static
from textual.widgets.option_list import Option

from scout_tui.analysis.ci.repro import ReproError, gpus_of, repro_argv
from scout_tui.errors import visible
from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.widgets.key_footer import KeyFooter


def gpus_asked(command: str) -> str:
    """The GPUs the repro says it takes (NGPU, torchrun's --nproc-per-node), in words."""
    try:
        count = gpus_of(repro_argv(command))
    except ReproError:
        count = None
    if count is None:
        return "as many GPUs as it takes by default"
    return "1 GPU" if count == 1 else f"{count} GPUs"


class ConfirmRepro(Modal[bool]):
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
        yield KeyFooter()  # this dialog's keys, not the tree's behind it

    def action_run(self) -> None:
        self.answer(True)

    def action_cancel(self) -> None:
        self.answer(False)


class PickTest(Modal[str | None]):
    """Which failing test's repro: a CI failure names several, and the first is not always
    the one a reviewer wants to run."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pick_test_cancel")]

    def __init__(self, tests: list[str], doing: str) -> None:
        super().__init__()
        self.tests, self.doing = tests, doing

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(f"{self.doing}: which failing test?", classes="dialog-title")
            yield OptionList(*(Option(Text(visible(test)), id=test) for test in self.tests))
            yield Label("enter picks · escape cancels")
        yield KeyFooter()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.answer(event.option.id)

    def action_cancel(self) -> None:
        self.answer(None)
