"""render → parse → reconcile over four daily reports, each day reading the ones before."""

from __future__ import annotations

from datetime import date, timedelta

from scout_tui.collect.base import Lifetime, all_kinds
from scout_tui.history.judge import PriorCheck
from scout_tui.history.parse import parse_report
from scout_tui.history.reconcile import reconcile
from scout_tui.model import FileRef, Finding, Priority, PriorReport, Section, Status, fingerprint
from scout_tui.report.render import render_report

DAY1 = date(2026, 4, 1)
KINDS = {"pass_untested", "stale_monkey_patch", "todo_owned", "test_not_in_ci"}


def finding(kind, key, title, section=Section.ACTION_ITEMS, items=(), path="passes.py"):
    return Finding(
        collector="test",
        kind=kind,
        title=title,
        body="why it matters",
        section=section,
        priority=Priority.P1 if section is Section.ACTION_ITEMS else None,
        files=[FileRef(path=path, line=10)],
        items=list(items),
        fingerprint=fingerprint(kind, *key),
    )


def untested(*names):
    return finding("pass_untested", ("passes",), "Passes with no test", items=names)


def patch_finding(*names):
    return finding(
        "stale_monkey_patch", ("patches",), "Stale monkey-patches", items=names, path="trainer.py"
    )


def fyi():
    return finding("todo_owned", ("todos",), "TODOs owned by people", Section.FYI, ["a: x"])


def in_same_file(which):
    # Two distinct problems in one file: different keys, similar titles.
    return finding(
        "test_not_in_ci",
        ("tests/test_numerics.py", which),
        f"`{which}` in `tests/test_numerics.py` never runs in CI",
        path="tests/test_numerics.py",
    )


def run_day(day, findings, priors, before=(), inventories=frozenset(), unreported=frozenset()):
    """One day: reconciled, rendered and parsed back. `before`: what the checks find on the
    prior report's commit (the tree yesterday's run scanned)."""
    result = reconcile(
        findings,
        priors,
        fyi_suppress_after=3,
        completed_kinds=KINDS,
        recheck=lambda kinds: PriorCheck("0" * 40, before, kinds),
        inventories=inventories,
        unreported=unreported,
    )
    markdown = render_report(day, result.findings, quiet=result.quiet)
    return result, parse_report(markdown, source=f"{day}.md")


def by_title(result):
    return {f.title: f for f in result.findings}


def test_four_days():
    priors: list[PriorReport] = []

    day1 = [
        untested("p1", "p2", "p3"),
        patch_finding("forward"),
        fyi(),
        in_same_file("TestA"),
        in_same_file("TestB"),
    ]
    result, report = run_day(DAY1, day1, priors)
    assert all(f.status is Status.NEW for f in result.findings)
    assert len(report.items) == 5
    priors.append(report)

    day2 = DAY1 + timedelta(days=1)
    result, report = run_day(
        day2,
        [
            untested("p1", "p2"),
            patch_finding("forward", "combine"),
            fyi(),
            in_same_file("TestA"),
            in_same_file("TestB"),
        ],
        priors,
    )
    found = by_title(result)
    assert found["Passes with no test"].status is Status.CARRIED
    assert found["Passes with no test"].section is Section.CARRIED_FORWARD
    assert found["Passes with no test"].first_reported == DAY1
    assert found["Passes with no test"].status_update == "partial fix landed: 1 of 3 fixed"
    assert found["Stale monkey-patches"].status_update.startswith("situation worsened: 1 new")
    assert "`combine`" in found["Stale monkey-patches"].status_update
    assert found["TODOs owned by people"].status_update == "no change"
    a = found["`TestA` in `tests/test_numerics.py` never runs in CI"]
    b = found["`TestB` in `tests/test_numerics.py` never runs in CI"]
    assert a.fingerprint != b.fingerprint
    assert a.status is b.status is Status.CARRIED
    priors.append(report)

    day3 = DAY1 + timedelta(days=2)
    day2_findings = [
        untested("p1", "p2"),
        patch_finding("forward", "combine"),
        fyi(),
        in_same_file("TestA"),
        in_same_file("TestB"),
    ]
    result, report = run_day(
        day3,
        [untested("p1", "p2"), patch_finding("forward", "combine"), fyi(), in_same_file("TestB")],
        priors,
        before=day2_findings,
    )
    found = by_title(result)
    assert found["Passes with no test"].status_update == "no change"
    assert found["Passes with no test"].first_reported == DAY1
    resolved = [f for f in result.findings if f.status is Status.RESOLVED]
    assert [f.title for f in resolved] == [
        "Resolved: `TestA` in `tests/test_numerics.py` never runs in CI"
    ]
    assert resolved[0].section is Section.ALL_CLEAR
    assert found["`TestB` in `tests/test_numerics.py` never runs in CI"].status is Status.CARRIED
    assert result.suppressed == []  # only two prior reports so far
    priors.append(report)

    day4 = DAY1 + timedelta(days=3)
    result, report = run_day(
        day4,
        [patch_finding("forward", "combine"), fyi(), in_same_file("TestB")],
        priors,
        before=[
            untested("p1", "p2"),
            patch_finding("forward", "combine"),
            fyi(),
            in_same_file("TestB"),
        ],
    )
    found = by_title(result)
    assert fyi().fingerprint in result.suppressed
    assert "TODOs owned by people" not in found
    assert "TODOs owned by people" not in render_report(day4, result.findings)
    assert "Resolved: Passes with no test" in found
    assert found["Resolved: Passes with no test"].first_reported == DAY1


