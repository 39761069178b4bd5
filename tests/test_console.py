"""The console, driven by the Pilot on the demo's world (a real repository, the real local
GitHub, the real state store): every triage action, undo across a restart, filter, publish,
offline, collection and its cancel."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time

import pytest
from rich.console import Console
from rich.style import Style
from textual.widgets._footer import FooterKey

from scout_tui.collect.events import RunFinished
from scout_tui.errors import UsageError
from scout_tui.history.parse import parse_report
from scout_tui.model import SECTIONS, Priority, Section
from scout_tui.session import Session
from scout_tui.tui.app import ScoutApp
from scout_tui.tui.messages import CollectionEvent
from scout_tui.tui.screens.drop_reason import DropReason
from scout_tui.tui.screens.edit_finding import EditFinding
from scout_tui.tui.screens.help import HelpScreen, help_text, key_rows
from scout_tui.tui.screens.preview import PreviewScreen
from scout_tui.tui.screens.publish import ConfirmPublish
from scout_tui.tui.screens.repro import PickTest
from scout_tui.tui.widgets.findings_tree import FindingsTree
from scout_tui.tui.widgets.key_footer import KeyFooter
from scout_tui.tui.widgets.log_pane import LogPane
from scout_tui.tui.widgets.status_line import StatusLine
from scout_tui.tui.widgets.workspace import Workspace
from tests.console import (
    collected_demo,
    confirm_publish,
    console,
    cursor_to,
    mark,
    mark_section,
    options,
    publish_modal,
    settle,
    tree,
)
from tests.console import visible_titles as titles
from tests.github_world import scout_comments
from tests.listener import SilentHost

SIZE = (100, 32)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    with collected_demo(tmp_path_factory.mktemp("console")) as running:
        yield running


def decisions(demo, state):
    return Session(options(demo, state)).review.decisions()


async def test_the_tree_shows_every_section_with_counts_and_the_ci_failure_its_log(demo, tmp_path):
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        sections = [node.data.section for node in tree(app).root.children]
        assert sections[:3] == [Section.CI_FAILURES, Section.ACTION_ITEMS, Section.CARRIED_FORWARD]
        assert Section.ALL_CLEAR in sections
        # The cursor starts on the first finding: the CI failure, with its log pane.
        finding = tree(app).row(tree(app).cursor_fingerprint).finding
        assert finding.section is Section.CI_FAILURES
        log = app.query_one(LogPane)
        assert log.display
        screen = Console(file=io.StringIO(), width=200)
        screen.print(log.shown, soft_wrap=True)
        text = screen.file.getvalue()
        assert "recurring (also failed in run #104)" in text
        assert "2.13.0.dev20260819+cu130" in text  # the regression-range table
        assert log.query_one("#repro").text.startswith("NGPU=4 ./run_train.sh")
        status = app.query_one("#status").render().plain
        rows = [r for r in tree(app).rows if r.finding.section is not Section.ALL_CLEAR]
        assert f"0 of {len(rows)} reviewed" in status
        assert "online" in status
        # The failing workflow, and the green one said from its latest run.
        assert "✓ ci_failures 2" in app.query_one("#collectors").render().plain


async def test_accept_demote_promote_drop_each_recorded_and_undone(demo, tmp_path):
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        fp = await cursor_to(
            pilot, app, lambda f: f.priority is Priority.P1 and f.section is Section.CARRIED_FORWARD
        )
        await pilot.press("a")
        await settle(pilot, app)
        assert decisions(demo, state)[fp].decision == "accepted"
        assert "accepted" in tree(app).row(fp).badges
        await pilot.press("minus")
        await settle(pilot, app)
        assert tree(app).row(fp).finding.priority is Priority.P2
        assert tree(app).cursor_fingerprint == fp  # the cursor follows it into P2
        await pilot.press("plus", "plus")
        await settle(pilot, app)
        assert tree(app).row(fp).finding.priority is Priority.P0
        await pilot.press("x")
        await settle(pilot, app)
        assert isinstance(app.screen, DropReason)
        await pilot.press("enter")  # no reason: refused, the modal stays and says why
        assert isinstance(app.screen, DropReason)
        hint = str(app.screen.query_one("#drop-hint").render())
        assert hint.startswith("a drop needs a reason")
        await pilot.press(*"not ours", "enter")
        await settle(pilot, app)
        entry = decisions(demo, state)[fp]
        assert (entry.decision, entry.reason) == ("dropped", "not ours")
        assert "dropped" in tree(app).row(fp).badges
        await pilot.press("u")
        await settle(pilot, app)
        assert decisions(demo, state)[fp].decision == "accepted"
        await pilot.press("U")
        await settle(pilot, app)
        assert decisions(demo, state)[fp].decision == "dropped"


async def test_marked_findings_take_bulk_actions_and_merge(demo, tmp_path):
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        p2 = [
            fp
            for fp, row in tree(app)._finding_rows.items()
            if row.finding.section is Section.CARRIED_FORWARD
            and row.finding.priority is Priority.P2
        ][:3]
        await mark(pilot, app, p2)
        assert tree(app).marked == set(p2)
        assert "3 marked" in app.query_one("#status").render().plain
        await pilot.press("minus")  # all three to FYI at once
        await settle(pilot, app)
        assert all(decisions(demo, state)[fp].section is Section.FYI for fp in p2)
        assert not tree(app).marked
        await pilot.press("u")  # one action: one undo
        await settle(pilot, app)
        assert not set(p2) & set(decisions(demo, state))  # as before: no entries
        # Mark two, merge them into a third under the cursor.
        await mark(pilot, app, p2[:2])
        tree(app).select_fingerprint(p2[2])
        await pilot.pause(0.05)
        await pilot.press("m")
        await settle(pilot, app)
        entries = decisions(demo, state)
        assert [entries[fp].merged_into for fp in p2[:2]] == [p2[2], p2[2]]
        assert "+2 merged" in tree(app).row(p2[2]).badges
        target_title = tree(app).row(p2[2]).finding.title.replace("`", "")[:20]
        assert any(
            badge.startswith(f"merged into “{target_title}")
            for badge in tree(app).row(p2[0]).badges
        )
        published = app.triage.triaged_run().findings
        merged = next(f for f in published if f.fingerprint == p2[2])
        assert merged.body.count("Merged: **") == 2
        assert not {f.fingerprint for f in published} & set(p2[:2])


async def test_edit_in_the_modal(demo, tmp_path):
    """The title opens with the cursor at its end, nothing selected: keys typed add to it."""
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
        before = tree(app).row(fp).finding.title
        await pilot.press("e")
        await settle(pilot, app)
        assert isinstance(app.screen, EditFinding)
        await pilot.press("space", "minus", "space", *"checked")
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert decisions(demo, state)[fp].title == before + " - checked"
        assert tree(app).row(fp).finding.title == before + " - checked"
        assert "edited" in tree(app).row(fp).badges


async def test_decisions_and_undo_survive_a_restart(demo, tmp_path):
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        fp = await cursor_to(pilot, app, lambda f: f.section is Section.OPPORTUNITIES)
        await pilot.press("a")
        await settle(pilot, app)
        await pilot.press("q")
    again = console(demo, state)
    async with again.run_test(size=SIZE) as pilot:
        await settle(pilot, again)
        assert "accepted" in tree(again).row(fp).badges  # resumed
        assert "1 of" in again.query_one("#status").render().plain
        await pilot.press("u")
        await settle(pilot, again)
        assert "accepted" not in tree(again).row(fp).badges
        assert fp not in decisions(demo, state) or decisions(demo, state)[fp].decision is None


async def test_filter_by_words_and_tokens(demo, tmp_path):
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        everything = titles(app)
        await pilot.press("slash", *"p0", "enter")
        await settle(pilot, app)
        shown = titles(app)
        assert shown and len(shown) < len(everything)
        assert all(
            tree(app).row(fp).finding.priority is Priority.P0 for fp in tree(app)._finding_rows
        )
        await pilot.press("slash")
        app.query_one("#filter").value = "flexattention"
        await pilot.press("enter")
        await settle(pilot, app)
        assert titles(app) and all(
            "flexattention" in (t + tree(app).row(fp).finding.body).lower()
            for fp, t in zip(tree(app)._finding_rows, titles(app), strict=True)
        )
        await pilot.press("escape")  # focus is back on the tree: escape clears the filter
        await settle(pilot, app)
        assert titles(app) == everything


async def test_clearing_a_filter_left_empty_comes_back_to_where_it_began(demo, tmp_path):
    """A filter whose findings were all decided away (`/p1 unreviewed`, `*`, `a`) shows
    nothing; escape then puts the cursor back on the finding it was on before the filter,
    not on the tree's first one."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        start = await cursor_to(pilot, app, lambda f: f.section is Section.FYI)
        first = next(iter(tree(app)._finding_nodes))
        assert start != first
        await pilot.press("slash", *"p1 unreviewed", "enter")
        await settle(pilot, app)
        assert tree(app)._finding_rows
        await pilot.press("asterisk", "a")
        await settle(pilot, app)
        assert not tree(app)._finding_rows  # all accepted: nothing unreviewed is left
        await pilot.press("escape")
        await settle(pilot, app)
        assert tree(app).cursor_fingerprint == start


