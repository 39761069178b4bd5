from __future__ import annotations

import ast

import pytest

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.changes import (
    Added,
    DefaultChanged,
    KindChanged,
    Removed,
    ReturnsChanged,
    TypeChanged,
    change_of,
    describe,
    item_words,
)
from scout_tui.collect.upstream_delta.surfaces import compare_surface
from scout_tui.config.models import Surface
from scout_tui.model import Section, fingerprint, item_digest

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY


def test_surfaces_on_the_sample(sample_world):
    result = run_collector(sample_world, "upstream_delta", TODAY)
    assert result.collectors[0].state == "done", result.collectors[0].reason
    found = by_kind(result)
    changed = {f.title.split(" changed upstream")[0]: f for f in found["surface_changed"]}
    assert set(changed) == {
        "Trainer.Config fields",
        "Trainer.post_dataloading_process() return tuple",
        "FlexAttention.forward signature",
    }
    # Its items are the changes' keys: data, read back as the changes themselves.
    assert [change_of(i) for i in changed["Trainer.Config fields"].items] == [
        Added("field", "gradient_accumulation_steps"),
        DefaultChanged("field", "steps", "1000", "2000"),
    ]
    assert [
        change_of(i) for i in changed["Trainer.post_dataloading_process() return tuple"].items
    ] == [ReturnsChanged("a 4-tuple", "a 3-tuple")]
    assert [change_of(i) for i in changed["FlexAttention.forward signature"].items] == [
        KindChanged("block_mask", "keyword-only", "positional"),
        Added("parameter", "scale", "keyword-only"),
    ]
    # Each change says why the experiment depends on it (what makes it an Action Item).
    assert (
        "— the experiment depends on it: its result unpacked into 3 names at "
        "torchtitan/experiments/graph_trainer/trainer.py:19"
        in changed["Trainer.post_dataloading_process() return tuple"].body
    )
    assert (
        "the experiment depends on it: patched at torchtitan/experiments/graph_trainer/"
        "trainer.py:14" in changed["FlexAttention.forward signature"].body
    )
    flex = changed["FlexAttention.forward signature"]
    assert "-    def forward(self, q, k, v, block_mask=None):" in flex.evidence.diff
    assert "+    def forward(self, q, k, v, *, block_mask=None, scale=None):" in flex.evidence.diff
    assert "FlexAttention.forward takes keyword-only" in flex.body  # the commit that did it
    assert "Grow Trainer.Config" not in flex.body  # ... and only that one
    assert flex.priority.value == "P1"
    # Yesterday's report was the morning's, before the change landed: new today.
    assert flex.section is Section.ACTION_ITEMS
    assert flex.first_reported is None

    # The stable surfaces are one All Clear line, not five; yesterday's one-line-per-surface
    # markers still match it.
    (stable,) = found["surface_stable"]
    assert sorted(stable.items) == [
        "AllToAllTokenDispatcher.combine signature",
        "AllToAllTokenDispatcher.dispatch signature",
        "CompileConfig fields",
        "LocalTokenDispatcher.combine signature",
        "LocalTokenDispatcher.dispatch signature",
        "MoE.forward signature",
        "ParallelDims properties",
        "ParallelDims.build_mesh() signature",
    ]
    assert stable.title.startswith("Unchanged since 2026-12-01: 8 watched surfaces and ")
    assert stable.section is Section.ALL_CLEAR
    assert (
        fingerprint("surface_stable", "torchtitan/config/configs.py::CompileConfig")
        in stable.aliases
    )
    # Every surface the shipped scout.toml names is in the sample: nothing to warn of.
    assert "surface_not_found" not in found and result.config_warnings == []

    # Nothing in the experiment imports its module or hand-rolls what it does: no
    # opportunity, a line in the run's record (`_private_helper` is not public).
    assert "new_public_api" not in found
    notes = [n for state in result.collectors for n in state.notes]
    assert (
        "New upstream API not for the experiment in torchtitan/distributed/bucketing.py: "
        "bucket_all_gathers, added by " in " ".join(notes)
    )
    (constructor,) = found["new_constructor"]
    assert constructor.items == ["from_world_size"]
    # ... and where the experiment builds a ParallelDims by hand, which could use it.
    assert [(f.path, f.line) for f in constructor.files][1:] == [
        ("torchtitan/experiments/graph_trainer/trainer.py", 7)
    ]
    (model,) = found["new_model"]
    assert model.files[0].path == "torchtitan/models/qwen9"
    (commits,) = found["upstream_commits"]
    assert len(commits.items) == 2 and commits.section is Section.FYI
    # The sample window's one commit that also changed the experiment says so.
    assert commits.title.endswith(", 1 of them also changing the experiment")