def test_fyi_that_changed_is_not_suppressed():
    priors = []
    day = DAY1
    for _n in range(3):
        _, report = run_day(day, [fyi()], priors)
        priors.append(report)
        day += timedelta(days=1)
    changed = finding(
        "todo_owned", ("todos",), "TODOs owned by people", Section.FYI, ["a: x", "b: y"]
    )
    result, _ = run_day(day, [changed], priors)
    assert result.suppressed == []
    assert result.findings[0].status_update.startswith("situation worsened")


def test_resolved_needs_the_collector_to_have_looked():
    _, report = run_day(DAY1, [untested("p1")], [])
    result = reconcile([], [report], fyi_suppress_after=3, completed_kinds=set())
    # The collector was skipped: nothing can be called resolved, and nothing is dropped
    # either — the item is carried, saying it was not re-checked.
    [carried] = result.findings
    assert carried.kind == "prior_unchecked" and carried.status_update == "not re-checked"
    assert carried.section is Section.CARRIED_FORWARD and carried.priority is not None
    assert "its check (pass_untested) did not run today" in carried.body
    assert not any(f.title.startswith("Resolved") for f in result.findings)


def test_an_llm_written_item_scout_cannot_find_is_carried_not_dropped():
    markdown = (
        "# Nightly Scout Report — 2026-04-06\n\n## Action Items (new findings)\n\n"
        "- [ ] **[P0] `test_numerics.py` fully disabled in CI** — re-enable it. First\n"
        "  reported 2026-04-02.\n"
    )
    report = parse_report(markdown)
    result = reconcile([], [report], fyi_suppress_after=3, completed_kinds={"pass_untested"})
    [carried] = result.findings
    assert (carried.title, carried.priority, carried.first_reported.isoformat()) == (
        "`test_numerics.py` fully disabled in CI",
        Priority.P0,
        "2026-04-02",
    )
    again = reconcile(
        [],
        [parse_report(render_report(DAY1, [carried]))],
        fyi_suppress_after=3,
        completed_kinds=set(),
    )
    assert [f.fingerprint for f in again.findings] == [carried.fingerprint]  # stable


def test_marker_less_items_match_fuzzily():
    markdown = (
        "# Nightly Scout Report — 2026-03-31\n\n## Action Items (things to do)\n\n"
        "- [ ] **[P1] Passes with no test: `p1`, `p2`** — add unit tests.\n"
        "  First reported 2026-03-20.\n"
    )
    prior = parse_report(markdown)
    result = reconcile(
        [untested("p1")],
        [prior],
        fyi_suppress_after=3,
        completed_kinds=KINDS,
    )
    carried = result.findings[0]
    assert carried.status is Status.CARRIED
    assert carried.first_reported == date(2026, 3, 20)
    assert carried.status_update == "no change"
    # An unrelated title does not match.
    other = finding("pass_untested", ("other",), "Docs mention a removed flag")
    result = reconcile([other], [prior], fyi_suppress_after=3, completed_kinds=KINDS)
    assert result.findings[0].status is Status.NEW


