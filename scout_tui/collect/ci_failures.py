"""CI failure monitoring (SPEC §2.1 item 3): each configured workflow's last scheduled runs
on the branch, their failing jobs' logs streamed to the cache (a finished run's log is kept
for good), each failure classified over the window (`analysis/ci_history.py`), the
regression range between the last passing and the failing nightly.

Everything from a log onwards lives here and in `analysis/cilog.py`, so `scout ci-log`
gives the same finding for a log a reviewer already has.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

from scout_tui.analysis.ci.ci_history import RunHistory, Signature, classify, normalize_error
from scout_tui.analysis.ci.cilog import LogAnalysis, analyse
from scout_tui.analysis.ci.repro import failure_repro
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Placement,
    Progress,
    born,
)
from scout_tui.config.models import Config
from scout_tui.errors import Cancelled
from scout_tui.github.api import GitHub, WorkflowRun
from scout_tui.model import (
    Evidence,
    FileRef,
    Finding,
    RegressionRow,
    Section,
    TracebackFrame,
    fingerprint,
)
from scout_tui.nightlies.regression import regression_range

TRACEBACK_LIMIT = 200  # lines of traceback kept as evidence
IGNORED = {"cancelled", "skipped"}  # runs that say nothing about the code


def ci_finding(
    config: Config,
    source: str,
    analysis: LogAnalysis,
    regression: list[RegressionRow] | None = None,
    compare_url: str | None = None,
    *,
    classes: dict[str, str] | None = None,
    kinds: dict[str, str] | None = None,
    notes: list[str] | None = None,
    urls: list[str] | None = None,
) -> Finding | None:
    """One finding per failing workflow (or log), never one per failing test. `classes`:
    per test, how it failed over the window, said; `kinds`: the class alone ("intermittent");
    `notes`: lines said after the failures."""
    if not analysis.failures:
        return None
    rule = config.rule("ci_failure")
    first = next((f for f in analysis.failures if f.error), analysis.failures[0])
    frames = [
        TracebackFrame(
            path=f.path,
            line=f.line,
            function=f.function,
            source=f.source,
            in_experiment=f.in_experiment,
        )
        for f in first.frames
    ]
    names = analysis.failing_tests
    reasons = {f.name: f.reason for f in analysis.failures if f.reason}
    classes = classes or {}
    lines = [
        f"- {code(f.name)}"
        + (f" ({reasons[f.name]})" if f.name in reasons else "")
        + (f": {code(f.error)}" if f.error else "")
        + (f" — {classes[f.name]}" if f.name in classes else "")
        + (f"\n  The error above picked by: {f.root_rule}." if f.root_rule and f.error else "")
        for f in analysis.failures
    ]
    if notes:
        lines += ["", *notes]
    traceback = "\n".join((first.traceback or "").splitlines()[-TRACEBACK_LIMIT:]) or None
    version = f" on torch {analysis.torch_version}" if analysis.torch_version else ""
    title = f"{code(source)} failing{version}: {len(names)} test{'s' if len(names) != 1 else ''}"
    experiment_frames = [f for f in frames if f.in_experiment]
    # Every failing test's repro, the first failure's first: the reviewer picks which to run.
    ordered = [first, *(f for f in analysis.failures if f is not first)]
    repros = {f.name: r for f in ordered if (r := failure_repro(f)) is not None}
    return born(
        Placement.by(rule),
        "ci_failures",
        "ci_failure",
        fingerprint("ci_failure", source),
        title,
        "\n".join(lines),
        files=[FileRef(path=f.path, line=f.line) for f in experiment_frames[:5]],
        items=names,
        evidence=Evidence(
            traceback=traceback,
            frames=frames,
            failing_tests=names,
            error=first.error,
            regression=regression or [],
            compare_url=compare_url,
            repro=next(iter(repros.values()), None),
            repros=repros,
            test_classes=dict(kinds or {}),
            test_reasons=reasons,
            test_errors={f.name: f.error for f in analysis.failures if f.error},
            urls=list(urls or []),
            log_path=first.log,
            log_offset=first.root_offset,
        ),
    )


@dataclass
class _RunLogs:
    run: WorkflowRun
    analysis: LogAnalysis  # the failing jobs' failures together


class CiFailureCollector(Collector):
    name = "ci_failures"
    title = "CI failure monitoring"
    section = Section.CI_FAILURES
    needs = frozenset({Need.GITHUB, Need.NETWORK})
    kinds = (
        Kind("ci_failure", Lifetime.OBSERVED),
        Kind("ci_passing", Lifetime.NEWS),
        Kind("ci_no_runs", Lifetime.NEWS),
    )

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress]:
        assert ctx.github is not None
        workflows = ctx.config.ci.workflows
        for done, workflow in enumerate(workflows, 1):
            finding = self._workflow(ctx, ctx.github, workflow)
            if finding is not None:
                yield finding
            yield Progress(self.name, done, len(workflows), workflow.rsplit("/", 1)[-1])

    def _workflow(self, ctx: CollectorContext, github: GitHub, workflow: str) -> Finding | None:
        config = ctx.config
        repo, window = config.project.repo, config.windows.ci_runs
        # Three times the window: cancelled and skipped runs are listed too.
        listed = github.workflow_runs(
            repo, workflow, config.ci.branch, config.ci.event, limit=window * 3
        )
        runs = [
            r
            for r in listed
            if r.status == "completed" and r.conclusion not in IGNORED and r.created_at <= ctx.until
        ][:window]
        source = workflow.rsplit("/", 1)[-1]
        if not runs:  # never "CI green" for runs nobody saw
            where = f"branch {config.ci.branch}, event {config.ci.event}"
            return ctx.finding(
                self.name,
                "ci_no_runs",
                (source,),
                f"No scheduled runs of {code(source)} found in the window ({where})",
                f"None of the latest {window * 3} runs of {code(workflow)} on {where} completed "
                f"by {ctx.as_of}: CI is not known to be green. Check `[ci] workflows`, `branch` "
                "and `event` in scout.toml.",
            )
        if runs[0].conclusion == "success":
            green = runs[0]
            return ctx.finding(
                self.name,
                "ci_passing",
                (source,),
                f"CI green: {code(source)} run #{green.number} of {green.created_at.date()} passed",
                evidence=Evidence(urls=[green.url]),
            )
        histories: list[RunHistory] = []
        latest: _RunLogs | None = None
        for run in runs:
            if run.conclusion == "success":
                histories.append(RunHistory(run.number, run.url, passed=True))
                continue
            analysis = self._failures(ctx, github, repo, run)
            if latest is None:
                latest = _RunLogs(run, analysis)
            histories.append(
                RunHistory(run.number, run.url, passed=False, signatures=_signatures(analysis))
            )
        assert latest is not None
        classes = classify(histories)
        per_test = {s.test: f"{c.kind} ({c.detail})" for s, c in classes.items()}
        passing = next((r for r in runs if r.conclusion == "success"), None)
        notes = []
        if passing is None:
            notes.append(f"No recent success in the last {len(runs)} scheduled runs.")
        rows, compare = self._regression(ctx, github, repo, latest, passing, notes)
        finding = ci_finding(
            config,
            source,
            latest.analysis,
            rows,
            compare,
            classes=per_test,
            kinds={s.test: c.kind for s, c in classes.items()},
            notes=notes,
            urls=[latest.run.url],
        )
        if finding is None:  # a failed run whose logs name no failing test
            return ctx.finding(
                self.name,
                "ci_failure",
                (source,),
                f"{code(source)} failing: run #{latest.run.number}, no failing test in its logs",
                "The run failed outside the tests (set-up, infrastructure): see its log.",
                evidence=Evidence(urls=[latest.run.url]),
            )
        return finding

    def _failures(
        self, ctx: CollectorContext, github: GitHub, repo: str, run: WorkflowRun
    ) -> LogAnalysis:
        combined = LogAnalysis()
        for job in github.run_jobs(repo, run.id):
            if job.conclusion not in ("failure", "timed_out"):
                continue
            analysis = self._analyse(ctx, github, repo, job.id)
            combined.failures += analysis.failures
            combined.torch_version = combined.torch_version or analysis.torch_version
        return combined

    def _analyse(
        self, ctx: CollectorContext, github: GitHub, repo: str, job_id: int
    ) -> LogAnalysis:
        """A job's log, streamed to the cache once (a finished job's log never changes)."""
        host = github.api_url.split("://", 1)[-1].replace("/", "_").replace(":", "_")
        kept = ctx.cache.blob_path("ci-logs", host, repo, f"{job_id}.log") if ctx.cache else None
        if kept is not None and kept.is_file():
            return analyse(str(kept), ctx.config.project.experiment)  # names it as the log
        if ctx.cancelled.is_set():
            raise Cancelled
        with tempfile.NamedTemporaryFile(
            dir=kept.parent if kept else None, delete=False, suffix=".part"
        ) as spool:
            try:
                github.job_log(repo, job_id, spool)
                spool.flush()
                analysis = analyse(spool.name, ctx.config.project.experiment)
            except BaseException:
                os.unlink(spool.name)
                raise
        if kept is not None:
            os.replace(spool.name, kept)
        else:
            os.unlink(spool.name)
        for failure in analysis.failures:  # the log as kept (none: it was not kept)
            failure.log = str(kept) if kept is not None else None
        return analysis

    def _regression(
        self,
        ctx: CollectorContext,
        github: GitHub,
        repo: str,
        latest: _RunLogs,
        passing: WorkflowRun | None,
        notes: list[str],
    ) -> tuple[list[RegressionRow], str | None]:
        failing_version = latest.analysis.torch_version
        if failing_version is None:
            notes.append("Regression range: skipped — no torch version in the failing log.")
            return [], None
        passing_version = None
        if passing is not None:
            jobs = github.run_jobs(repo, passing.id)
            if jobs:
                passing_version = self._analyse(ctx, github, repo, jobs[0].id).torch_version
        if ctx.cache is None:
            return [RegressionRow(nightly=failing_version, status="fail")], None
        said: list[str] = []
        rows, compare = regression_range(
            ctx.config, failing_version, passing_version, ctx.cache, note=said.append
        )
        notes += [f"Regression range: {line}" for line in said if "skipped" in line]
        return rows, compare


def _signatures(analysis: LogAnalysis) -> set[Signature]:
    return {Signature(f.name, normalize_error(f.error or f.reason)) for f in analysis.failures}