def test_as_of_a_past_day_ignores_later_history(sample_world):
    # Three days ago nothing had changed yet: every surface is stable, nothing is new.
    from datetime import timedelta

    result = run_collector(sample_world, "upstream_delta", TODAY - timedelta(days=3), priors=False)
    kinds = by_kind(result)
    assert "surface_changed" not in kinds and "new_public_api" not in kinds
    (stable,) = kinds["surface_stable"]
    assert len(stable.items) == 11


def surface(check, qualname="C.f"):
    return Surface(name="s", target=f"m.py::{qualname}", check=check)


def node(source, qualname="C.f"):
    return pyast.find(ast.parse(source), qualname)


def _said(changes):
    return [describe(change) for change in changes]


def test_compare_surface_cases():
    old = node("class C:\n    def f(self, a, b=1, *args, c, **kw): return a, b\n")
    renamed = node("class C:\n    def f(self, x, b=2, *args, c, **kw): return a, b, c\n")
    changes = compare_surface(surface("signature"), old, renamed)
    assert changes == [
        Removed("parameter", "a"),
        DefaultChanged("parameter", "b", "1", "2"),
        Added("parameter", "x", "positional", required=True, position=0),
    ]
    assert _said(changes) == [
        "parameter `a` removed",
        "parameter `b` default `1` → `2`",
        "parameter `x` added (positional)",
    ]
    assert _said(compare_surface(surface("returns"), old, renamed)) == [
        "returns a 3-tuple (was a 2-tuple)"
    ]
    reordered = node("class C:\n    def f(self, b=1, a=None, *args, c, **kw): pass\n")
    assert "parameters reordered: self, b, a, args, c, kw" in _said(
        compare_surface(surface("signature"), old, reordered)
    )
    props_old = node("class C:\n    @property\n    def a(self): ...\n", "C")
    props_new = node("class C:\n    @property\n    def b(self): ...\n    def a(self): ...\n", "C")
    assert _said(compare_surface(surface("properties", "C"), props_old, props_new)) == [
        "property `a` removed",
        "property `b` added",
    ]
    fields_old = node("class C:\n    a: int = 1\n    K: ClassVar[int] = 0\n", "C")
    fields_new = node("class C:\n    a: str = 1\n", "C")
    assert compare_surface(surface("fields", "C"), fields_old, fields_new) == [
        TypeChanged("field", "a", "int", "str")
    ]
    function = node("def C(): pass\n", "C")
    assert _said(compare_surface(surface("fields", "C"), fields_old, function)) == [
        "`C` is no longer a class"
    ]


def test_rewording_every_change_changes_no_judgement(sample_world, monkeypatch):
    """The words of a change are made once, for the report: with every one reworded, the
    same findings come out, with the same fingerprints, kinds, sections, priorities and
    item digests (the report's markers), and the words are the new ones."""
    import scout_tui.analysis.python.changes
    import scout_tui.collect.upstream_delta.collector
    import scout_tui.collect.upstream_delta.new_api
    import scout_tui.collect.upstream_delta.overrides
    import scout_tui.collect.upstream_delta.surfaces

    package = scout_tui.collect.upstream_delta

    def judged():
        result = run_collector(sample_world, "upstream_delta", TODAY)
        # each finding, its items' digests, and how many of its changes the experiment
        # does not depend on
        return sorted(
            (
                f.fingerprint,
                f.kind,
                f.section,
                f.priority,
                sorted(item_digest(item) for item in f.items),
                f.body.count("(not used by the"),
            )
            for f in [*result.findings, *result.left_out]
        ), result

    said, _ = judged()
    assert any(kind == "surface_changed" for _, kind, *_ in said)
    assert any(digests for *_, digests, _ in said)
    assert any(unused for *_, unused in said)  # some changes bite, some do not
    modules = (
        scout_tui.analysis.python.changes,
        package.collector,
        package.new_api,
        package.overrides,
        package.surfaces,
    )
    for module in modules:
        if hasattr(module, "describe"):
            monkeypatch.setattr(module, "describe", lambda c: f"⟨{describe(c)[::-1]}⟩")
    reworded, result = judged()
    assert reworded == said
    changed = [f for f in result.findings if f.kind == "surface_changed"]
    assert changed and all("⟨" in f.body for f in changed)  # the words did change
    assert all(item_words(i).startswith("⟨") for f in changed for i in f.items)


