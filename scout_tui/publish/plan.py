"""What publishing will do, computed before anything is sent (SPEC §2.4).

The plan is what the confirmation modal and `publish --dry-run` show; the GitHub layer
executes it step by step, journaling each step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from scout_tui.analysis.text.markdown import (
    bare_url,
    code,
    cut_lists,
    cut_to,
    more,
    neutralize,
    neutralize_line,
)
from scout_tui.config.models import Config
from scout_tui.github.api import BoardItem
from scout_tui.model import (
    MATERIAL_CHANGES,
    PRIORITIZED,
    SECTIONS,
    Finding,
    RunResult,
    Status,
    item_digest,
)
from scout_tui.report.board import DRAFT_SOURCE, BoardIndex, Scout, board_index
from scout_tui.report.render import COMMENT_LIMIT, marker, report_order

TITLE_LIMIT = 120  # the finding's words in a draft's title
DRAFT_TITLE_LIMIT = 256  # GitHub's, prefix and priority included


@dataclass(frozen=True)
class Draft:
    fingerprint: str
    title: str
    body: str


@dataclass(frozen=True)
class StatusLine:
    """A dated line for the draft of a carried finding whose situation changed. `digest`
    keys the change (the finding's items and the kind of change, never its wording): the
    draft keeps it as a hidden marker, so no box and no rewording adds the line twice."""

    fingerprint: str
    title: str
    text: str
    digest: str

    @property
    def marker(self) -> str:
        return status_marker(self.digest)


@dataclass(frozen=True)
class Step:
    description: str
    state: str = "planned"  # planned | skipped — <reason> | done


@dataclass
class PublishPlan:
    date: date
    report: str
    tracking_issue: int
    drafts: list[Draft] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    status_lines: list[StatusLine] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)

    def summary(self) -> str:
        drafts = len(self.drafts)
        parts = [
            f"1 comment on #{self.tracking_issue}",
            f"{drafts} Backlog draft{'s' if drafts != 1 else ''}",
        ]
        if self.status_lines:
            lines = len(self.status_lines)
            parts.append(f"{lines} status line{'s' if lines != 1 else ''} on existing drafts")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} already on the board (no new draft)")
        return ", ".join(parts)


def draft_title(config: Config, finding: Finding) -> str:
    short = " ".join(finding.title.replace("`", "").split())
    if len(short) > TITLE_LIMIT:
        short = short[: TITLE_LIMIT - 1].rstrip() + "…"
    priority = f"[{finding.priority.value}]" if finding.priority else ""
    title = f"{config.board.title_prefix}{priority} {short}"
    if len(title) > DRAFT_TITLE_LIMIT:
        title = title[: DRAFT_TITLE_LIMIT - 1].rstrip() + "…"
    return title


def draft_body(config: Config, finding: Finding, report_date: date, comment_url: str | None) -> str:
    """The draft's body, within GitHub's limit: when the whole does not fit, lists are cut
    to `[report] max_list_items`, then the problem and the fix to their share of the room."""
    files = ", ".join(
        code(f"{ref.path}:{ref.line}" if ref.line else ref.path) for ref in finding.files[:10]
    )
    report = bare_url(comment_url) if comment_url else "linked once the report comment is posted"
    references = [f"- Report: {report}"]
    if files:
        references.append(f"- Files: {files}")
    references += [f"- {bare_url(url)}" for url in finding.evidence.urls]
    problem = neutralize(finding.body.strip() or finding.title)
    fix = neutralize(finding.suggested_fix.strip() or "See the report for the evidence.")
    body = _draft_body(finding, report_date, problem, fix, references)
    if len(body) <= COMMENT_LIMIT:
        return body
    cut = config.report.max_list_items
    problem, fix = cut_lists(problem, cut), cut_lists(fix, cut)
    if len(references) > cut:
        references = [*references[:cut], f"- {more(len(references) - cut)}"]
    rest = len(_draft_body(finding, report_date, "", "", references))
    share = (COMMENT_LIMIT - rest) // 2
    fix = cut_to(fix, share)
    problem = cut_to(problem, COMMENT_LIMIT - rest - len(fix))
    return _draft_body(finding, report_date, problem, fix, references)


def _draft_body(
    finding: Finding, report_date: date, problem: str, fix: str, references: list[str]
) -> str:
    priority = finding.priority.value if finding.priority else "none"
    return "\n".join(
        [
            f"{DRAFT_SOURCE}{report_date.isoformat()}",
            f"Priority: {priority}",
            f"Section: {SECTIONS[finding.section].heading}",
            "",
            "## Problem",
            "",
            problem,
            "",
            "## Suggested Fix",
            "",
            fix,
            "",
            "## References",
            "",
            *references,
            "",
            marker(finding),
        ]
    )


def wants_draft(finding: Finding) -> bool:
    """A new Action Item — or one the reviewer promoted into Action Items today — with no
    board item yet."""
    return (
        finding.board_item
        and finding.board is None
        and finding.section in PRIORITIZED
        and (finding.status is Status.NEW or finding.decision == "promoted")
    )


def status_marker(digest: str) -> str:
    return f"<!-- scout:status={digest} -->"


def material_change(finding: Finding) -> str | None:
    """Which of MATERIAL_CHANGES a carried finding went through since the prior report."""
    update = finding.status_update or ""
    if finding.status is not Status.CARRIED:
        return None
    return next((change for change in MATERIAL_CHANGES if update.startswith(change)), None)


def status_lines(
    config: Config,
    report_date: date,
    findings: Sequence[Finding],
    draft_bodies: Mapping[str, str],
    journaled: frozenset[str] = frozenset(),
) -> list[StatusLine]:
    """The status lines due: `draft_bodies` are scout's own drafts' bodies by fingerprint;
    `journaled`, the digests this state dir already wrote."""
    due = []
    for finding in findings:
        body = draft_bodies.get(finding.fingerprint)
        change = material_change(finding)
        if body is None or change is None:
            continue
        key = "\x1f".join([change, *sorted({item_digest(item) for item in finding.items})])
        digest = hashlib.sha1(key.encode()).hexdigest()[:12]
        if digest in journaled or status_marker(digest) in body:
            continue
        update = neutralize_line(finding.status_update or "")
        text = f"**Status {report_date.isoformat()}:** {update}"
        due.append(StatusLine(finding.fingerprint, draft_title(config, finding), text, digest))
    return due


def with_status_line(body: str, line: StatusLine) -> str:
    """The draft's body as it is (a person's edits included), the line added at its end."""
    return f"{body.rstrip()}\n\n{line.text}\n{line.marker}"


def build_plan(
    config: Config,
    report_date: date,
    report: str,
    findings: Sequence[Finding],
    board: BoardIndex | None = None,
    draft_bodies: Mapping[str, str] | None = None,
    journaled: frozenset[str] = frozenset(),
) -> PublishPlan:
    """`board`: the board's items; a finding that has one is a duplicate, not a new draft.
    `draft_bodies`: scout's own drafts by fingerprint, for their status lines."""
    plan = PublishPlan(report_date, report, config.project.tracking_issue)
    plan.status_lines = status_lines(config, report_date, findings, draft_bodies or {}, journaled)
    sections = list(SECTIONS)
    # Drafts in the report's order (section, then `report_order`): the plan, the dry run and
    # the board list them as the report does.
    in_order = sorted(findings, key=lambda f: (sections.index(f.section), report_order(f)))
    for finding in in_order:
        if not wants_draft(finding):
            continue
        title = draft_title(config, finding)
        if board is not None and board.item_for(finding.fingerprint, title) is not None:
            plan.duplicates.append(title)
            continue
        plan.drafts.append(
            Draft(finding.fingerprint, title, draft_body(config, finding, report_date, None))
        )
    issue = config.project.tracking_issue
    project = f"{config.board.owner}/projects/{config.board.number}"
    plan.steps = [
        Step(f"post or update today's report comment on #{issue}"),
        *(Step(f"create draft on {project}: {d.title}") for d in plan.drafts),
        *(Step(f"set Status = {config.board.backlog_option}: {d.title}") for d in plan.drafts),
        *(Step(f"add a status line to the draft: {line.title}") for line in plan.status_lines),
        Step("link each action item in the comment to its board item"),
    ]
    return plan


def plan_against_board(
    config: Config,
    run: RunResult,
    report: str,
    items: list[BoardItem] | None,
    scout: Scout | None,
    journaled: frozenset[str] = frozenset(),
) -> PublishPlan:
    """The plan, with board items (when known) as duplicates rather than new drafts, and
    the status lines scout's drafts are due (`journaled`: the digests already written)."""
    index = board_index(items, scout) if items is not None else None
    bodies = updatable_drafts(index.drafts) if index is not None else {}
    return build_plan(config, run.date, report, run.findings, index, bodies, journaled)


def updatable_drafts(drafts: dict[str, BoardItem]) -> dict[str, str]:
    """Scout's drafts whose body can be updated (GitHub gave their draft id), by fingerprint."""
    return {fp: item.body for fp, item in drafts.items() if item.draft_id}