def test_unchanged_one_line_keeps_the_first_reported_date():
    blocked = finding(
        "todo_blocked",
        ("t",),
        "TODO in `passes.py` blocked on pytorch/pytorch#1",
        Section.FYI,
        ["pytorch/pytorch#1"],
    )
    lines = {"todo_blocked": "still blocked, no upstream change since {first_reported}"}
    priors = []
    day = DAY1
    for _ in range(3):
        result = reconcile(
            [blocked],
            priors,
            fyi_suppress_after=9,
            completed_kinds=KINDS,
            unchanged_lines=lines,
        )
        markdown = render_report(day, result.findings)
        priors.append(parse_report(markdown))
        day += timedelta(days=1)
    carried = result.findings[0]
    assert carried.unchanged_line == f"still blocked, no upstream change since {DAY1}"
    (line,) = [ln for ln in markdown.splitlines() if "blocked on" in ln]
    assert line.startswith(
        "- **TODO in `passes.py` blocked on pytorch/pytorch#1** — still "
        f"blocked, no upstream change since {DAY1} · `passes.py:10` <!-- scout:fp="
    )  # where to look, on the one line too
    assert priors[-1].items[0].first_reported == DAY1  # carried in the marker


def test_news_about_a_known_item_follows_it_up_instead_of_resolving_it():
    key = ("passes.py", "todo(pytorch/pytorch#1)", "0")
    blocked = finding("todo_blocked", key, "TODO in `passes.py` blocked on pytorch/pytorch#1")
    _, day1 = run_day(DAY1, [blocked], [])
    unblocked = finding(
        "todo_unblocked", key, "TODO in `passes.py` likely unblocked: pytorch/pytorch#1 merged"
    )
    unblocked.aliases = [blocked.fingerprint]  # as the todos collector says
    result = reconcile(
        [unblocked],
        [day1],
        fyi_suppress_after=3,
        completed_kinds={"todo_blocked", "todo_unblocked"},
    )
    # The blocked item's marker is matched through the alias: nothing is "resolved", and the
    # news stays a new Action Item that says what it follows.
    [news] = result.findings
    assert news.status is Status.NEW and news.section is Section.ACTION_ITEMS
    assert news.status_update == (
        "follows up “TODO in `passes.py` blocked on pytorch/pytorch#1”, reported since 2026-04-01"
    )
    day2 = parse_report(render_report(DAY1 + timedelta(days=1), result.findings))
    assert "Follows up “TODO in `passes.py` blocked" in day2.items[0].text
    # The day after, the same news is carried, dated from the day it was news: a news
    # kind's key is reused by tomorrow's news, so its first report is the latest one's.
    again = reconcile(
        [unblocked],
        [day1, day2],
        fyi_suppress_after=3,
        completed_kinds={"todo_blocked", "todo_unblocked"},
    )
    [carried] = again.findings
    assert carried.status is Status.CARRIED and carried.first_reported == DAY1 + timedelta(days=1)


def test_a_hand_written_item_naming_one_item_of_a_group_carries_that_item():
    """A hand-written report asked for a test of `bucket_pass`; today one finding lists three
    untested passes. That one is carried with its first-reported date; the others are new."""
    markdown = (
        "# Nightly Scout Report — 2026-03-31\n\n## Action Items (things to do)\n\n"
        "- [ ] **[P1] Add a unit test for `bucket_pass`** — it rewrites collectives.\n"
        "  First reported 2026-03-25.\n"
    )
    result = reconcile(
        [untested("bucket_pass", "fold_pass", "cse_pass")],
        [parse_report(markdown)],
        fyi_suppress_after=3,
        completed_kinds=KINDS,
    )
    [carried] = result.findings  # and no "Resolved" line for the hand-written item
    assert carried.status is Status.CARRIED and carried.first_reported == date(2026, 3, 25)
    assert carried.status_update == "carried for `bucket_pass`; new: `fold_pass`, `cse_pass`"
    assert carried.section is Section.CARRIED_FORWARD


def _found_there(*findings):
    """What the checks find on the commit the prior report scanned."""
    return lambda kinds: PriorCheck("1" * 40, list(findings), kinds)


