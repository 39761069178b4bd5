"""The finding's diff: a unified diff, or the before/after of a signature or dataclass,
highlighted by Pygments through Rich."""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widgets import Static

from scout_tui.model import Finding


class DiffPane(VerticalScroll, can_focus=True):
    BORDER_TITLE = "Diff"

    def compose(self):
        yield Static(id="diff-body")

    _shown: str | None = None  # the diff shown

    def show(self, finding: Finding | None) -> bool:
        """True when the finding has a diff (the pane is shown only then). Long lines wrap:
        the end of a signature is what changed, and the pane does not scroll sideways."""
        diff = finding.evidence.diff if finding is not None else None
        if diff and diff != self._shown:  # the same again (a zoom): kept as scrolled
            from rich.syntax import Syntax  # Pygments: with the first diff shown

            self._shown = diff
            self.query_one(Static).update(
                Syntax(diff, "diff", theme="ansi_dark", word_wrap=True, background_color="default")
            )
            self.scroll_home(animate=False)
        return bool(diff)
