"""What a CI step actually runs once skips are counted: how many of a test file's tests each
pytest step selects and how many of those are skipped without a condition, and the suite a
`--test_suite` step runs. Pure; a green step whose every test is off has run nothing."""

from __future__ import annotations

import ast

from scout_tui.analysis.ci.workflows import Invocation, PytestItem, read_test_file, selects
from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.experiment_tests import skipped_tests


@pyast.per_tree
def selected_and_skipped(
    path: str, tree: ast.Module | None, invocations: tuple[Invocation, ...]
) -> list[tuple[Invocation, int, int]]:
    """(invocation, tests of the file it selects, of those skipped without a condition), for
    the invocations that select any."""
    if tree is None:
        return []
    items = read_test_file(path, tree).items
    off = {d.name for d in skipped_tests(path, tree)}
    found = []
    for invocation in invocations:
        chosen = [i for i in items if selects(invocation, i)]
        if chosen:
            found.append((invocation, len(chosen), sum(1 for i in chosen if _skipped(i, off))))
    return found


def _skipped(item: PytestItem, off: set[str]) -> bool:
    """Skipped without a condition: itself, or its whole class (`skipped_tests` names)."""
    if item.cls is None:
        return item.function in off
    return item.cls in off or f"{item.cls}.{item.function}" in off


def suite_of(invocation: Invocation) -> str | None:
    """The suite of `python -m …integration_tests --test_suite X`."""
    if invocation.kind != "module":
        return None
    words = invocation.line.replace("=", " ").split()
    if "--test_suite" not in words:
        return None
    at = words.index("--test_suite")
    return words[at + 1] if at + 1 < len(words) else None
