from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from scout_tui.analysis.python.definitions import pass_definitions
from scout_tui.analysis.python.experiment_tests import override_definitions, parallelism_combo
from scout_tui.analysis.python.freshness import converter_drift, monkey_patches, signature_mismatch
from scout_tui.analysis.python.shapes import signature
from scout_tui.analysis.text.docs import flag_claims, path_claims, pytest_command_claims
from scout_tui.model import Section
from scout_tui.sandbox.demo.files import EXP

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY


def test_pass_definitions_from_names_decorators_and_registries():
    tree = ast.parse(
        "@register_pass_pipeline('fancy')\ndef build(gm): ...\n"
        "def cse_pass(gm, ex): ...\ndef helper(): ...\n"
        "AVAILABLE_JOINT_PASSES = {'cse': cse_pass, 'other': mod.other_pass}\n"
    )
    found = {(p.name, p.keys) for p in pass_definitions("p.py", tree)}
    assert found == {("build", ("fancy",)), ("cse_pass", ("cse",)), ("other_pass", ("other",))}


def test_override_definitions_and_combos():
    tree = ast.parse(
        "OFF = True\n"
        "def f():\n"
        "    return [OverrideDefinitions([['--parallelism.tensor_parallel_degree 2',"
        " '--parallelism.pipeline_parallel_degree=1']], 'TP', 'tp'),\n"
        "            OverrideDefinitions([['--parallelism.context_parallel_degree 2']],"
        " test_name='cp', disabled=OFF)]\n"
    )
    tp, cp = override_definitions(tree)
    assert (tp.name, tp.disabled, cp.name, cp.disabled) == ("tp", False, "cp", True)
    # A degree of 1 turns nothing on.
    assert parallelism_combo(tp.strings) == {"--parallelism.tensor_parallel_degree"}


def test_coverage_on_the_sample(sample_world):
    found = by_kind(run_collector(sample_world, "coverage", TODAY))
    assert found["pass_untested"][0].items == ["bucket_pass"]
    assert found["pass_integration_only"][0].items == ["reorder_pass"]
    # Untested since before the window: a count in FYI, not a task again every day.
    assert "model_config_untested" not in found
    (known,) = found["model_configs_untested"]
    assert known.items == ["graph_trainer_llama3_70b"] and known.section is Section.FYI
    assert known.title == "1 registered model config no test uses, none new since 2026-12-01"
    # PP is in an entry of the experiment's, switched off: the disabled tests say that, the
    # gap is CP alone, which no entry runs.
    assert found["parallelism_gap"][0].items == ["context_parallel"]
    assert found["new_code_untested"][0].items == [
        "torchtitan/experiments/graph_trainer/cudagraph.py"
    ]


def test_monkey_patch_detection_and_signature_check():
    tree = ast.parse(
        "from pkg.mod import A, B\n"
        "def _new(self, x, y=None): ...\n"
        "A.forward = _new\n"
        "B.forward = wrap(B.forward)\n"
        "setattr(A, 'other', _new)\n"
        "local.forward = _new\n"
    )
    patches = monkey_patches("e.py", tree)
    assert [(p.label, p.wraps_original, p.function is not None) for p in patches] == [
        ("A.forward", False, True),
        ("B.forward", True, False),
        ("A.other", False, True),
    ]
    upstream = signature(ast.parse("def f(self, x, *, y=None, scale=1): ...").body[0])
    assert signature_mismatch(list(patches[0].signature), upstream) == [
        "upstream has `scale` (keyword-only); the patch does not"
    ]
    tolerant = signature(ast.parse("def g(self, *args, **kwargs): ...").body[0])
    assert signature_mismatch(tolerant, upstream) == []


def test_converter_drift_generic_copy_and_overrides():
    source = """
def convert(base, registry):
    d = {f.name: getattr(base, f.name) for f in fields(base)}
    d["parallelism"] = replace(base.parallelism, backend="x")
    d.pop("compile")
    ac = d.get("activation_checkpoint")
    if ac is not None:
        d["activation_checkpoint"] = SelectiveAC.Config()
    loss = d.get("loss")
    d["loss"] = Wrapper.Config(**{f.name: getattr(loss, f.name) for f in fields(loss)})
    profiler = d.get("profiler")
    profiler.post = hook()
    return Config(**d)
"""
    drift = converter_drift(
        ast.parse(source).body[0],
        ["job", "parallelism", "compile", "activation_checkpoint", "loss", "profiler"],
    )
    assert drift == {
        "job": "copied",
        "parallelism": "overridden",
        "compile": "dropped",
        "activation_checkpoint": "rebuilt",
        "loss": "overridden",
        "profiler": "overridden",
    }


def test_freshness_on_the_sample(sample_world, run_today):
    found = by_kind(run_collector(sample_world, "freshness", TODAY))
    (stale,) = found["stale_monkey_patch"]
    assert stale.items == ["upstream has `scale` (keyword-only); the patch does not"]
    assert "upstream: FlexAttention.forward(self, q, k, v, *, block_mask=None, scale=None)" in (
        stale.evidence.diff
    )
    (private,) = found["private_api"]
    assert private.items == ["torch.distributed.tensor._dtensor_spec.DTensorSpec"]
    # Used since before the window: a count, not a list repeated every day.
    assert private.title == "1 private torch API in use, none new since 2026-12-01"
    assert private.body == (
        "No private torch API newly used since 2026-12-01; the 1 in use are unchanged."
    )
    (alternative,) = found["private_api_public_alt"]
    assert "`torch.distributed.tensor.DTensorSpec`" in alternative.body
    assert alternative.section is Section.OPPORTUNITIES
    (duplicate,) = found["duplicated_logic"]
    assert duplicate.items == ["simple_fully_shard~fully_shard"]  # renamed locals, same shape
    (drift,) = found["config_drift"]
    assert drift.items == [
        "gradient_accumulation_steps: dropped",
        "seed: dropped",
        "activation_checkpoint: rebuilt",
    ]
    # The AC rebuild has a comment saying why: a choice, not the drift the title names.
    assert (
        drift.title == "`to_graph_trainer_config` drops `gradient_accumulation_steps`, drops `seed`"
    )
    assert "- `activation_checkpoint`: rebuilt (explained in the converter)" in drift.body


def test_doc_claims():
    text = (
        "See `torchtitan/x.py`, [the guide](../../docs/guide.md) and `{dump}/out/`.\n"
        "```bash\npytest tests/test_a.py::TestOne::test_x -v\n"
        "./run_train.sh --compile.mode=turbo --metrics.no-enable_tb --module m\n```\n"
        "Use `https://example.com/a/b.py`.\n"
    )
    assert [c.text for c in path_claims(text)] == ["torchtitan/x.py", "../../docs/guide.md"]
    assert [(c.text, v) for c, v in flag_claims(text)] == [
        ("compile.mode", "turbo"),
        ("metrics.enable_tb", None),
    ]
    (selector,) = pytest_command_claims(text)
    assert (selector.line, selector.path, selector.cls, selector.function) == (
        3,
        "tests/test_a.py",
        "TestOne",
        "test_x",
    )


def test_docs_on_the_sample(sample_world):
    found = by_kind(run_collector(sample_world, "docs", TODAY))
    problems = {f.files[0].path.rsplit("/", 1)[-1]: f.items for f in found["doc_inaccuracy"]}
    assert problems == {
        "README.md": ["path `torchtitan/experiments/graph_trainer/old_passes.py` does not exist"],
        "CLAUDE.md": ["`--compile.mode=turbo`: allowed values are `jit`, `aot`"],
    }
    # Passes and modes a user can select that no doc names: none new since the baseline, so
    # no standing list today.
    assert "doc_feature_missing" not in found
    assert "docs_current" not in found
    # AGENTS.md is a symlink to .claude/CLAUDE.md: one doc, its `../README.md` link resolved
    # from .claude/ (where it works), its finding matching markers filed under either name.
    import subprocess

    from scout_tui.model import fingerprint

    mode = subprocess.run(
        ["git", "ls-files", "-s", f"{EXP}/AGENTS.md"],
        cwd=sample_world.repo,
        capture_output=True,
        text=True,
    ).stdout.split()[0]
    assert mode == "120000"  # the sample holds a real symlink
    [claude] = [f for f in found["doc_inaccuracy"] if f.files[0].path.endswith("CLAUDE.md")]
    assert f"`{EXP}/AGENTS.md` (a symlink)" in claude.body
    # Every line a body names is a file reference, not the first one alone.
    lines = {}
    for doc in found["doc_inaccuracy"]:  # (each names one line on this sample)
        named = sorted({int(n) for n in re.findall(r"^- line (\d+):", doc.body, re.M)})
        assert [ref.line for ref in doc.files] == named
        lines[doc.files[0].path] = named
    assert claude.aliases == [fingerprint("doc_inaccuracy", f"{EXP}/AGENTS.md")]


def test_a_configured_doc_that_is_gone_is_a_configuration_warning(fresh_world):
    import subprocess

    repo = fresh_world.repo
    subprocess.run(["git", "mv", f"{EXP}/README.md", f"{EXP}/docs.md"], cwd=repo, check=True)
    commit_all(repo, "Move the README")
    result = run_collector(fresh_world, "docs", TODAY)
    [warning] = result.config_warnings
    assert warning.subject == "`[docs] files` README.md"
    assert warning.moved_to == f"{EXP}/docs.md" and "Move the README" in warning.message
    assert [f.title for f in result.findings if "README" in f.title and f.kind != "resolved"] == []


