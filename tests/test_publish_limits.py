"""Publishing within GitHub's limits, and a person's edits kept: the real client over HTTP
to the local GitHub, which refuses what GitHub refuses (a body over 65,536 characters, a
draft title over 256)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from scout_tui.github.api import GitHubError
from scout_tui.history.parse import parse_report
from scout_tui.model import (
    SECTIONS,
    Evidence,
    Finding,
    Priority,
    RunResult,
    Section,
    TracebackFrame,
    item_digest,
)
from scout_tui.pipeline.day import render_markdown
from scout_tui.report.render import COMMENT_LIMIT, marker
from scout_tui.sandbox.demo.github_world import SCOUT_USER
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.session import Session, SessionOptions
from tests.cli import DAY, scout, world_args
from tests.github_world import TOKEN, TRACKING_ISSUE, fast_config, scout_comments, world_for

TODAY = date.fromisoformat(DAY)


def _session(sample, tmp_path: Path, server: LocalGitHub) -> Session:
    return Session(
        SessionOptions(
            repo=sample.repo,
            config=fast_config(sample, tmp_path),
            cache_dir=tmp_path / "cache",
            state_dir=tmp_path / "state",
            as_of=TODAY,
            api_url=server.url,
            token=TOKEN,
        )
    )


def _run(session: Session, findings: list[Finding]) -> RunResult:
    return RunResult(
        date=TODAY,
        since=datetime(2026, 11, 27, tzinfo=UTC),
        repo=session.config.project.repo,
        findings=findings,
    )


def _hex(n: int) -> str:
    return f"{n:012x}"


def _action(n: int, body: str = "It breaks the trace.", title: str = "") -> Finding:
    return Finding(
        collector="todos",
        kind="todo_unblocked",
        section=Section.ACTION_ITEMS,
        title=title or f"Drop the workaround in pass {n}",
        body=body,
        priority=Priority.P1,
        board_item=True,
        items=[f"pytorch/pytorch#{n}"],
        fingerprint=f"todo_unblocked-{_hex(n)}",
    )


def _huge_findings(fyi_count: int = 2500) -> list[Finding]:
    """More than 200 KB of report: a CI failure with a 3,000-line traceback and 40 failing
    tests, 2,500 TODOs blocked upstream (FYI), a few Action Items (one with a body of its
    own over the limit and a 400-character title)."""
    traceback = (
        "\n".join(f'  File "graph_trainer/passes.py", line {n}, in step_{n}' for n in range(3000))
        + "\nRuntimeError: "
        + "x" * 5000
    )
    ci = Finding(
        collector="ci_failures",
        kind="ci_failure",
        section=Section.CI_FAILURES,
        title="graph_trainer 8 GPU integration tests failing",
        priority=Priority.P0,
        body="The scheduled run fails.",
        board_item=True,
        fingerprint=f"ci_failure-{_hex(1)}",
        evidence=Evidence(
            traceback=traceback,
            error="RuntimeError: " + "y" * 9000,
            failing_tests=[f"tests/test_{n}.py::test_it" for n in range(40)],
            frames=[
                TracebackFrame(
                    path="graph_trainer/passes.py", line=n, function=f"step_{n}", in_experiment=True
                )
                for n in range(30)
            ],
        ),
    )
    fyi = [
        Finding(
            collector="todos",
            kind="todo_blocked",
            section=Section.FYI,
            title=f"TODO in `passes_{n}.py` blocked on pytorch/pytorch#{n}",
            body=f"`passes_{n}.py` waits on pytorch/pytorch#{n} (open). " + "w " * 80,
            items=[f"pytorch/pytorch#{n}"],
            fingerprint=f"todo_blocked-{_hex(n)}",
        )
        for n in range(fyi_count)
    ]
    long_body = "Every place it breaks:\n\n" + "\n".join(
        f"- `graph_trainer/place_{n}.py`: the copy is still there" for n in range(3000)
    )
    actions = [_action(n) for n in range(5)] + [_action(99, long_body, "Long " * 80)]
    return [ci, *fyi, *actions]


def _well_formed(body: str) -> None:
    """Every section's heading is a heading (no fence or HTML block swallowed the rest) and
    every fence that opens closes."""
    tokens = MarkdownIt("commonmark").parse(body)
    headings = [
        tokens[i + 1].content
        for i, t in enumerate(tokens)
        if t.type == "heading_open" and t.tag == "h2"
    ]
    assert headings == [traits.heading for traits in SECTIONS.values()]
    for token in tokens:
        if token.type == "fence":
            assert token.map is not None
            closing = body.split("\n")[token.map[1] - 1].strip()
            assert closing.startswith(token.markup), token.content[-200:]


def test_a_200_kb_report_is_posted_within_the_limit(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        session = _session(fresh_world, tmp_path, server)
        findings = _huge_findings()
        run = _run(session, findings)
        assert len(render_markdown(run)) > 200_000  # `scout report`: the full text
        outcome = session.publisher().publish(run)
        assert outcome.comment is not None
        [comment] = scout_comments(server.world, TODAY)
        body = comment.body
        assert len(body) <= COMMENT_LIMIT
        _well_formed(body)
        # Every finding keeps its marker, whole, so tomorrow's run matches it.
        read_back = {item.fingerprint: item for item in parse_report(body).items}
        assert set(read_back) == {f.fingerprint for f in findings}
        for finding in findings:
            item = read_back[finding.fingerprint]
            assert item.section is finding.section
            digests = sorted({item_digest(i) for i in finding.items}) or None
            assert item.item_digests == digests, finding.fingerprint
        assert "todo_blocked-000000000000" not in body  # folded: several to a comment
        assert "more lines above (see `scout report`)" in body  # the traceback, cut
        assert "… 30 more (see `scout report`)" in body  # 40 failing tests, 10 shown
        # The drafts: each within GitHub's limits, each linked from the comment.
        [board] = server.world.projects
        drafts = [i for i in board.items if i.creator == SCOUT_USER]
        assert len(drafts) == 7
        assert all(len(d.body) <= COMMENT_LIMIT and len(d.title) <= 256 for d in drafts)
        assert all(f"itemId={d.full_database_id})" in body for d in drafts)
        long_draft = next(d for d in drafts if "place_0.py" in d.body)
        assert "more (see `scout report`)" in long_draft.body
        # `scout report --as-posted` and the dry run show what is posted; the full text stays.
        posted = session.posted_markdown(run)
        assert posted != render_markdown(run) and len(posted) <= COMMENT_LIMIT
        assert session.plan(run).report == posted


def test_a_fitting_report_is_posted_whole(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        session = _session(fresh_world, tmp_path, server)
        run = _run(session, [_action(1), _action(2)])
        assert session.posted_markdown(run) == render_markdown(run)


def test_github_s_reason_for_a_422_is_said_and_it_is_not_worth_a_retry(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        github, _ = _session(fresh_world, tmp_path, server).github()
        assert github is not None
        with pytest.raises(GitHubError) as raised:
            github.create_comment("demo/minititan", TRACKING_ISSUE, "x" * (COMMENT_LIMIT + 1))
        assert "Body is too long (maximum is 65536 characters)" in str(raised.value)
        assert not raised.value.transient
        assert len([e for e in server.log if "POST /repos" in e.description]) == 1


def test_report_as_posted_prints_what_a_publish_posts(tmp_path, fresh_world):
    args = [*world_args(fresh_world, tmp_path), "--offline"]
    full = scout("report", *args)
    posted = scout("report", "--as-posted", *args)
    assert full.returncode == posted.returncode == 0, posted.stderr
    assert posted.stdout == full.stdout  # the sample's report fits: posted whole
    done = scout("report", "--as-posted", "--json", *args)
    assert done.returncode == 2
    assert "--as-posted" in done.stderr


def _line(body: str, title: str) -> str:
    return next(line for line in body.split("\n") if title in line)


def test_a_person_s_ticks_and_notes_survive_the_next_publish(tmp_path, fresh_world):
    notes = []
    with LocalGitHub(world_for(fresh_world)) as server:
        session = _session(fresh_world, tmp_path, server)
        session.publisher(note=notes.append).publish(_run(session, [_action(1), _action(2)]))
        [comment] = scout_comments(server.world, TODAY)
        first = _line(comment.body, "pass 1**")
        comment.body = comment.body.replace(
            first, first.replace("- [ ]", "- [x]") + "\n  Fixed by #77, checking tomorrow."
        )
        comment.body += "\ncc the on-call\n"
        session.publisher(note=notes.append).publish(
            _run(session, [_action(1), _action(2), _action(3)])
        )
        [comment] = scout_comments(server.world, TODAY)
        body = comment.body
        assert _line(body, "pass 1**").startswith("- [x] ")
        assert _line(body, "pass 2**").startswith("- [ ] ")
        lines = body.split("\n")
        assert lines[lines.index("  Fixed by #77, checking tomorrow.") - 1].startswith(
            "- [x] **[P1] Drop the workaround in pass 1**"
        )
        assert "cc the on-call" in body
        assert "pass 3**" in body and "itemId=" in _line(body, "pass 3**")  # scout's new item
        assert notes == []


def test_an_edit_that_conflicts_leaves_the_comment_as_the_person_left_it(tmp_path, fresh_world):
    notes = []
    with LocalGitHub(world_for(fresh_world)) as server:
        session = _session(fresh_world, tmp_path, server)
        session.publisher(note=notes.append).publish(_run(session, [_action(1)]))
        [comment] = scout_comments(server.world, TODAY)
        comment.body = comment.body.replace("It breaks the trace.", "A person's words.")
        theirs = comment.body
        changed = _action(1, body="Scout's new words.")
        session.publisher(note=notes.append).publish(_run(session, [changed]))
        [comment] = scout_comments(server.world, TODAY)
        assert comment.body == theirs
        [note] = notes
        assert "edited by hand" in note and "left it as it is" in note


def test_a_permanent_refusal_never_says_run_it_again(tmp_path, fresh_world):
    world = world_for(fresh_world)
    [board] = world.projects
    next(o for o in board.field("Status").options if o.name == "Backlog").name = "Later"
    with LocalGitHub(world) as server:
        args = [
            "--repo",
            str(fresh_world.repo),
            "--config",
            str(fast_config(fresh_world, tmp_path)),
            "--date",
            DAY,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--state-dir",
            str(tmp_path / "state"),
            "--api-url",
            server.url,
        ]
        done = scout("publish", "--yes", *args, env={"GH_ENTERPRISE_TOKEN": TOKEN})
        assert done.returncode == 1
        [line] = done.stderr.strip().splitlines()[-1:]
        assert "has no 'Status' option 'Backlog'" in line
        assert "run it again" not in line


async def test_the_console_previews_what_would_be_posted(tmp_path, monkeypatch):
    from scout_tui.tui.screens.preview import PreviewScreen
    from tests.console import collected_demo, console, settle

    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state")
        full = app.session.report_markdown(app.triage.triaged_run())
        # A limit the demo's report fits only without room for its board links: what is
        # posted is folded, the full text is not.
        monkeypatch.setattr("scout_tui.report.render.COMMENT_LIMIT", len(full))
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            await pilot.press("p")
            await settle(pilot, app)
            assert isinstance(app.screen, PreviewScreen)
            shown = app.screen.markdown
        assert shown == app.session.posted_markdown(app.triage.triaged_run()) != full
        assert len(shown) < len(full)
        assert "<details><summary>" in shown or "folded to fit" in shown


@pytest.mark.parametrize("collapse", ["details", "count"])
def test_a_folded_fyi_is_matched_tomorrow_and_its_suppression_starts(collapse):
    from datetime import timedelta

    from scout_tui.history.reconcile import reconcile
    from scout_tui.report.render import Layout, render_report

    fyi = [f for f in _huge_findings() if f.section is Section.FYI][:50]
    folded = [
        render_report(TODAY - timedelta(days=n), fyi, layout=Layout(10, collapse))
        for n in (3, 2, 1)
    ]
    if collapse == "count":  # folded to their markers: tomorrow still knows each one
        assert all(f"blocked on pytorch/pytorch#{n}" not in folded[0] for n in range(50))
    priors = [parse_report(body) for body in folded]
    done = reconcile(fyi, priors, fyi_suppress_after=3, completed_kinds={"todo_blocked"})
    assert set(done.suppressed) == {f.fingerprint for f in fyi}
    changed = fyi[0].model_copy(update={"items": ["pytorch/pytorch#1", "pytorch/pytorch#2"]})
    done = reconcile([changed], priors, fyi_suppress_after=3, completed_kinds={"todo_blocked"})
    [carried] = [f for f in done.findings if f.fingerprint == changed.fingerprint]
    assert carried.status.value == "carried" and "worsened" in (carried.status_update or "")


def test_a_person_s_long_note_is_kept_and_scout_s_part_cut_for_it(tmp_path, fresh_world):
    notes = []
    with LocalGitHub(world_for(fresh_world)) as server:
        session = _session(fresh_world, tmp_path, server)
        findings = [f for f in _huge_findings() if f.section is Section.FYI][:150]
        run = _run(session, findings)
        session.publisher(note=notes.append).publish(run)
        [comment] = scout_comments(server.world, TODAY)
        assert comment.body == render_markdown(run)  # it fits: posted whole
        note = "\n".join(f"A person's line {n} about the FYI items." for n in range(500))
        comment.body += "\n" + note + "\n"
        assert len(render_markdown(run)) + len(note) > COMMENT_LIMIT
        session.publisher(note=notes.append).publish(run)
        [comment] = scout_comments(server.world, TODAY)
        assert len(comment.body) <= COMMENT_LIMIT
        assert note in comment.body
        assert "<details><summary>150 item(s)</summary>" in comment.body  # scout's part, cut
        for finding in findings:
            assert marker(finding) in comment.body, finding.fingerprint
        # Tomorrow's 2,500 FYI items even folded to their markers do not fit beside the note:
        # the comment stays as the person left it, and that is said.
        theirs = comment.body
        session.publisher(note=notes.append).publish(_run(session, _huge_findings()))
        assert scout_comments(server.world, TODAY)[0].body == theirs
        [said] = notes
        assert said.startswith(
            "today's comment was edited by hand and what was added leaves "
            "scout's report no room: scout left it as it is"
        )


def test_the_local_github_refuses_what_github_refuses(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        session = _session(fresh_world, tmp_path, server)
        github, _ = session.github()
        assert github is not None
        posted = github.create_comment("demo/minititan", TRACKING_ISSUE, "x" * COMMENT_LIMIT)
        assert len(posted.body) == COMMENT_LIMIT  # the limit itself is allowed
        with pytest.raises(GitHubError, match=r"Body is too long \(maximum is 65536"):
            github.edit_comment("demo/minititan", posted.id, "x" * (COMMENT_LIMIT + 1))
        board = github.board("pytorch", 161, "Status")
        with pytest.raises(GitHubError, match=r"Title is too long \(maximum is 256"):
            github.add_draft(board, "t" * 257, "body")
        with pytest.raises(GitHubError, match=r"Body is too long \(maximum is 65536"):
            github.add_draft(board, "title", "b" * (COMMENT_LIMIT + 1))
        assert github.add_draft(board, "t" * 256, "b" * COMMENT_LIMIT).title == "t" * 256


async def test_the_console_says_publish_again_only_when_it_may_help(tmp_path):
    from tests.console import collected_demo, confirm_publish, console, publish_modal, settle

    with collected_demo(tmp_path / "world") as demo:
        [board] = demo.github.world.projects
        backlog = next(o for o in board.field("Status").options if o.name == "Backlog")
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=(100, 30)) as pilot:
            await settle(pilot, app)
            await publish_modal(pilot, app)
            backlog.name = "Later"  # the board changed under the reviewer: a refusal
            await confirm_publish(pilot, app)
            view = app.screen.query("Markdown").last().source
        assert "has no 'Status' option 'Backlog'" in view
        assert "publish again" not in view


def test_a_marker_on_its_own_line_under_an_item_stays_that_item_s():
    body = (
        "# Nightly Scout Report — 2026-12-02\n\n## FYI\n\n- **A hand-written item** — text\n"
        "<!-- scout:fp=todo_blocked-00000000000a -->\n\n"
        "<!-- scout:fp=todo_blocked-00000000000b -->\n"
    )
    items = parse_report(body).items
    assert [(i.title, i.fingerprint) for i in items] == [
        ("A hand-written item", "todo_blocked-00000000000a"),
        ("todo_blocked-00000000000b", "todo_blocked-00000000000b"),
    ]


def test_a_folded_marker_says_all_that_the_item_s_own_marker_says():
    from scout_tui.report.render import Layout, render_report

    fyi = [f for f in _huge_findings(60) if f.section is Section.FYI]
    fyi[0] = fyi[0].model_copy(update={"first_reported": date(2026, 11, 20), "items": []})
    fyi[1] = fyi[1].model_copy(update={"items": ["a", "b", "a"]})
    body = render_report(TODAY, fyi, layout=Layout(10, "count"))
    assert body.count("scout:folded kind=todo_blocked") == 2  # 40 to a line
    folded = {i.fingerprint: i for i in parse_report(body).items}
    full = {i.fingerprint: i for i in parse_report(render_report(TODAY, fyi)).items}
    assert set(folded) == set(full) == {f.fingerprint for f in fyi}
    for fp, item in full.items():
        assert (folded[fp].item_digests, folded[fp].first_reported, folded[fp].section) == (
            item.item_digests,
            item.first_reported,
            item.section,
        )
    assert folded[fyi[0].fingerprint].first_reported == date(2026, 11, 20)


@pytest.mark.parametrize("fits_at", [0, 2, 4, None])
def test_the_report_is_cut_no_further_than_it_must_and_a_hopeless_one_fails_fast(fits_at):
    """fit_report takes the first layout, longest first, that fits: the whole report on an
    ordinary day (one render); when even the shortest does not fit, it says so after two
    renders, not five."""
    from scout_tui.report.render import Layout, ReportTooLong, fit_report

    lengths = [500, 400, 300, 200, 100]  # each layout of fit_report's order, shorter
    rendered: list[int] = []

    def render(layout: Layout) -> str:
        order = [
            Layout(list_items=3),
            Layout(3),
            Layout(3, "details"),
            Layout(3, "count"),
            Layout(3, "count", cut_sections=True),
        ]
        n = order.index(layout)
        rendered.append(n)
        return "x" * lengths[n]

    limit = lengths[fits_at] if fits_at is not None else 50
    if fits_at is None:
        with pytest.raises(ReportTooLong):
            fit_report(render, 3, limit)
        assert rendered == [0, 4]
        return
    assert len(fit_report(render, 3, limit)) == lengths[fits_at]
    # The shortest, rendered second, is not rendered again when it is the one that fits.
    assert rendered == ([0] if fits_at == 0 else [0, 4, *range(1, min(fits_at, 3) + 1)])