async def test_a_zoomed_detail_pane_is_alone_even_beside_a_log(demo, tmp_path):
    """`z` on the detail of a CI failure (which shows its log pane): the detail fills the
    workspace, the log stays hidden as the cursor moves, and comes back with `z` again."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await cursor_to(pilot, app, lambda f: f.kind == "ci_failure")
        log, detail = app.query_one("#log"), app.query_one("#detail")
        await pilot.pause(0.2)
        assert log.display
        body = app.query_one("#log-body")
        shown = "\n".join(strip.text for strip in body.render_lines(body.region.reset_offset))
        assert "(rc=1)" in shown and "`" not in shown  # the body's Markdown, read as text
        # The detail breaks lines where the published comment does (GitHub's newlines).
        text = app.query_one("#detail-markdown")
        lines = [strip.text.strip() for strip in text.render_lines(text.region.reset_offset)]
        assert any(line.startswith("The error above picked by") for line in lines)
        # Tab stops where keys work: the tree, the detail, the log; not the repro's text.
        assert [w.id for w in app.screen.focus_chain] == ["tree", "detail", "log"]
        # The log pane says "c copies it, r runs it": so they do, from the pane.
        log.focus()
        await pilot.press("c")
        await pilot.pause(0.1)
        assert isinstance(app.screen, PickTest)
        await pilot.press("escape")
        await pilot.pause(0.1)
        app.query_one("#tree").focus()
        # The same finding shown again (as a zoom does) keeps the panes as scrolled.
        detail.scroll_to(y=detail.max_scroll_y, animate=False)
        log.scroll_to(y=log.max_scroll_y, animate=False)
        await pilot.pause()
        scrolled = (detail.scroll_y, log.scroll_y)
        assert scrolled[0] > 0 and scrolled[1] > 0
        app.triage._show_panes(tree(app).cursor_fingerprint)
        await pilot.pause()
        assert (detail.scroll_y, log.scroll_y) == scrolled
        detail.scroll_home(animate=False)
        log.scroll_home(animate=False)
        await pilot.press("tab")
        await pilot.press("z")
        await pilot.pause(0.1)
        workspace = app.query_one(Workspace)
        assert workspace.zoomed == "detail" and not log.display
        assert detail.region.height == workspace.region.height
        await pilot.press("z")
        await pilot.pause(0.2)
        assert log.display and detail.region.height < workspace.region.height


async def test_focus_moving_recolours_the_tree_without_listing_its_lines_again(demo, tmp_path):
    """Tab changes how the tree looks (its border), not which lines it has: the list of
    lines (a walk over every node, 40 ms at 5,000 findings) is not built again."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        builds = []
        original = findings_tree._build
        findings_tree._build = lambda: (builds.append(1), original())[1]
        border = findings_tree.styles.border_top[1]
        await pilot.press("tab")
        await pilot.pause(0.1)
        assert app.focused is not findings_tree and findings_tree.styles.border_top[1] != border
        await pilot.press("shift+tab")
        await pilot.pause(0.1)
        assert app.focused is findings_tree and builds == []


async def test_a_new_size_or_an_empty_filter_draws_the_tree_again_without_rebuilding_it(
    demo, tmp_path
):
    """The filter box opened and closed, the terminal resized: the lines are drawn anew
    at the tree's new size (titles and badges laid out for it), never listed again nor
    their nodes rebuilt."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        builds, shows = [], []
        build, show = findings_tree._build, findings_tree.show
        findings_tree._build = lambda: (builds.append(1), build())[1]
        findings_tree.show = lambda views: (shows.append(1), show(views))[1]
        await pilot.press("slash")
        await pilot.pause(0.1)
        await pilot.press("escape")
        await pilot.pause(0.1)

        def finding_line() -> str:  # the cursor's finding, as drawn
            y = findings_tree.cursor_line - findings_tree.scroll_offset.y
            return findings_tree.render_line(y).text.rstrip()

        assert findings_tree.cursor_fingerprint is not None
        wide = finding_line()
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.2)
        narrow = finding_line()
        assert builds == [] and shows == []
        assert len(narrow) < len(wide) and len(narrow) <= findings_tree.size.width


async def test_the_tree_lists_each_section_in_the_report_s_order(demo, tmp_path):
    """Proofreading in the tree is proofreading the report: within each section, the
    findings stand in the order the published report lists them (read off its markers)."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        report = app.triage.session.posted_markdown(app.triage.triaged_run())
        in_report = {
            fp: report.index(f"scout:fp={fp}")
            for fp in tree(app)._finding_nodes
            if f"scout:fp={fp}" in report
        }
        by_section: dict[Section, list[str]] = {}
        for fp in tree(app)._finding_nodes:  # in the tree's order
            if fp in in_report:
                by_section.setdefault(tree(app).row(fp).finding.section, []).append(fp)
        assert sum(len(fps) for fps in by_section.values()) > 10
        for section, fps in by_section.items():
            assert fps == sorted(fps, key=in_report.__getitem__), section


