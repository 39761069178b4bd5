from __future__ import annotations

import re
from pathlib import Path

import pytest

from scout_tui.config.models import ConfigError
from scout_tui.config.profile import load_config
from scout_tui.model import Priority, Section
from tests.cli import scout


def test_shipped_default_is_the_torchtitan_profile(shipped_config):
    assert shipped_config.project.repo == "pytorch/torchtitan"
    assert shipped_config.project.experiment == "torchtitan/experiments/graph_trainer"
    assert shipped_config.project.tracking_issue == 2856
    assert (shipped_config.board.owner, shipped_config.board.number) == ("pytorch", 161)
    assert shipped_config.board.project_id is None  # looked up at run time
    assert shipped_config.windows.prior_report_days == 7
    assert shipped_config.rule("test_dropped_from_ci").priority is Priority.P0
    assert shipped_config.rule("surface_stable").section is Section.ALL_CLEAR
    targets = [surface.target for surface in shipped_config.upstream.surfaces]
    assert "torchtitan/trainer.py::Trainer.Config" in targets


def test_user_file_is_merged_over_the_default(tmp_path: Path):
    path = tmp_path / "scout.toml"
    path.write_text(
        '[project]\ntracking_issue = 99\n[rules.todo_unclassified]\nsection = "action_items"\n'
        'priority = "P2"\n'
    )
    config = load_config(path)
    assert config.project.tracking_issue == 99
    assert config.project.repo == "pytorch/torchtitan"  # untouched keys keep the default
    assert config.rule("todo_unclassified").priority is Priority.P2
    assert config.rule("todo_blocked").section is Section.FYI


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "scout.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_bad_enum_names_key_value_allowed_and_line(tmp_path):
    message = _error(
        tmp_path,
        '[windows]\nci_runs = 5\n\n[rules.todo_unclassified]\nsection = "fyi"\npriority = "P7"\n',
    )
    assert "rules.todo_unclassified.priority" in message
    assert "'P7'" in message
    assert "'P0', 'P1' or 'P2'" in message
    assert "line 6" in message


def test_bad_type_and_range(tmp_path):
    message = _error(tmp_path, "[windows]\nprior_report_days = -3\n")
    assert "windows.prior_report_days = -3" in message
    assert "greater than or equal to 1" in message
    assert "line 2" in message
    message = _error(tmp_path, '[board]\nnumber = "one-six-one"\n')
    assert "board.number = 'one-six-one'" in message


def test_unknown_key_is_named(tmp_path):
    message = _error(tmp_path, "[project]\ntracking_isue = 2856\n")
    assert "unknown key 'project.tracking_isue'" in message
    assert "line 2" in message


def test_invalid_toml_gives_line(tmp_path):
    message = _error(tmp_path, "[project\nrepo = 1\n")
    assert "not valid TOML" in message and "line 1" in message


def test_carried_forward_is_not_a_rule_section(tmp_path):
    message = _error(tmp_path, '[rules.todo_blocked]\nsection = "carried_forward"\n')
    assert "decided by reconcile" in message


def test_a_key_clash_names_the_binding_that_made_it_with_its_file_and_line(tmp_path):
    """`accept = "x"` collides with drop's default: the error names accept (what the
    person wrote), the key, the action it already does, and where it was written — in the
    checkout's scout.toml or in the user's own config file."""
    message = _error(tmp_path, '[project]\n\n[keys]\nzoom = "Z"\naccept = "x"\n')
    assert message == (
        f"{tmp_path / 'scout.toml'}:5: keys.accept = 'x' is not allowed: 'x' is already the "
        "key of drop (rebind drop too, or choose another key)"
    )
    # Rebinding both is fine: the near miss.
    path = tmp_path / "swap.toml"
    path.write_text('[keys]\naccept = "x"\ndrop = "a"\n')
    assert load_config(path).keys["accept"] == "x"
    # From the user's config file, over the checkout's.
    from scout_tui.config.profile import load_user_config, user_config_path

    user = user_config_path()
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('# mine\n[keys]\nundo = "r"\n')
    try:
        with pytest.raises(ConfigError) as info:
            load_config(None, user=load_user_config())
        assert str(info.value) == (
            f"{user}:3: keys.undo = 'r' is not allowed: 'r' is already the key of run_repro "
            "(rebind run_repro too, or choose another key)"
        )
    finally:
        user.unlink()


