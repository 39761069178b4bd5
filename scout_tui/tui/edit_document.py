"""A finding as a Markdown file for `$EDITOR`: a small header (title, priority), a blank
line, the body. Pure: text in, fields out, with a one-line reason when the header is bad."""

from __future__ import annotations

from dataclasses import dataclass

from scout_tui.model import Finding, Priority

GUIDE = (
    "<!-- scout: edit the title, the priority (P0, P1, P2 or none) and the body below "
    "the blank line; save and quit to record it (u undoes it). Empty the file to "
    "cancel. -->"
)
PRIORITIES = {p.value.lower(): p for p in Priority}


class BadDocument(ValueError):
    pass


@dataclass(frozen=True)
class Edited:
    """What the reviewer typed over a finding, in the modal or in $EDITOR."""

    title: str
    priority: Priority | None
    body: str


def finding_document(finding: Finding) -> str:
    priority = finding.priority.value if finding.priority else "none"
    return f"{GUIDE}\nTitle: {finding.title}\nPriority: {priority}\n\n{finding.body.strip()}\n"


def parse_document(text: str) -> Edited | None:
    """The edited fields; None when the file was emptied (the edit is cancelled)."""
    lines = text.splitlines()
    if not "".join(lines).strip():
        return None
    position = 0
    while position < len(lines) and (
        not lines[position].strip() or lines[position].lstrip().startswith("<!--")
    ):
        position += 1
    header: dict[str, str] = {}
    while position < len(lines) and lines[position].strip():
        line = lines[position]
        key, colon, value = line.partition(":")
        name = key.strip().lower()
        if not colon or name not in ("title", "priority"):
            raise BadDocument(
                f"line {position + 1}: expected `Title:` or `Priority:` before "
                f"the blank line, found {line.strip()[:60]!r}"
            )
        if name in header:
            raise BadDocument(f"line {position + 1}: `{key.strip()}:` given twice")
        header[name] = value.strip()
        position += 1
    if not header.get("title"):
        raise BadDocument("the header has no `Title:` (or it is empty)")
    chosen = header.get("priority", "none").lower()
    if chosen not in PRIORITIES and chosen != "none":
        raise BadDocument(f"`Priority: {header['priority']}`: use P0, P1, P2 or none")
    body = "\n".join(lines[position + 1 :]).strip()
    return Edited(header["title"], PRIORITIES.get(chosen), body)
