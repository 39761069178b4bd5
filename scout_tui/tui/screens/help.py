"""`?`: every action with its key (as rebound by `[keys]`), and how copying works. One line
per key where the width allows, drawn as one Rich table: no Markdown to parse on the way."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from scout_tui.tui.keys import ACTIONS, shown_key
from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.widgets.key_footer import KeyFooter

COPY_NOTE = (
    "Copying (c, and o without a display) uses OSC 52, which works over SSH. Inside "
    "tmux it needs `set -g set-clipboard on` in ~/.tmux.conf; terminals that ignore OSC "
    "52 can select the command in the log pane instead."
)
FILTER_NOTE = (
    "Words match title, body and files (case-insensitive); the tokens p0 p1 p2 new carried "
    'dropped unreviewed narrow further (in quotes, "new" is a word); escape clears it. '
    "Marked findings (space; * marks the filter's result) take bulk accept, drop, demote "
    "and promote; a filter hides marks, never drops them."
)
MORE_KEYS = (
    ("tab", "", "move focus between the panes"),
    ("enter", "", "open or close a section"),
    ("ctrl+p", "palette", "every action by name"),
    ("ctrl+q", "", "quit, as q does (so does ctrl+c)"),
)


def key_rows(keys: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(key as typed, action id, what it does), in the order of ACTIONS."""
    rows = [
        (shown_key(keys.get(action.id, action.key)), action.id, action.help)
        for action in ACTIONS.values()
    ]
    return rows + list(MORE_KEYS)


WITH_IDS = 90  # narrower than this, the ids (for `[keys]`) go: a key and its line fit


def help_text(keys: Mapping[str, str], width: int = WITH_IDS) -> Group:
    """The help for a dialog `width` cells wide."""
    ids = width >= WITH_IDS
    table = Table(box=None, show_header=False, pad_edge=False, expand=True, padding=(0, 1))
    table.add_column(style="bold", no_wrap=True)
    if ids:
        table.add_column(style="dim", no_wrap=True)
    table.add_column(ratio=1)
    for key, action, what in key_rows(keys):
        table.add_row(key, action, what) if ids else table.add_row(key, what)
    return Group(
        Text("Keys (escape closes)", style="bold underline"),
        Text(
            "The triage keys act on the tree (tab back to it)."
            + ("" if ids else " Wider, this shows each action's id for [keys]."),
            style="dim",
        ),
        table,
        Text(),
        Text("Filter", style="bold underline"),
        Text(FILTER_NOTE),
        Text(),
        Text("Copying", style="bold underline"),
        Text(COPY_NOTE),
    )


class HelpScreen(Modal[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="help_close")]

    def __init__(self, bindings: Mapping[str, ActiveBinding]) -> None:
        """`bindings`: the app's active ones as `?` is pressed (`[keys]` rebinds them)."""
        super().__init__()
        self.keys = {a.binding.id: key for key, a in bindings.items() if a.binding.id}

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide tall"):
            # The dialog is 90% of the screen, less its border and padding.
            width = self.app.size.width * 9 // 10 - 6
            yield Static(help_text(self.keys, width), id="help-text")
        yield KeyFooter()  # this modal's keys, over the tree's (which do nothing here)

    def action_close(self) -> None:
        self.answer(None)
