"""`scout demo` end to end: every finding comes from running the collectors on the sample."""

from __future__ import annotations

from scout_tui.report.parse import parse_report
from tests.cli import scout


def test_demo_prints_a_report_built_by_the_collectors(tmp_path):
    done = scout("demo", "--dir", tmp_path / "d", "--date", "2026-12-02")
    assert done.returncode == 0, done.stderr
    report = parse_report(done.stdout)
    titles = {item.title: item for item in report.items}
    assert report.date.isoformat() == "2026-12-02"
    # Carried from the hand-written report of two days ago (fuzzy match, no marker).
    blocked = titles["TODO in `passes.py` blocked on pytorch/pytorch#161234"]
    assert blocked.first_reported.isoformat() == "2026-11-28"
    # The TODO removed today is resolved; the FYI list shrank by one.
    assert "Resolved: TODO in `passes.py` blocked on pytorch/pytorch#158000" in titles
    assert "partial fix landed: 1 of 4 fixed" in done.stdout
    # A TODO naming an API the stand-in torch has is an opportunity.
    assert any("torch.fx.passes.reinplace" in t for t in titles)
    assert "CI failure monitoring: skipped — not built yet" in done.stdout
    # The prior reports came from the local GitHub's tracking issue; the run was published.
    assert "local GitHub:      http://127.0.0.1:" in done.stderr
    assert "published: report comment posted: http://127.0.0.1:" in done.stderr
    assert "published: 1 Backlog draft(s) added" in done.stderr