def test_clean_docs_say_docs_are_current(tmp_path):
    import git

    from scout_tui.config.profile import load_config
    from scout_tui.pipeline.day import RunOptions, run

    exp = tmp_path / "torchtitan" / "experiments" / "graph_trainer"
    exp.mkdir(parents=True)
    (exp / "passes.py").write_text("def cse_pass(gm, example_inputs):\n    return gm\n")
    (exp / "README.md").write_text("Passes live in `passes.py`; `cse_pass` is the only one.\n")
    repo = git.Repo.init(tmp_path)
    repo.index.add(["torchtitan"])
    repo.index.commit("init", author=git.Actor("a", "a@b"), committer=git.Actor("a", "a@b"))
    result = run(RunOptions(repo=tmp_path, config=load_config(None), offline=True, only=["docs"]))
    assert [(f.kind, f.title, f.body) for f in result.findings] == [
        ("docs_current", "Docs", "docs are current")
    ]


def test_doc_claims_keep_their_lines_after_fenced_blocks():
    text = (
        "Intro `torchtitan/a.py`.\n"  # 1
        "\n"
        "```bash\n"  # 3
        "pytest tests/test_a.py -v\n"
        "```\n"
        "Then `torchtitan/b.py` and\n"  # 6
        "- a list item:\n"
        "   ~~~\n"  # 8: a fence in a list item
        "   ./run_train.sh --compile.mode=max\n"
        "   ~~~\n"
        "[guide](docs/guide.md) `--metrics.log_freq=5`\n"  # 11
        "```a ``torchtitan/c.py`` b``` is a code span, not a fence\n"
        "`torchtitan/d.py`\n"  # 13
    )
    assert [(c.line, c.text) for c in path_claims(text)] == [
        (1, "torchtitan/a.py"),
        (6, "torchtitan/b.py"),
        (13, "torchtitan/d.py"),
        (11, "docs/guide.md"),
    ]
    assert [(c.line, c.text, v) for c, v in flag_claims(text)] == [
        (11, "metrics.log_freq", "5"),
        (9, "compile.mode", "max"),
    ]
    assert [(s.line, s.path) for s in pytest_command_claims(text)] == [(4, "tests/test_a.py")]


def test_a_private_api_newly_used_is_the_news_of_the_list(fresh_world):

    path = fresh_world.repo / EXP / "new_pass.py"
    path.write_text(
        "from torch._inductor.fx_passes.pre_grad import fuse_stuff\n\n\n"
        "def new_pass(gm, example_inputs):\n    return fuse_stuff(gm)\n"
    )
    commit_all(fresh_world.repo, "A pass on a private API")
    (private,) = by_kind(run_collector(fresh_world, "freshness", TODAY))["private_api"]
    assert private.title == "2 private torch APIs in use: 1 new since 2026-12-01"
    assert "`torch._inductor.fx_passes.pre_grad.fuse_stuff` in `new_pass.py:1`" in private.body
    assert "DTensorSpec" not in private.body  # the old one is not listed again
    assert "1 other, in use since before 2026-12-01, unchanged." in private.body
    assert [f.path for f in private.files] == [f"{EXP}/new_pass.py"]


@pytest.mark.parametrize("switch", ["_PP_DISABLED", "True"])
def test_a_test_renamed_while_off_is_not_switched_off(fresh_world, switch):
    """`gt_pp`, off by `_PP_DISABLED`, becomes `gt_pp_1f1b`: still off by the same switch, it
    is a rename, said as one, not news (true case); off now by another switch (`True`), the
    new name is a test switched off (near-miss)."""
    integration = fresh_world.repo / EXP / "tests" / "integration_tests.py"
    text = integration.read_text()
    old = '"PP", "gt_pp",\n                            disabled=_PP_DISABLED)'
    assert old in text
    integration.write_text(
        text.replace(old, f'"PP", "gt_pp_1f1b",\n                            disabled={switch})')
    )
    commit_all(fresh_world.repo, "rename the PP entry")
    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    (standing,) = kinds["tests_disabled"]
    if switch == "_PP_DISABLED":
        assert "tests_newly_disabled" not in kinds
        assert (
            "Renamed while off since 2026-12-01: `integration_tests.py::gt_pp` → "
            "`integration_tests.py::gt_pp_1f1b`" in standing.body
        )
        assert "Running again" not in standing.body
    else:
        (newly,) = kinds["tests_newly_disabled"]
        assert newly.items == ["integration_tests.py::gt_pp_1f1b"]


def test_tests_that_do_not_run_are_one_finding_with_their_reasons_and_trend(fresh_world):
    """Disabled integration entries (a constant, `a or b`, a literal) and unit tests skipped
    without a condition: counted, grouped by why the code says, and the count's move since
    the baseline. `skipIf` depends on the machine: not counted."""

    repo = fresh_world.repo
    tests = repo / EXP / "tests"
    integration = tests / "integration_tests.py"
    text = integration.read_text()
    text = text.replace(
        "_PP_DISABLED = True",
        "# TODO: PP hangs on the stand-in runner (#123)\n"
        "_PP_DISABLED = True\n# CP waits on the new loader\n"
        "_CP_DISABLED = False",
    )
    text = text.replace(
        '"gt_fsdp_tp"),',
        '"gt_fsdp_tp",\n'
        "            # Re-enable once reorder is fixed upstream.\n"
        "            disabled=True),\n"
        '        OverrideDefinitions([["--x"]], "CP", "gt_cp",\n'
        "                            disabled=_PP_DISABLED or _CP_DISABLED),",
    )
    integration.write_text(text)
    (tests / "test_skips.py").write_text(
        "import unittest\nimport torch\n\n\nclass TestSkips(unittest.TestCase):\n"
        '    @unittest.skip("flaky on the nightly (#77)")\n    def test_flaky(self): ...\n\n'
        '    @unittest.skipIf(not torch.cuda.is_available(), "no GPU")\n'
        "    def test_gpu(self): ...\n"
    )
    commit_all(repo, "Disable more")

    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    # This window's switch-offs are the news: an Action Item of their own, with why.
    (newly,) = kinds["tests_newly_disabled"]
    assert newly.items == [
        "integration_tests.py::gt_cp",
        "integration_tests.py::gt_fsdp_tp",
        "test_skips.py::TestSkips.test_flaky",
    ]
    assert newly.title == (
        "3 tests switched off since 2026-12-01: `gt_cp`, `gt_fsdp_tp`, `TestSkips.test_flaky`"
    )
    assert newly.priority.value == "P2"
    assert "- Re-enable once reorder is fixed upstream." in newly.body
    assert "- flaky on the nightly (#77)" in newly.body
    (found,) = kinds["tests_disabled"]
    assert found.title == (
        "3 of 3 integration tests disabled, 1 unit test skipped (+3 since 2026-12-01)"
    )
    assert found.status_update.startswith("situation worsened")
    body = found.body
    assert "- 1 by `disabled=_PP_DISABLED`, since 20" in body
    assert ": PP hangs on the stand-in runner (#123)\n  - `gt_pp`" in body
    assert (
        "- 1 by `disabled=True`: Re-enable once reorder is fixed upstream.\n  - `gt_fsdp_tp`"
        in body
    )
    # `or`: disabled; both switches' reasons, as sentences.
    assert (
        "- 1 by `disabled=_PP_DISABLED or _CP_DISABLED`: PP hangs on the stand-in runner "
        "(#123). CP waits on the new loader\n  - `gt_cp`" in body
    )
    # One name a line, under its switch: the report cuts a long list, the JSON keeps it.
    assert "- 1 by `test_skips.py`: flaky on the nightly (#77)\n  - `TestSkips.test_flaky`" in body
    assert "test_gpu" not in body
    # The news by name, first.
    assert body.startswith(
        "Newly off since 2026-12-01: `integration_tests.py::gt_cp`, "
        "`integration_tests.py::gt_fsdp_tp`, `test_skips.py::TestSkips."
        "test_flaky`\n"
    )
    # The coverage of passes counts only what runs: the reorder pass's only entry is off.
    assert "gt_fsdp_tp" not in _enabled_strings_of(fresh_world)


def _enabled_strings_of(world) -> str:
    import ast as ast_

    from scout_tui.analysis.python.experiment_tests import override_definitions

    tree = ast_.parse((world.repo / EXP / "tests" / "integration_tests.py").read_text())
    return " ".join(o.name for o in override_definitions(tree) if not o.disabled)


def test_a_pass_nothing_calls_is_dead_code_not_a_missing_test(fresh_world):

    passes = fresh_world.repo / EXP / "extra_passes.py"
    passes.write_text(
        "def fold_pass(gm, example_inputs):\n    return gm\n\n\n"
        "def shadow_pass(gm, example_inputs):\n    return fold_pass(gm, None)\n"
    )
    commit_all(fresh_world.repo, "passes")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    (dead,) = found["pass_dead"]
    assert dead.items == ["shadow_pass"]  # nothing calls it; fold_pass has a caller
    assert dead.section is Section.OPPORTUNITIES
    assert dead.suggested_fix == "Delete it, or wire it in where it was meant to run."
    assert sorted(found["pass_untested"][0].items) == ["bucket_pass", "fold_pass"]


