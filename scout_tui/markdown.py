"""Make text taken from logs and code safe to put in a GitHub Markdown report.

Three things can go wrong with such text: a ``` inside a traceback closes our fence early,
raw HTML renders (or forges our hidden `<!-- scout:fp=… -->` markers), and an `@name`
pings a person. Code spans and fences are sized to the longest backtick run inside them;
prose gets `<` as an entity and mentions wrapped in code, where GitHub does not ping.
"""

from __future__ import annotations

import re

_MENTION = re.compile(r"(?<![\w`/.@-])@([A-Za-z0-9](?:[A-Za-z0-9/-]{0,98}[A-Za-z0-9])?)")
# Inline code spans in Markdown we wrote ourselves: keep them as they are.
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_FENCE_LINE = re.compile(r"^\s*(`{3,}|~{3,})")


def _longest_run(text: str, char: str = "`") -> int:
    runs = re.findall(re.escape(char) + "+", text)
    return max((len(run) for run in runs), default=0)


def one_line(text: str) -> str:
    """Collapse whitespace so a value cannot break a list item or table row."""
    return " ".join(text.split())


def code(text: str) -> str:
    """An inline code span that holds any text, backticks included."""
    text = one_line(text)
    ticks = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fence(text: str, info: str = "") -> str:
    """A fenced block longer than any backtick run in `text`, so nothing inside closes it."""
    ticks = "`" * max(3, _longest_run(text) + 1)
    body = text.replace("\r\n", "\n").rstrip("\n")
    return f"{ticks}{info}\n{body}\n{ticks}"


def _neutralize_prose(text: str) -> str:
    text = text.replace("<", "&lt;")
    return _MENTION.sub(lambda match: code("@" + match.group(1)), text)


def _neutralize_inline(text: str) -> str:
    out: list[str] = []
    position = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_neutralize_prose(text[position : match.start()]))
        out.append(match.group(0))
        position = match.end()
    out.append(_neutralize_prose(text[position:]))
    return "".join(out)


def closes(candidate: str, opened: str, line: str) -> bool:
    """CommonMark: a closing fence is the same character, at least as long, nothing after."""
    return candidate[0] == opened[0] and len(candidate) >= len(opened) and line.strip() == candidate


def neutralize(markdown: str) -> str:
    """Escape raw HTML and mentions in Markdown prose; leave code spans and fences alone.

    An unclosed fence is closed at the end, so it cannot swallow the rest of the report.
    """
    lines = markdown.replace("\r\n", "\n").split("\n")
    out: list[str] = []
    prose: list[str] = []
    open_fence: str | None = None
    for line in lines:
        match = _FENCE_LINE.match(line)
        if open_fence is None:
            if match:
                if prose:
                    out.append(_neutralize_inline("\n".join(prose)))
                    prose = []
                open_fence = match.group(1)
                out.append(line)
            else:
                prose.append(line)
        else:
            out.append(line)
            if match and closes(match.group(1), open_fence, line):
                open_fence = None
    if prose:
        out.append(_neutralize_inline("\n".join(prose)))
    if open_fence is not None:
        out.append(open_fence)
    return "\n".join(out)


def table_cell(text: str) -> str:
    return _neutralize_prose(one_line(text)).replace("|", "\\|")


__all__ = ["code", "fence", "neutralize", "one_line", "table_cell"]
