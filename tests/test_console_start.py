"""What the console's start costs before its first paint: a session names its checkout with
one `git rev-parse` (the same checkout GitPython names, so the cache and the state store key
it alike), and neither GitPython nor markdown-it is imported until the tree is on screen."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import pytest

from scout_tui.source.checkout import find_checkout
from scout_tui.source.records import NotARepository
from scout_tui.source.tree import SourceTree


def git(repo: Path, *args: str) -> None:
    env = os.environ | {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
    }
    env |= {"GIT_COMMITTER_EMAIL": "t@x"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    root.mkdir()
    git(root, "init", "-q")
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "sub" / "deeper" / "a.py").write_text("x = 1\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_the_checkout_is_the_one_gitpython_names(repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "worktree"
    git(repo, "worktree", "add", "-q", str(worktree))
    link = tmp_path / "link"
    link.symlink_to(repo)
    places = [repo, repo / "sub", repo / "sub" / "deeper", worktree, link / "sub"]
    for place in places:
        assert find_checkout(place) == SourceTree(place).checkout(), place
    # A worktree is its own checkout of the same repository.
    assert find_checkout(worktree).git_dir == find_checkout(repo).git_dir
    assert find_checkout(worktree).id != find_checkout(repo).id


def test_what_rev_parse_does_not_answer_is_said_as_before(repo: Path, tmp_path: Path) -> None:
    nothing = tmp_path / "plain"
    nothing.mkdir()
    with pytest.raises(NotARepository, match="not a git repository"):
        find_checkout(nothing)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    with pytest.raises(NotARepository, match="bare repository has no checkout"):
        find_checkout(bare)
    # Inside `.git`, plumbing says "not a work tree"; GitPython names the checkout.
    assert find_checkout(repo / ".git") == SourceTree(repo / ".git").checkout()


def test_the_start_imports_neither_gitpython_nor_markdown_it(sample_world) -> None:
    """Everything the console imports and builds before the run is read, in a fresh
    process: the session, the app, its screen."""
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from scout_tui.session import Session, SessionOptions\n"
        "from scout_tui.tui.app import ScoutApp\n"
        f"options = SessionOptions(repo=Path({str(sample_world.repo)!r}), "
        f"config=Path({str(sample_world.config)!r}), offline=True)\n"
        "session = Session(options)\n"
        "ScoutApp(session, load_cached=True)\n"
        "print(sorted(m for m in ('git', 'markdown_it', 'github') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_a_run_is_kept_with_its_glance(tmp_path: Path, sample_world) -> None:
    """The glance holds each finding's line (title, place, status, board) and none of its
    body, files or evidence; the run kept beside it is the whole run."""
    from scout_tui.session import Session, SessionOptions
    from scout_tui.tui.view import rows_of

    session = Session(
        SessionOptions(
            repo=sample_world.repo,
            config=sample_world.config,
            cache_dir=tmp_path / "cache",
            state_dir=tmp_path / "state",
            offline=True,
        )
    )
    run = session.collect()
    assert run.checkout is not None
    glance = session.cache.get_glance(run.checkout, run.experiment, run.date)
    assert glance is not None and glance.collected_at == run.collected_at
    assert glance.collectors == run.collectors
    assert any(f.body for f in run.findings) and any(f.evidence.urls for f in run.findings)
    assert not any(f.body or f.files or f.items or f.evidence.urls for f in glance.findings)

    def lines(findings):
        return [
            (r.fingerprint, r.finding.section, r.finding.priority, r.finding.title, r.badges)
            for r in rows_of(findings, {})
        ]

    assert lines(glance.findings) == lines(run.findings)
    whole = session.cache.get_run(run.checkout, run.experiment, run.date)
    assert whole is not None and whole.findings == run.findings


@asynccontextmanager
async def console_open(tmp_path: Path):
    """The console on a run cached with its glance, the whole run read and shown: (app,
    pilot)."""
    from tests.console import settle

    with held_at_a_glance(tmp_path) as (app, _):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for_glance(pilot, app)
            app.release()
            await settle(pilot, app)
            yield app, pilot


def burst(app, *keys: str) -> None:
    """Keys as a terminal delivers a burst of them (typed ahead, or over SSH): all read
    before the app handles the first."""
    from textual import events
    from textual.keys import _character_to_key

    for key in keys:  # a character as the terminal sends it ("/"), or a key's name ("down")
        char = key if len(key) == 1 else None
        if char is not None and not char.isalnum():
            key = _character_to_key(char)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


@contextmanager
def held_at_a_glance(tmp_path: Path):
    """The console on the demo's cached run, shown from its glance, the worker's read of
    the whole run held back until the test calls `release()`."""
    from scout_tui.session import Session
    from scout_tui.tui.app import ScoutApp
    from scout_tui.tui.controllers.decisions import DecisionQueue
    from tests.console import collected_demo, options

    held: list[DecisionQueue] = []
    read_whole_run = DecisionQueue.read_whole_run
    with collected_demo(tmp_path / "world") as demo, pytest.MonkeyPatch.context() as patch:
        patch.setattr(DecisionQueue, "read_whole_run", lambda queue: held.append(queue))
        session = Session(options(demo, tmp_path / "state"))
        app = ScoutApp(session, load_cached=True)
        app.release = lambda: [read_whole_run(queue) for queue in held]  # type: ignore[attr-defined]
        app.held = held  # type: ignore[attr-defined]
        yield app, session.cached_run()


async def wait_for_glance(pilot, app) -> None:
    for _ in range(100):
        if app.held:
            return
        await pilot.pause(0.02)
    raise AssertionError("the glance was never shown")


async def test_the_tree_paints_from_the_glance_and_takes_the_whole_run_after(tmp_path) -> None:
    """At the glance: every finding's line is in the tree, the cursor on the first
    finding, deciding works; the whole run then takes the rows in place, the decision made
    meanwhile kept, the panes showing the body."""
    from scout_tui.tui.widgets.detail_pane import DetailPane
    from tests.console import settle, tree

    with held_at_a_glance(tmp_path) as (app, whole):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for_glance(pilot, app)
            screen = app.triage
            assert screen.run_result is None and screen.glance is not None
            assert {row.fingerprint for row in tree(app).rows} == {
                f.fingerprint for f in whole.findings
            }
            assert all(not row.finding.body for row in tree(app).rows)
            first = tree(app).cursor_fingerprint
            assert first == next(iter(tree(app)._finding_nodes))  # placed with the frame
            await pilot.press("a")
            for _ in range(100):
                await pilot.pause(0.02)
                if "accepted" in tree(app).row(first).badges and screen.decisions.pending == 0:
                    break
            assert "accepted" in tree(app).row(first).badges
            app.release()
            await settle(pilot, app)
            assert screen.glance is None and screen.run_result is not None
            assert screen.run_result.findings == whole.findings
            by_fingerprint = {f.fingerprint: f for f in whole.findings}
            assert all(
                row.finding.body == by_fingerprint[row.fingerprint].body for row in tree(app).rows
            )
            assert "accepted" in tree(app).row(first).badges
            shown = app.query_one(DetailPane).markdown  # the panes waited for the whole run
            assert by_fingerprint[first].title[:20] in shown


async def test_a_key_that_needs_a_body_reads_the_whole_run_at_once(tmp_path) -> None:
    """`p` at the glance (the worker's read not in yet): the whole run is read then and
    there and the preview opens on it; the worker's read, when it comes, changes nothing."""
    from scout_tui.tui.screens.preview import PreviewScreen
    from tests.console import settle, tree

    with held_at_a_glance(tmp_path) as (app, whole):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for_glance(pilot, app)
            assert app.triage.glance is not None
            await pilot.press("p")
            assert isinstance(app.screen, PreviewScreen)
            assert app.triage.glance is None and app.triage.run_result is not None
            assert any(row.finding.body for row in tree(app).rows)
            await pilot.press("escape")
            app.release()
            await settle(pilot, app)
            assert app.triage.run_result.findings == whole.findings
            assert len(tree(app).rows) == len(whole.findings)


async def test_keys_typed_ahead_at_the_first_frame_act_where_they_land(tmp_path) -> None:
    """`down down a` read in one burst with the first frame accepts the finding two lines
    below the first, as it would a minute later; `/cuda` in one burst is a filter's text,
    never `a` accepting nor `u` undoing; `x` and a reason in one burst drop with it."""
    from textual.widgets import Input

    from tests.console import settle, tree

    with held_at_a_glance(tmp_path) as (app, _):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for_glance(pilot, app)
            shown = tree(app)
            start = shown.cursor_line
            expected = shown.get_node_at_line(start + 2)
            assert expected is not None and expected.data is not None
            burst(app, "down", "down", "a")
            await pilot.pause(0.2)
            app.release()
            await settle(pilot, app)
            decided = app.session.review.decisions()
            assert {fp for fp, e in decided.items() if e.decision == "accepted"} == (
                {expected.data.fingerprint} if expected.data.fingerprint else set()
            )
            burst(app, "/", "c", "u", "d", "a")
            await pilot.pause(0.2)
            assert app.query_one("#filter", Input).value == "cuda"
            assert app.session.review.decisions() == decided  # nothing accepted nor undone
            burst(app, "escape", "escape")  # the filter closed, the tree focused again
            await pilot.pause(0.2)
            assert app.focused is shown
            # A drop and its reason, typed ahead: the reason is the modal's, not triage keys.
            target = next(fp for fp in shown._finding_nodes if fp not in decided)
            shown.select_fingerprint(target)
            await pilot.pause(0.1)
            burst(app, "x", *"not ours", "enter")
            await pilot.pause(0.3)
            await settle(pilot, app)
            entry = app.session.review.decisions()[target]
            assert (entry.decision, entry.reason) == ("dropped", "not ours")
            assert len(app.session.review.decisions()) == len(decided) + 1
            # A demote moves the finding; the cursor goes with it before the next key.
            moved = next(
                fp
                for fp, node in shown._finding_nodes.items()
                if shown.row(fp).finding.priority is not None and fp not in decided and fp != target
            )
            shown.select_fingerprint(moved)
            await pilot.pause(0.1)
            burst(app, "-", "down")
            await pilot.pause(0.3)
            assert shown.cursor_line == shown._finding_nodes[moved].line + 1


async def test_a_cache_without_a_glance_opens_the_whole_run(tmp_path) -> None:
    """A run cached by an older scout has no glance beside it: the whole run is read first."""
    from scout_tui.session import Session
    from scout_tui.store.cache import GLANCE
    from scout_tui.tui.app import ScoutApp
    from tests.console import collected_demo, options, settle, tree

    with collected_demo(tmp_path / "world") as demo:
        session = Session(options(demo, tmp_path / "state"))
        key = session.cache._run_key(session.checkout, session.experiment, session.day)
        session.cache._forget(GLANCE + key)
        assert session.glance_run() is None
        app = ScoutApp(session, load_cached=True)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            whole = session.cached_run()
            assert whole is not None and app.triage.run_result is not None
            assert len(tree(app).rows) == len(whole.findings)
            assert any(row.finding.body for row in tree(app).rows)


def many(run, count: int):
    """`run` with its findings repeated to `count`, each its own (title and fingerprint)."""
    from scout_tui.model import Section, fingerprint

    base = [f for f in run.findings if f.section is not Section.ALL_CLEAR]
    findings = [
        base[n % len(base)].model_copy(
            update={
                "title": f"{base[n % len(base)].title} #{n}",
                "fingerprint": fingerprint("many", str(n)),
            }
        )
        for n in range(count)
    ]
    return run.model_copy(update={"findings": findings})


async def test_the_first_paint_adds_a_screen_of_nodes_and_the_rest_after(tmp_path) -> None:
    """More findings than a screen: the first frame's nodes are the first screen's, the
    rest come once it is drawn, each where a whole build puts it; anything that needs every
    node (marking the filter's result) adds the rest first."""
    from scout_tui.session import Session
    from scout_tui.tui.app import ScoutApp
    from scout_tui.tui.view import sections
    from scout_tui.tui.widgets.findings_tree import FIRST_SCREEN
    from tests.console import collected_demo, options, settle, tree

    with collected_demo(tmp_path / "world") as demo:
        session = Session(options(demo, tmp_path / "state"))
        cached = session.cached_run()
        assert cached is not None
        run = many(cached, FIRST_SCREEN * 2 + 17)
        app = ScoutApp(session, run)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            shown = tree(app)
            expected = [row.fingerprint for view in sections(shown.rows) for row in view.rows]
            assert list(shown._finding_nodes) == expected  # every node, in a whole build's order

            def leaves(node):
                for child in node.children:
                    if child.data is not None and child.data.fingerprint:
                        yield child.data.fingerprint
                    yield from leaves(child)

            assert list(leaves(shown.root)) == expected  # and under the right headers
            # A second first paint, held before its frame: a screen of nodes, not all.
            shown._finding_rows = {}
            shown.show_findings(run.findings, {}, None)
            assert FIRST_SCREEN <= len(shown._finding_nodes) < len(expected)
            shown.action_mark_filtered()  # needs every node: added first
            assert len(shown._finding_nodes) == len(expected)
            assert len(shown.marked) == len(expected)


async def test_a_burst_of_decisions_ending_in_q_keeps_every_one(tmp_path) -> None:
    """`a down a down a q` in one burst: each accept is recorded before the console quits —
    a decision shown is a decision kept."""
    from tests.console import settle, tree

    with held_at_a_glance(tmp_path) as (app, _):
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for_glance(pilot, app)
            app.release()
            await settle(pilot, app)
            shown = tree(app)

            def finding_at(line: int) -> str | None:
                node = shown.get_node_at_line(line)
                return node.data.fingerprint if node is not None and node.data else None

            start = next(
                line
                for line in range(shown.last_line)
                if all(finding_at(line + n) for n in range(3))
            )
            chosen = [finding_at(start + n) for n in range(3)]
            shown.select_fingerprint(chosen[0])
            await pilot.pause(0.1)
            burst(app, "a", "down", "a", "down", "a", "q")
            for _ in range(100):
                await pilot.pause(0.05)
                if not app.is_running:
                    break
        decided = app.session.review.decisions()
    assert {fp for fp, entry in decided.items() if entry.decision == "accepted"} == set(chosen)


async def test_keys_typed_past_a_dialogs_answer_reach_what_comes_next(tmp_path) -> None:
    """`x dup enter down x dup2 enter` in one burst: the keys after the first enter reach
    the dialog before it has answered; held there, they go to the tree once it has, and
    the second drop is made with its own reason."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        first = tree(app).cursor_fingerprint
        burst(app, "x", *"dup", "enter", "down", "x", *"dup2", "enter")
        await pilot.pause(0.5)
        await settle(pilot, app)
        assert app.is_running
        decided = app.session.review.decisions()
        dropped = {fp: e.reason for fp, e in decided.items() if e.decision == "dropped"}
        assert dropped[first] == "dup"
        assert sorted(dropped.values()) == ["dup", "dup2"]


async def test_keys_after_an_enter_that_did_not_answer_stay_in_the_dialog(tmp_path) -> None:
    """`x enter dup enter`: the first enter (no reason yet) does not answer; the keys held
    after it go on to the dialog, which is still there, and the drop has its reason."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        first = tree(app).cursor_fingerprint
        burst(app, "x", "enter", *"dup", "enter", "down")
        await pilot.pause(1.0)
        await settle(pilot, app)
        decided = app.session.review.decisions()
        dropped = {fp: e.reason for fp, e in decided.items() if e.decision == "dropped"}
        assert dropped == {first: "dup"}
        assert tree(app).cursor_fingerprint not in (None, first)  # `down` reached the tree


async def test_a_key_after_next_unreviewed_acts_where_it_went(tmp_path) -> None:
    """`n x dup enter` in one burst drops the finding `n` moved to, not the one before."""
    from scout_tui.tui.widgets.findings_tree import _leaves
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        first = shown.cursor_fingerprint
        order = _leaves(shown.root)
        after = order[order.index(first) + 1 :] + order[: order.index(first)]
        expected = next(fp for fp in after if not shown._finding_rows[fp].reviewed)
        burst(app, "n", "x", *"dup", "enter")
        await pilot.pause(0.5)
        await settle(pilot, app)
        decided = app.session.review.decisions()
        dropped = {fp: e.reason for fp, e in decided.items() if e.decision == "dropped"}
        assert dropped == {expected: "dup"}


async def test_keys_typed_after_publish_answer_its_question(tmp_path) -> None:
    """`P n down a` in one burst: publish asks GitHub before its question is up; `n` is the
    question's answer (nothing published), and `down a` act on the tree after it."""
    from scout_tui.tui.widgets.findings_tree import _leaves
    from tests.console import collected_demo, console, settle, tree

    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            shown = tree(app)
            order = _leaves(shown.root)
            start = next(
                n
                for n, fp in enumerate(order[:-1])
                if not shown._finding_rows[order[n + 1]].reviewed
                and shown._finding_nodes[order[n + 1]].line == shown._finding_nodes[fp].line + 1
            )
            shown.select_fingerprint(order[start])
            await pilot.pause(0.1)
            before = dict(app.session.review.decisions())
            burst(app, "P", "n", "down", "a")
            for _ in range(100):
                await pilot.pause(0.1)
                if app.session.review.decisions() != before:
                    break
            await settle(pilot, app)
            assert app.screen is app.triage  # the question was answered: no dialog left
            decided = app.session.review.decisions()
            changed = {fp for fp, e in decided.items() if before.get(fp) != e}
            assert changed == {order[start + 1]}
            assert decided[order[start + 1]].decision == "accepted"


async def test_escape_then_a_letter_read_as_alt_closes_the_dialog_and_acts(tmp_path) -> None:
    """A terminal reads `escape a` typed within ~50 ms as alt+a: in the drop dialog that
    is escape (cancel) then `a` (accept), not an `a` typed into the reason."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        first = tree(app).cursor_fingerprint
        burst(app, "x", "alt+a")
        await pilot.pause(0.5)
        await settle(pilot, app)
        assert app.screen is app.triage
        decided = app.session.review.decisions()
        assert {fp: e.decision for fp, e in decided.items()} == {first: "accepted"}


async def test_a_reason_typed_after_x_with_nothing_to_drop_runs_no_keys(tmp_path) -> None:
    """`x dup enter` on a section's header: nothing to drop, and the reason typed with it
    is not taken as keys (`u` would undo the decision before, `p` open the preview)."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        first = shown.cursor_fingerprint
        await pilot.press("a")
        await settle(pilot, app)
        shown.move_cursor(shown.root.children[0])  # a section's header
        await pilot.pause(0.1)
        burst(app, "x", *"dup", "enter")
        await pilot.pause(0.5)
        await settle(pilot, app)
        assert app.screen is app.triage
        decided = app.session.review.decisions()
        assert {fp: e.decision for fp, e in decided.items()} == {first: "accepted"}
        burst(app, "u")  # a key typed later is a key again
        await pilot.pause(0.5)
        await settle(pilot, app)
        assert not app.session.review.decisions()


async def test_a_filter_typed_ahead_with_its_enter_then_a_key(tmp_path) -> None:
    """`/ cuda enter a` in one burst: the filter is "cuda" (the `a` after its enter is not
    typed into it), and `a` accepts the first finding it shows."""
    from textual.widgets import Input

    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        burst(app, "/", *"cuda", "enter", "a")
        await pilot.pause(0.5)
        await settle(pilot, app)
        assert app.query_one("#filter", Input).value == "cuda"
        shown = tree(app)
        assert app.focused is shown
        decided = app.session.review.decisions()
        assert {fp: e.decision for fp, e in decided.items()} == {
            shown.cursor_fingerprint: "accepted"
        }


async def test_an_edit_typed_ahead_with_tab_and_its_save_key(tmp_path) -> None:
    """`e`, then in one burst a title's end, tab to the next field, ctrl+s: saved as typed
    (tab and the save key are keys, not lost), and `down a` act on the tree after."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        first = shown.cursor_fingerprint
        title = shown.row(first).finding.title
        burst(app, "e", "end", *" EDITED", "tab", "ctrl+s", "down", "a")
        for _ in range(40):
            await pilot.pause(0.1)
            if len(app.session.review.decisions()) == 2:
                break
        await settle(pilot, app)
        decided = app.session.review.decisions()
        assert decided[first].title == title + " EDITED"
        assert [e.decision for fp, e in decided.items() if fp != first] == ["accepted"]


async def test_keys_typed_after_a_dry_run_come_back_to_the_question(tmp_path) -> None:
    """`P d escape n down a` in one burst: the dry run, escape back to the question, `n`
    answers it (nothing published), `down a` act on the tree."""
    from tests.console import collected_demo, console, settle, tree

    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot, app)
            shown = tree(app)
            before = dict(app.session.review.decisions())
            burst(app, "P", "d", "escape", "n", "down", "a")
            for _ in range(100):
                await pilot.pause(0.1)
                if app.session.review.decisions() != before:
                    break
            await settle(pilot, app)
            assert app.screen is app.triage
            changed = {
                fp for fp, e in app.session.review.decisions().items() if before.get(fp) != e
            }
            assert changed == {shown.cursor_fingerprint}


async def test_keys_typed_after_undo_act_on_what_it_undid(tmp_path) -> None:
    """`- u down a` in one burst ends as the same keys typed one at a time: the demote is
    undone (the store answers undo, nothing predicts it), and `down a` wait for that answer
    instead of acting on the finding where the demote had put it."""
    from scout_tui.model import Priority
    from scout_tui.tui.widgets.findings_tree import _leaves
    from tests.console import settle, tree

    async def accepted_after(keys_at_once: bool, where: Path) -> set[str]:
        async with console_open(where) as (app, pilot):
            shown = tree(app)
            # A finding with another of its priority below it: the demote moves it away.
            rows = [shown.row(fp) for fp in _leaves(shown.root)]
            start = next(
                row.fingerprint
                for row, below in itertools.pairwise(rows)
                if (row.finding.section, row.finding.priority)
                == (below.finding.section, below.finding.priority)
                and row.finding.priority is not Priority.P2
            )
            shown.select_fingerprint(start)
            await settle(pilot, app)
            keys = ("-", "u", "down", "a")
            if keys_at_once:
                burst(app, *keys)
            else:
                for key in keys:
                    await pilot.press(key)
                    await settle(pilot, app)
            for _ in range(100):
                await pilot.pause(0.05)
                decided = app.session.review.decisions()
                if any(e.decision == "accepted" for e in decided.values()):
                    break
            await settle(pilot, app)
            return {fp for fp, e in decided.items() if e.decision == "accepted"}

    slowly = await accepted_after(False, tmp_path / "slowly")
    assert len(slowly) == 1
    assert await accepted_after(True, tmp_path / "at-once") == slowly


async def test_keys_read_while_the_tree_holds_keys_for_a_dialog_go_after_them(tmp_path) -> None:
    """`P d escape n` as a terminal sends it (`escape n` arrive as alt+n, and later than
    `P d`): whether `alt+n` is read before the tree has handed `d` to the question, or after
    it has but before `d` arrived, it goes after `d` — the dry run, escape back to the
    question, `n` cancels — never escape cancelling the question and `n` moving the tree."""
    from textual import events

    from scout_tui.tui.screens.publish import ConfirmPublish
    from scout_tui.tui.screens.triage import TriageScreen
    from tests.console import collected_demo, console, settle, tree

    busy = TriageScreen.on_publish_flow_busy

    def slow_busy(screen, message) -> None:  # the loop late to release the held keys
        screen.set_timer(0.3, lambda: busy(screen, message))

    for resent in (False, True):
        with (
            collected_demo(tmp_path / f"world-{resent}") as demo,
            pytest.MonkeyPatch.context() as patch,
        ):
            if not resent:
                patch.setattr(TriageScreen, "on_publish_flow_busy", slow_busy)
            app = console(demo, tmp_path / f"state-{resent}")
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot, app)
                first = tree(app).cursor_fingerprint
                before = dict(app.session.review.decisions())
                if resent:  # the question up, then alt+n queued ahead of a re-sent `d`
                    burst(app, "P")
                    for _ in range(100):
                        await pilot.pause(0.02)
                        if isinstance(app.screen, ConfirmPublish):
                            break
                    await pilot.pause(0.1)
                    read = events.Key("alt+n", None)  # in the app's queue before `d` is
                    read.set_sender(app)
                    app.post_message(read)
                    app.key_order.resend([events.Key("d", "d")])
                else:  # alt+n read while the tree still holds `d` for the question
                    burst(app, "P", "d")
                    for _ in range(100):
                        await pilot.pause(0.01)
                        if isinstance(app.screen, ConfirmPublish):
                            break
                    assert tree(app).holding_keys
                    burst(app, "alt+n")
                await pilot.pause(1.0)
                await settle(pilot, app)
                assert app.screen is app.triage  # the dry run and the question both gone
                assert tree(app).cursor_fingerprint == first  # `n` never reached the tree
                assert app.session.review.decisions() == before


async def test_a_refused_merge_keeps_the_marks_as_shown(tmp_path) -> None:
    """`space` on a finding, `m` on a dropped one: refused at once, naming the finding by its
    title; the marks stay, on the status line and on screen alike; cleared, they leave no
    ● drawn (the lines are drawn from a cache)."""
    from tests.console import settle, tree

    def drawn(shown, fingerprint: str) -> str:
        y = shown._finding_nodes[fingerprint].line - int(shown.scroll_offset.y)
        return shown.render_line(y).text

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        order = [fp for fp in shown._finding_nodes]
        marked, dropped = order[0], order[1]
        shown.select_fingerprint(dropped)
        await pilot.press("x", *"dup", "enter")
        await settle(pilot, app)
        shown.select_fingerprint(marked)
        await pilot.press("space")
        await settle(pilot, app)
        assert "●" in drawn(shown, marked)
        shown.select_fingerprint(dropped)
        await pilot.press("m")
        await settle(pilot, app)
        title = shown.row(dropped).finding.title.replace("`", "")
        said = [n.message for n in app._notifications]
        assert any("cannot merge into" in m and "it is dropped" in m for m in said), said
        assert not any(dropped in m for m in said)  # by its title, not its fingerprint
        assert any(title[:20] in m.replace("`", "") for m in said), said
        assert marked not in app.session.review.decisions()  # nothing merged
        assert shown.marked == {marked} and "●" in drawn(shown, marked)
        shown.clear_marks()
        await settle(pilot, app)
        assert "●" not in drawn(shown, marked)


async def test_while_findings_stream_in_the_cursor_stays_on_the_first(tmp_path) -> None:
    """A collection shows findings as they come: the cursor is on the first finding of the
    tree, not on whichever was found first, until the reviewer moves it; from then on a
    rebuild keeps it where they put it."""
    from scout_tui.model import Section
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown, screen = tree(app), app.triage
        findings, entries = list(screen.findings), dict(screen.entries)
        found_first = [f for f in findings if f.section is Section.ACTION_ITEMS][-1]
        shown.show_findings([found_first], entries, None)
        assert shown.cursor_fingerprint == found_first.fingerprint
        shown.show_findings(findings, entries, None)
        first = next(iter(shown._finding_nodes))
        assert first != found_first.fingerprint
        assert shown.cursor_fingerprint == first
        await pilot.press("down")
        await settle(pilot, app)
        chosen = shown.cursor_fingerprint
        assert chosen != first
        shown.show_findings(findings, entries, None)
        assert shown.cursor_fingerprint == chosen


async def test_undo_and_redo_take_the_cursor_to_what_they_changed(tmp_path) -> None:
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        order = list(shown._finding_nodes)
        far, top = order[-1], order[0]
        shown.select_fingerprint(far)
        await pilot.press("a")
        await settle(pilot, app)
        for key, state in (("u", None), ("U", "accepted")):
            shown.select_fingerprint(top)
            await pilot.press(key)
            for _ in range(50):
                await pilot.pause(0.05)
                if not app.triage.decisions.pending:
                    break
            await settle(pilot, app)
            decided = app.session.review.decisions().get(far)
            assert (decided.decision if decided else None) == state
            assert shown.cursor_fingerprint == far


async def test_keys_that_reach_a_dialog_before_its_field_has_focus_are_typed_into_it(
    tmp_path,
) -> None:
    """The reason typed right after `x` can reach the app when the dialog is up but its
    field not focused yet: kept until it is, never lost (the reason stays `dup`, not `up`)."""
    from scout_tui.tui.screens.modal import typed
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        first = tree(app).cursor_fingerprint
        app.triage.action_drop()  # the dialog pushed: its input not focused until mounted
        assert app.focused is None or app.focused is tree(app)
        for key in (*"dup", "enter"):
            app.post_message(typed(app, key, key if len(key) == 1 else None))
        for _ in range(50):
            await pilot.pause(0.05)
            if app.screen is app.triage and not app.triage.decisions.pending:
                break
        await settle(pilot, app)
        decided = app.session.review.decisions()
        assert decided[first].decision == "dropped"
        assert decided[first].reason == "dup"


async def test_accept_and_next_under_a_filter_that_drops_the_finding(tmp_path) -> None:
    """`/unreviewed` then `A` on the only unreviewed finding of its priority: the accept
    takes it (and its group) off the tree; the cursor goes to the next unreviewed finding,
    not one past it."""
    from scout_tui.tui.widgets.findings_tree import _leaves
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        await pilot.press("slash", *"unreviewed", "enter")
        await settle(pilot, app)
        shown = tree(app)
        alone = next(  # the only finding of its priority: the accept takes the group away
            _leaves(group)[0]
            for section in shown.root.children
            for group in section.children
            if group.data is not None
            and group.data.fingerprint is None
            and len(_leaves(group)) == 1
            and _leaves(group)[0] != _leaves(shown.root)[-1]
        )
        shown.select_fingerprint(alone)
        await settle(pilot, app)
        order = _leaves(shown.root)  # every one unreviewed: the filter shows no other
        expected = order[order.index(alone) + 1]
        await pilot.press("A")
        await settle(pilot, app)
        assert app.session.review.decisions()[alone].decision == "accepted"
        assert shown.cursor_fingerprint == expected


async def test_a_finding_an_edit_takes_out_of_the_filter_leaves_the_cursor_near(tmp_path) -> None:
    """The cursor's finding no longer shown after a rebuild: the cursor goes to the finding
    after it, not to the top of the tree."""
    from scout_tui.tui.widgets.findings_tree import _leaves
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown, screen = tree(app), app.triage
        order = _leaves(shown.root)
        middle = order[len(order) // 2]
        shown.select_fingerprint(middle)
        await settle(pilot, app)
        kept = [f for f in screen.findings if f.fingerprint != middle]
        shown.show_findings(kept, dict(screen.entries), None)
        assert shown.cursor_fingerprint == order[len(order) // 2 + 1]


async def test_a_triage_key_in_a_pane_acts_on_the_finding_shown(tmp_path) -> None:
    """`tab` to the panes, then `a`: the finding they show is accepted and the focus is back
    on the tree (a triage key in a pane did nothing, with no sign)."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        first = shown.cursor_fingerprint
        await pilot.press("tab")
        await settle(pilot, app)
        assert app.focused is not shown
        await pilot.press("a")
        for _ in range(40):
            await pilot.pause(0.05)
            if not app.triage.decisions.pending:
                break
        await settle(pilot, app)
        assert app.session.review.decisions()[first].decision == "accepted"
        assert app.focused is shown


async def test_the_tree_narrows_as_the_filter_is_typed(tmp_path) -> None:
    """`/` and words, no enter yet: once the typing pauses the tree shows what matches, the
    focus still in the filter; escape shows every finding again."""
    from textual.widgets import Input

    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        every = set(shown._finding_nodes)
        await pilot.press("slash", *"ci")
        await pilot.pause(0.4)
        await settle(pilot, app)
        assert isinstance(app.focused, Input)
        narrowed = set(shown._finding_nodes)
        assert narrowed and narrowed < every
        await pilot.press("escape")
        await settle(pilot, app)
        assert set(shown._finding_nodes) == every


async def test_moving_keys_in_a_pane_stay_in_the_pane(tmp_path) -> None:
    """`down`, `pagedown` in a pane scroll it: only the triage keys go to the tree."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        first = tree(app).cursor_fingerprint
        await pilot.press("tab")
        await settle(pilot, app)
        pane = app.focused
        for key in ("down", "pagedown", "up", "end", "home"):
            await pilot.press(key)
            await settle(pilot, app)
            assert app.focused is pane, key
        assert tree(app).cursor_fingerprint == first


async def test_the_tree_opens_with_its_first_headers_in_view(tmp_path) -> None:
    """Reopened on a cached run, the cursor on the first finding: the section and priority
    headers above it are on screen (the tree is placed before its first layout)."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        await settle(pilot, app)
        assert shown.cursor_line < shown.scrollable_content_region.height
        assert shown.scroll_offset.y == 0


async def test_keys_typed_after_a_triage_key_in_a_pane_follow_it_to_the_tree(tmp_path) -> None:
    """In a pane, `a down` in one burst accepts the finding shown, then moves down the
    tree; `x dup enter` drops it with its reason — as the same keys typed slowly."""
    from tests.console import settle, tree

    async with console_open(tmp_path) as (app, pilot):
        shown = tree(app)
        order = list(shown._finding_nodes)
        first, second = order[0], order[1]
        await pilot.press("tab")
        await settle(pilot, app)
        burst(app, "a", "down")
        await pilot.pause(0.5)
        await settle(pilot, app)
        decided = app.session.review.decisions()
        assert decided[first].decision == "accepted" and second not in decided
        assert shown.cursor_fingerprint == second
        await pilot.press("tab")
        await settle(pilot, app)
        burst(app, "x", *"dup", "enter")
        await pilot.pause(1.0)
        await settle(pilot, app)
        assert app.screen is app.triage  # no preview opened by the reason's `p`
        assert app.session.review.decisions()[second].reason == "dup"


async def test_keys_typed_past_the_filters_enter_reach_a_dialog_whole(tmp_path) -> None:
    """`/todo enter x dup enter` in one burst: the drop's reason is `dup`, not `up` (the
    keys re-sent after the filter went ahead of the one that waited for the dialog)."""
    from tests.console import settle

    async with console_open(tmp_path) as (app, pilot):
        burst(app, "/", *"todo", "enter", "x", *"dup", "enter")
        await pilot.pause(1.5)
        await settle(pilot, app)
        dropped = [e for e in app.session.review.decisions().values() if e.decision == "dropped"]
        assert [e.reason for e in dropped] == ["dup"]
