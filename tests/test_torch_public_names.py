"""Private torch names: a public alternative is what the public module exports (its
`__all__`, else its public top-level names, star imports followed); a deprecated shim
module is named with its new home; a private module still reached by attribute access is
not "no longer used". The stand-in torch is read as source, never imported."""

from __future__ import annotations

from pathlib import Path

from scout_tui.sandbox.demo.files import EXP

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY

BEFORE_WINDOW = "2026-10-01T12:00:00+00:00"

FAKE = {
    # Imported under a private alias only: `torch.utils` does not export `tree_map`.
    "utils/__init__.py": "from torch.utils._pytree import tree_map as _tree_map\n",
    "utils/_pytree.py": "def tree_map(f, tree):\n    return tree\n",
    # Exported through a star import whose `__all__` lists `Graph` and not `helper`.
    "fx/__init__.py": "from torch.fx._graph import *\n",
    "fx/_graph.py": (
        '__all__ = ["Graph"]\n\n\nclass Graph:\n    pass\n\n\ndef helper():\n    pass\n'
    ),
    # Deprecated shims: re-exports (and `sys.modules` redirects), nothing of their own, and
    # a docstring or a warning that says so.
    "distributed/_tensor/__init__.py": (
        '"""Moved to torch.distributed.tensor; kept for backward compatibility."""\n'
        "import sys\nfrom importlib import import_module\n\n"
        'submodules = ["device_mesh"]\n'
        "for submodule in submodules:\n"
        '    full = f"torch.distributed.tensor.{submodule}"\n'
        '    sys.modules[f"torch.distributed._tensor.{submodule}"] = import_module(full)\n\n'
        "from torch.distributed.tensor import DTensor\n"
    ),
    "fx/_old_graph.py": (
        "import warnings\n\nfrom torch.fx import Graph\n\n"
        'warnings.warn("torch.fx._old_graph is deprecated, use torch.fx", FutureWarning)\n'
    ),
    # Not a shim: it re-exports, but defines a function of its own.
    "_dynamo/__init__.py": (
        '"""Some of this is deprecated."""\n'
        "from torch._dynamo.eval_frame import optimize\n\n\n"
        "def reset():\n    pass\n"
    ),
    "_dynamo/eval_frame.py": "def optimize(backend):\n    pass\n",
}


def _fake_torch(root: Path) -> None:
    for name, text in FAKE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_public_alternatives_are_what_the_public_module_exports(fresh_world, run_today):
    """True cases: `torch.fx._graph.Graph` → `torch.fx.Graph` (star import, `__all__`);
    `torch.distributed._tensor.DTensor` → `torch.distributed.tensor.DTensor` (a deprecated
    shim). Near-misses: `torch.utils._pytree.tree_map` (`torch.utils` imports it only as
    `_tree_map`), `torch.fx._graph.helper` (not in `__all__`), `torch._dynamo.optimize` (a
    module with code of its own is no shim)."""
    _fake_torch(fresh_world.torch_root)
    (fresh_world.repo / EXP / "uses.py").write_text(
        "from torch.utils._pytree import tree_map\n"
        "from torch.fx._graph import Graph, helper\n"
        "from torch.fx._old_graph import Graph as OldGraph\n"
        "from torch.distributed._tensor import DTensor\n"
        "from torch._dynamo import optimize\n"
    )
    commit_all(fresh_world.repo, "private names")
    found = by_kind(run_collector(fresh_world, "freshness", TODAY))
    (alternative,) = found["private_api_public_alt"]
    assert alternative.items == [
        "torch.distributed._tensor.DTensor",
        "torch.distributed.tensor._dtensor_spec.DTensorSpec",
        "torch.fx._graph.Graph",
        "torch.fx._old_graph.Graph",
    ]
    assert (
        "- `torch.distributed._tensor.DTensor` → `torch.distributed.tensor.DTensor` "
        "(`torch.distributed._tensor` is a deprecated shim: it moved)" in alternative.body
    )
    assert "- `torch.fx._graph.Graph` → `torch.fx.Graph`\n" in alternative.body + "\n"
    assert "`torch.fx._old_graph` is a deprecated shim" in alternative.body
    assert "tree_map" not in alternative.body and "optimize" not in alternative.body


def test_a_private_module_still_reached_by_attribute_is_not_no_longer_used(fresh_world):
    """True case: an import removed for good is "no longer used". Near-miss: an import of
    `torch._functorch.config` replaced by `torch._functorch.config.x = …` after `import
    torch`: still used, not said to be gone (another file keeps the list non-empty)."""
    path = fresh_world.repo / EXP / "knobs.py"
    path.write_text(
        "from torch._functorch import config\n"
        "from torch._inductor import lowering\n\n"
        "config.activation_memory_budget = 0.5\n"
        "lowering.fallbacks = []\n"
    )
    commit_all(fresh_world.repo, "knobs", BEFORE_WINDOW)
    path.write_text("import torch\n\ntorch._functorch.config.activation_memory_budget = 0.5\n")
    commit_all(fresh_world.repo, "knobs through attributes")
    (private,) = by_kind(run_collector(fresh_world, "freshness", TODAY))["private_api"]
    assert "No longer used: `torch._inductor.lowering`." in private.body
    assert "torch._functorch.config`" not in private.body.split("No longer used:")[1]