def test_surfaces_that_moved_before_the_window_are_followed_and_said(fresh_world, sample_world):
    """scout.toml names surfaces where the code no longer is: a file renamed, a class moved
    to another module, a method deleted. Each is one configuration warning naming the
    commit; a certain new home is followed (its finding keeps its configured key); nothing
    of it is a finding of the report."""
    import subprocess

    repo = fresh_world.repo
    (repo / "torchtitan/models/moe").mkdir()
    subprocess.run(
        ["git", "mv", "torchtitan/models/common/moe.py", "torchtitan/models/moe/moe.py"],
        cwd=repo,
        check=True,
    )
    configs = repo / "torchtitan/config/configs.py"
    tree = ast.parse(configs.read_text())
    [compile_config] = [
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "CompileConfig"
    ]
    lines = configs.read_text().splitlines(keepends=True)
    start = compile_config.lineno - 1 - len(compile_config.decorator_list)
    moved = "from dataclasses import dataclass, field\n\n\n" + "".join(
        lines[start : compile_config.end_lineno]
    )
    configs.write_text(
        "".join(lines[:start] + lines[compile_config.end_lineno :])
        + "\nfrom torchtitan.config.compile import CompileConfig  # noqa\n"
    )
    (repo / "torchtitan/config/compile.py").write_text(moved)
    dims = repo / "torchtitan/distributed/parallel_dims.py"
    module = ast.parse(dims.read_text())
    [klass] = [n for n in module.body if isinstance(n, ast.ClassDef)]
    [build] = [n for n in klass.body if getattr(n, "name", "") == "build_mesh"]
    text = dims.read_text().splitlines(keepends=True)
    dims.write_text("".join(text[: build.lineno - 1] + text[build.end_lineno :]))
    # Long before the window: at the baseline and at HEAD alike.
    sha = commit_all(repo, "Reorganise models and configs", "2026-10-01T12:00:00+00:00")

    result = run_collector(fresh_world, "upstream_delta", TODAY)
    assert result.collectors[0].state == "done", result.collectors[0].reason
    found = by_kind(result)
    warned = {w.subject.split(" ", 1)[1]: w for w in result.config_warnings}
    moe = warned["torchtitan/models/common/moe.py::MoE.forward"]
    assert moe.moved_to == "torchtitan/models/moe/moe.py::MoE.forward"
    assert moe.commit == sha and "Reorganise models and configs" in moe.message
    assert "Followed today" in moe.message
    compile_ = warned["torchtitan/config/configs.py::CompileConfig"]
    assert compile_.moved_to == "torchtitan/config/compile.py::CompileConfig"
    mesh = warned["torchtitan/distributed/parallel_dims.py::ParallelDims.build_mesh"]
    assert mesh.moved_to is None and mesh.commit == sha and "removed in" in mesh.message
    # Followed: compared at the new home, under the key scout.toml gives (no "new" finding).
    (stable,) = found["surface_stable"]
    assert "MoE.forward signature" in stable.items and "CompileConfig fields" in stable.items
    # under the key scout.toml gives, not the new home's
    assert (
        fingerprint("surface_stable", "torchtitan/models/common/moe.py::MoE.forward")
        in stable.aliases
    )
    assert "surface_not_found" not in found
    assert not any("build_mesh" in f.title for f in result.findings)


