"""Cleanups scout finds from the code's own mechanisms: functions and classes nothing names
(`code_dead`), config options nothing reads (`flag_unused`), and sentences saying a pass
runs by default that an option off by default gates (`doc_default_wrong`). Each with the
near misses a name search alone would get wrong."""

from __future__ import annotations

import ast

import pytest

from scout_tui.analysis.python.default_claims import default_claims, python_prose
from scout_tui.analysis.python.unused import dynamic_module_suffixes, read_names
from scout_tui.model import Section
from scout_tui.sandbox.demo.files import EXP

from .collector_run import by_kind, commit_all, run_collector
from .conftest import TODAY


def _write(root, files: dict[str, str]) -> None:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def test_code_nothing_names_is_one_cleanup_and_what_may_be_reached_unnamed_is_not(fresh_world):
    repo = fresh_world.repo
    _write(
        repo,
        {
            f"{EXP}/helpers.py": (
                "from .plugins import Base, register\n\n\n"
                "def orphan_helper(x):\n    return x\n\n\n"
                "class OrphanBox:\n    pass\n\n\n"
                "def yaml_named(x):\n    return x\n\n\n"
                "def by_getattr(x):\n    return x\n\n\n"
                '@register("fold")\ndef registered(x):\n    return x\n\n\n'
                "class Plugin(Base):\n    pass\n\n\n"
                "def main():\n    pass\n"
            ),
            f"{EXP}/plugins.py": (
                "REGISTRY = []\n\n\n"
                "def register(key):\n    return lambda fn: fn\n\n\n"
                "class Base:\n    def __init_subclass__(cls, **kwargs):\n"
                "        REGISTRY.append(cls)\n"
            ),
            f"{EXP}/runs/fold.yaml": "step:\n  fn: yaml_named\n",
            f"{EXP}/loader.py": (
                "from . import helpers as mod\n\n\ndef pick():\n"
                '    return getattr(mod, "by_getattr")\n'
            ),
            # A module read by a name built at run time: its functions are reached unnamed.
            "torchtitan/recipes_loader.py": (
                "import importlib\n\n\ndef load(pkg, name):\n"
                '    module = importlib.import_module(f"{pkg}.recipes")\n'
                "    return getattr(module, name)\n"
            ),
            f"{EXP}/recipes.py": "def recipe_small():\n    return {}\n",
        },
    )
    commit_all(repo, "Helpers")
    found = by_kind(run_collector(fresh_world, "unused", TODAY))
    (dead,) = found["code_dead"]
    mine = [item for item in dead.items if item.startswith("helpers.py")]
    assert mine == ["helpers.py: orphan_helper", "helpers.py: OrphanBox"]
    assert not any("recipe_small" in item or "loader.py" in item for item in dead.items)
    assert dead.section is Section.OPPORTUNITIES and not dead.board_item
    assert "`helpers.py:4`" in dead.body
    assert "flag_unused" not in found


def test_dynamic_module_suffixes_need_a_built_import_and_a_built_lookup():
    both = ast.parse(
        "def f(p, k):\n    m = importlib.import_module(p + '.registry')\n    return getattr(m, k)\n"
    )
    fixed = ast.parse(
        "def f(p):\n    m = importlib.import_module(p + '.registry')\n    return getattr(m, 'x')\n"
    )
    assert dynamic_module_suffixes(both) == {"registry"}
    assert dynamic_module_suffixes(fixed) == frozenset()


def test_an_option_nothing_reads_names_its_line_and_commit(fresh_world):
    repo = fresh_world.repo
    configs = repo / EXP / "configs.py"
    text = configs.read_text().replace(
        "    passes: tuple[str, ...] = ()\n",
        "    passes: tuple[str, ...] = ()\n"
        "    stale_knob: bool = False\n"
        '    named_in_prose: bool = False\n    """Set `cfg.named_in_prose` to overlap."""\n'
        "    read_by_getattr: int = 0\n"
        "    read_in_core: bool = False\n"
        "    read_as_parameter: int = 1\n"
        "    ep: EpConfig = field(default_factory=lambda: EpConfig())\n",
    )
    text = text.replace(
        "from dataclasses import dataclass\n",
        "from dataclasses import asdict, dataclass, field\n",
    )
    text += (
        "\n\n@dataclass\nclass EpConfig:\n    chunks: int = 2\n\n\n"
        "def use(cfg):\n"
        "    # cfg.named_in_prose is read by the overlap pass\n"
        '    depth = getattr(cfg, "read_by_getattr")\n'
        "    build(**vars(cfg))\n"
        "    return depth, asdict(cfg.ep)\n\n\n"
        "def build(read_as_parameter=1, **_):\n    return read_as_parameter\n"
    )
    configs.write_text(text)
    trainer = repo / "torchtitan/trainer.py"
    trainer.write_text(
        trainer.read_text() + "\n\ndef check(config):\n    return config.read_in_core\n"
    )
    commit_all(repo, "Add knobs")
    found = by_kind(run_collector(fresh_world, "unused", TODAY))
    (unused,) = found["flag_unused"]
    # `chunks` is read by nobody the repository defines, but `cfg.ep` goes whole to
    # `asdict`: maybe read, not flagged.
    # A docstring and a comment that say `cfg.named_in_prose` read nothing.
    assert unused.items == ["--stale_knob", "--named_in_prose"]
    # A flag users set that does nothing: a P2 card (the shipped rule).
    assert unused.section is Section.ACTION_ITEMS and unused.priority.value == "P2"
    assert "(Add knobs)" in unused.body and "`configs.py:" in unused.body


