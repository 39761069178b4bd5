"""What the publish confirmation and the dry run say, as data and as Markdown: computed in a
worker, shown by `screens/publish.py` (which loads Textual's Markdown widget only when a
publish is confirmed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    reviewed: int = 0  # findings reviewed (All Clear lines need none)


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
        lines.append(f"- {len(plan.duplicates)} already on the board (no new draft):")
        lines += [f"  - {title}" for title in plan.duplicates[:8]]
    if proposal.board_note:
        lines.append(f"- the board was not checked for duplicates: {proposal.board_note}")
    if proposal.problems:
        lines += ["", "**The run is partial** (R collects again):"]
        lines += [f"- {problem}" for problem in proposal.problems]
    if proposal.unreviewed and not proposal.reviewed:
        lines += [
            "",
            f"**{proposal.unreviewed} finding(s) not yet reviewed** would go out as "
            "they are; none is reviewed yet, so there is no reviewed-only report.",
        ]
    elif proposal.unreviewed:
        lines += [
            "",
            f"**{proposal.unreviewed} finding(s) not yet reviewed** would go out as "
            f"they are; `r` publishes the {proposal.reviewed} reviewed one(s) only "
            f"({len(proposal.reviewed_plan.drafts)} draft(s)).",
        ]
    return "\n".join(lines)
