from __future__ import annotations

import ast
import re
from datetime import date
from pathlib import Path

import pytest

from scout_tui.analysis.python.torch_api import TorchIndex
from scout_tui.analysis.text.todos import Reference, find_todos
from tests.collector_run import by_kind, commit_all, run_collector
from tests.conftest import TODAY

SOURCE = '''\
"""Module docstring.

TODO: document the pass ordering.
"""


def f():
    # TODO(alice): fold the loops
    # into one walk.
    x = "TODO: a string literal, not a comment"
    # [TODO](bob) add EP support
    # FIXME: use `torch.fx.passes.reinplace` once views work
    # HACK: see pytorch/pytorch#161234 and
    # https://github.com/pytorch/pytorch/pull/158000
    # TODO(#4047): re-enable once fixed; PyTorch #186754 removed the helper
    # XXX not a TODOLIST word: MYTODO stays out
    return x


def g():
    # TODO(alice): fold the loops
    pass
'''


def todos():
    return find_todos(
        "exp/passes.py",
        SOURCE,
        ast.parse(SOURCE),
        ["TODO", "FIXME", "HACK", "XXX"],
        "pytorch/torchtitan",
        {"PyTorch": "pytorch/pytorch"},
    )


def test_comments_and_docstrings_not_string_literals():
    found = todos()
    assert [(t.line, t.marker) for t in found] == [
        (3, "TODO"),
        (8, "TODO"),
        (11, "TODO"),
        (12, "FIXME"),
        (13, "HACK"),
        (15, "TODO"),
        (16, "XXX"),
        (21, "TODO"),
    ]
    assert found[1].text == "TODO(alice): fold the loops into one walk."  # continuation joined
    assert not any("string literal" in t.text for t in found)


def test_owners_references_and_apis():
    found = {t.line: t for t in todos()}
    assert found[8].owner == "alice"
    assert found[11].owner == "bob"
    assert found[12].apis == ["torch.fx.passes.reinplace"]
    assert found[8].apis == []  # no waiting language: named words are not APIs awaited
    assert found[13].references == [
        Reference("pytorch/pytorch", 158000),
        Reference("pytorch/pytorch", 161234),
    ]
    # "PyTorch #186754 removed the helper": what broke it, not what it waits on.
    assert found[15].references == [Reference("pytorch/torchtitan", 4047)]
    assert found[15].causes == [Reference("pytorch/pytorch", 186754)]
    assert found[15].owner is None


def test_identical_todos_in_one_file_stay_two():
    same = [t for t in todos() if t.text == "TODO(alice): fold the loops"]
    assert [t.ordinal for t in same] == [0]
    first = [t for t in todos() if t.key_text.startswith("todo(alice): fold the loops")]
    assert len(first) == 2 and first[0].key_text != first[1].key_text


def test_torch_index_reads_sources_statically(tmp_path: Path):
    root = tmp_path / "torch"
    (root / "fx" / "passes").mkdir(parents=True)
    (root / "__init__.py").write_text("from torch.fx import symbolic_trace as trace\n")
    (root / "fx" / "__init__.py").write_text("")
    (root / "fx" / "passes" / "reinplace.py").write_text("def reinplace(gm):\n    return gm\n")
    (root / "fx" / "passes" / "__init__.py").write_text("X_CONST = 1\n")
    index = TorchIndex(root)
    assert index.has_dotted("torch.fx.passes.reinplace")
    assert index.has_dotted("torch.fx.passes.reinplace.reinplace")
    assert index.has_dotted("torch.fx.passes.X_CONST")
    assert index.has_dotted("torch.trace")  # re-exported with `as`
    assert not index.has_dotted("torch.fx.passes.nothing_here")
    assert index.has_name("reinplace") and not index.has_name("no_such_function")


TRICKY = '''\
TEMPLATE = """
# TODO: inside a string, not a comment
"""
x = "a # TODO fake"  # TODO: the real one
y = f"{x} # XXX also fake"
z = "naïve"  # FIXME: after non-ASCII text
def f():
    s = ("# HACK not this"
         "# nor this")  # HACK: but this
'''


