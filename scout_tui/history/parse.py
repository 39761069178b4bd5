"""Parse prior reports back into items (SPEC §2.0).

Prior reports are hand-written by an LLM as often as by our renderer, so this is
tolerant: section headings with varying suffixes, `**[P1] title**` or `[P1] title`,
items wrapped over indented lines, missing or extra sections, code fences, board links.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from scout_tui.analysis.text.markdown import (
    code_spans,
    fence_closes,
    fence_open,
    indentation,
    unpack_digests,
)
from scout_tui.model import PriorItem, Priority, PriorReport, QuietMark, Section

# Every pattern here runs on text of any size, so none may backtrack over a run of the same
# characters twice: `\s*#*\s*$` after a lazy group, or `\s+` before a literal that is not
# there, made one heading line with 1,000 spaces take two seconds (cubic: 10,000, half an
# hour).
_TITLE_RE = re.compile(
    r"^#\s*Nightly Scout Report\b[^\n]*?(\d{4}-\d{2}-\d{2})", re.IGNORECASE | re.MULTILINE
)
_HEADING = re.compile(r"(#{2,4})\s+(.*)")  # the closing #s are stripped without a regex
_ITEM = re.compile(r"(\s*)(?:[-*+]|\d+[.)])\s+(.*)")
_CHECKBOX = re.compile(r"^\[([ xX])\]\s*")
_PRIORITY = re.compile(r"\[\s*(P[0-2])\s*\]", re.IGNORECASE)
_DASH = re.compile(r"(?<=\s)(?:—|–|--|-)(?=\s)")  # the spaces around it: `str.rstrip`
_FIRST_REPORTED = re.compile(
    r"first[ \t-]*\n?[ \t]*reported(?:\s+on)?:?\s*(?:\*+\s*)?(\d{4}-\d{2}-\d{2})", re.IGNORECASE
)
# Markers grow at their end only: a newer scout may append `name=value` attributes, which
# this one skips, so a cron box and a laptop on different versions keep matching each
# other's reports; every older marker (fewer attributes, or none) is read forever.
LATER_ATTRIBUTES = r"(?:\s+[a-z][a-z0-9_]*=[\w.:-]*)*"
_MARKER = re.compile(
    r"<!--\s*scout:fp=([\w.:-]+)(?:\s+items=([0-9a-f.]*))?(?:\s+first=(\d{4}-\d{2}-\d{2}))?"
    + LATER_ATTRIBUTES
    + r"\s*-->"
)
_LAST_MARKER = re.compile(_MARKER.pattern + r"\s*$")  # where the renderer puts ours
# Items a report folded to their markers, several of one kind to a comment.
_FOLDED = re.compile(r"<!--\s*scout:folded\s+kind=([a-z][a-z0-9_]*)((?:\s+[0-9a-f.:@-]+)*)\s*-->")
_RUN = re.compile(
    r"<!--\s*scout:run\s+head=([0-9a-f]{40}|[0-9a-f]{64})" + LATER_ATTRIBUTES + r"\s*-->"
)
_QUIET = re.compile(
    r"<!--\s*scout:quiet\s+fp=([a-z][a-z0-9_]*-[0-9a-f]{12})\s+set=([A-Za-z0-9_-]*|~[0-9a-f]{12}\.\d{1,9})"
    r"\s+since=(\d{4}-\d{2}-\d{2})(?:\s+first=(\d{4}-\d{2}-\d{2}))?" + LATER_ATTRIBUTES + r"\s*-->"
)
_FOLDED_ENTRY = re.compile(r"([0-9a-f]{12})(?::([0-9a-f.]+))?(?:@(\d{4}-\d{2}-\d{2}))?")
# A project board link: a URL with `/projects/<n>` in it, to the end of its word.
_URL = re.compile(r"https?://")
_URL_END = re.compile(r"[\s)>\]]")
_PROJECTS = re.compile(r"/projects/\d")
_EMPHASIS = re.compile(r"\*\*|__")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_TITLE_WINDOW = 1000  # an unbolded title is at most 160 characters from its item's start
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_NOISE = re.compile(
    r"^(?:_)?(?:nothing to report|none\.?$|n/a$|ci green|all ci green|no (?:new )?findings"
    r"|[^—]*:\s*skipped\s*—|skipped\s*—|\d+ findings? not yet reviewed\s*—)",
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


@dataclass(slots=True)
class _Open:
    section: Section
    lines: list[str]
    heading_title: str | None = None
    fenced: set[int] | None = None  # which lines are a fence's

    def add_fenced(self, line: str) -> None:
        if self.fenced is None:
            self.fenced = set()
        self.fenced.add(len(self.lines))
        self.lines.append(line)


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the text between code spans, which are kept as they are."""
    if "`" not in text:  # the common case, and no need to look for spans
        return change(text)
    out: list[str] = []
    position = 0
    for start, end in code_spans(text):
        out.append(change(text[position:start]))
        out.append(text[start:end])
        position = end
    out.append(change(text[position:]))
    return "".join(out)


