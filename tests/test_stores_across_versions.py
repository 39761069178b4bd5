"""A state dir and a cache written by the code before the package was laid out by stage
(scout at d283d2e: `scout demo` of 2026-11-30 published, then `scout triage` accepted,
dropped, demoted, accepted and undid) open with their decisions, undo history, publish
journal and cached run intact. The files are in tests/fixtures/stores-before-layout."""

from __future__ import annotations

import shutil

from scout_tui.model import Priority, Section
from scout_tui.publish.journal import Journal
from scout_tui.store.cache import Cache
from scout_tui.store.state import StateStore
from scout_tui.triage.store import DecisionStore
from tests.conftest import FIXTURES

SCOPE = "cc04fbf80db1f35f:torchtitan/experiments/graph_trainer"
JOURNAL = "publish http://127.0.0.1:46831 demo/minititan#2856 pytorch/projects/161"


def _copy(tmp_path):
    copy = tmp_path / "stores"
    shutil.copytree(FIXTURES / "stores-before-layout", copy)
    return copy


def test_the_decisions_and_their_undo_history_are_intact(tmp_path):
    state = DecisionStore(StateStore(_copy(tmp_path) / "state"))
    decisions = state.decisions(SCOPE)
    assert {fp: entry.decision for fp, entry in decisions.items()} == {
        "ci_failure-03ef1c289da2": "accepted",
        "stale_monkey_patch-bff709b45705": "dropped",
        "todo_unblocked-ef799ac08a19": None,  # a move: its section and priority
    }
    assert decisions["stale_monkey_patch-bff709b45705"].reason == "patched upstream already"
    demoted = decisions["todo_unblocked-ef799ac08a19"]
    assert (demoted.section, demoted.priority) == (Section.ACTION_ITEMS, Priority.P2)
    # The last action was an undo: redo brings the accept back, and undo takes it again.
    redone = state.redo(SCOPE)
    assert redone is not None and "new_code_untested-142fb211664e" in redone.label
    assert state.decisions(SCOPE)["new_code_untested-142fb211664e"].decision == "accepted"
    undone = state.undo(SCOPE)
    assert undone is not None and "new_code_untested-142fb211664e" not in state.decisions(SCOPE)


def test_the_publish_journal_is_intact(tmp_path):
    journal = Journal(StateStore(_copy(tmp_path) / "state"))
    steps = journal.day(JOURNAL, "2026-11-30")
    assert "comment" in steps and "links" in steps
    assert sum(step.startswith("draft ") for step in steps) == 8
    assert journal.items(JOURNAL)  # the drafts it added, by item id


def test_the_cache_opens_as_it_is_and_holds_its_run(tmp_path):
    warnings: list[str] = []
    cache = Cache(_copy(tmp_path) / "cache", warn=warnings.append)
    info = cache.info()
    assert warnings == []  # neither moved aside nor rebuilt
    assert info["runs"] == ["2026-11-30"]
    [day] = info["days"]  # type: ignore[call-overload]
    assert day["findings"] == 30 and day["checkout"] == "/tmp/fx/repo"
