"""A new finding kind takes its collector, its spec and a rule, nothing else: a temporary
collector listed where collectors are listed, with its kinds declared, and a `[rules]`
entry in scout.toml. The kind is placed by its rule, rendered, read back from the report,
reconciled with it the next day, and matched with the board item filed for it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest

from scout_tui.collect import registry
from scout_tui.collect.base import Collector, CollectorContext, Kind, Need, all_kinds
from scout_tui.config.profile import load_config
from scout_tui.github.api import BoardItem
from scout_tui.history.parse import parse_report
from scout_tui.model import Finding, Priority, Section, Status
from scout_tui.pipeline.day import RunOptions, render_markdown, run
from scout_tui.publish.plan import build_plan, draft_title
from scout_tui.report.board import Scout, board_index
from tests.conftest import TODAY


class LintCollector(Collector):
    name = "lint_for_test"
    title = "Lint"
    section = Section.FYI
    needs = frozenset({Need.REPO})
    kinds = (Kind("lint_warning"),)

    def collect(self, ctx: CollectorContext) -> Iterator[Finding]:
        yield ctx.finding(
            self.name,
            "lint_warning",
            ("README.md",),
            "Lint warning in `README.md`",
            "a line is longer than the linter allows",
        )


@pytest.fixture
def with_lint(fresh_world, monkeypatch):
    monkeypatch.setattr(registry, "COLLECTORS", (*registry.COLLECTORS, LintCollector))
    with fresh_world.config.open("a", encoding="utf-8") as config:
        config.write(
            '\n[rules]\nlint_warning = { section = "action_items", priority = "P2", '
            'severity = "should-fix", board_item = true }\n'
        )
    return fresh_world


def _day(world, day, prior_dir=None):
    return run(
        RunOptions(
            repo=world.repo,
            config=load_config(world.config),
            as_of=day,
            prior_dir=prior_dir,
            offline=True,
            only=["lint_for_test"],
        )
    )


def test_a_new_kind_is_placed_rendered_read_back_reconciled_and_matched(with_lint, tmp_path):
    assert "lint_warning" in all_kinds()
    first = _day(with_lint, TODAY)
    assert [(c.name, c.state) for c in first.collectors] == [("lint_for_test", "done")]
    [found] = [f for f in first.findings if f.kind == "lint_warning"]
    # placed by its rule
    assert (found.section, found.priority, found.board_item) == (
        Section.ACTION_ITEMS,
        Priority.P2,
        True,
    )
    assert found.status is Status.NEW
    # rendered, and read back as the next day's prior report
    report = render_markdown(first)
    assert found.title in report
    parsed = parse_report(report)
    [item] = [i for i in parsed.items if i.fingerprint == found.fingerprint]
    assert item.section is Section.ACTION_ITEMS and item.priority is Priority.P2
    # reconciled the next day: carried, not new
    priors = tmp_path / "priors"
    priors.mkdir()
    (priors / f"{TODAY.isoformat()}.md").write_text(report, encoding="utf-8")
    second = _day(with_lint, TODAY + timedelta(days=1), priors)
    [again] = [f for f in second.findings if f.kind == "lint_warning"]
    assert again.fingerprint == found.fingerprint
    assert (again.status, again.section) == (Status.CARRIED, Section.CARRIED_FORWARD)
    assert again.first_reported == TODAY
    # a draft when the board has none; matched with the item someone filed for it
    config = load_config(with_lint.config)
    plan = build_plan(config, TODAY, report, first.findings)
    assert [d.fingerprint for d in plan.drafts] == [found.fingerprint]
    by_hand = BoardItem("PVTI_1", 1, "lint warning in readme.md", "", "Todo", creator="someone")
    board = board_index([by_hand], Scout("nightly-scout"))
    matched = build_plan(config, TODAY, report, first.findings, board)
    assert matched.drafts == [] and matched.duplicates == [draft_title(config, found)]