async def test_a_diff_s_long_lines_wrap_so_their_end_can_be_read(demo, tmp_path):
    """The diff pane does not scroll sideways: a signature's end (what changed) wraps
    into view instead of being cut at the pane's edge."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        await cursor_to(pilot, app, lambda f: bool(f.evidence.diff))
        await pilot.pause(0.2)
        pane = app.query_one("#diff")
        finding = tree(app).cursor_finding
        longest = max(finding.evidence.diff.splitlines(), key=len)
        assert len(longest) > pane.content_region.width  # it would be cut
        shown = "".join(
            line.text.strip()
            for line in pane.query_one("#diff-body").render_lines(
                pane.query_one("#diff-body").region.reset_offset
            )
        )
        assert "".join(longest.split())[-12:] in "".join(shown.split())


def test_the_publish_plan_files_drafts_in_the_report_s_order(demo, tmp_path):
    """The confirmation, the dry run and the board list the drafts as the report lists
    their findings (read off the report's own markers)."""
    session = Session(options(demo, tmp_path / "state"))
    plan = session.plan(session.review.triaged(session.cached_run()))
    places = [plan.report.index(f"scout:fp={draft.fingerprint}") for draft in plan.drafts]
    assert len(places) > 2 and places == sorted(places)


async def test_next_unreviewed_zoom_preview_and_help(demo, tmp_path):
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        first = tree(app).cursor_fingerprint
        await pilot.press("a")
        await settle(pilot, app)
        await pilot.press("n")
        await settle(pilot, app)
        assert tree(app).cursor_fingerprint not in (None, first)
        workspace = app.query_one(Workspace)
        await pilot.press("z")
        assert workspace.zoomed == "tree" and not app.query_one("#right").display
        assert app.query_one("#right").has_class("zoom-hidden")
        await pilot.press("z")
        assert workspace.zoomed is None and not app.query_one("#right").has_class("zoom-hidden")
        await pilot.press("tab")  # focus to the detail pane, then zoom it
        await pilot.press("z")
        assert workspace.zoomed == "detail" and app.query_one("#left").has_class("zoom-hidden")
        await pilot.press("escape")
        await pilot.press("p")
        assert isinstance(app.screen, PreviewScreen)  # at once; the report is made in a thread
        for _ in range(100):
            if app.screen.markdown:
                break
            await pilot.pause(0.02)
        assert app.screen.markdown.startswith("# Nightly Scout Report — 2026-12-02")
        await pilot.press("escape")
        await pilot.press("question_mark")
        await settle(pilot, app)
        assert isinstance(app.screen, HelpScreen)
        text = app.screen.query_one("#help-text")
        assert text.virtual_size.height < 2 * len(key_rows(app.screen.keys))
        # The modal's own keys at the bottom, not the tree's (which do nothing here).
        footer = app.screen.query_one(KeyFooter)
        said = {key.description for key in footer.query(FooterKey)}
        assert "Close" in said and "Accept" not in said


async def test_n_on_a_header_goes_below_it_and_a_header_is_not_an_empty_filter(demo, tmp_path):
    """`n` on a section's header: the first unreviewed finding under it (not the first of the
    tree, above); after a demote, the tree's order (where the finding went). A filter's
    result with the cursor on a header says "Select a finding.", not that nothing matches
    (NEAR-MISS: a filter that matches nothing still says so)."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings = tree(app)
        sections = [node for node in findings.root.children if node.data.section]
        header = sections[-2]  # a section with an earlier one above it
        assert header.data.section is not sections[0].data.section
        findings.move_cursor(header)
        await pilot.pause(0.05)
        await pilot.press("n")
        await settle(pilot, app)
        row = findings.row(findings.cursor_fingerprint)
        assert row is not None and row.finding.section is header.data.section
        await pilot.press("slash")
        await pilot.press(*"p2", "enter")
        await settle(pilot, app)
        assert findings.rows and findings.cursor_fingerprint is not None
        findings.move_cursor(findings.root.children[0])
        await pilot.pause(0.1)
        assert app.screen.query_one("#detail").markdown == "Select a finding."
        # The cursor's finding filtered out: the cursor goes to the first match, not a header.
        await pilot.press("slash", "ctrl+u", "enter")  # no filter
        await settle(pilot, app)
        starts = [r.fingerprint for r in findings.rows if r.finding.priority is not Priority.P2]
        for start in starts[:3]:
            await pilot.press("slash", "ctrl+u", "enter")
            await settle(pilot, app)
            findings.select_fingerprint(start)
            await pilot.pause(0.05)
            await pilot.press("slash", "ctrl+u", *"p2", "enter")
            await settle(pilot, app)
            row = findings.row(findings.cursor_fingerprint)
            assert row is not None and row.finding.priority is Priority.P2, start
        await pilot.press("slash", "ctrl+u", *"nothing-matches-this", "enter")
        await settle(pilot, app)
        assert app.screen.query_one("#detail").markdown.startswith("No finding matches")


def test_the_help_takes_about_a_line_per_key_at_80_columns():
    """At 80x24 the help dialog is 72 cells wide: most keys take one line, not two."""
    screen = Console(file=io.StringIO(), width=72 - 6, color_system=None)
    screen.print(help_text({}, 72 - 6))
    out = screen.file.getvalue()
    assert "set -g set-clipboard on" in out
    rows = key_rows({})
    lines = out.splitlines()
    assert any(line.split()[:3] == ["A", "accept,", "then"] for line in lines)
    assert len(lines) < len(rows) * 1.3 + 12
    wide = Console(file=io.StringIO(), width=120, color_system=None)
    wide.print(help_text({}, 120))
    assert any(
        line.split()[:2] == ["A", "accept_next"] for line in wide.file.getvalue().splitlines()
    )


async def test_keys_are_rebound_by_the_config(demo, tmp_path):
    config = tmp_path / "scout.toml"
    config.write_text(demo.sample.config.read_text() + '\n[keys]\naccept = "k"\n')
    app = console(demo, tmp_path / "state", config=config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        fp = tree(app).cursor_fingerprint
        await pilot.press("a")
        await settle(pilot, app)
        assert "accepted" not in tree(app).row(fp).badges
        await pilot.press("k")
        await settle(pilot, app)
        assert "accepted" in tree(app).row(fp).badges


async def test_copy_repro_uses_osc52(demo, tmp_path):
    app = console(demo, tmp_path / "state")
    copied = []
    app.copy_to_clipboard = copied.append  # what Textual sends as OSC 52
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        fp = await cursor_to(pilot, app, lambda f: f.section is Section.CI_FAILURES)
        repros = tree(app).row(fp).finding.evidence.repros
        assert len(repros) > 1  # the failure names several tests: the reviewer picks one
        await pilot.press("c")
        await pilot.pause(0.05)
        assert isinstance(app.screen, PickTest) and app.screen.tests == list(repros)
        await pilot.press("down", "enter")
        await pilot.pause(0.05)
        second = list(repros.values())[1]
        assert copied == [second] and second.startswith("NGPU=")
        await pilot.press("c")
        await pilot.pause(0.05)
        await pilot.press("escape")  # cancelled: nothing copied
        assert copied == [second]


async def test_offline_review_says_why_publish_is_disabled(demo, tmp_path):
    app = console(demo, tmp_path / "state", offline=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        assert "offline (--offline)" in app.query_one("#status").render().plain
        await pilot.press("P")
        await settle(pilot, app)
        assert not isinstance(app.screen, ConfirmPublish)
        assert any("publishing needs GitHub: --offline" in n.message for n in app._notifications)


async def test_unreachable_github_is_offline(demo, tmp_path):
    app = console(demo, tmp_path / "state", api_url="http://127.0.0.1:9")
    async with app.run_test(size=SIZE) as pilot:
        status = app.query_one("#status")
        for _ in range(100):
            await pilot.pause(0.1)
            # the flow keeps the answer, then the screen shows it (the message goes on to it)
            if app.triage.publish_flow.github_ok is not None and "offline" in str(status.render()):
                break
        assert app.triage.publish_flow.github_ok is False
        assert "GitHub cannot be reached" in app.triage.publish_flow.github_detail
        # The status line shows as much of why as its width allows.
        assert "offline (GitHub cannot be" in app.query_one("#status").render().plain


async def test_publish_from_the_console_reaches_the_local_github(tmp_path):
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
            await pilot.press("x", *"noise", "enter")
            await settle(pilot, app)
            proposal = (await publish_modal(pilot, app)).proposal
            assert proposal.comment == "post a new report comment"
            assert fp not in {d.fingerprint for d in proposal.plan.drafts}  # dropped: not filed
            assert proposal.unreviewed > 0
            wanted = len(proposal.plan.drafts)
            # `d` shows the dry run in the modal's own words; escape comes back to the
            # question, not out of the publish flow.
            await pilot.press("d")
            await pilot.pause(0.1)
            assert isinstance(app.screen, PreviewScreen)
            assert app.screen.markdown.startswith("# Dry run: publish the report of")
            assert f"- **{wanted} Backlog draft(s)** on the board" in app.screen.markdown
            await pilot.press("escape")
            await pilot.pause(0.1)
            assert isinstance(app.screen, ConfirmPublish)
            status = app.triage.query_one(StatusLine)
            assert status.published_at is None and "published" not in str(status.render())
            await confirm_publish(pilot, app)
            view = app.screen.query("Markdown").last().source
            assert "report comment posted" in view and "Backlog" in view
            # The comment itself, read back from GitHub (the demo's GitHub goes when it ends).
            shown = view.split("## The comment on #2856, as GitHub holds it\n\n", 1)[1]
            [posted] = scout_comments(demo.github.world, app.triage.run_result.date)
            assert shown.strip() == posted.body.strip()
            await pilot.pause(0.1)
            assert "published " in str(status.render())  # the day's report is out: said
            filed = {d.fingerprint for d in proposal.plan.drafts}
            await settle(pilot, app)
            assert filed and all("board: filed" in tree(app).row(fp).badges for fp in filed)
            assert not any(
                "board: filed" in row.badges
                for row in tree(app).rows
                if row.fingerprint not in filed
            )
        # Opened again, the console still says the day's report went out, and when.
        again = console(demo, tmp_path / "state")
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot, again)
            status = again.triage.query_one(StatusLine)
            assert status.published_at is not None
            assert f"published {status.published_at:%H:%M} UTC" in str(status.render())
            assert all("board: filed" in tree(again).row(fp).badges for fp in filed)
        world = demo.github.world
        [comment] = scout_comments(world, demo.sample.base and app.triage.run_result.date)
        assert "Nightly Scout Report" in comment.body
        drafts = [
            item for item in world.projects[0].items if item.title.startswith("[NightlyScout]")
        ]
        assert len(drafts) == wanted > 0


async def test_reviewed_only_needs_a_reviewed_finding_and_keeps_all_clear(tmp_path):
    """`r` in the publish modal with nothing reviewed would edit today's posted report into
    one that says nothing: refused, the modal stays. With a finding reviewed, the
    reviewed-only report holds it and the All Clear lines (they need no review)."""
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            clear = [
                f.title for f in app.triage.run_result.findings if f.section is Section.ALL_CLEAR
            ]
            assert clear
            await publish_modal(pilot, app)
            await confirm_publish(pilot, app)
            await pilot.press("escape")
            day = app.triage.run_result.date
            [posted] = scout_comments(demo.github.world, day)
            before = posted.body
            modal = await publish_modal(pilot, app)
            assert modal.proposal.reviewed == 0 and modal.proposal.unreviewed > 0
            assert "none is reviewed yet" in str(modal.query_one("#publish-unreviewed").render())
            await pilot.press("r")
            await pilot.pause(0.3)
            assert app.screen is modal  # refused: still asking
            said = [n.message for n in app._notifications]
            assert any("no finding is reviewed yet" in m for m in said), said
            await pilot.press("escape")
            await pilot.pause(0.1)
            [posted] = scout_comments(demo.github.world, day)
            assert posted.body == before
            fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
            [title] = [f.title for f in app.triage.run_result.findings if f.fingerprint == fp]
            await pilot.press("a")
            await settle(pilot, app)
            modal = await publish_modal(pilot, app)
            assert modal.proposal.reviewed == 1
            await pilot.press("r")
            for _ in range(200):
                await pilot.pause(0.1)
                if getattr(app.screen, "finished", False):
                    break
            [posted] = scout_comments(demo.github.world, day)
            assert title in posted.body
            assert all(line in posted.body for line in clear)
            # What it leaves out is said where it would have been, never "nothing to report"
            # about a section that holds findings nobody reviewed yet.
            run = app.triage.run_result
            for section in {f.section for f in run.findings} - {Section.ALL_CLEAR}:
                heading = SECTIONS[section].heading
                part = posted.body.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
                assert "nothing to report" not in part, heading
            left = sum(1 for f in run.findings if f.section is not Section.ALL_CLEAR) - 1
            said = re.findall(r"_(\d+) findings? not yet reviewed — left out", posted.body)
            assert sum(map(int, said)) == left
            # ... and tomorrow's run reads no finding out of those lines.
            prior = parse_report(posted.body, day)
            assert not any("not yet reviewed" in item.title for item in prior.items)


async def test_a_collection_runs_in_a_child_and_can_be_cancelled(tmp_path):
    with collected_demo(tmp_path / "world") as demo:
        session = Session(options(demo, tmp_path / "state"))
        app = ScoutApp(session, None)  # nothing cached as far as it knows: it collects
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(300):
                await pilot.pause(0.1)
                if app.triage.run_result is not None and app.triage.collection is None:
                    break
            assert app.triage.run_result is not None and app.triage.run_result.complete
            assert titles(app)
            # The child was handed the local server's token as an enterprise host's.
            online = {
                s.name: s.state
                for s in app.triage.run_result.collectors
                if s.name in ("ci_failures", "open_work")
            }
            assert online == {"ci_failures": "done", "open_work": "done"}
            # Drop one, collect again: still dropped (decisions follow fingerprints), and
            # the cursor is still on it once the new run's sections arrive.
            fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
            await pilot.press("x", *"not ours", "enter")
            await settle(pilot, app)
            first = app.triage.run_result.collected_at
            await pilot.press("R")
            for _ in range(300):
                await pilot.pause(0.1)
                if app.triage.collection is None and app.triage.run_result.collected_at != first:
                    break
            assert app.triage.run_result.collected_at != first
            assert "dropped" in tree(app).row(fp).badges
            assert tree(app).cursor_fingerprint == fp
            await pilot.press("R")  # again, then cancel as soon as it is running: a run of
            # an unchanged tree reuses what it read, and can end within a fixed pause
            for _ in range(300):
                if app.triage.collection is not None:
                    break
                await pilot.pause(0.01)
            assert app.triage.collection is not None
            await pilot.press("R")
            for _ in range(300):
                await pilot.pause(0.1)
                if app.triage.collection is None:
                    break
            assert app.triage.collection is None
            assert any("cancelled" in n.message for n in app._notifications)
            # A cancelled run is not the day's: the run shown before it stays, decisions
            # and all, and it is what a publish would take. (Whether the child's cancelled
            # run arrives depends on when the cancel lands: its end is sent here as the
            # child sends it, with half the findings.)
            shown = app.triage.run_result
            partial = shown.model_copy(update={"findings": shown.findings[::2], "cancelled": True})
            app.triage.post_message(CollectionEvent(RunFinished(partial)))
            await settle(pilot, app)
            assert app.triage.run_result is shown and shown.complete
            assert "dropped" in tree(app).row(fp).badges
            assert len(tree(app).rows) == len(shown.findings)


async def test_a_first_collection_cancelled_is_shown_but_never_published(tmp_path):
    # GitHub takes the connections and never answers: the collection is still running
    # (its GitHub collectors wait out the 15 s timeout) when the local findings are in.
    host = SilentHost()
    with collected_demo(tmp_path / "world") as demo:
        app = ScoutApp(Session(options(demo, tmp_path / "state", api_url=host.url)), None)
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(1000):
                if app.triage.live:  # findings come in: the collectors are running
                    break
                await pilot.pause(0.01)
            assert app.triage.collection is not None
            await pilot.press("R")  # cancelled while it runs: nothing shown before it
            for _ in range(300):
                await pilot.pause(0.1)
                if app.triage.collection is None:
                    break
            host.close()
            run = app.triage.run_result
            assert run is not None and run.cancelled
            await pilot.press("P")
            await pilot.pause(0.3)
            said = [n.message for n in app._notifications]
            assert any("a cancelled run is never published" in m for m in said), said
            assert not isinstance(app.screen, ConfirmPublish)
            # Below the console too: the publisher refuses it, before any request.
            with pytest.raises(UsageError, match="cancelled run is never published"):
                app.session.publisher().publish(run)


async def test_collecting_offline_after_online_keeps_the_online_run_on_screen(tmp_path):
    """`R` offline after an online collection: the poorer run is kept apart, the tree keeps
    the CI failure and the decisions' badges, and the console says which run it shows —
    then, and when it opens on that day again."""
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state", offline=True)
        online = app.triage.run_result
        assert online is not None
        [ci_fp, *_] = [f.fingerprint for f in online.findings if f.kind == "ci_failure"]
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            assert app.query_one(StatusLine).kept_apart == ""
            fp = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
            await pilot.press("a")
            await cursor_to(pilot, app, lambda f: f.fingerprint == ci_fp)
            await pilot.press("x")
            await pilot.press(*"not ours", "enter")
            await settle(pilot, app)
            assert "dropped" in tree(app).row(ci_fp).badges
            await pilot.press("R")
            await pilot.pause(0.3)
            for _ in range(300):
                await pilot.pause(0.1)
                if app.triage.collection is None:
                    break
            assert app.triage.collection is None
            await settle(pilot, app)
            assert app.triage.run_result.collected_at == online.collected_at
            assert "accepted" in tree(app).row(fp).badges
            assert "dropped" in tree(app).row(ci_fp).badges  # the CI failure is still there
            said = [n.message for n in app._notifications if "kept apart" in n.message]
            assert len(said) == 1
            assert "(CI failure monitoring, Open work tracking skipped — offline)" in said[0]
            assert app.query_one(StatusLine).kept_apart == "poorer run kept apart"
            assert "poorer run kept apart" in str(app.query_one(StatusLine).render())
        session = app.session
        kept = session.cache.poorer_run(session.checkout, session.experiment, online.date)
        assert kept is not None and kept.collected_at != online.collected_at
        assert not any(f.kind == "ci_failure" for f in kept.findings)

        again = ScoutApp(Session(options(demo, tmp_path / "state", offline=True)), load_cached=True)
        async with again.run_test(size=SIZE) as pilot:
            await settle(pilot, again)
            assert again.triage.run_result.collected_at == online.collected_at
            assert "dropped" in tree(again).row(ci_fp).badges
            assert any("kept apart" in n.message for n in again._notifications)
            assert again.query_one(StatusLine).kept_apart == "poorer run kept apart"


def test_the_console_needs_a_terminal(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "scout_tui"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "scout: error: the console needs a terminal (the headless "
        "commands are listed by `scout --help`)"
    )


async def test_a_notification_from_a_widget_is_never_read_as_markup(demo, tmp_path):
    """A finding's title, a path or an error in a toast is data: `[/]` from a hostile title
    neither breaks the screen nor styles the text, whichever widget says it."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.triage.notify("edited: [bold]x[/] and a stray [/]")
        app.query_one(FindingsTree).notify("[link=https://evil.example]click[/link]")
        await pilot.pause(0.3)
        said = [n for n in app._notifications if "[/]" in n.message or "[link=" in n.message]
        assert len(said) == 2 and not any(n.markup for n in said)
        assert app.is_running


async def test_a_section_header_or_the_filter_s_result_is_marked_in_one_key(demo, tmp_path):
    """`space` on a section header marks all under it and moves past them (on it again:
    unmarks); on a priority header, that priority's; `*` marks what the filter shows."""
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        carried = next(
            node
            for node in findings_tree.root.children
            if node.data.section is Section.CARRIED_FORWARD
        )
        under = {
            fp
            for fp, row in findings_tree._finding_rows.items()
            if row.finding.section is Section.CARRIED_FORWARD
        }
        findings_tree.move_cursor(carried)
        await pilot.pause(0.05)
        await pilot.press("space")
        assert findings_tree.marked == under and len(under) > 1
        last = carried
        while last.is_expanded and last.children:
            last = last.children[-1]
        assert findings_tree.cursor_line == last.line + 1  # past what it marked
        findings_tree.move_cursor(carried)
        await pilot.pause(0.05)
        await pilot.press("space")
        assert not findings_tree.marked
        p2 = next(child for child in carried.children if "P2" in child.label.plain)
        findings_tree.move_cursor(p2)
        await pilot.pause(0.05)
        await pilot.press("space")
        assert findings_tree.marked == {
            fp for fp in under if findings_tree.row(fp).finding.priority is Priority.P2
        }
        findings_tree.move_cursor(p2)
        await pilot.pause(0.05)
        await pilot.press("space")
        assert not findings_tree.marked
        # The filter's result, then a bulk action on it.
        await pilot.press("slash")
        await pilot.press(*"p2", "enter")
        await settle(pilot, app)
        shown = set(findings_tree._finding_nodes)
        await pilot.press("asterisk")
        assert findings_tree.marked == shown and shown
        assert all(findings_tree.row(fp).finding.priority is Priority.P2 for fp in shown)
        await pilot.press("a")
        await settle(pilot, app)
        assert {fp for fp, e in decisions(demo, state).items() if e.decision == "accepted"} == shown


async def test_marks_outlive_a_filter_and_the_status_line_counts_them(demo, tmp_path):
    """A selection is built across filters: a filter hides marks, never drops them; the
    status line says how many are marked as soon as a header's `space` or a bulk action
    changes them; an action on the marks reaches the hidden ones too."""
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        status = app.triage.query_one(StatusLine)
        first = await mark_section(pilot, app, Section.CARRIED_FORWARD)
        assert len(first) > 1 and status.marked == len(first)  # before the cursor moves
        await pilot.press("slash")
        await pilot.press(*"todo", "enter")
        await settle(pilot, app)
        shown = {  # All Clear lines are nothing to decide: never marked
            fp
            for fp in findings_tree._finding_nodes
            if findings_tree.row(fp).finding.section is not Section.ALL_CLEAR
        }
        assert shown and not shown & first  # the marked ones are hidden, not forgotten
        await pilot.press("asterisk")
        assert findings_tree.marked == first | shown and status.marked == len(first | shown)
        await pilot.press("escape")
        await settle(pilot, app)
        assert findings_tree.marked == first | shown
        await pilot.press("a")
        await settle(pilot, app)
        assert status.marked == 0 and not findings_tree.marked
        accepted = {fp for fp, e in decisions(demo, state).items() if e.decision == "accepted"}
        assert accepted == first | shown


async def test_a_bulk_accept_leaves_a_drop_alone_and_says_what_it_did_not_show(demo, tmp_path):
    """Marked across filters, a dropped finding among them: a bulk accept leaves the drop
    (and its reason) as it was and says so; the mark shows beside the drop's ✗, not over
    it; the notice says how many of the marked the filter hides."""
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        dropped = await cursor_to(pilot, app, lambda f: f.section is Section.CARRIED_FORWARD)
        await pilot.press("x", *"fixed upstream", "enter")
        await settle(pilot, app)
        assert dropped in await mark_section(pilot, app, Section.CARRIED_FORWARD)
        line = findings_tree.render_label(
            findings_tree._finding_nodes[dropped], Style(), Style()
        ).plain
        assert line.startswith("●✗")  # marked, and still visibly dropped
        await pilot.press("slash", *"p0", "enter")
        await settle(pilot, app)
        shown = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
        await pilot.press("space")
        marked = set(findings_tree.marked)
        assert shown in marked and len(marked) > 2
        app.clear_notifications()
        await pilot.press("a")
        await settle(pilot, app)
        said = [n.message for n in app._notifications]
        assert any("hidden by the filter" in m for m in said)
        assert any("1 dropped or merged finding(s) left as they were" in m for m in said)
        entries = decisions(demo, state)
        assert (entries[dropped].decision, entries[dropped].reason) == ("dropped", "fixed upstream")
        assert all(entries[fp].decision == "accepted" for fp in marked - {dropped})


async def test_accept_and_next_and_what_each_decision_looks_like(demo, tmp_path):
    """`A` accepts and moves to the next unreviewed finding; accepted ✓, merged ⇢ and
    dropped ✗ show apart, without colour; the badges stand in one column, titles cut with
    an ellipsis; ctrl+c quits."""
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        first = await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
        await pilot.press("A")
        await settle(pilot, app)
        second = findings_tree.cursor_fingerprint
        assert decisions(demo, state)[first].decision == "accepted"
        assert second != first and not findings_tree.row(second).reviewed
        await pilot.press("x")
        await settle(pilot, app)
        await pilot.press(*"noise", "enter")
        await settle(pilot, app)
        lines = {
            fp: findings_tree.render_label(node, Style(), Style()).plain
            for fp, node in findings_tree._finding_nodes.items()
        }
        assert lines[first].startswith("✓ ") and lines[second].startswith("✗ ")
        assert "accepted" in lines[first] and "dropped" in lines[second]
        # One badge column: every line's badges start at the same cell of the screen.
        width = findings_tree.scrollable_content_region.width
        starts = set()
        for fp, node in findings_tree._finding_nodes.items():
            if not findings_tree.row(fp).badges:
                continue
            first_badge = findings_tree.row(fp).badges[0]
            at = lines[fp].rfind(" " + first_badge[:3]) + 1
            assert at > 0, lines[fp]
            starts.add(findings_tree._indent(node) + at)
            assert findings_tree._indent(node) + len(lines[fp]) <= width
        assert len(starts) == 1, starts
        cut = [line for line in lines.values() if "…" in line]
        assert cut, "some title is longer than the tree is wide"
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
    assert app.return_code == 0


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_a_small_terminal_keeps_help_quit_and_the_online_state(demo, tmp_path, size):
    """At 80x24 and 60x20 the footer drops keys to fit, never help and quit, and the status
    line still says online or offline."""
    from textual.widgets._footer import FooterKey

    app = console(demo, tmp_path / "state")
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.pause(0.2)
        keys = [key.action.rsplit(".", 1)[-1] for key in app.screen.query(FooterKey)]
        assert {"help", "quit"} <= set(keys), keys
        footer_width = sum(key.region.width for key in app.screen.query(FooterKey))
        assert footer_width <= size[0]
        status = app.query_one(StatusLine).render().plain
        assert status.endswith("online") and len(status) <= size[0], status
        await pilot.press("x")  # the drop modal fits the screen
        await pilot.pause(0.1)
        assert isinstance(app.screen, DropReason)
        dialog = app.screen.query_one(".dialog").region
        assert dialog.right <= size[0] and dialog.bottom <= size[1], dialog
        await pilot.press("escape")


async def test_no_color_keeps_offline_and_p0_readable(demo, tmp_path, monkeypatch):
    """Under NO_COLOR Textual greys every colour, and red (offline, P0, dropped) goes dark
    on dark: those pieces are bold and reversed instead. With colour, red stays red."""
    for no_color in (True, False):
        if no_color:
            monkeypatch.setenv("NO_COLOR", "1")
        else:
            monkeypatch.delenv("NO_COLOR", raising=False)
        app = console(demo, tmp_path / f"state-{no_color}", offline=True)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            line = app.query_one("#status").render()
            start = line.plain.index("offline (--offline)")
            styles = [
                Style.parse(s.style) if isinstance(s.style, str) else s.style
                for s in line.spans
                if s.start <= start < s.end
            ]
            assert any(s.reverse for s in styles) is no_color
            assert (
                any(s.color is not None and "red" in s.color.name for s in styles) is not no_color
            )


async def test_the_palette_offers_scouts_actions_with_their_keys(demo, tmp_path):
    """ctrl+p lists the console's own actions, each with its key as [keys] left it; not
    Textual's theme or screenshot commands."""
    config = tmp_path / "scout.toml"
    config.write_text(demo.sample.config.read_text() + '\n[keys]\naccept = "k"\n')
    app = console(demo, tmp_path / "state", config=config)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Accept  (k)" in titles and "Accept next  (A)" in titles
        assert "Filter  (/)" in titles
        assert not any("theme" in t.lower() or "screenshot" in t.lower() for t in titles)


async def test_another_sessions_decision_shows_within_a_second_and_undo_says_whose(demo, tmp_path):
    """A `scout triage accept` while the console is open: the tree shows it accepted within
    a second (no key pressed), and `u` in the console, undoing it, says it was scout
    triage's action."""
    state = tmp_path / "state"
    app = console(demo, state)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        fp = next(
            fp
            for fp, row in tree(app)._finding_rows.items()
            if row.finding.section is Section.ACTION_ITEMS
        )
        shell = Session(options(demo, state, origin="scout triage"))
        finding = next(f for f in shell.cached_run().findings if f.fingerprint == fp)
        shell.review.accept([finding])
        started = time.monotonic()
        while "accepted" not in tree(app).row(fp).badges and time.monotonic() - started < 5:
            await pilot.pause(0.05)
        assert "accepted" in tree(app).row(fp).badges
        assert time.monotonic() - started < 1.5  # polled every 0.5 s, off the event loop
        await pilot.press("u")
        await settle(pilot, app)
        assert "accepted" not in tree(app).row(fp).badges
        said = [n.message for n in app._notifications]
        assert any(m.startswith("undid: ") and "made by scout triage at " in m for m in said), said


async def test_a_publish_from_another_session_shows_within_a_second(tmp_path):
    """`scout publish` (or another console) sharing the state dir publishes the day while
    the console is open: its status line says "published", its tree the drafts filed."""
    with collected_demo(tmp_path / "world") as demo:
        state = tmp_path / "state"
        app = console(demo, state)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            status = app.triage.query_one(StatusLine)
            assert status.published_at is None
            shell = Session(options(demo, state, origin="scout publish"))
            run = shell.review.triaged(shell.cached_run())
            shell.publisher().publish(run)
            started = time.monotonic()
            while status.published_at is None and time.monotonic() - started < 5:
                await pilot.pause(0.05)
            assert status.published_at is not None
            assert time.monotonic() - started < 1.5
            await settle(pilot, app)
            assert "published " in str(status.render())
            filed = shell.filed()
            assert filed and all("board: filed" in tree(app).row(fp).badges for fp in filed)
            said = [n.message for n in app._notifications]
            assert any("published from another session" in m for m in said), said


async def test_a_publish_elsewhere_shows_while_this_console_s_own_publish_waits(tmp_path):
    """This console's own publish is under way (waiting for the other's lock) when another
    session's publish lands: the status line and badges still follow the journal, and only
    the notice of "another session" is left to this console's own publish to replace."""
    with collected_demo(tmp_path / "world") as demo:
        state = tmp_path / "state"
        app = console(demo, state)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, app)
            app.triage.publish_flow.publishing = True  # as from `y` until `Published`
            shell = Session(options(demo, state, origin="scout publish"))
            shell.publisher().publish(shell.review.triaged(shell.cached_run()))
            status = app.triage.query_one(StatusLine)
            started = time.monotonic()
            while status.published_at is None and time.monotonic() - started < 5:
                await pilot.pause(0.05)
            assert status.published_at is not None
            await settle(pilot, app)
            assert all("board: filed" in tree(app).row(fp).badges for fp in shell.filed())
            said = [n.message for n in app._notifications]
            assert not any("another session" in m for m in said), said


