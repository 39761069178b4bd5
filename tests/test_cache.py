from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

from scout_tui.cache import CACHE_VERSION, Cache
from scout_tui.model import RunResult
from scout_tui.triage import TriageEntry


def a_run(day=date(2026, 4, 2)) -> RunResult:
    return RunResult(date=day, since=datetime(2026, 4, 1, tzinfo=UTC), repo="/r")


def test_round_trip(tmp_path):
    cache = Cache(tmp_path, namespace="o/r:exp")
    cache.put_run(a_run())
    cache.put_triage(TriageEntry(fingerprint="k-1", decision="dropped", reason="noise"))
    assert cache.get_run(date(2026, 4, 2)) == a_run()
    assert cache.get_run(date(2026, 4, 3)) is None
    assert cache.triage()["k-1"].reason == "noise"
    other = Cache(tmp_path, namespace="o/r:other-exp")  # another profile shares nothing
    assert other.get_run(date(2026, 4, 2)) is None and other.triage() == {}
    info = cache.info()
    assert info["runs"] == ["2026-04-02"] and info["triage_decisions"] == 1


def test_truncated_db_is_moved_aside_and_rebuilt(tmp_path):
    cache = Cache(tmp_path, namespace="n")
    for day in range(1, 28):
        cache.put_run(a_run(date(2026, 4, day)))
    cache.close()
    db = tmp_path / CACHE_VERSION / "cache.db"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 3])
    warnings: list[str] = []
    rebuilt = Cache(tmp_path, namespace="n", warn=warnings.append)
    assert len(warnings) == 1 and "unreadable" in warnings[0] and "moved it to" in warnings[0]
    assert rebuilt.get_run(date(2026, 4, 2)) is None
    rebuilt.put_run(a_run())
    assert rebuilt.get_run(date(2026, 4, 2)) == a_run()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith(f"{CACHE_VERSION}.corrupt-")]
    assert len(aside) == 1 and (aside[0] / "cache.db").stat().st_size == len(data) // 3


def test_bad_values_are_dropped_with_a_warning(tmp_path):
    warnings: list[str] = []
    cache = Cache(tmp_path, namespace="n", warn=warnings.append)
    cache.put_run(a_run())
    cache._store.set("n/run/2026-04-02", '{"schema_version": 1, "date": "not a date"}')
    cache._store.set("n/triage/x-1", {"a pickled": "dict"})
    assert cache.get_run(date(2026, 4, 2)) is None
    assert cache.triage() == {}
    assert len(warnings) == 2 and all("dropping it" in w for w in warnings)
    assert "n/run/2026-04-02" not in cache._store  # dropped, so the next run rebuilds it


def _scout(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "scout_tui", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def test_cli_survives_a_corrupt_cache_and_never_stores_the_token(tmp_path, sample_world):
    cache_dir = tmp_path / "cache"
    token = "ghp_SENTINELtoken0123456789abcdef"
    common = [
        "--repo",
        str(sample_world.repo),
        "--config",
        str(sample_world.config),
        "--prior",
        str(sample_world.priors),
        "--date",
        "2026-12-02",
        "--cache-dir",
        str(cache_dir),
    ]
    done = _scout("collect", *common, env={"GH_TOKEN": token})
    assert done.returncode == 0, done.stderr
    (cache_dir / CACHE_VERSION / "cache.db").write_bytes(b"SQLite format 3\x00garbage" * 10)
    done = _scout("report", *common, env={"GH_TOKEN": token})
    assert done.returncode == 0, done.stderr
    assert "cache at" in done.stderr and "starting a fresh one" in done.stderr
    assert done.stdout.startswith("# Nightly Scout Report — 2026-12-02")
    for path in Path(cache_dir).rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    assert token not in done.stdout + done.stderr
