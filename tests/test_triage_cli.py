"""`scout triage`, the headless mirror of the console's actions, as a script uses it."""

from __future__ import annotations

import json

import pytest

from tests.cli import scout, world_args


@pytest.fixture
def args(tmp_path, sample_world):
    args = world_args(sample_world, tmp_path)
    assert scout("collect", *args).returncode == 0
    return args


def listing(args) -> dict[str, dict]:
    done = scout("triage", "list", *args, "--json")
    assert done.returncode == 0, done.stderr
    return {row["fingerprint"]: row for row in json.loads(done.stdout)}


def test_list_shows_every_finding_and_its_decision(args):
    rows = listing(args)
    assert rows and all(row["decision"] is None for row in rows.values())
    done = scout("triage", "list", *args)
    to_review = [row for row in rows.values() if row["section"] != "all_clear"]
    assert 0 < len(to_review) < len(rows)  # the console's count: All Clear needs no review
    assert done.stdout.splitlines()[0].endswith(
        f"{len(rows)} findings, 0 of {len(to_review)} reviewed"
    )


def test_each_action_then_undo_and_redo_across_processes(args):
    rows = listing(args)
    p1 = next(fp for fp, row in rows.items() if row["priority"] == "P1")
    fyi = next(fp for fp, row in rows.items() if row["section"] == "fyi")
    # Promoted to Action Items; a carried one stays under Carried Forward.
    promoted_to = "carried_forward" if rows[fyi]["status"] == "carried" else "action_items"
    hex_prefix = p1.rsplit("-", 1)[1][:8]

    done = scout("triage", "demote", hex_prefix, *args)  # a prefix of the hex part
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"demoted: {p1}")
    assert listing(args)[p1]["priority"] == "P2" and listing(args)[p1]["decision"] == "demoted"

    assert scout("triage", "promote", fyi, *args).returncode == 0
    assert (listing(args)[fyi]["section"], listing(args)[fyi]["priority"]) == (promoted_to, "P2")
    assert scout("triage", "drop", fyi, "--reason", "noise for us", *args).returncode == 0
    report = scout("report", *args).stdout
    assert fyi not in report  # dropped: not published
    [line] = [row for row in scout("triage", "list", *args).stdout.splitlines() if fyi in row]
    assert line.endswith("(why: noise for us)")  # the text listing says why, too

    done = scout("triage", "undo", *args)
    title = " ".join(listing(args)[fyi]["title"].replace("`", "").split())
    shown = title if len(title) <= 48 else title[:47].rstrip() + "…"
    assert done.stdout.strip() == f"undid: drop “{shown}” (1 finding)"  # as a person knows it
    assert listing(args)[fyi]["decision"] == "promoted"
    assert fyi in scout("report", *args).stdout
    assert scout("triage", "redo", *args).stdout.startswith("redid: drop")
    assert listing(args)[fyi]["decision"] == "dropped"


def test_merge_and_edit(args, tmp_path):
    rows = listing(args)
    a, b, target = list(rows)[:3]
    done = scout("triage", "merge", a, b, "--into", target, *args)
    assert done.returncode == 0, done.stderr
    assert listing(args)[a]["merged_into"] == target
    body = tmp_path / "body.md"
    body.write_text("A body written by hand.\n")
    done = scout(
        "triage",
        "edit",
        target,
        "--title",
        "A better title",
        "--priority",
        "P0",
        "--section",
        "action_items",
        "--body-file",
        body,
        *args,
    )
    assert done.returncode == 0, done.stderr
    row = listing(args)[target]
    assert (row["title"], row["priority"], row["decision"]) == ("A better title", "P0", "edited")
    report = scout("report", *args).stdout
    assert "**[P0] A better title** — A body written by hand." in report
    assert "Merged: **" in report


def test_unknown_ambiguous_and_impossible_references_change_nothing(args):
    rows = listing(args)
    done = scout("triage", "accept", "no-such-finding", *args)
    assert done.returncode == 2 and "no finding 'no-such-finding'" in done.stderr
    kinds = [fp.rsplit("-", 1)[0] for fp in rows]
    kind = next(k for k in kinds if kinds.count(k) > 1)
    same_kind = [fp for fp in rows if fp.startswith(kind + "-")]
    done = scout("triage", "accept", next(iter(rows)), kind, *args)
    assert done.returncode == 2 and f"matches {len(same_kind)} findings" in done.stderr
    assert all(fp in done.stderr for fp in same_kind[:8])
    a = next(iter(rows))
    done = scout("triage", "merge", a, "--into", a, *args)
    assert done.returncode == 2 and "into itself" in done.stderr
    assert scout("triage", "drop", a, "--reason", "  ", *args).returncode == 2
    assert all(row["decision"] is None for row in listing(args).values())  # nothing recorded
    done = scout("triage", "undo", *args)
    assert done.returncode == 1 and done.stderr.strip() == "scout: nothing to undo"
    done = scout("triage", "redo", *args)
    assert done.returncode == 1 and done.stderr.strip() == "scout: nothing to redo"