def test_comments_told_from_strings_without_a_tokenizer():
    found = find_todos("t.py", TRICKY, ast.parse(TRICKY), ["TODO", "FIXME", "HACK", "XXX"], "o/r")
    assert [(t.line, t.text) for t in found] == [
        (4, "TODO: the real one"),
        (6, "FIXME: after non-ASCII text"),
        (9, "HACK: but this"),
    ]
    # A module that does not parse falls back to the tokenizer and still finds comments.
    broken = "def f(:\n    pass  # TODO: still found\n"
    assert [t.text for t in find_todos("b.py", broken, None, ["TODO"], "o/r")] == [
        "TODO: still found"
    ]


def test_awaited_apis_need_waiting_language_and_code_shape():
    from scout_tui.analysis.text.todos import Todo, classify

    text = "TODO(ivan): Remove this fallback once the PyTorch nightly includes _move_overlap_nodes."
    waiting = classify(Todo("p.py", 1, "TODO", text), "o/r")
    assert waiting.apis == ["_move_overlap_nodes"]
    camel = classify(
        Todo("p.py", 1, "TODO", "TODO: drop after nightly picks up BitsetAncestors"), "o/r"
    )
    assert camel.apis == ["BitsetAncestors"]
    plain = classify(
        Todo(
            "p.py",
            1,
            "TODO",
            "TODO: when we move the chain behind ``target``, "
            "collapse the prefetch gap of wait_tensor",
        ),
        "o/r",
    )
    assert plain.apis == []


def test_ages_are_as_of_the_date_and_never_negative(tmp_path, fresh_world, run_today):
    import os
    import re
    import subprocess

    passes = fresh_world.repo / "torchtitan/experiments/graph_trainer/passes.py"
    passes.write_text(passes.read_text() + "\n# TODO(bob): added after the day asked for\n")
    stamp = "2026-12-02T10:00:00Z"
    dates = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    subprocess.run(
        ["git", "commit", "-qam", "a later TODO"],
        cwd=fresh_world.repo,
        check=True,
        env={**os.environ, **dates},
    )
    result = run_collector(fresh_world, "todos", date(2026, 11, 30))
    text = "\n".join(f.body for f in result.findings)
    # The 30th's tree, read from git: a TODO committed later is not in it at all.
    titles = [f.title for f in [*result.findings, *result.left_out]]  # kept, not reported
    # The 30th has no prior report: no baseline, and the title says so. A past day: the
    # installed torch does not say the TODO naming an API may go, so it is one of these.
    assert (
        "5 TODOs with no upstream blocker (1 with a named owner), none new today (first "
        "report: no baseline before the day's start)" in titles
    ), titles
    assert "4 days old" in text  # the others: as of the 30th, not of today
    assert re.search(r"-\d+ days? old", text) is None
    today = run_collector(fresh_world, "todos", date(2026, 12, 2))
    assert "4 TODOs with no upstream blocker (1 with a named owner): 1 new since 2026-12-01" in [
        f.title for f in [*today.findings, *today.left_out]
    ]  # the 2nd's tree: bob's is there, one other gone


def test_the_list_of_unblocked_todos_says_only_what_is_new(fresh_world, run_today):
    """Three old TODOs are a count; one written today in two files is one line, both
    places named."""

    from scout_tui.sandbox.demo.files import EXP

    text = "# TODO: fold the warmup loop into the scheduler once the config settles\n"
    for name in ("warmup_a.py", "warmup_b.py"):
        (fresh_world.repo / EXP / name).write_text(f"{text}def f():\n    return 1\n")
    commit_all(fresh_world.repo, "warmup")
    (listed,) = by_kind(run_collector(fresh_world, "todos", TODAY))["todo_unclassified"]
    assert listed.title == (
        "5 TODOs with no upstream blocker (0 with a named owner): 2 new since 2026-12-01"
    )
    [line] = [ln for ln in listed.body.splitlines() if ln.startswith("- ")]
    assert f"`{EXP}/warmup_a.py:1`, `{EXP}/warmup_b.py:1`" in line
    # The older ones are a count with where they are, in one line.
    assert re.search(
        r"\n3 older ones, unchanged: `\w+\.py:\d+`, `\w+\.py:\d+`, "
        r"`\w+\.py:\d+`\.$",
        listed.body,
    )


