"""Ctrl-C at any moment: `scout: interrupted`, exit 130, no traceback, the cache intact.

The signal goes to the whole process group, as a terminal sends it: the forked collector
processes and their git processes get it too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from scout_tui.store.cache import GIT_ANSWERS
from tests.cli import scout, world_args
from tests.history import group_gone, processes_in, wait_for

# From 0.15 s: before that the interpreter itself may still be starting (site, runpy), before
# any code of ours runs.
MOMENTS = [0.15, 0.3, 0.5, 0.9, "replay"]  # seconds after start, or: during the blame replay


def ignores_sigint(pid: int) -> bool:
    [mask] = [
        line.split()[1]
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if line.startswith("SigIgn:")
    ]
    return bool(int(mask, 16) & (1 << (signal.SIGINT - 1)))


def test_ctrl_c_at_several_moments(tmp_path, long_history):
    args = ["collect", *world_args(long_history, tmp_path)]
    assert scout(*args).returncode == 0  # a run in the cache, to check it survives
    interrupted = 0
    for moment in MOMENTS:
        # What git answered is kept for the next run: without it, this run asks again (and
        # runs the blame replay that the last moment waits for).
        for kept in (tmp_path / "cache").rglob(f"{GIT_ANSWERS}*"):
            kept.unlink()
        child = subprocess.Popen(
            [sys.executable, "-m", "scout_tui", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            env={**os.environ, "SCOUT_PROCESSES": "2"},
        )
        if moment == "replay":
            [git, *_] = wait_for(
                lambda: processes_in(long_history.repo.resolve(), "git", "--reverse")
            )
            git_ignores_sigint = ignores_sigint(git)
        else:
            time.sleep(moment)
        os.killpg(child.pid, signal.SIGINT)
        _out, err = child.communicate(timeout=60)
        assert group_gone(child.pid), f"processes left after Ctrl-C at {moment}"
        if moment == "replay":
            assert not git_ignores_sigint  # the terminal's Ctrl-C stops git too
        if child.returncode == 0:  # it finished first: nothing to check
            continue
        interrupted += 1
        stderr = err.decode()
        assert child.returncode == 130, (moment, stderr)
        assert "Traceback" not in stderr and "Error" not in stderr, (moment, stderr)
        assert stderr.endswith("scout: interrupted\n"), (moment, stderr)
    assert interrupted >= len(MOMENTS) - 1
    info = json.loads(scout("cache", "info", "--json", "--cache-dir", tmp_path / "cache").stdout)
    assert info["runs"] == ["2026-12-02"]
    done = scout("report", *world_args(long_history, tmp_path))
    assert done.returncode == 0 and "TODO unblock detection" not in done.stderr  # from cache


def test_sigterm_before_the_collection_starts_is_a_clean_stop(tmp_path, sample_world):
    """The console may cancel a `collect --events` child that is still importing."""
    stopped = 0
    for delay in (0.15, 0.3):
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scout_tui",
                "collect",
                "--events",
                *world_args(sample_world, tmp_path),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        time.sleep(delay)
        os.killpg(child.pid, signal.SIGTERM)
        _, err = child.communicate(timeout=60)
        if child.returncode == 0:
            continue
        stopped += 1
        assert child.returncode == 130, err
        assert err.decode().strip().splitlines()[-1] in ("scout: interrupted", "scout: cancelled")
        assert "Traceback" not in err.decode()
    assert stopped


def test_a_finalizer_failing_on_what_ctrl_c_left_half_built_prints_nothing(tmp_path):
    """An object whose `__init__` a Ctrl-C stopped fails in its `__del__` (GitPython's config
    parser does): after the Ctrl-C that is the interrupt's debris, not printed (TRUE). The
    same failing finalizer with no Ctrl-C is still reported, as Python does (NEAR-MISS)."""
    script = tmp_path / "half_built.py"
    script.write_text(
        "import sys\n"
        "from scout_tui import cli\n"
        "from scout_tui.errors import note_sigint\n"
        "sys.unraisablehook = cli._unraisable\n"
        "class Parser:\n"
        "    def __del__(self):\n"
        "        self._read_only  # never set: its __init__ was cut short\n"
        "if sys.argv[1] == 'interrupted':\n"
        "    note_sigint()\n"
        "Parser()\n"
        "print('end', flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for case, said in (("interrupted", False), ("calm", True)):
        done = subprocess.run(
            [sys.executable, str(script), case], capture_output=True, text=True, env=env
        )
        assert done.stdout == "end\n"
        assert ("AttributeError" in done.stderr) is said, done.stderr


def test_ctrl_c_landing_in_a_finalizer_interrupts_the_main_flow(tmp_path):
    """A Ctrl-C that lands in a finalizer (`__del__` raises KeyboardInterrupt there) is
    raised again in the main flow, not inside the unraisable hook (which Python would print
    as "Exception ignored in sys.unraisablehook", the interrupt lost)."""
    script = tmp_path / "finalizer.py"
    script.write_text(
        "import signal, sys\n"
        "from scout_tui import cli\n"
        "signal.signal(signal.SIGINT, cli._on_sigint)\n"
        "sys.unraisablehook = cli._unraisable\n"
        "class Held:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "import time\n"
        "try:\n"
        "    Held()\n"
        "    deadline = time.monotonic() + 5\n"
        "    while time.monotonic() < deadline:  # the main flow goes on\n"
        "        pass\n"
        "    print('not interrupted', flush=True)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted in the main flow', flush=True)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert done.stdout == "interrupted in the main flow\n"
    assert "Exception ignored" not in done.stderr, done.stderr
