from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from scout_tui.model import Checkout, RunResult
from scout_tui.store.cache import CACHE_VERSION, Cache
from tests.cli import DAY, scout, scout_read_only, world_args

HERE = Checkout.of("/src/a", "/src/a/.git")
THERE = Checkout.of("/src/b", "/src/a/.git")  # a second worktree of the same repository


def a_run(day=date(2026, 4, 2), checkout=HERE, experiment="exp", **extra) -> RunResult:
    return RunResult(
        date=day,
        since=datetime(2026, 4, 1, tzinfo=UTC),
        repo=checkout.path,
        checkout=checkout,
        experiment=experiment,
        **extra,
    )


def test_runs_are_filed_by_checkout_experiment_and_day(tmp_path):
    cache = Cache(tmp_path)
    cache.put_run(a_run())
    assert cache.get_run(HERE, "exp", date(2026, 4, 2)) == a_run()
    assert cache.get_run(HERE, "exp", date(2026, 4, 3)) is None
    assert cache.get_run(THERE, "exp", date(2026, 4, 2)) is None
    assert cache.get_run(HERE, "other-exp", date(2026, 4, 2)) is None
    assert cache.info()["runs"] == ["2026-04-02"]


def test_partial_and_cancelled_runs_never_stand_for_the_day(tmp_path):
    cache = Cache(tmp_path)
    cache.put_run(a_run())
    cache.put_run(a_run(only=["docs"], suppressed=["x"]))
    cache.put_run(a_run(cancelled=True, suppressed=["cancelled"]))
    assert cache.get_run(HERE, "exp", date(2026, 4, 2)) == a_run()
    assert cache.get_run(HERE, "exp", date(2026, 4, 2), ["docs"]).suppressed == ["x"]


def test_truncated_db_is_moved_aside_and_rebuilt(tmp_path):
    cache = Cache(tmp_path)
    for day in range(1, 28):
        cache.put_run(a_run(date(2026, 4, day)))
    cache.close()
    db = tmp_path / CACHE_VERSION / "cache.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    warnings: list[str] = []
    rebuilt = Cache(tmp_path, warn=warnings.append)
    assert len(warnings) == 1 and "was corrupt" in warnings[0] and "moved it to" in warnings[0]
    assert rebuilt.get_run(HERE, "exp", date(2026, 4, 2)) is None
    rebuilt.put_run(a_run())
    assert rebuilt.get_run(HERE, "exp", date(2026, 4, 2)) == a_run()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(f"{CACHE_VERSION}.corrupt-")]
    assert len(aside) == 1 and (aside[0] / "cache.db").stat().st_size == len(data) // 3


def test_bad_values_are_dropped_with_a_warning(tmp_path):
    warnings: list[str] = []
    cache = Cache(tmp_path, warn=warnings.append)
    cache.put_run(a_run())
    key = f"run/{HERE.id}/exp/2026-04-02"
    cache._store.set(key, '{"schema_version": 1, "date": "not a date"}')
    cache._store.set("value/x", {"a pickled": "dict"})
    assert cache.get_run(HERE, "exp", date(2026, 4, 2)) is None
    assert cache.get_value("x", RunResult) is None
    assert len(warnings) == 2 and all("dropping it" in w for w in warnings)
    assert key not in cache._store  # dropped, so the next run rebuilds it


def test_cli_survives_a_corrupt_cache_and_never_stores_the_token(tmp_path, sample_world):
    token = "ghp_SENTINELtoken0123456789abcdef"
    args = world_args(sample_world, tmp_path)
    done = scout("collect", *args, env={"GH_TOKEN": token})
    assert done.returncode == 0, done.stderr
    (tmp_path / "cache" / CACHE_VERSION / "cache.db").write_bytes(b"SQLite format 3\x00junk" * 10)
    done = scout("report", *args, env={"GH_TOKEN": token})
    assert done.returncode == 0, done.stderr
    assert "was corrupt" in done.stderr and "started a fresh one" in done.stderr
    assert done.stdout.startswith(f"# Nightly Scout Report — {DAY}")
    fp = RunResult.model_validate_json(scout("report", *args, "--json").stdout).findings[0]
    done_triage = scout("triage", "accept", fp.fingerprint, *args, env={"GH_TOKEN": token})
    assert done_triage.returncode == 0, done_triage.stderr
    written = [
        p for folder in ("cache", "state") for p in (tmp_path / folder).rglob("*") if p.is_file()
    ]
    names = {p.name for p in written}
    assert {"cache.db", "state.sqlite3"} <= names  # the check below looks at real files
    for path in written:
        assert token.encode() not in path.read_bytes(), path
    assert token not in done.stdout + done.stderr


def _collected(tmp_path, world) -> list[str]:
    args = world_args(world, tmp_path)
    assert scout("collect", *args).returncode == 0
    return args


def test_a_read_only_cache_folder_is_read_and_nothing_is_saved(tmp_path, sample_world):
    args = _collected(tmp_path, sample_world)
    folder = tmp_path / "cache" / CACHE_VERSION
    before = sorted((p.name, p.stat().st_size) for p in folder.iterdir())
    done = scout_read_only([folder], "report", *args)
    if done is None:
        pytest.skip("no user namespaces here to make a read-only mount")
    assert done.returncode == 0, done.stderr
    assert "is read-only: reading it, saving nothing" in done.stderr
    assert "TODO unblock detection" not in done.stderr  # the cached run was read
    assert done.stdout.startswith("# Nightly Scout Report")
    assert "Traceback" not in done.stderr and "OperationalError" not in done.stderr
    assert "moved" not in done.stderr
    assert sorted((p.name, p.stat().st_size) for p in folder.iterdir()) == before


def test_a_read_only_cache_file_is_read(tmp_path, sample_world):
    args = _collected(tmp_path, sample_world)
    database = tmp_path / "cache" / CACHE_VERSION / "cache.db"
    done = scout_read_only([database], "report", *args, "--recollect")
    if done is None:
        pytest.skip("no user namespaces here to make a read-only mount")
    assert done.returncode == 0, done.stderr
    assert "read-only" in done.stderr and "moved" not in done.stderr
    assert "OperationalError" not in done.stderr
    assert done.stdout.startswith("# Nightly Scout Report")


def test_a_corrupt_cache_that_cannot_be_moved_is_left_alone(tmp_path, sample_world):
    args = _collected(tmp_path, sample_world)
    root = tmp_path / "cache"
    (root / CACHE_VERSION / "cache.db").write_bytes(b"not a database at all" * 100)
    for log in ("cache.db-wal", "cache.db-shm"):  # else SQLite reads the pages kept there
        (root / CACHE_VERSION / log).unlink(missing_ok=True)
    done = scout_read_only([root], "report", *args)
    if done is None:
        pytest.skip("no user namespaces here to make a read-only mount")
    assert done.returncode == 0, done.stderr
    assert "moved it to" not in done.stderr  # never a false "moved it"
    assert "going on without a cache" in done.stderr
    assert done.stdout.startswith("# Nightly Scout Report")
    assert (root / CACHE_VERSION / "cache.db").read_bytes() == b"not a database at all" * 100
