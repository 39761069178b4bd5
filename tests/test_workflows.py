from __future__ import annotations

import ast

import pytest

from scout_tui.analysis.ci.workflows import (
    PytestItem,
    WorkflowError,
    invocations,
    keyword_matches,
    read_test_file,
    selects,
    shell_blocks,
)

from .collector_run import by_kind, run_collector
from .conftest import TODAY

WORKFLOW = r"""
name: tests
on: {schedule: [{cron: "0 0 * * *"}]}
jobs:
  gpu:
    uses: pytorch/test-infra/.github/workflows/linux_job_v2.yml@main
    with:
      script: |
        set -eux
        NCCL_NVLS_ENABLE=0 pytest exp/tests/test_a.py::TestOne -v -k "dense"
        torchrun --nproc_per_node=2 -m pytest exp/tests/test_b.py \
          --deselect exp/tests/test_b.py::TestB::test_slow -x
        python -m exp.tests.integration_tests --ngpu 8 && pytest ./exp/tests/test_c.py
        # pytest exp/tests/test_d.py -v
        echo "pytest is not run here" | tee log
  cpu:
    steps:
      - run: python -m pip install -e . ; python -m pytest exp/tests -m "not gpu"
"""


def test_invocations_from_run_and_script_blocks():
    found = invocations("wf.yaml", WORKFLOW)
    summary = [(i.kind, i.selectors, i.keyword, i.deselect, i.commented) for i in found]
    assert summary == [
        ("pytest", ("exp/tests/test_a.py::TestOne",), "dense", (), False),
        (
            "pytest",
            ("exp/tests/test_b.py",),
            None,
            ("exp/tests/test_b.py::TestB::test_slow",),
            False,
        ),
        ("module", ("exp/tests/integration_tests.py",), None, (), False),
        ("pytest", ("exp/tests/test_c.py",), None, (), False),
        ("pytest", ("exp/tests/test_d.py",), None, (), True),
        ("pytest", ("exp/tests",), None, (), False),
    ]


def item(cls, function, path="exp/tests/test_a.py", markers=()):
    return PytestItem(path, cls, function, frozenset(markers))


def test_keyword_semantics_are_pytests():
    assert keyword_matches("dense", item("TestOne", "test_dense_llama"))
    assert keyword_matches("DENSE", item("TestOne", "test_dense_llama"))  # case-insensitive
    assert not keyword_matches("dense and not llama", item("TestOne", "test_dense_llama"))
    assert keyword_matches("TestOne and not moe", item("TestOne", "test_dense"))
    assert keyword_matches("test_a.py", item("TestOne", "test_x"))  # the file name counts
    assert keyword_matches("slow", item("TestOne", "test_x", markers=["slow"]))  # markers too
    assert keyword_matches("tests", item("TestOne", "test_x"))  # so do directories
    assert keyword_matches("(((", item("TestOne", "test_x"))  # pytest would refuse: not a gap


def test_selection_down_to_class_and_function():
    wf = invocations("wf.yaml", WORKFLOW)
    assert selects(wf[0], item("TestOne", "test_dense"))
    assert not selects(wf[0], item("TestOne", "test_moe"))  # -k
    assert not selects(wf[0], item("TestTwo", "test_dense"))  # ::TestOne only
    b = "exp/tests/test_b.py"
    assert selects(wf[1], item("TestB", "test_fast", b))
    assert not selects(wf[1], item("TestB", "test_slow", b))  # --deselect
    assert selects(wf[5], item("TestB", "test_fast", b))  # a directory selector


def test_test_classes_as_pytest_collects_them():
    source = (
        "import unittest\nclass Helper:\n    def test_x(self): ...\n"
        "class TestWithInit:\n    def __init__(self): ...\n    def test_y(self): ...\n"
        "class GraphTest(unittest.TestCase):\n    def test_z(self): ...\n"
        "class TestPlain:\n    @pytest.mark.slow\n    def test_w(self): ...\n"
        "def test_module_level(): ...\n"
    )
    file = read_test_file("t/test_m.py", ast.parse(source))
    assert [(i.cls, i.function) for i in file.items] == [
        ("GraphTest", "test_z"),
        ("TestPlain", "test_w"),
        (None, "test_module_level"),
    ]
    assert file.items[1].markers == {"slow"}


