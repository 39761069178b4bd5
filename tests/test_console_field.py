"""The console where its users are: a repro run on the box (and stopped, its workers with
it), a finding edited in $EDITOR, a link with no display, the edit file's header."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from scout_tui.model import Priority, Section
from scout_tui.tui.edit_document import BadDocument, finding_document, parse_document
from scout_tui.tui.screens.repro import ConfirmRepro
from scout_tui.tui.widgets.finding_panes import graphical_browser
from scout_tui.tui.widgets.log_pane import LogPane
from tests.console import (
    NEVER_THERE,
    collected_demo,
    console,
    cursor_to,
    demo_with_config_problems,
    first_test,
    settle,
    tree,
)
from tests.test_process import running, wait_for

SIZE = (100, 32)
STAND_IN = """#!/bin/bash
echo "starting $NGPU workers"
sleep 600 &
echo "worker $!" > "$SCOUT_TEST_PIDS"
for step in 1 2 3; do echo "step $step loss 2.$step"; done
wait
"""


def stand_in_repro(demo) -> None:
    """torchrun stands in: run_train.sh becomes a shell and one GPU worker."""
    script = demo.sample.repo / "run_train.sh"
    script.write_text(STAND_IN)
    script.chmod(0o755)


async def ask_repro(pilot, app) -> ConfirmRepro:
    """On the first finding with a repro, `r`: the confirmation modal."""
    await settle(pilot, app)
    await cursor_to(pilot, app, lambda f: f.evidence.repro is not None)
    await pilot.press("r")
    await first_test(pilot, app)
    assert await until(pilot, lambda: isinstance(app.screen, ConfirmRepro))
    return app.screen


async def until(pilot, predicate, seconds: float = 20) -> bool:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return True
        await pilot.pause(0.05)
    return predicate()


async def test_a_repro_is_asked_run_streamed_and_stopped_with_its_workers(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    monkeypatch.setenv("SCOUT_TEST_PIDS", str(pids))
    with collected_demo(tmp_path / "world") as demo:
        stand_in_repro(demo)
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            asked = await ask_repro(pilot, app)
            assert asked.command.startswith("NGPU=") and asked.cwd == str(demo.sample.repo)
            await pilot.press("n")  # nothing starts when the answer is no
            await pilot.pause(0.2)
            assert app.triage.repro_flow.run is None and not pids.exists()
            await pilot.press("r")
            await first_test(pilot, app)
            assert await until(pilot, lambda: isinstance(app.screen, ConfirmRepro))
            log = app.query_one(LogPane)
            log.scroll_end(animate=False)  # the reader was down in the traceback
            await pilot.press("y")
            assert await until(
                pilot,
                lambda: (
                    app.triage.repro_flow.run is not None
                    and "step 3 loss 2.3" in app.triage.repro_flow.run.lines
                ),
            )
            assert app.triage.repro_flow.run.running
            assert log.scroll_y == 0  # the run's output is in view, at the pane's top
            worker = int(pids.read_text().split()[1])
            assert running(worker)
            assert log.display and "step 3 loss 2.3" in "\n".join(log.query_one("Log").lines)
            await pilot.press("r")  # r again: stop it, the whole group
            assert await until(pilot, lambda: not app.triage.repro_flow.run.running)
            assert app.triage.repro_flow.run.stopped
            # How it ended is said once, on its status line, not again in its output.
            assert "stopped" in app.triage.repro_flow.run.status_line()
            assert not any("stopped" in line for line in app.triage.repro_flow.run.lines)
            assert wait_for(lambda: not running(worker)), "a GPU worker survived the stop"


async def test_quitting_stops_a_running_repro(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    monkeypatch.setenv("SCOUT_TEST_PIDS", str(pids))
    with collected_demo(tmp_path / "world") as demo:
        stand_in_repro(demo)
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await ask_repro(pilot, app)
            await pilot.press("y")
            assert await until(pilot, pids.exists)
            worker = int(pids.read_text().split()[1])
        assert wait_for(lambda: not running(worker)), "the worker outlived the console"


async def test_edit_in_editor_round_trip_and_undo(tmp_path, monkeypatch):
    editor = tmp_path / "editor.py"  # a scripted editor: retitles, reprioritises, appends
    editor.write_text(
        "import sys, pathlib\n"
        "p = pathlib.Path(sys.argv[1]); t = p.read_text()\n"
        "t = t.replace('Priority: P', 'Priority: P0 #', 1) if False else t\n"
        "lines = t.splitlines()\n"
        "lines = [('Title: Edited in the editor' if l.startswith('Title:') else\n"
        "          'Priority: P2' if l.startswith('Priority:') else l) for l in lines]\n"
        "p.write_text('\\n'.join(lines) + '\\nA line from the editor.\\n')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {editor}")
    monkeypatch.delenv("VISUAL", raising=False)
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            fp = await cursor_to(
                pilot,
                app,
                lambda f: f.section is Section.ACTION_ITEMS and f.priority is Priority.P1,
            )
            await pilot.press("E")
            await settle(pilot, app)
            row = tree(app).row(fp)
            assert row.finding.title == "Edited in the editor"
            assert row.finding.priority is Priority.P2
            assert row.finding.body.endswith("A line from the editor.")
            await pilot.press("u")
            await settle(pilot, app)
            assert tree(app).row(fp).finding.title != "Edited in the editor"


async def test_a_bad_header_from_the_editor_records_nothing_and_keeps_the_text(
    tmp_path, monkeypatch
):
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nsed -i "s/^Priority: .*/Priority: urgent/" "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
            title = tree(app).row(fp).finding.title
            await pilot.press("E")
            await settle(pilot, app)
            [note] = [n for n in app._notifications if "not recorded" in n.message]
            assert "`Priority: urgent`: use P0, P1, P2 or none" in note.message
            kept = Path(note.message.rsplit("kept in ", 1)[1])
            assert "Priority: urgent" in kept.read_text()
            kept.unlink()
            assert tree(app).row(fp).finding.title == title
            assert not app.session.review.decisions().get(fp)


async def test_open_url_without_a_display_copies_it(tmp_path, monkeypatch):
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            await cursor_to(pilot, app, lambda f: bool(f.evidence.urls))
            url = tree(app).row(tree(app).cursor_fingerprint).finding.evidence.urls[0]
            await pilot.press("o")
            await pilot.pause(0.2)
            assert app.clipboard == url
            assert any(url in n.message and "no display" in n.message for n in app._notifications)


@pytest.mark.parametrize(
    "env, platform, expected",
    [
        ({}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
        ({"DISPLAY": ":0", "BROWSER": "/usr/bin/w3m"}, "linux", False),
        ({}, "darwin", True),
        ({"SSH_CONNECTION": "10.0.0.1 5 10.0.0.2 22"}, "darwin", False),
    ],
)
def test_a_browser_only_where_there_is_a_display(env, platform, expected):
    assert graphical_browser(env, platform) is expected


def test_the_edit_document_round_trips_and_says_what_is_wrong(tmp_path):
    from scout_tui.model import Finding

    finding = Finding(
        collector="c",
        kind="k",
        title="A title",
        body="Body\n\nmore",
        section=Section.ACTION_ITEMS,
        priority=Priority.P1,
        fingerprint="k-1",
    )
    edited = parse_document(finding_document(finding))
    assert (edited.title, edited.priority, edited.body) == ("A title", Priority.P1, "Body\n\nmore")
    assert parse_document("   \n") is None  # emptied: cancelled
    none = parse_document("Title: T\nPriority: none\n\nB")
    assert none.priority is None and none.body == "B"
    for text, said in [
        ("Priority: P1\n\nB", "no `Title:`"),
        ("Title: T\nPriority: P9\n\nB", "use P0, P1, P2 or none"),
        ("Title: T\nSeverity: high\n\nB", "line 2: expected `Title:` or `Priority:`"),
        ("Title: T\nTitle: U\n\nB", "given twice"),
    ]:
        with pytest.raises(BadDocument, match=r".*") as raised:
            parse_document(text)
        assert said in str(raised.value)


async def test_scout_toml_warnings_show_in_the_collectors_bar_never_in_the_report(tmp_path):
    from scout_tui.tui.screens.preview import PreviewScreen
    from scout_tui.tui.widgets.collectors_bar import CollectorsBar

    with demo_with_config_problems(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot, app)
            warnings = app.triage.run_result.config_warnings
            assert len(warnings) == len(NEVER_THERE)  # surfaces the sample never had
            bar = app.query_one(CollectorsBar).render().plain
            assert bar.startswith(f"⚠ scout.toml: {len(NEVER_THERE)}")  # shows at 80 columns
            app.query_one(CollectorsBar).show_warnings()
            await pilot.pause(0.2)
            assert isinstance(app.screen, PreviewScreen)
            assert "never was in that file's history" in app.screen.markdown
            await pilot.press("escape")
            report = app.session.report_markdown(app.triage.triaged_run())
            assert "Fragile surface" not in report
            assert not any(w.subject.split(" ", 1)[1] in report for w in warnings)


async def test_an_editor_that_cannot_start_is_said_and_the_console_stays(tmp_path, monkeypatch):
    monkeypatch.setenv("EDITOR", "/nonexistent/editor --wait")
    monkeypatch.delenv("VISUAL", raising=False)
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
            await pilot.press("E")
            await settle(pilot, app)
            assert any(
                "cannot start the editor '/nonexistent/editor --wait'" in n.message
                and "not found" in n.message
                for n in app._notifications
            )
            await pilot.press("a")  # the console still takes keys
            await settle(pilot, app)
            assert app.session.review.decisions()[fp].decision == "accepted"


async def test_the_status_line_keeps_online_or_offline_at_80_columns():
    """Over SSH at 80 columns the line gives up the rate limit and the reason first: whether
    GitHub can be reached always shows."""
    from datetime import UTC, datetime

    from textual.app import App

    from scout_tui.tui.widgets.status_line import StatusLine

    class One(App):
        def compose(self):
            line = StatusLine()
            line.where = "torchtitan·graph_trainer 2026-12-02"
            line.reviewed = "0 of 33 reviewed"
            line.collected_at = datetime.now(UTC)
            line.online = (
                "offline (no GitHub token (set GH_TOKEN or GITHUB_TOKEN, or `gh auth login`))"
            )
            yield line

    for width, expected in (
        (200, "offline (no GitHub token (set GH_TOKEN"),
        (100, "  offline (no GitHub"),
        (80, " offline"),
    ):
        app = One()
        async with app.run_test(size=(width, 5)) as pilot:
            await pilot.pause()
            shown = app.query_one(StatusLine).render().plain
            assert expected in shown and len(shown) <= width, shown


async def test_the_status_line_keeps_a_kept_apart_note_before_the_age_but_not_online():
    """A poorer run kept apart: the note gives way to online or offline only; the rate, the
    reason it is offline and the run's age go first."""
    from datetime import UTC, datetime

    from textual.app import App

    from scout_tui.tui.widgets.status_line import StatusLine

    class One(App):
        def compose(self):
            line = StatusLine()
            line.where = "torchtitan·graph_trainer 2026-12-02"
            line.reviewed = "0 of 33 reviewed"
            line.collected_at = datetime.now(UTC)
            line.online = "offline (--offline)"
            line.kept_apart = "poorer run kept apart"
            yield line

    for width, shown_parts, gone in (
        (200, ["run just now", "offline (--offline)", "poorer run kept apart"], []),
        (120, ["run just now", "offline", "poorer run kept apart"], ["(--offline)"]),
        (100, ["offline", "poorer run kept apart"], ["run just now"]),
        (80, ["run just now", "offline"], ["poorer run kept apart"]),
    ):
        app = One()
        async with app.run_test(size=(width, 5)) as pilot:
            await pilot.pause()
            shown = app.query_one(StatusLine).render().plain
            assert len(shown) <= width, shown
            assert all(part in shown for part in shown_parts), shown
            assert not any(part in shown for part in gone), shown
