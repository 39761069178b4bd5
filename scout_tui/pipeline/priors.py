"""What a day's run knows of the reports before it: the prior reports on the tracking
issue (by the token's user or a trusted author), the commit the latest one scanned, and
the checks of that commit that tell Resolved from gone (run offline, as of its day)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING

from scout_tui.collect.base import (
    CollectorContext,
    kinds_of,
    select_collectors,
)
from scout_tui.collect.events import (
    CollectorFinished,
    FindingFound,
)
from scout_tui.collect.runner import stream
from scout_tui.github.api import GitHubError
from scout_tui.history.baseline import (
    Window,
)
from scout_tui.history.judge import PriorCheck
from scout_tui.history.parse import is_report, parse_report
from scout_tui.model import (
    ConfigWarning,
    Finding,
    IgnoredReports,
    PriorReport,
)
from scout_tui.source.tree import SourceTree

if TYPE_CHECKING:
    from scout_tui.pipeline.day import RunOptions


def since_last_scan(
    source: SourceTree, priors: list[PriorReport], baseline: str | None, head: str
) -> str | None:
    """The commit the latest prior report scanned (its `head`), when it lies between the
    day's baseline and HEAD: what that report already told (the commits of its own day
    after midnight) is not news again. Otherwise the day's baseline."""
    scanned = priors[-1].head if priors else None
    if scanned is None or baseline is None or scanned == baseline:
        return baseline
    if not source.has_commit(scanned):
        return baseline  # a report from another clone, or from before a force-push
    if source.is_ancestor(baseline, scanned) and source.is_ancestor(scanned, head):
        return scanned
    return baseline


def reports_on_github(
    options: RunOptions, window: Window, warnings: list[str]
) -> tuple[list[PriorReport], str, list[IgnoredReports]]:
    """Prior reports: the tracking issue's comments that are reports by the token's user
    or a trusted author (anyone can comment there); the others, counted by author."""
    assert options.github is not None
    project = options.config.project
    where = f"{options.web_url.rstrip('/')}/{project.repo}/issues/{project.tracking_issue}"
    first = window.as_of - timedelta(days=options.config.windows.prior_report_days)
    try:
        trusted = {login.lower() for login in [options.github.viewer(), *project.trusted_authors]}
        comments = options.github.comments(
            project.repo, project.tracking_issue, datetime.combine(first, time(), UTC)
        )
    except GitHubError as exc:
        warnings.append(f"prior reports: skipped — {exc}")
        return [], f"skipped — {exc}", []
    reports = []
    ignored: dict[str, int] = {}
    for comment in comments:
        if not is_report(comment.body):
            continue
        if comment.author.lower() not in trusted:
            ignored[comment.author] = ignored.get(comment.author, 0) + 1
            continue
        try:
            report = parse_report(comment.body, comment.created_at.date(), comment.url)
            reports.append(report.model_copy(update={"posted_at": comment.created_at}))
        except ValueError as exc:
            warnings.append(f"prior report {comment.url} skipped: {exc}")
    return reports, where, [IgnoredReports(author=a, count=n) for a, n in ignored.items()]


def untrusted_reports_warning(ignored: Sequence[IgnoredReports]) -> ConfigWarning:
    """One line for every report comment left out, so a team adds its old agent once: a
    matter of scout.toml's, shown where its other warnings are."""
    count = sum(i.count for i in ignored)
    reports = (
        f"{count} report{'s' if count != 1 else ''} by "
        f"{', '.join(f'`{i.author}`' for i in ignored)} ignored"
    )
    if len(ignored) == 1:
        line = (
            f"{reports}: not a trusted author — add the login to `[project] "
            "trusted_authors` if it is yours"
        )
    else:
        line = (
            f"{reports}: not trusted authors — add them to `[project] trusted_authors` "
            "if they are yours"
        )
    return ConfigWarning(collector="scout.toml", subject="[project] trusted_authors", message=line)


def prior_commit(source: SourceTree, report: PriorReport) -> str | None:
    """The commit a prior report's run scanned: its marker's `head`, else the last commit
    before it was posted (a file: the end of its day)."""
    if report.head and source.has_commit(report.head):
        return report.head
    moment = report.posted_at or Window.for_date(report.date).until
    return source.commit_before(moment)


def check_prior_commit(
    options: RunOptions,
    ctx: CollectorContext,
    report: PriorReport,
    kinds: frozenset[str],
    cancel: threading.Event,
) -> PriorCheck | None:
    """The checks of `kinds`, run offline on the commit `report` scanned, as of its day."""
    head = prior_commit(ctx.source, report)
    if head is None:
        return None
    # Run even when today's tree is the same: "new since" counts from the report's day, so
    # today's answer is not that report's.
    found, checked = check_at(options, ctx, head, report.date, kinds, cancel)
    return PriorCheck(head, found, checked)


def _since(day: date) -> datetime:
    """Where a check run as of `day` alone starts counting "new": the start of that day."""
    return Window.for_date(day).until - timedelta(days=1)


def check_at(
    options: RunOptions,
    ctx: CollectorContext,
    commit: str,
    day: date,
    kinds: frozenset[str],
    cancel: threading.Event,
) -> tuple[list[Finding], frozenset[str]]:
    """What the checks of `kinds` find on `commit`'s tree, offline, as of `day`; and the
    kinds whose check ran to the end there."""
    collectors = [cls for cls in select_collectors(None) if set(kinds_of([cls])) & kinds]
    window = Window.for_date(day)
    since = _since(day)
    source = SourceTree(options.repo, cancel=cancel, at=commit, blobs=ctx.source.blobs)
    there = replace(
        ctx,
        source=source,
        as_of=day,
        since=since,
        until=window.until,
        prior_reports=[],
        baseline_commit=source.commit_before(since),
        head_commit=commit,
        online=False,
        github=None,
        github_reason="not asked: a check of an earlier commit",
    )
    found: list[Finding] = []
    done: set[str] = set()
    for event in stream(there, collectors, 1):
        if isinstance(event, FindingFound):
            found.append(event.finding)
        elif isinstance(event, CollectorFinished) and event.state.state == "done":
            done.add(event.state.name)
    return found, frozenset(kinds_of(c for c in collectors if c.name in done)) & kinds
