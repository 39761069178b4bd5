"""The experiment's dependency surface, discovered from its code: what it imports,
subclasses, overrides and configures upstream, watched baseline → HEAD beside the surfaces
scout.toml names; relevance decides Action Item or FYI."""

from __future__ import annotations

import ast
import textwrap

import pytest

from scout_tui.analysis.python.dependencies import discover, option_uses, widened
from scout_tui.model import Section

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY

EXP = "torchtitan/experiments/graph_trainer"
BEFORE_WINDOW = "2026-10-01T12:00:00+00:00"


def parser(files: dict[str, str]):
    trees = {path: ast.parse(textwrap.dedent(text)) for path, text in files.items()}
    return trees.get


UPSTREAM = {
    "pkg/__init__.py": "",
    "pkg/config/__init__.py": "from .configs import JobConfig, RunConfig\n",
    "pkg/config/configs.py": """
        from dataclasses import dataclass, field
        from typing import Literal

        @dataclass
        class RunConfig:
            mode: Literal["a", "b"] = "a"

        @dataclass
        class JobConfig:
            name: str = "x"
    """,
    "pkg/trainer.py": """
        from dataclasses import dataclass, field
        from pkg.config import RunConfig

        class Trainer:
            @dataclass
            class Config:
                run: RunConfig = field(default_factory=RunConfig)
                steps: int = 10

            def train_step(self, batch):
                return batch

            def close(self):
                pass

            def _helper(self):
                pass
    """,
    "pkg/util.py": "def build(a, b=1):\n    return a\n",
}


def test_discover_follows_imports_reexports_nested_configs_and_overrides():
    experiment = {
        "pkg/exp/__init__.py": "",
        "pkg/exp/train.py": """
            from pkg.config import JobConfig
            from pkg.trainer import Trainer
            from pkg.util import build
            from .local import thing

            class MyTrainer(Trainer):
                def train_step(self, batch):
                    return build(batch)

                def close(self):
                    super().close()

                def _helper(self):
                    pass

                def extra(self):
                    pass

            def make(base: Trainer.Config):
                return base.run.mode
        """,
        "pkg/exp/local.py": "thing = 1\n",
    }
    parse = parser({**UPSTREAM, **experiment})
    modules = {p: parse(p) for p in experiment}
    found = {(d.qualname, d.check): d for d in discover("pkg/exp", modules, parse)}
    # `JobConfig` is re-exported by pkg/config/__init__.py: found where it is defined.
    assert found[("JobConfig", "fields")].path == "pkg/config/configs.py"
    assert found[("JobConfig", "fields")].via == "imported at train.py:2"
    assert found[("build", "signature")].path == "pkg/util.py"
    # The nested config the experiment names, and the config it holds as a field: reached
    # as `--run.*` options without the experiment ever naming RunConfig.
    assert ("Trainer.Config", "fields") in found
    run = found[("RunConfig", "fields")]
    assert run.option_prefix == "run" and run.via == "field `run` of `Trainer.Config`"
    # Overrides, with whether they call the upstream method; a method upstream lacks is not
    # a dependency, and nothing of the experiment itself is.
    assert found[("Trainer.train_step", "signature")].calls_super is False
    assert found[("Trainer.train_step", "signature")].override == "pkg/exp/train.py:8"
    assert found[("Trainer.close", "signature")].calls_super is True
    assert ("Trainer._helper", "signature") in found
    assert ("Trainer.extra", "signature") not in found
    assert not any(d.path.startswith("pkg/exp/") for d in found.values())
    # `Trainer` itself is a plain class, not a config: its annotated attributes are no
    # fields to watch.
    assert ("Trainer", "fields") not in found


def test_option_uses_reads_flags_keywords_replace_and_attribute_chains():
    modules = {
        "e/a.py": ast.parse(
            textwrap.dedent("""
            from dataclasses import replace
            FLAGS = ["--run.mode b", "--run.other=3", "--steps 4"]
            def f(config):
                config.run = replace(config.run, mode="a")
                return config.run.depth
            RunConfig(width=2)
        """)
        ),
    }
    uses = option_uses(modules, "RunConfig", "run")
    assert set(uses.names) == {"mode", "other", "depth", "width"}
    assert uses.values["mode"] == {"'a'", "'b'"}
    assert uses.reads == {"depth"}
    assert [(kw, n) for _, n, kw in uses.constructions] == [({"width"}, 0)]


def test_widened_knows_a_base_class_through_imports():
    parse = parser(
        {
            "pkg/__init__.py": "",
            "pkg/base.py": "class Base:\n    class Config:\n        pass\n",
            "pkg/impl.py": "from pkg.base import Base\n\n\nclass Impl(Base):\n"
            "    class Config(Base.Config):\n        pass\n",
            "pkg/user.py": "from pkg.base import Base\nfrom pkg.impl import Impl\n",
        }
    )
    tree = parse("pkg/user.py")
    assert widened(tree, "Impl.Config", "Base.Config", parse)
    assert not widened(tree, "Base.Config", "Impl.Config", parse)  # narrowed: may not fit
    assert not widened(tree, "Impl.Config", "int", parse)


