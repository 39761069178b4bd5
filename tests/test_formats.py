"""Formats across versions, one rule: scout reads every older format and marker forever
(and the attributes a later scout appends to a marker are skipped); a newer bundle_version
or run schema_version is one line telling the user to upgrade, exit 2."""

from __future__ import annotations

import gzip
import json
import re
from datetime import date

import pytest

from scout_tui.github.api import BoardItem
from scout_tui.history.parse import carries_report_marker, parse_report
from scout_tui.model import SCHEMA_VERSION
from scout_tui.report.board import Scout, board_index
from scout_tui.report.render import report_marker
from scout_tui.sandbox.demo.github_world import SCOUT_USER
from scout_tui.store.bundle import BUNDLE_VERSION
from tests.cli import scout, world_args


@pytest.fixture(scope="module")
def run_json(sample_world, tmp_path_factory) -> dict:
    tmp_path = tmp_path_factory.mktemp("run")
    done = scout("collect", "--json", "--offline", *world_args(sample_world, tmp_path))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("shape", ["run", "bundle"])
def test_a_run_of_a_newer_schema_is_one_line_saying_to_upgrade(tmp_path, run_json, shape):
    newer = {**run_json, "schema_version": SCHEMA_VERSION + 1}
    if shape == "run":
        document, name = newer, "schema_version"
    else:
        document = {
            "bundle_version": BUNDLE_VERSION,
            "scout_version": "9.0",
            "created_at": "2026-12-02T00:00:00Z",
            "run": newer,
        }
        name = "run.schema_version"
    path = tmp_path / f"{shape}.json.gz"
    path.write_bytes(gzip.compress(json.dumps(document).encode()))
    done = scout("open", path, "--state-dir", tmp_path / "state", "--offline", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        f"scout: error: {path}: {name} {SCHEMA_VERSION + 1} is newer than "
        f"this scout reads ({SCHEMA_VERSION}): upgrade scout-tui\n"
    )


def test_the_run_of_this_version_still_opens(tmp_path, run_json):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run_json))
    done = scout("open", path, "--state-dir", tmp_path / "state", "--offline", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def _later(text: str) -> str:
    """The report as a later scout might write it: an attribute appended to every marker."""
    return re.sub(r"(<!-- scout:(?:fp|report)[^>]*?) -->", r"\1 cut=1 -->", text)


def test_markers_a_later_scout_extends_still_match(sample_world):
    text = (sample_world.priors / "2026-12-01.md").read_text(encoding="utf-8")
    later = _later(text)
    assert later.count(" cut=1 -->") > 5
    now, then = parse_report(text), parse_report(later)
    assert [i.fingerprint for i in then.items] == [i.fingerprint for i in now.items]
    assert [i.item_digests for i in then.items] == [i.item_digests for i in now.items]
    assert [i.first_reported for i in then.items] == [i.first_reported for i in now.items]
    assert sum(i.fingerprint is not None for i in then.items) > 5
    day = date(2026, 12, 1)
    assert report_marker(day) in text and carries_report_marker(later, day)
    assert not carries_report_marker(later, date(2026, 12, 2))


def test_a_draft_with_a_later_marker_is_still_scouts(sample_world):
    fingerprint = "pass_untested-e8d39dc4c91c"
    body = (
        "Source: Nightly Scout Report — 2026-12-01\nPriority: P1\n\n"
        f"<!-- scout:fp={fingerprint} items=6c9794 first=2026-11-30 cut=1 -->"
    )
    item = BoardItem(
        id="PVTI_1",
        database_id=1,
        title="t",
        body=body,
        status="Backlog",
        creator=SCOUT_USER,
        draft_id="DI_1",
    )
    assert board_index([item], Scout(SCOUT_USER)).drafts == {fingerprint: item}
