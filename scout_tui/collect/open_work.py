"""Open work tracking (SPEC §2.1 item 6): pull requests and issues that mention the
experiment — open and waiting for a first review, merged in the last day (they may need a
doc or test follow-up), issues with no activity for weeks — said as changes against the
prior report, not as the whole list again every day."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from scout_tui.analysis.text.markdown import code, one_line
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Progress,
    Skipped,
)
from scout_tui.github.api import GitHub, IssueState
from scout_tui.model import Evidence, Finding, Section, item_digest

SEARCH_LIMIT = 100


def _day(moment) -> str:
    """Search qualifiers by the day: the query stays the same all day long, so a rerun's
    answer is revalidated (a 304) rather than paid for; the exact cut is made here."""
    return moment.strftime("%Y-%m-%d")


class OpenWorkCollector(Collector):
    name = "open_work"
    title = "Open work tracking"
    section = Section.FYI
    needs = frozenset({Need.GITHUB, Need.NETWORK})
    kinds = (
        Kind("pr_waiting_review", Lifetime.OBSERVED),
        Kind("pr_merged_recently", Lifetime.NEWS, follows_up=True),
        Kind("issue_stale", Lifetime.OBSERVED),
    )

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress]:
        assert ctx.github is not None
        if ctx.past_day:  # "is:open" answers for today; no search answers for a past day
            raise Skipped(
                "not reconstructible for a past day (open pull requests and issues are today's)"
            )
        github: GitHub = ctx.github
        config = ctx.config
        repo = config.project.repo
        term = config.open_work.search or config.project.experiment.rstrip("/").rsplit("/", 1)[-1]
        windows = config.windows
        scope = f"repo:{repo} {term}"

        opened = ctx.until - timedelta(days=windows.pr_review_days)
        candidates = github.search_issues(
            f"{scope} is:pr is:open created:<={_day(opened)}", SEARCH_LIMIT
        )
        waiting = [
            pr
            for pr in candidates
            if pr.created_at < opened and github.reviews(repo, pr.number) == 0
        ]
        yield Progress(self.name, 1, 3, "pull requests waiting for review")
        if waiting:
            yield self._grouped(
                ctx,
                "pr_waiting_review",
                term,
                waiting,
                f"open pull request(s) mentioning {code(term)} waiting more than "
                f"{windows.pr_review_days} days for a first review",
            )

        since = ctx.until - timedelta(hours=windows.merged_pr_hours)
        merged = [
            pr
            for pr in github.search_issues(
                f"{scope} is:pr is:merged merged:>={_day(since)}", SEARCH_LIMIT
            )
            if pr.merged_at is not None and since <= pr.merged_at <= ctx.until
        ]
        yield Progress(self.name, 2, 3, "pull requests merged")
        if merged:
            yield self._grouped(
                ctx,
                "pr_merged_recently",
                term,
                merged,
                f"pull request(s) mentioning {code(term)} merged in the last "
                f"{windows.merged_pr_hours} hours: docs or tests may need to "
                "follow",
            )

        quiet = ctx.until - timedelta(days=windows.stale_issue_days)
        stale = [
            issue
            for issue in github.search_issues(
                f"{scope} is:issue is:open updated:<={_day(quiet)}", SEARCH_LIMIT
            )
            if issue.updated_at < quiet
        ]
        yield Progress(self.name, 3, 3, "stale issues")
        if stale:
            yield self._grouped(
                ctx,
                "issue_stale",
                term,
                stale,
                f"open issue(s) mentioning {code(term)} with no activity for "
                f"{windows.stale_issue_days} days",
            )

    def _grouped(
        self, ctx: CollectorContext, kind: str, term: str, found: list[IssueState], what: str
    ) -> Finding:
        """One finding per kind; the body names what changed since the prior report in full
        and the rest in one line."""
        items = [f"#{state.number}" for state in found]
        finding = ctx.finding(
            self.name, kind, (ctx.config.project.repo, term), f"{len(found)} {what}", ""
        )
        before = _prior_digests(ctx, finding.fingerprint)
        fresh = [s for s in found if before is None or item_digest(f"#{s.number}") not in before]
        known = [s for s in found if s not in fresh]
        lines = []
        if fresh:
            heading = "New since the prior report:" if before is not None else ""
            lines += [heading] if heading else []
            lines += [
                f"- {s.repo}#{s.number} {one_line(s.title)} (by {code('@' + s.author)}"
                f", {_when(kind, s)})"
                for s in fresh
            ]
        if known:
            lines.append(
                ("As before: " if fresh else "No change since the prior report: ")
                + ", ".join(f"{s.repo}#{s.number}" for s in known)
            )
        return finding.model_copy(
            update={
                "title": f"{len(found)} {what}"
                + (f" ({len(fresh)} new)" if before is not None and fresh else ""),
                "body": "\n".join(lines),
                "items": items,
                "evidence": Evidence(urls=[s.url for s in found]),
            }
        )


def _when(kind: str, state: IssueState) -> str:
    if kind == "pr_merged_recently" and state.merged_at:
        return f"merged {state.merged_at:%Y-%m-%d %H:%M} UTC"
    if kind == "issue_stale":
        return f"last activity {state.updated_at:%Y-%m-%d}"
    return f"opened {state.created_at:%Y-%m-%d}"


def _prior_digests(ctx: CollectorContext, fingerprint: str) -> set[str] | None:
    """The items the latest prior report named under this finding; None: it did not have
    it (or was not written by scout, which keeps no item digests)."""
    if not ctx.prior_reports:
        return None
    for item in ctx.prior_reports[-1].items:
        if item.fingerprint == fingerprint and item.item_digests is not None:
            return set(item.item_digests)
    return None
