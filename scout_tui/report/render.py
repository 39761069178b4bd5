"""Render findings into the report template (SPEC §2.4 step 1).

Pure: findings in, Markdown out. Titles and bodies are Markdown our collectors wrote, so
they are only neutralized (no raw HTML, no pings); text taken verbatim from logs or code
(tracebacks, errors, commands) goes through `code` / `fence`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Literal

from scout_tui.analysis.text.markdown import (
    code,
    cut_line,
    cut_lists,
    cut_text,
    cut_to,
    fence,
    fence_open,
    is_commit,
    is_fingerprint,
    link,
    more,
    neutralize,
    neutralize_line,
    one_line,
    pack_digests,
    table_cell,
)
from scout_tui.errors import ScoutError
from scout_tui.model import (
    ADVISORY,
    SECTIONS,
    CollectorState,
    Finding,
    QuietMark,
    Section,
    Status,
    item_digest,
)

REPORT_TITLE = "Nightly Scout Report"

NOTHING = "nothing to report"
WITHHELD = "not yet reviewed — left out of this report until reviewed"
FIRST_REPORT = (
    "First report: no prior report to compare with, so every finding is new and "
    '"new" means since the start of the day.'
)
PRIORS_UNREAD = (
    "Prior reports: {why}. Every finding is shown as new, whatever earlier reports said."
)
# GitHub refuses a comment (and a draft's body) longer than this many characters.
COMMENT_LIMIT = 65_536
LINE_CHARS = 300  # a line of verbatim evidence, when cut
ALL_CLEAR_CHARS = 160
LIST_SEE = "`scout report --json` or the console"  # where a list `scout report` cut is whole


@dataclass(frozen=True)
class Layout:
    """How much of each finding a report shows: everything (`scout report`), or cut to fit
    a GitHub comment. Whatever is cut, every item keeps its hidden marker."""

    max_items: int | None = None  # longer evidence lists and tracebacks: "… N more"
    collapse: Literal["", "details", "count"] = ""  # FYI and All Clear
    cut_sections: bool = False  # every section's list cut to `max_items` too
    # A finding's own lists (its items, one a line) longer than this: "… N more". The
    # JSON and the console keep them whole.
    list_items: int | None = None


FULL = Layout()


class ReportTooLong(ScoutError):
    """Even cut to its markers, the report does not fit a GitHub comment."""


def report_marker(report_date: date) -> str:
    """Says "scout wrote this report": publish edits only a comment that carries it."""
    return f"<!-- scout:report date={report_date.isoformat()} -->"


def run_marker(head: str) -> str:
    """The commit the report's run scanned: the next day's check of a vanished item runs
    there to tell a fix from a check that never found it."""
    return f"<!-- scout:run head={head} -->"


def quiet_marker(mark: QuietMark) -> str:
    """An FYI left out as unchanged, with the items it went quiet with (SPEC: suppression
    that stays)."""
    items = (
        f"~{mark.set_digest}.{mark.count or 0}"
        if mark.set_digest
        else pack_digests(mark.item_digests)
    )
    parts = [
        f"scout:quiet fp={mark.fingerprint}",
        f"set={items}",
        f"since={mark.since.isoformat()}",
    ]
    if mark.first_reported:
        parts.append(f"first={mark.first_reported.isoformat()}")
    return "<!-- " + " ".join(parts) + " -->"


def marker(finding: Finding) -> str:
    """The hidden marker that lets tomorrow's run match this item exactly; none for a
    fingerprint scout did not make (from a bundle), which could close the comment."""
    if not is_fingerprint(finding.fingerprint):
        return ""
    parts = [f"scout:fp={finding.fingerprint}"]
    if finding.items:
        parts.append("items=" + ".".join(sorted({item_digest(i) for i in finding.items})))
    if finding.first_reported:  # survives a one-line rendering that does not say it
        parts.append(f"first={finding.first_reported.isoformat()}")
    return "<!-- " + " ".join(parts) + " -->"


def _indent(text: str, prefix: str = "  ") -> str:
    # A line of spaces is kept: inside a fence it is content.
    return "\n".join(prefix + line if line else "" for line in text.split("\n"))


_BLOCK = re.compile(r"[ ]{0,3}(?:[-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|\||#{1,6}(?:[ \t]|$)|>)")


def _starts_block(line: str) -> bool:
    """Whether `line` opens a block a paragraph's line cannot hold."""
    return fence_open(line, 0) is not None or _BLOCK.match(line) is not None