def test_read_names_count_reads_not_docstrings_or_writes():
    tree = ast.parse(
        '"""stale_knob is documented here."""\n'
        "def f(cfg):\n    cfg.written = 1\n    return cfg.read, getattr(cfg, 'by_name')\n"
    )
    names = frozenset({"stale_knob", "written", "read", "by_name"})
    assert read_names(tree, names) == {"read", "by_name"}


def test_a_pass_said_to_run_by_default_that_an_off_option_gates(fresh_world):
    repo = fresh_world.repo
    _write(
        repo,
        {
            f"{EXP}/extra_passes.py": (
                "def fuse_pass(gm):\n    return gm\n\n\n"
                "def always_pass(gm):\n    return gm\n\n\n"
                "def quiet_pass(gm):\n    return gm\n"
            ),
            f"{EXP}/knobs.py": (
                "from dataclasses import dataclass\n\n\n@dataclass\nclass Knobs:\n"
                "    enable_fuse: bool = False\n"
                "    enable_always: bool = True\n"
                "    enable_quiet: bool = False\n"
            ),
            f"{EXP}/pipeline.py": (
                "from .extra_passes import always_pass, fuse_pass, quiet_pass\n\n\n"
                "def build_passes(cfg):\n"
                '    """Build the pipeline. `always_pass` is always applied."""\n'
                "    passes = []\n"
                "    # fuse_pass runs by default: it folds constants.\n"
                "    if cfg.knobs.enable_fuse:\n"
                "        passes.append(fuse_pass)\n"
                "    if cfg.knobs.enable_always:\n"
                "        passes.append(always_pass)\n"
                "    enabled = cfg.knobs.enable_quiet\n"
                "    if enabled:\n"
                "        passes.append(quiet_pass)\n"
                "    return passes\n"
            ),
        },
    )
    readme = repo / EXP / "README.md"
    readme.write_text(
        readme.read_text()
        + "\n`quiet_pass` runs by default when `--knobs.enable_quiet` is set.\n"
        + "\nThe `fuse_pass` is on by default.\n"
    )
    commit_all(repo, "Passes and knobs")
    found = by_kind(run_collector(fresh_world, "docs", TODAY))
    (wrong,) = found["doc_default_wrong"]
    assert wrong.items == ["pipeline.py: fuse_pass", "README.md: fuse_pass"]
    assert wrong.section is Section.DOCS
    assert "`enable_fuse`" in wrong.body and "`False`" in wrong.body
    assert "docs_current" not in found


def test_a_sentence_that_says_when_is_no_default_claim():
    text = (
        "# x_pass runs by default.\n"
        "# y_pass runs by default when --k.y is set.\n\n"
        "# z_pass is enabled if you ask.\n"
    )
    claims = default_claims(python_prose(text, ast.parse(text)), {"x_pass", "y_pass", "z_pass"})
    assert [c.name for c in claims] == ["x_pass"]


@pytest.mark.parametrize(
    ("hand_off", "flagged"),
    [
        ("asdict(cfg.ep)", False),
        ("getattr(cfg.ep, name)", False),  # a name scout cannot read: maybe `chunks`
        ("parallelize_fn(cfg.ep)", True),
        ('getattr(cfg.ep, "depth", None)', True),  # reads `depth` alone
    ],
)
def test_a_config_handed_to_a_function_object_of_the_repository_is_still_read_where_it_is(
    fresh_world, hand_off, flagged
):
    """`cfg.ep` handed whole to `asdict` (imported from outside the repository): what reads
    `chunks` is unknown, not flagged (NEAR-MISS). Handed to `parallelize_fn`, a parameter
    holding one of the repository's own functions: their reads are where they are, and
    none reads `chunks` — flagged (TRUE)."""
    repo = fresh_world.repo
    configs = repo / EXP / "configs.py"
    text = configs.read_text().replace(
        "    passes: tuple[str, ...] = ()\n",
        "    passes: tuple[str, ...] = ()\n"
        "    ep: EpConfig = field(default_factory=lambda: EpConfig())\n",
    )
    text = text.replace(
        "from dataclasses import dataclass\n", "from dataclasses import asdict, dataclass, field\n"
    )
    text += (
        "\n\n@dataclass\nclass EpConfig:\n    chunks: int = 2\n\n\n"
        f"def use(cfg, parallelize_fn, name):\n    return {hand_off}\n"
    )
    configs.write_text(text)
    commit_all(repo, "EP chunks")
    found = by_kind(run_collector(fresh_world, "unused", TODAY))
    said = [i for f in found.get("flag_unused", []) for i in f.items]
    assert ("--ep.chunks" in said) is flagged