def test_todos_alike_up_to_the_cut_are_still_one_item_each(fresh_world, run_today):
    """Two TODOs whose first words match and whose ends differ are two items (the count in
    the title and the items agree); one TODO alone keeps its plain name."""
    from scout_tui.sandbox.demo.files import EXP

    common = "TODO: fold the warmup loop into the scheduler when the config has settled"
    (fresh_world.repo / EXP / "warmup.py").write_text(
        f"# {common}, for dense models\n# {common}, for MoE models\n# TODO: one alone\n"
    )
    commit_all(fresh_world.repo, "warmup")
    (listed,) = by_kind(run_collector(fresh_world, "todos", TODAY))["todo_unclassified"]
    ours = [item for item in listed.items if item.startswith("warmup.py")]
    assert len(ours) == 3 == len(set(ours))
    assert "warmup.py: TODO: one alone" in ours
    assert listed.title.startswith(f"{len(listed.items)} TODOs")


def test_todos_waiting_upstream_without_a_link_and_the_pr_that_caused_it():
    """Waiting on "the PyTorch nightly" with no link is blocked upstream, not "no blocker";
    a PR the TODO says caused the breakage is not what it waits for."""
    from scout_tui.analysis.text.todos import Todo, classify

    def read(text: str) -> Todo:
        return classify(Todo("x.py", 1, "TODO", text), "pytorch/torchtitan")

    waiting = read("Remove this fallback once the PyTorch nightly wheel has the fix.")
    assert waiting.upstream and waiting.references == []
    assert read("requires upstream change: FSDP passes should keep the order").upstream
    assert not read("fold the two cleanup loops into one walk").upstream
    assert read(
        "Disabled due to upstream AutoParallel regression in PyTorch nightly "
        "dev20260508. Re-enable once fixed."
    ).upstream  # a word between
    assert not read("clean up the upstream code later").upstream
    caused = read(
        "JIT tests disabled: a regression triggered by pytorch/pytorch#2149; "
        "re-enable when pytorch/pytorch#3000 lands"
    )
    assert [str(r) for r in caused.references] == ["pytorch/pytorch#3000"]
    assert [str(r) for r in caused.causes] == ["pytorch/pytorch#2149"]
    only_cause = read(
        "Broken by pytorch/pytorch#2149 (the DTensor change), once the "
        "partitioner is fixed upstream re-enable"
    )
    assert only_cause.references == [] and only_cause.upstream


def test_todos_in_two_places_waiting_on_the_same_blocker_are_one_finding(fresh_world):
    from scout_tui.model import fingerprint
    from scout_tui.sandbox.demo.files import EXP

    for name in ("a_pass.py", "b_pass.py"):
        (fresh_world.repo / EXP / name).write_text(
            "def f():\n    # TODO(pytorch/pytorch#170001): drop once the fix lands\n    return 1\n"
        )
    commit_all(fresh_world.repo, "two workarounds for one bug")
    found = by_kind(run_collector(fresh_world, "todos", TODAY))["todo_blocked"]
    (both,) = [f for f in found if "#170001" in f.title]
    assert both.title == ("2 TODOs blocked on pytorch/pytorch#170001: `a_pass.py:2`, `b_pass.py:2`")
    assert [f.path.rsplit("/", 1)[-1] for f in both.files] == ["a_pass.py", "b_pass.py"]
    # b_pass.py's own marker (its key as a lone TODO) still matches the merged finding.
    path = f"{EXP}/b_pass.py"
    text = (fresh_world.repo / path).read_text()
    (todo,) = find_todos(path, text, ast.parse(text), ["TODO"], "pytorch/torchtitan", {})
    assert both.aliases == [fingerprint("todo_blocked", path, todo.key_text, str(todo.ordinal))]


