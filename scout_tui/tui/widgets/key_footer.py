"""Textual's Footer, fitted to the terminal: the keys that do not fit go, the last shown
first, never help, quit and close — at 80 columns over SSH they still show."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

ALWAYS = ("help", "quit", "close")  # what a person must find at any width: out, and help


class KeyFooter(Footer):
    def compose(self) -> ComposeResult:
        widgets: list[Widget] = list(super().compose())
        keys = [w for w in widgets if isinstance(w, FooterKey)]
        if len(keys) != len(widgets):  # a key group: Textual's own layout
            yield from widgets
            return
        room = self._composed_for = self.app.size.width
        kept = list(keys)
        while sum(_width(key) for key in kept) > room:
            droppable = [key for key in kept[:-1] if key.action.rsplit(".", 1)[-1] not in ALWAYS]
            if not droppable:
                break
            kept.remove(droppable[-1])
        self.styles.grid_size_columns = len(kept)
        yield from kept

    _composed_for = -1  # the width the keys were fitted to

    def on_resize(self) -> None:
        if self.app.size.width != self._composed_for:  # not again at the same width
            self.call_after_refresh(self.recompose)


def _width(key: FooterKey) -> int:
    """What a key takes on the line: its key, its word and a cell of padding each side."""
    return len(key.key_display) + len(key.description) + 3
