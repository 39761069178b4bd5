"""Which prior item is which of today's findings: exactly by the hidden fingerprint marker,
fuzzily (title tokens and backticked identifiers) for items of older or hand-written
reports that have none, and item by item for a grouped finding. Pure: no I/O."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from scout_tui.collect.base import Kind, spec_of
from scout_tui.model import (
    PRIORITIZED,
    Finding,
    PriorItem,
    PriorReport,
    Section,
)

FUZZY_THRESHOLD = 0.5


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


# "CLAUDE.md: all paths verified correct" is a hand-written all-clear in a Docs or FYI
# section: never the same thing as today's problem with that file.
_ALL_WELL = re.compile(
    r"\b(?:verified|(?:are|is|still) (?:correct|current|accurate)|"
    r"up to date|no issues|still work|all good)\b",
    re.IGNORECASE,
)


def says_all_is_well(item: PriorItem) -> bool:
    """A Docs/FYI/All Clear line saying something is fine (`**CLAUDE.md** — all paths are
    correct`); an action item never is one, whatever its words."""
    if item.section in PRIORITIZED:
        return False
    return bool(_ALL_WELL.search(item.title) or _ALL_WELL.search(item.text[:200]))


def backticked(text: str) -> set[str]:
    return {match.strip().lower() for match in _BACKTICKED.findall(text)}


def tokens(text: str) -> set[str]:
    text = _BACKTICKED.sub(lambda m: " " + m.group(1) + " ", text.lower())
    return {word.strip(".") for word in _WORD.findall(text)} - _STOP


def similarity(finding: Finding, item: PriorItem) -> float:
    """Title-token Jaccard, plus credit for shared backticked identifiers and paths."""
    mine, theirs = tokens(finding.title), tokens(item.title)
    if not mine or not theirs:
        return 0.0
    score = len(mine & theirs) / len(mine | theirs)
    ids_mine = backticked(finding.title) | {ref.path.lower() for ref in finding.files}
    ids_theirs = backticked(item.text)
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
            if n not in taken and item.fingerprint is None and not says_all_is_well(item)
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


def named_items(finding: Finding, item: PriorItem, said: Mapping[str, str]) -> list[str]:
    """The items of a grouped finding a prior item names (a pass, a test file, a config):
    only distinctive names count — a word like `reorder` could be anything. `said`: each
    item in its words, as a report writes it."""
    written = (
        backticked(item.text) | backticked(item.title) | tokens(item.title) | tokens(item.text)
    )
    raw = f"{item.title}\n{item.text}".lower()
    named = []
    for name in finding.items:
        # An item is a name (`cse_pass`), a place (`a.py::TestX`) or a sentence naming things
        # in backticks (a doc problem): each can be what a hand-written item named.
        words = said.get(name, name)
        for part in {words, words.rsplit("::", 1)[-1], *backticked(words)}:
            distinctive = len(part) >= 6 and (
                "_" in part or "." in part or "/" in part or sum(c.isupper() for c in part) >= 2
            )
            # `pytorch/pytorch#179209` is no token: a long reference counts as written.
            if distinctive and (part.lower() in written or ("#" in part and part.lower() in raw)):
                named.append(name)
                break
    return named


def absorb(
    findings: Sequence[Finding],
    report: PriorReport,
    matched: dict[int, PriorItem],
    kinds: Mapping[str, Kind],
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
            or says_all_is_well(item)
        ):
            continue
        # Every grouped finding it names an item of (a disabled test is in the list of
        # disabled tests and in this week's switch-offs alike), besides the one it matched.
        for index, finding in enumerate(findings):
            if index == matched_to.get(id(item)) or not finding.items:
                continue
            said = {name: spec_of(kinds, finding.kind).says(name) for name in finding.items}
            if finding.section is not Section.ALL_CLEAR and named_items(finding, item, said):
                absorbed.setdefault(index, []).append(item)
    return absorbed
