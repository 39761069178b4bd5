"""Run one collector on a sample world, the way `scout collect --only NAME` does."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from scout_tui.config.profile import load_config
from scout_tui.model import Finding, RunResult
from scout_tui.pipeline.day import RunOptions, run
from scout_tui.sandbox.demo.sample import Sample


def run_collector(world: Sample, name: str, as_of: date, priors: bool = True) -> RunResult:
    return run(
        RunOptions(
            repo=world.repo,
            config=load_config(world.config),
            as_of=as_of,
            prior_dir=world.priors if priors else None,
            offline=True,
            only=[name],
        )
    )


def by_kind(result: RunResult) -> dict[str, list[Finding]]:
    """What the collectors found, the report's and what it left out (said already, quiet)."""
    found: dict[str, list[Finding]] = {}
    for finding in [*result.findings, *result.left_out]:
        found.setdefault(finding.kind, []).append(finding)
    return found


def commit_all(repo: Path, message: str, when: str | None = None) -> str:
    """Commit the work tree as it is (new files included), dated `when` — by default the run
    day's evening, inside the window a run as of TODAY reads; its commit id."""
    import os
    import subprocess

    from tests.conftest import TODAY

    when = when or f"{TODAY.isoformat()}T20:00:00+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, check=True, env=env)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
