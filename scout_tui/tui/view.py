"""What the console shows, computed apart from any widget: the findings grouped Section →
Priority with their badges, the filter, "N of M reviewed". Pure, so it is tested without an
app and costs nothing on the event loop beyond a pass over the findings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from scout_tui.model import SECTIONS, Finding, Priority, Section, Status, TriageEntry
from scout_tui.report.render import report_order
from scout_tui.triage import decisions as triage
from scout_tui.triage.query import Filter

PRIORITY_ORDER = (Priority.P0, Priority.P1, Priority.P2, None)


@dataclass(frozen=True)
class Row:
    """One finding as the tree shows it."""

    decided: triage.Decided
    badges: tuple[str, ...]
    reviewed: bool

    @property
    def fingerprint(self) -> str:
        return self.decided.original.fingerprint

    @property
    def finding(self) -> Finding:
        return self.decided.current


@dataclass
class Group:
    priority: Priority | None
    rows: list[Row] = field(default_factory=list)


@dataclass
class SectionView:
    section: Section
    groups: list[Group]

    @property
    def heading(self) -> str:
        return SECTIONS[self.section].heading

    @property
    def rows(self) -> list[Row]:
        return [row for group in self.groups for row in group.rows]


def badges(
    decided: triage.Decided,
    titles: dict[str, str] | None = None,
    absorbed: int = 0,
    filed: bool = False,
) -> tuple[str, ...]:
    """`titles` names a merge's target; `absorbed` counts the findings merged into this;
    `filed`: a publish from here filed its Backlog draft since the run was collected."""
    finding, entry = decided.original, decided.entry
    out = []
    # What the reviewer decided first: in a narrow terminal the column keeps its start,
    # and "demoted" or "edited" is what tells one ✓ from another.
    if decided.label:
        label = decided.label
        if label == "merged" and entry is not None and entry.merged_into:
            target = (titles or {}).get(entry.merged_into)
            label = (
                f"merged into “{short_title(target)}”"
                if target
                else (f"merged into {entry.merged_into.rsplit('-', 1)[-1][:6]}")
            )
        out.append(label)
    if finding.status is Status.NEW:
        out.append("new")
    elif finding.status is Status.CARRIED:
        since = finding.first_reported.isoformat() if finding.first_reported else "earlier"
        out.append(f"since {since}")
    if finding.board is not None:
        out.append(f"board: {finding.board.status or 'no status'}")
    elif filed:
        out.append("board: filed")
    if absorbed:
        out.append(f"+{absorbed} merged")
    return tuple(out)


def short_title(title: str, width: int = 32) -> str:
    """A title said in a badge or a notice: without Markdown's backticks, cut with "…"."""
    plain = " ".join(title.replace("`", "").split())
    return plain if len(plain) <= width else plain[: width - 1].rstrip() + "…"


def rows_of(
    findings: Sequence[Finding],
    entries: dict,
    titles: dict[str, str] | None = None,
    filed: frozenset[str] = frozenset(),
) -> list[Row]:
    """`titles`: of every finding of the run, for merges into findings not in `findings`;
    `filed`: the findings whose Backlog drafts publishes from here filed."""
    decided = triage.decided(findings, entries)
    titles = (
        titles if titles is not None else {d.original.fingerprint: d.current.title for d in decided}
    )
    absorbed: dict[str, int] = {}
    for entry in entries.values():
        if entry.decision == "merged" and entry.merged_into:
            absorbed[entry.merged_into] = absorbed.get(entry.merged_into, 0) + 1
    return [
        Row(
            d,
            badges(
                d,
                titles,
                absorbed.get(d.original.fingerprint, 0),
                d.original.fingerprint in filed,
            ),
            triage.reviewed(d.entry),
        )
        for d in decided
    ]


def sections(rows: Sequence[Row], keep: Filter | None = None) -> list[SectionView]:
    """Rows grouped in report order; a section with nothing (after the filter) is left out.
    Within a priority, as the report lists them (`report_order`)."""
    by_section: dict[Section, dict[Priority | None, list[Row]]] = {}
    for row in rows:
        if keep and not keep.matches(row.decided, row.reviewed):
            continue
        finding = row.finding
        by_section.setdefault(finding.section, {}).setdefault(finding.priority, []).append(row)
    out = []
    for section in Section:
        groups = by_section.get(section)
        if not groups:
            continue
        ordered = [
            Group(p, sorted(groups[p], key=lambda row: report_order(row.finding)))
            for p in PRIORITY_ORDER
            if p in groups
        ]
        out.append(SectionView(section, ordered))
    return out


def reviewed_count(rows: Sequence[Row]) -> tuple[int, int]:
    """(reviewed, of) — All Clear lines need no review."""
    counted = [row for row in rows if row.finding.section is not Section.ALL_CLEAR]
    return sum(1 for row in counted if row.reviewed), len(counted)


def changed_decisions(
    before: Mapping[str, TriageEntry], after: Mapping[str, TriageEntry]
) -> set[str]:
    """The findings whose decision shows differently (when it was recorded does not show)."""
    return {
        fp
        for fp in before.keys() | after.keys()
        if _decision(before.get(fp)) != _decision(after.get(fp))
    }


def _decision(entry: TriageEntry | None) -> TriageEntry | None:
    return entry.model_copy(update={"updated": None}) if entry is not None else None
