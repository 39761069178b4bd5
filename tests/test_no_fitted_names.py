"""Rules are written from mechanisms, not fitted to the reference repository: no name of
torchtitan or its experiment appears in scout's code. Comments and docstrings may cite
them as examples; the shipped scout.toml profile, the demo and the local GitHub (sandbox/)
name them by design."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "scout_tui"
FITTED = re.compile(r"torch_?titan|graph_?trainer", re.IGNORECASE)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def code_words(source: str) -> list[tuple[int, str]]:
    """Every identifier and string constant of `source`, docstrings left out."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    words = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                words.append((node.lineno, node.value))
        elif isinstance(node, ast.Name):
            words.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            words.append((node.lineno, node.attr))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.alias):
            words.append((node.lineno, node.name))
        elif isinstance(node, ast.arg):
            words.append((node.lineno, node.arg))
    return words


def test_no_code_outside_the_sandbox_names_the_reference_repository():
    fitted = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {word!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "sandbox" not in path.relative_to(PACKAGE).parts
        for line, word in code_words(path.read_text(encoding="utf-8"))
        if FITTED.search(word)
    ]
    assert fitted == []


def test_the_check_sees_code_and_not_comments():
    source = (
        '"""A docstring may say torchtitan."""\n'
        "# so may a comment: graph_trainer\n"
        'PREFIX = "torchtitan/experiments/"\n'
        "def f(graph_trainer_mode):\n"
        '    """Nor here: TorchTitan."""\n'
        "    return graph_trainer_mode\n"
    )
    assert sorted((line, w) for line, w in code_words(source) if FITTED.search(w)) == [
        (3, "torchtitan/experiments/"),
        (4, "graph_trainer_mode"),  # the parameter
        (6, "graph_trainer_mode"),  # its use
    ]