# -- end to end on a generated repository ---------------------------------------------------


def _edit(repo, path, old, new):
    file = repo / path
    text = file.read_text()
    assert old in text, (path, old)
    file.write_text(text.replace(old, new))


def _dependency_findings(world):
    return by_kind(run_collector(world, "upstream_delta", TODAY))


def test_a_removed_option_value_the_experiment_sets_is_an_action_item(fresh_world):
    """Upstream drops "none" from ActivationCheckpointConfig.mode; the experiment's
    converter sets mode="none": broken by construction, P1, saying where."""
    repo = fresh_world.repo
    _edit(
        repo,
        "torchtitan/config/configs.py",
        'Literal["none", "full", "selective"]',
        'Literal["full", "selective"]',
    )
    sha = commit_all(repo, "AC: drop the none mode")
    found = _dependency_findings(fresh_world)
    (changed,) = [f for f in found["surface_changed"] if "ActivationCheckpointConfig" in f.title]
    assert changed.title == (
        "`ActivationCheckpointConfig` fields (options "
        "`--activation_checkpoint.*`) changed upstream: field `mode` allowed "
        "values: removed `'none'`"
    )
    assert changed.section is Section.ACTION_ITEMS and changed.priority.value == "P1"
    assert (
        f"— the experiment depends on it: `mode` set to 'none' at {EXP}/configs.py:" in changed.body
    )
    assert "found from its code, not configured in scout.toml" in changed.body
    assert sha[:10] in changed.body


def test_an_added_option_value_is_fyi_and_named_in_one_line(fresh_world):
    repo = fresh_world.repo
    _edit(
        repo,
        "torchtitan/config/configs.py",
        'Literal["none", "full", "selective"]',
        'Literal["none", "full", "selective", "offload"]',
    )
    commit_all(repo, "AC: offload mode")
    found = _dependency_findings(fresh_world)
    assert not any(
        "ActivationCheckpointConfig" in f.title for f in found.get("surface_changed", [])
    )
    (summary,) = found["dependencies_unaffected"]
    assert summary.section is Section.ALL_CLEAR
    assert "field `mode` allowed values: added `'offload'`" in summary.body
    assert summary.title.startswith("1 upstream symbol the experiment uses changed since ")


def test_a_default_the_experiment_gets_is_an_action_item_unless_it_always_sets_it(fresh_world):
    """The converter builds ActivationCheckpointConfig(mode="none") without
    selective_ac_option: it gets that default, so changing it is an Action Item. Once every
    construction sets it, the default reaches no one: FYI."""
    repo = fresh_world.repo
    _edit(
        repo,
        "torchtitan/config/configs.py",
        'selective_ac_option: str = "op"',
        'selective_ac_option: str = "2"',
    )
    commit_all(repo, "AC: every second layer by default")
    found = _dependency_findings(fresh_world)
    (changed,) = [f for f in found["surface_changed"] if "ActivationCheckpointConfig" in f.title]
    assert "field `selective_ac_option` default `'op'` → `'2'`" in changed.title
    assert changed.priority.value == "P1"
    assert (
        "— the experiment depends on it: built without `selective_ac_option` at "
        f"{EXP}/configs.py:" in changed.body
    )

    _edit(
        repo,
        f"{EXP}/configs.py",
        'ActivationCheckpointConfig(mode="none")',
        'ActivationCheckpointConfig(mode="none", selective_ac_option="op")',
    )
    commit_all(repo, "graph_trainer: pin the AC option", f"{TODAY.isoformat()}T21:00:00+00:00")
    found = _dependency_findings(fresh_world)
    assert not any(
        "ActivationCheckpointConfig" in f.title for f in found.get("surface_changed", [])
    )
    (summary,) = found["dependencies_unaffected"]
    assert "field `selective_ac_option` default `'op'` → `'2'`" in summary.body


def test_a_change_adapted_in_the_same_commit_is_fyi_naming_the_commit(fresh_world):
    repo = fresh_world.repo
    _edit(
        repo,
        "torchtitan/config/configs.py",
        'Literal["none", "full", "selective"]',
        'Literal["off", "full", "selective"]',
    )
    _edit(
        repo,
        f"{EXP}/configs.py",
        'ActivationCheckpointConfig(mode="none")',
        'ActivationCheckpointConfig(mode="off")',
    )
    sha = commit_all(repo, "AC: none is now off, graph_trainer follows")
    found = _dependency_findings(fresh_world)
    assert not any(
        "ActivationCheckpointConfig" in f.title for f in found.get("surface_changed", [])
    )
    (summary,) = found["dependencies_changed"]
    assert (
        f"field `mode` allowed values: removed `'none'`; added `'off'` (adapted in the same "
        f"commit, `{sha[:10]}`)"
    ) in summary.body