def test_a_flag_that_moved_names_its_new_home_and_the_commit(fresh_world):

    repo = fresh_world.repo
    configs = repo / "torchtitan/config/configs.py"
    # CompileConfig.backend moves to another section; the README still names it where it
    # was (`--compile.backend=aot_eager`).
    text = configs.read_text().replace('    backend: str = "inductor"\n', "")
    text = text.replace(
        "class ActivationCheckpointConfig:\n",
        'class ActivationCheckpointConfig:\n    backend: str = "inductor"\n',
    )
    configs.write_text(text)
    commit_all(repo, "Move backend into activation checkpointing")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))
    [readme] = [f for f in found["doc_inaccuracy"] if f.files[0].path.endswith("README.md")]
    [line] = [i for i in readme.items if "backend" in i]
    assert line.startswith(
        "flag `--compile.backend` is not a config field; it is "
        "`--activation_checkpoint.backend` now, since `"
    )
    assert line.endswith("(Move backend into activation checkpointing)")
    # Each line with a problem is among the finding's files, not the first one alone.
    named = sorted({int(n) for n in re.findall(r"^- line (\d+):", readme.body, re.M)})
    assert len(named) > 1 and [ref.line for ref in readme.files] == named


def test_a_flag_whose_field_was_removed_says_removed_and_by_which_commit(fresh_world):
    """True case: `CompileConfig.backend` is deleted, nothing in its place: the README's
    `--compile.backend` was removed (commit, date, summary), and the fix is to drop it —
    no "did you mean"."""
    repo = fresh_world.repo
    configs = repo / "torchtitan/config/configs.py"
    configs.write_text(configs.read_text().replace('    backend: str = "inductor"\n', ""))
    sha = commit_all(repo, "Drop the backend option")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))
    [readme] = [f for f in found["doc_inaccuracy"] if f.files[0].path.endswith("README.md")]
    [line] = [i for i in readme.items if "backend" in i]
    assert line == (
        f"flag `--compile.backend` is not a config field: it was removed in `{sha[:10]}` "
        f"({TODAY.isoformat()}, Drop the backend option), with nothing in its place"
    )
    assert "did you mean" not in readme.body
    assert "drop `--compile.backend` (removed upstream)" in readme.suggested_fix


def test_a_flag_whose_field_was_renamed_still_says_did_you_mean(fresh_world):
    """Near-miss: `backend` becomes `backends` in one commit: a rename, so "did you mean
    `--compile.backends`?" with the commit, and the fix names the new flag."""
    repo = fresh_world.repo
    configs = repo / "torchtitan/config/configs.py"
    configs.write_text(configs.read_text().replace("    backend: str", "    backends: str"))
    sha = commit_all(repo, "Rename backend")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))
    [readme] = [f for f in found["doc_inaccuracy"] if f.files[0].path.endswith("README.md")]
    [line] = [i for i in readme.items if "backend" in i]
    assert line == (
        "flag `--compile.backend` is not a config field; did you mean `--compile.backends`? "
        f"(renamed in `{sha[:10]}` ({TODAY.isoformat()}, Rename backend))"
    )
    assert "use `--compile.backends` for `--compile.backend`" in readme.suggested_fix


def test_patches_that_still_fit_are_one_all_clear_line(fresh_world):
    """Two patches of upstream that fit (one wraps the original, one matches its signature)
    are one All Clear line, not a line each every day."""

    (fresh_world.repo / EXP / "patches.py").write_text(
        "from torchtitan.models.common.moe import MoE\n"
        "from torchtitan.trainer import Trainer\n\n\n"
        "def _forward(self, x):\n    return x\n\n\n"
        "MoE.forward = _forward\n"
        "_original = Trainer.post_dataloading_process\n\n\n"
        "def _wrapped(self, *args, **kwargs):\n    return _original(self, *args, **kwargs)\n\n\n"
        "Trainer.post_dataloading_process = _wrapped\n"
    )
    commit_all(fresh_world.repo, "patches")
    found = by_kind(run_collector(fresh_world, "freshness", TODAY))
    (stable,) = found["monkey_patch_stable"]
    assert stable.title == "2 monkey-patches of upstream still fit"
    assert stable.items == ["MoE.forward", "Trainer.post_dataloading_process"]
    assert stable.section is Section.ALL_CLEAR
    assert len(found["stale_monkey_patch"]) == 1  # the demo's stale FlexAttention patch