def _structure(findings_tree) -> list[tuple[int, str, str | None]]:
    """The tree as shown: each node's depth, label and finding, in order."""
    out = []

    def walk(node, depth):
        for child in node.children:
            out.append((depth, child.label.plain, child.data.fingerprint))
            walk(child, depth + 1)

    walk(findings_tree.root, 0)
    return out


@pytest.mark.parametrize(
    "section, priority, keys",
    [
        # Action Items: a P1 demoted into the P2 node (both stay).
        (Section.ACTION_ITEMS, Priority.P1, ["minus"]),
        # CI Failures: its lone P0 demoted; a P1 node appears, the P0 node goes, the CI
        # green line stays beside them.
        (Section.CI_FAILURES, Priority.P0, ["minus"]),
        # Carried Forward: a P2 promoted twice; the second time a P0 node appears.
        (Section.CARRIED_FORWARD, Priority.P2, ["plus", "plus"]),
    ],
    ids=["to-another-group", "a-group-goes-and-one-comes", "a-new-group"],
)
async def test_a_decided_priority_moves_the_finding_alone_where_a_rebuild_puts_it(
    demo, tmp_path, section, priority, keys
):
    """`-` and `+` move the finding to its new priority's node without rebuilding the
    tree, adding or removing a priority node when the section needs it: the tree is
    exactly what a rebuild shows (order, counts, "N/M reviewed"); the cursor follows."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        fp = next(
            fp
            for fp, row in findings_tree._finding_rows.items()
            if row.finding.section is section and row.finding.priority is priority
        )
        rebuilds = []
        original = findings_tree.show
        findings_tree.show = lambda views: (rebuilds.append(1), original(views))[1]
        for key in keys:
            findings_tree.select_fingerprint(fp)
            await pilot.pause(0.05)
            await pilot.press(key)
            await settle(pilot, app)
        assert rebuilds == []  # moved alone, every time
        assert findings_tree.cursor_fingerprint == fp
        moved = _structure(findings_tree)
        findings_tree.show = original
        findings_tree.show_findings(app.triage.findings, app.triage.entries, None)
        await pilot.pause(0.05)
        assert moved == _structure(findings_tree)


async def test_a_filter_keeps_the_cursor_on_the_header_it_was_on(demo, tmp_path):
    """The cursor on a section header, a filter typed: the cursor stays on that header (it
    is still shown), never on some finding the reviewer did not pick."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        findings_tree = tree(app)
        header = next(
            n for n in findings_tree.root.children if n.data.section is Section.ACTION_ITEMS
        )
        findings_tree.move_cursor(header)
        await pilot.pause(0.05)
        await pilot.press("slash", *"p1", "enter")
        await settle(pilot, app)
        assert findings_tree.cursor_fingerprint is None
        node = findings_tree.cursor_node
        assert node is not None and node.data.section is Section.ACTION_ITEMS
        assert node.parent is findings_tree.root


