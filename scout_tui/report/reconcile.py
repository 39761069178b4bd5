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
    PARTIAL_FIX,
    WORSENED,
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


# "CLAUDE.md: all paths verified correct" is a hand-written all-clear in a Docs or FYI
# section: never the same thing as today's problem with that file.
_ALL_WELL = re.compile(r"\b(?:verified|(?:are|is|still) (?:correct|current|accurate)|"
                       r"up to date|no issues|still work|all good)\b", re.IGNORECASE)


def _says_all_is_well(item: PriorItem) -> bool:
    """A Docs/FYI/All Clear line saying something is fine (`**CLAUDE.md** — all paths are
    correct`); an action item never is one, whatever its words."""
    if item.section in UNCHECKED_CARRY:
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
    said = _backticked(item.text) | _backticked(item.title) | _tokens(item.title) | _tokens(
        item.text)
    raw = f"{item.title}\n{item.text}".lower()
    named = []
    for name in finding.items:
        # An item is a name (`cse_pass`), a place (`a.py::TestX`) or a sentence naming things
        # in backticks (a doc problem): each can be what a hand-written item named.
        for part in {name, name.rsplit("::", 1)[-1], *_backticked(name)}:
            distinctive = len(part) >= 6 and (
                "_" in part or "." in part or "/" in part or sum(c.isupper() for c in part) >= 2)
            # `pytorch/pytorch#179209` is no token: a long reference counts as written.
            if distinctive and (part.lower() in said or ("#" in part and part.lower() in raw)):
                named.append(name)
                break
    return named


def absorb(findings: Sequence[Finding], report: PriorReport,
           matched: dict[int, PriorItem]) -> dict[int, list[PriorItem]]:  # fmt: skip
    """Marker-less prior items (hand-written) that name one item of today's grouped finding:
    that item is carried forward, its first-reported date kept; the finding's other items
    are new. Index of finding → the prior items it absorbs."""
    matched_to = {id(item): index for index, item in matched.items()}
    absorbed: dict[int, list[PriorItem]] = {}
    for item in report.items:
        if item.fingerprint is not None or item.section is Section.ALL_CLEAR or \
                _says_all_is_well(item):  # fmt: skip
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
            item for item in finding.items if item.lower() in mentioned}
        if finding.items and not named:
            return (f"still present ({len(finding.items)} now; the prior report named none of "
                    "them one by one)")  # fmt: skip
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
    all_collectors_completed: bool,
    unchanged_lines: dict[str, str] | None = None,
    unchecked: Iterable[str] = (),
) -> Reconciled:
    """Mark findings new / carried, add resolved lines, drop repeated unchanged FYIs.

    `completed_kinds` are the kinds whose collector ran to the end today: a prior item is
    only called resolved when the collector that would find it actually looked — and not
    when its fingerprint is `unchecked` (the check could not read what it looks at).
    """
    reports = sorted(priors, key=lambda report: report.date)
    matches = [match_report(findings, report) for report in reports]
    absorbed = [absorb(findings, report, m) for report, m in zip(reports, matches, strict=True)]
    out: list[Finding] = []
    suppressed: list[str] = []
    for index, finding in enumerate(findings):
        hits = [
            (report, m[index]) for report, m in zip(reports, matches, strict=True) if index in m
        ]
        parts = [(report, item) for report, a in zip(reports, absorbed, strict=True)
                 for item in a.get(index, [])]  # fmt: skip
        if not hits and parts:
            out.append(_carried_in_part(finding, parts))
            continue
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
        kept = [item for items in absorbed[-1].values() for item in items]  # still there
        out.extend(
            _resolved(
                findings, reports[-1], [*matches[-1].values(), *kept], set(completed_kinds),
                all_collectors_completed, frozenset(unchecked),
            )
        )
        out.extend(_dropped_by_hand(reports, matches, absorbed, out, set(completed_kinds)))
    return Reconciled(out, suppressed)