def test_a_value_the_converter_forces_against_a_registered_configs_base(tmp_path):
    """The converter forces spmd_backend; one registered config builds on a base that pins
    it otherwise: broken by construction, an Action Item naming the three places. A config
    whose base agrees, or that sets it back after converting, is fine."""
    import git

    from scout_tui.config.profile import load_config
    from scout_tui.pipeline.day import RunOptions, run

    files = {
        "torchtitan/models/llama3/config_registry.py": (
            "from torchtitan.config import ParallelismConfig, TrainerConfig\n\n\n"
            "def llama3_dist_gemm():\n"
            '    return TrainerConfig(parallelism=ParallelismConfig(spmd_backend="spmd_types"),'
            ' tp_gemm_backend="dist_gemm")\n'
            "\n\ndef llama3_debug():\n    return TrainerConfig(parallelism=ParallelismConfig())\n"
            "\n\ndef llama3_pinned():\n"
            '    return TrainerConfig(parallelism=ParallelismConfig(spmd_backend="spmd_types"))\n'
        ),
        # What dist_gemm configs run through: it refuses any other backend.
        "torchtitan/models/common/dist_gemm.py": (
            'def validate(backend):\n    if backend != "spmd_types":\n'
            "        raise ValueError(f\"needs parallelism.spmd_backend='spmd_types', not "
            '{backend}")\n'
        ),
        f"{EXP}/configs.py": (
            "from dataclasses import replace\n\n\n"
            "def to_graph_trainer_config(base_config, registry):\n    d = {}\n"
            "    # partial_dtensor until CP works with spmd_types\n"
            '    d["parallelism"] = replace(base_config.parallelism, '
            'spmd_backend="partial_dtensor")\n    return d\n'
        ),
        f"{EXP}/llama3/config_registry.py": (
            "from torchtitan.experiments.graph_trainer.configs import to_graph_trainer_config\n"
            "from torchtitan.models.llama3.config_registry import llama3_debug, "
            "llama3_dist_gemm, llama3_pinned\n\n\n"
            "def gt_dist_gemm():\n    return to_graph_trainer_config(llama3_dist_gemm(), None)\n"
            "\n\ndef gt_debug():\n    return to_graph_trainer_config(llama3_debug(), None)\n\n\n"
            "def gt_pinned():\n    return to_graph_trainer_config(llama3_pinned(), None)\n\n\n"
            "def gt_dist_gemm_fixed():\n"
            "    config = to_graph_trainer_config(llama3_dist_gemm(), None)\n"
            '    config.parallelism.spmd_backend = "spmd_types"\n    return config\n'
        ),
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    repo = git.Repo.init(tmp_path)
    repo.index.add(list(files))
    repo.index.commit("init", author=git.Actor("a", "a@b"), committer=git.Actor("a", "a@b"))
    result = run(
        RunOptions(repo=tmp_path, config=load_config(None), offline=True, only=["freshness"])
    )
    (conflict,) = by_kind(result)["config_conflict"]
    assert conflict.title == (
        "`gt_dist_gemm` cannot run as configured: `to_graph_trainer_config` forces "
        "`parallelism.spmd_backend` = `'partial_dtensor'`, its base sets `'spmd_types'`"
    )
    assert [(f.path, f.line) for f in conflict.files] == [
        (f"{EXP}/llama3/config_registry.py", 5),
        ("torchtitan/models/llama3/config_registry.py", 5),
        (f"{EXP}/configs.py", 7),
    ]
    assert conflict.section is Section.ACTION_ITEMS and conflict.priority.value == "P1"
    assert (
        "`torchtitan/models/common/dist_gemm.py:2` rejects anything but `'spmd_types'`"
        in conflict.body
    )
    # ... and since when the converter forces it: the commit that wrote that line.
    init = repo.head.commit.hexsha
    assert f"The converter forces it since `{init[:10]}` (init)." in conflict.body
    # Pinned by its base, but nothing on its path refuses the forced value: it runs, not as
    # written. An FYI to confirm, not "cannot run".
    (mismatch,) = by_kind(result)["config_mismatch"]
    assert mismatch.title == (
        "`gt_pinned` runs with `parallelism.spmd_backend` = "
        "`'partial_dtensor'`, not the `'spmd_types'` its base sets"
    )
    assert mismatch.section is Section.FYI
    # Once an enabled integration test runs it, it is known to work: nothing to say.
    integration = tmp_path / EXP / "tests" / "integration_tests.py"
    integration.parent.mkdir(parents=True)
    integration.write_text('OverrideDefinitions([["--config gt_pinned"]], "pinned", "pinned")\n')
    repo.index.add([str(integration.relative_to(tmp_path))])
    repo.index.commit(
        "run gt_pinned", author=git.Actor("a", "a@b"), committer=git.Actor("a", "a@b")
    )
    result = run(
        RunOptions(repo=tmp_path, config=load_config(None), offline=True, only=["freshness"])
    )
    assert "config_mismatch" not in by_kind(result)
    assert len(by_kind(result)["config_conflict"]) == 1  # the broken one stays


def test_overrides_the_converter_explains_are_one_fyi_line(fresh_world):

    configs = fresh_world.repo / EXP / "configs.py"
    # The demo's converter explains its AC rebuild; a docstring now says why it drops the
    # other two fields.
    text = configs.read_text().replace(
        "-> GraphTrainerConfig:\n",
        '-> GraphTrainerConfig:\n    """Drops gradient_accumulation_steps and seed: the graph '
        'trainer sets its own."""\n',
        1,
    )
    configs.write_text(text)
    commit_all(fresh_world.repo, "explain")
    found = by_kind(run_collector(fresh_world, "freshness", TODAY))
    assert "config_drift" not in found
    (overrides,) = found["config_overrides"]
    assert overrides.section is Section.FYI
    assert overrides.title == (
        "`to_graph_trainer_config` overrides 3 fields of the base "
        "config, each explained in the converter"
    )
    # A field the converter starts to override inside the window is the news of the line.
    text = configs.read_text().replace(
        "        steps=base.steps,\n",
        "        # Short runs: the graph trainer checks compile, not convergence.\n"
        "        steps=10,\n",
    )
    assert text != configs.read_text()
    configs.write_text(text)
    commit_all(fresh_world.repo, "short runs")
    (overrides,) = by_kind(run_collector(fresh_world, "freshness", TODAY))["config_overrides"]
    assert overrides.title.endswith("each explained in the converter: `steps` new since 2026-12-01")
    assert (
        "- `steps`: overridden (explained in the converter) — new since 2026-12-01"
        in overrides.body
    )


def test_a_ci_step_whose_tests_are_all_skipped_runs_nothing(fresh_world):

    repo = fresh_world.repo
    tests = repo / EXP / "tests" / "test_flaky_only.py"
    tests.write_text(
        "import unittest\n\n\n@unittest.skip('flaky on the nightly (#77)')\n"
        "class TestFlaky(unittest.TestCase):\n    def test_a(self): ...\n\n"
        "    def test_b(self): ...\n\n\nclass TestHalf(unittest.TestCase):\n"
        "    @unittest.skip('broken')\n    def test_c(self): ...\n"
    )
    workflow = repo / ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
    workflow.write_text(
        workflow.read_text().replace(
            "          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v\n",
            "          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v\n"
            "          pytest torchtitan/experiments/graph_trainer/tests/test_flaky_only.py -v\n",
        )
    )
    commit_all(repo, "flaky")
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    (nothing,) = found["ci_step_runs_nothing"]
    assert nothing.title == (
        "A CI command runs zero tests since 2026-12-01: what it selects is all skipped or disabled"
    )
    assert nothing.items == [
        "pytest torchtitan/experiments/graph_trainer/tests/test_flaky_only.py -v"
    ]
    assert "selects 3 test(s), each skipped without a condition" in nothing.body
    assert nothing.priority.value == "P1"
    assert "ci_steps_idle" not in found


def test_a_ci_command_idle_because_its_tests_were_switched_off_is_their_news(fresh_world):
    """The workflow's command is the same as at the baseline; the tests it selects were
    skipped since: that is the switched-off tests' news (`tests_newly_disabled`), not a
    second P1 about the command (NEAR-MISS of the test above, where the command is new)."""
    repo = fresh_world.repo
    tests = repo / EXP / "tests" / "test_soon_off.py"
    tests.write_text(
        "import unittest\n\n\nclass TestSoon(unittest.TestCase):\n    def test_a(self): ...\n"
    )
    workflow = repo / ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
    workflow.write_text(
        workflow.read_text().replace(
            "          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v\n",
            "          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v\n"
            "          pytest torchtitan/experiments/graph_trainer/tests/test_soon_off.py -v\n",
        )
    )
    commit_all(repo, "TestSoon in CI", "2026-10-01T12:00:00+00:00")  # before the window
    tests.write_text(
        tests.read_text().replace(
            "class TestSoon", "@unittest.skip('broken upstream')\nclass TestSoon"
        )
    )
    commit_all(repo, "skip TestSoon")
    assert "ci_step_runs_nothing" not in by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    newly = by_kind(run_collector(fresh_world, "coverage", TODAY))["tests_newly_disabled"]
    assert [f.items for f in newly] == [["test_soon_off.py::TestSoon"]]


def test_a_suite_step_whose_entries_are_all_disabled_and_idle_steps_that_stay(fresh_world):
    """`python -m …integration_tests --test_suite X`, every entry of X disabled: idle. Idle
    since before the baseline, it is one standing P2 line, not a new P1 every day."""
    from scout_tui.model import fingerprint

    repo = fresh_world.repo
    integration = repo / EXP / "tests" / "integration_tests.py"
    integration.write_text(
        integration.read_text()
        + (
            "\n\ndef build_pp_suite():\n    return _pp_tests()\n\n\n"
            'def _pp_tests():\n    return [OverrideDefinitions([["--pp"]], "PP only", '
            '"pp_only", disabled=_PP_DISABLED)]\n\n\n'
            '_TEST_SUITES_FUNCTION = {"all": build_graph_trainer_test_list, '
            '"pp": build_pp_suite}\n'
        )
    )
    workflow = repo / ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
    step = (
        "python -m torchtitan.experiments.graph_trainer.tests.integration_tests "
        "--test_suite pp --ngpu 8"
    )
    workflow.write_text(
        workflow.read_text().replace(
            "          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v\n",
            "          pytest torchtitan/experiments/graph_trainer/tests/test_passes.py -v\n"
            f"          {step}\n",
        )
    )
    commit_all(repo, "a PP suite in CI", "2026-10-01T12:00:00+00:00")  # before the window
    found = by_kind(run_collector(fresh_world, "ci_tests", TODAY))
    assert "ci_step_runs_nothing" not in found
    (idle,) = found["ci_steps_idle"]
    # No date in the title (the window's start moves daily; the title is a board card's).
    assert idle.title == (
        "A CI command has long run zero tests: what it selects is all skipped or disabled"
    )
    assert "Each passes having run nothing, as it did before 2026-12-01." in idle.body
    assert idle.section is Section.FYI and idle.items == [step]  # known and standing
    assert "runs suite `pp`, whose 1 entry is all disabled (`pp_only`)" in idle.body
    workflow_path = ".github/workflows/integration_test_8gpu_graph_trainer.yaml"
    assert fingerprint("ci_step_runs_nothing", workflow_path, step) in idle.aliases
    # Another experiment of the repository is not told about graph_trainer's idle suite.
    from scout_tui.config.profile import load_config
    from scout_tui.pipeline.day import RunOptions, run

    (repo / "torchtitan/experiments/other").mkdir()
    (repo / "torchtitan/experiments/other/__init__.py").write_text("")
    commit_all(repo, "another experiment", "2026-10-02T12:00:00+00:00")
    other = fresh_world.base / "other.toml"
    other.write_text(
        fresh_world.config.read_text().replace(
            "[project]\n",
            '[project]\nexperiment = "torchtitan/experiments/other"\ntracking_issue = 5\n',
        )
    )
    result = run(
        RunOptions(
            repo=repo, config=load_config(other), as_of=TODAY, offline=True, only=["ci_tests"]
        )
    )
    assert "ci_steps_idle" not in by_kind(result)


def test_a_script_command_that_only_runs_as_a_module(fresh_world):
    """`python path/file.py` of a file importing another root package (or relatively)
    fails where `python -m` works; a self-contained script is fine."""
    repo = fresh_world.repo
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "__init__.py").write_text("")
    (repo / "tests" / "helpers.py").write_text("def run():\n    return 0\n")
    tools = repo / EXP / "tools"
    tools.mkdir()
    (tools / "__init__.py").write_text("")
    (tools / "runner.py").write_text("from tests.helpers import run\n\nrun()\n")
    (tools / "relative.py").write_text("from . import runner\n")
    (tools / "plain.py").write_text("import sys\n\nprint(sys.argv)\n")
    readme = repo / EXP / "README.md"
    readme.write_text(
        readme.read_text() + "\n```bash\n"
        f"python {EXP}/tools/runner.py --ngpu 8\n"
        f"python {EXP}/tools/relative.py\n"
        f"python3 {EXP}/tools/plain.py\n```\n"
    )
    commit_all(repo, "tools")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))
    [readme_finding] = [f for f in found["doc_inaccuracy"] if f.files[0].path.endswith("README.md")]
    scripts = [i for i in readme_finding.items if i.startswith("`python")]
    module = EXP.replace("/", ".")
    assert scripts == [
        f"`python {EXP}/tools/runner.py` fails: it imports `tests`, a package of the "
        f"repository's root; run `python -m {module}.tools.runner`",
        f"`python {EXP}/tools/relative.py` fails: it uses relative imports; run "
        f"`python -m {module}.tools.relative`",
    ]


def test_a_model_config_registered_in_the_window_with_no_test_is_its_own_fyi(fresh_world):
    registry = fresh_world.repo / "torchtitan/experiments/graph_trainer/llama3/config_registry.py"
    registry.write_text(
        registry.read_text()
        + '\n\ndef graph_trainer_llama3_8b():\n    return {"dim": 4096}\n'
        + '\n\ndef graph_trainer_llama3_bench():\n    return {"dim": 512}\n'
    )
    script = fresh_world.repo / EXP / "scripts" / "bench.sh"
    script.parent.mkdir()
    script.write_text("./run_train.sh --config graph_trainer_llama3_bench\n")
    commit_all(fresh_world.repo, "llama3 8b config; a benchmark config and its script")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    (new,) = found["model_config_untested"]
    assert new.items == ["graph_trainer_llama3_8b"]
    assert new.section is Section.FYI and new.priority is None  # the shipped rule
    assert new.title == "1 model config registered since 2026-12-01 that no test uses"
    # A config a script of the experiment runs is a benchmark's, on purpose: said, not listed.
    assert "Left out, run by the experiment's scripts: `graph_trainer_llama3_bench`." in new.body
    (older,) = found["model_configs_untested"]
    assert older.items == ["graph_trainer_llama3_70b"] and older.section is Section.FYI


