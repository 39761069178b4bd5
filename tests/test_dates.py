"""`--date`: one check for every command (a day scout can see: from the experiment's first
commit to today, UTC), and the days publishing posts under (the run's own; an older run
only edits the comment that carries its date)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scout_tui.errors import UsageError
from scout_tui.history.baseline import today_utc
from scout_tui.model import RunResult
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.session import Session, SessionOptions
from tests.cli import scout, world_args
from tests.github_world import TOKEN, TRACKING_ISSUE, fast_config, scout_comments, world_for

EXPERIMENT = "torchtitan/experiments/graph_trainer"


def today() -> str:
    return today_utc().isoformat()  # the suite's pinned today ($SCOUT_TODAY)


def tomorrow() -> str:
    return (today_utc() + timedelta(days=1)).isoformat()


@pytest.mark.parametrize(
    "command",
    [
        ["collect", "--offline"],
        ["report", "--offline"],
        ["publish", "--offline", "--dry-run"],
        ["triage", "list", "--offline"],
    ],
)
def test_a_day_after_today_is_refused_by_every_command(tmp_path, sample_world, command):
    args = world_args(sample_world, tmp_path, day=tomorrow())
    done = scout(*command, *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr == f"scout: error: --date {tomorrow()} is after today ({today()}, UTC)\n"
    assert not (tmp_path / "cache").exists()  # refused before anything ran


def test_the_demo_refuses_a_day_after_today_before_building_anything(tmp_path):
    done = scout("demo", "--date", tomorrow(), "--dir", tmp_path / "demo", "--json")
    assert done.returncode == 2
    assert done.stderr == f"scout: error: --date {tomorrow()} is after today ({today()}, UTC)\n"
    assert not (tmp_path / "demo").exists()


def _git(repo: Path, *args: str, when: str = "") -> None:
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else None
    subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, env=env)


def test_a_day_before_the_experiments_first_commit_is_refused(tmp_path, sample_world):
    """The repository is older than the experiment: its history before the experiment came
    has nothing to scout."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "dev@example.com")
    _git(repo, "config", "user.name", "dev")
    (repo / "README.md").write_text("a repository before the experiment\n")
    _git(repo, "add", "README.md")
    _git(repo, "commit", "-qm", "start", when="2026-11-20T09:00:00+00:00")
    (repo / EXPERIMENT).mkdir(parents=True)
    (repo / EXPERIMENT / "__init__.py").write_text('"""the experiment"""\n')
    _git(repo, "add", EXPERIMENT)
    _git(repo, "commit", "-qm", "add the experiment", when="2026-11-28T09:00:00+00:00")
    for command in (["collect", "--offline"], ["triage", "list", "--offline"]):
        done = scout(
            *command,
            "--repo",
            repo,
            "--config",
            sample_world.config,
            "--date",
            "2026-11-24",
            "--cache-dir",
            tmp_path / "c",
            "--state-dir",
            tmp_path / "s",
        )
        assert done.returncode == 2, done.stderr
        assert done.stderr == (
            f"scout: error: --date 2026-11-24 is before the first commit of "
            f"{EXPERIMENT}/ (2026-11-28, UTC)\n"
        )


def _publish_args(world, tmp_path, server, day: str) -> list[str]:
    return [
        "--repo",
        world.repo,
        "--config",
        fast_config(world, tmp_path),
        "--date",
        day,
        "--cache-dir",
        tmp_path / "cache",
        "--state-dir",
        tmp_path / "state",
        "--api-url",
        server.url,
    ]


def _tracking_comments(server: LocalGitHub) -> int:
    [issue] = [i for i in server.world.repositories[0].issues if i.number == TRACKING_ISSUE]
    return len(issue.comments)


def _mutations(server: LocalGitHub) -> list:
    return [
        e
        for e in server.log
        if e.method in ("POST", "PATCH") and (e.path != "/graphql" or "mutation" in e.description)
    ]


def test_an_older_run_only_edits_the_comment_that_carries_its_date(tmp_path, fresh_world):
    """The sample's tracking issue holds scout's report of 2026-12-01 and the old agent's
    of 2026-11-30."""
    env = {"GH_ENTERPRISE_TOKEN": TOKEN}
    with LocalGitHub(world_for(fresh_world)) as server:
        comments = _tracking_comments(server)
        for day in ("2026-11-29", "2026-11-30"):  # none; another author's
            done = scout(
                "publish", "--yes", *_publish_args(fresh_world, tmp_path, server, day), env=env
            )
            assert done.returncode == 2, done.stderr
            assert done.stderr == (
                f"scout: error: the run of {day} has no report comment of "
                f"its own on #{TRACKING_ISSUE} to edit, and a report older "
                "than yesterday is never posted anew: publish today's run "
                "(without --date)\n"
            )
        assert _mutations(server) == []

        older = datetime.fromisoformat("2026-12-01").date()
        before = scout_comments(server.world, older)[0].body
        args = _publish_args(fresh_world, tmp_path, server, "2026-12-01")
        done = scout("publish", "--yes", *args, env=env)
        assert done.returncode == 0, done.stderr
        assert "report comment updated" in done.stdout
        [edited] = scout_comments(server.world, older)
        assert edited.body != before
        assert _tracking_comments(server) == comments  # nothing posted


def test_a_run_dated_after_today_publishes_nothing(tmp_path, sample_world):
    """A bundle's run carries its own date, past the --date check: the publisher refuses it."""
    with LocalGitHub(world_for(sample_world)) as server:
        session = Session(
            SessionOptions(
                repo=sample_world.repo,
                config=sample_world.config,
                cache_dir=tmp_path / "c",
                state_dir=tmp_path / "s",
                api_url=server.url,
                token=TOKEN,
            )
        )
        day = today_utc() + timedelta(days=1)
        run = RunResult(date=day, since=datetime.now(UTC), repo="demo/minititan")
        with pytest.raises(UsageError, match=f"the run is dated {day}, after today"):
            session.publisher().publish(run)
        assert _mutations(server) == []
