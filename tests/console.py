"""The console on the demo's world, for the Pilot tests: a sample repository, its local
GitHub, a collection made once; each test gets its own state store."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from scout_tui.sandbox.demo.running import RunningDemo, running_demo
from scout_tui.session import Session, SessionOptions
from scout_tui.tui.app import ScoutApp
from scout_tui.tui.widgets.findings_tree import FindingsTree
from tests.conftest import TODAY

FROZEN = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)  # the clock of the snapshots


@contextmanager
def collected_demo(base: Path) -> Iterator[RunningDemo]:
    """The demo's world, running, with the day's run collected and cached."""
    with running_demo(base, TODAY) as demo:
        Session(demo.session_options(today=TODAY)).collect()
        yield demo


# Surfaces of a file the sample has, that the file never held: scout.toml's own problems.
NEVER_THERE = ("MoE.route", "MoE.balance")


def watch_missing_surfaces(demo: RunningDemo) -> None:
    """The demo's scout.toml told to watch surfaces the sample never had."""
    with demo.sample.config.open("a", encoding="utf-8") as config:
        for name in NEVER_THERE:
            config.write(
                f'\n[[upstream.surfaces]]\nname = "{name} signature"\n'
                f'target = "torchtitan/models/common/moe.py::{name}"\ncheck = "signature"\n'
            )


@contextmanager
def demo_with_config_problems(base: Path) -> Iterator[RunningDemo]:
    """`collected_demo`, its scout.toml watching surfaces the sample never had."""
    with running_demo(base, TODAY) as demo:
        watch_missing_surfaces(demo)
        Session(demo.session_options(today=TODAY)).collect()
        yield demo


def options(demo: RunningDemo, state: Path, **changes) -> SessionOptions:
    base = dataclasses.replace(demo.session_options(today=TODAY), state_dir=state)
    return dataclasses.replace(base, **changes)


def console(demo: RunningDemo, state: Path, **changes) -> ScoutApp:
    session = Session(options(demo, state, **changes))
    return ScoutApp(session, session.cached_run())


async def settle(pilot, app: ScoutApp, seconds: float = 0.05) -> None:
    """Until the decisions worker has nothing queued, GitHub's check has answered (it starts
    once the findings are on screen) and the screen is idle."""
    for _ in range(200):
        await pilot.pause(seconds)
        if (
            app.triage.decisions.pending == 0
            and app.triage.collection is None
            and app.triage.publish_flow.github_ok is not None
        ):
            break
    await pilot.pause(seconds)


def tree(app: ScoutApp) -> FindingsTree:
    return app.query_one(FindingsTree)


def visible_titles(app: ScoutApp) -> list[str]:
    found = []

    def walk(node):
        for child in node.children:
            if child.data is not None and child.data.fingerprint:
                found.append(tree(app).row(child.data.fingerprint).finding.title)
            walk(child)

    walk(tree(app).root)
    return found


async def cursor_to(pilot, app: ScoutApp, predicate) -> str:
    """Put the cursor on the first finding the predicate accepts; its fingerprint."""
    for fp, row in tree(app)._finding_rows.items():
        if predicate(row.finding):
            tree(app).select_fingerprint(fp)
            await pilot.pause(0.05)
            assert tree(app).cursor_fingerprint == fp
            return fp
    raise AssertionError("no such finding")


async def mark(pilot, app: ScoutApp, fingerprints: list[str]) -> None:
    """`space` on each, as a reviewer marks them."""
    for fp in fingerprints:
        tree(app).select_fingerprint(fp)
        await pilot.pause(0.05)
        await pilot.press("space")


async def publish_modal(pilot, app: ScoutApp):
    """`P`, then the confirmation modal once the board is read."""
    from scout_tui.tui.screens.publish import ConfirmPublish

    await pilot.press("P")
    for _ in range(100):
        await pilot.pause(0.1)
        if isinstance(app.screen, ConfirmPublish):
            break
    return app.screen


async def confirm_publish(pilot, app: ScoutApp) -> None:
    """`y` in the modal, then until the progress screen says it finished."""
    from scout_tui.tui.screens.publish import PublishProgress

    await pilot.press("y")
    for _ in range(200):
        await pilot.pause(0.1)
        if isinstance(app.screen, PublishProgress) and app.screen.finished:
            break
    assert app.screen.finished


async def first_test(pilot, app: ScoutApp) -> None:
    """When `c` or `r` asks which failing test, the first."""
    from scout_tui.tui.screens.repro import PickTest

    await pilot.pause(0.05)
    if isinstance(app.screen, PickTest):
        await pilot.press("enter")
        await pilot.pause(0.05)


async def mark_section(pilot, app: ScoutApp, section) -> set[str]:
    """`space` on `section`'s header, as a reviewer marks a section; what is marked then."""
    header = next(node for node in tree(app).root.children if node.data.section is section)
    tree(app).move_cursor(header)
    await pilot.pause(0.05)
    await pilot.press("space")
    return set(tree(app).marked)
