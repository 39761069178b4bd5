"""What CI reaches besides `test_*.py`: test runners no workflow starts, tests gated on
hardware only runners without it select, and core integration entries that name
configuration functions instead of flags. Each rule: a true case and a near-miss, in a
repository the test builds."""

from __future__ import annotations

from scout_tui.model import Section
from scout_tui.sandbox.demo.files import EXP

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY

WORKFLOW = ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
DOTTED = EXP.replace("/", ".")


def _add_step(repo, line: str, workflow: str = WORKFLOW) -> None:
    path = repo / workflow
    anchor = f"          pytest {EXP}/tests/test_passes.py -v\n"
    path.write_text(path.read_text().replace(anchor, anchor + f"          {line}\n"))


# -- test runners -----------------------------------------------------------------------
def test_a_test_runner_no_workflow_starts_is_flagged_and_one_started_with_m_is_not(
    fresh_world,
):
    repo = fresh_world.repo
    tests = repo / EXP / "tests"
    runner = (
        "import sys\n\n\ndef run_widget_tests(out):\n    return 0\n\n\n"
        "def main():\n    run_widget_tests(sys.argv[1])\n\n\n"
        'if __name__ == "__main__":\n    main()\n'
    )
    (tests / "run_widget_tests.py").write_text(runner)  # the true case
    (tests / "run_gadget_tests.py").write_text(runner.replace("widget", "gadget"))
    tools = repo / EXP / "tools"
    tools.mkdir()
    (tools / "__init__.py").write_text("")
    # A `__main__` helper outside the tests that runs no tests: not a runner.
    (tools / "dump_config.py").write_text(
        'import json\n\n\nif __name__ == "__main__":\n    print(json.dumps({}))\n'
    )
    # A unittest module outside the tests dir, started by path: a runner, and started.
    (tools / "check_shapes.py").write_text(
        'import unittest\n\n\nif __name__ == "__main__":\n    unittest.main()\n'
    )
    _add_step(repo, f"python -m {DOTTED}.tests.run_gadget_tests $RUNNER_TEMP/out --ngpu 8")
    _add_step(repo, f"python ./{EXP}/tools/check_shapes.py")
    commit_all(repo, "runners")
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    (finding,) = found["test_runner_not_in_ci"]
    assert finding.items == [f"{EXP}/tests/run_widget_tests.py"]
    assert finding.priority.value == "P2" and finding.section is Section.ACTION_ITEMS
    assert f"python -m {DOTTED}.tests.run_widget_tests" in finding.suggested_fix


def test_the_sample_has_no_runner_outside_ci(sample_world):
    found = by_kind(run_collector(sample_world, "ci_tests", TODAY))
    assert "test_runner_not_in_ci" not in found
    assert "test_hardware_idle" not in found


# -- hardware-gated tests ---------------------------------------------------------------
GATED = """\
import unittest

import torch
from torchtitan.tools.utils import has_cuda_capability


@unittest.skipIf(not torch.cuda.is_available(), "CUDA not available")
class TestDeterministic(unittest.TestCase):
    @unittest.skipUnless(has_cuda_capability(9, 0), "Numerics only match on sm_90+")
    def test_bitwise(self):
        pass

    def test_runs_anywhere_with_a_gpu(self):
        pass
"""

H100_WORKFLOW = """\
name: H100
on:
  schedule:
    - cron: "0 6 * * *"
jobs:
  h100:
    runs-on: RUNS_ON
    STRATEGY
    steps:
      - run: |
          pytest torchtitan/experiments/graph_trainer/tests/test_gated.py -v
"""


def _gated_world(fresh_world, runs_on: str | None, strategy: str = "") -> dict:
    repo = fresh_world.repo
    (repo / EXP / "tests" / "test_gated.py").write_text(GATED)
    _add_step(repo, f"pytest {EXP}/tests/test_gated.py -v")  # on the A10G runner (8.6)
    if runs_on is not None:
        text = H100_WORKFLOW.replace("RUNS_ON", runs_on).replace("STRATEGY", strategy)
        (repo / ".github/workflows/h100.yaml").write_text(text)
    commit_all(repo, "a gated test")
    result = run_collector(fresh_world, "ci_tests", TODAY)
    return {"found": by_kind(result), "warnings": result.config_warnings}


def test_a_test_gated_on_sm90_only_an_a10g_job_runs_passes_having_run_nothing(fresh_world):
    run = _gated_world(fresh_world, None)
    (idle,) = run["found"]["test_hardware_idle"]
    assert idle.items == ["TestDeterministic.test_bitwise"]  # the ungated one runs
    assert "skipUnless(has_cuda_capability(9, 0))" in idle.body
    assert "integration_test_8gpu_graph_trainer.yaml:build-test" in idle.body
    assert idle.priority.value == "P2"
    assert not run["warnings"]


def test_the_same_gate_also_selected_on_an_h100_runner_runs(fresh_world):
    run = _gated_world(fresh_world, "linux.aws.h100.8")
    assert "test_hardware_idle" not in run["found"]
    assert not run["warnings"]


def test_a_matrix_runner_resolves_through_a_literal_matrix(fresh_world):
    run = _gated_world(
        fresh_world,
        "${{ matrix.runner }}",
        "strategy:\n      matrix:\n        runner: [linux.g5.48xlarge.nvidia.gpu]",
    )
    (idle,) = run["found"]["test_hardware_idle"]
    assert "h100.yaml:h100" in idle.body
    assert not run["warnings"]


