"""`scout stats`: what reviewers made of each kind of finding over the last days — accepted,
demoted, promoted, dropped (and why), merged — so that noise stays measured in daily use."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scout_tui.triage.store import Action, DecisionStore

COLUMNS = ("accepted", "demoted", "promoted", "dropped", "merged", "edited")
# Review composes each action's label as "<verb> <what>": the verb says what was done.
VERBS = {
    "accept": "accepted",
    "demote": "demoted",
    "promote": "promoted",
    "drop": "dropped",
    "merge": "merged",
    "edit": "edited",
}


@dataclass
class KindStats:
    kind: str
    reviewed: int = 0  # findings with any standing decision in the window
    counts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)  # why they were dropped

    def to_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "reviewed": self.reviewed,
            **{column: self.counts[column] for column in COLUMNS},
            "drop_reasons": dict(self.reasons.most_common()),
        }


def kind_of(fingerprint: str) -> str:
    """A fingerprint is `<kind>-<hex digest>` (model.fingerprint)."""
    return fingerprint.rpartition("-")[0] or fingerprint


def decision_stats(actions: list[Action]) -> list[KindStats]:
    """Per kind, each finding counted once per column: its latest accept, drop or merge
    (the one that stands: accepted then dropped is dropped), its latest move (promoted or
    demoted), and whether it was edited."""
    final: dict[str, tuple[str, str | None]] = {}  # fingerprint → decision, drop reason
    moved: dict[str, str] = {}
    edited: set[str] = set()
    for action in actions:  # oldest first
        verb = VERBS.get(action.label.partition(" ")[0])
        for change in action.changes:
            fp, after = change.fingerprint, change.after
            if verb in ("demoted", "promoted"):
                moved[fp] = verb
            elif verb == "edited":
                edited.add(fp)
            elif after is None or after.decision is None:
                final.pop(fp, None)
            else:
                final[fp] = (after.decision, after.reason)
    by_kind: dict[str, KindStats] = {}
    for fp in final.keys() | moved.keys() | edited:
        stats = by_kind.setdefault(kind_of(fp), KindStats(kind_of(fp)))
        stats.reviewed += 1
        if fp in final:
            decision, reason = final[fp]
            stats.counts[decision] += 1
            if decision == "dropped":
                stats.reasons[reason or "(no reason)"] += 1
        if fp in moved:
            stats.counts[moved[fp]] += 1
        if fp in edited:
            stats.counts["edited"] += 1
    return sorted(by_kind.values(), key=lambda s: (-s.reviewed, s.kind))


def stats_since(store: DecisionStore, now: datetime, days: int) -> list[KindStats]:
    return decision_stats(store.standing(now - timedelta(days=days)))


def render_table(stats: list[KindStats], days: int, since: datetime, where: str) -> str:
    if not stats:
        return (
            f"No reviewer decisions in the last {days} day{'s' if days != 1 else ''} "
            f"(since {since:%Y-%m-%d}) in {where}."
        )
    header = ("kind", "reviewed", *COLUMNS)
    rows = [(s.kind, str(s.reviewed), *(str(s.counts[c]) for c in COLUMNS)) for s in stats]
    total = sum(s.reviewed for s in stats)
    widths = [max(len(row[n]) for row in [header, *rows]) for n in range(len(header))]

    def line(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        return "  ".join(cells).rstrip()

    out = [
        f"Reviewers' decisions over the last {days} day{'s' if days != 1 else ''} "
        f"(since {since:%Y-%m-%d}): {total} finding{'s' if total != 1 else ''} reviewed",
        "",
        line(header),
        *(line(row) for row in rows),
    ]
    dropped = [s for s in stats if s.reasons]
    if dropped:
        out += ["", "Dropped, and why:"]
        for s in dropped:
            out += [f"  {s.kind}:"]
            out += [f"    {n} × {reason}" for reason, n in s.reasons.most_common()]
    return "\n".join(out)
