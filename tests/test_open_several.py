"""Morning triage over several experiments: `scout open A B …` (or a folder of them) shows
each run as a top-level node of one overview; each is triaged in its own screen, its
decisions apart, and each publishes where the reviewer's configuration for its repository
and experiment says — never where another bundle's does."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from textual.widgets import Tree

from scout_tui.model import SECTIONS, Priority, Section
from scout_tui.sandbox.demo.running import running_demo
from scout_tui.session import Session, SessionOptions
from scout_tui.tui.app import ScoutApp
from scout_tui.tui.screens.experiments import ExperimentsScreen
from scout_tui.tui.screens.triage import TriageScreen
from scout_tui.tui.widgets.findings_tree import FindingsTree
from tests.cli import demo_collect, scout
from tests.conftest import TODAY

OTHER_EXPERIMENT = "torchtitan/experiments/other_trainer"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Two bundles of two experiments (the demo's, and a copy said to be of another
    repository's experiment), and a reviewer's scout.toml for each."""
    base = tmp_path_factory.mktemp("several")
    (base / "runs").mkdir()
    with running_demo(base / "world", TODAY) as demo:
        demo_collect(demo, base, "--bundle", base / "runs" / "a-demo.json.gz")
    first = base / "runs" / "a-demo.json.gz"
    document = json.loads(gzip.decompress(first.read_bytes()))
    demo_repo = document["config"]["project"]["repo"]
    demo_experiment = document["run"]["experiment"]
    document["config"]["project"].update(repo="demo/other", experiment=OTHER_EXPERIMENT)
    document["run"]["experiment"] = OTHER_EXPERIMENT
    (base / "runs" / "b-other.json.gz").write_bytes(gzip.compress(json.dumps(document).encode()))
    configs = base / "configs"
    configs.mkdir()
    (configs / "other.toml").write_text(
        f'[project]\nrepo = "demo/other"\nexperiment = "{OTHER_EXPERIMENT}"\ntracking_issue = 9\n'
    )
    (configs / "demo.toml").write_text(
        f'[project]\nrepo = "{demo_repo}"\nexperiment = "{demo_experiment}"\ntracking_issue = 7\n'
    )
    return base, demo_repo


def open_args(base: Path, state: Path) -> list:
    # The configurations in the other order than the bundles: each bundle takes its own.
    return [
        "--config",
        base / "configs" / "other.toml",
        "--config",
        base / "configs" / "demo.toml",
        "--state-dir",
        state,
        "--cache-dir",
        state / "cache",
        "--offline",
    ]


def test_several_bundles_each_publish_to_their_own_target(bundles, tmp_path):
    base, demo_repo = bundles
    runs = base / "runs"
    done = scout(
        "open", runs / "a-demo.json.gz", runs / "b-other.json.gz", *open_args(base, tmp_path)
    )
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "publishing goes to" in line]
    assert said[0].startswith(f"scout: a-demo.json.gz: publishing goes to {demo_repo}#7 ")
    assert said[1].startswith("scout: b-other.json.gz: publishing goes to demo/other#9 ")
    other = base / "configs" / "other.toml"
    assert (  # the board other.toml does not set: the shipped experiment's, said so
        f"scout: warning: b-other.json.gz: {other}: [board] number = " in done.stderr
        and "is the shipped profile's board" in done.stderr
    )
    assert done.stdout.count("# Nightly Scout Report — 2026-12-02") == 2  # both reports
    assert done.stdout.startswith(f"==> {runs / 'a-demo.json.gz'} <==\n# Nightly Scout")
    assert f"\n==> {runs / 'b-other.json.gz'} <==\n# Nightly Scout" in done.stdout