@pytest.mark.parametrize("above", ["@unittest.skip('waits')", "def test_other(self): ..."])
def test_a_todo_that_is_why_a_test_is_off_is_said_by_the_switched_off_tests(fresh_world, above):
    """`# TODO: re-enable once pytorch/pytorch#170002 is fixed` right above a skip is the
    reason the test is off: not a standing "blocked" FYI of its own (TRUE). The same TODO
    above a test that runs is one (NEAR-MISS)."""
    from scout_tui.sandbox.demo.files import EXP

    (fresh_world.repo / EXP / "tests" / "test_waits.py").write_text(
        "import unittest\n\n\nclass TestWaits(unittest.TestCase):\n"
        "    # TODO: re-enable once pytorch/pytorch#170002 is fixed\n"
        f"    {above}\n"
        "    def test_it(self): ...\n"
        if above.startswith("@")
        else "import unittest\n\n\nclass TestWaits(unittest.TestCase):\n"
        "    # TODO: re-enable once pytorch/pytorch#170002 is fixed\n"
        f"    {above}\n"
    )
    commit_all(fresh_world.repo, "a test waiting on #170002")
    run = run_collector(fresh_world, "todos", TODAY)
    shown = [f for f in run.findings if "#170002" in f.title]
    kept = [f for f in run.left_out if "#170002" in f.title]
    if above.startswith("@"):
        assert shown == [] and [f.kind for f in kept] == ["todo_blocked_test"]
    else:
        assert [f.kind for f in shown] == ["todo_blocked"] and kept == []


def _commit_as(repo: Path, author: str, message: str) -> None:
    import os
    import subprocess

    when = f"{TODAY.isoformat()}T20:00:00+00:00"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": author,
        "GIT_AUTHOR_EMAIL": f"{author}@example.com",
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
    }
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=env)


def test_the_pr_a_todo_says_broke_it_is_context_not_what_it_waits_on(fresh_world):
    """True case: "PyTorch #N (date) removed …; re-enable once <issue> is fixed" waits on the
    issue only, the PR named as what broke it. Near-miss: "remove after #N lands" waits on
    #N (an event still ahead is a wait)."""
    from scout_tui.sandbox.demo.files import EXP

    (fresh_world.repo / EXP / "skew.py").write_text(
        "def f():\n"
        "    # TODO: disabled: pytorch/pytorch#186754 (2026-06-24) removed the helper we\n"
        "    # import. Re-enable once https://github.com/org/other/issues/3699 is fixed.\n"
        "    return 1\n"
    )
    (fresh_world.repo / EXP / "copy.py").write_text(
        "def g():\n    # TODO: drop this copy after pytorch/pytorch#3001 lands\n    return 2\n"
    )
    commit_all(fresh_world.repo, "a skew and a copy")
    found = by_kind(run_collector(fresh_world, "todos", TODAY))["todo_blocked"]
    (skew,) = [f for f in found if f.files[0].path.endswith("skew.py")]
    assert skew.items == ["org/other#3699"]
    assert "It names pytorch/pytorch#186754 as what broke it." in skew.body
    (copy,) = [f for f in found if f.files[0].path.endswith("copy.py")]
    assert copy.items == ["pytorch/pytorch#3001"]


def test_one_authors_todos_in_one_file_on_upstream_issues_are_one_finding(fresh_world):
    """True case: one author, one file, two TODOs waiting on two upstream issues: one
    finding listing both lines. Near-miss: the same in a file where two people wrote them:
    two findings."""
    from scout_tui.sandbox.demo.files import EXP

    repo = fresh_world.repo
    first = "def f():\n    # TODO: replace once pytorch/pytorch#188723 lands\n    return 1\n"
    second = "\n\ndef g():\n    # TODO: delete once pytorch/pytorch#188727 lands\n    return 2\n"
    (repo / EXP / "one.py").write_text(first + second)
    (repo / EXP / "two.py").write_text(first.replace("88723", "88733"))
    _commit_as(repo, "sam", "two workarounds")
    (repo / EXP / "two.py").write_text(first.replace("88723", "88733") + second.replace("7", "8"))
    _commit_as(repo, "kim", "another workaround")
    found = by_kind(run_collector(fresh_world, "todos", TODAY))["todo_blocked"]
    one = [f for f in found if any(r.path.endswith("one.py") for r in f.files)]
    assert [f.title for f in one] == [
        "2 TODOs blocked on pytorch/pytorch#188723, pytorch/pytorch#188727: `one.py:2`, `one.py:7`"
    ]
    assert one[0].items == ["pytorch/pytorch#188723", "pytorch/pytorch#188727"]
    two = [f for f in found if any(r.path.endswith("two.py") for r in f.files)]
    assert sorted(len(f.files) for f in two) == [1, 1]