def test_a_hand_written_p0_is_resolved_only_when_its_check_found_it_on_that_reports_commit():
    """A hand-written P0 ("… no longer runs in CI") that scout does not find today: Resolved
    when the CI-coverage check, run on the commit that report scanned, finds it there; when
    the check finds nothing there either, scout disagrees with the report and says so; when
    the check did not run today, it is not re-checked."""
    markdown = (
        "# Nightly Scout Report — 2026-04-03\n\n## Action Items (new findings)\n\n"
        "- [ ] **[P0] `TestSimpleFSDP` in `test_numerics.py` no longer runs in CI** — add it\n"
        "  back to the workflow. First reported 2026-04-02.\n"
    )
    report = parse_report(markdown)
    then = finding(
        "test_not_in_ci",
        ("tests/test_numerics.py", "TestSimpleFSDP"),
        "`TestSimpleFSDP` in `tests/test_numerics.py` never runs in CI",
        path="tests/test_numerics.py",
    )
    fixed = reconcile(
        [],
        [report],
        fyi_suppress_after=3,
        completed_kinds={"test_not_in_ci"},
        recheck=_found_there(then),
    )
    [resolved] = fixed.findings
    assert resolved.title == "Resolved: `TestSimpleFSDP` in `test_numerics.py` no longer runs in CI"
    assert resolved.section is Section.ALL_CLEAR and resolved.first_reported == date(2026, 4, 2)
    # `[rules] resolved = { section = … }` puts the lines elsewhere (the shipped: All Clear).
    elsewhere = reconcile(
        [],
        [report],
        fyi_suppress_after=3,
        completed_kinds={"test_not_in_ci"},
        recheck=_found_there(then),
        resolved_section=Section.FYI,
    )
    assert [(f.kind, f.section) for f in elsewhere.findings] == [("resolved", Section.FYI)]
    assert "`1111111111`" in resolved.body and resolved.files == then.files
    never = reconcile(
        [],
        [report],
        fyi_suppress_after=3,
        completed_kinds={"test_not_in_ci"},
        recheck=_found_there(),
    )
    [disagreed] = never.findings
    assert disagreed.kind == "prior_unchecked" and disagreed.section is Section.CARRIED_FORWARD
    assert disagreed.status_update.startswith(
        "scout's check disagrees: test_not_in_ci finds nothing of it on `1111111111`"
    )
    skipped = reconcile(
        [],
        [report],
        fyi_suppress_after=3,
        completed_kinds={"pass_untested"},
        recheck=_found_there(then),
    )
    [carried] = skipped.findings
    assert carried.kind == "prior_unchecked" and carried.status_update == "not re-checked"
    assert not any(f.title.startswith("Resolved") for f in [*never.findings, *skipped.findings])


def test_a_hand_written_item_carries_every_grouped_finding_it_names_items_of():
    """ "Re-enable the two regional_inductor tests (pytorch/pytorch#179209)" names items of
    the switch-offs, of the disabled-tests list and of the TODOs blocked on #179209: each
    carries them from that report."""
    markdown = (
        "# Nightly Scout Report — 2026-04-03\n\n## Action Items (new findings)\n\n"
        "- [ ] [P1] **Re-enable regional_inductor integration tests** — the blocker from\n"
        "  pytorch/pytorch#179209 may have landed. Two tests are disabled\n"
        "  (`aot_llama3_regional_inductor` and `aot_llama3_manual_regional_inductor`).\n"
    )
    off = finding(
        "tests_newly_disabled",
        ("exp",),
        "2 tests switched off since 2026-04-01",
        items=[
            "integration_tests.py::aot_llama3_regional_inductor",
            "integration_tests.py::aot_qwen3_fsdp",
        ],
    )
    blocked = finding(
        "todo_blocked",
        ("t",),
        "2 TODOs blocked on pytorch/pytorch#179209",
        Section.FYI,
        items=["pytorch/pytorch#179209"],
    )
    result = reconcile(
        [off, blocked], [parse_report(markdown)], fyi_suppress_after=3, completed_kinds=KINDS
    )
    carried = {f.kind: f for f in result.findings}
    assert carried["tests_newly_disabled"].status_update == (
        "carried for `integration_tests.py::aot_llama3_regional_inductor`; new: "
        "`integration_tests.py::aot_qwen3_fsdp`"
    )
    assert carried["todo_blocked"].status is Status.CARRIED
    assert carried["todo_blocked"].first_reported == date(2026, 4, 3)
    assert not any(f.kind == "resolved" for f in result.findings)