def test_collector_on_the_sample(sample_world):
    found = by_kind(run_collector(sample_world, "ci_tests", TODAY))
    (dropped,) = found["test_dropped_from_ci"]
    assert dropped.title == "`test_profiler.py` no longer runs in CI"
    assert dropped.priority.value == "P0"
    assert "graph_trainer: stop running the profiler test" in dropped.body  # the culprit
    assert "commented out" in dropped.body
    assert "pytest torchtitan/experiments/graph_trainer/tests/test_profiler.py -v" in (
        dropped.suggested_fix
    )
    (partial,) = found["test_classes_not_in_ci"]
    # -k "dense and not AutoParallel" keeps TestAutoParallelNumerics out; nothing selects
    # TestGraphTrainerNumerics::test_moe, but test_dense runs, so that class counts as run.
    # Classes a selection leaves out of a file CI runs: a P2, not a whole file's P1.
    assert partial.items == ["TestAutoParallelNumerics"] and partial.priority.value == "P2"
    assert "test_not_in_ci" not in found
    assert "test_disabled_in_ci" not in found  # the profiler was dropped, reported as such


def test_disabled_before_the_window_names_the_commit(sample_world, monkeypatch):
    from datetime import timedelta

    # A week later the commented-out line is old news: disabled, not dropped.
    later = TODAY + timedelta(days=8)
    monkeypatch.setenv("SCOUT_TODAY", later.isoformat())  # that day is today
    found = by_kind(run_collector(sample_world, "ci_tests", later, priors=False))
    assert "test_dropped_from_ci" not in found
    (disabled,) = found["test_disabled_in_ci"]
    assert disabled.title == "`test_profiler.py` is disabled in CI"
    assert "graph_trainer: stop running the profiler test" in disabled.body
    assert "# pytest torchtitan/experiments/graph_trainer/tests/test_profiler.py -v" in (
        disabled.body
    )


def test_classes_are_read_as_pytest_collects_them():
    """Inherited test methods, `__test__`, unittest.TestCase subclasses whatever their
    name: a base pytest does not collect gives no test; its subclasses do."""
    import ast as ast_

    from scout_tui.analysis.ci.workflows import read_test_file

    source = """
import unittest
from torch.testing._internal.common_utils import TestCase


class NumericsBase:
    def test_loss(self): ...
    def test_grads(self): ...
    def helper(self): ...


class TestLlama(NumericsBase):
    def test_grads(self): ...          # overrides the base's


class TestDeepSeek(NumericsBase):
    test_loss = None                   # hidden: pytest finds None, not a test


class _Shared(TestCase):
    __test__ = False
    def test_shared(self): ...


class GraphPPPartitionTest(_Shared):  # a TestCase, no Test prefix, __test__ back on
    __test__ = True
    def test_split(self): ...


class StillOff(_Shared):              # inherits __test__ = False
    def test_off(self): ...


class PlainUnittest(unittest.TestCase):
    def test_plain(self): ...


class TestWithInit:
    def __init__(self): ...
    def test_never(self): ...
"""
    items = read_test_file("t.py", ast_.parse(source)).items
    assert sorted(f"{i.cls}::{i.function}" for i in items) == [
        "GraphPPPartitionTest::test_shared",
        "GraphPPPartitionTest::test_split",
        "PlainUnittest::test_plain",
        "TestDeepSeek::test_grads",
        "TestLlama::test_grads",
        "TestLlama::test_loss",
    ]


def test_a_test_base_from_a_testing_library_makes_its_subclasses_collected():
    """torch's `FSDPTest` is a unittest.TestCase: a class built on it (through a local base)
    is collected whatever its name; a helper base of another origin is not."""
    import ast as ast_

    source = """
from torch.testing._internal.common_fsdp import FSDPTest
from helpers.shapes import ShapeTest


class _Dsv3FSDPTest(FSDPTest):
    def test_base(self): ...


class GraphPPPartitionFSDPTest(_Dsv3FSDPTest):
    def test_partition(self): ...


class NotCollected(ShapeTest):
    def test_shape(self): ...
"""
    items = read_test_file("t.py", ast_.parse(source)).items
    assert sorted(f"{i.cls}::{i.function}" for i in items) == [
        "GraphPPPartitionFSDPTest::test_base",
        "GraphPPPartitionFSDPTest::test_partition",
        "_Dsv3FSDPTest::test_base",
    ]