def test_decisions_survive_cache_clear_and_carry_to_the_next_day(args, tmp_path):
    rows = listing(args)
    fp = next(iter(rows))
    assert scout("triage", "drop", fp, "--reason", "not ours", *args).returncode == 0
    assert scout("cache", "clear", "--cache-dir", tmp_path / "cache").returncode == 0
    assert listing(args)[fp]["decision"] == "dropped"  # collected again, still dropped
    tomorrow = list(args)
    tomorrow[tomorrow.index("--date") + 1] = "2026-12-03"
    later = listing(tomorrow)
    if fp in later:  # a finding that is still there tomorrow stays dropped
        assert later[fp]["decision"] == "dropped"


def test_an_edit_that_changes_nothing_says_why_and_records_nothing(args):
    """A carried finding moved to Action Items stays under Carried Forward (reconcile says
    it is not new): the edit is refused with the reason, and no undo step is taken."""
    rows = listing(args)
    carried = next(fp for fp, row in rows.items() if row["section"] == "carried_forward")
    done = scout("triage", "edit", carried, "--section", "action_items", *args)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"scout: error: {carried} was reported before: it stays in Carried Forward "
        "(reconcile decides that); edit its priority or title instead"
    )
    assert listing(args)[carried] == rows[carried]
    assert scout("triage", "undo", *args).stderr.strip() == "scout: nothing to undo"
    # The near miss: a real change to the same finding is recorded.
    done = scout("triage", "edit", carried, "--priority", "P0", *args)
    assert done.returncode == 0 and done.stdout.startswith(f"edited: {carried}")
    assert listing(args)[carried]["priority"] == "P0"


def test_a_corrupt_state_store_reports_untriaged_and_refuses_to_publish(args, tmp_path):
    """`report` still renders (every finding as collected) and says why in one warning;
    `publish --dry-run` refuses, naming the file, since its journal cannot be trusted; the
    file is left as it is."""
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    garbage = b"not my decisions" * 400
    (state / "state.sqlite3").write_bytes(garbage)
    done = scout("report", "--offline", *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Nightly Scout Report")
    assert done.stderr.count("\n") == 1 and "scout: warning: the state store " in done.stderr
    assert str(state / "state.sqlite3") in done.stderr and "untriaged" in done.stderr
    refused = scout("publish", "--dry-run", "--offline", *args)
    assert refused.returncode == 1 and not refused.stdout
    assert refused.stderr.startswith("scout: error: the state store ")
    assert str(state / "state.sqlite3") in refused.stderr
    assert (state / "state.sqlite3").read_bytes() == garbage


def test_triage_list_takes_the_consoles_filter_and_a_section(args):
    """`triage list WORD… [--section S]` lists what the console's `/` would show."""
    every = listing(args)
    p1 = json.loads(scout("triage", "list", "p1", "--json", *args).stdout)
    assert p1 and {r["fingerprint"] for r in p1} == {
        fp for fp, row in every.items() if row["priority"] == "P1"
    }
    fp = p1[0]["fingerprint"]
    assert scout("triage", "accept", fp, *args).returncode == 0
    unreviewed = json.loads(scout("triage", "list", "p1", "unreviewed", "--json", *args).stdout)
    assert fp not in {r["fingerprint"] for r in unreviewed}
    assert len(unreviewed) == len(p1) - 1
    word = every[fp]["title"].split()[0].lower().strip("`")
    by_word = json.loads(scout("triage", "list", word, "--json", *args).stdout)
    assert fp in {r["fingerprint"] for r in by_word}
    assert len(by_word) < len(every)  # a word narrows
    fyi = json.loads(scout("triage", "list", "--section", "fyi", "--json", *args).stdout)
    assert fyi and all(r["section"] == "fyi" for r in fyi)
    none = scout("triage", "list", "no-such-word-anywhere", *args)
    assert none.returncode == 0 and none.stdout.strip().startswith("no finding of the run of")
    # A fingerprint, or a prefix of it as the other triage commands take, finds its finding.
    prefix = json.loads(scout("triage", "list", fp[:-4], "--json", *args).stdout)
    assert [r["fingerprint"] for r in prefix] == [fp]
    # A priority that is none: said, not searched for as a word (quoted, it is a word).
    p3 = scout("triage", "list", "p3", *args)
    assert p3.returncode == 2 and "no priority p3 (P0, P1, P2)" in p3.stderr
    assert scout("triage", "list", "'p3'", *args).returncode == 0
    # One finding is "1 finding": its title's words find it alone.
    words = [w.strip("`'\"():,").lower() for w in every[fp]["title"].split()]
    one = scout("triage", "list", *[w for w in words if w], *args).stdout
    assert one.splitlines()[0].endswith(": 1 finding, 1 of 1 reviewed"), one


def test_a_merge_that_loses_a_backlog_draft_says_so_and_all_clear_lines_never_merge(args):
    """A new Action Item merged into an Opportunity: done, and a warning that its Backlog
    draft is no longer filed (TRUE); merged into another Action Item, nothing is said
    (NEAR-MISS: the drafts become one). An All Clear line neither joins nor takes in one."""
    rows = listing(args)
    new_items = [
        fp
        for fp, row in rows.items()
        if row["section"] == "action_items" and row["status"] == "new"
    ]
    opportunity = next(fp for fp, row in rows.items() if row["section"] == "opportunities")
    all_clear = next(fp for fp, row in rows.items() if row["section"] == "all_clear")
    assert len(new_items) >= 3
    drafts = json.loads(scout("publish", "--dry-run", "--json", "--offline", *args).stdout)
    before = len(drafts["drafts"])

    done = scout("triage", "merge", new_items[0], "--into", opportunity, *args)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        f"scout: warning: {new_items[0]}: its Backlog draft is no longer filed (it joins "
        f"{opportunity} in Opportunities, which files none)\n"
    )
    after = json.loads(scout("publish", "--dry-run", "--json", "--offline", *args).stdout)
    assert len(after["drafts"]) == before - 1

    done = scout("triage", "merge", new_items[1], "--into", new_items[2], *args)
    assert done.returncode == 0 and done.stderr == ""

    for merge in ([all_clear, "--into", opportunity], [opportunity, "--into", all_clear]):
        done = scout("triage", "merge", *merge, *args)
        assert done.returncode != 0
        assert f"{all_clear} is an All Clear line" in done.stderr
    assert listing(args)[all_clear]["decision"] is None