def _split_body(body: str) -> tuple[str, str]:
    """First paragraph (goes after the em dash) and the rest (indented below).

    The paragraph ends at a blank line or where another block starts (a fence, a list, a
    table, a heading, a quote): joined onto one line, a list would read "- a - b" and a fence
    would stop being one (its closing line would open another).
    """
    lines = body.strip("\n").split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if not lines or _starts_block(lines[0]):
        return "", "\n".join(lines).rstrip()
    first = 0
    while first < len(lines) and lines[first].strip() and not _starts_block(lines[first]):
        first += 1
    summary = " ".join(line.strip() for line in lines[:first])
    rest = lines[first:]
    while rest and not rest[0].strip():
        rest.pop(0)
    return summary, "\n".join(rest).rstrip()


def _end_a_list(lines: list[str]) -> None:
    """A blank line after `lines` when they end in a bullet: else CommonMark reads the next
    line as that bullet's continuation."""
    if lines[-1].rsplit("\n", 1)[-1].lstrip().startswith("- "):
        lines.append("")


def _files_line(finding: Finding) -> str:
    if not finding.files:
        return ""
    refs = [f"{ref.path}:{ref.line}" if ref.line else ref.path for ref in finding.files[:5]]
    others = f" and {len(finding.files) - 5} more" if len(finding.files) > 5 else ""
    return "Files: " + ", ".join(code(ref) for ref in refs) + others


def _ci_evidence(finding: Finding, max_items: int | None) -> str:
    evidence = finding.evidence
    cut = max_items or sys.maxsize
    lines: list[str] = []
    if evidence.failing_tests:
        tests = [code(t) for t in evidence.failing_tests[:cut]]
        if len(evidence.failing_tests) > cut:
            tests.append(more(len(evidence.failing_tests) - cut))
        lines.append("- **Failing tests**: " + ", ".join(tests))
    if evidence.error:
        error = one_line(evidence.error)
        if max_items and len(error) > LINE_CHARS:
            hidden = more(len(error) - LINE_CHARS, "characters")
            lines.append(f"- **Error**: {code(error[:LINE_CHARS])} {hidden}")
        else:
            lines.append("- **Error**: " + code(error))
    frames = [frame for frame in evidence.frames if frame.in_experiment]
    if frames:
        lines.append("- **Experiment frames**:")
        lines.extend(
            f"  - {code(f'{frame.path}:{frame.line}')} in {code(frame.function)}"
            for frame in frames[:cut]
        )
        if len(frames) > cut:
            lines.append(f"  - {more(len(frames) - cut)}")
    if evidence.regression:
        lines.append("- **Regression range**:")
        lines.append("")
        lines.append(_indent(regression_table(finding)))
        lines.append("")
    if evidence.repro:
        lines.append("- **Repro**:")
        lines.append(_indent(fence(evidence.repro, "bash")))
    if evidence.traceback:
        traceback = evidence.traceback
        lines_cut = traceback.count("\n") + 1 - cut
        if max_items and (lines_cut > 0 or len(traceback) > cut * LINE_CHARS):
            traceback = cut_text(traceback, cut, LINE_CHARS)
            cut_note = more(lines_cut, "lines above") if lines_cut > 0 else "long lines cut"
            lines.append(f"- **Traceback** — {cut_note}:")
        else:
            lines.append("- **Traceback**:")
        lines.append(_indent(fence(traceback)))
    return "\n".join(lines)


def regression_table(finding: Finding) -> str:
    evidence = finding.evidence
    rows = ["| Nightly | Status | PyTorch Commit |", "| --- | --- | --- |"]
    for row in evidence.regression:
        commit = table_cell(code(row.commit[:12])) if row.commit else "unknown"
        rows.append(f"| {table_cell(row.nightly)} | {table_cell(row.status)} | {commit} |")
    if evidence.compare_url:
        rows.append("")
        rows.append(link("Compare the two commits", evidence.compare_url))
    return "\n".join(rows)


