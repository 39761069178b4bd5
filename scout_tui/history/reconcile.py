"""Today's findings reconciled with prior reports (SPEC §2.2): new, carried forward with a
status update, left out as unchanged news, or — for what is gone — judged (`judge`). Which
prior item is which finding is `match`'s. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from scout_tui.collect.base import Kind, Lifetime, Placement, all_kinds, spec_of
from scout_tui.history.items import Items
from scout_tui.history.judge import Judge, PriorCheck
from scout_tui.history.match import (
    FUZZY_THRESHOLD,
    absorb,
    backticked,
    match_report,
    named_items,
    tokens,
)
from scout_tui.model import (
    PARTIAL_FIX,
    PRIORITIZED,
    SECTIONS,
    WORSENED,
    Finding,
    PriorItem,
    PriorReport,
    QuietMark,
    Section,
    Status,
    set_digest,
)

# What a carried item that did not change says, when its rule says nothing else: the first
# report gave its detail, the console and the JSON keep it.
UNCHANGED = "no change since {first_reported}"


@dataclass
class Reconciled:
    findings: list[Finding]
    suppressed: list[str] = field(default_factory=list)
    quiet: list[QuietMark] = field(default_factory=list)  # what the suppressed went quiet as
    left_out: list[Finding] = field(default_factory=list)  # the suppressed findings


def status_update(finding: Finding, prior: PriorItem, items: Items) -> str:
    """ "no change", "partial fix landed" or "situation worsened", from the evidence."""
    if prior.item_digests is not None:
        added, removed = items.compared(prior.item_digests)
    else:
        # A report without markers: compare with the items it names in backticks, if any.
        mentioned = backticked(prior.text)
        named = set(named_items(finding, prior, items.said)) | {
            item for item in finding.items if items.said[item].lower() in mentioned
        }
        if finding.items and not named:
            return (
                f"still present ({len(finding.items)} now; the prior report named none of "
                "them one by one)"
            )
        added = [items.said[item] for item in finding.items if item not in named]
        removed = 0
    if added:
        names = ", ".join(f"`{name}`" for name in added[:5])
        extra = f", {removed} fixed" if removed else ""
        return f"{WORSENED}: {len(added)} new ({names}){extra}"
    if removed:
        return f"{PARTIAL_FIX}: {removed} of {removed + len(items)} fixed"
    return "no change"


def _unchanged(finding: Finding, prior: PriorItem, items: Items) -> bool:
    if prior.item_digests is not None:
        return items.same_as(prior.item_digests)
    return status_update(finding, prior, items) == "no change"


def reconcile(
    findings: Sequence[Finding],
    priors: Sequence[PriorReport],
    *,
    fyi_suppress_after: int,
    completed_kinds: Iterable[str],
    unchanged_lines: dict[str, str] | None = None,
    unchecked: Iterable[str] = (),
    kinds: Mapping[str, Kind] | None = None,
    recheck: Callable[[frozenset[str]], PriorCheck | None] | None = None,
    resolved_section: Section = Section.ALL_CLEAR,
    inventories: frozenset[str] = frozenset(),
    unreported: frozenset[str] = frozenset(),
) -> Reconciled:
    """Mark findings new / carried, add resolved lines, leave out repeated unchanged FYIs.

    `completed_kinds` are the kinds whose collector ran to the end today: a prior item is
    only called resolved when the collector that would find it actually looked — and not
    when its fingerprint is `unchecked` (the check could not read what it looks at). A
    state of the tree is Resolved only on evidence: `recheck(kinds)` runs those kinds'
    checks on the commit the latest prior report scanned (asked once, only when an item of
    those kinds is gone today), and the item must be found there.

    `inventories` are the kinds reported only when they grow: an item the last report that
    listed one did not have brings it back; no new item leaves it out at once, quiet.
    `unreported` kinds are always left out (the run's JSON keeps them).
    """
    known = all_kinds() if kinds is None else kinds

    def spec(kind: str) -> Kind:
        return spec_of(known, kind)

    def lifetime(kind: str) -> Lifetime:
        return spec(kind).lifetime

    reports = sorted(priors, key=lambda report: report.date)
    items = [Items.of(finding, spec(finding.kind)) for finding in findings]
    matches = [match_report(findings, report) for report in reports]
    absorbed = [
        absorb(findings, report, m, known) for report, m in zip(reports, matches, strict=True)
    ]
    went_quiet = {mark.fingerprint: mark for mark in reports[-1].quiet} if reports else {}
    out: list[Finding] = []
    quiet = Reconciled([])
    for index, finding in enumerate(findings):
        if finding.kind in unreported:
            quiet.left_out.append(finding)
            continue
        hits = [
            (report, m[index]) for report, m in zip(reports, matches, strict=True) if index in m
        ]
        parts = [
            (report, item)
            for report, a in zip(reports, absorbed, strict=True)
            for item in a.get(index, [])
        ]
        mark = next(
            (went_quiet[fp] for fp in (finding.fingerprint, *finding.aliases) if fp in went_quiet),
            None,
        )
        listed_latest = bool(reports) and index in matches[-1]
        if mark is not None and not listed_latest:  # left out by the latest report
            first = min(
                [
                    mark.first_reported or mark.since,
                    *(item.first_reported or report.date for report, item in hits),
                ]
            )
            inventory = finding.kind in inventories
            if (
                _within(mark, items[index])
                if inventory
                else finding.section is Section.FYI and _same_items(mark, items[index])
            ):
                carried = _carried(finding, first, "no change", unchanged_lines)
                _leave_out(quiet, carried, mark.since, items[index], whole=inventory)
            else:  # it changed while left out: back, saying how
                first_mark = mark.model_copy(update={"first_reported": first})
                out.append(_back(finding, first_mark, items[index]))
            continue
        if not hits and parts:
            out.append(_carried_in_part(finding, parts, items[index].said))
            continue
        if not hits:
            out.append(finding)
            continue
        first = min(item.first_reported or report.date for report, item in hits)
        if lifetime(finding.kind) is Lifetime.NEWS:  # its key is reused by tomorrow's news
            first = hits[-1][1].first_reported or hits[-1][0].date
        latest = hits[-1][1]
        # Something that just happened (a blocker merged, a PR merged) matching a prior item
        # about the thing's earlier state ("blocked on #N"): that item is followed up, not
        # resolved, and the news stays new.
        if spec(finding.kind).follows_up and latest.fingerprint != finding.fingerprint:
            follows = f"follows up “{latest.title}”, reported since {first.isoformat()}"
            out.append(finding.model_copy(update={"status_update": follows}))
            continue
        if (
            lifetime(finding.kind) is Lifetime.NEWS
            and index in matches[-1]
            and finding.section not in PRIORITIZED
            and latest.item_digests is not None
            and items[index].within(latest.item_digests)
        ):
            # Awareness all of which was said yesterday (its window still holds it): said once.
            # An Action Item stays, carried, while the window holds it.
            quiet.left_out.append(finding)
            continue
        update = status_update(finding, latest, items[index])
        if lifetime(finding.kind) is Lifetime.NEWS and update.startswith((WORSENED, PARTIAL_FIX)):
            out.append(finding)  # news with other items is today's news, not a fix or a worsening
            continue
        carried = _carried(finding, first, update, unchanged_lines)
        if (
            finding.kind in inventories
            and index in matches[-1]
            and latest.item_digests is not None
            and items[index].within(latest.item_digests)
        ):
            _leave_out(quiet, carried, hits[-1][0].date, items[index], whole=True)
            continue
        recent = list(zip(reports, matches, strict=True))[-fyi_suppress_after:]
        if (
            finding.section is Section.FYI
            and len(recent) >= fyi_suppress_after
            and all(
                index in m
                and m[index].section is Section.FYI
                and _unchanged(finding, m[index], items[index])
                for _, m in recent
            )
        ):
            _leave_out(quiet, carried, hits[-1][0].date, items[index])
            continue
        out.append(carried)
    if reports:
        kept = [item for items in absorbed[-1].values() for item in items]  # still there
        judge = Judge(
            frozenset(completed_kinds),
            frozenset(unchecked),
            known,
            findings,
            resolved_at=Placement(resolved_section),
        )
        gone = _gone(reports[-1], [*matches[-1].values(), *kept])
        dropped = _dropped_by_hand(reports, matches, absorbed, out)
        judge.check_on_prior_commit(recheck, [item for item in gone + [d for _, d in dropped]])
        out.extend(judge.resolved(reports[-1], gone))
        out.extend(judge.dropped(reports[-1], dropped))
    return Reconciled(out, quiet.suppressed, quiet.quiet, quiet.left_out)


def _carried(
    finding: Finding, first: date, update: str, unchanged_lines: dict[str, str] | None
) -> Finding:
    section = finding.section
    if section is Section.ACTION_ITEMS:
        section = Section.CARRIED_FORWARD
    template = (unchanged_lines or {}).get(finding.kind)
    if template is None and section is not Section.CI_FAILURES:
        template = UNCHANGED  # a standing item is one line a day; its detail is known
    one_line = (
        template.format(first_reported=first.isoformat())
        if (template and update == "no change")
        else None
    )
    return finding.model_copy(
        update={
            "status": Status.CARRIED,
            "first_reported": first,
            "status_update": update,
            "section": section,
            "unchanged_line": one_line,
        }
    )


QUIET_ITEMS = 12  # a quiet item with more travels as one digest of them and a count


def _leave_out(
    quiet: Reconciled, finding: Finding, since: date, items: Items, *, whole: bool = False
) -> None:
    """An unchanged FYI left out of the report; its quiet state travels in the report, each
    item's digest when `whole` (an inventory's growth is judged item by item)."""
    quiet.suppressed.append(finding.fingerprint)
    quiet.left_out.append(finding)
    digests = items.digests()
    many = len(digests) > QUIET_ITEMS and not whole
    quiet.quiet.append(
        QuietMark(
            fingerprint=finding.fingerprint,
            item_digests=[] if many else sorted(digests),
            since=since,
            first_reported=finding.first_reported,
            set_digest=set_digest(digests) if many else None,
            count=len(digests) if many else None,
        )
    )


def _within(mark: QuietMark, items: Items) -> bool:
    """No item the quiet mark does not name (a mark of a whole set: the same set)."""
    if mark.set_digest is not None:
        return items.same_set(mark.set_digest)
    return items.within(mark.item_digests)


def _same_items(mark: QuietMark, items: Items) -> bool:
    if mark.set_digest is not None:
        return items.same_set(mark.set_digest)
    return items.same_as(mark.item_digests)


def _back(finding: Finding, mark: QuietMark, items: Items) -> Finding:
    """A finding left out as unchanged that changed since: back in the report, saying how."""
    before = PriorItem(
        section=Section.FYI, title=finding.title, text="", item_digests=mark.item_digests
    )
    update = (
        status_update(finding, before, items)
        if mark.set_digest is None
        else f"its items changed ({mark.count} then, {len(set(finding.items))} now)"
    )
    if update == "no change":  # the same items, in another section now
        update = "moved"
    first = mark.first_reported or mark.since
    return finding.model_copy(
        update={
            "status": Status.CARRIED,
            "first_reported": first,
            "status_update": f"{update} since it was left out as unchanged "
            f"(last listed {mark.since.isoformat()})",
            "section": Section.CARRIED_FORWARD
            if finding.section is Section.ACTION_ITEMS
            else finding.section,
        }
    )


def _gone(latest: PriorReport, found_again: list[PriorItem]) -> list[PriorItem]:
    """The latest report's items not found again today (in sections that can resolve)."""
    still_there = {id(item) for item in found_again}
    return [
        item
        for item in latest.items
        if SECTIONS[item.section].resolvable and id(item) not in still_there
    ]


