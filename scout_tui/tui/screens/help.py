"""`?`: every action with its key (as rebound by `[keys]`), and how copying works."""

from __future__ import annotations

from collections.abc import Mapping

from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from scout_tui.tui.keys import ACTIONS, shown_key

COPY_NOTE = (
    "Copying (`c`, and `o` without a display) uses OSC 52, which works over SSH. Inside "
    "tmux it needs `set -g set-clipboard on` in `~/.tmux.conf`; terminals that ignore OSC "
    "52 can select the command in the log pane instead."
)


def help_markdown(keys: dict[str, str]) -> str:
    lines = [
        "# Keys (escape closes)",
        "",
        "The triage keys act on the tree (tab back to it); `space` marks and moves down.",
        "",
        "| key | action | what it does |",
        "| --- | --- | --- |",
    ]
    for action in ACTIONS.values():
        key = shown_key(keys.get(action.id, action.key))
        lines.append(f"| `{key}` | {action.id} | {action.help} |")
    lines += [
        "| `tab` | | move focus between the panes |",
        "| `enter` | | open or close a section |",
        "| `ctrl+p` | palette | every action by name |",
        "| `ctrl+q` | | quit |",
        "",
        "# Filter",
        "",
        "Words match title, body and files (case-insensitive); the tokens `p0 p1 p2 "
        "new carried dropped unreviewed` narrow further. Marked findings (`space`) "
        "take bulk accept, drop, demote and promote.",
        "",
        "# Copying",
        "",
        COPY_NOTE,
    ]
    return "\n".join(lines)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close", id="help_close")]

    def __init__(self, bindings: Mapping[str, ActiveBinding]) -> None:
        """`bindings`: the app's active ones as `?` is pressed (`[keys]` rebinds them)."""
        super().__init__()
        self.keys = {a.binding.id: key for key, a in bindings.items() if a.binding.id}

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide tall"):
            yield Markdown(help_markdown(self.keys))

    def action_close(self) -> None:
        self.dismiss(None)