@pytest.mark.parametrize("key", ["up", "enter", "tab", "escape", "ctrl+c", "ctrl+p"])
def test_a_key_the_console_moves_with_is_never_rebound(tmp_path, key):
    """`accept = "up"` would strand the reviewer (up accepts, nothing moves up): refused,
    naming the file, the line, the action and what the key is for."""
    path = tmp_path / "scout.toml"
    path.write_text(f'# keys\n[keys]\naccept = "{key}"\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(
        f"{path}:3: keys.accept = '{key}' is not allowed: '{key}' is the console's own key for "
    )
    path.write_text('[keys]\naccept = "y"\n')  # an ordinary key: the near miss
    assert load_config(path).keys["accept"] == "y"


@pytest.mark.parametrize(
    ("key", "said"),
    [
        ("ctrl+shift+alt+foo", "'foo' is no key's name"),
        ("page_up", "'page_up' is no key's name"),  # Textual's is "pageup"
        ("shift+A", "'A' is already the key of accept_next"),  # (spelled with shift too)
        ("shift+a", "'A' is already the key of accept_next"),  # the terminal sends "A"
        ("a b", "a key name such as"),
    ],
)
def test_a_key_no_terminal_sends_is_refused(tmp_path, key, said):
    path = tmp_path / "scout.toml"
    path.write_text(f'[keys]\naccept = "{key}"\n')
    with pytest.raises(ConfigError, match=re.escape(said)):
        load_config(path)


@pytest.mark.parametrize("key", ["y", "Y", "exclamation_mark", "full_stop", "ctrl+y", "f5"])
def test_every_key_textual_names_is_taken(tmp_path, key):
    path = tmp_path / "scout.toml"
    path.write_text(f'[keys]\naccept = "{key}"\n')
    assert load_config(path).keys["accept"] == key


def test_key_bindings_name_the_consoles_actions(tmp_path):
    message = _error(tmp_path, '[keys]\naccpet = "y"\n')
    assert message.startswith(f"{tmp_path / 'scout.toml'}: unknown key binding keys.accpet")
    assert "accept, accept_next, demote, promote, drop" in message
    message = _error(tmp_path, '[keys]\nzoom = "z z"\n')
    assert "keys.zoom = 'z z' is not allowed" in message


def test_the_shipped_keys_bind_every_action(shipped_config):
    from scout_tui.config.models import ACTION_IDS

    assert set(shipped_config.keys) == set(ACTION_IDS)
    assert shipped_config.keys["drop"] == "x"


def test_compare_url_placeholders(tmp_path):
    message = _error(tmp_path, '[torch]\ncompare_url = "https://example.com/compare"\n')
    assert "must contain {old} and {new}" in message


