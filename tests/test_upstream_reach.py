"""Reach of the upstream delta review: what the experiment depends on upstream beyond what
it imports, calls and configures by name. Each rule on a generated repository: a TRUE case
it must flag and a NEAR-MISS it must not."""

from __future__ import annotations

import pytest

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY
from .test_dependencies import BEFORE_WINDOW, EXP, _edit


def _found(world):
    return by_kind(run_collector(world, "upstream_delta", TODAY))


def _changed(found, title_start):
    return [f for f in found.get("surface_changed", []) if f.title.startswith(title_start)]


# -- 1. attributes the experiment's subclass reads and only upstream sets ---------------------

_UPSTREAM_INIT = (
    "class Trainer:\n    def __init__(self, config=None):\n"
    "        self.config = config\n        self.step = 0\n\n"
)


@pytest.mark.parametrize("how", ["reads", "sets it itself", "moved to a base"])
def test_an_attribute_only_upstream_sets_renamed_breaks_its_reader(fresh_world, how):
    """GraphTrainer reads `self.step` in a method; only Trainer.__init__ sets it. Upstream
    renames it: TRUE. NEAR-MISSES: GraphTrainer sets `self.step` itself (in a helper), or
    upstream moves the assignment to a base class (still there)."""
    repo = fresh_world.repo
    _edit(repo, "torchtitan/trainer.py", "class Trainer:\n", _UPSTREAM_INIT)
    own = "    def reset(self):\n        self.step = 0\n\n" if how == "sets it itself" else ""
    _edit(
        repo,
        f"{EXP}/trainer.py",
        "class GraphTrainer(Trainer):\n",
        "class GraphTrainer(Trainer):\n" + own + "    def log(self):\n        return self.step\n\n",
    )
    commit_all(repo, "Trainer keeps its step; graph_trainer logs it", BEFORE_WINDOW)
    if how == "moved to a base":
        _edit(
            repo,
            "torchtitan/trainer.py",
            "class Trainer:\n    def __init__(self, config=None):\n"
            "        self.config = config\n        self.step = 0\n",
            "class Stepper:\n    def __init__(self):\n        self.step = 0\n\n\n"
            "class Trainer(Stepper):\n    def __init__(self, config=None):\n"
            "        super().__init__()\n        self.config = config\n",
        )
    else:
        _edit(repo, "torchtitan/trainer.py", "self.step = 0", "self.current_step = 0")
    sha = commit_all(repo, "Trainer: step is current_step")
    found = _found(fresh_world)
    changed = _changed(found, "`Trainer` attributes")
    if how != "reads":
        assert not changed
        return
    (it,) = changed
    assert it.title == "`Trainer` attributes changed upstream: attribute `step` removed"
    assert it.priority.value == "P1"
    assert (
        f"attribute `step` removed — the experiment depends on it: `step` used at {EXP}/"
        "trainer.py:" in it.body
    )
    assert "subclassed at trainer.py:" in it.body and sha[:10] in it.body
    # The attribute it added is nothing the experiment reads: not said at all.
    assert "current_step" not in it.title


def test_inherited_reads_follow_the_experiments_own_classes():
    from scout_tui.analysis.python.attributes import inherited_reads
    from scout_tui.analysis.python.pyast import parse

    source = (
        "from up import Base\n"
        "class Mid(Base):\n    def __init__(self):\n        self.mine = 1\n"
        "class Leaf(Mid):\n    def f(self):\n        return self.mine + self.theirs + self.g()\n"
        "    def g(self):\n        return 0\n"
        "def setup(obj):\n    obj.set_outside = 1\n"
        "class Other:\n    def f(self):\n        return self.theirs + self.set_outside\n"
    )
    assert inherited_reads({"e.py": parse(source)}, "Base") == {"theirs": ["e.py:7"]}


# -- 2. factories reached by a literal key of an upstream registry ----------------------------

_REGISTRY = (
    "def _debugmodel(attn_backend='sdpa'):\n    return {'dim': 256, 'attn': attn_backend}\n\n\n"
    "def _big(attn_backend='sdpa'):\n    return {'dim': 8192, 'attn': attn_backend}\n\n\n"
    "llama3_configs = {'debugmodel': _debugmodel, 'big': _big}\n"
)
_LOOKUPS = {
    "literal key": "llama3_configs['debugmodel'](attn_backend='flex')",
    "variable key": "llama3_configs[flavor](attn_backend='flex')",
    "its own dict": "mine['debugmodel'](attn_backend='flex')",
}


@pytest.mark.parametrize("lookup", list(_LOOKUPS))
@pytest.mark.parametrize("upstream", ["renames the parameter", "drops the key"])
def test_a_factory_looked_up_by_a_literal_key_is_judged_like_a_call(fresh_world, lookup, upstream):
    """A test builds its model config as `llama3_configs["debugmodel"](attn_backend=…)`,
    the registry being upstream's dict literal. Upstream renames the factory's parameter,
    or drops the key: TRUE (the call breaks). NEAR-MISSES: a key scout cannot read (a
    variable), and a dict of the experiment's own that maps the key elsewhere."""
    repo = fresh_world.repo
    (repo / "torchtitan/models/llama3/__init__.py").write_text(_REGISTRY)
    (repo / f"{EXP}/tests/test_models.py").write_text(
        "from torchtitan.models.llama3 import llama3_configs\n\n"
        "mine = {'debugmodel': lambda attn_backend: {'dim': 1}}\n\n\n"
        f"def test_build(flavor='debugmodel'):\n    assert {_LOOKUPS[lookup]}\n"
    )
    commit_all(repo, "llama3 registry; graph_trainer builds from it", BEFORE_WINDOW)
    if upstream == "drops the key":
        _edit(repo, "torchtitan/models/llama3/__init__.py", "{'debugmodel': _debugmodel, ", "{")
    else:
        _edit(
            repo,
            "torchtitan/models/llama3/__init__.py",
            "(attn_backend='sdpa'):\n    return {'dim': 256",
            "(attention='sdpa'):\n    return {'dim': 256",
        )
        _edit(
            repo,
            "torchtitan/models/llama3/__init__.py",
            "'attn': attn_backend}\n\n\n",
            "'attn': attention}\n\n\n",
        )
    sha = commit_all(repo, f"llama3: {upstream}")
    found = _found(fresh_world)
    missing = [f for f in found.get("surface_missing", []) if "llama3_configs" in f.title]
    changed = _changed(found, "`llama3_configs")
    if lookup != "literal key":
        assert not missing and not changed
        return
    if upstream == "drops the key":
        (gone,) = missing
        assert not changed
        assert gone.title == (
            '`llama3_configs["debugmodel"]` disappeared from `torchtitan/models/llama3/__init__.py`'
        )
        assert gone.priority.value == "P0" and "`tests/test_models.py:" in gone.body
        return
    (it,) = changed
    assert it.title.startswith(
        '`llama3_configs["debugmodel"]` → `_debugmodel` signature changed upstream: '
    )
    assert (
        "parameter `attn_backend` removed — the experiment depends on it: called with "
        "`attn_backend=` at "
    ) in it.body
    assert 'looked up as `llama3_configs["debugmodel"]` at `tests/test_models.py:' in it.body
    assert sha[:10] in it.body and it.priority.value == "P1"