def test_a_folder_opens_its_bundles_in_name_order(bundles, tmp_path):
    base, _ = bundles
    done = scout("open", base / "runs", *open_args(base, tmp_path))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "publishing goes to" in line]
    assert [line.split(":")[1].strip() for line in said] == ["a-demo.json.gz", "b-other.json.gz"]
    empty = tmp_path / "empty"
    empty.mkdir()
    done = scout("open", empty, "--offline", "--state-dir", tmp_path / "s")
    assert done.returncode == 2
    assert (
        done.stderr
        == f"scout: error: {empty}: no bundle or run (*.json, *.json.gz) in this folder\n"
    )


def test_a_bundle_takes_the_configuration_of_its_repository_before_another(bundles, tmp_path):
    base, demo_repo = bundles
    same_repo = tmp_path / "same-repo.toml"
    same_repo.write_text(
        f'[project]\nrepo = "{demo_repo}"\nexperiment = "torchtitan/experiments/x"\n'
    )

    def chosen(*configs: Path) -> str:
        candidates = [SessionOptions(config=c, state_dir=tmp_path / "s") for c in configs]
        [session] = Session.of_bundles([base / "runs" / "a-demo.json.gz"], candidates)
        return str(session.config.source)

    other, demo = base / "configs" / "other.toml", base / "configs" / "demo.toml"
    assert chosen(other, same_repo, demo) == str(demo)  # its repository and experiment
    assert chosen(other, same_repo) == str(same_repo)  # its repository
    # None of its repository: the first, and publishing refuses naming both (test_bundle).
    assert chosen(other) == str(other)


async def test_the_overview_shows_each_run_and_its_triage_stays_its_own(bundles, tmp_path):
    base, demo_repo = bundles
    candidates = [
        SessionOptions(config=base / "configs" / name, state_dir=tmp_path / "state", offline=True)
        for name in ("other.toml", "demo.toml")
    ]
    files = [base / "runs" / "a-demo.json.gz", base / "runs" / "b-other.json.gz"]
    sessions = Session.of_bundles(files, candidates)
    app = ScoutApp(sessions[0], load_cached=True, more=sessions[1:])
    async with app.run_test(size=(120, 40)) as pilot:
        overview = app.screen
        assert isinstance(overview, ExperimentsScreen)
        tree = overview.query_one(Tree)
        for _ in range(100):
            await pilot.pause(0.05)
            labels = [str(node.label) for node in tree.root.children]
            if all(" reviewed" in label for label in labels):
                break
        assert len(labels) == 2
        assert labels[0].startswith(f"{demo_repo} · graph_trainer · 2026-12-02")
        assert labels[1].startswith("demo/other · other_trainer · 2026-12-02")
        assert all(" 0 of 25 reviewed" in label for label in labels)  # as the screen counts
        boards = [f"board {s.config.board.owner}/{s.config.board.number}" for s in sessions]
        targets = [str(node.children[0].label) for node in tree.root.children]
        assert targets == [
            f"publishes to {demo_repo}#7, {boards[0]}",
            # other.toml sets no board: the shipped one, said so.
            f"publishes to demo/other#9, {boards[1]} (the shipped profile's: set this "
            "experiment's own)",
        ]
        ci = tree.root.children[1].children[1]
        assert str(ci.label).startswith("CI Failures  2") and "(1 P0)" in str(ci.label)
        assert tree.cursor_node is tree.root.children[0]  # enter opens a run at once

        tree.move_cursor(ci)  # the second run's CI Failures: opened there
        await pilot.press("enter")
        for _ in range(100):
            await pilot.pause(0.05)
            if isinstance(app.screen, TriageScreen) and app.screen.query_one(FindingsTree).total:
                break
        triage = app.screen
        assert isinstance(triage, TriageScreen) and triage.session is sessions[1]
        assert "demo/other#9" in triage.session.publish_target()
        findings = triage.query_one(FindingsTree)
        await pilot.pause(0.1)
        header = findings.cursor_node
        assert header is not None and header.data.section is Section.CI_FAILURES
        while findings.cursor_fingerprint is None:
            await pilot.press("down")
        assert findings.row(findings.cursor_fingerprint).finding.priority is Priority.P0
        await pilot.press("a", "minus")  # accepted, then no longer a P0
        for _ in range(100):
            await pilot.pause(0.05)
            if triage.decisions.pending == 0 and findings.reviewed == 1:
                break
        assert findings.reviewed == 1
        dropped = next(
            fp
            for fp, row in findings._finding_rows.items()
            if row.finding.section is Section.ACTION_ITEMS
        )
        findings.select_fingerprint(dropped)
        await pilot.pause(0.05)
        await pilot.press("x", *"not ours", "enter")
        for _ in range(100):
            await pilot.pause(0.05)
            if triage.decisions.pending == 0 and findings.reviewed == 2:
                break
        in_tree = {s: count for s, (_, count) in findings._section_counts.items()}

        await pilot.press("escape")  # back to every run
        assert app.screen is overview
        for _ in range(100):
            await pilot.pause(0.05)
            labels = [str(node.label) for node in tree.root.children]
            if " 2 of 25 reviewed" in labels[1]:
                break
        assert " 2 of 25 reviewed" in labels[1] and " 0 of 25 reviewed" in labels[0]  # apart
        assert tree.root.children[1].is_expanded  # opening it did not fold it
        ci = tree.root.children[1].children[1]
        assert str(ci.label) == "CI Failures  2"  # counted as decided: no P0 left
        counted = {
            str(node.label).split("  ")[0]: int(str(node.label).split("  ")[1])
            for node in tree.root.children[1].children[1:]
        }
        assert counted == {SECTIONS[s].short: n for s, n in in_tree.items()}  # as its tree
    assert sessions[0].review.decisions() == {}
    assert len(sessions[1].review.decisions()) == 2


