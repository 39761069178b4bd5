"""Sentences that say a pass runs by default, and whether the code agrees: a pass every use
of which sits under an `if` on a config option whose default is off (`if cfg.enable_x:`
with `enable_x: bool = False`) does not run by default, whatever a docstring says. Pure
functions over text and parsed modules; a use scout cannot settle leaves the claim alone."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.comments import comment_lines

# "runs by default", "is always applied", "one of the default passes".
_CLAIM = re.compile(
    r"\bby default\b|\bon by default\b|\balways (?:run|runs|ran|applied|applies|enabled|on)\b"
    r"|\bdefault (?:pass|passes|pipeline)\b",
    re.IGNORECASE,
)
# A sentence that says when: "when --x is set", "if enabled", "opt-in".
_CONDITION = re.compile(
    r"\b(?:when|whenever|if|unless|only|opt[- ]in|requires?|with\s+--|set\s+--)\b|--\w",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_OFF = frozenset({"False", "None", "0", "''", '""', "[]"})


@dataclass(frozen=True)
class Claim:
    line: int
    name: str  # the pass (or registry key) the sentence names
    sentence: str


@dataclass(frozen=True)
class Gate:
    """Where a pass is switched on: the option, its default, and the `if` (path, line)."""

    option: str
    default: str
    path: str
    line: int


def _sentences(line: int, text: str) -> list[tuple[int, str]]:
    """A block's sentences, each with the line it starts on."""
    found = []
    offset = 0
    for sentence in _SENTENCE.split(text):
        at = text.find(sentence, offset)
        offset = max(at, offset)
        found.append((line + text.count("\n", 0, max(at, 0)), " ".join(sentence.split())))
    return found


@pyast.per_tree
def python_prose(text: str, tree: ast.Module | None) -> list[tuple[int, str]]:
    """A module's docstrings and comment blocks (consecutive `#` lines), with first lines."""
    blocks: list[tuple[int, str]] = []
    for node in pyast.nodes(tree, ast.Expr):
        assert isinstance(node, ast.Expr)
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            blocks.append((node.lineno, node.value.value))
    last = -2
    for row, words in comment_lines(text, tree):
        if blocks and row == last + 1 and blocks[-1][0] < 0:
            start, said = blocks[-1]
            blocks[-1] = (start, said + "\n" + words)
        else:
            blocks.append((-row, words))  # negative: an open comment block
        last = row
    return [(abs(line), block) for line, block in blocks]


def markdown_prose(text: str) -> list[tuple[int, str]]:
    """A doc's paragraphs (fenced code left out), with first lines."""
    blocks: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            line = ""
        if fenced or not line.strip():
            if current:
                blocks.append((start, "\n".join(current)))
            current = []
            continue
        if not current:
            start = number
        current.append(line)
    if current:
        blocks.append((start, "\n".join(current)))
    return blocks


def default_claims(blocks: list[tuple[int, str]], names: set[str]) -> list[Claim]:
    """Sentences naming one of `names` that say it runs by default, unconditionally."""
    if not names:
        return []
    named = re.compile(r"\b(" + "|".join(map(re.escape, sorted(names))) + r")\b")
    found = []
    for line, block in blocks:
        if not _CLAIM.search(block):
            continue
        for start, sentence in _sentences(line, block):
            if not _CLAIM.search(sentence) or _CONDITION.search(sentence):
                continue
            for name in dict.fromkeys(named.findall(sentence)):
                found.append(Claim(start, name, sentence))
    return found


def _option_of(node: ast.expr, aliases: dict[str, str]) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    return None


def _off_by(test: ast.expr, defaults: dict[str, str], aliases: dict[str, str]) -> str | None:
    """The option that makes `test` false at every option's default, or None: `cfg.x`
    (x off by default), `cfg.x is not None` (x None), `a and b` (either)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((o for v in test.values if (o := _off_by(v, defaults, aliases))), None)
    option = _option_of(test, aliases)
    if option is not None:
        return option if defaults.get(option) in _OFF else None
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        option = _option_of(test.left, aliases)
        return option if option is not None and defaults.get(option) == "None" else None
    return None


def _aliases(function: ast.AST) -> dict[str, str]:
    """Local names bound to an option (`enabled = cfg.compile.enable_x`)."""
    return {
        node.targets[0].id: node.value.attr
        for node in pyast.walk(function)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Attribute)
    }


def _uses(
    statements: list[ast.stmt], name: str, gate: ast.If | None, function: str | None
) -> list[tuple[ast.If | None, str | None, int]]:
    """Each statement that names `name`: the innermost `if` whose body holds it (None:
    none, or only `else` branches) and its top-level function."""
    found: list[tuple[ast.If | None, str | None, int]] = []
    for statement in statements:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if statement.name == name:
                continue  # its own definition
            inner = statement.name if function is None else function
            found += _uses(statement.body, name, None if function is None else gate, inner)
            continue
        if isinstance(statement, ast.If):
            if _names(statement.test, name):
                found.append((gate, function, statement.lineno))
            found += _uses(statement.body, name, statement, function)
            found += _uses(statement.orelse, name, None, function)  # an else runs ungated
            continue
        nested = pyast.child_statements(statement)
        if nested:
            heads = [
                getattr(statement, f)
                for f in ("test", "iter", "items", "subject")
                if hasattr(statement, f)
            ]
            if any(isinstance(h, ast.AST) and _names(h, name) for h in heads):
                found.append((gate, function, statement.lineno))
            found += _uses(nested, name, gate, function)
        elif _names(statement, name):
            found.append((gate, function, statement.lineno))
    return found


def _names(node: ast.AST, name: str) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == name)
        or (isinstance(n, ast.Attribute) and n.attr == name)
        or (isinstance(n, ast.Constant) and n.value == name)
        for n in pyast.walk(node)
    )


def gated_off(
    modules: dict[str, ast.Module], name: str, defaults: dict[str, str], depth: int = 0
) -> Gate | None:
    """The gate that keeps `name` from running by default: every use of it sits under an
    `if` on an option that is off by default — directly, or inside a function every use of
    which is (two calls up). None when one use is not, or there is no use at all."""
    gates: list[Gate] = []
    for path, tree in modules.items():
        if name not in pyast.identifiers(tree) and name not in (
            n.value for n in pyast.nodes(tree, ast.Constant) if isinstance(n, ast.Constant)
        ):
            continue
        functions = {
            n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        for gate, function, _ in _uses(tree.body, name, None, None):
            aliases = _aliases(functions[function]) if function in functions else {}
            option = _off_by(gate.test, defaults, aliases) if gate is not None else None
            if option is not None and gate is not None:
                gates.append(Gate(option, defaults[option], path, gate.lineno))
                continue
            if function is None or depth >= 2 or function == name:
                return None
            outer = gated_off(modules, function, defaults, depth + 1)
            if outer is None:
                return None
            gates.append(outer)
    return gates[0] if gates else None
