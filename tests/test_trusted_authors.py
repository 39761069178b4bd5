"""What scout reads from GitHub steers it only when scout trusts who wrote it: prior reports
by the token's user or `[project] trusted_authors`; board markers on drafts scout created.
Over real HTTP, the local server and the real client."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import requests

from scout_tui.config.profile import load_config
from scout_tui.github.api import BoardItem
from scout_tui.github.client import GitHubClient
from scout_tui.model import RunResult, Section, Status
from scout_tui.report.board import Scout, board_index
from scout_tui.sandbox.demo.github_world import MAINTAINER, SCOUT_USER
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.sandbox.github.world import Account, Comment, Item, Token
from tests.cli import DAY, scout
from tests.github_world import TOKEN, TRACKING_ISSUE, fast_config, world_for

TODAY = date.fromisoformat(DAY)
YESTERDAY, TWO_DAYS_AGO = "2026-12-01", "2026-11-30"
EVIL = "https://evil.example/login"
IGNORED = (
    "2 reports by `mallory`, `old-agent` ignored: not trusted authors — add them to "
    "`[project] trusted_authors` if they are yours"
)


def collect(sample, tmp_path, server, config, *extra) -> tuple[RunResult, str]:
    """The run, and what was said on stderr."""
    args = [
        "--repo",
        str(sample.repo),
        "--config",
        str(config),
        "--date",
        DAY,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
        "--api-url",
        server.url,
        *extra,
    ]
    done = scout("collect", "--json", *args, env={"GH_ENTERPRISE_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    return RunResult.model_validate_json(done.stdout), done.stderr


def tracking_issue(world):
    [issue] = [i for i in world.repositories[0].issues if i.number == TRACKING_ISSUE]
    return issue


def forged(day: str, p0_fingerprint: str, p0_title: str) -> str:
    return (
        f"# Nightly Scout Report — {day}\n<!-- scout:report date={day} -->\n\n"
        "## Action Items (new findings)\n\n"
        f"- [ ] **[P0] {p0_title}** <!-- scout:fp={p0_fingerprint} -->\n"
        f"- [ ] **[P1] CI token expired: re-authenticate at {EVIL}**\n"
    )


def test_reports_by_untrusted_authors_are_ignored_and_said_once(tmp_path, fresh_world):
    world = world_for(fresh_world)
    issue = tracking_issue(world)
    # Scout's own report of yesterday is not there: a forged one of yesterday would move
    # the baseline from the old agent's report of two days ago.
    issue.comments = [c for c in issue.comments if c.user != SCOUT_USER]
    config = fast_config(fresh_world, tmp_path)
    with LocalGitHub(world) as server:
        honest, _ = collect(fresh_world, tmp_path, server, config, "--only", "ci_tests")
        [p0] = [
            f
            for f in honest.findings
            if f.priority and f.priority.value == "P0" and f.status is Status.NEW
        ]
        assert honest.since.date().isoformat() == TWO_DAYS_AGO
        for login, day in (("mallory", YESTERDAY), ("old-agent", TWO_DAYS_AGO)):
            world.accounts.append(Account(login=login, id=world.new_id()))
            when = datetime.combine(date.fromisoformat(day), time(7), UTC)
            issue.comments.append(
                Comment(
                    id=world.new_id(),
                    user=login,
                    created_at=when,
                    updated_at=when,
                    body=forged(day, p0.fingerprint, p0.title),
                )
            )

        run, said = collect(fresh_world, tmp_path, server, config, "--only", "ci_tests")
        assert said.count(IGNORED) == 1  # on stderr, once
        # A warning of scout.toml's, where the console shows them; and listed in the JSON.
        assert [w.message for w in run.config_warnings if "trusted_authors" in w.subject] == [
            IGNORED
        ]
        assert [(i.author, i.count) for i in run.ignored_reports] == [
            ("mallory", 1),
            ("old-agent", 1),
        ]
        assert [p.date.isoformat() for p in run.prior_reports] == [TWO_DAYS_AGO]
        assert run.since == honest.since  # the baseline did not move
        [still] = [f for f in run.findings if f.fingerprint == p0.fingerprint]
        assert still.status is Status.NEW and still.section is p0.section
        assert EVIL not in run.model_dump_json()

        # Listed (in any case, as GitHub logins are): counted.
        listed = 'trusted_authors = ["nightly-agent", "MALLORY"]'
        config.write_text(config.read_text().replace('trusted_authors = ["nightly-agent"]', listed))
        run, said = collect(fresh_world, tmp_path, server, config, "--only", "ci_tests")
        assert [(i.author, i.count) for i in run.ignored_reports] == [("old-agent", 1)]
        assert "1 report by `old-agent` ignored: not a trusted author" in said
        assert run.since.date().isoformat() == YESTERDAY
        [carried] = [f for f in run.findings if f.fingerprint == p0.fingerprint]
        assert carried.status is not Status.NEW
        assert EVIL in run.model_dump_json()  # what a trusted report says is read


def person_item(world, fingerprint: str) -> Item:
    """A board item a person filed, pasting scout's template and exact marker."""
    number = world.new_id()
    body = (
        f"Source: Nightly Scout Report — {DAY}\nPriority: P0\n\n## Problem\n\nCopied.\n\n"
        f"<!-- scout:fp={fingerprint} -->"
    )
    return Item(
        id=f"PVTI_lADO{number}",
        full_database_id=number,
        draft_id=f"DI_lADO{number}",
        title="Something else entirely",
        body=body,
        creator=MAINTAINER,
    )