def test_a_merge_into_a_lower_priority_says_at_which_priority_the_part_is_said(args):
    """A P1 merged into a P2: done, and said (TRUE) — the P1's concern now reads at P2; a P2
    merged into a P1 is said nothing (NEAR-MISS)."""
    rows = listing(args)
    by = {p: [fp for fp, row in rows.items() if row["priority"] == p] for p in ("P1", "P2")}
    p1, p2 = by["P1"][0], by["P2"][0]
    other_p2 = by["P2"][1]
    done = scout("triage", "merge", p1, "--into", p2, *args)
    assert done.returncode == 0, done.stderr
    assert f"scout: warning: {p1} is P1: it is said at {p2}'s P2 (promote it" in done.stderr
    quiet = scout("triage", "merge", other_p2, "--into", by["P1"][1], *args)
    assert quiet.returncode == 0 and "is P2" not in quiet.stderr


def test_priorities_in_any_case_and_an_all_clear_line_is_said_not_to_move(args):
    """`--priority p1` as the filter writes it (TRUE) and `P1` alike; `--priority p4` is
    still refused (NEAR-MISS). Promoting an All Clear line says why nothing moved."""
    rows = listing(args)
    target = next(fp for fp, row in rows.items() if row["priority"] == "P2")
    done = scout("triage", "edit", target, "--priority", "p1", *args)
    assert done.returncode == 0, done.stderr
    assert listing(args)[target]["priority"] == "P1"
    assert scout("triage", "edit", target, "--priority", "p4", *args).returncode == 2
    all_clear = next(fp for fp, row in rows.items() if row["section"] == "all_clear")
    for action in ("promote", "demote"):
        done = scout("triage", action, all_clear, *args)
        assert done.stderr == f"{all_clear}: an All Clear line does not move, unchanged\n"


def test_an_edit_never_leaves_a_priority_where_it_cannot_be(args):
    """Moved into Action Items, an Opportunity needs a priority (TRUE: its draft would say
    "Priority: none"); with one given it moves (NEAR-MISS). A priority on an Opportunity is
    refused: Opportunities carry none."""
    rows = listing(args)
    opportunity = next(fp for fp, row in rows.items() if row["section"] == "opportunities")
    done = scout("triage", "edit", opportunity, "--section", "action_items", *args)
    assert done.returncode != 0
    assert "need a priority: add --priority P0, P1 or P2" in done.stderr
    assert scout("triage", "edit", opportunity, "--priority", "P1", *args).returncode != 0
    assert listing(args)[opportunity]["priority"] is None
    done = scout(
        "triage", "edit", opportunity, "--section", "action_items", "--priority", "P1", *args
    )
    assert done.returncode == 0, done.stderr
    moved = listing(args)[opportunity]
    # (a carried one stays under Carried Forward: reconcile decided it is not new)
    assert moved["section"] in ("action_items", "carried_forward") and moved["priority"] == "P1"


@pytest.mark.parametrize("day", ["20261202", "2026-W49-3", "2026-12-2"])
def test_a_date_is_yyyy_mm_dd_only(tmp_path, day):
    done = scout("report", "--date", day, "--repo", tmp_path, "--offline")
    assert done.returncode == 2
    assert f"not a date (YYYY-MM-DD): '{day}'" in done.stderr
