"""`scout demo` end to end: every finding comes from running the collectors on the sample."""

from __future__ import annotations

from scout_tui.history.parse import parse_report
from scout_tui.model import Section
from tests.cli import scout


def test_demo_prints_a_report_built_by_the_collectors(tmp_path):
    done = scout("demo", "--dir", tmp_path / "d", "--date", "2026-12-02")
    assert done.returncode == 0, done.stderr
    report = parse_report(done.stdout)
    titles = {item.title: item for item in report.items}
    assert report.date.isoformat() == "2026-12-02"
    # Its blocker merged yesterday on the local GitHub: news that follows up the item the
    # hand-written report of two days ago carried (fuzzy match, no marker), never "resolved".
    unblocked = titles["TODO in `passes.py` likely unblocked: pytorch/pytorch#161234 merged"]
    assert unblocked.section is Section.ACTION_ITEMS and unblocked.first_reported is None
    assert (
        "Follows up “TODO in `passes.py` blocked on pytorch/pytorch#161234”, reported "
        "since 2026-11-28." in unblocked.text
    )
    assert not any("161234" in t for t in titles if t.startswith("Resolved"))
    # The TODO removed today is resolved; inventories that did not grow are left out, quiet,
    # and the TODOs with no blocker are never reported (the shipped rules).
    assert "Resolved: TODO in `passes.py` blocked on pytorch/pytorch#158000" in titles
    # The commit it went in is named for what the check saw go, never as a fix of the code.
    [gone] = [
        line
        for line in done.stdout.splitlines()
        if "Resolved: TODO in `passes.py` blocked on pytorch/pytorch#158000" in line
    ]
    assert "; gone in `" in gone and "fixed by" not in gone
    assert "private_api" in {mark.fingerprint.split("-")[0] for mark in report.quiet}
    assert not any(
        item.fingerprint in {m.fingerprint for m in report.quiet} for item in report.items
    )
    assert not any((i.fingerprint or "").startswith("todo_unclassified") for i in report.items)
    # A TODO naming an API the stand-in torch has is an opportunity.
    assert any("torch.fx.passes.reinplace" in t for t in titles)
    # The GitHub collectors read the local GitHub's story.
    [ci] = [item for item in report.items if item.section is Section.CI_FAILURES]
    assert "recurring (also failed in run #104)" in ci.text
    assert "intermittent (failed in run #102, passed in #104, #103)" in ci.text
    assert "new failure (first seen in this window)" in ci.text
    assert any(
        item.fingerprint and item.fingerprint.startswith(("pr_", "issue_stale"))
        for item in report.items
    )
    # The prior reports came from the local GitHub's tracking issue; the run was published.
    assert "local GitHub:      http://127.0.0.1:" in done.stderr
    assert "published: report comment posted: http://127.0.0.1:" in done.stderr
    # A draft for each new Action Item and the new CI failure: yesterday's report was the
    # morning's, so yesterday's upstream changes are new today.
    assert "published: 8 Backlog draft(s) added" in done.stderr
