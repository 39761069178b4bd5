"""A run that looked at less (offline after online, a collector that failed) never replaces
the day's fuller run: it is kept apart, and what reads the day's run says so."""

from __future__ import annotations

from datetime import UTC, date, datetime

from scout_tui.cache import Cache, lost
from scout_tui.github.server.http import LocalGitHub
from scout_tui.model import Checkout, CollectorState, RunResult
from tests.cli import DAY, scout
from tests.github_world import TOKEN, fast_config, world_for

CHECKOUT = Checkout.of("/repo", "/repo/.git")


def a_run(hour: int, **states: str) -> RunResult:
    return RunResult(
        date=date(2026, 12, 2), since=datetime(2026, 12, 1, tzinfo=UTC), repo="/repo",
        checkout=CHECKOUT, experiment="exp", collected_at=datetime(2026, 12, 2, hour, tzinfo=UTC),
        collectors=[CollectorState(name=n, title=n.upper(), state=s) for n, s in states.items()],
    )  # fmt: skip


def test_poorer_means_a_collector_done_before_is_not_done_now():
    full = a_run(9, ci="done", todos="done")
    assert lost(a_run(10, ci="skipped", todos="done"), full) == ["CI"]
    assert lost(a_run(10, ci="failed", todos="done"), full) == ["CI"]
    assert lost(a_run(10, todos="done"), full) == ["CI"]  # absent
    assert lost(a_run(10, ci="done", todos="done", docs="failed"), full) == []
    # It lost one and gained another: still poorer — what it lost is not in it.
    assert lost(a_run(10, ci="skipped", todos="done", docs="done"), full) == ["CI"]


def test_the_cache_keeps_the_fuller_run_and_the_latest_poorer_one_apart(tmp_path):
    cache = Cache(tmp_path / "cache")
    full = a_run(9, ci="done", todos="done")
    assert cache.put_run(full) is None
    offline = a_run(10, ci="skipped", todos="done")
    assert cache.put_run(offline) == full
    again = a_run(11, ci="skipped", todos="done")
    assert cache.put_run(again) == full  # the later poorer run replaces the earlier one
    assert cache.get_run(CHECKOUT, "exp", full.date) == full
    assert cache.poorer_run(CHECKOUT, "exp", full.date) == again
    assert cache.info()["poorer_runs_kept_apart"] == ["2026-12-02"]
    assert cache.info()["runs"] == ["2026-12-02"]
    fuller = a_run(12, ci="done", todos="done")
    assert cache.put_run(fuller) is None  # as full: it replaces, and the poorer is gone
    assert cache.get_run(CHECKOUT, "exp", full.date) == fuller
    assert cache.poorer_run(CHECKOUT, "exp", full.date) is None
    # A cancelled run is not kept at all; an --only run is apart as ever.
    assert cache.put_run(a_run(13, ci="cancelled").model_copy(update={"cancelled": True})) is None
    assert cache.get_run(CHECKOUT, "exp", full.date) == fuller


def test_offline_after_online_keeps_the_online_run_and_says_so(tmp_path, fresh_world):
    config = fast_config(fresh_world, tmp_path)
    common = ["--repo", str(fresh_world.repo), "--config", str(config), "--date", DAY,
              "--cache-dir", str(tmp_path / "cache"), "--state-dir", str(tmp_path / "state")]
    env = {"GH_ENTERPRISE_TOKEN": TOKEN}
    with LocalGitHub(world_for(fresh_world)) as server:
        online = scout("collect", *common, "--api-url", server.url, "--json", env=env)
        assert online.returncode == 0, online.stderr
        full = RunResult.model_validate_json(online.stdout)
        assert any(f.kind == "ci_failure" for f in full.findings)
    offline = scout("collect", *common, "--offline", "--json")
    assert offline.returncode == 0, offline.stderr
    assert "a poorer" in offline.stderr and "run is kept apart" in offline.stderr
    assert "CI failure monitoring" in offline.stderr.split("kept apart", 1)[1]
    made = RunResult.model_validate_json(offline.stdout)  # collect prints what it made
    assert not any(f.kind == "ci_failure" for f in made.findings)
    report = scout("report", *common, "--offline", "--json")
    assert report.returncode == 0, report.stderr
    day = RunResult.model_validate_json(report.stdout)
    assert day.collected_at == full.collected_at  # the fuller run, not the later one
    assert any(f.kind == "ci_failure" for f in day.findings)
    assert "run is kept apart" in report.stderr
    info = scout("cache", "info", "--cache-dir", str(tmp_path / "cache"), "--json")
    assert '"poorer_runs_kept_apart": [\n    "2026-12-02"' in info.stdout
