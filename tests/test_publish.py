"""Publishing for real: PyGithub over HTTP to the local GitHub, crashes and faults included.

Every scenario ends the same way: exactly one report comment by scout for the day, one
draft per new Action Item, all in Backlog, all linked from the comment; items filed by
hand untouched."""

from __future__ import annotations

import fcntl
import json
import signal
import subprocess
import threading
import time
from datetime import UTC, date, datetime, timedelta

import pytest

from scout_tui.model import RunResult
from scout_tui.sandbox.github.http import Fault, LocalGitHub
from scout_tui.sandbox.github.world import Comment
from tests.cli import DAY, scout, scout_started
from tests.github_world import TOKEN, TRACKING_ISSUE, fast_config, scout_comments, world_for

TODAY = date.fromisoformat(DAY)
MUTATIONS = ("POST /repos", "PATCH /repos", "mutation")


def options(world, tmp_path, server, *, state="state") -> list[str]:
    return [
        "--repo",
        str(world.repo),
        "--config",
        str(fast_config(world, tmp_path)),
        "--date",
        DAY,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / state),
        "--api-url",
        server.url,
    ]


def publish(args, *, token=TOKEN, extra=("--yes",)) -> subprocess.CompletedProcess[str]:
    return scout("publish", *extra, *args, env={"GH_ENTERPRISE_TOKEN": token})


def expected_drafts(args) -> set[str]:
    """Fingerprints of the new Action Items that want a board item, from the run itself."""
    done = scout("report", *args, "--json", env={"GH_ENTERPRISE_TOKEN": TOKEN})
    run = RunResult.model_validate_json(done.stdout)
    return {
        f.fingerprint
        for f in run.findings
        if f.board_item
        and f.board is None
        and (
            (f.status.value == "new" and f.section.value in ("action_items", "ci_failures"))
            or f.decision == "promoted"
        )
    }


def check_published(server: LocalGitHub, fingerprints: set[str]) -> None:
    world = server.world
    [comment] = scout_comments(world, TODAY)
    [board] = world.projects
    status = board.field("Status")
    backlog = next(o.id for o in status.options if o.name == "Backlog")
    for fingerprint in fingerprints:
        mine = [i for i in board.items if f"scout:fp={fingerprint}" in i.body]
        assert len(mine) == 1, (fingerprint, [i.title for i in mine])
        assert mine[0].values.get(status.id) == backlog
        assert f"itemId={mine[0].full_database_id})" in comment.body
    by_hand = {i.title: i.values for i in board.items if i.body == "Filed by hand."}
    assert len(by_hand) == 2
    assert all(backlog not in values.values() for values in by_hand.values())


def mutations(server: LocalGitHub) -> list:
    return [e for e in server.log if any(m in e.description for m in MUTATIONS)]


def publish_killed_at_the_hang(server: LocalGitHub, args: list[str]) -> None:
    """`scout publish` killed with SIGKILL once the server's `hang-after` fault has applied a
    write (the process is waiting for its answer)."""
    child = scout_started("publish", "--yes", *args, env={"GH_ENTERPRISE_TOKEN": TOKEN})
    deadline = time.monotonic() + 60
    while not any(e.fault == "hang-after" for e in server.log):
        assert child.poll() is None, child.wait().stderr
        assert time.monotonic() < deadline
        time.sleep(0.02)
    child.kill_group(signal.SIGKILL)
    assert child.wait().returncode == -signal.SIGKILL


