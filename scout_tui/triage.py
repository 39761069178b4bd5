"""A reviewer's decisions on findings, and how they change what gets published.

Decisions are keyed by fingerprint, so they survive reruns: a dropped finding is not
proposed again tomorrow, an edited title stays edited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from scout_tui.model import Evidence, FileRef, Finding, Priority, Section

DEMOTE_ORDER: list[Priority | None] = [Priority.P0, Priority.P1, Priority.P2, None]


class TriageEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fingerprint: str
    decision: Literal["accepted", "dropped", "merged"] | None = None
    reason: str | None = None
    merged_into: str | None = None
    section: Section | None = None
    priority: Priority | None = None
    priority_set: bool = False  # distinguishes "set to no priority" from "not touched"
    title: str | None = None
    body: str | None = None
    updated: datetime = Field(default_factory=lambda: datetime.now(UTC))


def demoted(finding: Finding) -> tuple[Section, Priority | None]:
    """P0 → P1 → P2 → FYI."""
    if finding.section in (Section.FYI, Section.ALL_CLEAR):
        return finding.section, None
    position = DEMOTE_ORDER.index(finding.priority) if finding.priority in DEMOTE_ORDER else 2
    following = DEMOTE_ORDER[min(position + 1, len(DEMOTE_ORDER) - 1)]
    return (Section.FYI, None) if following is None else (finding.section, following)


def _edited(finding: Finding, entry: TriageEntry) -> Finding:
    update: dict = {}
    if entry.section is not None:
        update["section"] = entry.section
    if entry.priority_set:
        update["priority"] = entry.priority
    if entry.title:
        update["title"] = entry.title
    if entry.body is not None:
        update["body"] = entry.body
    return finding.model_copy(update=update) if update else finding


def _merge_evidence(into: Finding, others: Sequence[Finding]) -> Finding:
    files = list(into.files)
    items = list(into.items)
    urls = list(into.evidence.urls)
    for other in others:
        files += [ref for ref in other.files if ref not in files]
        items += [item for item in other.items if item not in items]
        urls += [url for url in other.evidence.urls if url not in urls]
    bodies = [into.body] + [f"Merged: **{o.title}** — {o.body}".rstrip(" —") for o in others]
    evidence: Evidence = into.evidence.model_copy(update={"urls": urls})
    return into.model_copy(
        update={
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
            merged.setdefault(entry.merged_into, []).append(_edited(finding, entry))
            continue
        kept.append(_edited(finding, entry) if entry else finding)
    present = {finding.fingerprint for finding in kept}
    # A merge whose target is gone today (resolved or dropped): keep the parts visible.
    for target, parts in merged.items():
        if target not in present:
            kept.extend(parts)
    decided = []
    for finding in kept:
        if finding.fingerprint in merged:
            finding = _merge_evidence(finding, merged[finding.fingerprint])
        entry = entries.get(finding.fingerprint)
        touched = finding.fingerprint in merged or (entry is not None and entry != TriageEntry(
            fingerprint=entry.fingerprint, decision=entry.decision, updated=entry.updated
        ))  # fmt: skip
        decided.append(finding.model_copy(update={"decision": "edited" if touched else "accepted"}))
    return decided