def test_a_test_class_imported_into_a_module_ci_runs_runs_there(fresh_world):
    """`from .test_extra import TestExtra  # noqa: F401` in test_passes.py, which CI runs:
    pytest collects TestExtra there too, so test_extra.py is no gap."""
    from .collector_run import commit_all

    tests = fresh_world.repo / "torchtitan/experiments/graph_trainer/tests"
    (tests / "test_extra.py").write_text("class TestExtra:\n    def test_one(self): ...\n")
    commit_all(fresh_world.repo, "an extra test file", "2026-10-01T12:00:00+00:00")
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    # In the tests since before the window: the standing P2 line, not today's P1.
    (standing,) = found["test_files_not_in_ci"]
    assert "test_extra.py" in standing.items and standing.priority.value == "P2"
    # No date in the title (the window's start moves daily; the title is a board card's).
    assert standing.title.endswith("never run in CI") and "2026" not in standing.title
    assert "None of them was run in CI before 2026-12-01 either" in standing.body
    assert not any("test_extra.py" in f.items for f in found.get("test_not_in_ci", []))
    passes = tests / "test_passes.py"
    passes.write_text(
        "from torchtitan.experiments.graph_trainer.tests.test_extra import "
        "TestExtra  # noqa: F401\n" + passes.read_text()
    )
    commit_all(fresh_world.repo, "collect TestExtra with the pass tests")
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    assert not any(
        "test_extra.py" in f.items
        for kind in ("test_not_in_ci", "test_files_not_in_ci")
        for f in found.get(kind, [])
    )


def test_a_test_file_added_in_the_window_that_no_step_runs_is_todays_p1(fresh_world):
    from .collector_run import commit_all

    tests = fresh_world.repo / "torchtitan/experiments/graph_trainer/tests"
    (tests / "test_fresh.py").write_text("class TestFresh:\n    def test_one(self): ...\n")
    commit_all(fresh_world.repo, "a new test file, not wired into CI")
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    (fresh,) = [f for f in found["test_not_in_ci"] if "test_fresh.py" in f.items]
    assert fresh.title == "1 test file added since 2026-12-01 never run in CI"
    assert fresh.priority.value == "P1"


def test_classes_of_one_file_dropped_from_several_steps_are_one_finding(fresh_world):
    """Both steps that ran test_numerics.py are commented out by one commit: one P0 for the
    file naming that commit, not one per step."""
    from scout_tui.model import fingerprint

    from .collector_run import commit_all

    workflow = fresh_world.repo / ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
    text = workflow.read_text()
    for line in (
        "pytest torchtitan/experiments/graph_trainer/tests/test_numerics.py::TestSimpleFSDP -v",
        "pytest torchtitan/experiments/graph_trainer/tests/test_numerics.py -v \\",
    ):
        assert line in text
        text = text.replace(line, "# " + line)
    text = text.replace(
        '            -k "dense and not AutoParallel"',
        '          #   -k "dense and not AutoParallel"',
    )
    workflow.write_text(text)
    sha = commit_all(fresh_world.repo, "Temp disable numerics to restore CI health")
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    dropped = [f for f in found["test_dropped_from_ci"] if "test_numerics.py" in f.title]
    assert len(dropped) == 1
    (numerics,) = dropped
    assert numerics.priority.value == "P0" and sha[:10] in numerics.body
    assert (
        "; the lines are commented out in `.github/workflows/integration_test_8gpu_graph_"
        "trainer.yaml`." in numerics.body
    )
    assert (
        fingerprint(
            "test_dropped_from_ci",
            "torchtitan/experiments/graph_trainer/tests/test_numerics.py",
            "TestSimpleFSDP",
        )
        in numerics.aliases
    )


def test_a_yaml_alias_bomb_is_read_once_per_node(tmp_path):
    """576 bytes of nested aliases are 10^9 steps when every alias is walked again; each node
    is walked once (the timeout only stops a runaway, nothing is timed)."""
    import subprocess
    import sys

    lines = ['a0: &a0 {run: "pytest tests/x.py"}']
    for level in range(1, 10):
        refs = ", ".join([f"*a{level - 1}"] * 10)
        lines.append(f"a{level}: &a{level} [{refs}]")
    lines.append("jobs: {j: {steps: *a9}}")
    (tmp_path / "bomb.yml").write_text("\n".join(lines) + "\n")
    script = (
        "import sys; from scout_tui.analysis.ci.workflows import shell_blocks; "
        "print(shell_blocks(open(sys.argv[1]).read()))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "bomb.yml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['pytest tests/x.py']"
    deep = "x: " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(WorkflowError, match=r"nested too deeply|not valid YAML"):
        shell_blocks(deep)