def test_the_preview_breaks_lines_where_a_github_comment_does():
    """A single newline inside a list item is a line break in a GitHub comment: the
    preview shows it so (plain CommonMark would run the lines together)."""
    from scout_tui.tui.comment_markdown import CommentMarkdown

    screen = Console(file=io.StringIO(), width=80, color_system=None)
    screen.print(CommentMarkdown("- `t` (rc=1): boom\n  The error above picked by: a rule."))
    lines = [line.strip() for line in screen.file.getvalue().splitlines() if line.strip()]
    assert lines[0].endswith("t (rc=1): boom")
    assert lines[1] == "The error above picked by: a rule."


def test_the_badge_column_is_as_wide_as_the_badges_need_up_to_a_third():
    """Short badges ("new") take their own width, not a third of the tree (a third left
    blank at 120 columns); long ones stop at a third; a narrow tree still shows short ones,
    and hides badges only when too little is left to say anything."""
    from scout_tui.tui.widgets.findings_tree import badge_column

    assert badge_column(52, len("new")) == 3
    assert badge_column(52, len("merged into “Trainer.Config fields changed”")) == 52 // 3
    assert badge_column(34, len("new")) == 3  # the 80-column layout's tree
    assert badge_column(34, len("since 2026-12-05")) == 6  # "since…"
    assert badge_column(33, len("new")) == 3  # the 80-column layout's tree, with a scrollbar
    assert badge_column(33, len("new promoted")) == 5  # "new …": a decision keeps the column
    assert badge_column(30, len("since 2026-12-05")) == 0  # "s…" would say nothing
    assert badge_column(30, len("new")) == 0  # nor a column only a short badge would fit
    assert badge_column(80, len("since 2026-12-05")) == 16
    assert badge_column(52, 0) == 0