def _dropped_by_hand(reports: list[PriorReport], matches: list[dict[int, PriorItem]],
                     absorbed: list[dict[int, list[PriorItem]]], so_far: list[Finding],
                     completed: set[str]) -> list[Finding]:  # fmt: skip
    """A hand-written action item of an earlier report that the latest report no longer
    mentions and scout does not find: a person dropped it without saying it was fixed.
    Carried as not re-checked rather than lost (unless scout's own check says it is gone)."""
    latest = reports[-1]
    titles = {f.title.lower() for f in so_far}
    carried = []
    for report, matched, taken in zip(reports[:-1], matches[:-1], absorbed[:-1], strict=True):
        seen = {id(i) for i in matched.values()} | {id(i) for v in taken.values() for i in v}
        for item in report.items:
            if item.fingerprint is not None or id(item) in seen or \
                    item.section not in UNCHECKED_CARRY or item.priority is None:  # fmt: skip
                continue
            kind = _kind_of(item)
            if kind is not None and kind in completed:
                # Its check ran today and did not find it: fixed, and said.
                carried.append(_resolved_line(item, item.first_reported or report.date))
                titles.add(item.title.lower())
                continue
            if item.title.lower() in titles or any(
                _tokens(item.title) and len(_tokens(item.title) & _tokens(later.title))
                / len(_tokens(item.title) | _tokens(later.title)) >= FUZZY_THRESHOLD
                for later in latest.items
            ):
                continue  # the latest report still has it, in its own words
            since = item.first_reported or report.date
            finding = _unchecked(item, report, since)
            carried.append(finding.model_copy(update={"body": (
                f"From the report of {report.date.isoformat()}; the report of "
                f"{latest.date.isoformat()} no longer mentions it and scout cannot tell "
                "whether it is fixed, so it is carried as it was. Drop it in triage once it "
                "is dealt with.")}))
            titles.add(item.title.lower())
    return carried


def _carried_in_part(finding: Finding, parts: list[tuple[PriorReport, PriorItem]]) -> Finding:
    """A grouped finding some of whose items hand-written reports named: carried, from the
    earliest of those; the items no report named are new."""
    first = min(item.first_reported or report.date for report, item in parts)
    named = {name for _, item in parts for name in _named_items(finding, item)}
    new = [name for name in finding.items if name not in named]
    known = ", ".join(f"`{n}`" for n in finding.items if n in named)
    update = f"carried for {known}" + (
        f"; new: {', '.join(f'`{n}`' for n in new[:5])}" + (
            f" (+{len(new) - 5} more)" if len(new) > 5 else "") if new else "")
    section = Section.CARRIED_FORWARD if finding.section is Section.ACTION_ITEMS \
        else finding.section  # fmt: skip
    return finding.model_copy(update={"status": Status.CARRIED, "first_reported": first,
                                      "status_update": update, "section": section})


def _resolved(
    findings: Sequence[Finding],
    latest: PriorReport,
    found_again: list[PriorItem],
    completed_kinds: set[str],
    all_completed: bool,
    unchecked: frozenset[str] = frozenset(),
) -> list[Finding]:
    still_there = {id(item) for item in found_again}
    resolved = []
    for item in latest.items:
        if item.section not in RESOLVABLE or id(item) in still_there:
            continue
        kind = item.fingerprint.rsplit("-", 1)[0] if item.fingerprint else _kind_of(item)
        looked = (kind in completed_kinds if kind else all_completed) and (
            item.fingerprint not in unchecked
        )
        since: date = item.first_reported or latest.date
        if not looked:
            if item.section in UNCHECKED_CARRY:
                resolved.append(_unchecked(item, latest, since))
            continue
        resolved.append(_resolved_line(item, since))
    return resolved


def _resolved_line(item: PriorItem, since: date) -> Finding:
    return Finding(
        collector="reconcile",
        kind="resolved",
        title=f"Resolved: {item.title}",
        body=f"first reported {since.isoformat()}, gone as of today",
        section=Section.ALL_CLEAR,
        fingerprint=fingerprint("resolved", item.fingerprint or item.title.lower()),
        status=Status.RESOLVED,
        first_reported=since,
    )


# What a hand-written item is about, from its words — only where scout's check is
# exhaustive for what the item names: every test class and test file is checked for CI
# coverage, every pass for tests, so "`TestX` no longer runs in CI" or "`x_pass` has zero
# test coverage" not found again after that check ran is resolved. Other hand-written
# items stay "not re-checked" rather than risk a false "Resolved".
_CI_WORDS = re.compile(r"\b(?:no longer runs?|never runs?|not (?:run|in) ci|dropped from ci|"
                       r"disabled in ci|missing from ci|(?:re-?enable|add|restore)\b.*\bin ci)\b",
                       re.I)
_TEST_NAME = re.compile(r"`?\b(Test[A-Z]\w+|test_\w+\.py)\b`?")


_UNTESTED_WORDS = re.compile(r"\b(?:(?:zero|no) (?:unit )?(?:tests?|test coverage|coverage)|"
                             r"untested|lacks? (?:unit )?tests?)\b", re.IGNORECASE)
_PASS = re.compile(r"`\w+_pass`")


def _kind_of(item: PriorItem) -> str | None:
    if item.section not in UNCHECKED_CARRY:
        return None
    if _CI_WORDS.search(item.title) and _TEST_NAME.search(item.title):
        return "test_not_in_ci"
    # Every pass is checked for tests (and for being reached by default): one named pass
    # said untested that the check no longer lists is covered.
    if _UNTESTED_WORDS.search(item.title) and len(_PASS.findall(item.title)) == 1:
        return "pass_untested"
    return None


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
