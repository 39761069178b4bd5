"""Match today's findings with prior reports (SPEC §2.2).

Exact by the hidden fingerprint marker; fuzzy (title tokens and backticked identifiers)
for items in older reports that have none. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from scout_tui.collect.base import Kind, Lifetime, Placement, all_kinds, born
from scout_tui.model import (
    PARTIAL_FIX,
    PRIORITIZED,
    SECTIONS,
    WORSENED,
    Evidence,
    Finding,
    PriorItem,
    PriorReport,
    QuietMark,
    Section,
    Status,
    fingerprint,
    item_digest,
    set_digest,
)

FUZZY_THRESHOLD = 0.5
# What a carried item that did not change says, when its rule says nothing else: the first
# report gave its detail, the console and the JSON keep it.
UNCHANGED = "no change since {first_reported}"
_WORD = re.compile(r"[a-z0-9_.]{3,}")
_BACKTICKED = re.compile(r"`+([^`]+?)`+")
_STOP = {
    "the",
    "and",
    "for",
    "with",
    "not",
    "now",
    "has",
    "are",
    "was",
    "from",
    "that",
    "this",
    "into",
    "its",
    "but",
    "nor",
    "any",
    "new",
    "still",
    "since",
    "may",
    "can",
    "need",
    "needs",
}


@dataclass
class Reconciled:
    findings: list[Finding]
    suppressed: list[str] = field(default_factory=list)
    quiet: list[QuietMark] = field(default_factory=list)  # what the suppressed went quiet as
    left_out: list[Finding] = field(default_factory=list)  # the suppressed findings


@dataclass(frozen=True)
class PriorCheck:
    """Today's checks run again on the commit the latest prior report's run scanned: an
    item is Resolved only when its check found it there and does not find it today."""

    head: str
    findings: Sequence[Finding]
    kinds: frozenset[str]  # the kinds whose collector ran to the end there


# "CLAUDE.md: all paths verified correct" is a hand-written all-clear in a Docs or FYI
# section: never the same thing as today's problem with that file.
_ALL_WELL = re.compile(
    r"\b(?:verified|(?:are|is|still) (?:correct|current|accurate)|"
    r"up to date|no issues|still work|all good)\b",
    re.IGNORECASE,
)


def _says_all_is_well(item: PriorItem) -> bool:
    """A Docs/FYI/All Clear line saying something is fine (`**CLAUDE.md** — all paths are
    correct`); an action item never is one, whatever its words."""
    if item.section in PRIORITIZED:
        return False
    return bool(_ALL_WELL.search(item.title) or _ALL_WELL.search(item.text[:200]))


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
        n = next(
            (
                by_fp[fp]
                for fp in (finding.fingerprint, *finding.aliases)
                if fp in by_fp and by_fp[fp] not in taken
            ),
            None,
        )
        if n is not None:
            matched[index] = candidates[n]
            taken.add(n)
    scored = sorted(
        (
            (similarity(finding, item), index, n)
            for index, finding in enumerate(findings)
            if index not in matched and finding.section is not Section.ALL_CLEAR
            for n, item in enumerate(candidates)
            if n not in taken and item.fingerprint is None and not _says_all_is_well(item)
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


def _named_items(finding: Finding, item: PriorItem) -> list[str]:
    """The items of a grouped finding a prior item names (a pass, a test file, a config):
    only distinctive names count — a word like `reorder` could be anything."""
    said = (
        _backticked(item.text) | _backticked(item.title) | _tokens(item.title) | _tokens(item.text)
    )
    raw = f"{item.title}\n{item.text}".lower()
    named = []
    for name in finding.items:
        # An item is a name (`cse_pass`), a place (`a.py::TestX`) or a sentence naming things
        # in backticks (a doc problem): each can be what a hand-written item named.
        for part in {name, name.rsplit("::", 1)[-1], *_backticked(name)}:
            distinctive = len(part) >= 6 and (
                "_" in part or "." in part or "/" in part or sum(c.isupper() for c in part) >= 2
            )
            # `pytorch/pytorch#179209` is no token: a long reference counts as written.
            if distinctive and (part.lower() in said or ("#" in part and part.lower() in raw)):
                named.append(name)
                break
    return named


def absorb(
    findings: Sequence[Finding], report: PriorReport, matched: dict[int, PriorItem]
) -> dict[int, list[PriorItem]]:
    """Marker-less prior items (hand-written) that name one item of today's grouped finding:
    that item is carried forward, its first-reported date kept; the finding's other items
    are new. Index of finding → the prior items it absorbs."""
    matched_to = {id(item): index for index, item in matched.items()}
    absorbed: dict[int, list[PriorItem]] = {}
    for item in report.items:
        if (
            item.fingerprint is not None
            or item.section is Section.ALL_CLEAR
            or _says_all_is_well(item)
        ):
            continue
        # Every grouped finding it names an item of (a disabled test is in the list of
        # disabled tests and in this week's switch-offs alike), besides the one it matched.
        for index, finding in enumerate(findings):
            if index == matched_to.get(id(item)) or not finding.items:
                continue
            if finding.section is not Section.ALL_CLEAR and _named_items(finding, item):
                absorbed.setdefault(index, []).append(item)
    return absorbed


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
        named = set(_named_items(finding, prior)) | {
            item for item in finding.items if item.lower() in mentioned
        }
        if finding.items and not named:
            return (
                f"still present ({len(finding.items)} now; the prior report named none of "
                "them one by one)"
            )
        added = [item for item in finding.items if item not in named]
        removed = 0
    if added:
        names = ", ".join(f"`{name}`" for name in added[:5])
        extra = f", {removed} fixed" if removed else ""
        return f"{WORSENED}: {len(added)} new ({names}){extra}"
    if removed:
        return f"{PARTIAL_FIX}: {removed} of {removed + len(current)} fixed"
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
    unchanged_lines: dict[str, str] | None = None,
    unchecked: Iterable[str] = (),
    kinds: Mapping[str, Kind] | None = None,
    recheck: Callable[[frozenset[str]], PriorCheck | None] | None = None,
    resolved_section: Section = Section.ALL_CLEAR,
) -> Reconciled:
    """Mark findings new / carried, add resolved lines, leave out repeated unchanged FYIs.

    `completed_kinds` are the kinds whose collector ran to the end today: a prior item is
    only called resolved when the collector that would find it actually looked — and not
    when its fingerprint is `unchecked` (the check could not read what it looks at). A
    state of the tree is Resolved only on evidence: `recheck(kinds)` runs those kinds'
    checks on the commit the latest prior report scanned (asked once, only when an item of
    those kinds is gone today), and the item must be found there.
    """
    known = all_kinds() if kinds is None else kinds

    def spec(kind: str) -> Kind:
        return _spec(known, kind)

    def lifetime(kind: str) -> Lifetime:
        return spec(kind).lifetime

    reports = sorted(priors, key=lambda report: report.date)
    matches = [match_report(findings, report) for report in reports]
    absorbed = [absorb(findings, report, m) for report, m in zip(reports, matches, strict=True)]
    went_quiet = {mark.fingerprint: mark for mark in reports[-1].quiet} if reports else {}
    out: list[Finding] = []
    quiet = Reconciled([])
    for index, finding in enumerate(findings):
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
            if finding.section is Section.FYI and _same_items(mark, finding):
                _leave_out(
                    quiet, _carried(finding, first, "no change", unchanged_lines), mark.since
                )
            else:  # it changed while left out: back, saying how
                out.append(_back(finding, mark.model_copy(update={"first_reported": first})))
            continue
        if not hits and parts:
            out.append(_carried_in_part(finding, parts))
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
            and _digests(finding) <= set(latest.item_digests)
        ):
            # Awareness all of which was said yesterday (its window still holds it): said once.
            # An Action Item stays, carried, while the window holds it.
            quiet.left_out.append(finding)
            continue
        update = status_update(finding, latest)
        if lifetime(finding.kind) is Lifetime.NEWS and update.startswith((WORSENED, PARTIAL_FIX)):
            out.append(finding)  # news with other items is today's news, not a fix or a worsening
            continue
        carried = _carried(finding, first, update, unchanged_lines)
        recent = list(zip(reports, matches, strict=True))[-fyi_suppress_after:]
        if (
            finding.section is Section.FYI
            and len(recent) >= fyi_suppress_after
            and all(
                index in m and m[index].section is Section.FYI and _unchanged(finding, m[index])
                for _, m in recent
            )
        ):
            _leave_out(quiet, carried, hits[-1][0].date)
            continue
        out.append(carried)
    if reports:
        kept = [item for items in absorbed[-1].values() for item in items]  # still there
        judge = _Judge(
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


def _spec(kinds: Mapping[str, Kind], kind: str) -> Kind:
    """A kind's spec; a kind no collector declares (reconcile's own, a retired one) is a
    standing one with no traits."""
    return kinds.get(kind) or Kind(kind)


def _digests(finding: Finding) -> set[str]:
    return {item_digest(item) for item in finding.items}


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


def _leave_out(quiet: Reconciled, finding: Finding, since: date) -> None:
    """An unchanged FYI left out of the report; its quiet state travels in the report."""
    quiet.suppressed.append(finding.fingerprint)
    quiet.left_out.append(finding)
    digests = _digests(finding)
    many = len(digests) > QUIET_ITEMS
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


def _same_items(mark: QuietMark, finding: Finding) -> bool:
    if mark.set_digest is not None:
        return set_digest(_digests(finding)) == mark.set_digest
    return set(mark.item_digests) == _digests(finding)


def _back(finding: Finding, mark: QuietMark) -> Finding:
    """A finding left out as unchanged that changed since: back in the report, saying how."""
    before = PriorItem(
        section=Section.FYI, title=finding.title, text="", item_digests=mark.item_digests
    )
    update = (
        status_update(finding, before)
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


@dataclass
class _Judge:
    """What became of a prior item scout did not find today: Resolved (on evidence), aged
    out, not re-checked, or scout's check disagrees with the report."""

    completed: frozenset[str]
    unchecked: frozenset[str]
    kinds: Mapping[str, Kind]
    today: Sequence[Finding] = ()
    check: PriorCheck | None = None
    resolved_at: Placement = field(default_factory=lambda: Placement(Section.ALL_CLEAR))

    def _lifetime(self, kind: str) -> Lifetime:
        return _spec(self.kinds, kind).lifetime

    def kind(self, item: PriorItem) -> str | None:
        if item.fingerprint and not item.fingerprint.startswith("prior_unchecked-"):
            return item.fingerprint.rsplit("-", 1)[0]
        # hand-written (or carried from one): scout's check, if any
        return _kind_of(item, self.kinds)

    def _needs_check(self, item: PriorItem) -> str | None:
        kind = self.kind(item)
        if kind is None or self._lifetime(kind) is not Lifetime.STANDING:
            return None
        if kind not in self.completed or item.fingerprint in self.unchecked:
            return None
        return kind

    def check_on_prior_commit(
        self, recheck: Callable[[frozenset[str]], PriorCheck | None] | None, items: list[PriorItem]
    ) -> None:
        kinds = frozenset(k for item in items if (k := self._needs_check(item)))
        if kinds and recheck is not None:
            self.check = recheck(kinds)

    def verdict(self, item: PriorItem) -> tuple[str, str, Finding | None]:
        """(verdict, why, the finding its check made on the prior commit)."""
        kind = self.kind(item)
        found_as = {fp for f in self.today for fp in (f.fingerprint, *f.aliases)}
        if item.fingerprint in found_as:  # merged into a finding of today's that names it
            return "moved", "", None
        if kind is None:
            return (
                "unchecked",
                ("scout has no check for it and cannot tell whether it is fixed"),
                None,
            )
        if self._lifetime(kind) is Lifetime.NEWS:
            return "aged", "", None
        if kind not in self.completed or item.fingerprint in self.unchecked:
            return "unchecked", f"its check ({kind}) did not run today", None
        if self._lifetime(kind) is Lifetime.OBSERVED:
            return "resolved", "", None
        if self.check is None or kind not in self.check.kinds:
            return (
                "unchecked",
                (f"its check ({kind}) could not run on the commit that report scanned"),
                None,
            )
        held = _held(item, self.check, self.kinds)
        if held is None:
            return (
                "disagrees",
                (
                    f"scout's check disagrees: {kind} finds nothing of it on "
                    f"`{self.check.head[:10]}`, the commit that report scanned, "
                    "nor today"
                ),
                None,
            )
        # Its items in another finding of its check today (a pass only integration tests ran,
        # now run by none; files "added since" now among the older ones): not fixed, and
        # today's finding says what became of them.
        if any(
            f.collector == held.collector and set(f.items) & set(held.items) for f in self.today
        ):
            return "moved", "", None
        return "resolved", "", held

    def resolved(self, latest: PriorReport, gone: list[PriorItem]) -> list[Finding]:
        out = []
        for item in gone:
            since: date = item.first_reported or latest.date
            verdict, why, held = self.verdict(item)
            if verdict == "resolved":
                out.append(_resolved_line(item, since, latest, self.check, held, self.resolved_at))
            elif verdict in ("unchecked", "disagrees") and item.section in PRIORITIZED:
                out.append(_unchecked(item, latest, since, why, verdict))
        return out

    def dropped(
        self, latest: PriorReport, dropped: list[tuple[PriorReport, PriorItem]]
    ) -> list[Finding]:
        out = []
        for report, item in dropped:
            since = item.first_reported or report.date
            verdict, why, held = self.verdict(item)
            if verdict == "resolved":
                out.append(_resolved_line(item, since, latest, self.check, held, self.resolved_at))
                continue
            finding = _unchecked(item, report, since, why, verdict)
            out.append(
                finding.model_copy(
                    update={
                        "body": (
                            f"From the report of {report.date.isoformat()}; the report of "
                            f"{latest.date.isoformat()} no longer mentions it and {why}, "
                            "so it is carried "
                            "as it was. Drop it in triage once it is dealt with."
                        )
                    }
                )
            )
        return out


