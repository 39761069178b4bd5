"""Publishing from the console: a confirmation that says exactly what will happen, then the
publish with its progress and, when done, the links and what GitHub now holds."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Markdown, Static

from scout_tui.publish.plan import PublishPlan


@dataclass(frozen=True)
class PublishProposal:
    """What the confirmation shows; computed in a worker (it reads the board)."""

    plan: PublishPlan
    reviewed_plan: PublishPlan
    target: str  # "pytorch/torchtitan#2856 and pytorch/projects/161 on http://…"
    comment: str  # "a new comment" / "today's comment (URL), edited"
    unreviewed: int
    board_note: str | None  # why duplicates could not be checked, if so
    problems: tuple[str, ...] = ()  # collectors that failed or were skipped


def dry_run_text(proposal: PublishProposal) -> str:
    """The dry run, as the console shows it: what the confirmation says, in its words,
    then the report exactly as it would be posted."""
    said = proposal_markdown(proposal).replace("# Publish", "# Dry run: publish", 1)
    return "\n".join([said, "", "---", "", proposal.plan.report])


def proposal_markdown(proposal: PublishProposal) -> str:
    plan = proposal.plan
    lines = [
        f"# Publish the report of {plan.date}",
        "",
        f"To {proposal.target}:",
        "",
        f"- **{proposal.comment}** on #{plan.tracking_issue}",
        f"- **{len(plan.drafts)} Backlog draft(s)** on the board",
    ]
    lines += [f"  - {draft.title}" for draft in plan.drafts[:12]]
    if len(plan.drafts) > 12:
        lines.append(f"  - … and {len(plan.drafts) - 12} more")
    if plan.status_lines:
        lines.append(f"- **{len(plan.status_lines)} status line(s)** on existing drafts:")
        lines += [f"  - {line.title}: {line.text}" for line in plan.status_lines[:8]]
    if plan.duplicates:
        lines.append(f"- {len(plan.duplicates)} skipped as duplicates of board items:")
        lines += [f"  - {title}" for title in plan.duplicates[:8]]
    if proposal.board_note:
        lines.append(f"- the board was not checked for duplicates: {proposal.board_note}")
    if proposal.problems:
        lines += ["", "**The run is partial** (R collects again):"]
        lines += [f"- {problem}" for problem in proposal.problems]
    if proposal.unreviewed:
        lines += [
            "",
            f"**{proposal.unreviewed} finding(s) not yet reviewed** would go out as "
            f"they are; `r` publishes the reviewed ones only "
            f"({len(proposal.reviewed_plan.drafts)} draft(s)).",
        ]
    return "\n".join(lines)


CONFIRM_KEYS = "y/enter publish · r reviewed only · d dry run (escape comes back) · n/escape cancel"


class ConfirmPublish(ModalScreen[str | None]):
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
        with Vertical(classes="dialog wide tall", id="publish-confirm"):
            yield VerticalScroll(Markdown(proposal_markdown(self.proposal)))
            if self.proposal.unreviewed:  # beside the keys: enter publishes them too
                yield Label(
                    f"{self.proposal.unreviewed} finding(s) not yet reviewed would go out "
                    "as they are (r: the reviewed ones only)",
                    id="publish-unreviewed",
                )
            yield Label(CONFIRM_KEYS, id="publish-keys")  # always in view, at 80x24 too

    def action_choose(self, choice: str | None) -> None:
        if choice == "reviewed" and not self.proposal.unreviewed:
            choice = "all"
        self.dismiss(choice)


class PublishProgress(ModalScreen[None]):
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

    def add_line(self, line: str) -> None:
        lines = self.query_one("#progress-lines", Static)
        current = str(lines.content)
        lines.update(Text(f"{current}\n{line}" if current else line))
        self.query_one("#progress-scroll", VerticalScroll).scroll_end(animate=False)

    def finish(self, title: str, markdown: str) -> None:
        self.finished = True
        self.query_one("#progress-title", Label).update(Text(title + "  (escape closes)"))
        self.query_one("#progress-scroll", VerticalScroll).mount(Markdown(markdown))

    def action_close(self) -> None:
        if self.finished:
            self.dismiss(None)
        else:
            self.notify("publishing: it finishes on its own (every step is journaled)")