def test_a_full_publish_then_a_rerun_that_changes_nothing(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        assert wanted  # the sample has new Action Items
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert "report comment posted" in done.stdout
        check_published(server, wanted)
        before = server.world.model_dump_json(exclude={"rate_limit"})
        count = len(mutations(server))
        done = publish(args)
        assert done.returncode == 0, done.stderr
        assert "report comment updated" in done.stdout
        assert len(mutations(server)) == count  # nothing written
        assert server.world.model_dump_json(exclude={"rate_limit"}) == before


def test_a_second_publish_from_one_state_dir_waits_for_the_first(tmp_path, fresh_world):
    """Another scout holds the state dir's publish lock (a cron publish beside a reviewer's):
    `publish` says it waits, and once the lock is let go it publishes (exit 0), not fails."""
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        (tmp_path / "state").mkdir()
        holder = open(tmp_path / "state" / "publish.lock", "a+")  # noqa: SIM115
        fcntl.flock(holder, fcntl.LOCK_EX)
        release = threading.Timer(2.0, holder.close)  # the first publish ends
        release.start()
        started = time.monotonic()
        try:
            done = publish(args)
        finally:
            release.cancel()
            holder.close()
        assert done.returncode == 0, done.stderr
        assert time.monotonic() - started >= 1.5
        assert "waiting for another scout to finish: publish" in done.stderr
        assert "report comment posted" in done.stdout


def test_a_lock_held_past_the_wait_is_refused_naming_it(tmp_path):
    from scout_tui.store.state import StateError, StateStore

    store = StateStore(tmp_path)
    said: list[str] = []
    with (
        store.lock("publish", "publish"),
        pytest.raises(StateError, match=r"another scout is doing it right now .*waiting"),
        store.lock("publish", "publish", 0.5, said.append),
    ):
        pass
    assert len(said) == 1 and "waiting for another scout" in said[0]
    with store.lock("publish", "publish", 0.5, said.append):  # let go: taken at once
        assert len(said) == 1


def test_the_baseline_comes_from_the_tracking_issue(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        done = scout("collect", *args, "--json", env={"GH_ENTERPRISE_TOKEN": TOKEN})
        assert done.returncode == 0, done.stderr
        run = RunResult.model_validate_json(done.stdout)
        assert [p.date.isoformat() for p in run.prior_reports] == ["2026-11-30", "2026-12-01"]
        assert run.prior_source == f"{server.url}/demo/minititan/issues/2856"
        assert any(f.status.value == "carried" for f in run.findings)
        # The board was read too: the items filed by hand are known (none matches here).
        assert any("query node" in e.description for e in server.log)


def crash_points(fresh_world, tmp_path, timing=None) -> tuple[list[int], set[str]]:
    """The request numbers of every write of a clean publish (the run already cached), and
    the drafts it files (the same for every fresh server of this world)."""
    with LocalGitHub(world_for(fresh_world), timing=timing) as server:
        args = options(fresh_world, tmp_path, server, state="probe")
        wanted = expected_drafts(args)
        before = len(server.log)
        assert publish(args).returncode == 0
        return [e.number - before for e in mutations(server)], wanted


def test_a_crash_at_every_step_then_a_rerun(tmp_path, fresh_world):
    points, wanted = crash_points(fresh_world, tmp_path)
    assert len(points) >= 4  # the comment, a draft, its status, the link edit
    for point in points:
        fault = Fault.parse(f"{point}:hang-after")  # applied; the process dies waiting
        with LocalGitHub(world_for(fresh_world), faults=[fault]) as server:
            args = options(fresh_world, tmp_path, server, state=f"state-{point}")
            server.faults, server._count = [fault], 0  # count from the publish's first request
            publish_killed_at_the_hang(server, args)  # a crash, mid-publish
            server.faults = []
            done = publish(args)
            assert done.returncode == 0, (point, done.stderr)
            check_published(server, wanted)


@pytest.mark.parametrize("kind", ["drop-after", "500-after"])
def test_a_write_applied_with_its_answer_lost(tmp_path, fresh_world, kind):
    """Within one run: the create happened, the answer did not arrive; no duplicate."""
    for target in ("POST /repos", "addProjectV2DraftIssue"):
        with LocalGitHub(world_for(fresh_world)) as server:
            args = options(fresh_world, tmp_path, server, state=f"s-{kind}-{target[:4]}")
            wanted = expected_drafts(args)
            server.faults = [Fault.parse(f"{target}:{kind}*1")]
            done = publish(args)
            assert done.returncode == 0, done.stderr
            assert any(e.fault == kind for e in server.log)
            check_published(server, wanted)


def test_faults_are_survived(tmp_path, fresh_world):
    faults = [
        Fault.parse(spec)
        for spec in (
            "POST /repos:500*1",
            "addProjectV2DraftIssue:ratelimit*1",
            "query viewer:drop*1",
            "query node:timeout*1",
            "updateProjectV2ItemFieldValue:502*1",
        )
    ]
    with LocalGitHub(world_for(fresh_world), fault_timeout=3) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        server.log.clear()
        server.faults = faults
        done = publish(args)
        assert done.returncode == 0, done.stderr
        hit = {e.fault for e in server.log if e.fault}
        assert hit == {"500", "ratelimit", "drop", "timeout", "502"}
        check_published(server, wanted)


def test_retries_exhausted_is_one_line_and_a_rerun_finishes(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        server.faults = [Fault.parse("addProjectV2DraftIssue:500")]
        done = publish(args)
        assert done.returncode == 1
        [line] = done.stderr.strip().splitlines()[-1:]
        assert line.startswith("scout: error: GitHub answered 500 to adding a draft")
        assert line.endswith("what was done is journaled: run it again to finish")
        assert "Traceback" not in done.stderr
        server.faults = []
        assert publish(args).returncode == 0
        check_published(server, wanted)


def test_another_authors_report_comment_is_never_edited(tmp_path, fresh_world):
    world = world_for(fresh_world)
    [issue] = [i for i in world.repositories[0].issues if i.number == TRACKING_ISSUE]
    theirs = f"# Nightly Scout Report — {DAY}\n<!-- scout:report date={DAY} -->\nby the agent\n"
    issue.comments.append(Comment(id=world.new_id(), user="nightly-agent", body=theirs))
    with LocalGitHub(world) as server:
        done = publish(options(fresh_world, tmp_path, server))
        assert done.returncode == 0, done.stderr
        assert any(c.body == theirs and c.user == "nightly-agent" for c in issue.comments)
        assert len(scout_comments(server.world, TODAY)) == 1


def test_publish_refuses_what_it_cannot_do(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        done = publish(args, extra=("--yes", "--offline"))
        assert done.returncode == 2 and "publishing needs GitHub: offline" in done.stderr
        done = publish(args, token="")
        assert done.returncode == 2 and "no token for 127.0.0.1:" in done.stderr
        done = publish(args, extra=())  # no terminal, no --yes
        assert done.returncode == 2 and "pass --yes" in done.stderr
        done = publish(args, token="ghp_WRONGtoken")
        assert done.returncode == 1 and "refused the token" in done.stderr
        assert "ghp_WRONGtoken" not in done.stderr
        assert mutations(server) == []


def test_a_token_without_the_project_scope_is_told_so(tmp_path, fresh_world):
    world = world_for(fresh_world)
    world.tokens[0].scopes = ["repo"]
    with LocalGitHub(world) as server:
        done = publish(options(fresh_world, tmp_path, server))
        assert done.returncode == 1
        assert "lacks the scope project, to add drafts to the board" in done.stderr
        assert mutations(server) == []


def test_dry_run_prints_the_exact_plan_and_writes_nothing(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        done = publish(args, extra=("--dry-run",))
        assert done.returncode == 0, done.stderr
        assert f"{len(wanted)} Backlog draft" in done.stdout
        assert done.stdout.count("## Problem") == len(wanted)  # the bodies, in full
        assert mutations(server) == []


@pytest.mark.parametrize("token", ["wrong", "expired", "none", "good", "offline"])
def test_a_dry_run_with_a_token_github_refuses_exits_1(tmp_path, fresh_world, token):
    """A dry run is cron's check that tomorrow's publish will go through: a wrong or an
    expired token (GitHub: 401 Bad credentials), or none, still shows the plan, and exits 1
    saying why; the token that works (the near miss) exits 0, and so does a plan asked
    --offline (GitHub not asked). Nothing is written either way."""
    world = world_for(fresh_world)
    if token == "expired":
        world.tokens[0].expires_at = datetime.now(UTC) - timedelta(minutes=1)
    with LocalGitHub(world) as server:
        args = options(fresh_world, tmp_path, server)
        given = {"wrong": "ghp_WRONGtoken", "none": ""}.get(token, TOKEN)
        extra = ("--dry-run", "--offline") if token == "offline" else ("--dry-run",)
        done = publish(args, token=given, extra=extra)
        assert done.stdout.startswith("Publish plan for ")
        if token in ("good", "offline"):
            assert done.returncode == 0, done.stderr
        elif token == "none":
            assert done.returncode == 1
            assert done.stderr.splitlines()[-1].startswith(
                "scout: error: publishing would fail: publishing needs GitHub: no token"
            )
        else:
            assert done.returncode == 1
            assert done.stderr.splitlines()[-1].startswith(
                "scout: error: publishing would fail: GitHub refused the token (401 Bad credentials"
            )
            assert "ghp_WRONGtoken" not in done.stdout + done.stderr
        assert mutations(server) == []


def test_a_dry_run_as_json_follows_the_committed_schema(tmp_path, fresh_world):
    import jsonschema

    from scout_tui.publish.document import PLAN_SCHEMA_FILE, render_schema

    assert PLAN_SCHEMA_FILE.read_text() == render_schema(), (
        "run: python -m scout_tui.publish.document"
    )
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        wanted = expected_drafts(args)
        done = publish(args, extra=("--dry-run", "--json"))
        assert done.returncode == 0, done.stderr
        document = json.loads(done.stdout)
        jsonschema.validate(document, json.loads(PLAN_SCHEMA_FILE.read_text()))
        assert {d["fingerprint"] for d in document["drafts"]} == wanted
        assert [s["fingerprint"] for s in document["status_sets"]] == [
            d["fingerprint"] for d in document["drafts"]
        ]
        assert document["comment"]["body"].startswith("# Nightly Scout Report")
        assert document["comment"]["characters"] == len(document["comment"]["body"])
        assert document["board_checked"] is True
        assert document["comment"]["edits"] is None  # nothing posted today yet: a new one
        assert mutations(server) == []
        # Published, the next dry run says which comment it would edit (text and JSON).
        assert publish(args).returncode == 0
        again = json.loads(publish(args, extra=("--dry-run", "--json")).stdout)
        url = again["comment"]["edits"]
        assert url and "#issuecomment-" in url
        jsonschema.validate(again, json.loads(PLAN_SCHEMA_FILE.read_text()))
        text = publish(args, extra=("--dry-run",)).stdout
        assert f"  edits today's report comment {url}\n" in text
        # The drafts just filed are on the board now: said so, not as someone else's duplicates.
        assert "already on the board (no new draft)" in text.splitlines()[0]
        assert "duplicate" not in text.split("=" * 72)[0]
        # Offline, GitHub is not asked: neither "posts a new" nor "edits" is claimed.
        offline = scout("publish", "--dry-run", "--offline", *args).stdout
        assert "  posts a new report comment, or edits today's if there is one\n" in offline
        # --json alone is not a publish that prints JSON: bad usage, nothing done.
        before = len(mutations(server))
        alone = publish(args, extra=("--json", "--yes"))
        assert alone.returncode == 2 and "add --dry-run" in alone.stderr
        assert len(mutations(server)) == before


def test_a_promoted_finding_gets_a_draft(tmp_path, fresh_world):
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        listed = json.loads(
            scout("triage", "list", "--json", *args, env={"GH_ENTERPRISE_TOKEN": TOKEN}).stdout
        )
        fyi = next(r for r in listed if r["section"] == "opportunities")
        assert scout("triage", "promote", fyi["fingerprint"], *args).returncode == 0
        wanted = expected_drafts(args)
        assert fyi["fingerprint"] in wanted
        assert publish(args).returncode == 0
        check_published(server, wanted)


def test_the_token_is_in_no_artefact(tmp_path, fresh_world):
    secret = "ghp_SECRETforTHEartefactCHECK0123"
    world = world_for(fresh_world)
    world.tokens[0].token = secret
    with LocalGitHub(world, faults=[Fault.parse("addProjectV2DraftIssue:500")]) as server:
        args = options(fresh_world, tmp_path, server)
        outputs = [publish(args, token=secret)]  # fails: retries exhausted
        server.faults = []
        outputs.append(publish(args, token=secret))
        outputs.append(scout("report", *args, "--json", env={"GH_ENTERPRISE_TOKEN": secret}))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "state.sqlite3" for p in files) and any(
        p.name == "cache.db" for p in files
    )
    for path in files:
        assert secret.encode() not in path.read_bytes(), path
    for done in outputs:
        assert secret not in done.stdout + done.stderr


def test_publishing_a_partial_run_says_so(tmp_path, fresh_world):
    """A run collected offline (or with a collector that failed) is published only with a
    warning that names what is missing and how to collect again."""
    with LocalGitHub(world_for(fresh_world)) as server:
        args = options(fresh_world, tmp_path, server)
        assert scout("collect", *args, "--offline").returncode == 0
        done = publish(args, extra=("--dry-run",))
        assert done.returncode == 0, done.stderr
        warned = [line for line in done.stderr.splitlines() if "partial" in line]
        assert (
            "scout: warning: the run being published is partial — CI failure monitoring "
            "skipped: offline (--recollect collects again)" in warned
        )
        assert scout("collect", *args, env={"GH_ENTERPRISE_TOKEN": TOKEN}).returncode == 0
        again = publish(args, extra=("--dry-run",))
        assert "partial" not in again.stderr
