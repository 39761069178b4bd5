"""Match today's findings with prior reports (SPEC §2.2).

Exact by the hidden fingerprint marker; fuzzy (title tokens and backticked identifiers)
for items in older reports that have none. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

from scout_tui.model import (
    Finding,
    PriorItem,
    PriorReport,
    Section,
    Status,
    fingerprint,
    item_digest,
)

FUZZY_THRESHOLD = 0.5
# An actionable item of the latest report that scout did not find again and could not check
# (its collector did not run, or scout has no check for it: an LLM wrote it) is carried
# forward as "not re-checked", never silently dropped.
UNCHECKED_CARRY = {Section.CI_FAILURES, Section.ACTION_ITEMS, Section.CARRIED_FORWARD}
# Findings that say something just happened (a blocker merged, a PR merged): when they match
# a prior item about the thing's earlier state ("blocked on #N"), that item is followed up,
# not resolved, and the news stays new.
EVENT_KINDS = {"todo_unblocked", "pr_merged_recently"}
RESOLVABLE = {
    Section.CI_FAILURES,
    Section.ACTION_ITEMS,
    Section.CARRIED_FORWARD,
    Section.OPPORTUNITIES,
    Section.FYI,
    Section.DOCS,
}
_WORD = re.compile(r"[a-z0-9_.]{3,}")
_BACKTICKED = re.compile(r"`+([^`]+?)`+")
_STOP = {
    "the", "and", "for", "with", "not", "now", "has", "are", "was", "from", "that", "this",
    "into", "its", "but", "nor", "any", "new", "still", "since", "may", "can", "need", "needs",
}  # fmt: skip


@dataclass
class Reconciled:
    findings: list[Finding]
    suppressed: list[str] = field(default_factory=list)


def _backticked(text: str) -> set[str]:
    return {match.strip().lower() for match in _BACKTICKED.findall(text)}


def _tokens(text: str) -> set[str]:
    text = _BACKTICKED.sub(lambda m: " " + m.group(1) + " ", text.lower())
    return {word.strip(".") for word in _WORD.findall(text)} - _STOP


def similarity(finding: Finding, item: PriorItem) -> float:
    """Title-token Jaccard, plus credit for shared backticked identifiers and paths."""
    mine, theirs = _tokens(finding.title), _tokens(item.title)
    if not mine or not theirs:
        return 0.0
    score = len(mine & theirs) / len(mine | theirs)
    ids_mine = _backticked(finding.title) | {ref.path.lower() for ref in finding.files}
    ids_theirs = _backticked(item.text)
    if ids_mine and ids_theirs:
        score += 0.5 * len(ids_mine & ids_theirs) / len(ids_mine)
    return score


def match_report(findings: Sequence[Finding], report: PriorReport) -> dict[int, PriorItem]:
    """Index of finding → the prior item it is; each prior item matches at most once."""
    candidates = [item for item in report.items if item.section is not Section.ALL_CLEAR]
    matched: dict[int, PriorItem] = {}
    taken: set[int] = set()
    by_fp = {item.fingerprint: n for n, item in enumerate(candidates) if item.fingerprint}
    for index, finding in enumerate(findings):
        n = next((by_fp[fp] for fp in (finding.fingerprint, *finding.aliases)
                  if fp in by_fp and by_fp[fp] not in taken), None)  # fmt: skip
        if n is not None:
            matched[index] = candidates[n]
            taken.add(n)
    scored = sorted(
        (
            (similarity(finding, item), index, n)
            for index, finding in enumerate(findings)
            if index not in matched and finding.section is not Section.ALL_CLEAR
            for n, item in enumerate(candidates)
            if n not in taken and item.fingerprint is None
        ),
        reverse=True,
    )
    for score, index, n in scored:
        if score < FUZZY_THRESHOLD:
            break
        if index in matched or n in taken:
            continue
        matched[index] = candidates[n]
        taken.add(n)
    return matched


def status_update(finding: Finding, prior: PriorItem) -> str:
    """ "no change", "partial fix landed" or "situation worsened", from the evidence."""
    current = {item_digest(item): item for item in finding.items}
    if prior.item_digests is not None:
        before = set(prior.item_digests)
        added = [current[d] for d in sorted(set(current) - before)]
        removed = len(before - set(current))
    else:
        # A report without markers: compare with the items it names in backticks, if any.
        mentioned = _backticked(prior.text)
        if finding.items and not any(item.lower() in mentioned for item in finding.items):
            return f"still present ({len(finding.items)} now; the prior report did not list them)"
        added = [item for item in finding.items if item.lower() not in mentioned]
        removed = 0
    if added:
        names = ", ".join(f"`{name}`" for name in added[:5])
        extra = f", {removed} fixed" if removed else ""
        return f"situation worsened: {len(added)} new ({names}){extra}"
    if removed:
        return f"partial fix landed: {removed} of {removed + len(current)} fixed"
    return "no change"


def _unchanged(finding: Finding, prior: PriorItem) -> bool:
    if prior.item_digests is not None:
        return set(prior.item_digests) == {item_digest(item) for item in finding.items}
    return status_update(finding, prior) == "no change"


def reconcile(
    findings: Sequence[Finding],
    priors: Sequence[PriorReport],
    *,
    fyi_suppress_after: int,
    completed_kinds: Iterable[str],
    all_collectors_completed: bool,
    unchanged_lines: dict[str, str] | None = None,
) -> Reconciled:
    """Mark findings new / carried, add resolved lines, drop repeated unchanged FYIs.

    `completed_kinds` are the kinds whose collector ran to the end today: a prior item is
    only called resolved when the collector that would find it actually looked.
    """
    reports = sorted(priors, key=lambda report: report.date)
    matches = [match_report(findings, report) for report in reports]
    out: list[Finding] = []
    suppressed: list[str] = []
    for index, finding in enumerate(findings):
        hits = [
            (report, m[index]) for report, m in zip(reports, matches, strict=True) if index in m
        ]
        if not hits:
            out.append(finding)
            continue
        first = min(item.first_reported or report.date for report, item in hits)
        latest = hits[-1][1]
        if finding.kind in EVENT_KINDS and latest.fingerprint != finding.fingerprint:
            follows = f"follows up “{latest.title}”, reported since {first.isoformat()}"
            out.append(finding.model_copy(update={"status_update": follows}))
            continue
        recent = list(zip(reports, matches, strict=True))[-fyi_suppress_after:]
        if (
            finding.section is Section.FYI
            and len(recent) >= fyi_suppress_after
            and all(
                index in m and m[index].section is Section.FYI and _unchanged(finding, m[index])
                for _, m in recent
            )
        ):
            suppressed.append(finding.fingerprint)
            continue
        section = finding.section
        if section is Section.ACTION_ITEMS:
            section = Section.CARRIED_FORWARD
        update = status_update(finding, latest)
        template = (unchanged_lines or {}).get(finding.kind)
        one_line = template.format(first_reported=first.isoformat()) if (
            template and update == "no change"
        ) else None  # fmt: skip
        out.append(
            finding.model_copy(
                update={
                    "status": Status.CARRIED,
                    "first_reported": first,
                    "status_update": update,
                    "section": section,
                    "unchanged_line": one_line,
                }
            )
        )
    if reports:
        out.extend(
            _resolved(
                findings, reports[-1], matches[-1], set(completed_kinds), all_collectors_completed
            )
        )
    return Reconciled(out, suppressed)


def _resolved(
    findings: Sequence[Finding],
    latest: PriorReport,
    matched: dict[int, PriorItem],
    completed_kinds: set[str],
    all_completed: bool,
) -> list[Finding]:
    still_there = {id(item) for item in matched.values()}
    resolved = []
    for item in latest.items:
        if item.section not in RESOLVABLE or id(item) in still_there:
            continue
        kind = item.fingerprint.rsplit("-", 1)[0] if item.fingerprint else None
        looked = kind in completed_kinds if kind else all_completed
        since: date = item.first_reported or latest.date
        if not looked:
            if item.section in UNCHECKED_CARRY:
                resolved.append(_unchecked(item, latest, since))
            continue
        resolved.append(
            Finding(
                collector="reconcile",
                kind="resolved",
                title=f"Resolved: {item.title}",
                body=f"first reported {since.isoformat()}, gone as of today",
                section=Section.ALL_CLEAR,
                fingerprint=fingerprint("resolved", item.fingerprint or item.title.lower()),
                status=Status.RESOLVED,
                first_reported=since,
            )
        )
    return resolved


def _unchecked(item: PriorItem, latest: PriorReport, since: date) -> Finding:
    if item.fingerprint and not item.fingerprint.startswith("prior_unchecked-"):
        why = f"its check ({item.fingerprint.rsplit('-', 1)[0]}) did not run today"
    else:
        why = "scout did not find it again and cannot tell whether it is fixed"
    body = (f"From the report of {latest.date.isoformat()}: {why}, so it is carried as it "
            "was. Drop it in triage once it is dealt with.")
    return Finding(
        collector="reconcile",
        kind="prior_unchecked",
        title=item.title,
        body=body,
        section=Section.CARRIED_FORWARD,
        priority=item.priority,
        fingerprint=item.fingerprint if item.fingerprint and item.fingerprint.startswith(
            "prior_unchecked-") else fingerprint("prior_unchecked", item.title.lower()),
        status=Status.CARRIED,
        status_update="not re-checked",
        first_reported=since,
    )