def test_a_hand_written_p0_the_next_report_dropped_without_a_word_is_carried():
    """04-02 had a P0 and a P2; 04-03 (the latest) mentions neither; scout does not find
    them. Both are carried as not re-checked, from 04-02: a report forgetting an item is not
    the item being fixed."""
    day2 = parse_report(
        "# Nightly Scout Report — 2026-04-02\n\n## Action Items (new findings)\n\n"
        "- [ ] **[P0] Llama3 `apply_tp` call missing `enable_cp`** — CP silently does nothing.\n"
        "- [ ] **[P2] Gradient accumulation untested** — no test sets it.\n"
    )
    day3 = parse_report(
        "# Nightly Scout Report — 2026-04-03\n\n## Action Items (new findings)\n\n"
        "- [ ] **[P1] Re-enable regional_inductor integration tests** — may have landed.\n"
    )
    result = reconcile([], [day2, day3], fyi_suppress_after=3, completed_kinds=KINDS)
    carried = {f.title: f for f in result.findings}
    p0 = carried["Llama3 `apply_tp` call missing `enable_cp`"]
    assert p0.kind == "prior_unchecked" and p0.priority is Priority.P0
    assert p0.first_reported == date(2026, 4, 2)
    assert "the report of 2026-04-03 no longer mentions it" in p0.body
    p2 = carried["Gradient accumulation untested"]
    assert p2.priority is Priority.P2 and p2.first_reported == date(2026, 4, 2)
    assert "Re-enable regional_inductor integration tests" in carried  # the latest's, as before


def test_a_hand_written_pass_said_untested_is_resolved_on_evidence_only():
    """ "`fsdp_pass` has zero test coverage" (04-02), dropped by 04-03: Resolved when the pass
    check found it untested on the commit the latest report scanned and does not today;
    when the check found it tested there too, scout's check disagrees — never Resolved. A
    positive hand-written line ("… verified correct") never matches a problem."""
    day2 = parse_report(
        "# Nightly Scout Report — 2026-04-02\n\n## Action Items (new findings)\n\n"
        "- [ ] **[P0] `fsdp_pass` has zero test coverage** — add one.\n\n"
        "## Docs\n\n- **`CLAUDE.md`** — all file paths and test commands are correct.\n"
    )
    day3 = parse_report("# Nightly Scout Report — 2026-04-03\n\n## FYI\n\n- **Quiet day.**\n")
    doc = finding(
        "doc_inaccuracy",
        ("CLAUDE.md",),
        "`CLAUDE.md`: 1 inaccuracy",
        Section.DOCS,
        items=["flag `--compile.x` is not a config field"],
        path="CLAUDE.md",
    )
    result = reconcile(
        [doc],
        [day2, day3],
        fyi_suppress_after=3,
        completed_kinds=KINDS,
        recheck=_found_there(untested("fsdp_pass")),
    )
    assert [f.title for f in result.findings if "fsdp_pass" in f.title] == [
        "Resolved: `fsdp_pass` has zero test coverage"
    ]
    assert result.findings[0].status is Status.NEW  # not "carried" from the all-clear line
    tested = reconcile(
        [doc], [day2, day3], fyi_suppress_after=3, completed_kinds=KINDS, recheck=_found_there()
    )
    [kept] = [f for f in tested.findings if "fsdp_pass" in f.title]
    assert kept.kind == "prior_unchecked" and "scout's check disagrees" in kept.body
    assert not any(f.kind == "resolved" for f in tested.findings)


def test_news_is_said_once_and_then_ages_out():
    """Commits since the baseline: said the day they land; the next day (its window still
    holds them) not said again; a day with one more says the news anew, never 'partial fix
    landed' or 'situation worsened' — and never Resolved when it leaves the window."""
    assert all_kinds()["upstream_commits"].lifetime is Lifetime.NEWS

    def commits(*shas):
        return finding(
            "upstream_commits", ("core",), f"{len(shas)} upstream commits", Section.FYI, items=shas
        )

    def day(n, findings, priors):
        result = reconcile(
            findings,
            priors,
            fyi_suppress_after=3,
            completed_kinds={"upstream_commits"},
        )
        return result, parse_report(render_report(DAY1 + timedelta(days=n), result.findings))

    first, report1 = day(0, [commits("a1")], [])
    assert [f.status for f in first.findings] == [Status.NEW]
    again, report2 = day(1, [commits("a1")], [report1])
    assert again.findings == [] and again.suppressed == []  # said yesterday, all of it
    more, report3 = day(2, [commits("a1", "b2")], [report1, report2])
    [said] = more.findings
    assert said.status is Status.NEW and said.status_update is None
    gone, _ = day(3, [], [report1, report2, report3])
    assert gone.findings == []  # aged out: no Resolved line, nothing carried