def test_a_change_the_experiment_adapted_in_the_same_commit_is_fyi(fresh_world):
    """One commit changes CompileConfig upstream and the experiment code that uses it: FYI,
    naming the commit; yesterday's "changed" marker still matches it."""
    from scout_tui.model import fingerprint

    repo = fresh_world.repo
    configs = repo / "torchtitan/config/configs.py"
    added = '    backend: str = "inductor"\n    fullgraph: bool = True\n'
    configs.write_text(configs.read_text().replace('    backend: str = "inductor"\n', added))
    uses = repo / "torchtitan/experiments/graph_trainer/compile_setup.py"
    uses.write_text(
        "from torchtitan.config.configs import CompileConfig\n\n\n"
        "def setup(config: CompileConfig):\n    return config.fullgraph\n"
    )
    sha = commit_all(
        repo,
        "CompileConfig.fullgraph, used by graph_trainer",
        f"{TODAY.isoformat()}T20:00:00+00:00",
    )  # inside the window
    found = by_kind(run_collector(fresh_world, "upstream_delta", TODAY))
    # One FYI line for every change that does not bite; yesterday's markers still match it.
    assert "surface_adapted" not in found
    (quiet,) = found["dependencies_changed"]
    assert (
        "- CompileConfig fields: field `fullgraph` added (adapted in the same commit)" in quiet.body
    )
    assert quiet.section is Section.FYI and quiet.priority is None
    target = "torchtitan/config/configs.py::CompileConfig"
    assert {fingerprint("surface_changed", target), fingerprint("surface_adapted", target)} <= set(
        quiet.aliases
    )
    assert not any("CompileConfig" in f.title for f in found.get("surface_changed", []))
    # ... and the list of upstream commits marks it.
    (commits,) = found["upstream_commits"]
    assert commits.title.endswith(", 2 of them also changing the experiment")
    assert (
        f"`{sha[:10]}` CompileConfig.fullgraph, used by graph_trainer (Sample Dev) — also "
        "changed the experiment" in commits.body
    )


def test_a_change_the_experiment_does_not_use_is_all_clear(fresh_world):
    """MoE.forward gains a keyword parameter with a default; the experiment calls it with
    one argument and never overrides it: nothing of it breaks, so it is FYI. Once the
    experiment passes that parameter, it depends on it: an Action Item naming the call."""
    repo = fresh_world.repo
    day = TODAY.isoformat()
    user = repo / "torchtitan/experiments/graph_trainer/moe_user.py"
    user.write_text(
        "from torchtitan.models.common.moe import MoE\n\n\n"
        "def run(moe: MoE, x):\n    return moe.forward(x)\n"
    )
    commit_all(repo, "graph_trainer runs MoE", f"{day}T19:00:00+00:00")
    moe = repo / "torchtitan/models/common/moe.py"
    moe.write_text(
        moe.read_text().replace("def forward(self, x):", "def forward(self, x, *, capacity=1.0):")
    )
    commit_all(repo, "MoE capacity", f"{day}T20:00:00+00:00")  # upstream only
    found = by_kind(run_collector(fresh_world, "upstream_delta", TODAY))
    (unused,) = found["dependencies_unaffected"]
    assert (
        "- MoE.forward signature: parameter `capacity` added (keyword-only) (not in what "
        "the experiment uses)"
    ) in unused.body
    assert unused.section is Section.ALL_CLEAR  # changed, nothing it uses: all clear
    assert not any(f.title.startswith("MoE.forward") for f in found.get("surface_changed", []))

    user.write_text(
        user.read_text() + "\n\ndef scaled(moe: MoE, x):\n    return moe.forward(x, capacity=0.5)\n"
    )
    commit_all(repo, "graph_trainer sets the capacity", f"{day}T20:30:00+00:00")
    found = by_kind(run_collector(fresh_world, "upstream_delta", TODAY))
    [changed] = [f for f in found["surface_changed"] if f.title.startswith("MoE.forward")]
    assert (
        "parameter `capacity` added (keyword-only) — the experiment depends on it: "
        "called with `capacity=` at torchtitan/experiments/graph_trainer/moe_user.py:"
        in changed.body
    )


