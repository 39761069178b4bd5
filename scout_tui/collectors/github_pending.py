"""Collectors that need GitHub: registered now so runs and reports show them as
"skipped — <reason>"; the GitHub layer fills in their bodies."""

from __future__ import annotations

from collections.abc import Iterator

from scout_tui.collectors.base import CollectorContext, Need, Progress, Skipped, register
from scout_tui.model import Finding, Section


class AwaitingGitHub:
    """A collector whose data comes from GitHub, before the GitHub layer exists."""

    needs = frozenset({Need.GITHUB, Need.NETWORK})

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress]:
        raise Skipped("not built yet (the GitHub collectors come next)")
        yield  # pragma: no cover  (makes this a generator)


@register
class OpenWorkCollector(AwaitingGitHub):
    name = "open_work"
    title = "Open work tracking"
    section = Section.FYI
    kinds = ("pr_waiting_review", "pr_merged_recently", "issue_stale")