def test_a_field_widened_to_a_base_class_is_not_an_action_item(fresh_world):
    repo = fresh_world.repo
    _edit(
        repo,
        "torchtitan/config/configs.py",
        "@dataclass\nclass CompileConfig:",
        "@dataclass\nclass BaseCompileConfig:\n    pass\n\n\n"
        "@dataclass\nclass CompileConfig(BaseCompileConfig):",
    )
    commit_all(repo, "a base for compile configs", BEFORE_WINDOW)
    _edit(
        repo,
        "torchtitan/trainer.py",
        "import ActivationCheckpointConfig, CompileConfig",
        "import ActivationCheckpointConfig, BaseCompileConfig, CompileConfig",
    )
    _edit(repo, "torchtitan/trainer.py", "compile: CompileConfig =", "compile: BaseCompileConfig =")
    commit_all(repo, "Trainer.Config.compile takes any compile config")
    found = _dependency_findings(fresh_world)
    assert not any("Trainer.Config" in f.title for f in found.get("surface_changed", []))
    (unused,) = found["dependencies_unaffected"]
    assert (
        "- Trainer.Config fields: field `compile` type `CompileConfig` → "
        "`BaseCompileConfig`, a base class of `CompileConfig`: what fit still fits\n"
    ) in unused.body + "\n"


def _with_upstream_train_step(repo, override: str) -> None:
    _edit(
        repo,
        "torchtitan/trainer.py",
        "    def post_dataloading_process(self, batch):",
        "    def train_step(self, batch):\n        loss = self.forward(batch)\n"
        "        return loss\n\n    def post_dataloading_process(self, batch):",
    )
    _edit(
        repo,
        f"{EXP}/trainer.py",
        "    def train_step(self, batch):\n"
        "        inputs, labels, extra = self.post_dataloading_process(batch)\n"
        "        return inputs, labels, extra\n",
        override,
    )
    commit_all(repo, "Trainer.train_step; graph_trainer's own", BEFORE_WINDOW)


def test_an_override_that_does_not_call_upstream_misses_its_fixes(fresh_world):
    """Upstream adds a guard to Trainer.train_step; GraphTrainer.train_step is a copy that
    never calls it: P2, naming the commit and the override."""
    repo = fresh_world.repo
    _with_upstream_train_step(
        repo,
        "    def train_step(self, batch):\n"
        "        loss = self.forward(batch)\n        return loss\n",
    )
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        loss = self.forward(batch)\n        return loss",
        "        loss = self.forward(batch)\n        if not loss.isfinite():\n"
        "            raise ValueError('non-finite loss')\n        return loss",
    )
    sha = commit_all(repo, "Stop non-finite steps")
    found = _dependency_findings(fresh_world)
    (drift,) = found["override_drift"]
    assert drift.title == (
        "`Trainer.train_step` changed upstream; the experiment's override "
        "does not call it and may lack the change"
    )
    assert drift.section is Section.ACTION_ITEMS and drift.priority.value == "P2"
    assert "overrides `Trainer.train_step` at `trainer.py:" in drift.body
    assert f"`{sha[:10]}` Stop non-finite steps" in drift.body
    assert "+            raise ValueError('non-finite loss')" in drift.evidence.diff
    assert [f.path for f in drift.files] == [f"{EXP}/trainer.py", "torchtitan/trainer.py"]


@pytest.mark.parametrize("how", ["calls super", "changed with it"])
def test_an_override_that_calls_upstream_or_was_changed_with_it_is_no_drift(fresh_world, how):
    repo = fresh_world.repo
    override = (
        "        return super().train_step(batch)\n"
        if how == "calls super"
        else "        loss = self.forward(batch)\n        return loss\n"
    )
    _with_upstream_train_step(repo, "    def train_step(self, batch):\n" + override)
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        return loss\n\n    def post",
        "        return loss * 2\n\n    def post",
    )
    if how == "changed with it":  # the same commit carries the change into the override
        _edit(repo, f"{EXP}/trainer.py", "        return loss\n", "        return loss * 2\n")
    commit_all(repo, "double the loss")
    assert "override_drift" not in _dependency_findings(fresh_world)


