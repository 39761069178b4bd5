"""Board drafts follow their finding: when a carried finding that has scout's draft changes
materially, the draft gets one dated status line, once per change, whatever box publishes
and however often. Real HTTP to the local GitHub, the real PyGithub client, `scout` run
as a user does."""

from __future__ import annotations

import re
from datetime import date

from scout_tui.config.profile import load_config
from scout_tui.report.board import DRAFT_SOURCE
from scout_tui.sandbox.demo.github_world import SCOUT_USER, demo_world
from scout_tui.sandbox.demo.running import running_demo
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.sandbox.github.world import Item, World
from scout_tui.session import Session
from tests.cli import DAY, scout
from tests.conftest import TODAY
from tests.console import console, publish_modal, settle
from tests.github_world import TOKEN, TRACKING_ISSUE, fast_config

CHANGED = "pass_untested-e8d39dc4c91c"  # one graph pass with no test, carried from 12-01
PERSONS_NOTE = "A note a person added to the draft."


def world_where_a_pass_got_its_test(sample) -> World:
    priors = {
        date.fromisoformat(p.stem): p.read_text(encoding="utf-8")
        for p in sorted(sample.priors.glob("*.md"))
    }
    return a_pass_got_its_test(demo_world(load_config(sample.config), priors))


def a_pass_got_its_test(world: World) -> World:
    """The prior report of 12-01 listed two untested passes; today one is left ("partial
    fix landed"), and the finding has scout's own draft from an earlier day."""
    [issue] = [i for i in world.repositories[0].issues if i.number == TRACKING_ISSUE]
    for comment in issue.comments:
        comment.body = comment.body.replace(
            f"scout:fp={CHANGED} items=6c9794", f"scout:fp={CHANGED} items=6c9794.abcdef"
        )
    [board] = world.projects
    number = world.new_id()
    board.items.append(
        Item(
            id=f"PVTI_lADO{number}",
            full_database_id=number,
            draft_id=f"DI_lADO{number}",
            title="[NightlyScout][P1] 2 graph passes with no test",
            body=f"{DRAFT_SOURCE}2026-11-28\nPriority: P1\n\n## Problem\n\nTwo passes.\n\n"
            f"<!-- scout:fp={CHANGED} -->\n\n{PERSONS_NOTE}",
            creator=SCOUT_USER,
        )
    )
    return world


def draft_of(server: LocalGitHub) -> Item:
    [board] = server.world.projects
    [item] = [i for i in board.items if f"scout:fp={CHANGED}" in i.body]
    return item


def args_for(sample, tmp_path, server, state: str) -> list[str]:
    return [
        "--repo",
        sample.repo,
        "--config",
        fast_config(sample, tmp_path),
        "--date",
        DAY,
        "--cache-dir",
        tmp_path / f"cache-{state}",
        "--state-dir",
        tmp_path / state,
        "--api-url",
        server.url,
    ]


def updates(server: LocalGitHub) -> int:
    return len(server.requests_matching("updateProjectV2DraftIssue"))


def test_a_changed_carried_finding_gets_one_status_line(tmp_path, fresh_world):
    env = {"GH_ENTERPRISE_TOKEN": TOKEN}
    with LocalGitHub(world_where_a_pass_got_its_test(fresh_world)) as server:
        laptop = args_for(fresh_world, tmp_path, server, "laptop")
        dry = scout("publish", "--dry-run", *laptop, env=env)
        assert dry.returncode == 0, dry.stderr
        assert "1 status line on existing drafts" in dry.stdout.splitlines()[0]
        assert (
            f"status line for the draft [NightlyScout][P1] 1 graph pass with no test: "
            f"**Status {DAY}:** partial fix landed: 1 of 2 fixed"
        ) in dry.stdout
        assert updates(server) == 0  # a dry run changes nothing

        done = scout("publish", "--yes", *laptop, env=env)
        assert done.returncode == 0, done.stderr
        assert "1 status line(s) added to existing drafts" in done.stdout
        body = draft_of(server).body
        assert body.startswith(DRAFT_SOURCE) and PERSONS_NOTE in body  # the person's edit kept
        assert body.endswith(
            f"**Status {DAY}:** partial fix landed: 1 of 2 fixed\n"
            f"<!-- scout:status={_digest(body)} -->"
        )
        assert updates(server) == 1

        # The same box again, then a box with a state dir of its own: no second line.
        assert scout("publish", "--yes", *laptop, env=env).returncode == 0
        cron = args_for(fresh_world, tmp_path, server, "cron")
        assert "status line" not in scout("publish", "--dry-run", *cron, env=env).stdout
        done = scout("publish", "--yes", *cron, env=env)
        assert done.returncode == 0, done.stderr
        assert draft_of(server).body == body
        assert updates(server) == 1


def test_a_journaled_line_is_not_written_again_when_the_draft_lost_it(tmp_path, fresh_world):
    """Someone removed the line by hand: the journal still says it was written."""
    env = {"GH_ENTERPRISE_TOKEN": TOKEN}
    with LocalGitHub(world_where_a_pass_got_its_test(fresh_world)) as server:
        laptop = args_for(fresh_world, tmp_path, server, "laptop")
        assert scout("publish", "--yes", *laptop, env=env).returncode == 0
        item = draft_of(server)
        item.body = item.body.split("\n\n**Status")[0]
        assert scout("publish", "--yes", *laptop, env=env).returncode == 0
        assert "scout:status=" not in draft_of(server).body
        assert updates(server) == 1


async def test_the_console_confirmation_lists_the_status_lines(tmp_path):
    with running_demo(tmp_path / "world", TODAY) as demo:
        a_pass_got_its_test(demo.github.world)
        Session(demo.session_options(today=TODAY)).collect()
        app = console(demo, tmp_path / "state")
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot, app)
            modal = await publish_modal(pilot, app)
            lines = modal.proposal.plan.status_lines
            assert [line.fingerprint for line in lines] == [CHANGED]
            shown = app.screen.query("Markdown").first().source
            assert "**1 status line(s)** on existing drafts" in shown
            assert f"**Status {DAY}:** partial fix landed: 1 of 2 fixed" in shown


def _digest(body: str) -> str:
    [digest] = re.findall(r"<!-- scout:status=([0-9a-f]{12}) -->", body)
    return digest


def test_a_draft_a_person_filled_gets_no_status_line_and_stops_nothing(tmp_path, fresh_world):
    """A person's long note leaves no room for the line under GitHub's 65,536 characters:
    the line is skipped with a note; the rest of the publish goes on."""
    world = world_where_a_pass_got_its_test(fresh_world)
    with LocalGitHub(world) as server:
        item = draft_of(server)
        item.body += "\n" + "n" * (65_517 - len(item.body) - 1)
        before = item.body
        done = scout(
            "publish",
            "--yes",
            *args_for(fresh_world, tmp_path, server, "laptop"),
            env={"GH_ENTERPRISE_TOKEN": TOKEN},
        )
        assert done.returncode == 0, done.stderr
        assert "too long for its status line" in done.stdout + done.stderr
        assert draft_of(server).body == before and updates(server) == 0
