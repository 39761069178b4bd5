"""A repro's process group: output as it comes, and stopping it leaves nothing running —
the grandchildren (torchrun's workers) included. Real processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scout_tui.repro.process import ProcessGroup

# A stand-in run_train.sh: a shell (the child) that starts a worker (the grandchild) which
# ignores nothing and would run for ten minutes, says its pid, and waits.
STAND_IN = """#!/bin/bash
echo "starting $NGPU workers"
sleep 600 &
echo "worker $!" > "$PID_FILE"
echo "worker $! running"
wait
"""


def running(pid: int) -> bool:
    """Alive and not a zombie (an exited child not yet reaped still answers kill 0)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return state[state.rfind(")") + 2] != "Z"


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def stand_in(tmp_path: Path) -> Path:
    script = tmp_path / "run_train.sh"
    script.write_text(STAND_IN)
    script.chmod(0o755)
    return script


def grandchild(pid_file: Path) -> int:
    """The worker's pid, once the stand-in has written all of its line."""
    assert wait_for(lambda: pid_file.exists() and len(pid_file.read_text().split()) == 2)
    return int(pid_file.read_text().split()[1])


def test_output_streams_and_the_exit_status_is_the_commands(tmp_path: Path) -> None:
    group = ProcessGroup(["sh", "-c", "echo one; echo two >&2; exit 3"], tmp_path)
    assert list(group.lines()) == ["one", "two"]
    assert group.wait() == 3
    assert not group.alive()


def test_stopping_kills_the_grandchildren_not_only_the_shell(tmp_path: Path, stand_in) -> None:
    pid_file = tmp_path / "pids"
    group = ProcessGroup(["./run_train.sh"], tmp_path, env={"NGPU": "2", "PID_FILE": str(pid_file)})
    worker = grandchild(pid_file)
    assert running(worker)
    group.stop(grace=2)
    assert group.wait() == -signal.SIGTERM
    assert wait_for(lambda: not running(worker)), "the worker survived its shell"
    assert group.cancelled and not group.alive()


def test_terminate_on_the_shell_alone_would_leave_the_worker(tmp_path: Path, stand_in) -> None:
    """Why the group matters: the naive way leaves the GPU worker running."""
    pid_file = tmp_path / "pids"
    shell = subprocess.Popen(
        "./run_train.sh",
        shell=True,
        cwd=tmp_path,
        start_new_session=True,
        env={**os.environ, "PID_FILE": str(pid_file)},
        stdout=subprocess.DEVNULL,
    )
    worker = grandchild(pid_file)
    shell.terminate()
    shell.wait()
    try:
        time.sleep(0.3)
        assert running(worker)
    finally:
        os.killpg(shell.pid, signal.SIGKILL)


def test_a_worker_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    command = (
        f'{sys.executable} -c "import signal, time, os; '
        f"signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        f"open(os.environ['PID_FILE'], 'w').write('worker %d' % os.getpid()); "
        f'time.sleep(600)" & wait'
    )
    group = ProcessGroup(["sh", "-c", command], tmp_path, env={"PID_FILE": str(pid_file)})
    worker = grandchild(pid_file)
    began = time.monotonic()
    group.stop(grace=0.5)
    assert wait_for(lambda: not running(worker))
    assert time.monotonic() - began >= 0.5  # SIGTERM first, SIGKILL after the grace


@pytest.mark.parametrize(
    "signum, why",
    [
        (signal.SIGINT, "Ctrl-C"),
        (
            signal.SIGHUP,
            "the SSH session drops: the workers, in a session of their own that the "
            "hangup never reaches, are stopped all the same",
        ),
    ],
)
def test_scout_repro_run_stopped_leaves_no_worker(tmp_path: Path, stand_in, signum, why) -> None:
    """`scout repro --run`: the same process-group handling as the console."""
    pid_file = tmp_path / "pids"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scout_tui",
            "repro",
            "--run",
            "--repo",
            str(tmp_path),
            "--command",
            "NGPU=2 ./run_train.sh --module m --config c",
        ],
        env={**os.environ, "PID_FILE": str(pid_file)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    worker = grandchild(pid_file)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "starting 2 workers" in out
    assert "scout: interrupted" in err
    assert wait_for(lambda: not running(worker)), f"the worker survived: {why}"


def test_a_repro_never_sees_a_github_token(tmp_path, monkeypatch) -> None:
    """A repro runs code from the nightly index and the checkout: the token scout found in
    the environment is not passed on to it."""
    import sys

    from scout_tui.repro.process import ProcessGroup

    monkeypatch.setenv("GH_TOKEN", "ghp_" + "x" * 36)
    monkeypatch.setenv("GITHUB_ENTERPRISE_TOKEN", "ghe-token")
    monkeypatch.setenv("SCOUT_KEPT", "yes")
    names = ("GH_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "SCOUT_KEPT")
    show = f"import os; print(*(os.environ.get(n) for n in {names!r}))"
    group = ProcessGroup([sys.executable, "-c", show], tmp_path)
    assert list(group.lines()) == ["None None yes"]
    assert group.wait() == 0