def test_a_config_deleted_before_the_window_and_brought_back_is_not_new(fresh_world):
    """Removed before the baseline, restored inside the window: an old config that came
    back, counted with the others; a config defined for the first time is the task."""
    registry = fresh_world.repo / "torchtitan/experiments/graph_trainer/llama3/config_registry.py"
    text = registry.read_text()
    old = "\n\ndef graph_trainer_llama3_70b():"
    assert old in text
    start = text.index(old)
    end = text.find("\n\ndef ", start + 1)
    restored = text[start : end if end != -1 else len(text)]
    registry.write_text(text.replace(restored, ""))
    commit_all(fresh_world.repo, "drop the 70b config", when="2026-11-25T12:00:00+00:00")
    registry.write_text(
        registry.read_text() + restored + "\n\ndef graph_trainer_llama3_8b():\n    return {}\n"
    )
    commit_all(fresh_world.repo, "bring the 70b config back; an 8b config")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY, priors=False))
    (new,) = found["model_config_untested"]
    assert new.items == ["graph_trainer_llama3_8b"]
    (older,) = found["model_configs_untested"]
    assert older.items == ["graph_trainer_llama3_70b"]


def test_a_pass_chosen_by_an_options_default_and_one_only_disabled_tests_select():
    from scout_tui.analysis.python.definitions import (
        branch_values,
        option_defaults,
        selected_by_default,
    )

    source = """
from dataclasses import dataclass, field


@dataclass
class CompileConfig:
    inductor_compilation: str = "regional"
    jit_pass: str = ""
    passes: list[str] = field(default_factory=list)


def passes(config):
    chosen = []
    names = getattr(config, "passes", [])
    if "full_inductor_compilation" not in names:
        chosen.append(validate_pass)
    if "cudagraph" in names:
        chosen.append(cudagraph_pass)
    if config.inductor_compilation == "full":
        chosen.append(full_pass)
    elif config.inductor_compilation == "regional":
        chosen.append(regional_pass)
        if config.extra:
            chosen.append(extra_pass)
    if config.jit_pass == "auto_bucketing":
        chosen.append(bucketing_pass)
    for extra in config.extras:
        chosen.append(loop_pass)
    chosen.append(always_pass)
    if hasattr(config, "graph"):
        chosen.append(data_pass)
    return chosen
"""
    modules = {"exp/passes.py": ast.parse(source)}
    defaults = option_defaults(modules)
    assert defaults == {"inductor_compilation": "'regional'", "jit_pass": "''", "passes": "[]"}
    # `"x" not in names` where `names` is the option `passes`, empty by default: taken.
    assert selected_by_default(modules, "validate_pass", defaults)[:2] == ("passes", "[]")
    assert selected_by_default(modules, "cudagraph_pass", defaults) is None
    assert selected_by_default(modules, "regional_pass", defaults) == (
        "inductor_compilation",
        "'regional'",
        "exp/passes.py:21",
    )
    assert selected_by_default(modules, "full_pass", defaults) is None  # not the default
    assert selected_by_default(modules, "extra_pass", defaults) is None  # an unknown `if`
    assert selected_by_default(modules, "bucketing_pass", defaults) is None
    assert branch_values(modules, "bucketing_pass") == {"auto_bucketing"}
    # Used whatever the options: runs whenever `passes` does. A loop may run zero times.
    assert selected_by_default(modules, "always_pass", defaults) == (
        "",
        "passes",
        "exp/passes.py:29",
    )
    assert selected_by_default(modules, "loop_pass", defaults) is None
    # Behind a test of the data at hand (`hasattr`), not of an option: it runs as the data
    # comes in default runs, like `always_pass` (an option's unknown `if` is not: extra_pass).
    assert selected_by_default(modules, "data_pass", defaults) == ("", "passes", "exp/passes.py:31")


def test_a_pass_only_a_mode_with_disabled_tests_reaches_does_not_run_by_default(fresh_world):
    repo = fresh_world.repo
    (repo / EXP / "modes.py").write_text(
        "from dataclasses import dataclass\n\n\n"
        "@dataclass\nclass PipelineConfig:\n    pipeline: str = 'eager'\n\n\n"
        "def aot_pipeline(gm):\n    shared_pass(gm, None)\n    return aot_only_pass(gm, None)\n\n\n"
        "def eager_pipeline(gm):\n    return eager_pass(gm, None)\n\n\n"
        "def build(config, gm):\n"
        "    if config.pipeline == 'ahead':\n        return aot_pipeline(gm)\n"
        "    return eager_pipeline(gm)\n"
    )
    # Also chosen on the default's branch in a later module: that use runs by default.
    (repo / EXP / "zz_build.py").write_text(
        "def pipeline(config):\n    if config.pipeline == 'eager':\n        return [shared_pass]\n"
    )
    passes = repo / EXP / "passes.py"
    passes.write_text(
        passes.read_text()
        + "\n\ndef shared_pass(gm, example_inputs):\n    return gm\n"
        + "\n\ndef aot_only_pass(gm, example_inputs):\n    return gm\n"
        + "\n\ndef eager_pass(gm, example_inputs):\n    return gm\n"
    )
    tests = repo / EXP / "tests/integration_tests.py"
    tests.write_text(
        tests.read_text().replace(
            '"--parallelism.pipeline_parallel_degree 2"',
            '"--parallelism.pipeline_parallel_degree 2", "--pipeline ahead"',
        )
    )
    commit_all(repo, "an ahead-of-time pipeline, tested only by a disabled entry")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    disabled = [i for f in found.get("pass_tests_disabled", []) for i in f.items]
    assert "aot_only_pass" in disabled  # reached only through a mode whose tests are off
    untested = [i for f in found.get("pass_untested", []) for i in f.items]
    assert "eager_pass" not in untested + disabled  # the default pipeline runs it
    only_integration = [i for f in found.get("pass_integration_only", []) for i in f.items]
    assert "shared_pass" not in untested + disabled + only_integration


@pytest.mark.parametrize("value, tested", [("full", True), ("regional", False)])
def test_a_pass_an_enabled_test_selects_by_an_options_value_is_tested(fresh_world, value, tested):
    """`compile_passes` appends `whole_graph_pass` when `mode = config.compile.inductor` is
    "full"; the enabled FSDP+TP entry runs `--compile.inductor <value>`: "full" reaches it
    (exercised by an integration test, not untested), "regional" does not (near-miss)."""
    repo = fresh_world.repo
    (repo / EXP / "inductor_passes.py").write_text(
        "def whole_graph_pass(gm, example_inputs):\n    return gm\n\n\n"
        "def compile_passes(config):\n"
        "    passes = []\n    mode = config.compile.inductor\n"
        "    if mode == 'full':\n        passes.append(whole_graph_pass)\n"
        "    return passes\n"
    )
    tests = repo / EXP / "tests/integration_tests.py"
    text = tests.read_text()
    assert '"--compile.passes reorder"' in text
    tests.write_text(
        text.replace(
            '"--compile.passes reorder"',
            f'"--compile.passes reorder", "--compile.inductor {value}"',
        )
    )
    commit_all(repo, "a whole-graph inductor pass, chosen by an option's value")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    untested = [i for f in found.get("pass_untested", []) for i in f.items]
    only_integration = [i for f in found.get("pass_integration_only", []) for i in f.items]
    assert ("whole_graph_pass" in only_integration) is tested
    assert ("whole_graph_pass" in untested) is not tested


def test_a_command_line_sets_an_option_to_a_value():
    from scout_tui.collect.coverage import sets_option

    assert sets_option('"--compile.inductor full"', "inductor", "full")
    assert sets_option("--job.compile.inductor='full'", "inductor", "full")
    assert not sets_option('"--compile.inductor full_graph"', "inductor", "full")
    assert not sets_option('"--compile.inductor_mode full"', "inductor", "full")


def test_a_pass_moved_out_of_the_module_whose_registry_selects_it_keeps_its_key(fresh_world):
    """`reorder_pass` moves to `reorder_passes.py`; `passes.py` imports it and its registry
    still selects it as "reorder", which the FSDP+TP entry runs: exercised by an integration
    test, as before the move (true case). `lonely_pass`, new beside it and called but in no
    registry and no test, is untested (near-miss)."""
    repo = fresh_world.repo
    before = by_kind(run_collector(fresh_world, "coverage", TODAY))
    only = [i for f in before.get("pass_integration_only", []) for i in f.items]
    assert "reorder_pass" in only
    passes = repo / EXP / "passes.py"
    text = passes.read_text()
    start = text.index("def reorder_pass(")
    end = text.index("def bucket_pass(")
    (repo / EXP / "reorder_passes.py").write_text(
        text[start:end] + "def lonely_pass(gm, example_inputs):\n    return gm\n"
    )
    passes.write_text(
        "from .reorder_passes import lonely_pass, reorder_pass\n"
        + text[:start]
        + text[end:]
        + "\n\ndef apply_lonely(gm):\n    return lonely_pass(gm, None)\n"
    )
    commit_all(repo, "move reorder_pass into its own module")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    only = [i for f in found.get("pass_integration_only", []) for i in f.items]
    untested = [i for f in found.get("pass_untested", []) for i in f.items]
    assert "reorder_pass" in only and "reorder_pass" not in untested
    assert only.count("reorder_pass") == 1  # once, where it is defined
    assert "lonely_pass" in untested


def test_a_function_only_a_mode_no_default_takes_calls_is_off_the_default_path():
    from scout_tui.analysis.python.definitions import (
        branch_values,
        off_the_default_path,
        option_defaults,
    )

    source = """
from dataclasses import dataclass


@dataclass
class CompileConfig:
    mode: str = "jit"


def aot_passes(graph):
    return always_pass(graph)


def jit_passes(graph):
    return other_pass(graph)


def compile(config, graph):
    if config.mode == "aot":
        return aot_passes(graph)
    return jit_passes(graph)


def anywhere(config, graph):
    if config.unknown:
        return jit_passes(graph)
"""
    modules = {"exp/compile.py": ast.parse(source)}
    defaults = option_defaults(modules)
    assert off_the_default_path(modules, "aot_passes", defaults)  # only mode "aot" calls it
    assert branch_values(modules, "aot_passes") == {"aot"}
    # Near misses: called on the default path; called where scout cannot settle the branch.
    assert not off_the_default_path(modules, "jit_passes", defaults)
    assert not off_the_default_path(modules, "nothing_uses_this", defaults)


