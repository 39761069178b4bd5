"""A checkout someone forgot to pull reads as today's report of an old tree: the run says
so once (TRUE), not for a fresh checkout (NEAR-MISS) nor for a run of a named day."""

from __future__ import annotations

from datetime import date, timedelta

from tests.cli import DAY, scout


def collect(sample_world, tmp_path, today: date, *extra: str):
    args = [
        "--repo",
        str(sample_world.repo),
        "--config",
        str(sample_world.config),
        "--offline",
        "--cache-dir",
        str(tmp_path / f"cache-{today}-{len(extra)}"),
        "--state-dir",
        str(tmp_path / "state"),
        *extra,
    ]
    done = scout("collect", "--only", "todos", *args, env={"SCOUT_TODAY": today.isoformat()})
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_an_old_head_is_said_once_and_only_for_today_s_run(tmp_path, sample_world):
    day = date.fromisoformat(DAY)
    late = day + timedelta(days=40)
    said = collect(sample_world, tmp_path, late)
    assert said.count("warning: the checkout's HEAD (") == 1
    assert "days older than today: this report is of that tree" in said
    assert "--date 2026-" in said  # the way to a report of its own day
    assert "checkout's HEAD" not in collect(sample_world, tmp_path, day)  # fresh: nothing
    named = collect(sample_world, tmp_path, late, "--date", DAY)
    assert "checkout's HEAD" not in named  # a named day's tree is that day's


async def test_the_console_on_an_old_head_says_so(tmp_path):
    from tests.console import collected_demo, console, settle

    late = date.fromisoformat(DAY) + timedelta(days=40)
    with collected_demo(tmp_path / "world") as demo:
        app = console(demo, tmp_path / "state", as_of=None, today=late)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot, app)
            said = [n.message for n in app._notifications]
            assert any("days older than today: this report is of that tree" in m for m in said)
        fresh = console(demo, tmp_path / "state", as_of=None)  # the near miss: no warning
        async with fresh.run_test(size=(100, 32)) as pilot:
            await settle(pilot, fresh)
            assert not any("checkout's HEAD" in n.message for n in fresh._notifications)
