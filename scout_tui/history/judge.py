"""What became of a prior item scout did not find today: Resolved (on evidence: its check
finds it on the commit that report scanned and not today), aged out, not re-checked, or
scout's check disagrees with the report. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

from scout_tui.collect.base import Kind, Lifetime, Placement, born, spec_of
from scout_tui.history.match import absorb, match_report
from scout_tui.model import (
    PRIORITIZED,
    Evidence,
    Finding,
    PriorItem,
    PriorReport,
    Section,
    Status,
    fingerprint,
)


@dataclass(frozen=True)
class PriorCheck:
    """Today's checks run again on the commit the latest prior report's run scanned: an
    item is Resolved only when its check found it there and does not find it today."""

    head: str
    findings: Sequence[Finding]
    kinds: frozenset[str]  # the kinds whose collector ran to the end there


@dataclass
class Judge:
    """What became of a prior item scout did not find today: Resolved (on evidence), aged
    out, not re-checked, or scout's check disagrees with the report."""

    completed: frozenset[str]
    unchecked: frozenset[str]
    kinds: Mapping[str, Kind]
    today: Sequence[Finding] = ()
    check: PriorCheck | None = None
    resolved_at: Placement = field(default_factory=lambda: Placement(Section.ALL_CLEAR))

    def _lifetime(self, kind: str) -> Lifetime:
        return spec_of(self.kinds, kind).lifetime

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
    candidates = [f for f in check.findings if spec_of(kinds, f.kind).lifetime is not Lifetime.NEWS]
    if item.fingerprint and not item.fingerprint.startswith("prior_unchecked-"):
        return next(
            (f for f in candidates if item.fingerprint in (f.fingerprint, *f.aliases)), None
        )
    written = item.model_copy(update={"fingerprint": None})
    report = PriorReport(date=date.min, source="", items=[written])
    matched = match_report(candidates, report)
    if matched:
        return candidates[next(iter(matched))]
    parts = absorb(candidates, report, matched, kinds)
    return candidates[next(iter(parts))] if parts else None


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
