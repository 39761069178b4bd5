"""`scout replay` over a generated repository with real history: 24 daily reports, each
read back as the next day's prior, and what a month of them says.

The world: the sample repository (history from 11-04 to 11-10), then
- 11-12: a test for `bucket_pass` (a real fix of a P1: Resolved the next report, by commit);
- 11-20: the FSDP+TP integration test switched off (the quiet disabled-tests FYI changes);
- 11-25: a README touch (a day with a commit and nothing to say);
and no commit on the other days.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest

from scout_tui.history.parse import parse_report
from scout_tui.sandbox.demo.sample import Sample, build_sample
from tests.cli import scout
from tests.collector_run import commit_all

FIRST, LAST = date(2026, 11, 5), date(2026, 11, 28)
EXPERIMENT = "torchtitan/experiments/graph_trainer"
TESTS = f"{EXPERIMENT}/tests"


def _at(day: str, hour: int = 15) -> str:
    return f"{day}T{hour:02d}:00:00+00:00"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    world = build_sample(tmp_path_factory.mktemp("replay-world"), date(2026, 11, 10))
    repo = world.repo
    tests = repo / TESTS / "test_passes.py"
    tests.write_text(
        tests.read_text().replace(
            "import cse_pass, remove_noop_pass", "import bucket_pass, cse_pass, remove_noop_pass"
        )
        + (
            "\n\nclass TestBucket:\n    def test_bucket(self):\n"
            "        assert bucket_pass is not None\n"
        )
    )
    commit_all(repo, "graph_trainer: test bucket_pass", _at("2026-11-12"))
    integration = repo / TESTS / "integration_tests.py"
    text = integration.read_text()
    assert '"FSDP+TP", "gt_fsdp_tp")' in text
    integration.write_text(
        text.replace('"FSDP+TP", "gt_fsdp_tp")', '"FSDP+TP", "gt_fsdp_tp", disabled=True)')
    )
    commit_all(repo, "graph_trainer: switch off FSDP+TP for now", _at("2026-11-20"))
    readme = repo / EXPERIMENT / "README.md"
    readme.write_text(readme.read_text() + "\nA note.\n")
    commit_all(repo, "graph_trainer: a note in the README", _at("2026-11-25"))
    return world


def replay_args(
    world: Sample, out: Path, *more: str, first: date | str = FIRST, last: date | str = LAST
) -> list[str]:
    return [
        "replay",
        "--repo",
        str(world.repo),
        "--config",
        str(world.config),
        "--offline",
        "--from",
        str(first),
        "--to",
        str(last),
        "--out",
        str(out),
        *more,
    ]


@pytest.fixture(scope="module")
def month(world: Sample, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("month") / "out"
    done = scout(*replay_args(world, out), timeout=900)
    assert done.returncode == 0, done.stderr
    return out


def reports(out: Path) -> dict[date, str]:
    return {date.fromisoformat(p.stem): p.read_text() for p in sorted(out.glob("*.md"))}


def runs(out: Path) -> dict[date, dict]:
    return {
        date.fromisoformat(p.stem): json.loads(p.read_text()) for p in sorted(out.glob("20*.json"))
    }


def kinds_shown(run: dict) -> set[str]:
    return {f["kind"] for f in run["findings"]}


def test_one_report_per_calendar_day_each_on_that_days_last_commit(world, month):
    days = [FIRST + timedelta(days=n) for n in range((LAST - FIRST).days + 1)]
    assert list(reports(month)) == days and list(runs(month)) == days
    heads = {day: run["head"] for day, run in runs(month).items()}

    def last_commit(day: date) -> str:
        return subprocess.run(
            ["git", "rev-list", "--first-parent", "-1", f"--before={day}T23:59:59+00:00", "HEAD"],
            cwd=world.repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    for day, head in heads.items():
        assert head == last_commit(day), day
    assert heads[date(2026, 11, 13)] == heads[date(2026, 11, 19)]  # days without commits
    summary = json.loads((month / "summary.json").read_text())
    assert [row["date"] for row in summary["days"]] == [d.isoformat() for d in days]
    row = summary["days"][0]
    assert set(row) == {
        "date",
        "head",
        "sections",
        "new",
        "carried",
        "resolved",
        "left_out",
        "action_items",
        "bytes",
        "seconds",
    }
    assert row["bytes"] == len(reports(month)[FIRST].encode())


def test_each_days_report_is_the_next_days_prior_read_back(month):
    by_day = runs(month)
    assert by_day[FIRST]["prior_reports"] == []  # the first day has no baseline, and says so
    first, second = reports(month)[FIRST], reports(month)[FIRST + timedelta(days=1)]
    assert "First report: no prior report to compare with" in first
    assert f"since {FIRST}" not in first and "none new today (first report" in first
    assert "First report" not in second and f"since {FIRST}" in second
    for day in list(by_day)[1:]:
        dates = [r["date"] for r in by_day[day]["prior_reports"]]
        assert dates[-1] == (day - timedelta(days=1)).isoformat()
        assert Path(by_day[day]["prior_source"]) == month.resolve()


def test_a_quiet_fyi_stays_out_while_unchanged_and_comes_back_when_it_changes(month):
    """The disabled-tests FYI: listed three days, then left out — every day, not every
    other day — until a test is switched off; back with what changed; then quiet again."""
    listed = {day: "tests_disabled" in kinds_shown(run) for day, run in runs(month).items()}
    shown = [day for day, present in listed.items() if present]
    assert shown == [
        date(2026, 11, 5),
        date(2026, 11, 6),
        date(2026, 11, 7),
        date(2026, 11, 20),
        date(2026, 11, 21),
        date(2026, 11, 22),
    ]
    back = next(
        f for f in runs(month)[date(2026, 11, 20)]["findings"] if f["kind"] == "tests_disabled"
    )
    assert back["status_update"].startswith("situation worsened: 1 new")
    assert "gt_fsdp_tp" in back["status_update"]
    assert "left out as unchanged" in back["status_update"]
    # Out, it still travels in each report, so a box with no state keeps it out.
    quiet = parse_report(reports(month)[date(2026, 11, 15)]).quiet
    fingerprint = back["fingerprint"]
    assert [m.since for m in quiet if m.fingerprint == fingerprint] == [date(2026, 11, 7)]
    assert fingerprint in runs(month)[date(2026, 11, 15)]["suppressed"]
    left_out = runs(month)[date(2026, 11, 15)]["left_out"]
    assert fingerprint in {f["fingerprint"] for f in left_out}  # the console can show it


def test_a_real_fix_is_resolved_by_commit_and_news_ages_out_without_a_resolved_line(world, month):
    by_day = reports(month)
    resolved = {
        day: re.findall(r"^- Resolved: (.*?) —", text, re.M) for day, text in by_day.items()
    }
    said = {day: titles for day, titles in resolved.items() if titles}
    assert said == {date(2026, 11, 12): ["1 graph pass with no test"]}, said
    fix = re.search(
        r"^- Resolved: 1 graph pass with no test — (.*)$", by_day[date(2026, 11, 12)], re.M
    ).group(1)
    sha = subprocess.run(
        ["git", "log", "-1", "--format=%h", "--abbrev=10", "--grep", "test bucket_pass"],
        cwd=world.repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert f"`{sha}` (graph_trainer: test bucket_pass)" in fix
    # The switch-off of 11-20 is news: an Action Item on its day only (the next day's window
    # starts at the commit that day's report scanned), then gone — and never Resolved.
    news = [day for day, run in runs(month).items() if "tests_newly_disabled" in kinds_shown(run)]
    assert news == [date(2026, 11, 20)]


def test_quiet_days_fit_one_screen(month):
    """Days 4–7 of a stretch with no commit: at most 14 top-level bullets and 4 KB."""
    for offset in range(3, 7):
        day = date(2026, 11, 13) + timedelta(days=offset)
        text = reports(month)[day]
        bullets = len(re.findall(r"^- ", text, re.M))
        assert bullets <= 14 and len(text.encode()) <= 4096, (day, bullets, len(text.encode()))


def test_a_day_of_replay_is_collect_with_that_date_and_the_replay_folder(world, month, tmp_path):
    """Replay's 11-21 equals `scout collect --date 2026-11-21 --prior OUT --offline` then
    `scout report`, byte for byte."""
    day = "2026-11-21"
    common = [
        "--repo",
        str(world.repo),
        "--config",
        str(world.config),
        "--date",
        day,
        "--prior",
        str(month),
        "--offline",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
    ]
    collected = scout("collect", *common, "--json")
    assert collected.returncode == 0, collected.stderr
    report = scout("report", *common)
    assert report.returncode == 0, report.stderr
    assert report.stdout == reports(month)[date.fromisoformat(day)]
    mine, theirs = json.loads(collected.stdout), runs(month)[date.fromisoformat(day)]
    for run in (mine, theirs):
        run.pop("collected_at")
        for state in run["collectors"]:
            state.pop("seconds")
    assert mine == theirs


def test_an_interrupted_replay_resumes_after_its_last_complete_day(world, month, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(month, out)
    for day in ("2026-11-27", "2026-11-28"):
        (out / f"{day}.md").unlink()  # as if stopped during the 27th
    (out / "2026-11-26.md").unlink()  # a day whose report never got written is not complete
    again = scout(*replay_args(world, out))
    assert again.returncode == 0, again.stderr
    kept = [line.split()[0] for line in again.stdout.splitlines() if line.endswith("(kept)")]
    assert kept == [(FIRST + timedelta(days=n)).isoformat() for n in range(21)]
    assert reports(out) == reports(month)


def test_out_must_be_a_replay_or_empty(world, tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    refused = scout(*replay_args(world, busy))
    assert refused.returncode == 2
    assert "is not empty and holds no replay" in refused.stderr
    assert (busy / "notes.txt").read_text() == "mine" and len(list(busy.iterdir())) == 1


@pytest.mark.parametrize(
    "first, last, why",
    [
        ("2024-06-01", "2026-11-06", "before the first commit"),
        ("2026-12-01", "2026-12-04", "after today"),
        ("2026-11-09", "2026-11-08", "is after --to"),
    ],
)
def test_days_outside_the_history_are_refused(world, tmp_path, first, last, why):
    done = scout(*replay_args(world, tmp_path / "o", first=first, last=last))
    assert done.returncode == 2 and why in done.stderr and done.stdout == ""
    assert not (tmp_path / "o" / "summary.json").exists()


def test_a_new_item_on_a_day_with_no_commit_after_it_joins_the_older_ones(tmp_path):
    """A config registered on 11-12 with no test is the day's P2; on 11-13 nothing landed, so
    the same tree is checked as of 11-12 again: the config is still untested, now among the
    older ones (no card carried "unchecked" or "disagrees", never Resolved). The near miss
    is the check reused from the 11-13 run, where nothing is new since 11-13."""
    world = build_sample(tmp_path / "w", date(2026, 11, 10))
    registry = world.repo / EXPERIMENT / "llama3" / "config_registry.py"
    registry.write_text(
        registry.read_text() + "\n\ndef graph_trainer_llama3_8b():\n    return {}\n"
    )
    commit_all(world.repo, "graph_trainer: an 8b config", _at("2026-11-12"))
    out = tmp_path / "out"
    done = scout(*replay_args(world, out, first="2026-11-11", last="2026-11-13"))
    assert done.returncode == 0, done.stderr
    by_day = runs(out)
    [new] = [
        f for f in by_day[date(2026, 11, 12)]["findings"] if f["kind"] == "model_config_untested"
    ]
    assert new["items"] == ["graph_trainer_llama3_8b"]
    after = by_day[date(2026, 11, 13)]["findings"]
    carried = [
        f["title"] for f in after if f["kind"] in ("prior_unchecked", "model_config_untested")
    ]
    assert carried == []
    # The standing list is kept in the run's --json (left_out), never reported (shipped rules).
    kept = by_day[date(2026, 11, 13)]["left_out"]
    [older] = [f for f in kept if f["kind"] == "model_configs_untested"]
    assert "graph_trainer_llama3_8b" in older["items"]
    assert "Resolved" not in reports(out)[date(2026, 11, 13)]


def test_a_hand_written_prior_scouts_check_disagrees_with_is_never_resolved(world, tmp_path):
    """A hand-written report says `cse_pass` has no test; it has had one all along: scout
    carries the item saying its check disagrees, and never says Resolved."""
    prior = tmp_path / "prior"
    prior.mkdir()
    (prior / "2026-11-04.md").write_text(
        "# Nightly Scout Report — 2026-11-04\n\n## Action Items\n\n"
        "- [ ] **[P1] `cse_pass` has zero test coverage** — add one.\n\n"
        "## FYI\n\n- Nothing new upstream that the experiment could adopt.\n"
    )
    out = tmp_path / "out"
    done = scout(*replay_args(world, out, "--prior", str(prior), last="2026-11-07"))
    assert done.returncode == 0, done.stderr
    texts = reports(out)
    assert "Resolved" not in "".join(texts.values())
    first = runs(out)[date(2026, 11, 5)]
    [carried] = [f for f in first["findings"] if "cse_pass" in f["title"]]
    assert carried["status_update"].startswith("scout's check disagrees")
    assert (out / "2026-11-04.md").exists()  # seeded: any day reruns alone from the folder


async def test_a_replayed_day_opens_in_the_console_and_is_never_published(month, tmp_path):
    """`scout open OUT/DAY.json`: the day's findings, triage works, `R` and `P` are refused
    (a past day is reviewed, never collected again or published)."""
    from scout_tui.model import Section
    from scout_tui.session import Session, SessionOptions
    from scout_tui.tui.app import ScoutApp
    from tests.console import cursor_to, settle

    options = SessionOptions(
        state_dir=tmp_path / "state", cache_dir=tmp_path / "cache", offline=False
    )
    session = Session.of_bundle(month / "2026-11-21.json", options)
    app = ScoutApp(session, load_cached=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot, app)
        assert app.triage.run_result is not None and app.triage.run_result.date == date(
            2026, 11, 21
        )
        fp = await cursor_to(pilot, app, lambda f: f.section is Section.CARRIED_FORWARD)
        await pilot.press("a")
        await settle(pilot, app)
        assert session.review.decisions()[fp].decision == "accepted"
        await pilot.press("R")
        await pilot.press("P")
        await settle(pilot, app)
        assert app.triage.collection is None
        said = [n.message for n in app._notifications]
        assert any("is a past day's" in m and "never published" in m for m in said), said
    printed = scout(
        "open",
        str(month / "2026-11-21.json"),
        "--state-dir",
        str(tmp_path / "s2"),
        "--cache-dir",
        str(tmp_path / "c2"),
    )
    assert printed.returncode == 0 and printed.stdout == reports(month)[date(2026, 11, 21)]


def test_ctrl_c_stops_after_whole_days_and_the_same_command_resumes(world, month, tmp_path):
    import os
    import signal
    import sys

    from tests.history import group_gone

    out = tmp_path / "out"
    child = subprocess.Popen(
        [sys.executable, "-m", "scout_tui", *replay_args(world, out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert child.stdout is not None
    child.stdout.readline()  # the header
    child.stdout.readline()  # the first day, written whole
    os.killpg(child.pid, signal.SIGINT)
    _rest, err = child.communicate(timeout=120)
    assert group_gone(child.pid)
    if child.returncode == 0:  # it finished first: nothing to check
        return
    assert child.returncode == 130 and "Traceback" not in err, err
    assert "with the same --out" in err and err.endswith("scout: interrupted\n")
    written = sorted(p.name for p in out.iterdir())
    assert not [name for name in written if name.startswith(".") and name != ".cache"]
    days = {name.split(".")[0] for name in written if name.startswith("2026-")}
    # A report is written last: each day with one is whole (a JSON alone is redone).
    assert days and all(
        (out / f"{day}.json").exists() for day in days if (out / f"{day}.md").exists()
    )
    again = scout(*replay_args(world, out))
    assert again.returncode == 0, again.stderr
    assert reports(out) == reports(month)


def test_a_replay_resumes_only_from_the_day_it_began(world, month, tmp_path):
    """Its days are a chain from its first one: another --from into the same folder is
    refused, and nothing in it changes."""
    out = tmp_path / "out"
    shutil.copytree(month, out)
    before = reports(out)
    refused = scout(*replay_args(world, out, first="2026-11-04"))
    assert refused.returncode == 2 and "holds a replay from 2026-11-05" in refused.stderr
    assert reports(out) == before


def test_only_reports_are_seeded_from_prior_and_future_dates_are_not_believed(world, tmp_path):
    prior = tmp_path / "prior"
    prior.mkdir()
    (prior / "2026-11-03.md").symlink_to("/etc/hostname")
    (prior / "2026-11-02.md").write_text("just notes, no report\n")
    (prior / "2026-11-04.md").write_text(
        "# Nightly Scout Report — 2026-11-04\n\n## Action Items\n\n"
        "- [ ] **[P1] `cse_pass` has zero test coverage** — add one. First reported 2099-01-01.\n"
    )
    out = tmp_path / "out"
    done = scout(*replay_args(world, out, "--prior", str(prior), last="2026-11-05"))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("*.md")) == ["2026-11-04.md", "2026-11-05.md"]
    assert (
        "a symlink, not copied" in done.stderr
        and "no '# Nightly Scout Report' title" in done.stderr
    )
    assert "2099" not in reports(out)[date(2026, 11, 5)]
