"""A person's edits to today's comment survive scout's next edit: the 3-way merge."""

from __future__ import annotations

from datetime import date

from scout_tui.model import Finding, Priority, Section
from scout_tui.publish.merge import merge_edits
from scout_tui.report.render import render_report

DAY = date(2026, 12, 3)


def _finding(name: str, section: Section = Section.ACTION_ITEMS, body: str = "Why.") -> Finding:
    return Finding(
        collector="todos",
        kind="todo_unblocked",
        title=f"Fix {name}",
        body=body,
        section=section,
        priority=Priority.P1,
        fingerprint=f"todo_unblocked-{name * 12}",
    )


def _report(*findings: Finding) -> str:
    return render_report(DAY, list(findings))


def _line_of(body: str, name: str) -> str:
    return next(line for line in body.split("\n") if f"**[P1] Fix {name}**" in line)


def test_nothing_edited_gives_ours():
    base = _report(_finding("a"))
    ours = _report(_finding("a"), _finding("b"))
    assert merge_edits(base, base, ours).body == ours


def test_a_ticked_box_follows_its_fingerprint_to_its_new_place():
    a, b, c = _finding("a"), _finding("b"), _finding("c")
    base = _report(a, b)
    theirs = base.replace(_line_of(base, "b"), _line_of(base, "b").replace("- [ ]", "- [x]"))
    ours = _report(a, b.model_copy(update={"body": "Worse now."}), c)  # b's line changed
    merged = merge_edits(base, theirs, ours)
    assert merged.ok
    assert _line_of(merged.body, "b").startswith("- [x] **[P1] Fix b** — Worse now.")
    assert _line_of(merged.body, "a").startswith("- [ ]")
    assert _line_of(merged.body, "c").startswith("- [ ]")


def test_an_unticked_box_stays_unticked():
    a = _finding("a")
    base = _report(a).replace("- [ ]", "- [x]")  # scout never ticks; a test base may
    theirs = base.replace("- [x]", "- [ ]")
    merged = merge_edits(base, theirs, _report(a))
    assert _line_of(merged.body, "a").startswith("- [ ]")


def test_a_note_after_an_item_stays_after_that_item():
    a, b = _finding("a"), _finding("b")
    base = _report(a, b)
    note = "  > Looked at this: it is the dataloader. — a person"
    theirs = base.replace(_line_of(base, "a"), _line_of(base, "a") + "\n" + note)
    ours = _report(_finding("0"), a, b)  # a new item before a: positions moved
    merged = merge_edits(base, theirs, ours).body
    lines = merged.split("\n")
    assert lines[lines.index(note) - 1] == _line_of(ours, "a")
    assert merged.count(note) == 1


def test_a_note_keeps_its_place_when_its_item_changes():
    a, b = _finding("a"), _finding("b")
    base = _report(a, b)
    theirs = base.replace(_line_of(base, "a"), _line_of(base, "a") + "\nA note.")
    ours = _report(a.model_copy(update={"body": "Changed."}), b)
    lines = merge_edits(base, theirs, ours).body.split("\n")
    assert lines[lines.index("A note.") - 1] == _line_of(ours, "a")


def test_a_note_whose_item_is_gone_stays_in_its_section():
    a, b = _finding("a"), _finding("b")
    base = _report(a, b)
    theirs = base.replace(_line_of(base, "b"), _line_of(base, "b") + "\nAbout b.")
    ours = _report(a)  # b is fixed
    merged = merge_edits(base, theirs, ours).body
    assert "About b." in merged
    section = merged.split("## Action Items")[1].split("\n## ")[0]
    assert "About b." in section


def test_a_paragraph_added_at_the_end_and_at_the_start_stay_there():
    base = _report(_finding("a"))
    theirs = "cc @someone\n" + base + "\nThanks, scout.\n"
    ours = _report(_finding("a"), _finding("b"))
    merged = merge_edits(base, theirs, ours).body
    assert merged.startswith("cc @someone\n# Nightly Scout Report")
    assert merged.rstrip().endswith("Thanks, scout.")
    assert "Fix b" in merged


def test_ticks_and_notes_together_and_scout_s_changes_kept():
    a, b = _finding("a"), _finding("b")
    base = _report(a, b)
    theirs = base.replace(
        _line_of(base, "a"), _line_of(base, "a").replace("[ ]", "[x]") + "\nDone in #12."
    )
    ours = _report(a, b.model_copy(update={"body": "New evidence."}))
    merged = merge_edits(base, theirs, ours).body
    assert _line_of(merged, "a").startswith("- [x]")
    assert "Done in #12." in merged and "New evidence." in merged


def test_a_line_a_person_rewrote_is_kept_where_scout_did_not_change_it():
    a, b = _finding("a"), _finding("b", body="Scout's words.")
    base = _report(a, b)
    theirs = base.replace("Scout's words.", "A person's better words.")
    ours = _report(a.model_copy(update={"body": "Changed by scout."}), b)
    merged = merge_edits(base, theirs, ours)
    assert merged.ok
    assert "A person's better words." in merged.body and "Changed by scout." in merged.body


def test_a_line_both_changed_is_a_conflict():
    a = _finding("a", body="Scout's words.")
    base = _report(a)
    theirs = base.replace("Scout's words.", "A person's words.")
    ours = _report(a.model_copy(update={"body": "Scout's new words."}))
    merged = merge_edits(base, theirs, ours)
    assert not merged.ok and merged.body is None
    assert "Fix a" in merged.conflict and "<!--" not in merged.conflict


def test_a_removed_line_both_changed_is_a_conflict():
    a, b = _finding("a"), _finding("b")
    base = _report(a, b)
    theirs = base.replace(_line_of(base, "b") + "\n", "")
    ours = _report(a, b.model_copy(update={"body": "Changed."}))
    assert not merge_edits(base, theirs, ours).ok


def test_without_a_base_ticks_are_still_carried():
    a, b = _finding("a"), _finding("b")
    theirs = _report(a, b).replace(
        _line_of(_report(a, b), "a"), _line_of(_report(a, b), "a").replace("[ ]", "[x]")
    )
    ours = _report(a, b, _finding("c"))
    merged = merge_edits(None, theirs, ours).body
    assert _line_of(merged, "a").startswith("- [x]")
    assert _line_of(merged, "b").startswith("- [ ]")
    assert "Fix c" in merged


def test_merging_again_is_stable():
    """The next run's base is scout's own render: the person's edits are found again."""
    a, b = _finding("a"), _finding("b")
    base = _report(a, b)
    theirs = base.replace(
        _line_of(base, "a"), _line_of(base, "a").replace("[ ]", "[x]") + "\nA note."
    )
    ours = _report(a, b, _finding("c"))
    first = merge_edits(base, theirs, ours).body
    again = merge_edits(ours, first, ours).body
    assert again == first


def test_a_tick_beside_unticked_sections_is_carried():
    fyi = _finding("f", Section.FYI)
    base = _report(_finding("a"), fyi)
    theirs = base.replace("- [ ]", "- [x]")
    merged = merge_edits(base, theirs, base).body
    assert _line_of(merged, "a").startswith("- [x]")
