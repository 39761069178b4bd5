"""Relevance of upstream changes, each rule on a generated repository: a TRUE case it must
flag and a NEAR-MISS it must not. Watched surfaces (scout.toml) and discovered ones (the
experiment's imports) are judged by the same code."""

from __future__ import annotations

import pytest

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY
from .test_dependencies import BEFORE_WINDOW, EXP, _edit, _with_upstream_train_step

DAY = TODAY.isoformat()


def _found(world):
    return by_kind(run_collector(world, "upstream_delta", TODAY))


def _changed(found, title_start):
    return [f for f in found.get("surface_changed", []) if f.title.startswith(title_start)]


# -- 1. a method passed through a wrapper is not called with its parameters -------------------


@pytest.mark.parametrize("calls_it", [False, True])
def test_a_method_passed_through_a_wrapper_depends_on_none_of_its_parameters(fresh_world, calls_it):
    """The experiment annotates MoE.forward by hand (`MoE.forward = annotate(...)(MoE.forward)`,
    restoring the original after): a parameter renamed upstream breaks no pass-through.
    NEAR-MISS of the rule: once the experiment calls it with the old keyword, it does."""
    repo = fresh_world.repo
    _edit(repo, "torchtitan/models/common/moe.py", "(self, x):", "(self, x, flag=False):")
    call = "\n\ndef run(moe, x):\n    return moe.forward(x, flag=True)\n" if calls_it else ""
    (repo / f"{EXP}/annotations.py").write_text(
        "from torchtitan.models.common.moe import MoE\n\n\n"
        "def annotate(meta):\n    def wrap(fn):\n        return fn\n\n    return wrap\n\n\n"
        "def annotated():\n    original = MoE.forward\n"
        '    MoE.forward = annotate({"EP": "compute"})(MoE.forward)\n'
        "    MoE.forward = original\n" + call
    )
    commit_all(repo, "MoE.forward flag; graph_trainer annotates it", BEFORE_WINDOW)
    _edit(repo, "torchtitan/models/common/moe.py", "flag=False", "enabled=False")
    commit_all(repo, "MoE: flag is enabled")
    found = _found(fresh_world)
    changed = _changed(found, "MoE.forward signature")
    if calls_it:
        (moe,) = changed
        assert moe.priority.value == "P1"
        assert "parameter `flag` removed — the experiment depends on it: called with `flag=`" in (
            moe.body
        )
    else:
        assert not changed
        (unused,) = found["dependencies_unaffected"]
        assert "- MoE.forward signature: parameter `enabled` added" in unused.body


@pytest.mark.parametrize(
    ("signature", "said"),
    [
        ("(self, x, flag=False):", None),  # NEAR-MISS: a default, after what calls pass
        ("(self, x, flag):", "called without `flag` at"),  # TRUE: every call must pass it
        ("(self, flag=False, x=None):", "called with 1 positional arguments at"),  # TRUE
    ],
)
def test_a_new_parameter_breaks_only_calls_it_changes(fresh_world, signature, said):
    """The experiment calls `moe.forward(x)`. A parameter added upstream with a default,
    after the one argument it passes, breaks nothing; one without a default, or one put
    before the argument it passes, breaks the call."""
    repo = fresh_world.repo
    (repo / f"{EXP}/forward.py").write_text(
        "from torchtitan.models.common.moe import MoE\n\n\n"
        "def run(moe: MoE, x):\n    return moe.forward(x)\n"
    )
    commit_all(repo, "graph_trainer calls MoE.forward", BEFORE_WINDOW)
    _edit(repo, "torchtitan/models/common/moe.py", "(self, x):", signature)
    commit_all(repo, "MoE.forward takes a flag")
    changed = _changed(_found(fresh_world), "MoE.forward signature")
    if said is None:
        assert not changed
    else:
        (moe,) = changed
        assert moe.priority.value == "P1" and said in moe.body


