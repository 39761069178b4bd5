"""Running `scout` as a user does: a real subprocess, `python -m scout_tui`."""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import date
from pathlib import Path

from scout_tui.sandbox.demo.github_world import DEMO_TOKEN
from scout_tui.sandbox.demo.running import RunningDemo
from scout_tui.sandbox.demo.sample import Sample

DAY = "2026-12-02"


def scout(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """`python -m scout_tui ARGS` in a process of its own, forked from a process that has
    imported scout once (tests/zygote.py); SCOUT_TEST_SUBPROCESS=1 starts each one anew."""
    argv = [sys.executable, "-m", "scout_tui", *map(str, args)]
    environment = {**os.environ, **(env or {})}
    if os.environ.get("SCOUT_TEST_SUBPROCESS") == "1":
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            cwd=cwd,
            input=stdin,
            timeout=timeout,
            env=environment,
        )
    return _Zygote.get().run(argv, cwd, environment, stdin, timeout)


def scout_started(*args: str, env: dict[str, str] | None = None) -> Started:
    """`scout ARGS` started and left running, to be stopped mid-run (a crash), in a process
    group of its own; forked like `scout()` (SCOUT_TEST_SUBPROCESS=1: started anew)."""
    argv = [sys.executable, "-m", "scout_tui", *map(str, args)]
    environment = {**os.environ, **(env or {})}
    if os.environ.get("SCOUT_TEST_SUBPROCESS") == "1":
        child = subprocess.Popen(
            argv,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return Started(child.pid, child.poll, lambda: _finished(child, argv))
    return _Zygote.get().start(argv, environment)


def _finished(child: subprocess.Popen[str], argv: list[str]) -> subprocess.CompletedProcess[str]:
    out, err = child.communicate()
    return subprocess.CompletedProcess(argv, child.returncode, out, err)


class Started:
    """A `scout` still running; `wait()` for it before the next `scout()`."""

    def __init__(
        self,
        pid: int,
        ended: Callable[[], int | None],
        finish: Callable[[], subprocess.CompletedProcess[str]],
    ) -> None:
        self.pid, self._ended, self._finish = pid, ended, finish
        self.done: subprocess.CompletedProcess[str] | None = None

    def poll(self) -> int | None:
        """Its exit code once it has ended, else None (without waiting)."""
        if self.done is None and self._ended() is not None:
            self.wait()
        return None if self.done is None else self.done.returncode

    def kill_group(self, sig: signal.Signals) -> None:
        os.killpg(self.pid, sig)

    def wait(self) -> subprocess.CompletedProcess[str]:
        if self.done is None:
            self.done = self._finish()
        return self.done


class _Zygote:
    """One per test process, started when first asked for."""

    _running: _Zygote | None = None

    @classmethod
    def get(cls) -> _Zygote:
        if cls._running is None or cls._running.process.poll() is not None:
            cls._running = cls()
        return cls._running

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="scout-zygote-"))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            cwd=Path(__file__).resolve().parent.parent,
        )
        atexit.register(self.close)

    def run(
        self,
        argv: list[str],
        cwd: Path | None,
        env: dict[str, str],
        stdin: str | None,
        timeout: float,
    ) -> subprocess.CompletedProcess[str]:
        self._ask(argv, cwd, env, stdin, timeout, started=False)
        return self.finish(argv, timeout)

    def start(self, argv: list[str], env: dict[str, str]) -> Started:
        self._ask(argv, None, env, None, 300, started=True)
        pid = json.loads(self._answer())["pid"]
        return Started(pid, lambda: 0 if self._answered() else None, lambda: self.finish(argv))

    def _answered(self) -> bool:
        assert self.process.stdout is not None
        return bool(select.select([self.process.stdout], [], [], 0)[0])

    def finish(self, argv: list[str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
        answer = json.loads(self._answer())
        stdout = (self.folder / "out").read_bytes().decode("utf-8", "replace")
        stderr = (self.folder / "err").read_bytes().decode("utf-8", "replace")
        if answer.get("timeout"):
            raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
        return subprocess.CompletedProcess(argv, answer["returncode"], stdout, stderr)

    def _answer(self) -> bytes:
        assert self.process.stdout is not None
        return self.process.stdout.readline()  # unbuffered: select sees what is unread

    def _ask(
        self,
        argv: list[str],
        cwd: Path | None,
        env: dict[str, str],
        stdin: str | None,
        timeout: float,
        *,
        started: bool,
    ) -> None:
        out, err, given = (self.folder / name for name in ("out", "err", "in"))
        out.write_bytes(b"")
        err.write_bytes(b"")
        if stdin is not None:
            given.write_text(stdin, encoding="utf-8")
        request = {
            "argv": argv[3:],
            "cwd": str(cwd) if cwd is not None else None,
            "env": env,
            "stdin": str(given) if stdin is not None else None,
            "out": str(out),
            "err": str(err),
            "timeout": timeout,
            "started": started,
        }
        assert self.process.stdin is not None
        line = memoryview(json.dumps(request).encode() + b"\n")
        while line:
            line = line[self.process.stdin.write(line) or 0 :]

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            self.process.wait(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)


def world_args(world: Sample, tmp_path: Path, *, day: str = DAY, prior: bool = True) -> list[str]:
    """The options that point a command at a sample world, with its own cache and state."""
    args = [
        "--repo",
        str(world.repo),
        "--config",
        str(world.config),
        "--date",
        day,
        "--cache-dir",
        str(tmp_path / "cache"),
        "--state-dir",
        str(tmp_path / "state"),
    ]
    return args + (["--prior", str(world.priors)] if prior else [])


def read_only(*paths: Path) -> list[str] | None:
    """A command prefix that runs its command with `paths` on a read-only mount (a user
    and mount namespace of its own: even root cannot write there); None where namespaces
    cannot be made."""
    import shutil

    if shutil.which("unshare") is None:
        return None
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        return None
    mounts = " && ".join(f'mount --bind -o ro "{p}" "{p}"' for p in paths)
    return ["unshare", "-rm", "sh", "-c", f'{mounts} && exec "$@"', "sh"]


def scout_read_only(paths: list[Path], *args: str) -> subprocess.CompletedProcess[str] | None:
    prefix = read_only(*paths)
    if prefix is None:
        return None
    return subprocess.run(
        [*prefix, sys.executable, "-m", "scout_tui", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def demo_collect(demo: RunningDemo, base: Path, *args: object) -> subprocess.CompletedProcess[str]:
    """`scout collect` on a running demo's world, online against its local GitHub (whose
    token it is given as an enterprise host's), the cache and state in `base`."""
    options = demo.session_options(today=date.fromisoformat(DAY))
    done = scout(
        "collect",
        "--repo",
        options.repo,
        "--config",
        options.config,
        "--date",
        DAY,
        "--cache-dir",
        base / "cache",
        "--state-dir",
        base / "state-box",
        "--api-url",
        demo.github.url,
        *args,
        env={"GH_ENTERPRISE_TOKEN": DEMO_TOKEN, "SCOUT_GITHUB_API_URL": ""},
    )
    assert done.returncode == 0, done.stderr
    return done