def test_cli_bad_config_exit_2_one_line_no_traceback(tmp_path, sample_world):
    bad = tmp_path / "scout.toml"
    bad.write_text('[windows]\nci_runs = "many"\n')
    done = scout(
        "collect", "--repo", sample_world.repo, "--config", bad, "--cache-dir", tmp_path / "c"
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("scout: error: ")
    assert "windows.ci_runs = 'many'" in done.stderr


def test_every_rule_is_for_a_kind_some_collector_emits(shipped_config):
    """A kind declared but never emitted, or a rule for no kind, is dead configuration."""
    import inspect
    import sys

    from scout_tui.collect.base import registered

    declared = {kind.name: cls for cls in registered().values() for kind in cls.kinds}
    assert set(shipped_config.rules) == set(declared) | {"resolved"}
    for kind, cls in declared.items():
        # its module; a collector split into a package (upstream_delta): the package's
        module = inspect.getmodule(cls)
        assert module is not None
        family = (
            module.__name__ if module.__package__ == "scout_tui.collect" else module.__package__
        )
        # ... and the collect/ modules it calls into (a collector's helpers beside it)
        helpers = {
            getattr(value, "__module__", None)
            for value in vars(module).values()
            if str(getattr(value, "__module__", "")).startswith("scout_tui.collect.")
        }
        sources = [
            inspect.getsource(m)
            for name, m in list(sys.modules.items())
            if name == family
            or name.startswith(f"{family}.")
            or name in helpers - {"scout_tui.collect.base"}
        ]
        uses = sum(source.count(f'"{kind}"') for source in sources)
        assert uses >= 2, f"{cls.name} declares {kind!r} but never emits it"


def test_more_than_one_problem_is_still_one_line(tmp_path):
    message = _error(tmp_path, '[windows]\nci_runs = "x"\nstale_issue_days = "y"\n')
    assert "\n" not in message and message.endswith("(and 1 more problem(s))")


def test_a_rule_for_no_kind_of_finding_is_refused(tmp_path, sample_world):
    bad = tmp_path / "scout.toml"
    bad.write_text('[rules.pass_untestd]\nsection = "fyi"\n')
    done = scout(
        "report",
        "--repo",
        sample_world.repo,
        "--config",
        bad,
        "--cache-dir",
        tmp_path / "c",
        "--state-dir",
        tmp_path / "s",
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"scout: error: {bad}: [rules.pass_untestd] is for no kind")
    # An override of an existing kind needs only what differs.
    good = tmp_path / "good.toml"
    good.write_text('[rules.pass_untested]\npriority = "P2"\n')
    assert load_config(good).rule("pass_untested").priority is Priority.P2


def test_key_syntax(tmp_path):
    for bad in ("ctrl+", "f99", "a b", "ctrl+shift+"):
        assert "is not allowed" in _error(tmp_path, f'[keys]\nzoom = "{bad}"\n'), bad
    for good in ("z", "f12", "ctrl+z,shift+k", "insert", "exclamation_mark"):
        (tmp_path / "ok.toml").write_text(f'[keys]\nzoom = "{good}"\nundo = "ctrl+u"\n')
        assert load_config(tmp_path / "ok.toml").keys["zoom"] == good


def test_the_shipped_rules_name_kinds_scout_makes() -> None:
    """Sessions check only the kinds a user's scout.toml adds: the shipped ones must hold."""
    from scout_tui.config.profile import shipped_rule_kinds
    from scout_tui.pipeline.day import check_rule_kinds

    config = load_config()
    check_rule_kinds(config)
    assert shipped_rule_kinds() == set(config.rules)


def test_a_scout_toml_for_another_experiment_does_not_inherit_the_shipped_ones(tmp_path: Path):
    """Naming another experiment drops what the shipped profile says about graph_trainer
    (surfaces, patches, converter, workflows, its docs and config classes); what it still
    inherits that belongs to graph_trainer (tracking issue, board) is said."""
    path = tmp_path / "scout.toml"
    path.write_text('[project]\nexperiment = "torchtitan/experiments/torchft"\n')
    config = load_config(path)
    assert config.upstream.surfaces == [] and config.freshness.monkey_patches == []
    assert config.freshness.private_apis == [] and config.freshness.duplicate_pairs == []
    assert config.freshness.config_converter == "" and config.ci.workflows == []
    assert config.docs.files == ["README.md"]
    assert config.docs.root_configs == ["torchtitan/trainer.py::Trainer.Config"]
    assert config.upstream.core_paths == load_config().upstream.core_paths  # the repo's
    assert [note.split(":", 1)[0] for note in config.inherited] == [
        "[ci] workflows",
        "[project] tracking_issue = 2856 is the shipped profile's, kept for "
        "torchtitan/experiments/graph_trainer",
        "[board] number = 161 is the shipped "
        "profile's board, kept for torchtitan/experiments/graph_trainer",
    ]

    path.write_text(
        '[project]\nexperiment = "torchtitan/experiments/torchft"\n'
        "tracking_issue = 7\n[board]\nnumber = 8\n[ci]\nworkflows = ['w.yaml']\n"
        "[freshness]\nprivate_apis = ['X']\n"
    )
    config = load_config(path)
    assert config.inherited == []
    assert config.ci.workflows == ["w.yaml"] and config.freshness.private_apis == ["X"]
    # The shipped experiment's own scout.toml inherits everything, as before.
    path.write_text('[project]\nexperiment = "torchtitan/experiments/graph_trainer"\n')
    assert load_config(path).upstream.surfaces == load_config().upstream.surfaces


def test_the_key_names_taken_are_textual_s_own():
    """scout's list (kept apart from Textual: its import costs every CLI command 80 ms)
    names each ASCII punctuation key as Textual's key events do."""
    import string

    from textual.keys import _character_to_key

    from scout_tui.config.models import NAMED_KEYS

    for character in string.punctuation:
        assert _character_to_key(character) in NAMED_KEYS, character