def render_item(
    finding: Finding, max_items: int | None = None, list_items: int | None = None
) -> str:
    """One list item; the layout matches what the prior-report parser reads back.
    `max_items`: longer lists and tracebacks are cut to that many, with "… N more";
    `list_items`: the body's lists alone are."""
    summary, rest = _split_body(neutralize(finding.body))
    if max_items:  # a body our collectors wrote, long: its lists, then its length
        summary = cut_line(summary, max_items * LINE_CHARS)
        rest = cut_to(cut_lists(rest, max_items, see=LIST_SEE), max_items * LINE_CHARS * 2)
    elif list_items:
        rest = cut_lists(rest, list_items, see=LIST_SEE)
    title = neutralize_line(finding.title)
    if finding.priority is not None:
        title = f"[{finding.priority.value}] {title}"
    box = "[ ] " if SECTIONS[finding.section].checkbox else ""
    board = (
        f" ({link('board item', finding.board.url)})" if finding.board and finding.board.url else ""
    )
    head = f"- {box}**{title}**"
    if summary:
        head += f" — {summary}"
    head += board
    by_hand = finding.decision in ("edited", "promoted")  # what a person wrote is shown whole
    # One line still says where to look: a reviewer acts on it without the first report.
    where = (
        " · "
        + ", ".join(
            code(f"{ref.path}:{ref.line}" if ref.line else ref.path) for ref in finding.files[:2]
        )
        if finding.files
        else ""
    )
    if finding.unchanged_line and not by_hand:  # carried, unchanged: one line
        line = neutralize_line(finding.unchanged_line)
        return f"- {box}**{title}** — {line}{where}{board} {marker(finding)}"
    if (
        finding.status is Status.CARRIED
        and finding.section in ADVISORY
        and finding.status_update
        and not by_hand
    ):
        # Awareness the first report detailed: what changed is the news (the console and
        # the JSON keep the whole of it).
        line = neutralize_line(finding.status_update)
        return f"- {box}**{title}** — {line}{where}{board} {marker(finding)}"
    head += " " + marker(finding)
    lines = [head]
    if finding.status is Status.CARRIED and finding.first_reported:
        update = finding.status_update and f"; status: {neutralize_line(finding.status_update)}"
        lines.append(f"  First reported {finding.first_reported.isoformat()}{update or ''}.")
    elif finding.status is Status.NEW and finding.status_update:  # news about a known item
        update = neutralize_line(finding.status_update)
        lines.append(f"  {update[:1].upper()}{update[1:]}.")
    if rest:
        lines.append(_indent(rest))
    if finding.suggested_fix:
        fix = neutralize(finding.suggested_fix).strip("\n")
        # A fix that starts a block (a fence, a list) keeps it on lines of its own, or a
        # fence would not be one and a list would read "fix: - a" then "- b".
        first = fix.split("\n", 1)[0]
        gap = "\n\n" if _starts_block(first) else " "
        _end_a_list(lines)
        lines.append(_indent("Suggested fix:" + gap + fix))
    files = _files_line(finding)
    if files:
        _end_a_list(lines)
        lines.append("  " + files)
    if finding.section is Section.CI_FAILURES:
        evidence = _ci_evidence(finding, max_items)
        if evidence:
            lines.append(_indent(evidence))
    return "\n".join(lines)


def _all_clear_item(finding: Finding) -> str:
    summary, _ = _split_body(neutralize(finding.body))
    text = neutralize_line(finding.title)
    # A short why, not a list: a standing all-clear is read every day.
    short = len(summary) <= ALL_CLEAR_CHARS or finding.status is Status.RESOLVED  # its evidence
    if summary and not summary.endswith(":") and short:
        text += f" — {summary}"
    return f"- {text} {marker(finding)}"


def _skipped_lines(section: Section, collectors: Iterable[CollectorState], homes) -> list[str]:
    lines = []
    for state in collectors:
        if homes.get(state.name) != section:
            continue
        if state.state == "skipped":
            lines.append(f"- _{one_line(state.title)}: skipped — {one_line(state.reason or '')}_")
        elif state.state == "failed":
            lines.append(f"- _{one_line(state.title)}: failed — {one_line(state.reason or '')}_")
    return [neutralize(line) for line in lines]


def _one_line_item(finding: Finding) -> str:
    """A folded item: its title and its marker, which tomorrow's run matches."""
    title = neutralize_line(finding.title)
    if finding.priority is not None:
        title = f"[{finding.priority.value}] {title}"
    return f"- **{title}** {marker(finding)}"


FOLDED_PER_LINE = 40


def folded_marker(kind: str, findings: Sequence[Finding]) -> str:
    """The markers of items of one kind a report leaves out, in one HTML comment: what
    `marker` says of each, a third of its length (thousands of FYI items fit a comment).
    `<!-- scout:folded kind=K HEX[:DIGESTS][@FIRST] … -->`"""
    entries = []
    for finding in findings:
        entry = finding.fingerprint.rsplit("-", 1)[1]
        if finding.items:
            entry += ":" + ".".join(sorted({item_digest(i) for i in finding.items}))
        if finding.first_reported:
            entry += "@" + finding.first_reported.isoformat()
        entries.append(entry)
    return f"<!-- scout:folded kind={kind} {' '.join(entries)} -->"


def _hidden(findings: Sequence[Finding]) -> list[str]:
    """The markers of items a report leaves out, on lines of their own: HTML comments that
    render as nothing and that the prior-report parser reads as the items."""
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        if is_fingerprint(finding.fingerprint):  # none for one scout did not make
            by_kind.setdefault(finding.fingerprint.rsplit("-", 1)[0], []).append(finding)
    return [
        folded_marker(kind, group[start : start + FOLDED_PER_LINE])
        for kind, group in by_kind.items()
        for start in range(0, len(group), FOLDED_PER_LINE)
    ]