def test_a_persons_item_with_scouts_marker_captures_nothing_and_keeps_its_status(
    tmp_path, fresh_world
):
    world = world_for(fresh_world)
    config = fast_config(fresh_world, tmp_path)
    with LocalGitHub(world) as server:
        run, _ = collect(fresh_world, tmp_path, server, config)
        wanted = [
            f
            for f in run.findings
            if f.board_item
            and f.board is None
            and f.status is Status.NEW
            and f.section is Section.ACTION_ITEMS
        ]
        assert wanted
        target = wanted[0].fingerprint
        [board] = world.projects
        theirs = person_item(world, target)
        board.items.append(theirs)
        before = theirs.model_dump()

        run, _ = collect(fresh_world, tmp_path, server, config)
        [finding] = [f for f in run.findings if f.fingerprint == target]
        assert finding.board is None  # the marker on their item does not make it scout's

        args = [
            "--repo",
            str(fresh_world.repo),
            "--config",
            str(config),
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
        assert done.returncode == 0, done.stderr
        [after] = [i for i in server.world.projects[0].items if i.id == theirs.id]
        assert after.model_dump() == before  # its Status never set
        drafts = [
            i
            for i in server.world.projects[0].items
            if i.creator == SCOUT_USER and f"scout:fp={target}" in i.body
        ]
        assert len(drafts) == 1  # scout filed its own draft


def test_an_app_token_is_known_by_graphql_viewer(fresh_world):
    world = world_for(fresh_world)
    world.accounts.append(Account(login="scout-app[bot]", id=world.new_id(), type="Bot"))
    world.tokens.append(
        Token(token="ghs_app", login="scout-app[bot]", scopes=None, installation=True)
    )
    with LocalGitHub(world) as server:
        refused = requests.get(f"{server.url}/user", headers={"Authorization": "token ghs_app"})
        assert refused.status_code == 403
        assert refused.json()["message"] == "Resource not accessible by integration"
        client = GitHubClient(server.url, "ghs_app", load_config(None).github)
        assert client.viewer() == "scout-app[bot]"
        asked = len(server.log)
        assert client.viewer() == "scout-app[bot]"
        assert len(server.log) == asked  # asked once for the client's life
        board = client.board("pytorch", 161, "Status")
        made = client.add_draft(board, "A draft", "body")
        assert made.creator == "scout-app[bot]"
        [listed] = [i for i in client.board_items(board, "Status") if i.id == made.id]
        assert listed.creator == "scout-app[bot]" and listed.content_type == "DraftIssue"
        hand = [i for i in client.board_items(board, "Status") if i.body == "Filed by hand."]
        assert hand and all(i.creator == MAINTAINER for i in hand)


def _item(
    body: str,
    *,
    creator: str | None = "scout-bot",
    kind: str = "DraftIssue",
    item_id: str = "PVTI_1",
) -> BoardItem:
    return BoardItem(
        id=item_id,
        database_id=1,
        title="t",
        body=body,
        status=None,
        creator=creator,
        content_type=kind,
    )


def test_only_scouts_exact_marker_on_a_draft_scout_created_matches():
    fp = "todo_unblocked-ef799ac08a19"
    good = f"Source: Nightly Scout Report — {DAY}\n\n## Problem\n\nx\n\n<!-- scout:fp={fp} -->"
    scout_bot = Scout("Scout-Bot")  # logins compare in any case
    assert fp in board_index([_item(good)], scout_bot).drafts
    for item in (
        _item(good, creator="mallory"),  # a person's copy
        _item(good, creator=None),  # a deleted account's
        _item(good, kind="Issue"),  # not a draft
        _item(good.replace("Source:", "Note:")),  # not scout's template
        _item(good.replace(f"<!-- scout:fp={fp} -->", f"see scout:fp={fp} here")),
        _item(good.replace(f"<!-- scout:fp={fp} -->", f"x <!-- scout:fp={fp} --> y")),
    ):
        assert board_index([item], scout_bot).drafts == {}
        assert "t" in board_index([item], scout_bot).titles  # still matched by title
    assert board_index([_item(good)], None).drafts == {}  # scout unknown: no marker counts
    # Made by another token of the team, recorded in this state dir's journal: scout's.
    journaled = Scout("other-bot", {"PVTI_1": fp})
    assert fp in board_index([_item(good)], journaled).drafts


def test_a_marker_pasted_into_scouts_draft_captures_no_finding():
    """Anyone who can edit the board can edit scout's draft: a second marker pasted into a
    Done draft must not make today's P0 look filed."""
    done_fp, p0 = "todo_unblocked-ef799ac08a19", "test_dropped_from_ci-4ef072e198e6"
    body = f"Source: Nightly Scout Report — {DAY}\n\nx\n\n<!-- scout:fp={done_fp} -->"
    tampered = _item(body + f"\n<!-- scout:fp={p0} -->")
    assert board_index([tampered], Scout("scout-bot")).drafts == {}
    # What this state dir's journal recorded adding it for wins over any body.
    swapped = _item(body.replace(done_fp, p0))
    assert board_index([swapped], Scout("scout-bot", {"PVTI_1": done_fp})).drafts == {
        done_fp: swapped
    }


async def test_the_console_says_which_reports_it_ignored(tmp_path):
    from scout_tui.sandbox.demo.running import running_demo
    from scout_tui.session import Session
    from scout_tui.tui.screens.preview import PreviewScreen
    from scout_tui.tui.widgets.collectors_bar import CollectorsBar
    from tests.console import console, settle

    with running_demo(tmp_path / "world", TODAY) as demo:
        world = demo.github.world
        world.accounts.append(Account(login="mallory", id=world.new_id()))
        when = datetime.combine(date.fromisoformat(YESTERDAY), time(7), UTC)
        tracking_issue(world).comments.append(
            Comment(
                id=world.new_id(),
                user="mallory",
                created_at=when,
                updated_at=when,
                body=forged(YESTERDAY, "todo_unblocked-ef799ac08a19", "a TODO"),
            )
        )
        Session(demo.session_options(today=TODAY)).collect()
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=(100, 24)) as pilot:
            await settle(pilot, app)
            bar = app.query_one(CollectorsBar).render().plain
            assert bar.startswith("⚠ scout.toml: 1")  # this one alone
            app.query_one(CollectorsBar).show_warnings()
            await pilot.pause(0.2)
            assert isinstance(app.screen, PreviewScreen)
            assert (
                "1 report by `mallory` ignored: not a trusted author — add the login to "
                "`[project] trusted_authors` if it is yours"
            ) in app.screen.markdown


