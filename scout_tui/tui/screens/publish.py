"""Publishing from the console: a confirmation that says exactly what will happen, then the
publish with its progress and, when done, the links and what GitHub now holds."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Label, Static

from scout_tui.tui.proposal import PublishProposal, proposal_markdown
from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.widgets.key_footer import KeyFooter

CONFIRM_KEYS = "y/enter publish · r reviewed only · d dry run (escape comes back) · n/escape cancel"


class ConfirmPublish(Modal[str | None]):
    """Dismissed with "all", "reviewed", "dry" or None."""

    BINDINGS = [
        Binding("y,enter", "choose('all')", "Publish", id="publish_yes"),
        Binding("r", "choose('reviewed')", "Reviewed only", id="publish_reviewed"),
        Binding("d", "choose('dry')", "Dry run", id="publish_dry_run"),
        Binding("n,escape", "choose(None)", "Cancel", id="publish_cancel"),
    ]

    def __init__(self, proposal: PublishProposal) -> None:
        super().__init__()
        self.proposal = proposal

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # markdown-it: loaded when a publish is asked

        with Vertical(classes="dialog wide tall", id="publish-confirm"):
            yield VerticalScroll(Markdown(proposal_markdown(self.proposal)))
            if self.proposal.unreviewed:  # beside the keys: enter publishes them too
                only = (
                    "r: the reviewed ones only"
                    if self.proposal.reviewed
                    else "none is reviewed yet: no r"
                )
                yield Label(
                    f"{self.proposal.unreviewed} finding(s) not yet reviewed would go out "
                    f"as they are ({only})",
                    id="publish-unreviewed",
                )
            yield Label(CONFIRM_KEYS, id="publish-keys")  # always in view, at 80x24 too
        yield KeyFooter()  # this dialog's keys, not the tree's behind it

    def action_choose(self, choice: str | None) -> None:
        if choice == "reviewed" and not self.proposal.unreviewed:
            choice = "all"
        elif choice == "reviewed" and not self.proposal.reviewed:
            # A reviewed-only report of nothing would replace today's with an empty one.
            self.notify(
                "no finding is reviewed yet: a reviewed-only report would say nothing",
                severity="warning",
                timeout=4,
            )
            self.declined()
            return
        self.answer(choice)


class PublishProgress(Modal[None]):
    """Lines as the publish goes; then the links, and the issue and board as GitHub holds
    them. Closed with escape once it ends (a publish is never left half-way by a key)."""

    BINDINGS = [Binding("escape,q,enter", "close", "Close", id="progress_close")]

    def __init__(self, title: str) -> None:
        super().__init__()
        self.title_text = title
        self.finished = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide tall"):
            yield Label(Text(self.title_text), id="progress-title")
            yield VerticalScroll(Static("", id="progress-lines"), id="progress-scroll")
        yield KeyFooter()

    def add_line(self, line: str) -> None:
        lines = self.query_one("#progress-lines", Static)
        current = str(lines.content)
        lines.update(Text(f"{current}\n{line}" if current else line))
        self.query_one("#progress-scroll", VerticalScroll).scroll_end(animate=False)

    def finish(self, title: str, markdown: str) -> None:
        self.finished = True
        from textual.widgets import Markdown  # markdown-it: loaded when a publish is asked

        self.query_one("#progress-title", Label).update(Text(title + "  (escape closes)"))
        self.query_one("#progress-scroll", VerticalScroll).mount(Markdown(markdown))

    def action_close(self) -> None:
        if self.finished:
            self.answer(None)
        else:
            self.notify("publishing: it finishes on its own (every step is journaled)")
            self.declined()