def _dropped_by_hand(
    reports: list[PriorReport],
    matches: list[dict[int, PriorItem]],
    absorbed: list[dict[int, list[PriorItem]]],
    so_far: list[Finding],
) -> list[tuple[PriorReport, PriorItem]]:
    """Hand-written action items of earlier reports that the latest report no longer
    mentions and scout does not find: a person dropped them without saying they were fixed.
    Judged like the latest report's items rather than lost."""
    latest = reports[-1]
    titles = {f.title.lower() for f in so_far}
    dropped = []
    for report, matched, taken in zip(reports[:-1], matches[:-1], absorbed[:-1], strict=True):
        seen = {id(i) for i in matched.values()} | {id(i) for v in taken.values() for i in v}
        for item in report.items:
            if (
                item.fingerprint is not None
                or id(item) in seen
                or item.section not in PRIORITIZED
                or item.priority is None
            ):
                continue
            if item.title.lower() in titles or any(
                tokens(item.title)
                and len(tokens(item.title) & tokens(later.title))
                / len(tokens(item.title) | tokens(later.title))
                >= FUZZY_THRESHOLD
                for later in latest.items
            ):
                continue  # the latest report still has it, in its own words
            dropped.append((report, item))
            titles.add(item.title.lower())
    return dropped


def _carried_in_part(
    finding: Finding, parts: list[tuple[PriorReport, PriorItem]], said: Mapping[str, str]
) -> Finding:
    """A grouped finding some of whose items hand-written reports named: carried, from the
    earliest of those; the items no report named are new."""
    first = min(item.first_reported or report.date for report, item in parts)
    named = {name for _, item in parts for name in named_items(finding, item, said)}
    new = [said[name] for name in finding.items if name not in named]
    known = ", ".join(f"`{said[n]}`" for n in finding.items if n in named)
    update = f"carried for {known}" + (
        f"; new: {', '.join(f'`{n}`' for n in new[:5])}"
        + (f" (+{len(new) - 5} more)" if len(new) > 5 else "")
        if new
        else ""
    )
    section = (
        Section.CARRIED_FORWARD if finding.section is Section.ACTION_ITEMS else finding.section
    )
    return finding.model_copy(
        update={
            "status": Status.CARRIED,
            "first_reported": first,
            "status_update": update,
            "section": section,
        }
    )