def test_a_wrapper_that_binds_or_replaces_is_still_a_patch():
    from scout_tui.analysis.python.pyast import parse
    from scout_tui.analysis.python.relevance import uses_of

    source = (
        "from m import C\n"
        "C.f = wrap(C.f)\n"  # pass-through
        "C.f = partial(C.f, x=1)\n"  # binds a parameter
        "C.f = wraps(C.f)(mine)\n"  # replaces it
    )
    uses = uses_of({"e.py": parse(source)}, "C", "f")
    assert uses.wraps == ["e.py:2"]
    assert uses.patches == ["e.py:3", "e.py:4"]


@pytest.mark.parametrize(
    "own, counted",
    [
        ("class Mine:\n    def __init__(self, x=1): ...\n", False),  # its own `x`
        ("class Mine(C):\n    pass\n", True),  # a subclass: C's `x`
        ("class Mine:\n    def __init__(self, **kw): C(**kw)\n", True),  # hands it on
        ("def Mine(x=1): ...\n", False),
        ("def Mine(**kw): return C(**kw)\n", True),
    ],
)
def test_a_keyword_to_the_experiments_own_callable_is_not_a_field_of_the_class(own, counted):
    """`Mine(x=…)` sets upstream `C.x` only when `Mine` is `C`, a subclass of it, or
    forwards its keywords; otherwise the same name is the experiment's own."""
    from scout_tui.analysis.python.pyast import parse
    from scout_tui.analysis.python.relevance import uses_of

    modules = {
        "own.py": parse(own),
        "use.py": parse("from m import C\nfrom own import Mine\nMine(x=2)\nC(y=3)\n"),
    }
    uses = uses_of(modules, "C")
    assert uses.names["y"] == ["use.py:4"]
    assert ("x" in uses.names) is counted


# -- 2. config fields: same value, annotation only, `Config(**d)` -----------------------------


def test_a_default_spelled_differently_is_no_change():
    from scout_tui.analysis.python.shapes import same_value

    assert same_value("1024", "2 ** 10") and same_value("'op'", "field(default='op')")
    assert same_value("field(default_factory=list)", "field(default_factory=lambda: [])")
    assert not same_value("'op'", "'2'") and not same_value("True", "1")
    assert not same_value("x", "x") and not same_value("10 ** 10 ** 10", "0")


@pytest.mark.parametrize("new_default", ["field(default='op')", "'2'"])
def test_a_default_that_evaluates_the_same_is_not_an_action_item(fresh_world, new_default):
    """The experiment builds ActivationCheckpointConfig without `selective_ac_option`:
    a new default reaches it (TRUE: `'2'`), the same default spelled another way does not
    (NEAR-MISS: `field(default='op')`)."""
    repo = fresh_world.repo
    _edit(repo, "torchtitan/config/configs.py", 'str = "op"', f"str = {new_default}")
    commit_all(repo, "AC option default")
    changed = _changed(_found(fresh_world), "`ActivationCheckpointConfig`")
    if new_default == "'2'":
        (ac,) = changed
        assert ac.priority.value == "P1" and "built without `selective_ac_option`" in ac.body
    else:
        assert not changed


def test_admits_reads_builtin_types_literals_and_unions():
    from scout_tui.analysis.python.shapes import admits

    assert admits("int | None", "None") and admits("Optional[int]", "None")
    assert admits("int", "None") is False and admits("Literal['a']", "'b'") is False
    assert admits("MyConfig", "1") is None  # a class of the project: cannot tell


@pytest.mark.parametrize("new_type", ["str | None", "int"])
def test_an_annotation_change_bites_only_a_value_that_no_longer_fits(fresh_world, new_type):
    """The experiment sets `selective_ac_option="op"`. `str` → `str | None` (NEAR-MISS)
    changes nothing it reads or sets; `str` → `int` (TRUE) no longer takes its "op"."""
    repo = fresh_world.repo
    _edit(repo, f"{EXP}/configs.py", '(mode="none")', '(mode="none", selective_ac_option="op")')
    commit_all(repo, "graph_trainer pins the AC option", BEFORE_WINDOW)
    _edit(repo, "torchtitan/config/configs.py", "selective_ac_option: str", f"x: {new_type}")
    _edit(
        repo, "torchtitan/config/configs.py", f"x: {new_type}", f"selective_ac_option: {new_type}"
    )
    commit_all(repo, "AC option type")
    changed = _changed(_found(fresh_world), "`ActivationCheckpointConfig`")
    if new_type == "int":
        (ac,) = changed
        assert "the experiment depends on it: `selective_ac_option` set to 'op'" in ac.body
    else:
        assert not changed


