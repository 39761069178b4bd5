from __future__ import annotations

from scout_tui.model import FileRef, Finding, Priority, Section, fingerprint
from scout_tui.triage import TriageEntry, apply_triage, demoted


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


def test_demote_walks_p0_p1_p2_fyi():
    finding = make("a", "A", Priority.P0)
    steps = []
    for _ in range(4):
        section, priority = demoted(finding)
        finding = finding.model_copy(update={"section": section, "priority": priority})
        steps.append((section, priority))
    assert steps == [
        (Section.ACTION_ITEMS, Priority.P1),
        (Section.ACTION_ITEMS, Priority.P2),
        (Section.FYI, None),
        (Section.FYI, None),
    ]


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


def test_merge_into_a_finding_that_is_gone_keeps_the_part():
    b = make("b", "B")
    entry = TriageEntry(fingerprint=b.fingerprint, decision="merged", merged_into="gone-1")
    assert [f.title for f in apply_triage([b], {b.fingerprint: entry})] == ["B"]
