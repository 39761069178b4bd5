"""Collectors that need GitHub: registered now so runs and reports show them as
"skipped — <reason>"; the GitHub layer fills in their bodies."""

from __future__ import annotations

from collections.abc import Iterator

from scout_tui.collectors.base import CollectorContext, Need, Progress, Skipped, register
from scout_tui.model import Finding, Section


@register
class OpenWorkCollector:
    name = "open_work"
    title = "Open work tracking"
    section = Section.FYI
    needs = frozenset({Need.GITHUB, Need.NETWORK, Need.TOKEN})
    kinds = ("pr_waiting_review", "pr_merged_recently", "issue_stale")

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress]:
        raise Skipped("no GitHub layer yet")
        yield  # pragma: no cover
