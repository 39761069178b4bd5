"""A reviewer's decisions on one checkout's (or bundle's) findings: read, applied to a run,
and each action (accept, drop, move, merge, edit) one undoable step in the state store. The
console and `scout triage` share them; an action that cannot apply raises TriageError."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scout_tui.errors import UsageError
from scout_tui.model import (
    PRIORITIZED,
    SECTIONS,
    Checkout,
    Finding,
    RunResult,
    Section,
    TriageEntry,
)
from scout_tui.triage import decisions as triage
from scout_tui.triage.store import Action, Change, DecisionStore

SHOWN_CANDIDATES = 8


class Review:
    def __init__(
        self, store: DecisionStore, scope: str, checkout: Checkout, experiment: str
    ) -> None:
        self.decision_store, self.scope = store, scope
        self.checkout, self.experiment = checkout, experiment

    def decisions(self) -> dict[str, TriageEntry]:
        return self.decision_store.decisions(self.scope)

    def decided(self, run: RunResult) -> list[triage.Decided]:
        return triage.decided(run.findings, self.decisions())

    def triaged(
        self, run: RunResult, entries: Mapping[str, TriageEntry] | None = None
    ) -> RunResult:
        """The run as it will be published: every finding not dropped counts as accepted.
        `entries`: the decisions as the caller holds them (the console's), else read."""
        decided = self.decisions() if entries is None else entries
        findings = triage.apply_triage(run.findings, decided)
        return run.model_copy(update={"findings": findings})

    def change(
        self,
        label: str,
        fingerprints: Sequence[str],
        decide: Callable[[str, TriageEntry | None, dict[str, TriageEntry]], TriageEntry | None],
    ) -> list[Change]:
        """Record one undoable action (see DecisionStore.change)."""
        return self.decision_store.change(
            self.scope,
            label,
            fingerprints,
            decide,
            checkout=self.checkout,
            experiment=self.experiment,
        )

    # The reviewer's actions: the console and `scout triage` share them. Each is one
    # undoable action; an action that cannot apply raises triage.TriageError.
    def accept(self, findings: Sequence[Finding]) -> list[Change]:
        return self.change(
            f"accept {_names(findings)}",
            [f.fingerprint for f in findings],
            lambda fp, entry, _: triage.accept(fp, entry),
        )

    def drop(self, findings: Sequence[Finding], reason: str) -> list[Change]:
        if not reason.strip():
            raise triage.TriageError("a drop needs a reason: it is remembered, say why")
        return self.change(
            f"drop {_names(findings)}",
            [f.fingerprint for f in findings],
            lambda fp, entry, _: triage.drop(fp, entry, reason),
        )

    def move(self, findings: Sequence[Finding], up: bool) -> tuple[list[Change], list[str]]:
        """Promote (up) or demote; also the fingerprints already at the top or bottom."""
        by_fp = {f.fingerprint: f for f in findings}
        stuck: list[str] = []

        def decide(
            fp: str, entry: TriageEntry | None, _: dict[str, TriageEntry]
        ) -> TriageEntry | None:
            moved = triage.move(by_fp[fp], entry, up)
            if moved is None:
                stuck.append(fp)
                return entry
            return moved

        verb = "promote" if up else "demote"
        return self.change(f"{verb} {_names(findings)}", list(by_fp), decide), stuck

    def merge(self, parts: Sequence[Finding], target: Finding) -> list[Change]:
        """Merge `parts` into `target` (one board item); findings merged into a part before
        follow it into the target."""
        entries = self.decisions()
        for finding in (*parts, target):
            if (
                triage.edited(finding, entries.get(finding.fingerprint)).section
                is Section.ALL_CLEAR
            ):
                raise triage.TriageError(
                    f"{finding.fingerprint} is an All Clear line: it says what is fine, and "
                    "neither joins nor takes in a finding"
                )
        moving = {part.fingerprint for part in parts}
        followers = [
            fp
            for fp, entry in entries.items()
            if entry.decision == "merged"
            and entry.merged_into in moving
            and fp not in moving
            and fp != target.fingerprint
        ]
        return self.change(
            f"merge {_names(parts)} into {_names([target])}",
            [part.fingerprint for part in parts] + followers,
            lambda fp, entry, entries: triage.merge_into(fp, entry, target.fingerprint, entries),
        )

    def edit(self, finding: Finding, **what: Any) -> list[Change]:
        """Title, body, section, priority (with set_priority=True): see triage.edit."""

        def decide(fp: str, entry: TriageEntry | None, _: object) -> TriageEntry:
            after = triage.edit(fp, entry, **what)
            why = triage.unchanged_by(finding, entry, after) or _misplaced(
                triage.edited(finding, after), what
            )
            if why is not None:
                raise triage.TriageError(why)  # nothing recorded: no undo step for nothing
            return after

        return self.change(f"edit {_names([finding])}", [finding.fingerprint], decide)

    def version(self) -> int:
        """Grows with every decision, undo and redo made on this scope by any session."""
        return self.decision_store.version(self.scope)

    def undo(self) -> Action | None:
        return self.decision_store.undo(self.scope)

    def redo(self) -> Action | None:
        return self.decision_store.redo(self.scope)


def _misplaced(shown: Finding, what: dict[str, Any]) -> str | None:
    """Why an edit of section or priority leaves the finding where its priority cannot
    be: a prioritized section's finding without one (its draft would say "Priority:
    none"), or a priority on a section that has none."""
    if what.get("section") is not None and shown.section in PRIORITIZED and not shown.priority:
        return f"{SECTIONS[shown.section].short} need a priority: add --priority P0, P1 or P2"
    if what.get("set_priority") and shown.priority and shown.section not in PRIORITIZED:
        return (
            f"{SECTIONS[shown.section].short} carry no priority: promote it (`+`, or "
            "--section action_items) to give it one"
        )
    return None


def resolve(run: RunResult, reference: str) -> Finding:
    """A fingerprint, or a unique prefix of it or of its hex part."""
    reference = reference.strip()
    exact = [f for f in run.findings if f.fingerprint == reference]
    if exact:
        return exact[0]
    matches = [
        f
        for f in run.findings
        if reference
        and (
            f.fingerprint.startswith(reference)
            or f.fingerprint.rsplit("-", 1)[-1].startswith(reference)
        )
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(
            f"no finding {reference!r} in the run of {run.date} (`scout triage list` shows them)"
        )
    shown = ", ".join(f.fingerprint for f in matches[:SHOWN_CANDIDATES])
    more = f" and {len(matches) - SHOWN_CANDIDATES} more" if len(matches) > SHOWN_CANDIDATES else ""
    raise UsageError(f"{reference!r} matches {len(matches)} findings: {shown}{more}")


def _names(findings: Sequence[Finding]) -> str:
    """The findings as a person knows them (what an undo says it undid): their titles, cut."""
    names = [f"“{_short(f.title)}”" for f in findings[:3]]
    return ", ".join(names) + (f" and {len(findings) - 3} more" if len(findings) > 3 else "")


def _short(title: str, width: int = 48) -> str:
    title = " ".join(title.replace("`", "").split())
    return title if len(title) <= width else title[: width - 1].rstrip() + "…"
