"""baseline → collectors → reconcile: one run, as the CLI and the console drive it."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from scout_tui.baseline import Window, in_window, load_prior_dir, since_from
from scout_tui.collectors.base import (
    Collector,
    CollectorContext,
    CollectorFinished,
    Event,
    FindingFound,
    registered,
)
from scout_tui.collectors.runner import stream
from scout_tui.config import Config, ConfigError
from scout_tui.model import CollectorState, Finding, PriorReport, RunResult, Section
from scout_tui.report.reconcile import reconcile
from scout_tui.source import NotARepository, SourceTree


@dataclass
class RunOptions:
    repo: Path
    config: Config
    as_of: date | None = None
    prior_dir: Path | None = None
    offline: bool = False
    only: Sequence[str] | None = None
    warn: Callable[[str], None] = lambda message: None
    token: str | None = field(default=None, repr=False)
    processes: int = 1  # >1: forked processes (CLI only; never from a threaded app)


def find_token() -> str | None:
    """GH_TOKEN, GITHUB_TOKEN, then `gh auth token`; None when there is none."""
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        if os.environ.get(name):
            return os.environ[name]
    if shutil.which("gh"):
        try:
            done = subprocess.run(
                ["gh", "auth", "token"], capture_output=True, text=True, timeout=5, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        token = done.stdout.strip()
        return token if done.returncode == 0 and token else None
    return None


def find_torch_root(configured: str) -> Path | None:
    """Where the installed torch's sources are, without importing it."""
    if configured:
        root = Path(configured).expanduser()
        return root if root.is_dir() else None
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def collector_sections() -> dict[str, Section]:
    return {name: cls.section for name, cls in registered().items()}


def select_collectors(only: Sequence[str] | None) -> list[type[Collector]]:
    available = registered()
    if not only:
        return list(available.values())
    unknown = [name for name in only if name not in available]
    if unknown:
        raise ValueError(f"unknown collector {', '.join(unknown)}; known: {', '.join(available)}")
    return [available[name] for name in only]


def check_rules(config: Config, collectors: Sequence[type[Collector]]) -> None:
    """Every kind a selected collector can produce needs a rule; say so before running."""
    missing = sorted({kind for cls in collectors for kind in cls.kinds if kind not in config.rules})
    if missing:
        raise ConfigError(
            f"{config.source}: [rules] has no entry for finding kind "
            + ", ".join(repr(kind) for kind in missing)
            + "; add e.g. `"
            + missing[0]
            + ' = { section = "fyi" }`'
        )


def prepare(options: RunOptions) -> tuple[CollectorContext, list[PriorReport], str]:
    """The context a run's collectors share: window, baseline, checkout."""
    source = SourceTree(options.repo)
    window = Window.for_date(options.as_of)
    config = options.config
    if not source.exists(config.project.experiment):
        raise NotARepository(
            f"{source.root} has no {config.project.experiment}/ — is this the right checkout? "
            f"([project] experiment in {config.source})"
        )
    if options.prior_dir is not None:
        all_reports = load_prior_dir(options.prior_dir, options.warn)
        prior_source = str(options.prior_dir)
    else:
        all_reports = []
        prior_source = "skipped — no GitHub layer yet (use --prior DIR)"
    priors = in_window(all_reports, window.as_of, config.windows.prior_report_days)
    since = since_from(priors, window)
    ctx = CollectorContext(
        config=config,
        repo_path=source.root,
        as_of=window.as_of,
        since=since,
        until=window.until,
        source=source,
        prior_reports=priors,
        baseline_commit=source.commit_before(since),
        head_commit=source.commit_before(window.until),
        token=options.token,
        online=not options.offline,
        github_available=False,
        torch_root=find_torch_root(config.torch.root),
    )
    return ctx, priors, prior_source


def run(options: RunOptions, on_event: Callable[[Event], None] | None = None) -> RunResult:
    collectors = select_collectors(options.only)
    check_rules(options.config, collectors)
    ctx, priors, prior_source = prepare(options)
    findings: list[Finding] = []
    states: dict[str, CollectorState] = {}
    for event in stream(ctx, collectors, options.processes):
        if on_event is not None:
            on_event(event)
        if isinstance(event, FindingFound):
            findings.append(event.finding)
        elif isinstance(event, CollectorFinished):
            states[event.state.name] = event.state
    ordered_states = [states[cls.name] for cls in collectors]
    completed = {s.name for s in ordered_states if s.state == "done"}
    completed_kinds = {kind for cls in collectors if cls.name in completed for kind in cls.kinds}
    reconciled = reconcile(
        _dedupe(findings),
        priors,
        fyi_suppress_after=ctx.config.windows.fyi_suppress_after,
        completed_kinds=completed_kinds,
        all_collectors_completed=len(completed) == len(registered()),
        unchanged_lines={
            kind: rule.unchanged for kind, rule in ctx.config.rules.items() if rule.unchanged
        },
    )
    return RunResult(
        date=ctx.as_of,
        since=ctx.since,
        repo=str(ctx.source.root),
        head=ctx.head_commit,
        baseline_commit=ctx.baseline_commit,
        prior_reports=priors,
        prior_source=prior_source,
        collectors=ordered_states,
        findings=reconciled.findings,
        suppressed=reconciled.suppressed,
    )


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per fingerprint (a collector may meet the same problem twice)."""
    seen: dict[str, Finding] = {}
    for finding in findings:
        seen.setdefault(finding.fingerprint, finding)
    return list(seen.values())
