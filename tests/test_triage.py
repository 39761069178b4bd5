from __future__ import annotations

import pytest

from scout_tui.model import FileRef, Finding, Priority, Section, Status, TriageEntry, fingerprint
from scout_tui.triage.decisions import (
    TriageError,
    apply_triage,
    decided,
    decision_label,
    demoted,
    merge_into,
    move,
    promoted,
    reviewed,
)
from scout_tui.triage.query import Filter


def make(key, title, priority=Priority.P1, section=Section.ACTION_ITEMS, files=(), items=()):
    return Finding(
        collector="t",
        kind="pass_untested",
        title=title,
        body=f"body of {title}",
        section=section,
        priority=priority,
        files=[FileRef(path=p) for p in files],
        items=list(items),
        fingerprint=fingerprint("pass_untested", key),
    )


A, OPP, D, F, C = (
    Section.ACTION_ITEMS,
    Section.OPPORTUNITIES,
    Section.DOCS,
    Section.FYI,
    Section.ALL_CLEAR,
)
P0, P1, P2 = Priority.P0, Priority.P1, Priority.P2


@pytest.mark.parametrize(
    ("start", "down", "up"),
    [
        ((A, P0), (A, P1), None),
        ((A, P1), (A, P2), (A, P0)),
        ((A, P2), (F, None), (A, P1)),
        ((OPP, None), (F, None), (A, P2)),
        ((D, None), (F, None), (A, P2)),
        ((F, None), None, (A, P2)),
        ((C, None), None, None),
        ((Section.CI_FAILURES, P0), (Section.CI_FAILURES, P1), None),
    ],
)
def test_the_demote_promote_table(start, down, up):
    assert demoted(*start) == down
    assert promoted(*start) == up


def test_demote_walks_p0_p1_p2_fyi_and_back_up_from_the_entry():
    finding = make("a", "A", Priority.P0)
    entry, steps = None, []
    for _ in range(3):
        entry = move(finding, entry, up=False)
        steps.append((entry.section, entry.priority))
    assert steps == [(A, P1), (A, P2), (F, None)]
    assert move(finding, entry, up=False) is None  # nothing below FYI
    assert decision_label(finding, entry) == "demoted"
    entry = move(finding, entry, up=True)
    assert (entry.section, entry.priority) == (A, P2)


def test_demoted_then_promoted_back_is_kept_and_reviewed():
    """Moved and moved back: a decision, where it was found. The tree counts it reviewed;
    its label says so (the list's column is never a bare "-" for a reviewed finding)."""
    finding = make("a", "A", Priority.P0)
    entry = move(finding, move(finding, None, up=False), up=True)
    assert (entry.section, entry.priority) == (A, P0)
    assert reviewed(entry) and decision_label(finding, entry) == "kept"
    assert decision_label(finding, None) == ""


def test_a_carried_finding_promoted_from_fyi_stays_carried():
    finding = make("a", "A", None, Section.FYI).model_copy(update={"status": Status.CARRIED})
    entry = move(finding, None, up=True)
    [published] = apply_triage([finding], {finding.fingerprint: entry})
    assert (published.section, published.priority) == (Section.CARRIED_FORWARD, P2)


def test_merge_refuses_itself_and_a_dropped_target():
    with pytest.raises(TriageError, match="into itself"):
        merge_into("k-1", None, "k-1", {})
    dropped = {"k-2": TriageEntry(fingerprint="k-2", decision="dropped", reason="noise")}
    with pytest.raises(TriageError, match="it is dropped"):
        merge_into("k-1", None, "k-2", dropped)


def test_drop_edit_and_merge():
    a = make("a", "A", files=["x.py"], items=["a1"])
    b = make("b", "B", files=["y.py", "x.py"], items=["b1", "a1"])
    c = make("c", "C")
    d = make("d", "D")
    entries = {
        b.fingerprint: TriageEntry(
            fingerprint=b.fingerprint, decision="merged", merged_into=a.fingerprint
        ),
        c.fingerprint: TriageEntry(fingerprint=c.fingerprint, decision="dropped", reason="noise"),
        d.fingerprint: TriageEntry(
            fingerprint=d.fingerprint,
            title="D, retitled",
            priority=None,
            priority_set=True,
            section=Section.FYI,
        ),
    }
    out = {f.title: f for f in apply_triage([a, b, c, d], entries)}
    assert set(out) == {"A", "D, retitled"}
    merged = out["A"]
    assert [ref.path for ref in merged.files] == ["x.py", "y.py"]
    assert merged.items == ["a1", "b1"]
    assert "Merged: **B**" in merged.body
    assert out["D, retitled"].section is Section.FYI and out["D, retitled"].priority is None
    assert (merged.decision, out["D, retitled"].decision) == ("edited", "edited")
    plain = apply_triage([make("e", "E")], {})
    assert plain[0].decision == "accepted"  # headless: every finding not dropped is accepted