def test_a_long_quiet_list_travels_as_one_digest_and_still_comes_back_when_it_changes():
    """An FYI of 40 items left out as unchanged: its quiet marker is one digest and a count,
    not 40 digests; it stays out while the 40 stay the same, and comes back, saying so, when
    one more joins."""
    names = [f"integration_tests.py::t{n}" for n in range(40)]
    off = finding("tests_disabled", ("exp",), "40 tests disabled", Section.FYI, names)
    priors: list[PriorReport] = []
    for n in range(6):
        result, report = run_day(DAY1 + timedelta(days=n), [off], priors)
        priors.append(report)
    assert result.suppressed == [off.fingerprint]
    [mark] = report.quiet
    assert mark.item_digests == [] and mark.count == 40 and mark.set_digest
    markdown = render_report(DAY1, [], quiet=result.quiet)
    assert len(markdown.splitlines()[-1]) < 120  # one short hidden line
    more = off.model_copy(update={"items": [*names, "integration_tests.py::t40"]})
    back, _ = run_day(DAY1 + timedelta(days=6), [more], priors)
    [said] = back.findings
    assert said.status_update.startswith("its items changed (40 then, 41 now) since it was left")


def test_an_inventory_is_reported_the_day_it_grows_and_left_out_while_it_holds_or_shrinks():
    """An inventory (`report = "growth"`): listed the first day; left out the next day it is
    unchanged (not after three), and while items only leave it; back, naming the new item,
    the day one joins, even after shrinking; an FYI of another kind still waits three days."""
    names = [f"torch._private{n}" for n in range(30)]
    apis = finding("private_api", ("exp",), "30 private torch APIs", Section.FYI, names)
    gaps = finding("parallelism_gap", ("exp",), "2 combinations", Section.OPPORTUNITIES, ["a", "b"])
    other = fyi()
    inventories = frozenset({"private_api", "parallelism_gap"})
    priors: list[PriorReport] = []
    listed = []
    days = [
        [apis, gaps, other],
        [apis, gaps, other],
        [apis.model_copy(update={"items": names[:-2]}), gaps.model_copy(update={"items": ["a"]})],
        [apis.model_copy(update={"items": [*names[:-2], "torch._new"]}), gaps, other],
        [apis.model_copy(update={"items": [*names[:-2], "torch._new"]}), gaps, other],
    ]
    for n, today in enumerate(days):
        result, report = run_day(DAY1 + timedelta(days=n), today, priors, inventories=inventories)
        priors.append(report)
        listed.append({f.kind: f for f in result.findings})
    assert set(listed[0]) == {"private_api", "parallelism_gap", "todo_owned"}
    assert set(listed[1]) == {"todo_owned"}  # the inventories held: left out at once
    assert set(listed[2]) == set()  # they shrank: still out; the FYI was absent today
    back = listed[3]["private_api"]
    assert back.status_update.startswith("situation worsened: 1 new (`torch._new`)")
    assert "b" in " ".join(listed[3]["parallelism_gap"].items)  # "b" came back: growth
    assert "private_api" not in listed[4] and "parallelism_gap" not in listed[4]
    assert listed[4]["todo_owned"].status is Status.CARRIED  # the FYI is not an inventory


def test_a_kind_never_reported_is_left_out_every_day_and_never_resolved():
    """`report = "never"`: the finding is kept (the run's `--json`) but no report lists it,
    new or changed; a prior report that did list it does not make it Resolved or back."""
    todos = finding("todo_owned", ("todos",), "TODOs", Section.FYI, ["a: x"])
    priors: list[PriorReport] = []
    _, report = run_day(DAY1, [todos], priors)  # listed before the team's rule said never
    priors.append(report)
    for n, items in enumerate([["a: x"], ["a: x", "b: y"], []], start=1):
        today = [todos.model_copy(update={"items": items})] if items else []
        result, report = run_day(
            DAY1 + timedelta(days=n), today, priors, unreported=frozenset({"todo_owned"})
        )
        priors.append(report)
        assert not any(f.kind == "todo_owned" for f in result.findings)
        assert [f.kind for f in result.left_out] == (["todo_owned"] if items else [])
        assert "TODOs" not in render_report(DAY1, result.findings)
