"""Parse prior reports back into items (SPEC §2.0).

Prior reports are hand-written by an LLM as often as by our renderer, so this is
tolerant: section headings with varying suffixes, `**[P1] title**` or `[P1] title`,
items wrapped over indented lines, missing or extra sections, code fences, board links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from itertools import takewhile

from scout_tui.markdown import fence_closes, fence_open, indentation
from scout_tui.model import PriorItem, Priority, PriorReport, Section

_TITLE_RE = re.compile(
    r"^#\s*Nightly Scout Report\b[^\n]*?(\d{4}-\d{2}-\d{2})", re.IGNORECASE | re.MULTILINE
)
_HEADING = re.compile(r"^(#{2,4})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_CHECKBOX = re.compile(r"^\[([ xX])\]\s*")
_PRIORITY = re.compile(r"\[\s*(P[0-2])\s*\]", re.IGNORECASE)
_BOLD_LEAD = re.compile(r"^\*\*(.+?)\*\*")
_DASH = re.compile(r"\s+(?:—|–|--)\s+|\s+-\s+")
_FIRST_REPORTED = re.compile(r"first[ -]reported(?:\s+on)?:?\s*\**\s*(\d{4}-\d{2}-\d{2})", re.I)
_MARKER = re.compile(
    r"<!--\s*scout:fp=([\w.:-]+)(?:\s+items=([0-9a-f.]*))?(?:\s+first=(\d{4}-\d{2}-\d{2}))?"
    r"\s*-->"
)
_BOARD = re.compile(r"https?://[^\s)>\]]+/projects/\d+[^\s)>\]]*")
_NOISE = re.compile(
    r"^(?:_)?(?:nothing to report|none\.?$|n/a$|ci green|all ci green|no (?:new )?findings"
    r"|[^—]*:\s*skipped\s*—|skipped\s*—)",
    re.IGNORECASE,
)

# Heading keywords, tried in order; the first that appears in the heading wins.
_SECTION_WORDS: list[tuple[str, Section]] = [
    ("carried", Section.CARRIED_FORWARD),
    ("ci failure", Section.CI_FAILURES),
    ("ci status", Section.CI_FAILURES),
    ("action item", Section.ACTION_ITEMS),
    ("opportunit", Section.OPPORTUNITIES),
    ("fyi", Section.FYI),
    ("all clear", Section.ALL_CLEAR),
    ("doc", Section.DOCS),
]


def section_for_heading(heading: str) -> Section | None:
    lowered = heading.lower()
    for word, section in _SECTION_WORDS:
        if word in lowered:
            return section
    return None


@dataclass
class _Open:
    section: Section
    lines: list[str] = field(default_factory=list)
    heading_title: str | None = None


def _strip_markdown(text: str) -> str:
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    text = re.sub(r"\*\*|__", "", text)
    return " ".join(text.split())


def _title_of(first_line: str) -> str:
    text = _MARKER.sub("", first_line).strip()
    text = _CHECKBOX.sub("", text)
    bold = _BOLD_LEAD.match(text)
    if bold:
        title = bold.group(1)
    else:
        pieces = _DASH.split(_PRIORITY.sub("", text, count=1).strip(), maxsplit=1)
        title = pieces[0]
        if len(title) > 160:
            title = re.split(r"(?<=[.!?])\s", title, maxsplit=1)[0][:160]
    title = _PRIORITY.sub("", title, count=1)
    return _strip_markdown(title).strip(" :—-")


def _item_from(block: _Open) -> PriorItem | None:
    lines = block.lines
    text = "\n".join(lines).strip()
    if not text:
        return None
    first = " ".join(line.strip() for line in takewhile(str.strip, lines))
    if block.heading_title is None and _NOISE.match(_strip_markdown(first).strip("_* ")):
        return None
    checkbox = _CHECKBOX.match(first)
    priority = _PRIORITY.search(_MARKER.sub("", first))
    marker = _MARKER.search(text)
    first_match = _FIRST_REPORTED.search(text)
    first_text = first_match.group(1) if first_match else None
    if marker and marker.group(3):
        first_text = marker.group(3)  # ours, exact

    board = _BOARD.search(text)
    title = block.heading_title or _title_of(first)
    if not title:
        return None
    return PriorItem(
        section=block.section,
        priority=Priority(priority.group(1).upper()) if priority else None,
        title=title,
        text=text,
        first_reported=_date_or_none(first_text),
        fingerprint=marker.group(1) if marker else None,
        item_digests=[d for d in (marker.group(2) or "").split(".") if d]
        if marker and marker.group(2) is not None
        else None,
        board_url=board.group(0) if board else None,
        checked=bool(checkbox and checkbox.group(1).lower() == "x"),
    )


def _date_or_none(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def report_date(markdown: str) -> date | None:
    match = _TITLE_RE.search(markdown)
    if not match:
        return None
    try:
        return date.fromisoformat(match.group(1))
    except ValueError:
        return None


def is_report(markdown: str) -> bool:
    return markdown.lstrip().startswith("# Nightly Scout Report")


def parse_report(markdown: str, fallback_date: date | None = None, source: str = "") -> PriorReport:
    """Parse one report. Raises ValueError only when it has no date at all."""
    markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    found = report_date(markdown) or fallback_date
    if found is None:
        raise ValueError(f"{source or 'report'}: no date in its title and none given")
    items: list[PriorItem] = []
    section: Section | None = None
    current: _Open | None = None
    item_indent = 0
    in_fence: str | None = None
    fence_indent = 0

    def close() -> None:
        nonlocal current
        if current is not None:
            item = _item_from(current)
            if item is not None:
                items.append(item)
        current = None

    for line in markdown.split("\n"):
        # Fences sit inside list items at any depth, so an opener may have any indentation;
        # its closer, CommonMark's 3 columns more at most (more is content: a traceback's).
        if in_fence is not None:
            if current is not None:
                current.lines.append(line)
            if fence_closes(line, in_fence, max_indent=fence_indent + 3):
                in_fence = None
            continue
        opened = fence_open(line, max_indent=None)
        if opened:
            in_fence, fence_indent = opened, indentation(line)
            if current is not None:
                current.lines.append(line)
            continue
        heading = _HEADING.match(line)
        if heading:
            level, text = len(heading.group(1)), heading.group(2)
            named = section_for_heading(text)
            if level == 2 or (named is not None and level == 3 and section != Section.CI_FAILURES):
                close()
                section = named
                item_indent = 0
                continue
            if section is Section.CI_FAILURES:
                close()
                current = _Open(section, [line], heading_title=_strip_markdown(text))
                continue
            close()  # a sub-group heading inside a section
            continue
        if section is None:
            continue
        item = _ITEM.match(line)
        if item and (current is None or current.heading_title is None):
            indent = len(item.group(1).expandtabs(4))
            if current is None or indent <= item_indent:
                close()
                item_indent = indent
                current = _Open(section, [item.group(2)])
                continue
        if current is None:
            continue
        if not line.strip():
            current.lines.append("")
            continue
        indented = len(line) - len(line.lstrip()) > item_indent
        previous_blank = current.lines and current.lines[-1] == ""
        if previous_blank and not indented and current.heading_title is None:
            close()  # a paragraph after the list, not part of the item
            continue
        current.lines.append(line.strip())
    close()
    return PriorReport(date=found, source=source, items=items)