@pytest.mark.parametrize("changed", ["its helper", "another function"])
def test_an_override_whose_helper_changed_with_upstream_is_no_drift(fresh_world, changed):
    """The override does its work in `self.step_loss`, which calls the module's `scaled`; the
    commit that doubles upstream's loss doubles it in `scaled` too: carried over (true case).
    The same commit changing only another function of the module carries nothing over
    (near-miss)."""
    repo = fresh_world.repo
    _with_upstream_train_step(
        repo,
        "    def train_step(self, batch):\n        return self.step_loss(batch)\n\n"
        "    def step_loss(self, batch):\n        return scaled(self.forward(batch))\n\n"
        "    def unrelated(self):\n        return 1\n",
    )
    trainer = repo / EXP / "trainer.py"
    trainer.write_text(trainer.read_text() + "\n\ndef scaled(loss):\n    return loss\n")
    commit_all(repo, "graph_trainer: scale the loss in one place", BEFORE_WINDOW)
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        return loss\n\n    def post",
        "        return loss * 2\n\n    def post",
    )
    if changed == "its helper":
        _edit(repo, f"{EXP}/trainer.py", "    return loss\n", "    return loss * 2\n")
    else:
        _edit(repo, f"{EXP}/trainer.py", "        return 1\n", "        return 2\n")
    commit_all(repo, "double the loss")
    found = _dependency_findings(fresh_world)
    assert ("override_drift" in found) is (changed == "another function")


def test_another_experiment_configured_by_a_short_scout_toml(fresh_world):
    """Nothing hard-wired to graph_trainer: a second experiment of the same repository,
    configured by three lines, gets its own findings (an override that misses an upstream
    fix, a doc typo with the flag it meant, its own config's flags known) and none of
    graph_trainer's."""
    from scout_tui.config.profile import load_config
    from scout_tui.pipeline.day import RunOptions, run

    repo = fresh_world.repo
    other = repo / "torchtitan/experiments/other"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "trainer.py").write_text(
        textwrap.dedent("""\
        from dataclasses import dataclass

        from torchtitan.trainer import Trainer


        class OtherTrainer(Trainer):
            @dataclass
            class Config(Trainer.Config):
                replicas: int = 1

            def post_dataloading_process(self, batch):
                inputs, labels = batch
                return inputs, labels, {}
    """)
    )
    (other / "README.md").write_text(
        "# other\n\nRun with `--replicas 2` and `--compile.backedn eager`.\n"
    )
    commit_all(repo, "another experiment", BEFORE_WINDOW)
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        inputs, labels = batch\n",
        "        inputs, labels = batch\n        labels = labels.long()\n",
    )
    sha = commit_all(repo, "labels are integers")
    config_path = fresh_world.base / "other.toml"
    sample_config = fresh_world.config.read_text()
    assert sample_config.count("[project]\n") == 1
    config_path.write_text(
        sample_config.replace(
            "[project]\n",
            '[project]\nexperiment = "torchtitan/experiments/other"\ntracking_issue = 5\n',
        )
        + "\n[board]\nnumber = 6\n"
    )
    result = run(
        RunOptions(
            repo=repo, config=load_config(config_path), as_of=TODAY, prior_dir=None, offline=True
        )
    )
    found = by_kind(result)
    everything = " ".join(
        f.title + f.body + " ".join(x.path for x in f.files) for f in result.findings
    )
    assert "graph_trainer" not in everything
    (drift,) = found["override_drift"]
    assert drift.title.startswith("`Trainer.post_dataloading_process` changed upstream")
    assert sha[:10] in drift.body and drift.priority.value == "P2"
    (doc,) = found["doc_inaccuracy"]
    assert doc.items == [
        "flag `--compile.backedn` is not a config field; did you mean `--compile.backend`?"
    ]  # `--replicas` is OtherTrainer.Config's
    assert [w.subject for w in result.config_warnings] == ["[ci] workflows"]


@pytest.mark.parametrize(
    ("body", "drifts"),
    [
        ("        return self.inner.train_step(batch)\n", False),  # delegates: upstream runs
        ("        return self.inner.forward(batch)\n", True),  # another method: a copy
        ("        return self.train_step_impl(batch)\n", True),  # its own helper
    ],
)
def test_an_override_handing_the_call_to_the_object_it_wraps_is_no_drift(fresh_world, body, drifts):
    """A wrapper whose `train_step` calls `self.inner.train_step(...)`: the wrapped object
    runs the upstream method, so its change reaches the experiment (NEAR-MISS of drift).
    Calling another method of the wrapped object, or a helper of its own, does not (TRUE)."""
    repo = fresh_world.repo
    _with_upstream_train_step(
        repo,
        "    def train_step(self, batch):\n" + body + "\n"
        "    def train_step_impl(self, batch):\n        return self.forward(batch)\n",
    )
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        return loss\n\n    def post",
        "        return loss * 2\n\n    def post",
    )
    commit_all(repo, "double the loss")
    assert ("override_drift" in _dependency_findings(fresh_world)) is drifts
