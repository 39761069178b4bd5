"""What docs claim, read out of Markdown: file paths, test commands, CLI flags.
Pure text functions; checking the claims against the checkout is the collector's job."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_FENCED = re.compile(r"^(\s*)(`{3,}|~{3,})[^\n]*\n(.*?)\n\s*\2", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATHLIKE = re.compile(r"^\.{0,2}/?[\w.-]+(?:/[\w.-]+)*/?$")
_EXTENSIONS = (".py", ".md", ".sh", ".yaml", ".yml", ".toml", ".json", ".txt", ".cfg")
_FLAG = re.compile(
    r"(?<![\w-])--([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+)(?:(?:=|\s+)([^\s`'\"\\]+))?"
)
_PYTEST = re.compile(r"\bpytest\s+([^\n`]+)")


@dataclass(frozen=True)
class Claim:
    line: int
    text: str


def _line_of(markdown: str, offset: int) -> int:
    return markdown.count("\n", 0, offset) + 1


def code_snippets(markdown: str) -> list[Claim]:
    """Inline code spans and fenced blocks' lines, with their line numbers."""
    found = [Claim(_line_of(markdown, m.start()), m.group(2).strip())
             for m in _CODE_SPAN.finditer(_FENCED.sub("", markdown))]  # fmt: skip
    for block in _FENCED.finditer(markdown):
        first = _line_of(markdown, block.start(3))
        for offset, line in enumerate(block.group(3).split("\n")):
            if line.strip():
                found.append(Claim(first + offset, line.strip()))
    return found


def path_claims(markdown: str) -> list[Claim]:
    """Things that look like file paths: in code spans and link targets."""
    found = []
    candidates = [c for c in code_snippets(markdown) if " " not in c.text]
    candidates += [
        Claim(_line_of(markdown, m.start()), m.group(1)) for m in _LINK.finditer(markdown)
    ]
    for claim in candidates:
        text = claim.text.split("#", 1)[0].split("::", 1)[0].rstrip(":,.")
        if "://" in claim.text or any(ch in text for ch in "{}<>*$"):
            continue
        if not _PATHLIKE.match(text):
            continue
        if "/" in text.strip("/") or text.endswith(_EXTENSIONS):
            found.append(Claim(claim.line, text))
    return found


def flag_claims(markdown: str) -> list[tuple[Claim, str | None]]:
    """`--section.option[=value]` flags in code, with the value when one is given."""
    found = []
    for snippet in code_snippets(markdown):
        for match in _FLAG.finditer(snippet.text):
            value = match.group(2)
            if value is not None and value.startswith("-"):
                value = None
            flag = match.group(1)
            section, _, last = flag.rpartition(".")
            if last.startswith(("no-", "no_")):  # `--compile.no-enable_passes` sets it False
                flag, value = f"{section}.{last[3:]}", None
            found.append((Claim(snippet.line, flag.replace("-", "_")), value))
    return found


@dataclass(frozen=True)
class PytestSelector:
    line: int
    path: str
    cls: str | None
    function: str | None


def pytest_command_claims(markdown: str) -> list[PytestSelector]:
    found = []
    for snippet in code_snippets(markdown):
        for match in _PYTEST.finditer(snippet.text):
            try:
                args = shlex.split(match.group(1))
            except ValueError:
                args = match.group(1).split()
            for arg in args:
                if arg.startswith("-") or ".py" not in arg:
                    continue
                path, *rest = arg.split("::")
                found.append(PytestSelector(snippet.line, path.removeprefix("./"),
                                          rest[0] if rest else None,
                                          rest[1] if len(rest) > 1 else None))  # fmt: skip
    return found
