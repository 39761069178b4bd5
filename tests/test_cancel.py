"""Cancelling a run: in-process with the caller's event, and a `collect --events` child
stopped the way the console stops it (SIGTERM to its process group)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from scout_tui.collect.events import (
    CollectorFinished,
    CollectorStarted,
    RunFinished,
    RunStarted,
    from_json_line,
)
from scout_tui.config.profile import load_config
from scout_tui.pipeline.day import RunOptions, run_events
from scout_tui.source.tree import SourceTree
from tests.cli import scout, world_args
from tests.history import CHURN, group_gone, processes_in, wait_for


def test_cancel_during_the_blame_replay_returns_promptly(long_history):
    repo = long_history.repo.resolve()
    source = SourceTree(repo)
    started = time.perf_counter()
    source.blame_many([CHURN], source.head())
    full_replay = time.perf_counter() - started

    cancel = threading.Event()
    events: list = []
    options = RunOptions(
        repo=repo,
        config=load_config(long_history.config),
        offline=True,
        prior_dir=long_history.priors,
    )
    worker = threading.Thread(target=lambda: events.extend(run_events(options, cancel)))
    worker.start()
    [replay] = wait_for(lambda: processes_in(repo, "git", "--reverse"))
    cancelled_at = time.perf_counter()
    cancel.set()
    worker.join(timeout=120)
    stopped_after = time.perf_counter() - cancelled_at
    assert not worker.is_alive()

    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.result.cancelled
    states = {s.name: s.state for s in finished.result.collectors}
    assert states["todos"] == "cancelled"
    assert set(states.values()) <= {"done", "skipped", "cancelled"}
    # Stopped inside the replay, not after it: a fraction of what the replay alone takes
    # (both measured here, in this run).
    print(f"replay {full_replay:.2f} s, stopped {stopped_after:.3f} s after the cancel")
    assert stopped_after < full_replay / 3, (stopped_after, full_replay)
    assert wait_for(lambda: not os.path.exists(f"/proc/{replay}") or _zombie(replay), 10)


def _zombie(pid: int) -> bool:
    try:
        return open(f"/proc/{pid}/stat").read().split(") ")[1][0] == "Z"
    except OSError:
        return True


def test_events_stream_a_whole_run(tmp_path, sample_world):
    done = scout("collect", *world_args(sample_world, tmp_path), "--events")
    assert done.returncode == 0, done.stderr
    events = [from_json_line(line) for line in done.stdout.splitlines()]
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)
    pending = {state.name for state in events[0].collectors}
    finished = {e.state.name for e in events if isinstance(e, CollectorFinished)}
    assert pending == finished and len(pending) == 9
    assert [d.isoformat() for d in events[0].prior_reports] == ["2026-11-30", "2026-12-01"]
    result = events[-1].result
    assert result.complete and {s.state for s in result.collectors} <= {"done", "skipped"}
    # Carried-forward status arrives with the run's end, not after it.
    assert any(f.status.value == "carried" for f in result.findings)


def test_a_parent_cancels_collect_events(tmp_path, long_history):
    repo = long_history.repo.resolve()
    command = [
        sys.executable,
        "-m",
        "scout_tui",
        "collect",
        "--events",
        "--offline",
        *world_args(long_history, tmp_path, prior=True),
    ]
    child = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "SCOUT_PROCESSES": "2"},
    )
    assert child.stdout is not None
    lines = []
    for line in child.stdout:  # read as the console's worker does, a line at a time
        lines.append(line)
        event = from_json_line(line)
        if isinstance(event, CollectorStarted) and event.collector == "todos":
            break
    wait_for(lambda: processes_in(repo, "git", "--reverse"))
    os.killpg(child.pid, signal.SIGTERM)
    lines += child.stdout.readlines()
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=60) == 130
    assert stderr.strip().splitlines()[-1] == "scout: cancelled" and "Traceback" not in stderr
    events = [from_json_line(line) for line in lines]
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.result.cancelled
    assert {s.name: s.state for s in finished.result.collectors}["todos"] == "cancelled"
    assert group_gone(child.pid)  # the forked collectors and their git processes too
    info = scout("cache", "info", "--json", "--cache-dir", tmp_path / "cache")
    assert '"runs": []' in info.stdout  # a cancelled run never stands for the day