@pytest.mark.parametrize("built", ["**AC", "mode='none'"])
def test_a_config_built_from_a_dict_does_not_depend_on_every_default(fresh_world, built):
    """`ActivationCheckpointConfig(**AC)` passes its fields by name from a dict scout cannot
    read (NEAR-MISS); `ActivationCheckpointConfig(mode='none')` visibly leaves
    `selective_ac_option` at its default (TRUE)."""
    repo = fresh_world.repo
    text = (repo / f"{EXP}/configs.py").read_text().replace('(mode="none")', f"({built})")
    (repo / f"{EXP}/configs.py").write_text(text + "\n\nAC = {'mode': 'none'}\n")
    commit_all(repo, "graph_trainer builds its AC config", BEFORE_WINDOW)
    _edit(repo, "torchtitan/config/configs.py", 'str = "op"', 'str = "2"')
    commit_all(repo, "AC option default")
    changed = _changed(_found(fresh_world), "`ActivationCheckpointConfig`")
    assert bool(changed) is (built != "**AC")


@pytest.mark.parametrize("value", ["jit", "aot"])
def test_a_watched_config_is_judged_with_the_options_it_is_reached_by(fresh_world, value):
    """CompileConfig is watched in scout.toml; the experiment sets its mode only as a flag
    `--compile.mode VALUE` (found through Trainer.Config's `compile` field, as a discovered
    config would be). Upstream drops `"jit"`: TRUE when it sets jit, NEAR-MISS for aot."""
    repo = fresh_world.repo
    (repo / f"{EXP}/launch.py").write_text(f'ARGS = ["--compile.mode {value}"]\n')
    commit_all(repo, "graph_trainer's launch flags", BEFORE_WINDOW)
    _edit(
        repo,
        "torchtitan/config/configs.py",
        'Literal["jit", "aot"] = "jit"',
        'Literal["aot"] = "aot"',
    )
    commit_all(repo, "compile: aot only")
    found = _found(fresh_world)
    changed = _changed(found, "CompileConfig fields")
    if value == "jit":
        (compile_,) = changed
        assert "`mode` set to 'jit' at launch.py:1" in compile_.body
    else:
        assert not changed


# -- 3. "adapted in the same commit" asks today's tree ----------------------------------------


@pytest.mark.parametrize(
    "surface,field_name,reader",
    [
        ("CompileConfig", "backend", "CompileConfig fields"),  # watched
        ("ActivationCheckpointConfig", "selective_ac_option", "`ActivationCheckpointConfig`"),
    ],
)
@pytest.mark.parametrize("re_added", [False, True])
def test_a_removal_adapted_in_its_commit_but_used_again_today_is_an_action_item(
    fresh_world, surface, field_name, reader, re_added
):
    """One commit removes a field upstream and the experiment's use of it: adapted (FYI,
    NEAR-MISS). A later commit of the window uses it again: today's tree is broken (TRUE),
    whatever the first commit did."""
    repo = fresh_world.repo
    user = repo / f"{EXP}/field_user.py"
    use = f"def read(c: {surface}):\n    return c.{field_name}\n"
    other = f"def read_mode(c: {surface}):\n    return c.mode\n"
    header = f"from torchtitan.config.configs import {surface}\n\n\n"
    user.write_text(header + use)
    commit_all(repo, "graph_trainer reads the field", BEFORE_WINDOW)
    configs = repo / "torchtitan/config/configs.py"
    configs.write_text(
        "\n".join(
            line
            for line in configs.read_text().splitlines()
            if not line.strip().startswith(f"{field_name}:")
        )
        + "\n"
    )
    user.write_text(header + other)
    sha = commit_all(repo, "drop the field, graph_trainer follows", f"{DAY}T19:00:00+00:00")
    if re_added:
        user.write_text(header + other + "\n\n" + use.replace("def read", "def again"))
        commit_all(repo, "graph_trainer reads it again", f"{DAY}T20:00:00+00:00")
    found = _found(fresh_world)
    changed = _changed(found, reader)
    if re_added:
        (it,) = changed
        assert it.priority.value == "P1"
        assert (
            f"field `{field_name}` removed — the experiment depends on it: `{field_name}` used"
            in (it.body)
        )
    else:
        assert not changed
        (quiet,) = found["dependencies_changed"]
        assert f"field `{field_name}` removed" in quiet.body and "adapted in the same commit" in (
            quiet.body
        )
        assert sha[:10] in quiet.body or surface == "CompileConfig"


