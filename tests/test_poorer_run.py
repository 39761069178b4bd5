"""A run that looked at less (offline after online, a collector that failed) never replaces
the day's fuller run: it is kept apart, and what reads the day's run says so."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

from scout_tui.model import Checkout, CollectorState, Finding, RunResult, Section
from scout_tui.sandbox.github.http import Fault, LocalGitHub
from scout_tui.store.cache import Cache, kept_apart_note, lost
from tests.cli import DAY, scout
from tests.github_world import TOKEN, fast_config, world_for

CHECKOUT = Checkout.of("/repo", "/repo/.git")
ENV = {"GH_ENTERPRISE_TOKEN": TOKEN}


def a_finding(n: int) -> Finding:
    return Finding(
        collector="todos",
        kind="todo",
        title=f"TODO {n}",
        section=Section.FYI,
        fingerprint=f"todo-{n:04x}",
    )


def a_run(hour: int, findings: int = 0, **states: str) -> RunResult:
    return RunResult(
        date=date(2026, 12, 2),
        since=datetime(2026, 12, 1, tzinfo=UTC),
        repo="/repo",
        checkout=CHECKOUT,
        experiment="exp",
        collected_at=datetime(2026, 12, 2, hour, tzinfo=UTC),
        collectors=[
            CollectorState(
                name=n, title=n.upper(), state=s.split(":")[0], reason=s.partition(":")[2] or None
            )
            for n, s in states.items()
        ],
        findings=[a_finding(n) for n in range(findings)],
    )


def titles(states: list[CollectorState]) -> list[str]:
    return [state.title for state in states]


def test_poorer_means_a_collector_done_before_is_not_done_now():
    full = a_run(9, ci="done", todos="done")
    assert titles(lost(a_run(10, ci="skipped", todos="done"), full)) == ["CI"]
    assert titles(lost(a_run(10, ci="failed", todos="done"), full)) == ["CI"]
    assert titles(lost(a_run(10, ci="cancelled", todos="done"), full)) == ["CI"]
    assert titles(lost(a_run(10, todos="done"), full)) == ["CI"]  # absent
    assert lost(a_run(10, ci="done", todos="done", docs="failed"), full) == []
    # It lost one and gained another: still poorer — what it lost is not in it.
    assert titles(lost(a_run(10, ci="skipped", todos="done", docs="done"), full)) == ["CI"]
    # A collector that was not done in the kept run is nothing to lose.
    assert lost(a_run(10, ci="skipped", todos="done"), a_run(9, ci="failed", todos="done")) == []
    # Finding counts never decide, either way.
    assert lost(a_run(10, 0, ci="done", todos="done"), a_run(9, 30, ci="done", todos="done")) == []
    assert lost(a_run(10, 30, todos="done"), a_run(9, 0, ci="done", todos="done")) != []


def test_the_note_says_when_each_ran_and_what_the_poorer_one_lost_and_how():
    full = a_run(9, ci="done", work="done", todos="done", docs="done")
    poorer = a_run(10, ci="skipped:offline", work="skipped:offline", todos="failed")
    assert kept_apart_note(poorer, full) == (
        "a poorer 10:00 UTC run is kept apart (CI, WORK skipped — offline; TODOS failed; "
        "DOCS not run): the fuller 09:00 UTC run stays the day's run"
    )


def test_the_cache_keeps_the_fuller_run_and_the_latest_poorer_one_apart(tmp_path):
    cache = Cache(tmp_path / "cache")
    day = date(2026, 12, 2)
    full = a_run(9, 30, ci="done", todos="done")
    assert cache.put_run(full) is None  # never poorer than nothing
    offline = a_run(10, 17, ci="skipped", todos="done")
    assert cache.put_run(offline) == full
    assert cache.get_run(CHECKOUT, "exp", day) == full
    assert cache.poorer_run(CHECKOUT, "exp", day) == offline
    failed = a_run(11, 20, ci="done", todos="failed")
    assert cache.put_run(failed) == full  # a later poorer run replaces the earlier one
    assert cache.poorer_run(CHECKOUT, "exp", day) == failed
    [listed] = cache.info()["days"]
    assert listed["day"] == "2026-12-02" and listed["findings"] == 30
    assert listed["poorer"]["lost"] == ["TODOS"] and listed["poorer"]["findings"] == 20
    # As full, with fewer findings: it replaces, and the poorer run is forgotten.
    fewer = a_run(12, 3, ci="done", todos="done")
    assert cache.put_run(fewer) is None
    assert cache.get_run(CHECKOUT, "exp", day) == fewer
    assert cache.poorer_run(CHECKOUT, "exp", day) is None
    assert cache.info()["days"][0]["poorer"] is None
    # An --only run is apart as ever: compared with nothing, replacing nothing.
    only = a_run(13, ci="skipped").model_copy(update={"only": ["ci"]})
    assert cache.put_run(only) is None
    assert cache.get_run(CHECKOUT, "exp", day, ["ci"]) == only
    assert cache.get_run(CHECKOUT, "exp", day) == fewer
    assert cache.poorer_run(CHECKOUT, "exp", day) is None
    # A cancelled run is not kept at all, neither as the day's nor apart.
    cancelled = a_run(14, ci="cancelled", todos="done").model_copy(update={"cancelled": True})
    assert cache.put_run(cancelled) is None
    assert cache.get_run(CHECKOUT, "exp", day) == fewer
    assert cache.poorer_run(CHECKOUT, "exp", day) is None
    # A kept run that no longer stands for the day (another configuration) is replaced.
    assert cache.put_run(offline, replace=True) is None
    assert cache.get_run(CHECKOUT, "exp", day) == offline


def test_a_fuller_run_after_a_poorer_one_replaces_it(tmp_path):
    cache = Cache(tmp_path / "cache")
    day = date(2026, 12, 2)
    offline = a_run(9, 17, ci="skipped", todos="done")
    online = a_run(10, 30, ci="done", todos="done")
    assert cache.put_run(offline) is None
    assert cache.put_run(online) is None
    assert cache.get_run(CHECKOUT, "exp", day) == online
    assert cache.poorer_run(CHECKOUT, "exp", day) is None


def common_args(world, tmp_path) -> list[str]:
    config = fast_config(world, tmp_path)
    return [
        "--repo",
        str(world.repo),
        "--config",
        str(config),
        "--date",
        DAY,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
    ]


def ci_titles(run: RunResult) -> list[str]:
    return [f.title for f in run.findings if f.kind == "ci_failure"]


def test_offline_after_online_keeps_the_online_run_and_says_so(tmp_path, sample_world):
    common = common_args(sample_world, tmp_path)
    with LocalGitHub(world_for(sample_world)) as server:
        online = scout("collect", *common, "--api-url", server.url, "--json", env=ENV)
    assert online.returncode == 0, online.stderr
    full = RunResult.model_validate_json(online.stdout)
    assert ci_titles(full)
    offline = scout("collect", *common, "--offline", "--json")
    assert offline.returncode == 0, offline.stderr
    at = f"{full.collected_at:%H:%M} UTC"
    said = [line for line in offline.stderr.splitlines() if "kept apart" in line]
    assert len(said) == 1 and said[0].startswith("scout: warning: a poorer ")
    assert "CI failure monitoring" in said[0] and "skipped — offline" in said[0]
    assert said[0].endswith(f"the fuller {at} run stays the day's run")
    made = RunResult.model_validate_json(offline.stdout)  # collect prints what it made
    assert not ci_titles(made) and made.collected_at != full.collected_at

    report = scout("report", *common, "--offline", "--json")
    assert report.returncode == 0, report.stderr
    day = RunResult.model_validate_json(report.stdout)
    assert day.collected_at == full.collected_at  # the fuller run, not the later one
    assert ci_titles(day) == ci_titles(full)
    assert said[0] in report.stderr.splitlines()

    markdown = scout("report", *common, "--offline")
    assert markdown.returncode == 0 and ci_titles(full)[0] in markdown.stdout
    poorer = scout("report", *common, "--offline", "--poorer", "--json")
    assert poorer.returncode == 0, poorer.stderr
    assert RunResult.model_validate_json(poorer.stdout).collected_at == made.collected_at
    assert "the poorer " in poorer.stderr and "kept apart (CI failure monitoring" in poorer.stderr
    assert "not the day's run (the fuller " in poorer.stderr

    plan = scout("publish", *common, "--offline", "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert ci_titles(full)[0] in plan.stdout.split("Report comment on", 1)[1]
    assert said[0] in plan.stderr.splitlines()

    # `triage list` says which run is the day's; a decision on it does not say it again.
    listed = scout("triage", "list", *common, "--offline")
    assert said[0] in listed.stderr.splitlines()
    fp = next(f.fingerprint for f in full.findings if f.section.value != "all_clear")
    decided = scout("triage", "accept", fp, *common, "--offline")
    assert decided.returncode == 0, decided.stderr
    assert "kept apart" not in decided.stderr

    info = scout("cache", "info", "--cache-dir", str(tmp_path / "cache"), "--json")
    [listed] = json.loads(info.stdout)["days"]
    assert listed["day"] == DAY and listed["findings"] == len(full.findings)
    assert listed["poorer"]["findings"] == len(made.findings)
    assert "CI failure monitoring" in listed["poorer"]["lost"]
    text = scout("cache", "info", "--cache-dir", str(tmp_path / "cache")).stdout
    [line] = [line for line in text.splitlines() if line.startswith(f"  {DAY} ")]
    assert f"collected {full.collected_at:%Y-%m-%d %H:%M} UTC" in line
    assert "; a poorer run is kept apart: " in line and "without CI failure monitoring" in line


def test_online_after_offline_replaces_it_and_forgets_nothing_it_should_not(tmp_path, sample_world):
    common = common_args(sample_world, tmp_path)
    offline = scout("collect", *common, "--offline", "--json")
    assert offline.returncode == 0 and "kept apart" not in offline.stderr
    with LocalGitHub(world_for(sample_world)) as server:
        online = scout("collect", *common, "--api-url", server.url, "--json", env=ENV)
    assert online.returncode == 0 and "kept apart" not in online.stderr, online.stderr
    report = scout("report", *common, "--offline", "--json")
    day = RunResult.model_validate_json(report.stdout)
    assert day.collected_at == RunResult.model_validate_json(online.stdout).collected_at
    assert ci_titles(day)
    assert "kept apart" not in report.stderr
    refused = scout("report", *common, "--offline", "--poorer")
    assert refused.returncode == 2 and f"no poorer run of {DAY} is kept apart" in refused.stderr
    # An --only run offline is apart as ever: the day's run stays, nothing is said.
    only = scout("collect", *common, "--offline", "--only", "ci_failures", "--json")
    assert only.returncode == 0 and "kept apart" not in only.stderr
    again = scout("report", *common, "--offline", "--json")
    assert RunResult.model_validate_json(again.stdout).collected_at == day.collected_at


def test_a_collector_that_failed_makes_a_poorer_run(tmp_path, sample_world):
    common = common_args(sample_world, tmp_path)
    with LocalGitHub(world_for(sample_world)) as server:
        first = scout("collect", *common, "--api-url", server.url, "--json", env=ENV)
    assert first.returncode == 0, first.stderr
    with LocalGitHub(
        world_for(sample_world), faults=[Fault.parse("GET /search/issues:500")]
    ) as server:
        second = scout("collect", *common, "--api-url", server.url, "--json", env=ENV)
    assert second.returncode == 0, second.stderr
    made = RunResult.model_validate_json(second.stdout)
    assert {s.name: s.state for s in made.collectors}["open_work"] == "failed"
    assert "Open work" in second.stderr and "failed): the fuller" in second.stderr
    report = scout("report", *common, "--offline", "--json")
    kept = RunResult.model_validate_json(first.stdout)
    assert RunResult.model_validate_json(report.stdout).collected_at == kept.collected_at


def test_a_run_with_another_configuration_replaces_the_day_s_run(tmp_path, sample_world):
    """The configuration places the findings: a run made with another one no longer stands
    for the day, so the new run replaces it even when it looked at less."""
    common = common_args(sample_world, tmp_path)
    with LocalGitHub(world_for(sample_world)) as server:
        online = scout("collect", *common, "--api-url", server.url, "--json", env=ENV)
    assert online.returncode == 0, online.stderr
    config = tmp_path / "scout.toml"
    config.write_text(config.read_text() + "\n[report]\nmax_list_items = 7\n")
    report = scout("report", *common, "--offline", "--json")
    assert report.returncode == 0, report.stderr
    assert "the configuration changed since the cached run: collecting again" in report.stderr
    assert "kept apart" not in report.stderr
    day = RunResult.model_validate_json(report.stdout)
    assert not ci_titles(day)  # the new, offline run: the old one no longer stands
    again = scout("report", *common, "--offline", "--json")
    assert "collecting again" not in again.stderr and "kept apart" not in again.stderr
    assert RunResult.model_validate_json(again.stdout).collected_at == day.collected_at
