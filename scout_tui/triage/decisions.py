"""A reviewer's decisions on findings, and how they change what gets published.

Decisions are keyed by fingerprint, so they survive reruns: a dropped finding is not
proposed again tomorrow, an edited title stays edited. Pure: the state store keeps the
entries, this module says what an action makes of them and what a run looks like after.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scout_tui.model import (
    ADVISORY,
    PRIORITIZED,
    Evidence,
    FileRef,
    Finding,
    Priority,
    Section,
    Status,
    TriageEntry,
)

_DEMOTED = {Priority.P0: Priority.P1, Priority.P1: Priority.P2}
_PROMOTED = {None: Priority.P2, Priority.P2: Priority.P1, Priority.P1: Priority.P0}


class TriageError(Exception):
    """An action that cannot apply (merge into itself, into a dropped finding...)."""


# -- the table of demote / promote -----------------------------------------------------
def demoted(section: Section, priority: Priority | None) -> tuple[Section, Priority | None] | None:
    """P0 → P1 → P2 → FYI; Opportunities and Docs → FYI. None: nothing lower."""
    if section in PRIORITIZED:
        if priority in _DEMOTED:
            return section, _DEMOTED[priority]
        return Section.FYI, None
    if section in ADVISORY and section is not Section.FYI:
        return Section.FYI, None
    return None


def promoted(section: Section, priority: Priority | None) -> tuple[Section, Priority | None] | None:
    """FYI, Opportunities, Docs → Action Items P2 → P1 → P0. None: nothing higher."""
    if section in PRIORITIZED:
        return (section, _PROMOTED[priority]) if priority in _PROMOTED else None
    if section in ADVISORY:
        return Section.ACTION_ITEMS, Priority.P2
    return None


# -- one finding as decided -------------------------------------------------------------
def edited(finding: Finding, entry: TriageEntry | None) -> Finding:
    """The finding with the entry's section, priority, title and body. A carried finding
    moved to Action Items stays under Carried Forward (reconcile decided it is not new)."""
    if entry is None:
        return finding
    update: dict[str, object] = {}
    if entry.section is not None:
        section = entry.section
        if section is Section.ACTION_ITEMS and finding.status is Status.CARRIED:
            section = Section.CARRIED_FORWARD
        update["section"] = section
        if section in PRIORITIZED and finding.section not in PRIORITIZED:
            update["board_item"] = True  # promoted into Action Items: it gets a draft
        if section not in PRIORITIZED and not entry.priority_set:
            update["priority"] = None
    if entry.priority_set:
        update["priority"] = entry.priority
    if entry.title:
        update["title"] = entry.title
    if entry.body is not None:
        update["body"] = entry.body
    return finding.model_copy(update=update) if update else finding


def _rank(section: Section, priority: Priority | None) -> int:
    if section in PRIORITIZED:
        return {Priority.P0: 0, Priority.P1: 1, Priority.P2: 2}.get(priority, 3)  # type: ignore[arg-type]
    if section in ADVISORY:
        return 5 if section is Section.FYI else 4  # FYI is where demoted findings end
    return 6


def decision_label(finding: Finding, entry: TriageEntry | None) -> str:
    """What the reviewer did, in a word: the tree's badge and `triage list`'s column."""
    if entry is None:
        return ""
    if entry.decision == "dropped":
        return "dropped"
    if entry.decision == "merged":
        return "merged"
    after = edited(finding, entry)
    before_rank = _rank(finding.section, finding.priority)
    after_rank = _rank(after.section, after.priority)
    if entry.title or entry.body is not None:
        return "edited"
    if after_rank > before_rank:
        return "demoted"
    if after_rank < before_rank:
        return "promoted"
    if entry.decision == "accepted":
        return "accepted"
    # Moved and moved back: decided on, where it was found (reviewed, as the tree counts).
    return "kept" if reviewed(entry) else ""


def reviewed(entry: TriageEntry | None) -> bool:
    return entry is not None and (
        entry.decision is not None
        or entry.section is not None
        or entry.priority_set
        or bool(entry.title)
        or entry.body is not None
    )


# -- actions: what each makes of an entry -----------------------------------------------
def _base(fingerprint: str, entry: TriageEntry | None) -> TriageEntry:
    return entry or TriageEntry(fingerprint=fingerprint)


def accept(fingerprint: str, entry: TriageEntry | None) -> TriageEntry:
    """Accepted as it stands (edits kept); un-drops and un-merges."""
    return _base(fingerprint, entry).model_copy(
        update={"decision": "accepted", "reason": None, "merged_into": None}
    )


def drop(fingerprint: str, entry: TriageEntry | None, reason: str) -> TriageEntry:
    if not reason.strip():
        raise TriageError(
            "a drop needs a reason (it is remembered: the finding is not proposed again)"
        )
    return _base(fingerprint, entry).model_copy(
        update={"decision": "dropped", "reason": reason.strip(), "merged_into": None}
    )


def move(finding: Finding, entry: TriageEntry | None, up: bool) -> TriageEntry | None:
    """Demote (up=False) or promote the finding as it stands after earlier decisions;
    None when it is already at the bottom or top."""
    current = edited(finding, entry)
    section = (
        Section.ACTION_ITEMS if current.section is Section.CARRIED_FORWARD else (current.section)
    )
    target = (promoted if up else demoted)(section, current.priority)
    if target is None:
        return None
    # Never past where it was found: `-` then `+` is a round trip (an Opportunity demoted
    # to FYI goes back to Opportunities, not on to Action Items with a board draft).
    found = (
        Section.ACTION_ITEMS if finding.section is Section.CARRIED_FORWARD else finding.section,
        finding.priority,
    )
    here, there, home = _rank(section, current.priority), _rank(*target), _rank(*found)
    if (up and there < home < here) or (not up and here < home < there):
        target = found
    return _base(finding.fingerprint, entry).model_copy(
        update={"section": target[0], "priority": target[1], "priority_set": True}
    )


def edit(
    fingerprint: str,
    entry: TriageEntry | None,
    *,
    title: str | None = None,
    body: str | None = None,
    section: Section | None = None,
    priority: Priority | None = None,
    set_priority: bool = False,
) -> TriageEntry:
    if section is Section.CARRIED_FORWARD:
        raise TriageError("carried_forward is decided by reconcile; use action_items")
    update: dict[str, object] = {}
    if title is not None:
        if not title.strip():
            raise TriageError("a title cannot be empty")
        update["title"] = " ".join(title.split())
    if body is not None:
        update["body"] = body
    if section is not None:
        update["section"] = section
    if set_priority:
        update.update(priority=priority, priority_set=True)
    return _base(fingerprint, entry).model_copy(update=update)


def unchanged_by(finding: Finding, entry: TriageEntry | None, after: TriageEntry) -> str | None:
    """Why an edit changes nothing the finding shows (said instead of recording it), or
    None when it changes something."""
    if edited(finding, after) != edited(finding, entry):
        return None
    if after.section is Section.ACTION_ITEMS and finding.status is Status.CARRIED:
        return (
            f"{finding.fingerprint} was reported before: it stays in Carried Forward "
            "(reconcile decides that); edit its priority or title instead"
        )
    return f"{finding.fingerprint} already reads so: nothing to edit"


def merge_into(
    fingerprint: str, entry: TriageEntry | None, target: str, entries: Mapping[str, TriageEntry]
) -> TriageEntry:
    if fingerprint == target:
        raise TriageError(f"cannot merge {fingerprint} into itself")
    target_entry = entries.get(target)
    if target_entry is not None and target_entry.decision in ("dropped", "merged"):
        raise TriageError(f"cannot merge into {target}: it is {target_entry.decision}")
    return _base(fingerprint, entry).model_copy(
        update={"decision": "merged", "merged_into": target, "reason": None}
    )


# -- the run as decided -------------------------------------------------------------------
@dataclass(frozen=True)
class Decided:
    """A finding of the run, as the reviewer left it (for lists and the console)."""

    original: Finding
    current: Finding
    entry: TriageEntry | None
    label: str


def decided(findings: Sequence[Finding], entries: Mapping[str, TriageEntry]) -> list[Decided]:
    out = []
    for finding in findings:
        entry = entries.get(finding.fingerprint)
        out.append(Decided(finding, edited(finding, entry), entry, decision_label(finding, entry)))
    return out


_LIST_START = re.compile(r"(?:[-*+]|\d{1,9}[.)])[ \t]")


def merged_part(other: Finding) -> str:
    """What a finding merged into another adds to its body: its title, then its body after
    a dash, or under it when the body is a list (never "— - item")."""
    head, body = f"Merged: **{other.title}**", other.body.strip()
    if not body:
        return head
    return f"{head}\n{body}" if _LIST_START.match(body) else f"{head} — {body}"


def _merge_evidence(into: Finding, others: Sequence[Finding]) -> Finding:
    files = list(into.files)
    items = list(into.items)
    urls = list(into.evidence.urls)
    for other in others:
        files += [ref for ref in other.files if ref not in files]
        items += [item for item in other.items if item not in items]
        urls += [url for url in other.evidence.urls if url not in urls]
    bodies = [into.body] + [merged_part(other) for other in others]
    # A part's own fix goes where the draft and the report read fixes, under its title.
    fixes = [into.suggested_fix.strip()] + [
        f"For **{other.title}**:" + ("\n" if _LIST_START.match(fix) else " ") + fix
        for other in others
        if (fix := other.suggested_fix.strip()) and fix != into.suggested_fix.strip()
    ]
    evidence: Evidence = into.evidence.model_copy(update={"urls": urls})
    return into.model_copy(
        update={
            "suggested_fix": "\n\n".join(fix for fix in fixes if fix),
            "files": [FileRef.model_validate(ref) for ref in files],
            "items": items,
            "body": "\n\n".join(part for part in bodies if part),
            "evidence": evidence,
        }
    )


def apply_triage(findings: Sequence[Finding], entries: Mapping[str, TriageEntry]) -> list[Finding]:
    """What is published: edits applied, merges folded in, dropped findings gone."""
    merged: dict[str, list[Finding]] = {}
    kept: list[Finding] = []
    for finding in findings:
        entry = entries.get(finding.fingerprint)
        if entry and entry.decision == "dropped":
            continue
        if entry and entry.decision == "merged" and entry.merged_into:
            merged.setdefault(entry.merged_into, []).append(edited(finding, entry))
            continue
        kept.append(edited(finding, entry))
    present = {finding.fingerprint for finding in kept}
    # A merge whose target is gone today (resolved or dropped): keep the parts visible.
    for target, parts in merged.items():
        if target not in present:
            kept.extend(parts)
    originals = {finding.fingerprint: finding for finding in findings}
    published = []
    for finding in kept:
        if finding.fingerprint in merged:
            finding = _merge_evidence(finding, merged[finding.fingerprint])
        entry = entries.get(finding.fingerprint)
        touched = finding.fingerprint in merged or (
            entry is not None
            and (
                entry.section is not None
                or entry.priority_set
                or bool(entry.title)
                or entry.body is not None
            )
        )
        decision = "edited" if touched else "accepted"
        original = originals[finding.fingerprint]
        if original.section not in PRIORITIZED and finding.section in PRIORITIZED:
            decision = "promoted"
        published.append(finding.model_copy(update={"decision": decision}))
    return published
