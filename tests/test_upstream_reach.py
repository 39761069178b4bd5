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


# -- 3. new validation in core config that the experiment's test commands fail ----------------

_PARALLELISM = (
    "@dataclass\nclass ParallelismConfig:\n    data_parallel_shard_degree: int = -1\n"
    "    tensor_parallel_degree: int = 1\n    pipeline_parallel_degree: int = 1\n"
)


@pytest.mark.parametrize(
    "owner,condition,rejects",
    [
        # TRUE: the enabled FSDP+TP test sets tp 2, dp_shard 4 (4 % 3 != 0)
        (
            "ParallelismConfig",
            "self.tensor_parallel_degree > 1 and self.data_parallel_shard_degree % 3 != 0",
            True,
        ),
        # TRUE: in the root config, options reached through its fields
        (
            "Trainer.Config",
            "self.parallelism.tensor_parallel_degree in (2, 4) and "
            "self.compile.passes == 'reorder'",
            True,
        ),
        # NEAR-MISS: a combination no test sets
        ("ParallelismConfig", "self.tensor_parallel_degree > 2", False),
        # NEAR-MISS: only a disabled test sets it
        ("ParallelismConfig", "self.pipeline_parallel_degree > 1", False),
        # NEAR-MISS: scout cannot evaluate it: silent
        ("ParallelismConfig", "self.tensor_parallel_degree > 1 and device_count() < 8", False),
    ],
)
def test_a_new_config_check_that_an_enabled_test_command_fails(
    fresh_world, owner, condition, rejects
):
    repo = fresh_world.repo
    configs = repo / "torchtitan/config/configs.py"
    configs.write_text(configs.read_text() + "\n\n" + _PARALLELISM)
    _edit(repo, "torchtitan/trainer.py", "CompileConfig\n", "CompileConfig, ParallelismConfig\n")
    _edit(
        repo,
        "torchtitan/trainer.py",
        "        seed: int | None = None\n",
        "        seed: int | None = None\n"
        "        parallelism: ParallelismConfig = field(default_factory=ParallelismConfig)\n",
    )
    commit_all(repo, "parallelism options", BEFORE_WINDOW)
    check = (
        f"    def __post_init__(self):\n        if {condition}:\n"
        "            raise ValueError('no')\n"
    )
    if owner == "ParallelismConfig":
        configs.write_text(configs.read_text() + "\n" + check)
    else:
        _edit(
            repo,
            "torchtitan/trainer.py",
            "        seed: int | None = None\n",
            "        seed: int | None = None\n\n"
            + check.replace("\n    ", "\n        ").replace("    def", "        def", 1),
        )
    sha = commit_all(repo, "validate the parallelism")
    found = _found(fresh_world)
    changed = _changed(found, f"`{owner}.__post_init__` checks")
    if not rejects:
        assert not changed
        return
    (it,) = changed
    assert it.title == (
        f"`{owner}.__post_init__` checks changed upstream: new check in "
        f"`{owner}.__post_init__` rejects `{condition.replace(chr(39), chr(39))}`"
    )
    assert it.priority.value == "P1" and sha[:10] in it.body
    assert "it rejects the integration test `gt_fsdp_tp` (" in it.body
    assert "`--parallelism.tensor_parallel_degree 2`" in it.body
    assert it.suggested_fix.startswith("Run the test with options the check accepts")


def test_command_options_and_checks_evaluate_only_what_they_can():
    from scout_tui.analysis.python.checks import checks, command_options, fires
    from scout_tui.analysis.python.pyast import parse

    options = command_options(["--a.x 2", "--a.y=3", "--a.flag", "--a.no-other", "--config c"])
    assert options == {"a.x": 2, "a.y": 3, "a.flag": True, "a.other": False}
    source = (
        "class A:\n    def __post_init__(self):\n"
        "        if self.skip:\n            return\n"
        "        if self.x % self.y != 0:\n            raise ValueError\n"
        "        assert self.x in (1, 2)\n"
        "        for i in range(3):\n            raise ValueError\n"
    )
    found = checks(parse(source), {"A": "a"}, frozenset({"a"}))
    assert [c.condition for c in found[:2]] == [
        "not (self.skip) and self.x % self.y != 0",
        "not (self.skip) and not (self.x % self.y != 0) and not (self.x in (1, 2))",
    ]
    # `skip` is not set by the command: neither check is decided
    assert not any(fires(c, options) for c in found)
    decided = {**options, "a.skip": False}
    assert [fires(c, decided) for c in found] == [True, False, False]


def test_a_check_not_about_the_commands_options_never_fires():
    """Seen on torchtitan: a new unconditional `raise` (an unimplemented path) and a check
    on a local (`closure is None`) are no validation of the command's options."""
    from scout_tui.analysis.python.checks import checks, fires
    from scout_tui.analysis.python.pyast import parse

    source = (
        "class A:\n    def load(self):\n        raise NotImplementedError\n"
        "    def step(self, closure=None):\n"
        "        if closure is not None:\n            raise ValueError\n"
        "        if closure is None and self.x == 2:\n            raise ValueError\n"
    )
    found = checks(parse(source), {"A": "a"}, frozenset({"a"}))
    assert len(found) == 3
    assert not any(fires(c, {"a.x": 2}) for c in found)


@pytest.mark.parametrize("passes_it", [False, True])
def test_a_factory_default_reaches_a_lookup_that_leaves_it_out(fresh_world, passes_it):
    """Upstream changes `attn_backend`'s default: a lookup call leaving it out builds
    another model now (TRUE); one passing it is immune (NEAR-MISS), as for a direct call."""
    repo = fresh_world.repo
    (repo / "torchtitan/models/llama3/__init__.py").write_text(_REGISTRY)
    given = "attn_backend='flex'" if passes_it else ""
    (repo / f"{EXP}/tests/test_models.py").write_text(
        "from torchtitan.models.llama3 import llama3_configs\n\n\n"
        f"def test_build():\n    assert llama3_configs['debugmodel']({given})\n"
    )
    commit_all(repo, "llama3 registry; graph_trainer builds from it", BEFORE_WINDOW)
    _edit(
        repo,
        "torchtitan/models/llama3/__init__.py",
        "def _debugmodel(attn_backend='sdpa')",
        "def _debugmodel(attn_backend='flex')",
    )
    commit_all(repo, "llama3: flex by default")
    changed = _changed(_found(fresh_world), "`llama3_configs")
    if passes_it:
        assert not changed
        return
    (it,) = changed
    assert "the experiment depends on it: called without `attn_backend` at " in it.body


def test_a_default_taken_away_says_so():
    from scout_tui.analysis.python.changes import DefaultChanged, describe

    assert describe(DefaultChanged("parameter", "b", "None", None)) == (
        "parameter `b` default `None` removed"
    )
    assert describe(DefaultChanged("field", "b", None, "1")) == "field `b` default `1` added"