def test_a_name_that_moved_is_not_new_api_and_an_imported_module_says_so(fresh_world):
    """`bucket_all_gathers` appears in a new module, but another module defined it at the
    baseline: it moved, it is not new. A new name in a module the experiment imports from
    says so."""
    repo = fresh_world.repo
    old = repo / "torchtitan/distributed/old_bucketing.py"
    old.write_text("def regroup(graph):\n    return graph\n")
    user = repo / "torchtitan/experiments/graph_trainer/regroup_user.py"
    user.write_text("from torchtitan.distributed.linear import Linear\n")
    (repo / "torchtitan/distributed/linear.py").write_text("class Linear:\n    pass\n")
    commit_all(repo, "old bucketing", "2026-10-01T12:00:00+00:00")  # before the window
    old.unlink()
    (repo / "torchtitan/distributed/regrouping.py").write_text(
        "def regroup(graph):\n    return graph\n"
    )
    (repo / "torchtitan/distributed/linear.py").write_text(
        "class Linear:\n    pass\n\n\nclass AllGatherLinear(Linear):\n    pass\n"
    )
    commit_all(repo, "Move regroup; AllGatherLinear", f"{TODAY.isoformat()}T20:00:00+00:00")
    run = run_collector(fresh_world, "upstream_delta", TODAY)
    found = by_kind(run)
    titles = [f.title for f in found.get("new_public_api", [])]
    assert not any("regroup" in t for t in titles), titles  # moved, not new
    # Importing from its module makes a new name no opportunity by itself: a line in the
    # run's record (the experiment's own code speaking of it does: see below).
    assert not any("linear.py" in t for t in titles), titles
    notes = " ".join(n for state in run.collectors for n in state.notes)
    assert "torchtitan/distributed/linear.py: AllGatherLinear" in notes


def test_a_new_name_the_experiment_already_imports_is_no_opportunity(fresh_world):
    repo = fresh_world.repo
    (repo / "torchtitan/distributed/linear.py").write_text("class Linear:\n    pass\n")
    commit_all(repo, "linear", "2026-10-01T12:00:00+00:00")  # before the window
    (repo / "torchtitan/distributed/linear.py").write_text(
        "class Linear:\n    pass\n\n\nclass RowLinear(Linear):\n    pass\n\n\n"
        "class ColLinear(Linear):\n    pass\n"
    )
    commit_all(repo, "RowLinear and ColLinear", f"{TODAY.isoformat()}T19:00:00+00:00")
    user = repo / "torchtitan/experiments/graph_trainer/row_user.py"
    user.write_text("from torchtitan.distributed.linear import RowLinear\n")
    commit_all(repo, "graph_trainer uses RowLinear")
    run = run_collector(fresh_world, "upstream_delta", TODAY)
    assert "new_public_api" not in by_kind(run)  # importing from the module is not a sign
    notes = " ".join(n for state in run.collectors for n in state.notes)
    assert "linear.py: ColLinear." in notes  # RowLinear is already in use: not news to it


def test_a_surface_whose_file_moved_inside_the_window_is_compared_not_called_stable(fresh_world):
    """Trainer.Config's file is renamed and a field changes in the window: the surface is
    compared with where it was at the baseline, not taken as stable because its new file
    did not exist then."""
    import subprocess

    repo = fresh_world.repo
    subprocess.run(
        ["git", "mv", "torchtitan/config/configs.py", "torchtitan/config/options.py"],
        cwd=repo,
        check=True,
    )
    options = repo / "torchtitan/config/options.py"
    options.write_text(
        options.read_text().replace('backend: str = "inductor"', 'backend: str = "eager"')
    )
    (repo / "torchtitan/trainer.py").write_text(
        (repo / "torchtitan/trainer.py").read_text().replace("config.configs", "config.options")
    )
    commit_all(repo, "configs.py is options.py; eager by default")
    config = fresh_world.config
    config.write_text(
        config.read_text() + '\n[[upstream.surfaces]]\nname = "CompileConfig '
        'fields"\ntarget = "torchtitan/config/options.py::CompileConfig"\n'
        'check = "fields"\n'
    )
    found = by_kind(run_collector(fresh_world, "upstream_delta", TODAY))
    changed = [f for f in found.get("surface_changed", []) if f.title.startswith("CompileConfig")]
    said = changed[0].body if changed else found["dependencies_unaffected"][0].body
    assert "field `backend` default `'inductor'` → `'eager'`" in said
    (stable,) = found["surface_stable"]
    assert "CompileConfig fields" not in stable.items


