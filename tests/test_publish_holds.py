"""Publishing against GitHub as GitHub behaves: a board automation that moves new items to
Ready, archived items, reads that miss a new item for a while, two boxes publishing at once,
and a state store left mid-write. Real HTTP to the local GitHub, the real PyGithub client,
`scout publish` in subprocesses, killed with SIGKILL where a crash is the point."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from scout_tui.config.profile import load_config
from scout_tui.github.api import ArchivedItem
from scout_tui.github.client import GitHubClient
from scout_tui.pipeline.day import render_markdown
from scout_tui.publish.execute import Publisher
from scout_tui.publish.target import Target
from scout_tui.sandbox.demo.github_world import DEMO_TOKEN, SCOUT_USER
from scout_tui.sandbox.github.graphql_api import BoardTiming
from scout_tui.sandbox.github.http import Fault, LocalGitHub
from scout_tui.store.state import StateStore
from tests.github_world import TOKEN, fast_config, scout_comments, world_for
from tests.test_publish import (
    TODAY,
    check_published,
    crash_points,
    expected_drafts,
    options,
    publish,
    publish_killed_at_the_hang,
)
from tests.test_state import _killed_during_a_write


def _automation() -> BoardTiming:
    return BoardTiming(automation_status="Ready")  # on the add, as a board's workflow does


class _HiddenUntilScoutWaits:
    """A board whose item list misses a new item until scout waits and reads again: the
    server's clock stands still, and passes the lag only at a request that comes after a
    pause as long as scout's re-read pause (`consistency_wait / 3`). Scout's other
    requests come back to back."""

    def __init__(self, consistency_wait: float) -> None:
        self.now = 0.0
        self.pause = 0.8 * consistency_wait / 3
        self.last: float | None = None  # when the last request came
        self.waits_seen = 0  # pauses of scout's while an item was hidden
        self.timing = BoardTiming(lag=1.0, clock=lambda: self.now)

    def __call__(self, entry) -> None:
        at = time.monotonic()
        hidden = any(self.now < added + self.timing.lag for added in self.timing.added.values())
        if hidden and self.last is not None and at - self.last >= self.pause:
            self.now += self.timing.lag
            self.waits_seen += 1
        self.last = at


def _scout_drafts(server: LocalGitHub) -> list:
    [board] = server.world.projects
    return [i for i in board.items if i.creator == SCOUT_USER]


def test_killed_after_every_write_to_an_automated_board_then_a_rerun(tmp_path, fresh_world):
    """The board moves each new item to Ready; scout is killed (SIGKILL) right after each of
    its writes is applied. The rerun ends with every draft in Backlog, once."""
    points, wanted = crash_points(fresh_world, tmp_path, _automation())
    assert len(points) >= 4  # the comment, a draft, its status, the link edit
    for point in points:
        fault = Fault.parse(f"{point}:hang-after")  # applied; the process dies waiting
        with LocalGitHub(world_for(fresh_world), timing=_automation()) as server:
            args = options(fresh_world, tmp_path, server, state=f"state-{point}")
            server.faults, server._count = [fault], 0  # count from the publish's first request
            publish_killed_at_the_hang(server, args)
            server.faults = []
            done = publish(args)
            assert done.returncode == 0, (point, done.stderr)
            check_published(server, wanted)


def test_an_automation_that_moves_an_item_after_scout_set_it_is_undone_once(tmp_path, fresh_world):
    """The automation fires between scout's Backlog and its next request (the server's
    clock jumps there): scout reads the Status again and sets Backlog again."""
    now = [0.0]
    jump_next = threading.Event()

    def after_status_set(entry) -> None:
        if jump_next.is_set():
            jump_next.clear()
            now[0] += 60  # the automation (due 30 s after each add) fires before this one
        if "updateProjectV2ItemFieldValue" in entry.description:
            jump_next.set()

    timing = BoardTiming(automation_status="Ready", automation_delay=30, clock=lambda: now[0])
    with LocalGitHub(world_for(fresh_world), timing=timing, on_request=after_status_set) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        done = publish(args)
        assert done.returncode == 0, done.stderr
        check_published(server, wanted)
        sets = server.requests_matching("updateProjectV2ItemFieldValue")
        assert len(sets) == 2 * len(wanted)  # each set, moved, set again


def test_a_state_store_left_mid_write_does_not_stop_the_next_publish(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        store = _killed_during_a_write(tmp_path / "state")
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert not store.hot_journal.exists()
        check_published(server, wanted)


def test_an_archived_draft_is_skipped_with_a_note_and_the_rest_published(tmp_path, fresh_world):
    """A publish stopped before any Status was set; then someone archives one of scout's
    drafts. The rerun sets Backlog on the others, says which was left, and finishes."""
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        assert len(wanted) >= 2
        server.faults = [Fault.parse("updateProjectV2ItemFieldValue:500")]
        assert publish(args).returncode == 1  # the drafts are added, no Status is set
        server.faults = []
        archived = _scout_drafts(server)[0]
        archived.archived = True
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert (
            f"scout: warning: board item {archived.title!r} is archived: GitHub refuses "
            "changes to it, so its Status is left as it is"
        ) in done.stderr
        assert "1 archived draft(s) left as they are" in done.stdout
        [board] = server.world.projects
        status = board.field("Status")
        assert status.id not in archived.values
        backlog = next(o.id for o in status.options if o.name == "Backlog")
        others = [i for i in _scout_drafts(server) if i.id != archived.id]
        assert len(others) == len(wanted) - 1
        assert all(i.values.get(status.id) == backlog for i in others)
        assert (
            f"itemId={archived.full_database_id})"
            in server.world.repositories[0].issue(2856).comments[-1].body
        )  # still linked


def test_the_local_github_refuses_changes_to_an_archived_item(fresh_world):
    world = world_for(fresh_world)
    with LocalGitHub(world) as server:
        client = GitHubClient(server.url, TOKEN, load_config(None).github)
        board = client.board("pytorch", 161, "Status")
        made = client.add_draft(board, "A draft", "body")
        world.projects[0].items[-1].archived = True
        [item] = [i for i in client.board_items(board, "Status") if i.id == made.id]
        assert item.archived
        with pytest.raises(ArchivedItem, match="The item is archived and cannot be updated"):
            client.set_status(board, made.id, board.status_options["Backlog"])


def test_the_local_github_models_a_board_automation_and_a_lagging_item_list(fresh_world):
    now = [0.0]
    timing = BoardTiming(
        lag=5, automation_status="Ready", automation_delay=30, clock=lambda: now[0]
    )
    with LocalGitHub(world_for(fresh_world), timing=timing) as server:
        client = GitHubClient(server.url, TOKEN, load_config(None).github)
        board = client.board("pytorch", 161, "Status")
        made = client.add_draft(board, "A draft", "body")
        assert made.id not in {i.id for i in client.board_items(board, "Status")}  # lagging
        assert client.item_status(board, made.id, "Status") is None  # found by id at once
        now[0] = 10
        assert made.id in {i.id for i in client.board_items(board, "Status")}
        assert client.item_status(board, made.id, "Status") is None
        now[0] = 30
        assert client.item_status(board, made.id, "Status") == "Ready"  # the automation
        client.delete_item(board, made.id)
        assert made.id not in {i.id for i in client.board_items(board, "Status")}


def test_serve_github_takes_the_board_automation_and_lag_options(fresh_world):
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scout_tui",
            "serve-github",
            "--automation-status",
            "Ready",
            "--automation-delay",
            "0",
            "--lag",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().split()[-1]
        client = GitHubClient(url, DEMO_TOKEN, load_config(None).github)
        board = client.board("pytorch", 161, "Status")
        made = client.add_draft(board, "A draft", "body")
        assert client.item_status(board, made.id, "Status") == "Ready"
    finally:
        server.terminate()
        server.wait()


def test_a_lost_answer_to_an_add_that_reads_cannot_see_yet_is_no_duplicate(tmp_path, fresh_world):
    """The add happened, its answer was lost, and the board's item list misses the new item
    until scout waits: scout reads again (consistency_wait) instead of adding it twice."""
    board = _HiddenUntilScoutWaits(consistency_wait=1.5)
    with LocalGitHub(world_for(fresh_world), timing=board.timing, on_request=board) as server:
        args = options(fresh_world, tmp_path, server)
        config = Path(args[args.index("--config") + 1])
        config.write_text(
            config.read_text().replace("consistency_wait = 0.3", "consistency_wait = 1.5")
        )
        wanted = expected_drafts(args)
        server.faults = [Fault.parse("addProjectV2DraftIssue:drop-after*1")]
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert any(e.fault == "drop-after" for e in server.log)
        assert board.waits_seen >= 1  # it waited while the item was hidden
        check_published(server, wanted)
        assert len(_scout_drafts(server)) == len(wanted)


def test_two_publishes_at_once_from_two_boxes_end_with_one_of_each(tmp_path, fresh_world):
    """A cron box and a reviewer, each with its own state dir, released together: every
    create of one meets the same create of the other at a barrier, so both really make
    one. Each reads again after its create and removes its own copy when the other's is
    older."""
    barrier = threading.Barrier(2, timeout=60)

    def together(entry) -> None:
        if "POST /repos" in entry.description or "addProjectV2DraftIssue" in entry.description:
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait()  # broken: one box did not come, and the asserts say so

    with LocalGitHub(world_for(fresh_world), on_request=together) as server:
        cron, laptop = (options(fresh_world, tmp_path, server, state=s) for s in ("cron", "rev"))
        wanted = expected_drafts(cron)
        assert expected_drafts(laptop) == wanted
        boxes = [
            subprocess.Popen(
                [sys.executable, "-m", "scout_tui", "publish", "--yes", *args],
                env={**os.environ, "GH_ENTERPRISE_TOKEN": TOKEN},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for args in (cron, laptop)
        ]
        outputs = [box.communicate(timeout=300) for box in boxes]
        assert [box.returncode for box in boxes] == [0, 0], outputs
        assert not barrier.broken
        # Both made a comment and every draft; one of each stayed.
        assert len(server.requests_matching("POST /repos")) == 2
        assert len(server.requests_matching("addProjectV2DraftIssue")) == 2 * len(wanted)
        removed = len(server.requests_matching("DELETE /repos")) + len(
            server.requests_matching("deleteProjectV2Item")
        )
        assert removed == 1 + len(wanted)
        check_published(server, wanted)
        assert len(_scout_drafts(server)) == len(wanted)


def test_the_journal_keeps_the_body_scout_last_wrote(tmp_path, fresh_world):
    """The base of a 3-way merge with a person's edits: what scout wrote, not what the
    comment holds after someone edited it."""
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        config = load_config(Path(args[args.index("--config") + 1]))
        journal = Publisher(
            None,
            StateStore(tmp_path / "state"),
            config,  # type: ignore[arg-type]
            Target.of(config, server.url, server.url),
            render_markdown,
        )
        assert journal.last_written_body(TODAY) is None
        assert publish(args).returncode == 0
        [comment] = scout_comments(server.world, TODAY)
        written = comment.body
        assert "itemId=" in written  # the linked body, the last scout wrote
        assert journal.last_written_body(TODAY) == written
        comment.body = written.replace("- [ ]", "- [x]", 1) + "\nA note by a person.\n"
        assert journal.last_written_body(TODAY) == written


def test_a_removal_whose_answer_was_lost_is_done_not_an_error(tmp_path, fresh_world):
    faults = [
        Fault.parse("DELETE /repos:drop-after*1"),
        Fault.parse("deleteProjectV2Item:drop-after*1"),
    ]
    with LocalGitHub(world_for(fresh_world), faults=faults) as server:
        settings = load_config(fast_config(fresh_world, tmp_path)).github
        client = GitHubClient(server.url, TOKEN, settings)
        board = client.board("pytorch", 161, "Status")
        made = client.add_draft(board, "A draft", "body")
        comment = client.create_comment("demo/minititan", 2856, "a comment")
        client.delete_comment("demo/minititan", comment.id)
        client.delete_item(board, made.id)
        assert {e.fault for e in server.log if e.fault} == {"drop-after"}
        assert len([e for e in server.log if e.fault]) == 2
        assert comment.id not in {c.id for c in client.comments("demo/minititan", 2856, None)}
        assert made.id not in {i.id for i in client.board_items(board, "Status")}


def test_killed_after_an_add_then_a_rerun_before_reads_show_it(tmp_path, fresh_world):
    """The journal says the add began; the board's list does not show the item until the
    rerun waits. The rerun reads again (consistency_wait) rather than adding a second
    draft."""
    board = _HiddenUntilScoutWaits(consistency_wait=1.5)
    with LocalGitHub(world_for(fresh_world), timing=board.timing, on_request=board) as server:
        args = options(fresh_world, tmp_path, server)
        config = Path(args[args.index("--config") + 1])
        config.write_text(
            config.read_text().replace("consistency_wait = 0.3", "consistency_wait = 1.5")
        )
        wanted = expected_drafts(args)
        server.faults = [Fault.parse("addProjectV2DraftIssue:hang-after*1")]
        publish_killed_at_the_hang(server, args)
        server.faults = []
        board.last = None  # the time between the two processes is no wait of scout's
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert board.waits_seen >= 1
        check_published(server, wanted)
        assert len(_scout_drafts(server)) == len(wanted)


def test_a_draft_archived_between_the_read_and_the_write_is_skipped(tmp_path, fresh_world):
    archived: list = []

    def archive_first_status_target(entry) -> None:
        if "updateProjectV2ItemFieldValue" in entry.description and not archived:
            archived.append(_scout_drafts(server)[-1])  # the draft just added
            archived[0].archived = True

    with LocalGitHub(world_for(fresh_world), on_request=archive_first_status_target) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert f"board item {archived[0].title!r} is archived" in done.stderr
        assert len(_scout_drafts(server)) == len(wanted)
        [comment] = scout_comments(server.world, TODAY)
        assert all(f"itemId={i.full_database_id})" in comment.body for i in _scout_drafts(server))


def test_an_automation_that_fires_seconds_after_the_read_back_is_undone(tmp_path, fresh_world):
    """The board moves each new item to Ready a moment after scout read its Backlog back:
    the items scout set are read once more after consistency_wait and set back."""
    timing = BoardTiming(automation_status="Ready", automation_delay=0.2)
    with LocalGitHub(world_for(fresh_world), timing=timing) as server:
        args = options(fresh_world, tmp_path, server)  # consistency_wait 0.3
        wanted = expected_drafts(args)
        done = publish(args)
        assert done.returncode == 0, done.stderr
        time.sleep(0.3)  # nothing is left pending: every automation has fired
        check_published(server, wanted)


def test_copies_a_lost_answer_left_are_removed_by_the_next_publish(tmp_path, fresh_world):
    """The board's list lagged longer than consistency_wait: the add was made twice. The
    next publish keeps the oldest of scout's copies and removes the other."""
    with LocalGitHub(world_for(fresh_world), timing=BoardTiming(lag=1.0)) as server:
        args = options(fresh_world, tmp_path, server)  # consistency_wait 0.3 < lag
        wanted = expected_drafts(args)
        server.faults = [Fault.parse("addProjectV2DraftIssue:drop-after*1")]
        assert publish(args).returncode == 0
        assert len(_scout_drafts(server)) == len(wanted) + 1  # the lag beat the wait
        time.sleep(1.1)
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert "1 copy(ies) removed" in done.stdout + done.stderr
        check_published(server, wanted)
        assert len(_scout_drafts(server)) == len(wanted)