def test_a_merged_list_body_goes_under_its_title_as_a_list():
    """A merged finding whose body is a list: the list under "Merged: **title**", as
    CommonMark reads it (TRUE); a prose body follows a dash (NEAR-MISS)."""
    from markdown_it import MarkdownIt

    a, b, c = make("a", "A"), make("b", "B"), make("c", "C")
    b = b.model_copy(update={"body": "- upstream has `scale`\n- and `block_mask`"})
    entries = {
        f.fingerprint: TriageEntry(
            fingerprint=f.fingerprint, decision="merged", merged_into=a.fingerprint
        )
        for f in (b, c)
    }
    [merged] = apply_triage([a, b, c], entries)
    assert "— -" not in merged.body
    assert "Merged: **B**\n- upstream has `scale`" in merged.body
    assert "Merged: **C** — body of C" in merged.body
    tokens = [t.type for t in MarkdownIt("commonmark").parse(merged.body)]
    assert tokens.count("list_item_open") == 2


def test_a_merged_part_s_fix_reaches_the_target_s_fix_under_its_title():
    """TRUE: the parts' fixes join the target's, each under its part's title (the draft and
    the report read fixes there); NEAR-MISS: a part with no fix, or the target's own fix
    again, adds nothing."""
    a, b, c, d = make("a", "A"), make("b", "B"), make("c", "C"), make("d", "D")
    a = a.model_copy(update={"suggested_fix": "Fix A."})
    b = b.model_copy(update={"suggested_fix": "- pin `x`\n- drop `y`"})
    d = d.model_copy(update={"suggested_fix": "Fix A."})
    entries = {
        f.fingerprint: TriageEntry(
            fingerprint=f.fingerprint, decision="merged", merged_into=a.fingerprint
        )
        for f in (b, c, d)
    }
    [merged] = apply_triage([a, b, c, d], entries)
    assert merged.suggested_fix == "Fix A.\n\nFor **B**:\n- pin `x`\n- drop `y`"


def test_merge_into_a_finding_that_is_gone_keeps_the_part():
    b = make("b", "B")
    entry = TriageEntry(fingerprint=b.fingerprint, decision="merged", merged_into="gone-1")
    assert [f.title for f in apply_triage([b], {b.fingerprint: entry})] == ["B"]


def test_a_filter_token_in_quotes_is_a_word():
    """`dropped` asks for dropped findings; `"dropped"` for findings that say "dropped"."""
    assert Filter.parse("dropped P1") == Filter((), frozenset({"dropped", "p1"}))
    assert Filter.parse('"dropped" p1') == Filter(("dropped",), frozenset({"p1"}))
    assert Filter.parse("'new' flex") == Filter(("new", "flex"), frozenset())
    assert Filter.parse('"') == Filter(('"',), frozenset())  # a lone quote is a word too
    finding = make("a", "The pass was dropped by a refactor")
    said = Filter.parse('"dropped"')
    [as_left] = decided([finding], {})
    assert said.matches(as_left, reviewed=False)
    assert not Filter.parse("dropped").matches(as_left, reviewed=False)  # not dropped


@pytest.mark.parametrize("found", [OPP, D])
def test_demote_then_promote_comes_back_to_where_it_was_found(found):
    """`-` then `+` is a round trip: an advisory finding demoted to FYI goes back to its
    section, never on to Action Items (which would file a board draft)."""
    finding = make("a", "A", None, found)
    down = move(finding, None, up=False)
    assert (down.section, down.priority) == (F, None)
    back = move(finding, down, up=True)
    assert (back.section, back.priority) == (found, None)
    assert decision_label(finding, back) == "kept"
    [published] = apply_triage([finding], {finding.fingerprint: back})
    assert not published.board_item or finding.board_item  # no draft it did not have
    again = move(finding, back, up=True)  # a second + promotes, as the table says
    assert (again.section, again.priority) == (A, P2)