def _held(item: PriorItem, check: PriorCheck, kinds: Mapping[str, Kind]) -> Finding | None:
    """The finding that is `item` among those its check made on the prior commit."""
    candidates = [f for f in check.findings if _spec(kinds, f.kind).lifetime is not Lifetime.NEWS]
    if item.fingerprint and not item.fingerprint.startswith("prior_unchecked-"):
        return next(
            (f for f in candidates if item.fingerprint in (f.fingerprint, *f.aliases)), None
        )
    written = item.model_copy(update={"fingerprint": None})
    report = PriorReport(date=date.min, source="", items=[written])
    matched = match_report(candidates, report)
    if matched:
        return candidates[next(iter(matched))]
    parts = absorb(candidates, report, matched)
    return candidates[next(iter(parts))] if parts else None


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
                _tokens(item.title)
                and len(_tokens(item.title) & _tokens(later.title))
                / len(_tokens(item.title) | _tokens(later.title))
                >= FUZZY_THRESHOLD
                for later in latest.items
            ):
                continue  # the latest report still has it, in its own words
            dropped.append((report, item))
            titles.add(item.title.lower())
    return dropped


def _carried_in_part(finding: Finding, parts: list[tuple[PriorReport, PriorItem]]) -> Finding:
    """A grouped finding some of whose items hand-written reports named: carried, from the
    earliest of those; the items no report named are new."""
    first = min(item.first_reported or report.date for report, item in parts)
    named = {name for _, item in parts for name in _named_items(finding, item)}
    new = [name for name in finding.items if name not in named]
    known = ", ".join(f"`{n}`" for n in finding.items if n in named)
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