def test_passes_reached_by_default_or_only_by_disabled_tests_on_a_repository(fresh_world):
    """bucket_pass becomes the default branch of an option: every run that leaves the
    option alone runs it, unit tests of the default pipeline included — no gap. fuse_pass is
    selected by a word only a disabled integration entry passes: FYI, not an Action Item."""
    repo = fresh_world.repo
    passes = repo / f"{EXP}/passes.py"
    passes.write_text(
        passes.read_text() + "\n\ndef fuse_pass(gm, example_inputs):\n    return gm\n"
    )
    (repo / f"{EXP}/pass_choice.py").write_text(
        "from dataclasses import dataclass\n\n"
        "from torchtitan.experiments.graph_trainer.passes import bucket_pass, fuse_pass\n\n\n"
        '@dataclass\nclass PassChoice:\n    bucketing: str = "auto"\n    extra: str = ""\n\n\n'
        'def choose(choice):\n    if choice.bucketing == "auto":\n        return [bucket_pass]\n'
        '    if choice.extra == "fuse_everywhere":\n        return [fuse_pass]\n    return []\n'
    )
    integration = repo / f"{EXP}/tests/integration_tests.py"
    text = integration.read_text()
    assert "    return [\n" in text
    integration.write_text(
        text.replace(
            "    return [\n",
            "    return [\n"
            '        OverrideDefinitions([["--choice.extra fuse_everywhere"]], "fuse", "fuse",'
            " disabled=True),\n",
        )
    )
    commit_all(repo, "choose passes by option")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    gaps = [
        i
        for kind in ("pass_untested", "pass_integration_only", "pass_tests_disabled")
        for f in found.get(kind, [])
        for i in f.items
    ]
    assert "bucket_pass" not in gaps and "reorder_pass" in gaps  # the others are still said
    (disabled,) = found["pass_tests_disabled"]
    assert disabled.items == ["fuse_pass"] and disabled.section is Section.FYI


def test_entries_built_by_a_comprehension_over_a_table_are_one_per_row():
    """`[OverrideDefinitions(..., disabled=disabled) for (mode, variant, disabled) in T]`:
    one entry per row, the f-strings filled in, each row's own switch; an entry with no
    test_name is named by its description."""
    source = """
TABLE = [
    ("regional", "batch", False),
    ("full", "seq", True),
]


def build():
    return [
        *[
            OverrideDefinitions(
                [[f"--compile.inductor_compilation {mode}", "--x"]],
                f"ep overlap {variant}",
                f"ep_overlap_{mode}_{variant}",
                disabled=disabled,
            )
            for (mode, variant, disabled) in TABLE
        ],
        OverrideDefinitions([["--y"]], "jit_described_only", disabled=True),
    ]
"""
    entries = override_definitions(ast.parse(source))
    assert [(e.name, e.disabled) for e in entries] == [
        ("ep_overlap_regional_batch", False),
        ("ep_overlap_full_seq", True),
        ("jit_described_only", True),
    ]
    assert entries[0].strings[:2] == ["--compile.inductor_compilation regional", "--x"]


def test_an_option_or_pass_key_new_since_the_baseline_that_no_doc_mentions(fresh_world):
    """A new registry key and a new Literal value of the experiment's own config: a user can
    select them and no doc says so. The standing ones are not listed again."""
    repo = fresh_world.repo
    passes = repo / EXP / "passes.py"
    passes.write_text(
        passes.read_text().replace(
            '    "reorder": reorder_pass,\n',
            '    "reorder": reorder_pass,\n    "bucket": bucket_pass,\n',
        )
    )
    configs = repo / EXP / "configs.py"
    configs.write_text(
        configs.read_text()
        .replace(
            "    passes: tuple[str, ...] = ()\n",
            '    passes: tuple[str, ...] = ()\n    schedule: Literal["eager", "lazy"] = "eager"\n',
        )
        .replace(
            "from dataclasses import dataclass\n",
            "from dataclasses import dataclass\nfrom typing import Literal\n",
        )
    )
    readme = repo / EXP / "README.md"
    readme.write_text(readme.read_text() + "\nSet `--schedule eager` for the default.\n")
    commit_all(repo, "bucket key, schedule modes")
    (missing,) = by_kind(run_collector(fresh_world, "docs", TODAY))["doc_feature_missing"]
    assert missing.items == ["bucket", "schedule = 'lazy'"]
    assert missing.title == ("2 new options or passes since 2026-12-01 that no doc mentions")
    assert "cse" not in missing.body  # standing, not news


def test_a_docstring_naming_a_pass_that_no_longer_exists(fresh_world):
    """`fold_pass` was defined, then removed; a docstring still names it. A name never
    defined in the history (an example) and one the code still uses are not flagged."""
    repo = fresh_world.repo
    passes = repo / EXP / "passes.py"
    original = passes.read_text()
    passes.write_text(original + "\n\ndef fold_pass(gm, example_inputs):\n    return gm\n")
    commit_all(repo, "fold pass", "2026-10-01T12:00:00+00:00")
    passes.write_text(original + "\n\ndef folding_pass(gm, example_inputs):\n    return gm\n")
    configs = repo / EXP / "configs.py"
    configs.write_text(
        configs.read_text().replace(
            "    passes: tuple[str, ...] = ()\n",
            "    passes: tuple[str, ...] = ()\n"
            '    """Run ``fold_pass`` after ``cse_pass``; see also '
            '``my_pass`` in the docs."""\n',
        )
    )
    sha = commit_all(repo, "drop fold_pass; document the passes")
    (stale,) = by_kind(run_collector(fresh_world, "docs", TODAY))["doc_stale_name"]
    assert stale.title == "A docstring or comment names a pass that no longer exists"
    assert stale.items == ["configs.py: fold_pass"]
    assert f"names `fold_pass`, removed in `{sha[:10]}` (drop fold_pass" in stale.body
    assert "(it became `folding_pass`?)" in stale.body  # one pass out, one in: a rename
    assert stale.section is Section.DOCS


def test_a_counted_claim_against_the_values_the_flag_allows(fresh_world):
    """ "three modes via `--compile.mode`" where the option allows two: said with the values;
    "two modes" is right and says nothing."""
    readme = fresh_world.repo / EXP / "README.md"
    readme.write_text(
        readme.read_text() + "\nThe trainer supports three compilation modes,\n"
        "chosen with `--compile.mode`.\n\nIt has two modes of AC via "
        "`--compile.mode` too.\n"
    )
    commit_all(fresh_world.repo, "count the modes")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))["doc_inaccuracy"]
    (readme_finding,) = [f for f in found if f.files[0].path.endswith("README.md")]
    counted = [i for i in readme_finding.items if i.startswith("says")]
    assert counted == [
        "says 'three compilation modes', but `--compile.mode` allows 2: `jit`, `aot`"
    ]


@pytest.mark.parametrize(
    "sentence, said",
    [
        ("In addition to the default `jit` mode, two legacy modes exist", None),
        ("Besides `aot`, three modes exist", "allows 2 besides `aot`: `jit`, `eager`"),
    ],
)
def test_a_counted_claim_counts_apart_what_it_says_it_adds_to(fresh_world, sentence, said):
    """`--compile.mode` allows `jit`, `aot`, `eager`. "In addition to the default `jit`, two
    legacy modes" counts the values other than `jit`: right (true case); "besides `aot`,
    three" is wrong (near-miss)."""
    repo = fresh_world.repo
    configs = next(
        p for p in repo.rglob("*.py") if 'Literal["jit", "aot"] = "jit"' in p.read_text()
    )
    configs.write_text(
        configs.read_text().replace('Literal["jit", "aot"]', 'Literal["jit", "aot", "eager"]')
    )
    readme = repo / EXP / "README.md"
    readme.write_text(readme.read_text() + f"\n{sentence} (`--compile.mode aot`).\n")
    commit_all(repo, "a third mode; count the modes apart from one")
    found = by_kind(run_collector(fresh_world, "docs", TODAY)).get("doc_inaccuracy", [])
    counted = [i for f in found for i in f.items if i.startswith("says")]
    if said is None:
        assert counted == []
    else:
        (claim,) = counted
        assert claim.endswith(said)


def test_core_integration_files_that_moved_or_hold_nothing_are_configuration_warnings(
    fresh_world,
):
    repo = fresh_world.repo
    (repo / "tests/integration_tests/h100.py").write_text("# the entries moved to models.py\n")
    commit_all(repo, "h100 entries moved")
    config = fresh_world.config
    config.write_text(
        config.read_text() + "\n[coverage]\ncore_integration_tests = ["
        '"tests/integration_tests/features.py", "tests/integration_tests/h100.py",'
        ' "tests/integration_tests/flux.py"]\n'
    )
    result = run_collector(fresh_world, "coverage", TODAY)
    said = {w.subject.rsplit(" ", 1)[-1]: w.message for w in result.config_warnings}
    assert "holds no integration entries" in said["tests/integration_tests/h100.py"]
    assert said["tests/integration_tests/flux.py"].endswith(
        "tests/integration_tests/flux.py does not exist, and never did in this history."
    )
    assert not any(f.kind == "config_warning" for f in result.findings)  # never findings


