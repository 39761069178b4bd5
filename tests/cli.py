"""Running `scout` as a user does: a real subprocess, `python -m scout_tui`."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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
            text=True,
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
        }
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        stdout = out.read_bytes().decode("utf-8", "replace")
        stderr = err.read_bytes().decode("utf-8", "replace")
        if answer.get("timeout"):
            raise subprocess.TimeoutExpired(argv, timeout, stdout, stderr)
        return subprocess.CompletedProcess(argv, answer["returncode"], stdout, stderr)

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