def test_an_unknown_runner_label_is_a_configuration_warning_not_a_finding(fresh_world):
    run = _gated_world(fresh_world, "some.new.runner.label")
    assert "test_hardware_idle" not in run["found"]
    (warning,) = run["warnings"]
    assert "some.new.runner.label" in warning.message and "[ci.runners]" in warning.message


# -- configuration functions in core's integration tests ---------------------------------
RECIPES = """\
from torchtitan.trainer import Trainer

from . import _spmd


def base() -> Trainer.Config:
    return Trainer.Config()


def llama3_tp2() -> Trainer.Config:
    config = base()
    _spmd(config)
    config.parallelism.tensor_parallel_degree = 2
    return config


def llama3_tp2_compile() -> Trainer.Config:
    config = llama3_tp2()
    config.compile.enable = True
    return config


def llama3_cp2():
    return Trainer.Config(parallelism=ParallelismConfig(context_parallel_degree=2))


def llama3_fsdp1():
    config = base()
    config.parallelism.data_parallel_shard_degree = 1
    return config
"""

CORE = """\
import recipes.features as recipes
from external_package import built_elsewhere

from tests.integration_tests import OverrideDefinitions


def build_features_test_list():
    return [
        OverrideDefinitions(configs=[recipes.llama3_tp2_compile], test_name="tp_compile"),
        OverrideDefinitions(configs=[recipes.llama3_cp2], test_name="cp"),
        OverrideDefinitions(configs=[recipes.llama3_fsdp1], test_name="single"),
        EXTRA
    ]
"""


def _core_world(fresh_world, extra: str = "") -> dict:
    repo = fresh_world.repo
    (repo / "recipes").mkdir()
    (repo / "recipes" / "__init__.py").write_text(
        "def _spmd(config):\n    config.parallelism.spmd_backend = 'x'\n"
    )
    (repo / "recipes" / "features.py").write_text(RECIPES)
    (repo / "tests/integration_tests/features.py").write_text(CORE.replace("EXTRA", extra))
    (repo / "tests/integration_tests/h100.py").write_text(
        "from tests.integration_tests import OverrideDefinitions\n\n\n"
        "def build():\n    return [OverrideDefinitions([['--compile.enable']], 'c', 'c')]\n"
    )
    commit_all(repo, "core tests name configuration functions")
    result = run_collector(fresh_world, "coverage", TODAY)
    return {"found": by_kind(result), "warnings": result.config_warnings}


def test_core_entries_naming_configuration_functions_are_read_for_their_degrees(fresh_world):
    run = _core_world(fresh_world)
    (gap,) = run["found"]["parallelism_gap"]
    # TP (through the base the function starts from) the experiment runs (FSDP+TP); CP,
    # set by a constructor, it does not; a degree of 1 turns nothing on.
    assert gap.items == ["context_parallel"]
    assert "tests/integration_tests/features.py::cp" in gap.body
    assert not run["warnings"]


def test_a_configuration_function_scout_cannot_read_is_said_not_taken_for_none(fresh_world):
    run = _core_world(
        fresh_world,
        'OverrideDefinitions(configs=[built_elsewhere], test_name="far"),',
    )
    (warning,) = run["warnings"]
    assert "built_elsewhere" in warning.message and "could not read" in warning.message
    # The readable entries are still compared.
    assert run["found"]["parallelism_gap"][0].items == ["context_parallel"]


# -- the pure pieces, on odd input --------------------------------------------------------
def test_gate_shapes_and_odd_workflows():
    import ast

    from scout_tui.analysis.ci.hardware import Gates, Hardware, runs_on, workflow_jobs

    tree = ast.parse(
        "import pytest, torch, unittest\n"
        "pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason='gpu')\n"
        "H100 = torch.cuda.get_device_capability() >= (9, 0)\n"
        "@unittest.skipIf(torch.cuda.get_device_capability() < (9, 0), 'sm90')\n"
        "def test_a(): ...\n"
        "@requires_cuda\ndef test_b(): ...\n"
        "@unittest.skipUnless(SM90OrLater and H100, 'x')\ndef test_c(): ...\n"
        "@unittest.skipIf(os.environ.get('X'), 'not hardware')\ndef test_d(): ...\n"
    )
    gates = Gates(tree)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    a10g, h100, cpu = Hardware(True, (8, 6)), Hardware(True, (9, 0)), Hardware(False)
    module = gates.module_conditions()
    assert runs_on(gates, module, cpu) is False and runs_on(gates, module, a10g) is True
    for name in ("test_a", "test_c"):
        gate = gates.conditions(functions[name])
        assert (runs_on(gates, gate, a10g), runs_on(gates, gate, h100)) == (False, True)
    assert runs_on(gates, gates.conditions(functions["test_b"]), cpu) is False
    assert gates.conditions(functions["test_d"]) == []  # not about the machine
    odd = [
        "jobs: [1, 2]",
        "jobs:\n  a: 3\n  b:\n    runs-on: {labels: 7}\n    steps: [{run: 'pytest x.py'}]",
        "jobs:\n  a:\n    runs-on: ${{ matrix.r }}\n    strategy: {matrix: {r: 'abc'}}",
        ": : :",
    ]
    for text in odd:
        try:
            jobs = workflow_jobs("w.yaml", text)
        except ValueError:
            continue  # WorkflowError: said as unreadable elsewhere
        assert all(job.runners == () for job in jobs)