def _resolved_line(
    item: PriorItem,
    since: date,
    latest: PriorReport,
    check: PriorCheck | None,
    held: Finding | None,
    placement: Placement,
) -> Finding:
    if check is not None and held is not None:
        body = (
            f"first reported {since.isoformat()}; its check finds it on `{check.head[:10]}` "
            f"(what the report of {latest.date.isoformat()} scanned) and not today"
        )
    else:
        body = f"first reported {since.isoformat()}, gone as of today"
    return born(
        placement,
        "reconcile",
        "resolved",
        fingerprint("resolved", item.fingerprint or item.title.lower()),
        f"Resolved: {item.title}",
        body,
        files=held.files if held is not None else [],
        evidence=Evidence(
            found_at=check.head if check and held else None,
            found_as=held.fingerprint if check and held else None,
        ),
        status=Status.RESOLVED,
        first_reported=since,
    )


def _kind_of(item: PriorItem, kinds: Mapping[str, Kind]) -> str | None:
    """What a hand-written item is about, from its words: the first kind that says so (a
    kind says it only where its check is exhaustive for what the item names). Other
    hand-written items stay "not re-checked" rather than risk a false "Resolved"."""
    if item.section not in PRIORITIZED:
        return None
    return next((k.name for k in kinds.values() if k.said_by and k.said_by(item.title)), None)


def _unchecked(
    item: PriorItem, latest: PriorReport, since: date, why: str, verdict: str = "unchecked"
) -> Finding:
    body = (
        f"From the report of {latest.date.isoformat()}: {why}, so it is carried as it "
        "was. Drop it in triage once it is dealt with."
    )
    kept = item.fingerprint and item.fingerprint.startswith("prior_unchecked-")
    return born(
        # carried as the report had it: reconcile's decision, no rule's
        Placement(Section.CARRIED_FORWARD, item.priority),
        "reconcile",
        "prior_unchecked",
        item.fingerprint
        if kept and item.fingerprint
        else fingerprint("prior_unchecked", item.title.lower()),
        item.title,
        body,
        status=Status.CARRIED,
        status_update=why if verdict == "disagrees" else "not re-checked",
        first_reported=since,
    )
