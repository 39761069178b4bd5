"""The forked `scout` of tests/cli.py is the `scout` a user starts: the same exit code,
stdout and stderr as `python -m scout_tui` in a fresh interpreter, for argv, cwd, the
environment and stdin alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli import scout, world_args


def fresh(*args, cwd=None, env=None, stdin=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scout_tui", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=stdin,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def args(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path)
    assert fresh("collect", *args).returncode == 0
    return args


def same(args: tuple, **how) -> subprocess.CompletedProcess[str]:
    forked, started = scout(*args, **how), fresh(*args, **how)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        started.returncode,
        started.stdout,
        started.stderr,
    ), args
    return forked


def test_a_forked_scout_says_what_a_started_one_says(args, sample_world, tmp_path):
    assert same(("--help",)).returncode == 0
    assert "Nightly Scout Report" in same(("report", *args)).stdout
    assert same(("triage", "list", *args, "--json")).stdout.startswith("[")
    assert same(("report", "--repo", tmp_path / "nowhere")).returncode == 2  # one line, exit 2
    assert same(("nonsense",)).returncode == 2
    # The environment is the call's: an API URL from it, and from nowhere else.
    said = same(("publish", "--dry-run", *args), env={"SCOUT_GITHUB_API_URL": "http://127.0.0.1:9"})
    assert "(from $SCOUT_GITHUB_API_URL)" in said.stdout
    # cwd: `--repo` defaults to here.
    assert "Nightly Scout Report" in same(("report", *args[2:]), cwd=sample_world.repo).stdout


def test_stdin_reaches_the_forked_scout(args):
    fingerprint = scout("triage", "list", *args, "--json").stdout.split('"fingerprint": "')[1]
    fingerprint = fingerprint.split('"', 1)[0]
    done = scout("triage", "edit", fingerprint, "--body-file", "-", *args, stdin="a new body\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"edited: {fingerprint}")


def test_a_command_past_its_timeout_is_killed_and_said(args):
    with pytest.raises(subprocess.TimeoutExpired):
        scout("collect", *args, timeout=0.01)
    assert scout("report", *args).returncode == 0  # and the next one runs