def _section_body(section: Section, items: list[Finding], layout: Layout) -> list[str]:
    shown, left_out = items, []
    if layout.cut_sections and layout.max_items and len(items) > layout.max_items:
        shown, left_out = items[: layout.max_items], items[layout.max_items :]
    collapse = layout.collapse if SECTIONS[section].collapsed and items else ""
    if collapse == "count":
        return [f"_{len(items)} item(s), folded to fit: see `scout report`._", "", *_hidden(items)]
    if collapse == "details":
        return [
            f"<details><summary>{len(items)} item(s)</summary>",
            "",
            *(_one_line_item(f) for f in shown),
            "",
            "</details>",
        ]
    if section is Section.ALL_CLEAR:
        body = [_all_clear_item(finding) for finding in shown]
    else:
        body = [render_item(finding, layout.max_items, layout.list_items) for finding in shown]
    if left_out:
        body += ["", f"_{more(len(left_out), 'items')}._", "", *_hidden(left_out)]
    return body


_PRIORITY_RANK = {"P0": 0, "P1": 1, "P2": 2, None: 3}


def report_order(finding: Finding) -> tuple[int, str]:
    """Where a finding stands in its section of the report (and of the console's tree): by
    priority, then title; a sort by it keeps ties in the run's order."""
    return _PRIORITY_RANK[finding.priority.value if finding.priority else None], finding.title


def render_report(
    report_date: date,
    findings: Sequence[Finding],
    collectors: Sequence[CollectorState] = (),
    collector_sections: dict[str, Section] | None = None,
    layout: Layout = FULL,
    *,
    head: str | None = None,
    quiet: Sequence[QuietMark] = (),
    first: bool = False,
    priors_unread: str | None = None,
    withheld: Mapping[Section, int] | None = None,
) -> str:
    """The whole report. `collector_sections` says where a skipped collector is mentioned;
    `layout`, how much of it is shown (`fit_report` picks one); `head` and `quiet` travel
    as hidden markers for the next day's run. `first`: no prior report exists to compare
    with; `priors_unread`: why none was read (then nothing is claimed about them);
    `withheld`: findings a reviewed-only report leaves out, by section (said there)."""
    homes = collector_sections or {}
    by_section: dict[Section, list[Finding]] = {section: [] for section in Section}
    for finding in findings:
        by_section[finding.section].append(finding)
    out = [f"# {REPORT_TITLE} — {report_date.isoformat()}", report_marker(report_date)]
    if head and is_commit(head):
        out.append(run_marker(head))
    if priors_unread:
        out.append(f"\n_{PRIORS_UNREAD.format(why=one_line(priors_unread))}_")
    elif first:
        out.append(f"\n_{FIRST_REPORT}_")
    ran = {state.name for state in collectors}
    if collectors and homes and set(homes) - ran:
        titles = ", ".join(state.title for state in collectors)
        out.append(f"\n_Partial report: only {one_line(titles)} ran._")
    for section, traits in SECTIONS.items():
        heading = traits.heading
        items = sorted(by_section[section], key=report_order)
        body = _section_body(section, items, layout)
        body += _skipped_lines(section, collectors, homes)
        left = (withheld or {}).get(section, 0)
        if left:
            body.append(f"- _{left} finding{'s' * (left != 1)} {WITHHELD}_")
        if not body:  # "CI green" is said only by what saw a green run (`ci_passing`)
            body = [NOTHING]
        out.append(f"\n## {heading}\n")
        out.append("\n".join(body))
    marks = [quiet_marker(mark) for mark in quiet if is_fingerprint(mark.fingerprint)]
    if marks:
        out.append("\n" + "\n".join(marks))
    return "\n".join(out) + "\n"


def fit_report(render: Callable[[Layout], str], max_items: int, limit: int) -> str:
    """The first of ever shorter layouts whose report is at most `limit` characters: the
    whole report but for findings' long lists; long evidence cut; FYI and All Clear folded
    into `<details>`; then into a count; then every section's list cut. Each keeps every
    item's marker."""
    layouts = [
        Layout(list_items=max_items),
        Layout(max_items),
        Layout(max_items, "details"),
        Layout(max_items, "count"),
        Layout(max_items, "count", cut_sections=True),
    ]
    # Each layout is shorter than the one before: the whole report first (it fits on any
    # ordinary day), then the shortest, which says at once when none fits.
    text = render(layouts[0])
    if len(text) <= limit:
        return text
    shortest = render(layouts[-1])
    if len(shortest) <= limit:
        for layout in layouts[1:-1]:
            text = render(layout)
            if len(text) <= limit:
                return text
        return shortest
    text = shortest
    raise ReportTooLong(
        f"the report does not fit in a GitHub comment ({limit:,} characters "
        f"for it) even cut to {max_items} item(s) a list: {len(text):,}; lower "
        "[report] max_list_items"
    )
