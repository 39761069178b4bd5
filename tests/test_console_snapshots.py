"""What the console looks like: SVG snapshots of its main screens (pytest-textual-snapshot),
deterministic — a frozen clock and rate limit, the demo's fixed repository and dates.
`pytest --snapshot-update` rewrites them after a deliberate change; look at the SVGs first."""

from __future__ import annotations

import dataclasses

import pytest

from scout_tui.model import Section
from scout_tui.tui.screens.publish import ConfirmPublish
from scout_tui.tui.widgets.status_line import StatusLine
from tests.console import FROZEN, collected_demo, console, settle, tree


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    with collected_demo(tmp_path_factory.mktemp("snapshots")) as running:
        yield running


def frozen(app) -> None:
    status = app.query_one(StatusLine)
    status.clock = lambda: FROZEN
    status.collected_at = FROZEN.replace(hour=7)
    status.online, status.rate = "online", "rate 4990/5000"


def before(select=None, then=()):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot, app)
        frozen(app)
        if select is not None:
            for fp, row in tree(app)._finding_rows.items():
                if select(row.finding):
                    tree(app).select_fingerprint(fp)
                    break
            await pilot.pause(0.1)
        for key in then:
            await pilot.press(key)
        await settle(pilot, app)
        frozen(app)
        await pilot.pause(0.1)

    return run_before


def test_the_tree_at_80x24(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")
    assert snap_compare(app, terminal_size=(80, 24), run_before=before())


def test_the_tree_at_60x20(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")
    assert snap_compare(app, terminal_size=(60, 20), run_before=before())


def test_a_ci_failure_with_its_log(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")
    assert snap_compare(
        app, terminal_size=(120, 40), run_before=before(lambda f: f.section is Section.CI_FAILURES)
    )


def test_a_signature_diff(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")
    assert snap_compare(
        app,
        terminal_size=(120, 40),
        run_before=before(lambda f: f.kind == "surface_changed" and bool(f.evidence.diff)),
    )


def test_the_help_screen(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")
    assert snap_compare(app, terminal_size=(100, 32), run_before=before(then=["question_mark"]))


def test_the_help_screen_at_80x24(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")
    assert snap_compare(app, terminal_size=(80, 24), run_before=before(then=["question_mark"]))


def test_the_publish_modal(demo, tmp_path, snap_compare):
    app = console(demo, tmp_path / "state")

    async def run_before(pilot) -> None:
        await before()(pilot)
        await pilot.press("P")
        for _ in range(100):
            await pilot.pause(0.1)
            if isinstance(pilot.app.screen, ConfirmPublish):
                break
        screen = pilot.app.screen
        # The local GitHub's port and the demo's folder change every run: the snapshot
        # names fixed ones.
        target = screen.proposal.target.replace(demo.github.url, "http://127.0.0.1:8700")
        target = target.replace(str(demo.sample.config), "/demo/scout.toml")
        proposal = dataclasses.replace(screen.proposal, target=target)
        pilot.app.pop_screen()
        pilot.app.push_screen(ConfirmPublish(proposal))
        await pilot.pause(0.2)

    assert snap_compare(app, terminal_size=(100, 32), run_before=run_before)
