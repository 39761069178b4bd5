"""What docs claim, read out of Markdown: file paths, test commands, CLI flags.
Pure text functions; checking the claims against the checkout is the collector's job."""

from __future__ import annotations

import ast
import bisect
import re
import shlex
from dataclasses import dataclass

from scout_tui.analysis.python import pyast
from scout_tui.analysis.text.markdown import fence_closes, fence_open, indentation

_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
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


class _LineNumbers:
    def __init__(self, text: str) -> None:
        self.starts = [match.end() for match in re.finditer("\n", text)]

    def of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset) + 1


def _unfenced(markdown: str) -> tuple[str, list[Claim]]:
    """The Markdown with its fenced blocks' lines emptied, not removed, so that an offset in
    it is on the line it is on in `markdown`; and the blocks' lines, as claims."""
    prose: list[str] = []
    fenced: list[Claim] = []
    fence: str | None = None
    indent = 0
    for number, line in enumerate(markdown.split("\n"), start=1):
        if fence is not None:
            if fence_closes(line, fence, max_indent=indent + 3):
                fence = None
            elif line.strip():
                fenced.append(Claim(number, line.strip()))
        elif opened := fence_open(line, max_indent=None):  # a list item's may be indented
            fence, indent = opened, indentation(line)
        else:
            prose.append(line)
            continue
        prose.append("")
    return "\n".join(prose), fenced


def code_snippets(markdown: str) -> list[Claim]:
    """Inline code spans and fenced blocks' lines, with their line numbers."""
    prose, fenced = _unfenced(markdown)
    lines = _LineNumbers(prose)
    spans = [Claim(lines.of(m.start()), m.group(2).strip()) for m in _CODE_SPAN.finditer(prose)]
    return spans + fenced


def path_claims(markdown: str) -> list[Claim]:
    """Things that look like file paths: in code spans and link targets."""
    found = []
    lines = _LineNumbers(markdown)
    candidates = [c for c in code_snippets(markdown) if " " not in c.text]
    candidates += [Claim(lines.of(m.start()), m.group(1)) for m in _LINK.finditer(markdown)]
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
                found.append(
                    PytestSelector(
                        snippet.line,
                        path.removeprefix("./"),
                        rest[0] if rest else None,
                        rest[1] if len(rest) > 1 else None,
                    )
                )
    return found


_SCRIPT = re.compile(r"\bpython3?\s+((?:[\w.-]+/)+[\w.-]+\.py)\b")


def script_claims(markdown: str) -> list[Claim]:
    """`python path/to/file.py` in the doc's code: a file run as a script."""
    found = []
    for snippet in code_snippets(markdown):
        for match in _SCRIPT.finditer(snippet.text):
            found.append(Claim(snippet.line, match.group(1)))
    return found


@pyast.per_tree
def script_breaks(path: str, tree: ast.Module | None, root_packages: set[str]) -> str | None:
    """Why `python path` fails where `python -m` works: run as a script, the file's folder
    heads sys.path, not the checkout — a relative import, or a package of the repository's
    root other than the file's own, cannot be found. None when nothing says so."""
    if tree is None:
        return None
    own = path.split("/", 1)[0]
    for node in pyast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            return "it uses relative imports"
        names = (
            [node.module]
            if isinstance(node, ast.ImportFrom) and node.module
            else [a.name for a in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        for name in names:
            top = name.split(".")[0]
            if top in root_packages and top != own:
                return f"it imports `{top}`, a package of the repository's root"
    return None


_NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8}
_COUNTED = re.compile(
    r"\b(two|three|four|five|six|seven|eight|[2-8])\s+(?:[a-z-]+\s+)?"
    r"(modes|backends|options|strategies|policies|values|kinds|variants)\b",
    re.IGNORECASE,
)
_ANY_FLAG = re.compile(r"--([A-Za-z_][\w]*(?:\.[A-Za-z_][\w-]*)+)")


@dataclass(frozen=True)
class CountedClaim:
    line: int
    count: int
    words: str  # "two compilation modes", as written
    flags: tuple[str, ...]  # the `--section.option` flags of the same paragraph
    # values the sentence counts apart ("in addition to the default `x`, two modes")
    besides: tuple[str, ...] = ()


def counted_claims(text: str, first_line: int = 1) -> list[CountedClaim]:
    """ "Supports two compilation modes via --compile.mode": a number of modes (backends,
    options…) said in a paragraph that names the flag they are the values of."""
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines):
        for match in _COUNTED.finditer(line):
            word = match.group(1).lower()
            count = int(word) if word.isdigit() else _NUMBERS[word]
            paragraph: list[str] = []
            for following in lines[number : number + 8]:
                if not following.strip() and paragraph:
                    break
                paragraph.append(following)
            flags = tuple(
                dict.fromkeys(f.replace("-", "_") for f in _ANY_FLAG.findall("\n".join(paragraph)))
            )
            if flags:
                apart = _BESIDES.search(line)
                besides = tuple(re.findall(r"`([^`]+)`", apart.group(1))) if apart else ()
                found.append(
                    CountedClaim(first_line + number, count, match.group(0), flags, besides)
                )
    return found


_BESIDES = re.compile(
    r"\b(?:in addition to|besides|other than|apart from|except(?: for)?)\b([^.;]*)", re.IGNORECASE
)
_TABLE_CLAIM = re.compile(r"^\s*\|\s*([^|]+?)\s*\|\s*(?:✅|✔️?|yes|supported)\s*\|", re.IGNORECASE)
_COMBINATION = re.compile(r"\+|\b(?:combined|together|in combination) with\b", re.IGNORECASE)
_UNSUPPORTED = re.compile(
    r"\b(?:not|no longer|isn't|is not) supported\b|\bunsupported\b", re.IGNORECASE
)


# A sentence ends at `.`, `!` or `?` before a space (not inside `a.py` or `1.5`).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def supported_claims(markdown: str) -> list[tuple[int, str]]:
    """Feature-table rows that say a feature works: `|Context Parallelism| ✅ |`."""
    return [
        (number, match.group(1))
        for number, line in enumerate(markdown.splitlines(), 1)
        if (match := _TABLE_CLAIM.match(line))
    ]


def _stem(word: str) -> str:
    for suffix in ("isms", "ism", "ing", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def contradicts(feature: str, reason: str) -> bool:
    """Whether a test's skip reason says the feature is not supported: "Context Parallel is
    not supported by graph_trainer" against "Context Parallelism" (its words, its flag's
    words, or its initials: "CP"). Only the sentence that says "not supported" counts: a
    reason that names the feature elsewhere ("… X is unsupported. CUDA graphs are off here
    too") is about another feature, and one that says a combination is unsupported
    ("FlexAttention + CP + regional_inductor") is not about the feature alone."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", feature)]
    initials = "".join(w[0] for w in words).upper()
    for sentence in _SENTENCE_END.split(reason):
        unsupported = _UNSUPPORTED.search(sentence)
        if not unsupported or _COMBINATION.search(sentence[: unsupported.start()]):
            continue  # "FlexAttention + CP is unsupported": the combination, not CP
        said = {_stem(w.lower()) for w in re.findall(r"[A-Za-z]+", sentence)}
        if (bool(words) and all(_stem(w) in said for w in words)) or (
            len(initials) >= 2 and re.search(rf"\b{initials}\b", sentence) is not None
        ):
            return True
    return False
