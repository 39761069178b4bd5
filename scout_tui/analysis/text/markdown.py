"""Make text taken from logs and code safe to put in a GitHub Markdown report.

Three things can go wrong with such text: a ``` inside a traceback closes our fence early,
raw HTML renders (or forges our hidden `<!-- scout:fp=… -->` markers), and an `@name`
pings a person. Code spans and fences are sized to the longest backtick run inside them;
prose gets `<` as an entity and mentions wrapped in code, where GitHub does not ping.

What counts as a fence or a code span follows CommonMark (0.31) exactly, because a guess
that differs from the real parser is how a report breaks: we leave text alone that we
believe is code, so wherever we could disagree with the parser we make the text plain.
"""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Iterable, Iterator

# CommonMark 4.5: up to 3 spaces, then 3+ backticks or 3+ tildes; a backtick fence's info
# string may not contain a backtick (so "```a ``b`` c```" is a code span, not a fence).
_FENCE_OPEN = re.compile(r"^([ \t]*)(`{3,}|~{3,})(.*)$")
_FENCE_CLOSE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*$")
# A list item's or block quote's marker: a fence after one (`- ````, `> ~~~`), or indented,
# lands in a container we cannot see, and the container's end would end the fence.
_CONTAINER = re.compile(r"[ \t]*(?:>|(?:[-+*]|\d{1,9}[.)])(?=[ \t]|$))")
# A GitHub table's delimiter row (`| --- | :-: |`); GitHub splits such a table's rows at
# every unescaped `|`, even one inside a code span.
_DELIMITER_ROW = re.compile(r"^[ \t>]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_CELL_PIPE = re.compile(r"(?<!\\)\|")  # GitHub: a pipe after a backslash is no cell border
_NEWLINE = re.compile(r"\r\n?")  # CommonMark also ends a line at a lone \r
_BACKTICKS = re.compile(r"`+")
_PUNCTUATION = r"!-/:-@\[-`{-~"  # ASCII punctuation: what a backslash escapes
_ESCAPE_OR_RUN = re.compile(rf"\\[{_PUNCTUATION}]|`+")
# GitHub links `@name` and `@org/team` after anything but a letter or digit; an entity
# (`&#64;`) renders as "@" too. A mention is made code, which GitHub does not link.
_PROSE = re.compile(rf"\\[{_PUNCTUATION}]|<|\](?=\()|@|&(?:#0*64|#[xX]0*40|commat);")
_NAME = re.compile(r"[A-Za-z0-9][\w-]*(?:/[\w-]+)?")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_LIST_ITEM = re.compile(r"[ \t]*(?:([-+*])|\d{1,9}([.)]))(?:[ \t]|$)")
# A link target Markdown cannot misread: http(s), a host with no userinfo, and only the
# URL characters that neither end the target nor start HTML or a mention.
_SAFE_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d+)?(?:/[A-Za-z0-9._~!$&'*+,;=:%/?#-]*)?")
FINGERPRINT = re.compile(r"[a-z][a-z0-9_]*-[0-9a-f]{12}")


def indentation(line: str) -> int:
    """Columns of leading whitespace, a tab reaching the next multiple of 4."""
    return len(line[: len(line) - len(line.lstrip(" \t"))].expandtabs(4))


def fence_open(line: str, max_indent: int | None = 3) -> str | None:
    """The run of backticks or tildes that opens a fence on `line`, else None.

    `max_indent` is CommonMark's 3 columns of indentation; None accepts any, for reading
    reports whose fences sit inside list items.
    """
    match = _FENCE_OPEN.match(line)
    if match is None:
        return None
    indent, run, info = match.groups()
    if max_indent is not None and len(indent.expandtabs(4)) > max_indent:
        return None
    if run[0] == "`" and "`" in info:
        return None
    return run


def fence_closes(line: str, opened: str, max_indent: int | None = 3) -> bool:
    """Whether `line` closes the fence `opened`: same character, at least as long, and
    nothing after it but spaces or tabs."""
    match = _FENCE_CLOSE.match(line)
    if match is None:
        return False
    indent, run = match.groups()
    if max_indent is not None and len(indent.expandtabs(4)) > max_indent:
        return False
    return run[0] == opened[0] and len(run) >= len(opened)


def _longest_run(text: str, char: str = "`") -> int:
    runs = re.findall(re.escape(char) + "+", text)
    return max((len(run) for run in runs), default=0)


_CODE_SPAN = re.compile(r"`+([^`]+)`+")


def plain(text: str) -> str:
    """Inline Markdown as a terminal line shows it: code spans without their backticks."""
    return _CODE_SPAN.sub(r"\1", text)


def one_line(text: str) -> str:
    """Collapse whitespace so a value cannot break a list item or table row."""
    return " ".join(text.split())


def code(text: str) -> str:
    """An inline code span that holds any text, backticks included."""
    text = one_line(text)
    ticks = "`" * (_longest_run(text) + 1)
    # CommonMark strips one space from each end when both are spaces: pad text that starts
    # or ends with a backtick (which would otherwise join the delimiter) or is blank.
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str, info: str = "") -> str:
    """A fenced block longer than any backtick run in `text`, so nothing inside closes it.

    The block's content is `text` exactly, its line endings made `\\n` (a lone `\\r` would
    end a line for the Markdown parser but not for the report's indentation).
    """
    text = _NEWLINE.sub("\n", text)
    ticks = "`" * max(3, _longest_run(text) + 1)
    info = one_line(info).replace("`", "")
    if not text:
        return f"{ticks}{info}\n{ticks}"
    body = text[:-1] if text.endswith("\n") else text
    return f"{ticks}{info}\n{body}\n{ticks}"


class _Runs:
    """Where each length of backtick run starts in a line, to find a span's closer fast.

    Indexed lazily, one run at a time as far as a question needs, so a caller that stops
    early (at the end of a title) does not pay for the rest of a long line.
    """

    def __init__(self, text: str) -> None:
        self.starts: dict[int, list[int]] = {}
        self.pending: Iterator[re.Match[str]] | None = _BACKTICKS.finditer(text)

    def next(self, length: int, position: int) -> int | None:
        """The start of the first run of exactly `length` backticks at or after `position`."""
        starts = self.starts.setdefault(length, [])
        index = bisect.bisect_left(starts, position)
        if index < len(starts):
            return starts[index]
        while self.pending is not None:
            run = next(self.pending, None)
            if run is None:
                self.pending = None
                break
            start = run.start()
            self.starts.setdefault(run.end() - start, []).append(start)
            if run.end() - start == length and start >= position:
                return start
        return None


def _pieces(text: str) -> Iterator[tuple[str, int, int]]:
    """Split a line into ("prose" | "code" | "lone", start, end) pieces as CommonMark pairs
    backtick runs: left to right, a backslash escapes the punctuation after it outside
    code, a run opens a span that the next run of exactly its length closes, and a run with
    no such partner is literal text ("lone")."""
    runs = _Runs(text)
    prose = 0
    for match in _ESCAPE_OR_RUN.finditer(text):
        start = match.start()
        if start < prose or text[start] == "\\":
            continue  # inside a span found earlier (backslashes are literal there), or escaped
        run_end = match.end()
        closer = runs.next(run_end - start, run_end)
        if prose < start:
            yield ("prose", prose, start)
        if closer is None:
            yield ("lone", start, run_end)
            prose = run_end
        else:
            prose = closer + run_end - start
            yield ("code", start, prose)
    if prose < len(text):
        yield ("prose", prose, len(text))


def code_spans(line: str) -> Iterator[tuple[int, int]]:
    """Where CommonMark finds code spans in one line of Markdown, backticks included, left
    to right (lazily: stop early and the rest of the line is not looked at)."""
    return ((start, end) for kind, start, end in _pieces(line) if kind == "code")


def _mention(name: str, code_before: bool, code_after: bool) -> str:
    # A space keeps our backticks from joining a code span's right next to them.
    return (" " if code_before else "") + code("@" + name) + (" " if code_after else "")


def _neutralize_prose(text: str, code_before: bool, code_after: bool) -> str:
    """Prose between code: `<` as an entity, mentions as code, and no inline link, whose
    target would hide backticks from the pairing `_pieces` did."""
    out: list[str] = []
    done = position = 0
    wrapped = -1  # where the last mention made code ends: after it comes code, not a letter
    while (match := _PROSE.search(text, position)) is not None:
        start, token = match.start(), match.group(0)
        position = match.end()
        if token in ("<", "\\<"):
            # `\<` renders as `&lt;` does, and leaves no `<!--` for the report parser to take.
            out.append(text[done:start] + "&lt;")
        elif token == "]":
            out.append(text[done:position] + "\\")  # "](" -> "]\(", which renders the same
        elif token[0] == "\\" and token != "\\@":
            continue  # an escaped character stays as it is
        else:  # "@", "\@" or "&#64;": all render as "@"
            name = _NAME.match(text, position)
            if name is None or (start > 0 and start != wrapped and _ALNUM.match(text, start - 1)):
                continue  # not a mention: "a@b.com"
            position = wrapped = name.end()
            mention = _mention(
                name.group(0), code_before and start == 0, code_after and position == len(text)
            )
            out.append(text[done:start] + mention)
        done = position
    out.append(text[done:])
    return "".join(out)


def _neutralize_text(text: str) -> str:
    pieces = list(_pieces(text))
    out = []
    for index, (kind, start, end) in enumerate(pieces):
        if kind == "code":
            out.append(text[start:end])
        elif kind == "lone":
            out.append("\\`" * (end - start))  # literal either way, now also to any parser
        else:
            before = index > 0 and pieces[index - 1][0] == "code"
            after = index + 1 < len(pieces) and pieces[index + 1][0] == "code"
            out.append(_neutralize_prose(text[start:end], before, after))
    return "".join(out)


def _unfence(line: str, at_start: bool) -> str:
    """Escape a fence that does not start the line (or, `at_start`, any): plain text,
    whatever container it would land in."""
    position = 0
    while (match := _CONTAINER.match(line, position)) is not None:
        position = match.end()
    while position < len(line) and line[position] in " \t":
        position += 1
    if (position or at_start) and fence_open(line[position:], max_indent=0):
        return line[:position] + "\\" + line[position:]
    return line


def _neutralize_line(line: str, table: bool, at_start: bool = False) -> str:
    line = _unfence(line, at_start)
    if table:  # each cell pairs its own backticks, as GitHub splits the row first
        return "|".join(_neutralize_text(cell) for cell in _CELL_PIPE.split(line))
    return _neutralize_text(line)


def _neutralize_block(lines: list[str]) -> list[str]:
    table = any(_DELIMITER_ROW.match(line) for line in lines)
    return [_neutralize_line(line, table) for line in lines]


def neutralize(markdown: str) -> str:
    """Escape raw HTML and mentions in Markdown prose; leave code spans and fences alone.

    Only a fence that starts its line is one; any other (indented, after `- ` or `> `) is
    made plain text, since the list item it would land in could end it anywhere. A fence
    left open is closed at the end, so it cannot swallow the rest of the report.
    """
    out: list[str] = []
    block: list[str] = []
    open_fence: str | None = None
    for line in _NEWLINE.sub("\n", markdown).split("\n"):
        if open_fence is not None:
            out.append(line)
            if fence_closes(line, open_fence):
                open_fence = None
            continue
        opened = fence_open(line, max_indent=0)
        if opened is None and line.strip():
            block.append(line)
            continue
        out.extend(_neutralize_block(block))
        block = []
        out.append(line)
        open_fence = opened
    out.extend(_neutralize_block(block))
    if open_fence is not None:
        out.append(open_fence)
    return "\n".join(out)


def neutralize_line(text: str) -> str:
    """`neutralize` for text that must stay on one line (a title, a list item's summary):
    whitespace collapsed, and a fence at its start made plain text (the line may start a
    list item: `- {title}`)."""
    return _neutralize_line(one_line(text), table=False, at_start=True)


def table_cell(text: str) -> str:
    return neutralize_line(text).replace("|", "\\|")


def link(text: str, url: str) -> str:
    """`[text](url)`, or, when `url` is not a plain http(s) address, the text followed by
    the address as inert code (a `javascript:` or `)` cannot become a link)."""
    text = neutralize_line(text)
    if _SAFE_URL.fullmatch(url):
        return f"[{text}]({url})"
    return f"{text} ({code(url)})"


def bare_url(url: str) -> str:
    """An address GitHub links by itself, when it is a plain http(s) one; else inert code."""
    return url if _SAFE_URL.fullmatch(url) else code(url)


def more(count: int, what: str = "", see: str = "`scout report`") -> str:
    """What a cut says in place of what it left out, and where it is whole."""
    return f"… {count} more{' ' + what if what else ''} (see {see})"


def cut_lists(markdown: str, max_items: int, see: str = "`scout report`") -> str:
    """Every list (outside fences) of more than `max_items` items cut to that many, then a
    "… N more" item; an item's own lines (indented, or a fence it holds) go with it."""
    out: list[str] = []
    kept: dict[int, int] = {}  # indent of an open list → items seen in it
    dropped: dict[int, int] = {}
    kinds: dict[int, str] = {}  # its bullet, or its number's delimiter: another starts anew
    open_fence: str | None = None
    skipping: int | None = None  # the indent of the item being dropped
    blanks = 0  # blank lines after a dropped item: kept, they end the list

    def flush(deeper_than: int) -> None:
        for indent in sorted((i for i in kept if i > deeper_than), reverse=True):
            kind = kinds.pop(indent)
            if dropped.get(indent):
                bullet = kind if kind in "-+*" else f"{max_items + 1}{kind}"
                out.append(" " * indent + f"{bullet} " + more(dropped[indent], see=see))
            kept.pop(indent)
            dropped.pop(indent, None)

    for line in markdown.split("\n"):
        if open_fence is not None:
            if fence_closes(line, open_fence, max_indent=None):
                open_fence = None
            if skipping is None:
                out.append(line)
            continue
        indent = indentation(line)
        item = _LIST_ITEM.match(line)
        if not line.strip():
            if skipping is None:
                out.append(line)
            else:
                blanks += 1
            continue
        if skipping is None or indent <= skipping:
            skipping = None
            flush(indent if item else indent - 1)
            kind = item and (item.group(1) or item.group(2))
            if kind and kinds.get(indent, kind) != kind:
                flush(indent - 1)
        if item and skipping is None:
            kinds[indent] = item.group(1) or item.group(2)
            kept[indent] = kept.get(indent, 0) + 1
            if kept[indent] > max_items:
                dropped[indent] = dropped.get(indent, 0) + 1
                skipping = indent
        if skipping is None:
            out.extend([""] * blanks)
            out.append(line)
        blanks = 0
        open_fence = fence_open(line, max_indent=None)
    flush(-1)
    out.extend([""] * blanks)
    return "\n".join(out)


def cut_to(markdown: str, limit: int) -> str:
    """`markdown` cut after its last whole line outside a fence that keeps it, with the
    "… N more lines" note, within `limit` characters."""
    if len(markdown) <= limit:
        return markdown
    lines = markdown.split("\n")
    note_room = len(more(len(lines), "lines")) + 2
    kept = 0  # lines kept so far at a cut point
    size = 0
    open_fence: str | None = None
    for index, line in enumerate(lines):
        size += len(line) + 1
        if size + note_room > limit:
            break
        if open_fence is not None:
            if fence_closes(line, open_fence, max_indent=None):
                open_fence = None
        else:
            open_fence = fence_open(line, max_indent=None)
        if open_fence is None:
            kept = index + 1
    head = "\n".join(lines[:kept]).rstrip()
    return (head + "\n\n" if head else "") + more(len(lines) - kept, "lines")


def cut_line(markdown: str, limit: int) -> str:
    """One line of Markdown cut at a space outside any code span, within `limit`
    characters, with the "… N more characters" note."""
    if len(markdown) <= limit:
        return markdown
    position = markdown.rfind(" ", 0, limit)
    for start, end in code_spans(markdown):
        if start >= position:
            break
        if end > position:  # the space is inside a span: cut before the span
            position = markdown.rfind(" ", 0, start + 1)
            break
    head = markdown[: max(position, 0)].rstrip()
    return (head + " " if head else "") + more(len(markdown) - len(head), "characters")


def cut_text(text: str, max_lines: int, max_chars: int) -> str:
    """Verbatim text (a traceback, an error) cut to its last `max_lines` lines of at most
    `max_chars` characters each: where a traceback says what went wrong."""
    lines = _NEWLINE.sub("\n", text).split("\n")
    shown = [
        line if len(line) <= max_chars else line[:max_chars] + " …" for line in lines[-max_lines:]
    ]
    return "\n".join(shown)


def pack_digests(digests: Iterable[str]) -> str:
    """Item digests (6 hex digits each) as 4 base64url characters each, run together: a
    quiet item's 40 digests in 160 characters, not 280."""
    packed = bytes.fromhex("".join(sorted({d for d in digests if _DIGEST.fullmatch(d)})))
    return base64.urlsafe_b64encode(packed).decode()


def unpack_digests(text: str) -> list[str]:
    """`pack_digests` read back; [] for anything that is not its output."""
    try:
        raw = base64.urlsafe_b64decode(text.encode()) if len(text) % 4 == 0 else b""
    except ValueError:
        return []
    return [raw[n : n + 3].hex() for n in range(0, len(raw) - len(raw) % 3, 3)]


_DIGEST = re.compile(r"[0-9a-f]{6}")
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_commit(value: str) -> bool:
    """Whether `value` is a full git commit id (SHA-1 or SHA-256), fit for a hidden marker."""
    return _COMMIT.fullmatch(value) is not None


def is_fingerprint(value: str) -> bool:
    """Whether `value` is shaped as scout makes fingerprints (`kind-<12 hex>`): only such a
    value may go into a hidden `<!-- scout:fp=… -->` marker."""
    return FINGERPRINT.fullmatch(value) is not None


__all__ = [
    "bare_url",
    "code",
    "code_spans",
    "cut_line",
    "cut_lists",
    "cut_text",
    "cut_to",
    "fence",
    "fence_closes",
    "fence_open",
    "indentation",
    "is_commit",
    "is_fingerprint",
    "link",
    "more",
    "neutralize",
    "neutralize_line",
    "one_line",
    "pack_digests",
    "table_cell",
    "unpack_digests",
]
