"""Run one collector on a sample world, the way `scout collect --only NAME` does."""

from __future__ import annotations

from datetime import date

from scout_tui.config import load_config
from scout_tui.demo.sample import Sample
from scout_tui.model import Finding, RunResult
from scout_tui.pipeline import RunOptions, run


def run_collector(world: Sample, name: str, as_of: date, priors: bool = True) -> RunResult:
    return run(
        RunOptions(repo=world.repo, config=load_config(world.config), as_of=as_of,
                   prior_dir=world.priors if priors else None, offline=True, only=[name])
    )  # fmt: skip


def by_kind(result: RunResult) -> dict[str, list[Finding]]:
    found: dict[str, list[Finding]] = {}
    for finding in result.findings:
        found.setdefault(finding.kind, []).append(finding)
    return found
