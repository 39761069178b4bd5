"""A change's items are its keys, not its words: a report written when they were words
still reads, the next day, as one written after (no "situation worsened", no draft status
line), and a marker that does miss an item still says so."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

import scout_tui.collect.upstream_delta.collector as upstream
from scout_tui.analysis.python.changes import describe
from scout_tui.collect.base import all_kinds
from scout_tui.history.parse import parse_report
from scout_tui.history.reconcile import reconcile
from scout_tui.model import MATERIAL_CHANGES, Finding, Status
from scout_tui.report.render import render_report

from .collector_run import run_collector
from .conftest import TODAY

YESTERDAY = TODAY - timedelta(days=1)


def _found(world) -> list[Finding]:
    """What the collector found new today (the sample's priors predate its changes)."""
    result = run_collector(world, "upstream_delta", TODAY)
    return [f for f in [*result.findings, *result.left_out] if f.status is Status.NEW]


@pytest.fixture(scope="module")
def days(sample_world):
    """Today's findings, and yesterday's report of the same findings written twice: by
    this code, and as the code before item keys wrote it (items were the changes' words:
    the one line that differs, put back)."""
    today = _found(sample_world)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(upstream, "item_key", describe)
        before_keys = _found(sample_world)
    assert [f.items for f in before_keys] != [f.items for f in today]
    return today, render_report(YESTERDAY, today), render_report(YESTERDAY, before_keys)


def _day_after(today: list[Finding], yesterday: str):
    result = reconcile(
        today,
        [parse_report(yesterday)],
        fyi_suppress_after=3,
        completed_kinds=all_kinds(),
    )
    shown = sorted((f.fingerprint, f.status, f.section, f.status_update) for f in result.findings)
    return shown, sorted(result.suppressed), sorted(f.fingerprint for f in result.left_out)


def test_a_report_written_before_item_keys_reads_as_one_written_after(days):
    today, after, before = days
    assert re.findall(r"items=([0-9a-f.]+)", after) != re.findall(r"items=([0-9a-f.]+)", before)
    said = _day_after(today, after)
    assert said == _day_after(today, before)
    changed = [f for f in today if f.kind == "surface_changed"]
    assert changed and all(f.items for f in changed)
    shown, _, left_out = said
    updates = [update for *_, update in shown if update]
    assert not [u for u in updates if u.startswith(MATERIAL_CHANGES)]  # no draft status line
    # every surface change was said yesterday: today it is carried or said once, not new
    assert {f.fingerprint for f in changed} <= {
        fp for fp, status, *_ in shown if status == "carried"
    } | set(left_out)


def test_a_marker_missing_an_item_still_says_it_is_new(days):
    """The near miss: the same old report with one change's digest taken out of its marker."""
    today, _, before = days
    changed = next(f for f in today if f.kind == "surface_changed" and len(f.items) > 1)
    marker = re.search(rf"fp={changed.fingerprint}[^>]*items=([0-9a-f.]+)", before)
    assert marker is not None
    digests = marker.group(1).split(".")
    fewer = before.replace(marker.group(1), ".".join(digests[1:]), 1)
    shown, *_ = _day_after(today, fewer)
    update = next(u for fp, _, _, u in shown if fp == changed.fingerprint)
    # news with an item not said yesterday is today's news again, not a carried item
    assert update is None or update.startswith(MATERIAL_CHANGES)
    assert next(s for fp, s, *_ in shown if fp == changed.fingerprint) == "new"
