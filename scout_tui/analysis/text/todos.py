"""Find TODO-style markers in Python comments and docstrings, and classify their blockers.

Pure: source text in, `Todo`s out. String literals in code are not comments: a marker
inside `"TODO"` passed to a function is not a TODO.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.comments import comment_blocks

_OWNER = re.compile(
    r"\b(?:TODO|FIXME|HACK|XXX)\((?!#)\s*@?([\w.\- ]+?)\s*\)|\[TODO\]\(@?([\w.\-]+)\)"
)
_REF_REPO = re.compile(r"\b([\w.-]+/[\w.-]+)#(\d+)\b")
_REF_URL = re.compile(r"https?://github\.com/([\w.-]+/[\w.-]+)/(?:pull|issues)/(\d+)")
_REF_BARE = re.compile(r"\b(?:TODO|FIXME|HACK|XXX)\(#(\d+)\)")
_REF_NAMED = re.compile(r"\b([A-Za-z][\w.-]*)\s+(?:PR\s+|issue\s+)?#(\d+)\b", re.IGNORECASE)
_BACKTICKED = re.compile(r"`+([A-Za-z_][\w.]*(?:\(\))?)`+")
_DOTTED = re.compile(r"\b(torch(?:\.[A-Za-z_]\w*)+)")
_CODE_WORD = re.compile(
    r"(?<![\w./-])(_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?![\w/-])"
)
_PROPER_NOUNS = {"PyTorch", "GitHub", "TorchInductor", "JavaScript", "TypeScript"}  # + named_refs
_CAUSE = re.compile(
    r"\b(?:caused|triggered|introduced|broken|broke|regressed)\s+(?:by|in)\b|"
    r"\bregression\s+(?:from|in|since)\b",
    re.IGNORECASE,
)
# "since #12", "after #12 (…)", "due to #12": a past event, unless the words after it
# wait for it ("after #12 lands", "since #12 is not merged yet").
_PAST_EVENT = re.compile(r"\b(?:since|after|due to|following)\s+(?:\S+\s+){0,2}$", re.IGNORECASE)
_STILL_AHEAD = re.compile(
    r"^\W*(?:\([^)]*\)\s*)*(?:lands?|merges?|ships?|goes in|gets? (?:merged|fixed|in)|"
    r"(?:is|are|gets?)\s+(?:merged|fixed|in|released|resolved|closed|available|not)|"
    r"(?:isn't|hasn't|has not|is not|not yet))\b",
    re.IGNORECASE,
)
# "#12 (2026-06-24) removed the helper": the reference did the breaking.
_DID = re.compile(
    r"^\W*(?:\([^)]*\)\s*)*(?:removed|broke|changed|renamed|deprecated|dropped|introduced|"
    r"regressed|moved|reverted|caused|replaced|deleted)\b",
    re.IGNORECASE,
)


_WAITS = re.compile(
    r"\b(?:once|until|when|waiting (?:on|for)|waits? (?:on|for)|blocked (?:by|on)|"
    r"after\b[^.;]{0,60}?\blands?)\b",
    re.IGNORECASE,
)


def caused(before: str, after: str) -> bool:
    """Whether a reference, with the words of its clause before and after it, is what
    caused the breakage (context) rather than what the TODO waits on."""
    if _CAUSE.search(before) or _DID.search(after):
        return True
    return _PAST_EVENT.search(before) is not None and not _STILL_AHEAD.search(after)


_UPSTREAM_WAIT = re.compile(
    r"\b(?:once|until|after|when)\b[^.;]{0,60}?\b(?:pytorch|torch|nightly|upstream|inductor|"
    r"dynamo|autoparallel|triton)\b|\brequires?\s+(?:an?\s+)?upstream\b|"
    r"\bupstream\s+(?:\w+\s+)?(?:change|fix|pytorch|regression|bug|issue)\b",
    re.IGNORECASE,
)
_WAITING = re.compile(
    r"\b(?:nightly|wheel|upstream|available|availability|includes?|picks? up|lands?|landed|"
    r"exposes?|exposed|supports?|supported|released?|once|until|after)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reference:
    repo: str
    number: int

    def __str__(self) -> str:
        return f"{self.repo}#{self.number}"


@dataclass
class Todo:
    path: str
    line: int
    marker: str
    text: str  # the marker's sentence(s), continuation lines joined
    owner: str | None = None
    references: list[Reference] = field(default_factory=list)
    apis: list[str] = field(default_factory=list)
    ordinal: int = 0  # among identical texts in one file, so two stay two
    causes: list[Reference] = field(default_factory=list)  # what broke it: not blockers
    upstream: bool = False  # waits on an upstream project, with no link to what
    waits: bool = False  # says it waits ("once", "until", "blocked by"), not only "see #N"

    @property
    def key_text(self) -> str:
        return " ".join(self.text.lower().split())


def _docstrings(tree: ast.Module | None) -> list[tuple[int, list[str]]]:
    if tree is None:
        return []
    out = []
    for node in pyast.nodes(tree, ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef):
        assert isinstance(node, ast.Module | pyast.Definition)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            value = body[0].value.value
            if isinstance(value, str):
                out.append((body[0].lineno, [line.strip() for line in value.split("\n")]))
    return out


def _extract(lines: list[str], markers_re: re.Pattern[str]) -> list[tuple[int, str, str]]:
    """(offset, marker, text) for each marker in a block; continuation lines join until a
    blank line or the next marker."""
    found = []
    for offset, line in enumerate(lines):
        match = markers_re.search(line)
        if not match:
            continue
        start = match.start() - 1 if line[: match.start()].endswith("[") else match.start()
        parts = [line[start:]]
        for index in range(offset + 1, len(lines)):  # not a slice: a copy per marker
            following = lines[index]
            if not following or markers_re.search(following):
                break
            parts.append(following)
        found.append((offset, match.group(1), " ".join(parts)))
    return found


@pyast.per_tree
def find_todos(
    path: str,
    source: str,
    tree: ast.Module | None,
    markers: list[str],
    bare_ref_repo: str,
    named_refs: dict[str, str] | None = None,
) -> list[Todo]:
    markers_re = re.compile(r"(?<![\w`'\"])(" + "|".join(map(re.escape, markers)) + r")\b")
    todos: list[Todo] = []
    seen: dict[str, int] = {}
    # The tokenizer is the fallback for a module that does not parse.
    comments = comment_blocks(source, tree, markers_re)
    blocks = sorted(comments + _docstrings(tree))
    comment_lines = {first_line for first_line, _ in comments}
    for first_line, lines in blocks:
        for offset, marker, text in _extract(lines, markers_re):
            if tree is not None and offset and first_line + offset in comment_lines:
                continue  # a marker inside a continuation: its own block reports it
            todo = classify(
                Todo(path=path, line=first_line + offset, marker=marker, text=text),
                bare_ref_repo,
                named_refs,
            )
            todo.ordinal = seen.get(todo.key_text, 0)
            seen[todo.key_text] = todo.ordinal + 1
            todos.append(todo)
    return todos


def classify(todo: Todo, bare_ref_repo: str, named_refs: dict[str, str] | None = None) -> Todo:
    text = todo.text
    owner = _OWNER.search(text)
    if owner:
        todo.owner = (owner.group(1) or owner.group(2)).strip()
    refs: list[Reference] = []
    causes: list[Reference] = []

    def found(ref: Reference, match: re.Match[str], within: str) -> None:
        # "broken by #12", "since #12 landed", "#12 removed the helper": what caused it,
        # not a blocker. Its own words: the clause before the reference and after it.
        before = re.split(r"[;.]\s", within[max(0, match.start() - 50) : match.start()])[-1]
        after = re.split(r"[;.]\s", within[match.end() : match.end() + 60])[0]
        (causes if caused(before, after) else refs).append(ref)

    for match in _REF_URL.finditer(text):
        found(Reference(match.group(1), int(match.group(2))), match, text)
    without_urls = _REF_URL.sub(lambda m: " " * len(m.group(0)), text)
    for match in _REF_REPO.finditer(without_urls):
        found(Reference(match.group(1), int(match.group(2))), match, without_urls)
    for match in _REF_BARE.finditer(text):
        refs.append(Reference(bare_ref_repo, int(match.group(1))))
    aliases = {name.lower(): repo for name, repo in (named_refs or {}).items()}
    for match in _REF_NAMED.finditer(text):  # "PyTorch #186754", "torchtitan PR #12"
        repo = aliases.get(match.group(1).lower())
        if repo:
            found(Reference(repo, int(match.group(2))), match, text)
    todo.references = list(dict.fromkeys(refs))
    todo.causes = [c for c in dict.fromkeys(causes) if c not in todo.references]
    todo.waits = bool(_WAITS.search(text))
    # "once the PyTorch nightly includes…" with no link: blocked upstream all the same.
    todo.upstream = not todo.references and bool(_UPSTREAM_WAIT.search(text))
    # Named APIs only matter in a TODO that waits for something to exist upstream; there,
    # backticked names, `torch.x.y` and code-shaped words (snake_case, CamelCase) count.
    if _WAITING.search(text):
        apis = [m.rstrip("()") for m in _BACKTICKED.findall(text)]
        apis += _DOTTED.findall(text)
        apis += [
            word
            for word in _CODE_WORD.findall(_BACKTICKED.sub(" ", text))
            if word not in _PROPER_NOUNS and word.lower() not in aliases
        ]
        todo.apis = list(dict.fromkeys(api.rstrip(".") for api in apis if len(api) > 3))
    return todo