# -- 4. an override that calls upstream only on a branch the defaults do not take -------------


@pytest.mark.parametrize(
    "guard,default,drifts",
    [
        ('self.mode == "upstream"', '"graph"', True),  # TRUE: the default is the other branch
        ('self.mode == "upstream"', '"upstream"', False),  # NEAR-MISS: default takes it
        ("batch is None", '"graph"', False),  # NEAR-MISS: scout cannot tell: silent
        ("self.eager", "False", True),  # TRUE: a flag defaulting False
    ],
)
def test_an_override_calling_upstream_only_off_the_default_path_drifts(
    fresh_world, guard, default, drifts
):
    repo = fresh_world.repo
    setting = "eager" if "eager" in guard else "mode"
    kind = "bool" if setting == "eager" else "str"
    _with_upstream_train_step(
        repo,
        f"    {setting}: {kind} = {default}\n\n"
        "    def train_step(self, batch):\n"
        f"        if {guard}:\n"
        "            return super().train_step(batch)\n"
        "        loss = self.forward(batch)\n        return loss\n",
    )
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        return loss\n\n    def post",
        "        return loss * 2\n\n    def post",
    )
    sha = commit_all(repo, "double the loss")
    found = _found(fresh_world)
    if not drifts:
        assert "override_drift" not in found and "override_bypassed" not in found
        return
    # It replaces upstream on the default path by choice: awareness, not a card to port.
    assert "override_drift" not in found
    (drift,) = found["override_bypassed"]
    assert drift.section.value == "fyi" and not drift.suggested_fix
    assert drift.title.endswith("does not call it by default and may lack the change")
    assert f"calling the upstream method only when `{guard}`" in drift.body.replace("'", '"')
    assert f"which `{setting}` at its default" in drift.body
    assert f"`{sha[:10]}` double the loss" in drift.body


@pytest.mark.parametrize(
    ("new_type", "changed"),
    [("torch.Tensor", False), ("tensor.Tensor", False), ("torch.Generator", True)],
)
def test_a_type_spelled_another_way_is_no_change(fresh_world, new_type, changed):
    """`x: Tensor` with `from torch import Tensor`, then `x: torch.Tensor` with `import torch`
    (or through a module alias, `import torch as tensor`): the same class, no change (NEAR-MISS);
    `torch.Generator` is another type (TRUE)."""
    repo = fresh_world.repo
    (repo / f"{EXP}/forward.py").write_text(
        "from torchtitan.models.common.moe import MoE\n\n\n"
        "def run(moe: MoE, x):\n    return moe.forward(x)\n"
    )
    moe = "torchtitan/models/common/moe.py"
    text = (repo / moe).read_text()
    (repo / moe).write_text(
        "from torch import Tensor\n" + text.replace("(self, x):", "(self, x: Tensor):")
    )
    commit_all(repo, "graph_trainer calls MoE.forward", BEFORE_WINDOW)
    module = new_type.split(".")[0]
    alias = "import torch\n" if module == "torch" else f"import torch as {module}\n"
    text = (repo / moe).read_text().replace("from torch import Tensor\n", alias)
    (repo / moe).write_text(text.replace("(self, x: Tensor):", f"(self, x: {new_type}):"))
    commit_all(repo, "MoE.forward: the type spelled through the module")
    found = _found(fresh_world)
    said = [
        f
        for kind in ("surface_changed", "dependencies_changed", "dependencies_unaffected")
        for f in found.get(kind, [])
        if "MoE.forward" in f.title + f.body
    ]
    assert bool(said) is changed


