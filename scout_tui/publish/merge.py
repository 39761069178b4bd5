"""A person's edits to today's report comment, kept when scout edits it again (SPEC §2.4).

A 3-way merge: `base` is what scout itself rendered the last time it wrote the comment,
`theirs` what GitHub holds now, `ours` what scout would write. What a person did between
base and theirs is carried into ours, keyed by the items' fingerprint markers:
- a ticked (or unticked) box goes to the line of the same fingerprint;
- lines a person added stay in place: after the same line when ours still has it, else
  after the item (or the section) they followed, else at the end;
- a line of scout's that a person rewrote or removed is rewritten or removed in ours when
  ours still has that passage as it was; otherwise the edit is a conflict, and the caller
  leaves the comment alone (nothing of the person's is lost).
Pure: strings in, a string (or a conflict) out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

_MARKER = re.compile(r"<!--\s*scout:fp=([\w.:-]+)")
_BOX = re.compile(r"^([ \t]*[-*+] \[)([ xX])(\])")
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_COMMENT = re.compile(r"<!--.*?-->")


@dataclass(frozen=True)
class Merged:
    body: str | None  # None: a conflict
    conflict: str = ""  # what a person changed that scout changed too

    @property
    def ok(self) -> bool:
        return self.body is not None


def _unticked(line: str) -> str:
    return _BOX.sub(r"\1 \3", line, count=1)


def _box(line: str) -> str | None:
    match = _BOX.match(line)
    return match.group(2) if match else None


def _key(line: str) -> str:
    """What a line is, whatever its box says: its fingerprint when it has a marker."""
    marker = _MARKER.search(line)
    return "fp:" + marker.group(1) if marker else "line:" + _unticked(line).strip()


def _owners(lines: list[str]) -> tuple[list[str], list[str]]:
    """For each line, the item it belongs to (its first line's key: a top-level list item,
    a heading, a hidden marker) and the heading of its section."""
    owners, sections = [], []
    owner = section = ""
    for line in lines:
        if _HEADING.match(line):
            owner = section = "line:" + line.strip()
        elif line.strip() and not line[:1].isspace():
            owner = _key(line)  # a new top-level block: an item, a paragraph, a marker
            if not owner.startswith("fp:"):  # "nothing to report" is in many sections
                owner = section + "\n" + owner
        owners.append(owner)  # blank and indented lines go with the block above
        sections.append(section)
    return owners, sections


def _find_block(lines: list[str], block: list[str]) -> int | None:
    """Where `block` is in `lines`, when it is there exactly once."""
    width = len(block)
    starts = [i for i in range(len(lines) - width + 1) if lines[i : i + width] == block]
    return starts[0] if len(starts) == 1 else None


def merge_edits(base: str | None, theirs: str, ours: str) -> Merged:
    """`ours` with what a person changed from `base` to `theirs`. With no base (scout did
    not journal what it wrote), only ticked boxes are known to be a person's and carried."""
    if base is None:
        base = "\n".join(_unticked(line) for line in theirs.split("\n"))
    if theirs in (base, ours):
        return Merged(ours)
    base_lines, their_lines = base.split("\n"), theirs.split("\n")
    result = ours.split("\n")
    base_owners, base_sections = _owners(base_lines)

    ticks: dict[str, str] = {}  # key → the box's state, as the person left it
    added: list[tuple[int, list[str]]] = []  # after base line n (-1: the start), these
    rewritten: list[tuple[list[str], list[str]]] = []  # scout's passage → the person's
    matcher = SequenceMatcher(
        None,
        [_unticked(line) for line in base_lines],
        [_unticked(line) for line in their_lines],
        autojunk=False,
    )
    for op, b1, b2, t1, t2 in matcher.get_opcodes():
        if op == "equal":
            for mine, person in zip(base_lines[b1:b2], their_lines[t1:t2], strict=True):
                box = _box(person)
                if mine != person and box is not None:
                    ticks[_key(person)] = box
        elif op == "insert" or not any(line.strip() for line in base_lines[b1:b2]):
            added.append((b2 - 1, their_lines[t1:t2]))  # a blank line replaced: an addition
        else:
            rewritten.append((base_lines[b1:b2], their_lines[t1:t2]))

    for passage, replacement in rewritten:
        start = _find_block(result, passage)
        if start is None:
            first = _COMMENT.sub("", next(line for line in passage if line.strip())).strip()
            return Merged(None, f"a person changed “{first[:80]}”, which scout changed too")
        result[start : start + len(passage)] = replacement

    for index, line in enumerate(result):
        state = ticks.get(_key(line))
        if state is not None and _box(line) is not None:
            result[index] = _BOX.sub(rf"\g<1>{state}\3", line, count=1)

    owners, sections = _owners(result)
    after: dict[int, list[str]] = {}
    for anchor, lines in added:
        after.setdefault(
            _place(anchor, base_lines, base_owners, base_sections, result, owners, sections), []
        ).extend(lines)
    out = list(after.get(-1, []))
    for index, line in enumerate(result):
        out.append(line)
        out.extend(after.get(index, []))
    return Merged("\n".join(out))


def _place(
    anchor: int,
    base_lines: list[str],
    base_owners: list[str],
    base_sections: list[str],
    result: list[str],
    owners: list[str],
    sections: list[str],
) -> int:
    """The line of `result` after which what followed base line `anchor` goes."""
    if anchor < 0:
        return -1
    owner, section = base_owners[anchor], base_sections[anchor]
    line = _key(base_lines[anchor])
    in_item = [i for i, o in enumerate(owners) if o == owner and owner]
    same = [i for i in in_item if _key(result[i]) == line and result[i].strip()]
    if same and base_lines[anchor].strip():
        return same[0]
    gap = not base_lines[anchor].strip()  # the person's text came after a blank line
    if in_item:  # the end of the item's first run in ours
        end = in_item[0]
        while end + 1 < len(owners) and owners[end + 1] == owner:
            end += 1
        return _text_end(result, in_item[0], end, gap)
    in_section = [i for i, s in enumerate(sections) if s == section and section]
    if in_section:
        return _text_end(result, in_section[0], in_section[-1], gap)
    return len(result) - 1


def _text_end(lines: list[str], start: int, end: int, gap: bool) -> int:
    """The last line of text of the block `start..end`, or (`gap`) the blank line after
    it: the person's lines keep their place against the block's text."""
    last = end
    while last > start and not lines[last].strip():
        last -= 1
    return last + 1 if gap and last < end else last