@pytest.mark.parametrize("own", ["def", "local", "taken_up"])
def test_a_new_api_whose_terms_the_experiment_uses_is_its_own_opportunity(fresh_world, own):
    """`AllGatherLinear` is new; the experiment has an `all_gather_matmul` of its own: an
    opportunity naming the shared term (TRUE). Only a local variable `all_gather_out` of its
    code shares the term (NEAR-MISS), or the commit that added it also changed graph_trainer
    (it took it up): no opportunity. `DistMuon` shares nothing: no opportunity either."""
    repo = fresh_world.repo
    (repo / "torchtitan/experiments/graph_trainer/tp_by_hand.py").write_text(
        "def all_gather_matmul(x, w):\n    return x @ w\n"
        if own != "local"
        else "def run(x, w):\n    all_gather_out = x @ w\n    return all_gather_out\n"
    )
    commit_all(repo, "graph_trainer's own all-gather matmul", "2026-10-01T12:00:00+00:00")
    (repo / "torchtitan/distributed/linear.py").write_text("class AllGatherLinear:\n    pass\n")
    (repo / "torchtitan/distributed/muon.py").write_text("class DistMuon:\n    pass\n")
    if own == "taken_up":
        (repo / "torchtitan/experiments/graph_trainer/uses_it.py").write_text(
            "GEMM_BACKEND = 'all_gather_linear'\n"
        )
    commit_all(repo, "AllGatherLinear; DistMuon")
    result = run_collector(fresh_world, "upstream_delta", TODAY)
    apis = by_kind(result).get("new_public_api", [])
    assert [f.items for f in apis] == ([["AllGatherLinear"]] if own == "def" else [])
    if own == "def":
        assert "The experiment's own functions or classes speak of `all_gather`" in apis[0].body
    notes = " ".join(n for state in result.collectors for n in state.notes)
    assert "torchtitan/distributed/muon.py: DistMuon" in notes
    if own == "taken_up":
        assert "linear.py: AllGatherLinear, added by " in notes


def test_an_alternate_constructor_builds_the_class_a_static_helper_does_not():
    """`from_size` (builds `cls`), `make` (says it returns `C`) and `empty` (builds `C`) are
    ways to get a C; `compiled_kernel`, a staticmethod that runs something and returns a
    tuple, and `names`, a classmethod returning a list, are not (near-misses)."""
    import ast

    from scout_tui.analysis.python.pyast import is_constructor

    tree = ast.parse(
        "class C:\n"
        "    @classmethod\n    def from_size(cls, n):\n        obj = cls()\n        return obj\n"
        "    @staticmethod\n    def make(n) -> 'C':\n        return build(n)\n"
        "    @staticmethod\n    def empty():\n        return C()\n"
        "    @staticmethod\n    def compiled_kernel(q, k):\n        return run(q, k), None\n"
        "    @classmethod\n    def names(cls):\n        return ['a']\n"
    )
    (cls,) = tree.body
    built = {f.name: is_constructor(f, "C") for f in cls.body if isinstance(f, ast.FunctionDef)}
    assert built == {
        "from_size": True,
        "make": True,
        "empty": True,
        "compiled_kernel": False,
        "names": False,
    }


def test_a_renamed_api_is_not_a_new_one():
    """`TrainContext` → `SpmdContext` and `get_train_context` → `get_spmd_context` in one
    module: renames (true case). Two new functions where one went: which is new is a guess,
    so both are said (near-miss); a new class where none went is new."""
    import ast

    from scout_tui.collect.upstream_delta.new_api import _not_renamed

    old = ast.parse("class TrainContext: ...\ndef get_train_context(): ...\ndef keep(): ...\n")
    new = ast.parse("class SpmdContext: ...\ndef get_spmd_context(): ...\ndef keep(): ...\n")
    assert _not_renamed(new, old, ["SpmdContext", "get_spmd_context"]) == []
    grown = ast.parse(
        "class SpmdContext: ...\nclass Mesh: ...\ndef get_spmd_context(): ...\n"
        "def unfold(): ...\ndef keep(): ...\n"
    )
    appeared = ["Mesh", "SpmdContext", "get_spmd_context", "unfold"]
    assert _not_renamed(grown, old, appeared) == appeared