async def test_at_80_columns_a_decision_keeps_the_badges_in_view(demo, tmp_path):
    """The 80-column tree has a narrow badge column; a decision's longer badges are cut in
    it ("new …"), never make every line's badges vanish, and undo keeps them too."""
    app = console(demo, tmp_path / "state")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        fp = await cursor_to(
            pilot,
            app,
            lambda f: f.section is Section.ACTION_ITEMS and f.priority is Priority.P1,
        )
        the_tree = tree(app)

        def cursor_line_text() -> str:
            return the_tree.render_line(the_tree.cursor_line - the_tree.scroll_offset.y).text

        def badged_lines() -> int:
            height = the_tree.scrollable_content_region.height
            lines = [the_tree.render_line(y).text.rstrip() for y in range(height)]
            return sum(1 for line in lines if line.endswith(("new", "…")))

        assert cursor_line_text().rstrip().endswith("new")
        shown = badged_lines()
        assert shown > 1
        await pilot.press("minus")  # demoted: "new demoted"
        await settle(pilot, app)
        assert "demoted" in the_tree.row(fp).badges
        assert badged_lines() >= shown - 1  # the demoted line moved; the rest keep theirs
        await pilot.press("u")
        await settle(pilot, app)
        assert badged_lines() >= shown


def test_the_detail_pane_shows_a_title_as_the_published_comment_shows_it():
    """An edited title with `<x>` (HTML to a Markdown renderer): the pane shows `<x>`, as
    GitHub shows the published `&lt;x>`, never drops it as the raw text's tag."""
    from scout_tui.model import Finding, fingerprint
    from scout_tui.tui.comment_markdown import CommentMarkdown
    from scout_tui.tui.view import rows_of
    from scout_tui.tui.widgets.detail_pane import finding_markdown

    finding = Finding(
        collector="test",
        kind="k",
        title="edited <x> | pipe",
        body="a <b>bold</b> claim",
        section=Section.ACTION_ITEMS,
        priority=Priority.P1,
        fingerprint=fingerprint("k", "x"),
    )
    [row] = rows_of([finding], {})
    screen = Console(file=io.StringIO(), width=80)
    screen.print(CommentMarkdown(finding_markdown(row)))
    shown = screen.file.getvalue()
    assert "edited <x> | pipe" in shown and "a <b>bold</b> claim" in shown
