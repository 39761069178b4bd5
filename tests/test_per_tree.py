"""What is derived from a parsed tree is kept as long as the tree lives, and no longer:
shared by the runs that read the same blob, recomputed when what it read changed, and
never the reason a tree outlives its runs."""

from __future__ import annotations

import ast
import gc
import weakref

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.dependencies import discover
from scout_tui.analysis.python.experiment_tests import override_definitions

INTEGRATION = """
from x import OverrideDefinitions
TESTS = [
    OverrideDefinitions([["--a.b"]], "first", "first_test"),
    OverrideDefinitions([["--c.d"]], "second", "second_test", disabled=True),
]
"""


def test_a_trees_analyses_die_with_it():
    tree = pyast.parse(INTEGRATION)
    pyast.nodes(tree, ast.Module, ast.Call)  # both indexes: statements and expressions
    pyast.nodes(tree, ast.Module, ast.ClassDef)
    pyast.identifiers(tree)
    assert [o.name for o in override_definitions(tree)] == ["first_test", "second_test"]
    gone = weakref.ref(tree)
    del tree
    gc.collect()
    assert gone() is None


def test_an_analysis_runs_once_per_tree_and_arguments(monkeypatch):
    calls = []

    @pyast.per_tree
    def names(tree: ast.Module, prefix: str) -> list[str]:
        calls.append(prefix)
        return [n.name for n in pyast.nodes(tree, ast.FunctionDef) if n.name.startswith(prefix)]

    tree = pyast.parse("def a_x(): pass\ndef b_y(): pass\n")
    same = pyast.parse("def a_x(): pass\ndef b_y(): pass\n")  # another blob's tree
    assert names(tree, "a") == names(tree, "a") == ["a_x"]
    assert names(tree, "b") == ["b_y"]
    assert names(same, "a") == ["a_x"]
    assert calls == ["a", "b", "a"]


def test_what_was_read_through_parse_decides_whether_a_result_holds():
    """`discover` reads upstream files through `parse`: a result is reused only while each
    file it read is the same tree (the same blob), and found again when one changed."""
    experiment = "exp"
    ours = pyast.parse("from up.config import Job\n\nJob()\n")
    upstream = {"up/config.py": pyast.parse("def Job(a):\n    pass\n")}
    reads: list[str] = []

    def parse(path: str) -> ast.Module | None:
        reads.append(path)
        return upstream.get(path)

    first = discover(experiment, {"exp/mine.py": ours}, parse)
    assert [(d.target, d.check) for d in first] == [("up/config.py::Job", "signature")]
    computed = len(reads)
    assert discover(experiment, {"exp/mine.py": ours}, parse) == first
    assert len(reads) < 2 * computed  # checked what it read, did not walk again
    # Upstream changed (a new blob, so a new tree): found again, with what changed.
    upstream["up/config.py"] = pyast.parse(
        "from dataclasses import dataclass\n\n@dataclass\nclass Job:\n    name: str = ''\n"
    )
    again = discover(experiment, {"exp/mine.py": ours}, parse)
    assert [(d.target, d.check) for d in again] == [("up/config.py::Job", "fields")]