def _warmup_removed(world, build: str) -> list:
    """`Trainer.Config` has `warmup` before the window and loses it inside it; the
    experiment's `build.py` is `build`. The `Trainer.Config` findings of the day."""
    repo = world.repo
    _edit(
        repo,
        "torchtitan/trainer.py",
        '        job_name: str = "default"\n',
        '        job_name: str = "default"\n        warmup: int = 0\n',
    )
    (repo / f"{EXP}/build.py").write_text(build)
    commit_all(repo, "Trainer.Config.warmup; graph_trainer builds configs", BEFORE_WINDOW)
    _edit(repo, "torchtitan/trainer.py", "        warmup: int = 0\n", "")
    commit_all(repo, "Trainer.Config: no warmup")
    return _changed(_found(world), "Trainer.Config fields")


@pytest.mark.parametrize("owner", ["Trainer", "MyTrainer", "Attention"])
def test_a_keyword_to_another_class_s_nested_config_is_not_a_field_of_this_one(fresh_world, owner):
    """`Trainer.Config` loses `warmup`. The experiment passes `warmup=3` to
    `Attention.Config(...)`, another upstream class's nested Config: not a use of
    `Trainer.Config.warmup` (NEAR-MISS); passed to `Trainer.Config(...)`, or to the Config of
    its own subclass of Trainer, it is (TRUE)."""
    (fresh_world.repo / "torchtitan/models/attention_config.py").write_text(
        "from dataclasses import dataclass\n\n\nclass Attention:\n"
        "    @dataclass\n    class Config:\n        warmup: int = 0\n"
    )
    changed = _warmup_removed(
        fresh_world,
        "from torchtitan.models.attention_config import Attention\n"
        "from torchtitan.trainer import Trainer\n\n\n"
        "class MyTrainer(Trainer):\n    class Config(Trainer.Config):\n        pass\n\n\n"
        f"def build():\n    return Trainer.Config(), {owner}.Config(warmup=3)\n",
    )
    if owner != "Attention":
        (trainer,) = changed
        assert trainer.priority.value == "P1" and "build.py:" in trainer.body
    else:
        assert not changed, changed[0].body


@pytest.mark.parametrize("callee", ["Trainer.Config", "make_config", "LinearWarmup"])
def test_a_keyword_to_another_class_is_that_class_s_parameter(fresh_world, callee):
    """`Trainer.Config` loses `warmup`. `LinearWarmup(warmup=3)` — a class the experiment
    builds — takes its own `warmup` (NEAR-MISS); `Trainer.Config(warmup=3)` is a use (TRUE),
    and so is a function's `make_config(warmup=3)`, which may hand it on."""
    changed = _warmup_removed(
        fresh_world,
        "from torch.optim.lr_scheduler import LinearWarmup\n"
        "from torchtitan.trainer import Trainer, make_config\n\n\n"
        f"def build():\n    return Trainer.Config(), {callee}(warmup=3)\n",
    )
    assert bool(changed) is (callee != "LinearWarmup")


@pytest.mark.parametrize("call", ["forward(x, flag=True)", "moe.forward(x, flag=True)"])
def test_a_local_function_named_like_the_method_is_not_a_call_of_it(fresh_world, call):
    """`MoE.forward` loses `flag`. A test module that imports MoE calls its own local
    `forward(x, flag=True)`: not `MoE.forward` (NEAR-MISS); `moe.forward(x, flag=True)` is
    (TRUE)."""
    repo = fresh_world.repo
    _edit(repo, "torchtitan/models/common/moe.py", "(self, x):", "(self, x, flag=False):")
    (repo / f"{EXP}/tests/test_local_forward.py").write_text(
        "from torchtitan.models.common.moe import MoE\n\n\n"
        "def test_it(moe: MoE, x):\n"
        "    def forward(x, flag=False):\n        return x\n\n"
        f"    return {call}\n"
    )
    commit_all(repo, "MoE.forward flag; a test with its own forward", BEFORE_WINDOW)
    _edit(repo, "torchtitan/models/common/moe.py", "(self, x, flag=False):", "(self, x):")
    commit_all(repo, "MoE.forward: no flag")
    changed = _changed(_found(fresh_world), "MoE.forward signature")
    assert bool(changed) is call.startswith("moe.")