async def test_a_past_day_s_run_is_shown_as_review_only(bundles, tmp_path, monkeypatch):
    """A bundle of a past day is reviewed, never published: the overview says so where it
    would name the target."""
    base, _ = bundles
    monkeypatch.setenv("SCOUT_TODAY", "2026-12-09")  # a week after the bundles' day
    app = both_with_the_demos_configuration(base, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        tree = await counted_overview(pilot, app)
        said = [str(node.children[0].label) for node in tree.root.children]
        assert said == ["review only: a past day's run is never published"] * 2


async def test_the_overview_tells_runs_apart_and_says_which_will_not_publish(bundles, tmp_path):
    """Each run names its file and when it was collected; a run whose configuration is of
    another repository says it will not be published (TRUE), where the other says where it
    publishes (NEAR-MISS)."""
    base, demo_repo = bundles
    app = both_with_the_demos_configuration(base, tmp_path)
    async with app.run_test(size=(160, 40)) as pilot:
        tree = await counted_overview(pilot, app)
        runs = [str(node.label) for node in tree.root.children]
        assert "a-demo.json.gz, collected " in runs[0] and "b-other.json.gz" in runs[1]
        said = [str(node.children[0].label) for node in tree.root.children]
        assert said[0].startswith(f"publishes to {demo_repo}#7")
        assert said[1] == (
            "not published: a run of demo/other, and the configuration given for it "
            f"({base / 'configs' / 'demo.toml'}) publishes to {demo_repo}"
        )


async def counted_overview(pilot, app: ScoutApp) -> Tree:
    """The overview's tree once every run is counted (its sections shown under it)."""
    tree = app.screen.query_one(Tree)
    for _ in range(100):
        await pilot.pause(0.05)
        if all(node.children for node in tree.root.children):
            break
    return tree


def both_with_the_demos_configuration(base: Path, tmp_path: Path) -> ScoutApp:
    """The console on both bundles, the demo's scout.toml given for them all."""
    options = SessionOptions(config=base / "configs" / "demo.toml", state_dir=tmp_path / "s")
    sessions = Session.of_bundles(
        [base / "runs" / "a-demo.json.gz", base / "runs" / "b-other.json.gz"], [options]
    )
    return ScoutApp(sessions[0], load_cached=True, more=sessions[1:])
