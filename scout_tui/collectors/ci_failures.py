"""CI failure monitoring (SPEC §2.1 item 3): the evidence a CI finding carries.

The GitHub layer fetches the scheduled runs and streams the failing jobs' logs to the
cache; everything from a log onwards lives here and in `analysis/cilog.py`, so
`scout ci-log` gives the same finding for a log a reviewer already has.
"""

from __future__ import annotations

from scout_tui.analysis.cilog import LogAnalysis
from scout_tui.analysis.repro import ReproError, repro_command
from scout_tui.collectors.base import register
from scout_tui.collectors.github_pending import AwaitingGitHub
from scout_tui.config import Config
from scout_tui.markdown import code
from scout_tui.model import (
    Evidence,
    FileRef,
    Finding,
    RegressionRow,
    Section,
    TracebackFrame,
    fingerprint,
)

TRACEBACK_LIMIT = 200  # lines of traceback kept as evidence


def repro_for(command: str | None) -> str | None:
    if not command:
        return None
    try:
        return repro_command(command)
    except ReproError:
        return None


def ci_finding(
    config: Config,
    source: str,
    analysis: LogAnalysis,
    regression: list[RegressionRow] | None = None,
    compare_url: str | None = None,
) -> Finding | None:
    """One finding per failing workflow (or log), never one per failing test."""
    if not analysis.failures:
        return None
    rule = config.rule("ci_failure")
    first = next((f for f in analysis.failures if f.error), analysis.failures[0])
    frames = [
        TracebackFrame(path=f.path, line=f.line, function=f.function, source=f.source,
                       in_experiment=f.in_experiment)
        for f in first.frames
    ]  # fmt: skip
    names = analysis.failing_tests
    reasons = {f.name: f.reason for f in analysis.failures if f.reason}
    lines = [
        f"- {code(f.name)}"
        + (f" ({reasons[f.name]})" if f.name in reasons else "")
        + (f": {code(f.error)}" if f.error else "")
        for f in analysis.failures
    ]
    traceback = "\n".join((first.traceback or "").splitlines()[-TRACEBACK_LIMIT:]) or None
    version = f" on torch {analysis.torch_version}" if analysis.torch_version else ""
    title = f"{code(source)} failing{version}: {len(names)} test{'s' if len(names) != 1 else ''}"
    experiment_frames = [f for f in frames if f.in_experiment]
    return Finding(
        collector="ci_failures",
        kind="ci_failure",
        title=title,
        body="\n".join(lines),
        section=rule.section,
        priority=rule.priority,
        severity=rule.severity,
        board_item=rule.board_item,
        files=[FileRef(path=f.path, line=f.line) for f in experiment_frames[:5]],
        items=names,
        evidence=Evidence(
            traceback=traceback,
            frames=frames,
            failing_tests=names,
            error=first.error,
            regression=regression or [],
            compare_url=compare_url,
            repro=repro_for(first.command),
        ),
        fingerprint=fingerprint("ci_failure", source),
    )


@register
class CiFailureCollector(AwaitingGitHub):
    """Fetching the scheduled runs and their logs comes with the GitHub layer."""

    name = "ci_failures"
    title = "CI failure monitoring"
    section = Section.CI_FAILURES
    kinds = ("ci_failure",)