# -- a field's reads: on what holds the class, and behind its switch -------------------------

_SNAPSHOT = """\
import os
from dataclasses import dataclass


class Snapshot:
    @dataclass
    class Config:
        enabled: bool = False
        folder: str = "snapshots"
        name: str = "run"

    def __init__(self, config):
        self.config = config

    def save(self, base):
        cfg = self.config
        if not cfg.enabled:
            return None
        return os.path.join(base, cfg.folder)
"""


def _snapshot_changed(world, experiment_code: str, old: str, new: str, upstream=_SNAPSHOT):
    repo = world.repo
    (repo / "torchtitan/tools").mkdir(exist_ok=True)
    (repo / "torchtitan/tools/snapshot.py").write_text(upstream)
    (repo / f"{EXP}/snapshots.py").write_text(
        "from torchtitan.tools.snapshot import Snapshot\n\n\n" + experiment_code
    )
    commit_all(repo, "Snapshot; graph_trainer takes snapshots", BEFORE_WINDOW)
    _edit(repo, "torchtitan/tools/snapshot.py", old, new)
    commit_all(repo, "Snapshot.Config changes")
    return _changed(_found(world), "`Snapshot.Config`")


@pytest.mark.parametrize(
    ("built", "guarded", "depends"),
    [
        ("Snapshot.Config(enabled=True)", True, True),  # switched on: the folder is read
        ("Snapshot.Config()", True, False),  # off: nobody reads the folder
        ("Snapshot.Config()", False, True),  # the folder read with the switch off too
    ],
)
def test_a_default_read_only_behind_an_off_switch_reaches_who_turns_it_on(
    fresh_world, built, guarded, depends
):
    """`Snapshot.Config.folder` gets a new default. Upstream reads the folder only after
    `if not cfg.enabled: return`: a config built with `enabled=True` and no folder
    depends on it (TRUE); one that leaves `enabled` off does not (NEAR-MISS); and if
    upstream also reads the folder unguarded, that one does again (TRUE)."""
    upstream = _SNAPSHOT
    if not guarded:
        upstream += "\n    def where(self):\n        return self.config.folder\n"
    changed = _snapshot_changed(
        fresh_world,
        f"def build():\n    return Snapshot({built})\n",
        'folder: str = "snapshots"',
        'folder: str = "out/snapshots"',
        upstream,
    )
    if depends:
        (snapshot,) = changed
        assert snapshot.priority.value == "P1"
        assert "field `folder` default" in snapshot.body and "built without `folder`" in (
            snapshot.body
        )
    else:
        assert not changed, changed[0].body


@pytest.mark.parametrize(
    "reader",
    [
        "def names(nodes):\n    return [node.name for node in nodes]\n",  # another `name`
        "def name():\n    cfg = Snapshot.Config()\n    return cfg.name\n",
        "def name(cfg: Snapshot.Config):\n    return cfg.name\n",
        "class Mine:\n    def __init__(self, cfg: Snapshot.Config):\n        self.cfg = cfg\n\n"
        "    def name(self):\n        return self.cfg.name\n",
    ],
)
def test_a_field_is_read_only_on_what_holds_the_config(fresh_world, reader):
    """`Snapshot.Config` loses `name`. The experiment's module names Snapshot and reads
    `node.name` of something else (NEAR-MISS: not the field); reading it on a config it
    built, took as a parameter, or kept on `self` is a use (TRUE)."""
    changed = _snapshot_changed(
        fresh_world,
        "def build():\n    return Snapshot(Snapshot.Config(enabled=True))\n\n\n" + reader,
        '        name: str = "run"\n',
        "",
    )
    if "node.name" in reader:
        assert not changed, changed[0].body
    else:
        (snapshot,) = changed
        assert "field `name` removed — the experiment depends on it: `name` used at" in (
            snapshot.body
        )