def test_a_few_lines_more_are_no_new_untested_code(fresh_world):
    """A file three lines longer is not "new code"; one twenty lines longer, untested, is."""
    repo = fresh_world.repo
    simple = repo / EXP / "simple_fsdp.py"
    simple.write_text(simple.read_text() + "\n\nLIMIT = 3\n")
    commit_all(repo, "a constant")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    assert f"{EXP}/simple_fsdp.py" not in found["new_code_untested"][0].items
    simple.write_text(simple.read_text() + "".join(f"\nX{n} = {n}\n" for n in range(12)))
    commit_all(repo, "a table", f"{TODAY.isoformat()}T21:00:00+00:00")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    assert f"{EXP}/simple_fsdp.py" in found["new_code_untested"][0].items
    # Where the line is drawn is the team's: `[thresholds] new_code_lines`.
    config = fresh_world.config
    config.write_text(config.read_text() + "\n[thresholds]\nnew_code_lines = 40\n")
    found = by_kind(run_collector(fresh_world, "coverage", TODAY))
    assert f"{EXP}/simple_fsdp.py" not in found["new_code_untested"][0].items
    assert f"{EXP}/simple_fsdp.py" not in found["new_code_untested"][0].body


def test_a_file_deleted_before_the_window_and_brought_back_is_no_new_code(fresh_world):
    repo = fresh_world.repo
    simple = repo / EXP / "simple_fsdp.py"
    text = simple.read_text()
    simple.unlink()
    commit_all(repo, "drop simple_fsdp", when="2026-11-25T12:00:00+00:00")
    simple.write_text(text)
    fresh = repo / EXP / "fresh_module.py"
    fresh.write_text("".join(f"X{n} = {n}\n" for n in range(30)))
    commit_all(repo, "bring simple_fsdp back; a new module")
    [found] = by_kind(run_collector(fresh_world, "coverage", TODAY, priors=False))[
        "new_code_untested"
    ]
    assert f"{EXP}/fresh_module.py" in found.items
    assert f"{EXP}/simple_fsdp.py" not in found.items


def test_code_moved_into_a_new_file_is_no_new_code(fresh_world):
    """Two functions move from `big_module.py` into a new `moved.py` (true case: not new
    code); `fresh.py` brings functions nobody had (near-miss: new and untested); `reexported.py`
    is new, and a test names its function through a re-export (touched by a test);
    `landed.py` lands in one commit with a test file (it came with its tests);
    `instrumented.py` lands with a change to a helper of the tests only (near-miss)."""
    repo = fresh_world.repo
    functions = "".join(
        f"def helper_{n}(x):\n    y = x + {n}\n    z = y * 2\n    return z\n\n\n" for n in range(6)
    )
    (repo / EXP / "big_module.py").write_text("import os\n\n\n" + functions)
    commit_all(repo, "a big module", when="2026-11-25T12:00:00+00:00")
    (repo / EXP / "tests" / "test_shared.py").write_text(
        "from torchtitan.experiments.graph_trainer.big_module import shared_3\n"
    )
    commit_all(repo, "a test of shared_3, ahead of it", when=f"{TODAY.isoformat()}T01:00:00+00:00")
    (repo / EXP / "big_module.py").write_text(
        "import os\n\nfrom .moved import (\n"
        "    helper_0, helper_1, helper_2, helper_3, helper_4, helper_5,\n)\n"
    )
    (repo / EXP / "moved.py").write_text(functions)
    (repo / EXP / "fresh.py").write_text(functions.replace("helper_", "fresh_"))
    (repo / EXP / "reexported.py").write_text(functions.replace("helper_", "shared_"))
    commit_all(repo, "move the helpers out; two new modules", f"{TODAY.isoformat()}T02:00:00+00:00")
    (repo / EXP / "landed.py").write_text(functions.replace("helper_", "landed_"))
    (repo / EXP / "tests" / "test_end_to_end.py").write_text(
        "def test_run():\n    run_training()\n"
    )
    commit_all(repo, "a new module, with an end-to-end test", f"{TODAY.isoformat()}T03:00:00+00:00")
    (repo / EXP / "instrumented.py").write_text(functions.replace("helper_", "probe_"))
    (repo / EXP / "tests" / "_helpers.py").write_text("DEBUG = False\n")
    commit_all(repo, "a new module; a test helper's default")
    [found] = by_kind(run_collector(fresh_world, "coverage", TODAY))["new_code_untested"]
    assert f"{EXP}/instrumented.py" in found.items  # a helper of the tests is no test
    assert f"{EXP}/fresh.py" in found.items
    assert f"{EXP}/moved.py" not in found.items
    assert f"{EXP}/reexported.py" not in found.items
    assert f"{EXP}/landed.py" not in found.items


def test_thresholds_are_checked_and_the_shipped_ones_documented(shipped_config, tmp_path):
    from scout_tui.config.models import ConfigError
    from scout_tui.config.profile import load_config

    assert shipped_config.thresholds.new_code_lines == 20
    assert shipped_config.thresholds.duplicate_similarity == 0.8
    shipped = (Path(__file__).parent.parent / "scout_tui/scout.toml").read_text()
    assert "[thresholds]" in shipped  # each one with its comment
    bad = tmp_path / "scout.toml"
    bad.write_text("[thresholds]\nduplicate_similarity = 1.5\n")
    with pytest.raises(ConfigError, match="duplicate_similarity"):
        load_config(bad)


def test_a_combination_is_covered_by_the_default_run_and_by_a_larger_one(fresh_world):
    """Core runs FSDP alone and TP alone; the experiment runs an entry that sets no degree
    (FSDP over every GPU, the default) and FSDP+TP (which goes through TP's code): no gap for
    either. CP stays a gap (PP has an entry, switched off)."""
    repo = fresh_world.repo
    features = repo / "tests/integration_tests/features.py"
    features.write_text(
        features.read_text().replace(
            "    return [\n",
            "    return [\n"
            '        OverrideDefinitions([["--parallelism.data_parallel_shard_degree 8"]], "FSDP",'
            ' "fsdp"),\n'
            '        OverrideDefinitions([["--parallelism.tensor_parallel_degree 8"]],'
            ' "TP", "tp"),\n',
        )
    )
    integration = repo / EXP / "tests" / "integration_tests.py"
    integration.write_text(
        integration.read_text().replace(
            "    return [\n",
            "    return [\n"
            '        OverrideDefinitions([["--training.steps 10"]], "default", "plain"),\n',
        )
    )
    commit_all(repo, "core FSDP and TP alone; a plain experiment run")
    (gap,) = by_kind(run_collector(fresh_world, "coverage", TODAY))["parallelism_gap"]
    assert gap.items == ["context_parallel"]


@pytest.mark.parametrize("pp_entry", ["switched off", "gone"])
def test_a_combination_with_a_switched_off_entry_is_not_a_gap(fresh_world, pp_entry):
    """The experiment's PP entry is switched off: it means to run PP, and the disabled tests
    say it is off (NEAR-MISS: no gap). With the entry gone, PP is a gap (TRUE)."""
    integration = fresh_world.repo / EXP / "tests" / "integration_tests.py"
    text = integration.read_text()
    entry = (
        "        OverrideDefinitions("
        '[["--parallelism.pipeline_parallel_degree 2"]], "PP", "gt_pp",\n'
        "                            disabled=_PP_DISABLED),\n"
    )
    assert entry in text
    if pp_entry == "gone":
        integration.write_text(text.replace(entry, ""))
        commit_all(fresh_world.repo, "drop the PP entry")
    (gap,) = by_kind(run_collector(fresh_world, "coverage", TODAY))["parallelism_gap"]
    assert ("pipeline_parallel" in gap.items) is (pp_entry == "gone")


def test_a_feature_row_counts_only_a_skip_whose_unsupported_sentence_names_it(fresh_world):
    """One skip says FlexAttention + CP + regional_inductor is unsupported, and in another
    sentence that CUDA graphs are off too; another says Pipeline Parallelism is not supported:
    the PP row is contradicted (true case); the CP row is not (near-miss: a combination is
    unsupported, not CP alone), nor the CUDA Graphs row (near-miss: another sentence)."""
    from scout_tui.analysis.text.docs import contradicts

    assert contradicts("Context Parallelism", "CP is unsupported with FlexAttention")
    assert not contradicts("Context Parallelism", "FlexAttention + CP is unsupported")
    assert not contradicts("Context Parallelism", "CP combined with FP8 is not supported")

    repo = fresh_world.repo
    readme = repo / EXP / "README.md"
    readme.write_text(
        readme.read_text() + "\n| Feature | Works |\n|---|---|\n"
        "|Context Parallelism| ✅ |\n|CUDA Graphs| ✅ |\n|Pipeline Parallelism| ✅ |\n"
    )
    (repo / EXP / "tests" / "test_flex_cp.py").write_text(
        "import unittest\n\n\n"
        '@unittest.skip("FlexAttention + CP + regional_inductor is unsupported: the load '
        "balancer adds a constant. CUDA graphs are also disabled here: CUDA graph replay of "
        'the collectives fails.")\n'
        "class TestFlexCP(unittest.TestCase):\n    def test_cp(self): ...\n\n\n"
        '@unittest.skip("Pipeline Parallelism is not supported by graph_trainer yet")\n'
        "class TestPP(unittest.TestCase):\n    def test_pp(self): ...\n"
    )
    commit_all(repo, "Flex + CP off, with its CUDA graphs; PP off")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))["doc_inaccuracy"]
    (readme_finding,) = [f for f in found if f.files[0].path.endswith("README.md")]
    claims = [i for i in readme_finding.items if "✅" in i]
    assert [c.split(",")[0] for c in claims] == ["says Pipeline Parallelism ✅"]


