"""Edit a finding's title, priority and body; saved as one undoable decision."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label, Select, TextArea

from scout_tui.model import Finding, Priority
from scout_tui.tui.edit_document import Edited
from scout_tui.tui.screens.modal import Modal
from scout_tui.tui.widgets.key_footer import KeyFooter

NO_PRIORITY = "none"


class EditFinding(Modal[Edited | None]):
    ENTER_ANSWERS = False  # a new line in the text
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", id="edit_save", priority=True),
        Binding("escape", "cancel", "Cancel", id="edit_cancel"),
    ]

    def __init__(self, finding: Finding) -> None:
        super().__init__()
        self.finding = finding

    def compose(self) -> ComposeResult:
        finding = self.finding
        with Vertical(classes="dialog wide tall"):
            yield Label("Edit (ctrl+s saves, escape cancels)")
            yield Label("Title")
            # The cursor at the end, nothing selected: the first key typed adds to the title.
            yield Input(finding.title, id="edit-title", select_on_focus=False)
            yield Label("Priority")
            options = [(p.value, p.value) for p in Priority] + [("no priority", NO_PRIORITY)]
            yield Select(
                options,
                value=finding.priority.value if finding.priority else NO_PRIORITY,
                allow_blank=False,
                id="edit-priority",
            )
            yield Label("Body (Markdown)")
            yield TextArea(finding.body, id="edit-body")
        yield KeyFooter()  # this dialog's keys, not the tree's behind it

    def action_save(self) -> None:
        title = self.query_one("#edit-title", Input).value
        if not title.strip():
            self.notify("a title cannot be empty", severity="warning")
            self.declined()
            return
        chosen = self.query_one("#edit-priority", Select).value
        priority = None if chosen == NO_PRIORITY else Priority(str(chosen))
        self.answer(Edited(title, priority, self.query_one("#edit-body", TextArea).text))

    def action_cancel(self) -> None:
        self.answer(None)