def _drop_comments(text: str) -> str:
    """`<!--…-->` removed. The regex is quadratic only in a `<!--` that nothing closes (it
    looks for `-->` to the end, again for each), and none can be where no `-->` follows."""
    unclosed = text.find("<!--", text.rfind("-->") + 1)
    if unclosed < 0:
        return _COMMENT.sub("", text)
    return _COMMENT.sub("", text[:unclosed]) + text[unclosed:]


def _strip_prose(text: str) -> str:
    return _EMPHASIS.sub("", _drop_comments(text))


def _strip_markdown(text: str) -> str:
    """No comments or bold, whitespace collapsed; code spans kept as they are (`**kwargs`)."""
    if "<!--" in text or "**" in text or "__" in text:
        text = _outside_code(text, _strip_prose)
    return " ".join(text.split())


def _is_noise(first: str) -> bool:
    """ "nothing to report", "x: skipped — why" and the like, not an item."""
    if "<!--" in first or "**" in first or "__" in first:
        first = _strip_prose(first)
    dash = first.find("—")
    if dash >= 0:  # every pattern is decided by the first em dash: the rest stays as it is
        first = first[: dash + 1]
    return _NOISE.match(" ".join(first.split()).strip("_* ")) is not None


def _bold_lead(text: str, start: int) -> str | None:
    """What `**…**` at `start` holds (before it: a checkbox, never a backtick); a `**`
    inside a code span does not close it."""
    if not text.startswith("**", start):
        return None
    end = text.find("**", start + 3)  # at least one character in between
    spans = code_spans(text) if end >= 0 and "`" in text[start:end] else iter(())
    span = next(spans, None)
    while end >= 0 and span is not None:
        if end < span[0]:
            break
        if end >= span[1]:
            span = next(spans, None)
            continue
        end = text.find("**", span[1])
    return text[start + 2 : end] if end >= 0 else None


def _without_markers(text: str) -> str:
    if "<!--" not in text:
        return text
    return _outside_code(text, lambda prose: _MARKER.sub("", prose))


def _title_of(first_line: str) -> str:
    """The title: what a leading `**…**` holds, or the text up to a dash (at most 160
    characters of it). Looks only at the start of a paragraph, however long."""
    text = first_line.strip()
    checkbox = _CHECKBOX.match(text)
    start = checkbox.end() if checkbox else 0  # an offset: no copy of a long paragraph
    bold = _bold_lead(text, start)
    if bold is not None:
        title = _without_markers(bold)
    else:
        window = _without_markers(text[start : start + _TITLE_WINDOW])
        text = _PRIORITY.sub("", window, count=1).strip()
        dash = _DASH.search(text)
        title = text[: dash.start()].rstrip() if dash else text
        if len(title) > 160:
            title = _SENTENCE_END.split(title, maxsplit=1)[0][:160]
    title = _PRIORITY.sub("", title, count=1)
    return _strip_markdown(title).strip(" :—-")


def _first_paragraph(block: _Open) -> str:
    """The item's first lines, up to a blank line or a fence (no copy of a single line)."""
    lines, fenced = block.lines, block.fenced or ()
    words = [lines[0].strip()]
    if not words[0] or 0 in fenced:
        return ""
    for index in range(1, len(lines)):
        line = lines[index].strip()
        if not line or index in fenced:
            break
        words.append(line)
    return " ".join(words)