def test_a_feature_table_saying_supported_while_a_test_says_not_supported(fresh_world):
    """README's feature table says Context Parallelism ✅; the experiment skips its CP test
    because "Context Parallel is not supported by graph_trainer": said, with the test. A row
    no skip reason contradicts says nothing."""
    from scout_tui.analysis.text.docs import contradicts

    assert contradicts("Pipeline Parallelism", "PP is not supported yet")  # its initials
    assert not contradicts("Context Parallelism", "Context Parallel is flaky on A10")

    repo = fresh_world.repo
    readme = repo / EXP / "README.md"
    readme.write_text(
        readme.read_text() + "\n| Feature | Works |\n|---|---|\n"
        "|Context Parallelism| ✅ |\n|Tensor Parallelism| ✅ |\n"
    )
    (repo / EXP / "tests" / "test_cp.py").write_text(
        'import unittest\n\n\n@unittest.skip("Context Parallel is not supported by '
        'graph_trainer")\nclass TestTraceContextParallel(unittest.TestCase):\n'
        "    def test_cp(self): ...\n"
    )
    commit_all(repo, "CP off; the README still says it works")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))["doc_inaccuracy"]
    (readme_finding,) = [f for f in found if f.files[0].path.endswith("README.md")]
    claims = [i for i in readme_finding.items if "✅" in i]
    assert claims == [
        "says Context Parallelism ✅, but `TestTraceContextParallel` is skipped: "
        "'Context Parallel is not supported by graph_trainer'"
    ]


@pytest.mark.parametrize(
    ("why", "tracked"),
    [
        ("Re-enable once https://github.com/o/r/issues/3699 is fixed.", True),
        ("waits on o/r#3699", True),
        # The PR that broke it is not where its re-enable is tracked.
        ("broken by o/r#186754, which removed the helper", False),
        ("upstream regression, re-enable once fixed", False),
    ],
)
def test_a_test_switched_off_with_its_re_enable_tracked_is_awareness(fresh_world, why, tracked):
    """A test switched off whose reason names the issue its re-enable waits on is known and
    tracked: FYI, no fix to suggest. One naming only what broke it, or nothing, stays the
    P2 Action Item asking to track it."""
    integration = fresh_world.repo / EXP / "tests" / "integration_tests.py"
    text = integration.read_text()
    assert '"gt_fsdp_tp"),' in text
    integration.write_text(
        text.replace(
            '"gt_fsdp_tp"),', f'"gt_fsdp_tp",\n            # {why}\n            disabled=True),'
        )
    )
    commit_all(fresh_world.repo, "switch gt_fsdp_tp off")
    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    off = kinds["tests_disabled_tracked" if tracked else "tests_newly_disabled"]
    assert [f.items for f in off] == [["integration_tests.py::gt_fsdp_tp"]]
    other = "tests_newly_disabled" if tracked else "tests_disabled_tracked"
    assert other not in kinds
    if tracked:
        assert off[0].section.value == "fyi" and off[0].priority is None
        assert "re-enable is tracked in `o/r#3699`" in off[0].body and not off[0].suggested_fix
    else:
        assert off[0].priority.value == "P2"


@pytest.mark.parametrize("above", ["    # Re-enable once o/r#3699 is fixed.\n", ""])
def test_a_skip_s_reason_is_also_the_comment_above_its_decorators(fresh_world, above):
    """A unit test skipped with a short message under a comment that names its tracking
    issue is tracked (true case); the same message with no comment is not (near-miss)."""
    tests = fresh_world.repo / EXP / "tests"
    (tests / "test_skips.py").write_text(
        "import unittest\n\n\nclass TestSkips(unittest.TestCase):\n"
        f"{above}"
        '    @unittest.skip("upstream API skew")\n    def test_api(self): ...\n'
    )
    commit_all(fresh_world.repo, "skip test_api")
    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    kind = "tests_disabled_tracked" if above else "tests_newly_disabled"
    (off,) = kinds[kind]
    assert off.items == ["test_skips.py::TestSkips.test_api"]
    assert "upstream API skew" in off.body


@pytest.mark.parametrize(
    ("gate", "off"),
    [
        ('importlib.util.find_spec("deep_ep") is not None', False),  # the machine decides
        ("False", True),  # a constant: off everywhere
    ],
)
def test_an_entry_gated_on_what_the_machine_has_is_not_switched_off(fresh_world, gate, off):
    """`disabled=not _DEEPEP_AVAILABLE`, `_DEEPEP_AVAILABLE` from `find_spec`: it runs where
    DeepEP is installed, like a `skipIf` — not switched off (NEAR-MISS). The same switch on
    a constant False is off everywhere (TRUE)."""
    integration = fresh_world.repo / EXP / "tests" / "integration_tests.py"
    text = integration.read_text()
    assert '"gt_fsdp_tp"),' in text
    text = text.replace(
        '"gt_fsdp_tp"),', '"gt_fsdp_tp",\n            disabled=not _DEEPEP_AVAILABLE),'
    )
    integration.write_text(f"import importlib.util\n_DEEPEP_AVAILABLE = {gate}\n" + text)
    commit_all(fresh_world.repo, "gate gt_fsdp_tp on DeepEP")
    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    newly = [f.items for f in kinds.get("tests_newly_disabled", [])]
    assert newly == ([["integration_tests.py::gt_fsdp_tp"]] if off else [])


@pytest.mark.parametrize("before", ["class", "nothing"])
def test_a_test_left_skipped_when_its_class_comes_back_is_not_newly_off(fresh_world, before):
    """`TestFlex` was skipped whole; the class comes back with one test skipped alone: that
    test was off already (NEAR-MISS). With nothing skipped before, it is newly off (TRUE)."""
    tests = fresh_world.repo / EXP / "tests"
    skip_class = '@unittest.skip("upstream regression")\n' if before == "class" else ""
    (tests / "test_flex.py").write_text(
        f"import unittest\n\n\n{skip_class}class TestFlex(unittest.TestCase):\n"
        "    def test_a(self): ...\n\n    def test_b(self): ...\n"
    )
    commit_all(fresh_world.repo, "TestFlex", "2026-10-01T12:00:00+00:00")  # before the window
    (tests / "test_flex.py").write_text(
        "import unittest\n\n\nclass TestFlex(unittest.TestCase):\n"
        "    def test_a(self): ...\n\n"
        '    @unittest.skip("unpicklable code objects")\n    def test_b(self): ...\n'
    )
    commit_all(fresh_world.repo, "TestFlex back, but test_b")
    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    newly = [f.items for f in kinds.get("tests_newly_disabled", [])]
    assert newly == ([] if before == "class" else [["test_flex.py::TestFlex.test_b"]])


@pytest.mark.parametrize("switch", ["True", "False"])
def test_entries_of_another_runner_s_own_definition_class_count_as_switched_off(
    fresh_world, switch
):
    """`run_precompile_tests.py` builds `PrecompileTestDefinition(test_name=…, disabled=…)`
    entries, a class of its own with a `disabled` field: one switched on `True` is an
    integration test off like any other (TRUE); on `False` it runs (NEAR-MISS)."""
    runner = fresh_world.repo / EXP / "tests" / "run_precompile_tests.py"
    runner.write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass PrecompileTestDefinition:\n"
        "    test_name: str\n    disabled: bool = False\n\n\n"
        "TESTS = [\n    PrecompileTestDefinition(test_name='precompile_fsdp'),\n"
        "    PrecompileTestDefinition(\n        test_name='precompile_fsdp_tp',\n"
        "        # TODO: off until the bucketing pass pickles (o/r#4100)\n"
        f"        disabled={switch},\n    ),\n]\n"
    )
    commit_all(fresh_world.repo, "precompile runner")
    kinds = by_kind(run_collector(fresh_world, "coverage", TODAY))
    (standing,) = kinds["tests_disabled"]
    off = "run_precompile_tests.py::precompile_fsdp_tp"
    assert (off in standing.items) is (switch == "True")
    if switch == "True":
        assert "`run_precompile_tests.py` " not in standing.body  # paths are written whole
        assert "of 4 disabled" in standing.body or "of 4 integration tests" in standing.title
        (tracked,) = kinds["tests_disabled_tracked"]  # its reason names o/r#4100
        assert tracked.items == [off]


SKIPPED_UNDER_NOTES = """\
import unittest


class TestNumerics(unittest.TestCase):
    # Both runs use the SDPA backend: FlexAttention fails under export.
    # TODO: Disabled due to an upstream API skew; re-enable once it migrates.
    # https://example.invalid/issues/1
    @unittest.skip("upstream imports a removed helper")
    def test_skewed(self):
        pass

    # Runs on one GPU only.
    @unittest.skip("needs the 8-GPU runner")
    def test_big(self):
        pass
"""


def test_a_skip_s_reason_is_its_own_message_then_its_todo_not_a_note_above_it():
    """TRUE: a comment block that opens with a note on something else, then a TODO: the
    reason is the skip's message, then the TODO's words — never the note. NEAR-MISS: a
    block with no TODO is kept whole, after the message."""
    from scout_tui.analysis.python.experiment_tests import skipped_tests

    tree = ast.parse(SKIPPED_UNDER_NOTES)
    found = {d.name: d.reason for d in skipped_tests("t.py", tree, SKIPPED_UNDER_NOTES)}
    skewed = found["TestNumerics.test_skewed"]
    assert skewed.startswith("upstream imports a removed helper — Disabled due to an upstream")
    assert "SDPA" not in skewed
    assert found["TestNumerics.test_big"] == "needs the 8-GPU runner — Runs on one GPU only."