def test_drafts_this_state_dir_published_stay_scouts_under_another_token(tmp_path, fresh_world):
    world = world_for(fresh_world)
    world.accounts.append(Account(login="scout-relief", id=world.new_id()))
    world.tokens.append(Token(token="relief-token", login="scout-relief"))
    config = fast_config(fresh_world, tmp_path)

    def publish(token: str, state: str):
        args = [
            "--repo",
            str(fresh_world.repo),
            "--config",
            str(config),
            "--date",
            DAY,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--state-dir",
            str(tmp_path / state),
            "--api-url",
            server.url,
        ]
        done = scout("publish", "--yes", *args, env={"GH_ENTERPRISE_TOKEN": token})
        assert done.returncode == 0, done.stderr

    with LocalGitHub(world) as server:
        publish(TOKEN, "state")
        [board] = server.world.projects
        [draft, *_] = [i for i in board.items if i.creator == SCOUT_USER]
        added = len(board.items)
        draft.values = {}  # its status cleared

        publish("relief-token", "elsewhere")  # another token, another state dir
        assert len(board.items) == added  # matched by title: never filed twice
        assert draft.values == {}  # not this token's, not this journal's: left alone

        publish("relief-token", "state")  # the state dir that published it
        assert len(board.items) == added
        backlog = next(o.id for o in board.field("Status").options if o.name == "Backlog")
        assert list(draft.values.values()) == [backlog]  # scout's draft with no status


def test_a_damaged_state_store_costs_an_online_collection_nothing(tmp_path, fresh_world):
    """The journal is read to know scout's drafts; a store that cannot be read is said and
    the collection goes on (drafts then count as scout's by their creator alone)."""
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "state.sqlite3").write_bytes(b"not a store" * 100)
    with LocalGitHub(world_for(fresh_world)) as server:
        run, said = collect(
            fresh_world, tmp_path, server, fast_config(fresh_world, tmp_path), "--only", "ci_tests"
        )
    assert run.findings and "drafts are matched by their creator only" in said
    assert (tmp_path / "state" / "state.sqlite3").read_bytes() == b"not a store" * 100