def _marker(block: _Open, prose: str) -> re.Match[str] | None:
    """Our marker: at the end of the item's first line, where the renderer puts it; else
    the first outside code (one in a code span or a fence is text that was quoted)."""
    if "<!--" not in prose:
        return None
    last = _LAST_MARKER.search(block.lines[0])
    if last is not None and 0 not in (block.fenced or ()):
        return last
    # Markers come in order: one pass over each line's code spans, however many there are.
    line_start = line_end = -1
    spans: Iterator[tuple[int, int]] = iter(())
    span = None
    for match in _MARKER.finditer(prose):
        if match.start() > line_end:
            line_start = prose.rfind("\n", line_end + 1, match.start()) + 1 or line_end + 1
            line_end = prose.find("\n", match.end())
            line_end = len(prose) if line_end < 0 else line_end
            spans = code_spans(prose[line_start:line_end])
            span = next(spans, None)
        where = match.start() - line_start
        while span is not None and span[1] <= where:
            span = next(spans, None)
        if span is None or where < span[0]:
            return match
    return None


def _board(prose: str) -> str | None:
    position = 0
    while (url := _URL.search(prose, position)) is not None:
        end_match = _URL_END.search(prose, url.end())
        end = end_match.start() if end_match else len(prose)
        # At least one character between `://` and `/projects/`, all in one word.
        if _PROJECTS.search(prose, url.end() + 1, end):
            return prose[url.start() : end]
        position = end  # a later URL in this word ends at the same place: no better
    return None


def _item_from(block: _Open) -> PriorItem | None:
    lines = block.lines
    text = "\n".join(lines).strip()
    if not text:
        return None
    # Markers, dates and links in a fence are quoted text (a traceback's), not the item's.
    fenced = block.fenced
    prose = "\n".join(ln for i, ln in enumerate(lines) if i not in fenced) if fenced else text
    marker = _marker(block, prose)
    first = _first_paragraph(block)
    if block.heading_title is None and _is_noise(first):
        return None
    checkbox = _CHECKBOX.match(first)
    priority = _PRIORITY.search(first)  # never in a marker, which has no `[`
    first_match = _FIRST_REPORTED.search(prose)
    first_text = first_match.group(1) if first_match else None
    if marker and marker.group(3):
        first_text = marker.group(3)  # ours, exact

    board = _board(prose)
    title = block.heading_title or _title_of(first)
    if not title:
        return None
    found = {
        "priority": Priority(priority.group(1).upper()) if priority else None,
        "first_reported": _date_or_none(first_text),
        "fingerprint": marker.group(1) if marker else None,
        "item_digests": [d for d in (marker.group(2) or "").split(".") if d]
        if marker and marker.group(2) is not None
        else None,
        "board_url": board,
        "checked": bool(checkbox and checkbox.group(1).lower() == "x"),
    }
    # Only what differs from the defaults: half the memory and time per item (its set of
    # fields given is smaller), which counts when a report has a million.
    given: dict[str, Any] = {name: value for name, value in found.items() if value}
    if found["item_digests"] is not None:
        given["item_digests"] = found["item_digests"]  # [] is not None
    return PriorItem(section=block.section, title=title, text=text, **given)


def _folded_items(section: Section, line: str) -> list[PriorItem]:
    """The items a report folded to their markers (`render.fit_report`): one marker alone
    on its line, or a `scout:folded` comment of several. An item's title is its
    fingerprint, the only name the report kept."""
    line = line.rstrip()
    found: list[tuple[str, str | None, str | None]] = []
    if (single := _MARKER.fullmatch(line)) is not None:
        found.append((single.group(1), single.group(2), single.group(3)))
    elif (folded := _FOLDED.fullmatch(line)) is not None:
        for entry in folded.group(2).split():
            match = _FOLDED_ENTRY.fullmatch(entry)
            if match is not None:
                found.append(
                    (f"{folded.group(1)}-{match.group(1)}", match.group(2), match.group(3))
                )
    items = []
    for fingerprint, digests, first in found:
        given: dict[str, Any] = {"fingerprint": fingerprint}
        if first_date := _date_or_none(first):
            given["first_reported"] = first_date
        if digests is not None:
            given["item_digests"] = [d for d in digests.split(".") if d]
        items.append(PriorItem(section=section, title=fingerprint, text=line, **given))
    return items


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


def carries_report_marker(markdown: str, day: date) -> bool:
    """Whether `markdown` holds scout's report marker of `day` (render.report_marker), with
    any attributes a later scout appends."""
    pattern = rf"<!-- scout:report date={day.isoformat()}{LATER_ATTRIBUTES} -->"
    return re.search(pattern, markdown) is not None


def is_report(markdown: str) -> bool:
    return markdown.lstrip().startswith("# Nightly Scout Report")


def _lines(text: str) -> Iterator[str]:
    """`text.split("\\n")`, one line at a time: the whole list is 50 bytes a line more."""
    start = 0
    while (end := text.find("\n", start)) >= 0:
        yield text[start:end]
        start = end + 1
    yield text[start:]


def _heading_text(text: str) -> str:
    # An ATX heading's closing sequence, and the spaces around it.
    return text.rstrip().rstrip("#").rstrip()


def parse_report(markdown: str, fallback_date: date | None = None, source: str = "") -> PriorReport:
    """Parse one report. Raises ValueError only when it has no date at all.

    Linear in the report's size: one pass over its lines, each looked at a bounded number
    of times, and no pattern that backtracks over a long run of one character.
    """
    markdown = markdown.replace("\r\n", "\n").replace("\r", "\n")
    found = report_date(markdown) or fallback_date
    if found is None:
        raise ValueError(f"{source or 'report'}: no date in its title and none given")
    items: list[PriorItem] = []
    marks = _Marks()
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

    for line in _lines(markdown):
        # Fences sit inside list items at any depth, so an opener may have any indentation;
        # its closer, CommonMark's 3 columns more at most (more is content: a traceback's).
        if in_fence is not None:
            if current is not None:
                current.add_fenced(line)
            if fence_closes(line, in_fence, max_indent=fence_indent + 3):
                in_fence = None
            continue
        stripped = line.lstrip()
        lead = stripped[:1]
        if line.startswith("<!-- scout:") and _hidden_mark(line, marks):
            continue
        opened = fence_open(line, max_indent=None) if lead in ("`", "~") else None
        if opened:
            in_fence, fence_indent = opened, indentation(line)
            if current is not None:
                current.add_fenced(line)
            continue
        heading = _HEADING.match(line) if line.startswith("##") else None
        if heading:
            level, text = len(heading.group(1)), _heading_text(heading.group(2))
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
        after_item = current is None or (not current.lines[-1] and current.heading_title is None)
        if after_item and line.startswith("<!--") and (folded := _folded_items(section, line)):
            close()  # folded items' markers, alone on their line, between items
            items.extend(folded)
            continue
        # Rebound on every line: a match left over would keep its (maybe 20 MB) line alive.
        item = _ITEM.match(line) if lead in ("-", "*", "+") or lead.isdecimal() else None
        if item and (current is None or current.heading_title is None):
            indent = len(item.group(1).expandtabs(4))
            if current is None or indent <= item_indent:
                close()
                item_indent = indent
                current = _Open(section, [item.group(2)])
                continue
        if current is None:
            continue
        if not stripped:
            current.lines.append("")
            continue
        indented = len(line) - len(stripped) > item_indent
        previous_blank = current.lines and current.lines[-1] == ""
        if previous_blank and not indented and current.heading_title is None:
            close()  # a paragraph after the list, not part of the item
            continue
        current.lines.append(stripped.rstrip())
    close()
    # A date a report gives after its own day is no date it could know: not believed.
    items = [
        item.model_copy(update={"first_reported": None})
        if item.first_reported and item.first_reported > found
        else item
        for item in items
    ]
    quiet = [
        mark.model_copy(update={"first_reported": None})
        if mark.first_reported and mark.first_reported > found
        else mark
        for mark in marks.quiet
        if mark.since <= found
    ]
    return PriorReport(date=found, source=source, items=items, quiet=quiet, head=marks.head)


@dataclass
class _Marks:
    """What a report says of its run in hidden lines of their own: the commit it scanned
    and the FYIs it left out as unchanged."""

    head: str | None = None
    quiet: list[QuietMark] = field(default_factory=list)


def _hidden_mark(line: str, marks: _Marks) -> bool:
    line = line.rstrip()
    if (run := _RUN.fullmatch(line)) is not None:
        marks.head = marks.head or run.group(1)
        return True
    if (quiet := _QUIET.fullmatch(line)) is not None:
        since = _date_or_none(quiet.group(3))
        if since is None:
            return False
        items = quiet.group(2)
        summed = items.startswith("~")
        marks.quiet.append(
            QuietMark(
                fingerprint=quiet.group(1),
                since=since,
                first_reported=_date_or_none(quiet.group(4)),
                item_digests=[] if summed else unpack_digests(items),
                set_digest=items[1:13] if summed else None,
                count=int(items[14:]) if summed else None,
            )
        )
        return True
    return False
